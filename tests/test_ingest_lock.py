"""A bulk import holds the write lock only briefly: hooks and compat scripts that run
during `plantune ingest` get their answers in, and none is lost."""

import json
import os
import sqlite3
import subprocess
import threading
import time

import pytest

from tests.helpers import script
from tests.helpers.hooks import make_repo, payload, question
from toolkit.core import seeded_db
from toolkit.gstack import file_state, history, ingest_tx
from toolkit.store import db


def write_log(state_root, lines, project="bulk"):
    path = os.path.join(str(state_root), "projects", project, "question-log.jsonl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(lines):
            fh.write(
                json.dumps(
                    {
                        "skill": "ship",
                        "question_id": "ship-test-failure-triage" if i % 3 else f"hook-{i:010x}",
                        "question_summary": f"Tests failed in shard {i}; fix now?",
                        "user_choice": "fix-now",
                        "recommended": "fix-now",
                        "session_id": f"s-{i // 40}",
                        "source": "agent",
                        "followed_recommendation": True,
                        "ts": f"2026-03-{1 + i // 86400 % 28:02d}T{i // 3600 % 24:02d}:{i // 60 % 60:02d}"
                        f":{i % 60:02d}.000Z",
                    },
                    separators=(",", ":"),
                )
                + "\n"
            )
    return path


def count(db_file, where=""):
    conn = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(f"SELECT count(*) FROM question_log {where}").fetchone()[0]
    finally:
        conn.close()


def start_ingest(state_root):
    return subprocess.Popen(
        [script("plantune"), "ingest", str(state_root), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_rows(proc, db_file):
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.exists(db_file) and count(db_file) > 0:
            return
        time.sleep(0.02)
    raise AssertionError("the import finished before any writer could race it")


def hooks_during_ingest(tmp_path, state_root, db_file, lines, hooks=8):
    write_log(state_root, lines)
    seeded_db.connect(db_file).close()
    repo = make_repo(tmp_path)
    proc = start_ingest(state_root)
    wait_for_rows(proc, db_file)
    started = []
    for i in range(hooks):
        text = f"Hook question {i}: ship it?"
        data = payload(
            [question(text, ["Yes", "No"])],
            {"answers": {text: "Yes"}},
            cwd=repo,
            tool_use_id=f"tu-{i}",
        )
        started.append(
            subprocess.Popen(
                [script("plantune"), "hook", "post-tool-use"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        )
        started[-1].stdin.write(json.dumps(data).encode())
        started[-1].stdin.close()
    results = [(p.wait(timeout=60), p.stdout.read(), p.stderr.read()) for p in started]
    overlapped = proc.poll() is None
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert summary["imported"] == lines
    return results, overlapped, summary


def check_hooks(state_root, db_file, results, hooks=8):
    assert all(rc == 0 and out == b"" for rc, out, _ in results), results
    errors = state_root / "hook-errors.log"
    assert not errors.exists() or "locked" not in errors.read_text(), errors.read_text()
    # Every answer reached the database directly: nothing had to wait in the spool.
    spool_dir = state_root / "spool"
    assert not spool_dir.exists() or not [n for n in os.listdir(spool_dir) if n.endswith(".json")]
    assert count(db_file, "WHERE source = 'hook'") == hooks
    with open(state_root / "projects" / "acme-web" / "question-log.jsonl") as fh:
        assert len(fh.readlines()) == hooks


def test_8_hooks_during_an_ingest_are_all_recorded(tmp_path, state_root, db_file):
    results, overlapped, summary = hooks_during_ingest(tmp_path, state_root, db_file, 30_000)
    check_hooks(state_root, db_file, results)
    assert overlapped, "the hooks did not run while the import did"
    assert summary["transactions"] > 10  # committed in many short steps, not one


@pytest.mark.slow(reason="a 300,000-line import")
def test_8_hooks_during_a_300k_line_ingest(tmp_path, state_root, db_file):
    results, overlapped, summary = hooks_during_ingest(tmp_path, state_root, db_file, 300_000)
    check_hooks(state_root, db_file, results)
    assert overlapped


def test_batches_follow_the_lock_target(state_root, conn, monkeypatch):
    # A tiny target makes every transaction small; the offset moves with each one.
    write_log(state_root, 3_000)
    monkeypatch.setattr(ingest_tx, "CHECK_SECONDS", 1e-6)
    monkeypatch.setattr(ingest_tx, "LOCK_MAX_SECONDS", 0)
    saved = []
    real = file_state.save

    def spy(c, path, kind, st, offset, line_no, *a, **kw):
        saved.append((offset, line_no))
        return real(c, path, kind, st, offset, line_no, *a, **kw)

    monkeypatch.setattr(file_state, "save", spy)
    summary = history.ingest_state_root(conn, str(state_root))
    assert summary.imported == 3_000
    report = summary.files[0]
    # After the first transaction (1,000 rows), each holds at most MIN_WRITE_ROWS rows.
    assert report.transactions >= 1 + 2_000 // ingest_tx.MIN_WRITE_ROWS
    assert [n for _, n in saved] == sorted(n for _, n in saved)
    assert saved[-1][1] == 3_000
    with open(os.path.join(str(state_root), "projects", "bulk", "question-log.jsonl"), "rb") as fh:
        data = fh.read()
    for offset, line_no in saved:  # every saved offset ends exactly its line
        assert data[:offset].count(b"\n") == line_no and data[offset - 1 : offset] == b"\n"


def test_next_chunk_adapts_to_the_measured_rate():
    target = ingest_tx.CHECK_SECONDS
    assert ingest_tx.next_chunk(1000, 1000, target * 4) == 250  # too slow: shrink at once
    assert ingest_tx.next_chunk(1000, 1000, target / 10) == 2000  # fast: at most double
    assert ingest_tx.next_chunk(100, 100, 10.0) == ingest_tx.MIN_WRITE_ROWS
    assert ingest_tx.next_chunk(ingest_tx.BATCH_LINES, 10, 1e-9) == ingest_tx.BATCH_LINES


def test_the_import_lets_an_announced_writer_in(state_root, db_file, monkeypatch):
    # A writer's wait marker makes the importer pause between transactions.
    write_log(state_root, 500)
    conn = seeded_db.connect(db_file)
    folder = db_file + db.WAITING_SUFFIX
    os.makedirs(folder)
    open(os.path.join(folder, "999999-1"), "w").close()
    monkeypatch.setattr(ingest_tx, "MAX_YIELD_SECONDS", 0.05)
    slept = []
    monkeypatch.setattr(ingest_tx.time, "sleep", lambda s: slept.append(s))
    summary = history.ingest_state_root(conn, str(state_root))
    assert summary.imported == 500
    assert slept, "the importer never paused for the waiting writer"
    conn.close()


def test_with_no_writer_waiting_a_batch_is_one_transaction(state_root, conn, monkeypatch):
    write_log(state_root, 3_000)
    monkeypatch.setattr(ingest_tx, "CHECK_SECONDS", 1e-6)  # a look every MIN_WRITE_ROWS
    monkeypatch.setattr(ingest_tx, "LOCK_MAX_SECONDS", 1e9)
    monkeypatch.setattr(ingest_tx, "BATCH_LINES", 1_000)
    summary = history.ingest_state_root(conn, str(state_root))
    assert summary.imported == 3_000
    # One commit a batch, none between, and the end's (the file read whole).
    assert summary.files[0].transactions == 3 + 1
    assert conn.execute("SELECT line_no FROM ingest_state").fetchone()[0] == 3_000


def test_a_writer_that_announces_its_wait_gets_in_before_the_batch_ends(
    state_root, db_file, monkeypatch
):
    # One batch, one transaction but for waiting writers: a writer that asks for the lock
    # while the import writes gets it at the importer's next look, with rows of the batch
    # still to go, and the rows and offset committed before it are whole.
    lines = 20_000
    write_log(state_root, lines)
    conn = seeded_db.connect(db_file)
    monkeypatch.setattr(ingest_tx, "LOCK_MAX_SECONDS", 1e9)
    monkeypatch.setattr(ingest_tx, "BATCH_LINES", lines)
    writing = threading.Event()
    real_begin = ingest_tx.Tx.begin

    def begin(self):
        real_begin(self)
        writing.set()

    monkeypatch.setattr(ingest_tx.Tx, "begin", begin)
    seen = {}

    def writer():
        writing.wait(60)
        other = db.connect(db_file, migrate=False)
        try:
            with db.transaction(other):  # announces its wait (db.begin_immediate)
                seen["rows"], seen["line_no"] = other.execute(
                    "SELECT (SELECT count(*) FROM question_log), (SELECT line_no FROM ingest_state)"
                ).fetchone()
                other.execute("INSERT INTO plantune_meta (key, value) VALUES ('w', '1')")
        finally:
            other.close()

    thread = threading.Thread(target=writer)
    thread.start()
    summary = history.ingest_state_root(conn, str(state_root))
    thread.join(60)
    assert summary.imported == lines
    assert 0 < seen["rows"] < lines, seen  # let in mid-batch, not after the batch's commit
    assert seen["line_no"] == seen["rows"]  # what it saw committed is whole
    assert summary.files[0].transactions >= 2
    assert conn.execute("SELECT value FROM plantune_meta WHERE key = 'w'").fetchone()[0] == "1"
    conn.close()
