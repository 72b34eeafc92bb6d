"""`plantune profile delete` wins every race with an import: whatever a foreground
`ingest`, the background backlog import or a spool drain commits before or after it,
nothing from before the delete is left in the database (rows), in its file or its WAL
(bytes), or in gstack's files.

Each race is made deterministic with real processes and locks, never sleeps: the test
holds the database's write lock while one side reads what it will write and announces its
wait (its marker in ``<db>-waiting/``); that side is then stopped (SIGSTOP), the other
side runs to its end, and the stopped one is let go to commit after it.
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import query, script
from toolkit.store import db

SLUG = "race-proj"
LINES = 1500  # past the bulk-import size, so the set-based rollup path races too
BEFORE = "before-the-delete"
# Waiting for a condition (a process reaching its lock wait), never a timing assumption.
CONDITION_TIMEOUT = 120.0


@pytest.fixture
def world(state_root, monkeypatch):
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", SLUG)
    monkeypatch.setenv("PLANTUNE_DEVELOPER", "dev@example.com")
    db_path = str(state_root / "plantune.db")
    subprocess.run([script("plantune"), "init"], check=True, capture_output=True)
    folder = state_root / "projects" / SLUG
    folder.mkdir(parents=True)
    log = folder / "question-log.jsonl"
    with open(log, "w", encoding="utf-8") as f:
        for i in range(LINES):
            f.write(json.dumps(_event(i)) + "\n")
    return db_path, log


def _event(i, tag=BEFORE):
    return {
        "skill": "plan-eng-review",
        "question_id": f"plan-eng-review-q{i % 7}",
        "question_summary": f"{tag} secret {i:05d}",
        "user_choice": "a",
        "recommended": "a" if i % 2 else "b",
        "ts": f"2026-10-01T10:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
        "session_id": f"s-{i // 50}",
    }


class Lock:
    """The database's write lock, held by the test."""

    def __init__(self, path):
        self.conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        self.conn.execute("BEGIN IMMEDIATE")

    def release(self):
        self.conn.execute("ROLLBACK")
        self.conn.close()


def waiting_pid(db_path, exclude=(), timeout=CONDITION_TIMEOUT):
    """The pid of a writer announcing that it waits for the lock (not in ``exclude``)."""
    folder = db_path + db.WAITING_SUFFIX
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            names = []
        pids = {int(n.split("-")[0]) for n in names} - set(exclude)
        if pids:
            return pids.pop()
        time.sleep(0.01)
    raise AssertionError("no writer reached its lock wait")


