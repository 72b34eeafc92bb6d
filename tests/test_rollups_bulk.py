"""Bulk imports add the analysis rollups set-based: the tables must come out exactly as
the per-row trigger builds them, and every later write must still run the trigger."""

import json
import random

from toolkit.core import database, questions
from toolkit.gstack import history
from toolkit.store import db, rollups

ROLLUPS = ("rollup_phase", "rollup_session", "rollup_day", "rollup_question", "rollup_choice")


def write_log(root, project, n, seed):
    rng = random.Random(seed)
    path = root / "projects" / project / "question-log.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    ids = [
        "ship-todos-create",
        "review-sql-safety",
        "plan-ceo-review-mode",
        "hook-0123456789",
        "adhoc-delete-the-cache",
        "qa-tier",
    ]
    with open(path, "a") as f:
        for i in range(n):
            rec = {
                "skill": "ship",
                "question_id": rng.choice(ids),
                "question_summary": rng.choice(["Ship it?", "Drop table users?", "Mode?"]),
                "user_choice": rng.choice(["accept", "skip", "expand"]),
                "source": rng.choice(["agent", "hook", "auto-decided", "auq-other"]),
                "session_id": f"s{rng.randrange(40)}",
                # few distinct stamps, so first/last ties are decided by id
                "ts": f"2026-0{rng.randrange(1, 4)}-1{rng.randrange(3)}T10:00:00.000Z",
                "n": i,
            }
            if rng.random() < 0.3:
                rec["phase"] = rng.choice(["ceo", "eng", "dx"])
            if rng.random() < 0.5:
                rec["recommended"] = rng.choice(["accept", "skip"])
            if rng.random() < 0.2:
                rec["door_type"] = "one-way"
            if rng.random() < 0.1:
                rec.pop("session_id")
            f.write(json.dumps(rec) + "\n")


def live_event(conn, project, ts, qid="ship-todos-create"):
    rec = questions.validate_event(
        {
            "skill": "ship",
            "question_id": qid,
            "question_summary": "Ship it?",
            "user_choice": "accept",
            "session_id": "s1",
            "ts": ts,
            "recommended": "accept",
        }
    )
    assert questions.record_event(conn, rec, project).status == "inserted"


def build(tmp_path, name, monkeypatch, bulk):
    with monkeypatch.context() as m:
        m.setattr(rollups, "BULK_MIN_BYTES", 1)
        if not bulk:
            m.setattr(rollups, "bulk_ready", lambda conn: False)
        return _build(tmp_path, name)


def _build(tmp_path, name):
    root = tmp_path / f"state-{name}"
    write_log(root, "alpha", 1200, 1)
    write_log(root, "beta", 1000, 2)
    conn = database.connect(str(tmp_path / f"{name}.db"))
    statements = []
    conn.set_trace_callback(statements.append)
    # Rows already there before the import, earlier and later than the file's stamps.
    for ts in ["2025-12-31T00:00:00.000Z", "2026-09-01T00:00:00.000Z"]:
        for project in ("alpha", "beta"):
            live_event(conn, project, ts)
    history.ingest_state_root(conn, str(root))
    # A second, smaller append goes through the same path on top of existing rollups.
    write_log(root, "alpha", 800, 3)
    history.ingest_state_root(conn, str(root))
    conn.set_trace_callback(None)
    return conn, sum("-- bulk" in x for x in statements)


def dump(conn):
    return {
        t: [tuple(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2, 3")] for t in ROLLUPS
    }


def test_bulk_rollups_equal_the_trigger_built_ones(tmp_path, monkeypatch):
    bulk, n_bulk = build(tmp_path, "bulk", monkeypatch, bulk=True)
    per_row, n_rows = build(tmp_path, "rows", monkeypatch, bulk=False)
    assert n_bulk > 0 and n_rows == 0
    assert bulk.execute("SELECT count(*) FROM question_log").fetchone()[0] == 3004
    assert dump(bulk) == dump(per_row)
    # Totals agree with the log itself, too.
    assert bulk.execute("SELECT sum(events) FROM rollup_day").fetchone()[0] == 3004


def test_later_writes_on_the_same_connection_still_run_the_trigger(tmp_path, monkeypatch):
    conn, _ = build(tmp_path, "bulk", monkeypatch, bulk=True)
    before = conn.execute("SELECT sum(events) FROM rollup_day").fetchone()[0]
    live_event(conn, "alpha", "2026-10-01T00:00:00.000Z", qid="qa-tier")
    # The importer's own statement text, outside bulk mode, keeps the trigger as well.
    rec = questions.validate_event(
        {
            "skill": "ship",
            "question_id": "qa-tier",
            "question_summary": "Tier?",
            "user_choice": "quick",
        }
    )
    conn.execute(questions.INSERT_SQL, questions.prepare_row(rec, "alpha", registry={}))
    assert conn.execute("SELECT sum(events) FROM rollup_day").fetchone()[0] == before + 2
    # A second connection (a hook) runs it too.
    other = database.connect(db.file_of(conn))
    live_event(other, "beta", "2026-10-02T00:00:00.000Z", qid="qa-tier")
    assert conn.execute("SELECT sum(events) FROM rollup_day").fetchone()[0] == before + 3
    other.close()


def test_a_redefined_trigger_turns_bulk_upkeep_off(conn):
    assert rollups.bulk_ready(conn)
    sql = conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = ?", (rollups.INSERT_TRIGGER,)
    ).fetchone()[0]
    with db.transaction(conn):
        conn.execute(f"DROP TRIGGER {rollups.INSERT_TRIGGER}")
        conn.execute(sql.replace("BEGIN", "BEGIN\n    SELECT 1;", 1))
    assert not rollups.bulk_ready(conn)


def test_the_mirrored_trigger_is_the_schemas(conn):
    # Fails when a migration changes the insert trigger: ADD_ROWS must then be brought in
    # line with it (and TRIGGER_SHA1 updated), or bulk imports stay on the slow path.
    assert rollups.bulk_ready(conn), "question_log_rollup_insert changed; update rollups.py"
