import json
import subprocess
import sys

from toolkit.core import questions


def ev(**kw):
    base = {
        "skill": "ship",
        "question_id": "ship-changelog-voice-polish",
        "question_summary": "Polish the changelog voice?",
        "user_choice": "accept",
    }
    base.update(kw)
    return questions.validate_event(base, allow_phase=True)


def test_record_inserts_with_door_class_and_extra(conn):
    rec = ev(phase="ENG", distilled_at="2026-01-01", recommended="accept")
    r = questions.record_event(conn, rec, "proj")
    assert r.status == "inserted"
    row = conn.execute("SELECT * FROM question_log").fetchone()
    assert row["phase"] == "eng"
    assert row["door_class"] == "two-way" and row["door_reason"] == "registry"
    assert json.loads(row["extra_json"]) == {"distilled_at": "2026-01-01"}
    assert row["followed_recommendation"] == 1
    assert json.loads(row["raw_json"]) == rec


def test_keyword_classification_is_stored(conn):
    rec = ev(question_id="adhoc-x", question_summary="Force-push main?")
    questions.record_event(conn, rec, "proj")
    row = conn.execute("SELECT door_class, door_reason FROM question_log").fetchone()
    assert row["door_class"] == "one-way"
    assert row["door_reason"] == "keyword:history-rewrite"


def test_same_record_twice_is_a_duplicate(conn):
    rec = ev(ts="2026-01-01T00:00:00.000Z")
    assert questions.record_event(conn, rec, "proj").status == "inserted"
    assert questions.record_event(conn, dict(rec), "proj").status == "duplicate"
    assert conn.execute("SELECT count(*) FROM question_log").fetchone()[0] == 1


def test_dedup_uses_source_tool_use_id_and_question_index(conn):
    a = ev(tool_use_id="tu-1", source="hook")
    assert questions.record_event(conn, a, "p", question_index=0).status == "inserted"
    assert (
        questions.record_event(
            conn, ev(tool_use_id="tu-1", source="hook", user_choice="skip"), "p", question_index=0
        ).status
        == "dedup"
    )
    # the second question of the same call is kept
    assert (
        questions.record_event(
            conn, ev(tool_use_id="tu-1", source="hook", user_choice="skip"), "p", question_index=1
        ).status
        == "inserted"
    )
    # another project is another log
    assert questions.record_event(conn, a, "other", question_index=0).status == "inserted"
    assert conn.execute("SELECT count(*) FROM question_log").fetchone()[0] == 3


def test_dedup_window_is_the_last_100_events(conn):
    questions.record_event(conn, ev(tool_use_id="old", source="hook"), "p")
    for i in range(100):
        questions.record_event(conn, ev(tool_use_id=f"t{i}", source="hook"), "p")
    assert (
        questions.record_event(
            conn, ev(tool_use_id="old", source="hook", user_choice="x"), "p"
        ).status
        == "inserted"
    )


# SQLite's hard heap limit is process-wide and can only be lowered: the limited calls run in
# a process of their own.
_LIMITED_CALLS = """
import sys
from toolkit.core import seeded_db, questions

conn = seeded_db.connect(sys.argv[1])
conn.execute(f"PRAGMA hard_heap_limit = {24 << 20}")
for tool_use_id in ("new", "small"):
    record = questions.validate_event(
        {"skill": "ship", "question_id": "ship-changelog-voice-polish",
         "question_summary": "Polish the changelog voice?", "user_choice": "accept",
         "tool_use_id": tool_use_id, "source": "hook"},
        allow_phase=True,
    )
    print(questions.record_event(conn, record, "p").status)
"""


def test_the_dedup_window_reads_an_original_line_only_for_a_matching_row(conn, db_file):
    """Imported rows keep their original line (raw_json), which can be megabytes. The window
    check reads it only for a row that holds the event: with 12 lines of 4 MiB among the
    newest rows and SQLite held to 24 MiB, logging an answer still works."""
    for i in range(12):
        questions.record_event(conn, ev(tool_use_id=f"t{i}", source="hook"), "p")
    questions.record_event(conn, ev(tool_use_id="small", source="hook"), "p")
    big = json.dumps({"source": "hook", "free_text": "y" * (4 << 20)})
    with conn:
        conn.execute(
            "UPDATE question_log SET raw_json = ?, ingested_from = 'question-log.jsonl:' || id"
            " WHERE tool_use_id != 'small'",
            (big,),
        )
    done = subprocess.run(
        [sys.executable, "-c", _LIMITED_CALLS, str(db_file)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["inserted", "dedup"]


def test_a_whole_number_written_with_a_point_is_that_question_index(conn):
    """In gstack's records question_index is a field gstack never reads, so any JSON number
    passes; 1.0 and 1 are one JSON number (written back to gstack's file as 1): the same
    question of the call, so a re-sent event is its twin whichever way it was spelled."""

    def sent(index):
        record = ev(tool_use_id="tu-f", source="hook")
        record["question_index"] = index
        return questions.record_event(conn, record, "p").status

    assert [sent(1.0), sent(1), sent(0)] == ["inserted", "dedup", "inserted"]
    stored = conn.execute("SELECT question_index FROM question_log ORDER BY id").fetchall()
    assert [r[0] for r in stored] == [1, 0]
    assert questions.index_of({"question_index": 1.5}, None) == 0
    assert questions.index_of({"question_index": float("nan")}, None) == 0