def start_ingest():
    return subprocess.Popen(
        [script("plantune"), "ingest"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def start_backlog(db_path, state_root):
    """The background backlog import's own entry (backlog.main), in a process of its own."""
    code = (
        "import os, sys; from toolkit.gstack import backlog;"
        " fd = os.open(sys.argv[1] + backlog.LOCK_SUFFIX, os.O_RDWR | os.O_CREAT, 0o600);"
        " backlog.main([str(fd), sys.argv[1], sys.argv[2], sys.argv[3]])"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code, db_path, str(state_root), SLUG],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def start_drain():
    code = (
        "from toolkit.core import seeded_db; from toolkit.gstack import spool;"
        " import os; conn = seeded_db.connect(os.environ['PLANTUNE_DB']);"
        " d = spool.drain(conn); print(d.recorded, d.already)"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def start_delete():
    return subprocess.Popen(
        [script("plantune"), "profile", "delete", "--all", "--yes"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finish(proc):
    out, err = proc.communicate(timeout=CONDITION_TIMEOUT)
    assert proc.returncode == 0, (out, err)
    return out.decode(), err.decode()


def spool_events(db_path, n):
    """``n`` events a hook acknowledged while the database was busy: in the spool."""
    from toolkit.core import questions
    from toolkit.gstack import spool

    for i in range(n):
        record = questions.validate_event(_event(LINES + i))
        spool.put_question(record, SLUG, db_path)


def assert_nothing_from_before(db_path, log):
    """No row, and no byte of any text, from before the delete: in the database, its WAL
    or gstack's log."""
    rows = query(
        db_path, "SELECT count(*) FROM question_log WHERE question_summary LIKE ?", (f"{BEFORE}%",)
    )
    assert rows == [(0,)]
    for path in (db_path, db_path + "-wal", str(log)):
        if os.path.exists(path):
            assert BEFORE.encode() not in Path(path).read_bytes(), path


def race_import_after_delete(db_path, start_import):
    """The import reads its rows before the delete and commits them after it."""
    lock = Lock(db_path)
    importer = start_import()
    pid = waiting_pid(db_path)
    os.kill(pid, signal.SIGSTOP)
    try:
        lock.release()
        finish(start_delete())
    finally:
        os.kill(pid, signal.SIGCONT)
    finish(importer)


def race_import_before_delete(db_path, start_import):
    """The delete starts first and waits; the import commits everything before it."""
    lock = Lock(db_path)
    deleter = start_delete()
    pid = waiting_pid(db_path)
    os.kill(pid, signal.SIGSTOP)
    try:
        lock.release()
        finish(start_import())
    finally:
        os.kill(pid, signal.SIGCONT)
    finish(deleter)


@pytest.mark.parametrize("race", [race_import_after_delete, race_import_before_delete])
def test_a_foreground_ingest_racing_a_delete_leaves_nothing(world, race):
    db_path, log = world
    # Half of the history is in the database already; the rest is what the import reads.
    subprocess.run([script("plantune"), "ingest"], check=True, capture_output=True)
    with open(log, "a", encoding="utf-8") as f:
        for i in range(LINES, 2 * LINES):
            f.write(json.dumps(_event(i)) + "\n")
    race(db_path, start_ingest)
    assert_nothing_from_before(db_path, log)
    # Importing again brings nothing back.
    subprocess.run([script("plantune"), "ingest"], check=True, capture_output=True)
    assert_nothing_from_before(db_path, log)


@pytest.mark.parametrize("race", [race_import_after_delete, race_import_before_delete])
def test_the_background_import_racing_a_delete_leaves_nothing(world, state_root, race):
    db_path, log = world
    race(db_path, lambda: start_backlog(db_path, state_root))
    assert_nothing_from_before(db_path, log)
    subprocess.run([script("plantune"), "ingest"], check=True, capture_output=True)
    assert_nothing_from_before(db_path, log)


@pytest.mark.parametrize("race", [race_import_after_delete, race_import_before_delete])
def test_a_spool_drain_racing_a_delete_leaves_nothing(world, race):
    db_path, log = world
    log.write_text("")  # only the spool holds history here
    spool_events(db_path, 40)
    race(db_path, start_drain)
    assert_nothing_from_before(db_path, log)
    subprocess.run([script("plantune"), "ingest"], check=True, capture_output=True)
    assert_nothing_from_before(db_path, log)


def test_what_comes_after_the_delete_is_kept(world):
    """The delete removes what was there before it, not what is written after it."""
    db_path, log = world
    race_import_after_delete(db_path, start_ingest)
    event = _event(0, tag="after-the-delete")
    subprocess.run([script("plantune"), "log", json.dumps(event)], check=True)
    assert query(db_path, "SELECT question_summary FROM question_log") == [
        ("after-the-delete secret 00000",)
    ]


def test_an_import_in_the_middle_of_a_delete_commits_nothing_from_before(world, monkeypatch):
    """An import started while the delete is under way (its rows just removed, gstack's
    lines not yet) waits for the whole delete, then commits nothing from before it."""
    from click.testing import CliRunner

    from toolkit.cli.app import cli
    from toolkit.core import profile

    db_path, log = world
    subprocess.run([script("plantune"), "ingest"], check=True, capture_output=True)
    with open(log, "a", encoding="utf-8") as f:
        for i in range(LINES, 2 * LINES):
            f.write(json.dumps(_event(i)) + "\n")
    started = []
    delete = profile.delete

    def delete_then_import(conn, project=None):
        counts = delete(conn, project)
        importer = start_ingest()
        started.append(importer)
        # The import either runs to its end now (the delete left the lock free) or reaches
        # its lock wait: whichever comes first.
        deadline = time.monotonic() + CONDITION_TIMEOUT
        while importer.poll() is None and time.monotonic() < deadline:
            if os.path.isdir(db_path + db.WAITING_SUFFIX) and os.listdir(
                db_path + db.WAITING_SUFFIX
            ):
                break
            time.sleep(0.01)
        return counts

    monkeypatch.setattr(profile, "delete", delete_then_import)
    result = CliRunner().invoke(cli, ["profile", "delete", "--all", "--yes"])
    assert result.exit_code == 0, result.output
    finish(started[0])
    assert_nothing_from_before(db_path, log)


def test_a_project_delete_drains_and_keeps_the_other_projects_events(world, state_root):
    """Spooled events of another project are recorded, kept and written to that project's
    gstack log by the delete; those of the deleted project leave no trace."""
    from toolkit.core import questions
    from toolkit.gstack import spool

    db_path, log = world
    log.write_text("")
    for i in range(5):
        for project in (SLUG, "other-proj"):
            record = questions.validate_event(_event(i, tag=f"{BEFORE} {project}"))
            spool.put_question(record, project, db_path)
    result = subprocess.run(
        [script("plantune"), "profile", "delete", "--project", SLUG, "--yes"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert query(db_path, "SELECT DISTINCT project FROM question_log") == [("other-proj",)]
    assert query(db_path, "SELECT count(*) FROM question_log") == [(5,)]
    assert spool.pending() == []
    other = state_root / "projects" / "other-proj" / "question-log.jsonl"
    assert len(other.read_text().splitlines()) == 5
    assert f"{BEFORE} {SLUG}".encode() not in Path(db_path).read_bytes()
    assert not log.exists() or f"{BEFORE} {SLUG}" not in log.read_text()
