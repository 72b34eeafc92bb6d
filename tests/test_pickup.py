"""Compat commands pick up what other writers (gstack's own bins, hand edits) changed in
gstack's files before answering, and never read back their own writes."""

import json
import os

import pytest

from tests.helpers.hotpath import (
    SLUG,
    count,
    db_rows,
    log,
    log_lines,
    one_line_error,
    pref,
    prefs_file,
    prefs_text,
    project_dir,
    run,
)

pytest.importorskip("toolkit.gstack.ingest")

TWO_WAY = "ship-changelog-voice-polish"
EVENT = {
    "skill": "ship",
    "question_id": TWO_WAY,
    "question_summary": "Polish it?",
    "user_choice": "accept",
}


def _path(root, name):
    return os.path.join(project_dir(root), name)


def _hand_write(root, name, text, mode="w"):
    os.makedirs(project_dir(root), exist_ok=True)
    with open(_path(root, name), mode, encoding="utf-8") as f:
        f.write(text)


def test_lines_appended_by_gstack_are_imported(state_root):
    assert log(EVENT).returncode == 0
    line = dict(EVENT, user_choice="skip", source="hook", ts="2026-01-02T03:04:05.000Z")
    _hand_write(state_root, "question-log.jsonl", json.dumps(line) + "\n", "a")
    assert pref("--check", TWO_WAY).returncode == 0  # any compat call picks it up
    rows = db_rows("SELECT user_choice, source, ingested_from FROM question_log ORDER BY id")
    assert [(r["user_choice"], r["source"]) for r in rows] == [
        ("accept", "agent"),
        ("skip", "hook"),
    ]
    assert rows[0]["ingested_from"] is None and rows[1]["ingested_from"]


def test_hand_edit_of_preferences_is_honoured(state_root):
    assert pref("--check", TWO_WAY).stdout == "ASK_NORMALLY\n"
    _hand_write(
        state_root,
        "question-preferences.json",
        json.dumps({TWO_WAY: "never-ask", "qa-tier": "always-ask"}, indent=2),
    )
    assert pref("--check", TWO_WAY).stdout == "AUTO_DECIDE\n"
    # a later write keeps the hand-edited entries
    w = pref(
        "--write",
        json.dumps(
            {"question_id": "ship-todos-create", "preference": "never-ask", "source": "plan-tune"}
        ),
    )
    assert w.returncode == 0
    assert prefs_file(state_root) == {
        TWO_WAY: "never-ask",
        "qa-tier": "always-ask",
        "ship-todos-create": "never-ask",
    }
    # removing an entry by hand removes it from the database too
    _hand_write(state_root, "question-preferences.json", json.dumps({"qa-tier": "always-ask"}))
    assert pref("--check", TWO_WAY).stdout == "ASK_NORMALLY\n"
    assert [r["question_id"] for r in db_rows("SELECT question_id FROM preferences")] == ["qa-tier"]


def test_events_written_by_gstack_are_imported(state_root):
    event = {
        "ts": "2026-01-01T00:00:00.000Z",
        "event_type": "preference-set",
        "question_id": "qa-tier",
        "preference": "never-ask",
        "source": "inline-user",
    }
    _hand_write(state_root, "question-events.jsonl", json.dumps(event) + "\n")
    assert pref("--stats").returncode == 0
    assert db_rows("SELECT question_id, source FROM preference_events") == [
        {"question_id": "qa-tier", "source": "inline-user"}
    ]


