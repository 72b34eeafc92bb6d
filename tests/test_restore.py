"""`plantune restore BACKUP`: a checked backup put in place of the database in use."""

import json
import os
import sqlite3
import subprocess

import pytest

from tests.helpers import query, script
from tests.helpers.hotpath import env


def plantune(*args):
    return subprocess.run(
        [script("plantune"), *args], capture_output=True, text=True, env=env(), timeout=120
    )


def log(summary):
    record = {
        "skill": "ship",
        "question_id": "ship-x",
        "question_summary": summary,
        "user_choice": "a",
    }
    r = subprocess.run(
        [script("gstack-question-log"), json.dumps(record)],
        capture_output=True,
        text=True,
        env=env(PLANTUNE_MIRROR="0"),
    )
    assert r.returncode == 0, r.stderr


def summaries(path):
    return sorted(s for (s,) in query(path, "SELECT question_summary FROM question_log"))


@pytest.fixture
def backup(db_file, tmp_path):
    """A backup holding one event; the database holds two more after it."""
    log("in the backup")
    path = str(tmp_path / "b.db")
    assert plantune("backup", path).returncode == 0
    log("after 1")
    log("after 2")
    return path


def files(folder):
    """Every file of the folder with its bytes, to prove nothing changed (SQLite's own
    -shm index and the empty -wal aside: reading the database rewrites them)."""
    out = {}
    for name in sorted(os.listdir(folder)):
        p = os.path.join(folder, name)
        if os.path.isfile(p) and not name.endswith(("-shm", "-wal")):
            with open(p, "rb") as f:
                out[name] = f.read()
    return out


def test_restore_replaces_the_database_and_keeps_the_old_one(db_file, backup):
    r = plantune("restore", backup, "--yes")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (
        f"Restored {db_file} from {backup} (1 question events, "
        f"{query(backup, 'SELECT count(*) FROM plantune_migrations')[0][0]} migrations)\n"
        f"The database it replaced (3 question events, "
        f"{query(backup, 'SELECT count(*) FROM plantune_migrations')[0][0]} migrations)"
        f" is kept as {db_file}.before-restore\n"
    )
    assert summaries(db_file) == ["in the backup"]
    assert summaries(db_file + ".before-restore") == ["after 1", "after 2", "in the backup"]
    assert oct(os.stat(db_file + ".before-restore").st_mode & 0o777) == "0o600"
    assert not os.path.exists(db_file + "-wal")
    log("after the restore")
    assert summaries(db_file) == ["after the restore", "in the backup"]
    assert query(db_file, "PRAGMA integrity_check") == [("ok",)]
    assert query(db_file, "PRAGMA journal_mode") == [("wal",)]


def test_restore_while_a_reader_holds_the_database(db_file, backup):
    """A reader such as `plantune serve` keeps its connection and sees the restored data;
    a reader in the middle of a read keeps its snapshot until it ends it."""
    reader = sqlite3.connect(db_file, isolation_level=None)
    busy = sqlite3.connect(db_file, isolation_level=None)
    try:
        assert len(reader.execute("SELECT * FROM question_log").fetchall()) == 3
        busy.execute("BEGIN")
        assert busy.execute("SELECT count(*) FROM question_log").fetchone() == (3,)
        r = plantune("restore", backup, "--yes")
        assert r.returncode == 0, r.stderr
        assert busy.execute("SELECT count(*) FROM question_log").fetchone() == (3,)
        busy.execute("COMMIT")
        assert busy.execute("SELECT count(*) FROM question_log").fetchone() == (1,)
        rows = reader.execute("SELECT question_summary FROM question_log").fetchall()
        assert rows == [("in the backup",)]
        log("while the reader is open")
        assert reader.execute("SELECT count(*) FROM question_log").fetchone() == (2,)
    finally:
        reader.close()
        busy.close()
    assert query(db_file, "PRAGMA integrity_check") == [("ok",)]


def test_restore_waits_for_a_writer_and_loses_nothing_it_committed(db_file, backup):
    """The restore takes the write lock: a transaction in progress commits first, and
    its rows are in the kept copy of the replaced database."""
    writer = sqlite3.connect(db_file, isolation_level=None, timeout=30)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute(
        "UPDATE question_log SET question_summary = 'edited' WHERE question_summary = 'after 1'"
    )
    proc = subprocess.Popen(
        [script("plantune"), "restore", backup, "--yes"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    writer.execute("COMMIT")
    writer.close()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert summaries(db_file) == ["in the backup"]
    assert summaries(db_file + ".before-restore") == ["after 2", "edited", "in the backup"]


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: None, "no backup at {p}"),
        (
            lambda p: open(p, "w").write("not a database at all, just text\n" * 100),
            "{p} is not a plantune database (file is not a database)",
        ),
        (
            lambda p: sqlite3.connect(p).execute("CREATE TABLE t(x)").connection.commit(),
            "{p} is not a plantune database (no migrations table)",
        ),
    ],
    ids=["missing", "not-sqlite", "not-plantune"],
)
def test_a_bad_backup_is_refused_and_nothing_changes(db_file, backup, tmp_path, make, message):
    bad = str(tmp_path / "bad.db")
    make(bad)
    folder = os.path.dirname(db_file)
    before = files(folder)
    r = plantune("restore", bad, "--yes")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", f"Error: {message.format(p=bad)}\n")
    assert files(folder) == before


def test_a_damaged_backup_is_refused(db_file, backup, tmp_path):
    damaged = str(tmp_path / "damaged.db")
    with open(backup, "rb") as f:
        data = bytearray(f.read())
    # Scribble over the headers of b-tree pages past the schema page.
    for page in range(2, 12):
        data[page * 4096 : page * 4096 + 12] = b"\x0d\xff\xff" * 4
    with open(damaged, "wb") as f:
        f.write(data)
    folder = os.path.dirname(db_file)
    before = files(folder)
    r = plantune("restore", damaged, "--yes")
    assert r.returncode == 1
    assert r.stderr.startswith(f"Error: {damaged} ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert files(folder) == before


def test_without_yes_it_checks_says_what_it_would_replace_and_changes_nothing(db_file, backup):
    folder = os.path.dirname(db_file)
    before = files(folder)
    r = plantune("restore", backup)
    assert r.returncode == 1
    assert r.stderr.startswith(
        f"Error: refusing to replace the database at {db_file} (3 question events"
    )
    assert r.stderr.endswith(" without --yes\n")
    assert files(folder) == before


def test_restoring_the_database_onto_itself_is_refused(db_file, backup):
    r = plantune("restore", db_file, "--yes")
    assert (r.returncode, r.stderr) == (1, f"Error: {db_file} is the database itself\n")
    assert summaries(db_file) == ["after 1", "after 2", "in the backup"]


def test_restore_into_a_new_database(state_root, backup, tmp_path):
    target = str(tmp_path / "new" / "plantune.db")
    os.makedirs(os.path.dirname(target))
    r = plantune("restore", backup, "--yes", "--db", target)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"Restored {target} from {backup} (1 question events")
    assert "kept as" not in r.stdout
    assert summaries(target) == ["in the backup"]
    assert oct(os.stat(target).st_mode & 0o777) == "0o600"
