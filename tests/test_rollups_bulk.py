"""Bulk imports add the rollups in set-based statements: the tables must come out exactly
as the per-row trigger builds them, and the trigger must be back afterwards."""

import json
import random

import pytest

from toolkit import db, ingest, questions, rollups

ROLLUPS = ("rollup_phase", "rollup_session", "rollup_day", "rollup_question", "rollup_choice")


def write_log(root, project, n, seed):
    rng = random.Random(seed)
    path = root / "projects" / project / "question-log.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    ids = ["ship-todos-create", "review-sql-safety", "plan-ceo-review-mode", "hook-0123456789",
           "adhoc-delete-the-cache", "qa-tier"]
    with open(path, "a") as f:
        for i in range(n):
            rec = {"skill": "ship", "question_id": rng.choice(ids),
                   "question_summary": rng.choice(["Ship it?", "Drop table users?", "Mode?"]),
                   "user_choice": rng.choice(["accept", "skip", "expand"]),
                   "source": rng.choice(["agent", "hook", "auto-decided", "auq-other"]),
                   "session_id": f"s{rng.randrange(40)}",
                   # few distinct stamps, so first/last ties are decided by id
                   "ts": f"2026-0{rng.randrange(1, 4)}-1{rng.randrange(3)}T10:00:00.000Z",
                   "n": i}
            if rng.random() < 0.3:
                rec["phase"] = rng.choice(["ceo", "eng", "dx"])
            if rng.random() < 0.5:
                rec["recommended"] = rng.choice(["accept", "skip"])
            if rng.random() < 0.2:
                rec["door_type"] = "one-way"
            f.write(json.dumps(rec) + "\n")


def seed_rows(conn):
    # Rows already there before the import, earlier and later than the file's stamps.
    for i, ts in enumerate(["2025-12-31T00:00:00.000Z", "2026-09-01T00:00:00.000Z"]):
        for project in ("alpha", "beta"):
            rec = questions.validate_event({
                "skill": "ship", "question_id": "ship-todos-create", "question_summary": "Ship it?",
                "user_choice": "accept", "session_id": "s1", "ts": ts, "recommended": "accept"})
            questions.record_event(conn, rec, project)


def build(tmp_path, name, bulk_min, monkeypatch):
    monkeypatch.setattr(rollups, "BULK_MIN_ROWS", bulk_min)
    root = tmp_path / f"state-{name}"
    write_log(root, "alpha", 3000, 1)
    write_log(root, "beta", 2500, 2)
    conn = db.connect(str(tmp_path / f"{name}.db"))
    seed_rows(conn)
    statements = []
    conn.set_trace_callback(statements.append)
    ingest.ingest_state_root(conn, str(root))
    # A second, smaller append goes through the same path on top of existing rollups.
    write_log(root, "alpha", 2100, 3)
    ingest.ingest_state_root(conn, str(root))
    conn.set_trace_callback(None)
    return conn, statements


def dump(conn):
    return {t: [tuple(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2, 3")]
            for t in ROLLUPS}


def test_bulk_rollups_equal_the_trigger_built_ones(tmp_path, monkeypatch):
    bulk, bulk_sql = build(tmp_path, "bulk", 1, monkeypatch)
    per_row, per_row_sql = build(tmp_path, "rows", 10**9, monkeypatch)
    assert any(s.startswith("DROP TRIGGER question_log_rollup_insert") for s in bulk_sql)
    assert not any(s.startswith("DROP TRIGGER") for s in per_row_sql)
    assert bulk.execute("SELECT count(*) FROM question_log").fetchone()[0] == 7604
    assert dump(bulk) == dump(per_row)
    # the trigger is back, identical, and keeps working for the next live write
    sql = "SELECT sql FROM sqlite_master WHERE name = 'question_log_rollup_insert'"
    assert bulk.execute(sql).fetchone()[0] == per_row.execute(sql).fetchone()[0]
    before = bulk.execute("SELECT sum(events) FROM rollup_day").fetchone()[0]
    rec = questions.validate_event({"skill": "ship", "question_id": "qa-tier",
                                    "question_summary": "Tier?", "user_choice": "quick"})
    questions.record_event(bulk, rec, "alpha")
    assert bulk.execute("SELECT sum(events) FROM rollup_day").fetchone()[0] == before + 1


def test_a_failed_batch_keeps_the_trigger(conn, monkeypatch):
    monkeypatch.setattr(rollups, "BULK_MIN_ROWS", 1)
    with pytest.raises(RuntimeError):
        with db.transaction(conn):
            with rollups.bulk_question_rows(conn, 10):
                raise RuntimeError("boom")
    assert conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE name = 'question_log_rollup_insert'"
    ).fetchone()[0] == 1