def test_own_writes_leave_the_importer_nothing_to_do(state_root):
    from toolkit.core import seeded_db
    from toolkit.gstack import ingest
    from toolkit.store import db

    assert log(EVENT).returncode == 0
    assert log(dict(EVENT, tool_use_id="t")).returncode == 0
    assert (
        pref(
            "--write",
            json.dumps(
                {
                    "question_id": "a",
                    "preference": "never-ask",
                    "source": "plan-tune",
                    "free_text": "meh",
                }
            ),
        ).returncode
        == 0
    )
    assert pref("--clear", "a").returncode == 0
    assert pref("--check", TWO_WAY).returncode == 0
    conn = seeded_db.connect(os.environ["PLANTUNE_DB"])
    summary = ingest.sync_project(conn, str(state_root), SLUG)
    assert [f["status"] for f in summary["files"]] == ["unchanged"] * 3
    cols = "path, kind, inode, size, offset, line_no, mtime_ns, head_sha1, tail_sha1"
    ours = conn.execute(f"SELECT {cols} FROM ingest_state ORDER BY path").fetchall()
    # the importer, starting afresh, arrives at exactly the state we kept, and adds nothing
    with db.transaction(conn):
        conn.execute("DELETE FROM ingest_state")
    before = dict(db.table_counts(conn), ingest_state=3)
    ingest.sync_project(conn, str(state_root), SLUG)
    assert [tuple(r) for r in conn.execute(f"SELECT {cols} FROM ingest_state ORDER BY path")] == [
        tuple(r) for r in ours
    ]
    assert db.table_counts(conn) == before
    conn.close()


def test_a_racing_append_is_left_to_the_importer(state_root):
    # a line appended outside our lock between two of our calls is imported, ours is not
    # read back twice, and nothing is duplicated
    assert log(EVENT).returncode == 0
    _hand_write(
        state_root,
        "question-log.jsonl",
        json.dumps(dict(EVENT, user_choice="x", ts="2026-01-01T00:00:00.000Z")) + "\n",
        "a",
    )
    assert log(dict(EVENT, user_choice="y")).returncode == 0
    assert log(dict(EVENT, user_choice="z")).returncode == 0
    assert [
        r["user_choice"] for r in db_rows("SELECT user_choice FROM question_log ORDER BY id")
    ] == ["accept", "x", "y", "z"]
    assert [l["user_choice"] for l in log_lines(state_root)] == ["accept", "x", "y", "z"]


def test_corrupt_preferences_file_warns_and_answers_from_the_database(state_root):
    assert (
        pref(
            "--write",
            json.dumps({"question_id": TWO_WAY, "preference": "never-ask", "source": "plan-tune"}),
        ).returncode
        == 0
    )
    _hand_write(state_root, "question-preferences.json", '{"oops": ')
    p = pref("--check", TWO_WAY)
    assert p.returncode == 0 and p.stdout == "AUTO_DECIDE\n"
    assert "warning: skipped 1 unreadable entry" in one_line_error(p)


def test_mirror_off_ignores_the_files(state_root):
    _hand_write(state_root, "question-preferences.json", json.dumps({TWO_WAY: "never-ask"}))
    assert pref("--check", TWO_WAY, PLANTUNE_MIRROR="0").stdout == "ASK_NORMALLY\n"
    assert count("preferences") == 0


def test_turning_mirroring_on_keeps_preferences_set_while_it_was_off(state_root):
    assert (
        pref(
            "--write",
            json.dumps({"question_id": TWO_WAY, "preference": "never-ask", "source": "plan-tune"}),
            PLANTUNE_MIRROR="0",
        ).returncode
        == 0
    )
    assert not os.path.exists(_path(state_root, "question-preferences.json"))
    # the first mirrored call creates the file from the database, not as an empty {}
    assert pref("--check", TWO_WAY).stdout == "AUTO_DECIDE\n"
    assert prefs_text(state_root) == '{\n  "ship-changelog-voice-polish": "never-ask"\n}'
    assert pref("--check", TWO_WAY).stdout == "AUTO_DECIDE\n"


def test_native_commands_pick_up_too(state_root):
    _hand_write(state_root, "question-preferences.json", json.dumps({TWO_WAY: "never-ask"}))
    p = run("plantune", "check", TWO_WAY)
    assert p.stdout == "AUTO_DECIDE\n"
