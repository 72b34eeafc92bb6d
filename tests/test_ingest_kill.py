"""Acceptance 7: `plantune ingest` killed with SIGKILL halfway leaves a sound database,
and a rerun finishes with exactly the right number of rows."""

import os
import signal
import sqlite3
import subprocess
import time

from tests.helpers import script
from tests.helpers.views import assert_rollups_exact
from toolkit.core import seeded_db

LINES = 25_000  # five batches


def _count(path):
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute("SELECT count(*) FROM question_log").fetchone()[0]
    finally:
        conn.close()


def test_sigkill_halfway_then_rerun(state_root, db_file):
    log = os.path.join(str(state_root), "projects", "big", "question-log.jsonl")
    os.makedirs(os.path.dirname(log))
    with open(log, "w", encoding="utf-8") as fh:
        for i in range(LINES):
            fh.write(
                '{"skill":"ship","question_id":"ship-test-failure-triage","question_summary":'
                f'"tests failed in shard {i}","user_choice":"fix-now","recommended":"fix-now",'
                f'"session_id":"s-{i // 50}","source":"agent","followed_recommendation":true,'
                f'"ts":"2026-03-01T10:{i // 1000 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"}}\n'
            )
    conn = seeded_db.connect(db_file)  # schema in place before the race starts
    schema = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    conn.close()

    proc = subprocess.Popen(
        [script("plantune"), "ingest", str(state_root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    at_kill = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        at_kill = _count(db_file)
        if at_kill > 0:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
    assert 0 < at_kill < LINES, "the ingest was not caught halfway"

    conn = sqlite3.connect(db_file)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # The rollup triggers a large import leaves out while it writes are all back.
    assert conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall() == [
        tuple(r) for r in schema
    ]
    committed = conn.execute("SELECT count(*) FROM question_log").fetchone()[0]
    # rows and the offset that covers them are committed together
    line_no, offset = conn.execute("SELECT line_no, offset FROM ingest_state").fetchone()
    assert line_no == committed < LINES
    with open(log, "rb") as fh:
        assert offset == len(b"".join(fh.readline() for _ in range(line_no)))
    conn.close()

    rerun = subprocess.run(
        [script("plantune"), "ingest", str(state_root), "--json"], capture_output=True, text=True
    )
    assert rerun.returncode == 0, rerun.stderr
    conn = sqlite3.connect(db_file)
    assert conn.execute(
        "SELECT count(*), count(DISTINCT event_key) FROM question_log"
    ).fetchone() == (LINES, LINES)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert_rollups_exact(conn)
    conn.close()
    assert f'"imported": {LINES - committed},' in rerun.stdout
    assert '"duplicate": 0,' in rerun.stdout  # the rerun started at the committed offset
