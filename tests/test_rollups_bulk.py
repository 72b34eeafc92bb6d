"""Bulk imports add the analysis rollups set-based: the tables must come out exactly as
the per-row triggers build them, and every later write must still run the triggers."""

import json
import random
import sqlite3

import pytest

from tests.helpers.views import assert_rollups_exact
from toolkit.core import questions, seeded_db
from toolkit.gstack import history
from toolkit.store import db, rollups

ROLLUPS = (
    "rollup_phase",
    "rollup_session",
    "rollup_day",
    "rollup_question",
    "rollup_choice",
    "profile_totals",
    "profile_sums",
    "profile_skills",
    "profile_days",
    "profile_answers",
)
INSERT_TRIGGERS = (
    "question_log_profile_insert",
    "rollup_choice_insert",
    "rollup_day_insert",
    "rollup_phase_question_insert",
    "rollup_question_insert",
)


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
        m.setattr(rollups, "BULK_MIN_BYTES", 1 if bulk else 1 << 40)
        return _build(tmp_path, name)


def _build(tmp_path, name):
    root = tmp_path / f"state-{name}"
    write_log(root, "alpha", 1200, 1)
    write_log(root, "beta", 1000, 2)
    conn = seeded_db.connect(str(tmp_path / f"{name}.db"))
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
    return conn, sum(x.startswith("DROP TRIGGER") for x in statements)


def dump(conn):
    return {t: sorted(tuple(r) for r in conn.execute(f"SELECT * FROM {t}")) for t in ROLLUPS}


def triggers(conn):
    return sorted(
        tuple(r) for r in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
    )


def test_bulk_rollups_equal_the_trigger_built_ones(tmp_path, monkeypatch):
    bulk, dropped = build(tmp_path, "bulk", monkeypatch, bulk=True)
    per_row, none = build(tmp_path, "per-row", monkeypatch, bulk=False)
    assert dropped > 0 and none == 0
    assert dump(bulk) == dump(per_row)
    assert_rollups_exact(bulk)
    # The triggers are back, exactly as their files declare them.
    assert triggers(bulk) == triggers(per_row)


def test_later_writes_on_the_same_connection_still_run_the_triggers(tmp_path, monkeypatch):
    conn, _ = build(tmp_path, "bulk", monkeypatch, bulk=True)
    before = conn.execute("SELECT sum(events) FROM rollup_day").fetchone()[0]
    live_event(conn, "alpha", "2026-10-01T00:00:00.000Z", qid="brand-new-question")
    assert conn.execute("SELECT sum(events) FROM rollup_day").fetchone()[0] == before + 1
    assert_rollups_exact(conn)


@pytest.fixture
def conn(tmp_path):
    return seeded_db.connect(str(tmp_path / "t.db"))


def row(i):
    rec = questions.validate_event(
        {
            "skill": "ship",
            "question_id": f"q{i % 3}",
            "question_summary": "Q?",
            "user_choice": "a",
            "session_id": "s",
        }
    )
    return questions.prepare_row(rec, "p", registry={}, key=f"k{i}", raw="{}", ingested_from="test")


def test_a_failed_insert_keeps_the_triggers_and_writes_nothing(conn):
    before = triggers(conn)
    bulk = rollups.Bulk(conn)
    with pytest.raises(sqlite3.Error):
        with db.transaction(conn):
            bulk.put(questions.INSERT_SQL, [row(1), ("too", "few")])
    assert triggers(conn) == before
    assert conn.execute("SELECT count(*) FROM question_log").fetchone()[0] == 0
    assert_rollups_exact(conn)


def test_bulk_needs_the_callers_transaction(conn):
    with pytest.raises(RuntimeError):
        rollups.Bulk(conn).put(questions.INSERT_SQL, [row(1)])
    assert {n for n, _ in triggers(conn)} >= set(INSERT_TRIGGERS)


def test_the_bulk_path_leaves_out_exactly_the_declared_insert_triggers(conn):
    bulk = rollups.Bulk(conn)
    assert bulk.ready
    assert sorted(name for name, _ in bulk.triggers) == list(INSERT_TRIGGERS)
    with db.transaction(conn):
        assert bulk.put(questions.INSERT_SQL, [row(i) for i in range(30)]) == 30
        bulk.finish()
    assert_rollups_exact(conn)


def test_other_declarations_than_the_databases_keep_the_per_row_path(conn):
    conn.execute("UPDATE plantune_rollups SET sha1 = 'other' WHERE name = 'rollup_day'")
    bulk = rollups.Bulk(conn)
    assert not bulk.ready
    statements = []
    conn.set_trace_callback(statements.append)
    with db.transaction(conn):
        bulk.put(questions.INSERT_SQL, [row(i) for i in range(5)])
        bulk.finish()
    conn.set_trace_callback(None)
    assert not any(s.startswith("DROP") for s in statements)
    assert_rollups_exact(conn)


def test_puts_in_one_transaction_add_their_rollups_once_at_finish(conn):
    before = triggers(conn)
    bulk = rollups.Bulk(conn)
    statements = []
    with db.transaction(conn):
        conn.set_trace_callback(statements.append)
        for lo in range(0, 30, 10):
            assert bulk.put(questions.INSERT_SQL, [row(i) for i in range(lo, lo + 10)]) == 10
        assert triggers(conn) != before  # the insert triggers are out until finish
        bulk.finish()
        conn.set_trace_callback(None)
        assert triggers(conn) == before
    assert sum(s.startswith("DROP TRIGGER") for s in statements) == len(INSERT_TRIGGERS)
    assert conn.execute("SELECT count(*) FROM question_log").fetchone()[0] == 30
    assert_rollups_exact(conn)


def test_a_failed_put_counts_what_went_in_and_restores_the_triggers(conn):
    # In a transaction the caller keeps (it commits what went in), the rows in are counted.
    before = triggers(conn)
    bulk = rollups.Bulk(conn)
    conn.execute("BEGIN IMMEDIATE")
    bulk.put(questions.INSERT_SQL, [row(1)])
    with pytest.raises(sqlite3.Error):
        bulk.put(questions.INSERT_SQL, [row(2), ("too", "few")])
    conn.execute("COMMIT")
    assert triggers(conn) == before
    assert conn.execute("SELECT count(*) FROM question_log").fetchone()[0] == 2
    assert_rollups_exact(conn)
