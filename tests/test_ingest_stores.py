"""Ingest of the other gstack stores: preferences, preference events, developer profile,
legacy builder profile. Every importer runs twice: the second run changes nothing."""

import json
import os

from tests.helpers.ingest import count, dump, line, write
from toolkit.core import questions
from toolkit.gstack import history, ingest_base


def prefs_file(root, slug="p"):
    return os.path.join(str(root), "projects", slug, "question-preferences.json")


def events_file(root, slug="p"):
    return os.path.join(str(root), "projects", slug, "question-events.jsonl")


def prefs(conn, scope="p"):
    return {
        r[0]: tuple(r)[1:]
        for r in conn.execute(
            "SELECT question_id, preference, raw_value, source FROM preferences WHERE scope = ?",
            (scope,),
        )
    }


def test_preferences_match_the_file_unknown_values_kept(state_root, conn):
    write(
        events_file(state_root),
        line(
            {
                "ts": "2026-03-01T09:00:00.000Z",
                "event_type": "preference-set",
                "question_id": "ship-release-pipeline-missing",
                "preference": "never-ask",
                "source": "inline-user",
                "free_text": "stop asking",
            }
        ),
    )
    write(
        prefs_file(state_root),
        json.dumps(
            {
                "ship-release-pipeline-missing": "never-ask",
                "a-b": "sometimes",
                "c-d": None,
                "e-f": "always-ask",
            },
            indent=2,
        ),
    )
    summary = history.ingest_state_root(conn, state_root)
    assert prefs(conn) == {
        "ship-release-pipeline-missing": ("never-ask", None, "inline-user"),
        "a-b": ("unknown", "sometimes", "gstack-file"),
        "c-d": ("unknown", "null", "gstack-file"),
        "e-f": ("always-ask", None, "gstack-file"),
    }
    row = conn.execute(
        "SELECT free_text, updated_at FROM preferences WHERE question_id ="
        " 'ship-release-pipeline-missing'"
    ).fetchone()
    assert tuple(row) == ("stop asking", "2026-03-01T09:00:00.000Z")
    assert summary.imported == 5
    before = dump(conn)
    assert history.ingest_state_root(conn, state_root).imported == 0
    assert dump(conn) == before

    # gstack's own --clear and --write edit the file: the rows follow it.
    write(prefs_file(state_root), json.dumps({"a-b": "never-ask", "e-f": "always-ask"}))
    report = history.ingest_state_root(conn, state_root).files[1]
    assert (report.updated, report.removed, report.duplicate) == (1, 2, 1)
    assert prefs(conn) == {
        "a-b": ("never-ask", None, "gstack-file"),
        "e-f": ("always-ask", None, "gstack-file"),
    }


def test_corrupt_preferences_file_is_reported_with_its_line_and_changes_nothing(state_root, conn):
    write(prefs_file(state_root), json.dumps({"a-b": "never-ask"}))
    history.ingest_state_root(conn, state_root)
    write(prefs_file(state_root), '{\n  "a-b": "always-ask",\n  "c-d": \n}')
    report = history.ingest_state_root(conn, state_root).files[0]
    assert [(i.line, i.message) for i in report.issues] == [(4, "invalid JSON (Expecting value)")]
    assert prefs(conn) == {"a-b": ("never-ask", None, "gstack-file")}
    # not remembered: reported again until it is fixed
    again = history.ingest_state_root(conn, state_root).files[0]
    assert again.skipped == 1
    write(prefs_file(state_root), "[1]")
    assert history.ingest_state_root(conn, state_root).files[0].issues[0].message == (
        "not a JSON object"
    )


def test_touched_but_identical_preferences_file_changes_nothing(state_root, conn):
    write(prefs_file(state_root), json.dumps({"a-b": "never-ask"}))
    history.ingest_state_root(conn, state_root)
    before = dump(conn)
    os.utime(prefs_file(state_root), (1, 1))
    report = history.ingest_state_root(conn, state_root).files[0]
    assert report.status == "read" and report.imported == report.updated == 0
    assert dump(conn) == before
    assert history.ingest_state_root(conn, state_root).files[0].status == "unchanged"


def test_preference_events_keep_unknown_fields_and_skip_bad_types(state_root, conn):
    good = {
        "ts": "2026-03-01T09:00:00.000Z",
        "event_type": "preference-set",
        "question_id": "a-b",
        "preference": "never-ask",
        "source": "plan-tune",
        "note": {"why": "noise"},
        "free_text": 7,
    }
    write(
        events_file(state_root),
        line(good)
        + line({"event_type": "preference-deleted", "question_id": "x"})
        + line({"event_type": "preference-cleared"}),
    )
    report = history.ingest_state_root(conn, state_root).files[0]
    assert [(i.line, i.message) for i in report.issues] == [
        (2, "event_type must be one of: preference-set, preference-cleared")
    ]
    rows = conn.execute("SELECT * FROM preference_events ORDER BY id").fetchall()
    assert len(rows) == 2
    assert rows[0]["event_key"] == questions.event_key("p", good)
    assert rows[0]["free_text"] is None
    assert json.loads(rows[0]["extra_json"]) == {"note": {"why": "noise"}, "free_text": 7}
    assert rows[0]["ingested_from"] == f"{events_file(state_root)}:1"
    assert rows[1]["question_id"] is None and rows[1]["scope"] == "p"
    before = dump(conn)
    history.ingest_state_root(conn, state_root)
    assert dump(conn) == before


SESSION_A = {
    "date": "2026-02-01",
    "mode": "builder",
    "project_slug": "acme-app",
    "signals": ["taste", "agency"],
    "design_doc": "Billing v2",
    "assignment": "ship it",
    "resources_shown": ["https://example.com/a"],
    "topics": ["pricing"],
    "ts": "2026-02-01T10:00:00.000Z",
}
SESSION_B = {
    "date": "2026-02-08",
    "mode": "resources",
    "signals": ["taste"],
    "ts": "2026-02-08T10:00:00.000Z",
}


def test_developer_profile_declared_values_and_sessions(state_root, conn):
    profile = {
        "identity": {},
        "declared": {
            "scope_appetite": 0.8,
            "autonomy": 0.25,
            "bogus_dim": 0.5,
            "risk_tolerance": 3,
        },
        "declared_at": "2026-02-02T00:00:00.000Z",
        "sessions": [SESSION_A, SESSION_B, "junk"],
        "schema_version": 1,
    }
    path = os.path.join(str(state_root), "developer-profile.json")
    write(path, json.dumps(profile, indent=2))
    report = history.ingest_state_root(conn, state_root).files[0]
    declared = {
        r[0]: tuple(r)[1:]
        for r in conn.execute("SELECT dimension, value, scope, declared_at FROM declared_profile")
    }
    assert declared == {
        "scope_appetite": (0.8, "__global__", "2026-02-02T00:00:00.000Z"),
        "autonomy": (0.25, "__global__", "2026-02-02T00:00:00.000Z"),
    }
    skips = [(i.line, i.message) for i in report.issues]
    assert skips == [
        (6, "declared.bogus_dim: unknown dimension"),
        (7, "declared.risk_tolerance: must be a number between 0 and 1"),
        (10, "sessions[2]: not a JSON object"),
    ]
    sessions = conn.execute("SELECT * FROM office_hours_sessions ORDER BY id").fetchall()
    assert [s["session_key"] for s in sessions] == [
        ingest_base.session_key(SESSION_A),
        ingest_base.session_key(SESSION_B),
    ]
    a = sessions[0]
    assert (a["mode"], a["project_slug"], a["design_doc"], a["origin"]) == (
        "builder",
        "acme-app",
        "Billing v2",
        "developer-profile.json",
    )
    assert json.loads(a["signals_json"]) == ["taste", "agency"]
    assert json.loads(a["resources_json"]) == ["https://example.com/a"]
    assert json.loads(a["raw_json"]) == SESSION_A
    before = dump(conn)
    assert history.ingest_state_root(conn, state_root).imported == 0
    assert dump(conn) == before

    # derive rewrites the file; a declared value dropped by the user goes away
    profile["declared"] = {"scope_appetite": 0.9}
    profile["derived_at"] = "2026-02-03T00:00:00.000Z"
    write(path, json.dumps(profile, indent=2))
    report = history.ingest_state_root(conn, state_root).files[0]
    assert (report.updated, report.removed) == (1, 1)
    assert [tuple(r) for r in conn.execute("SELECT dimension, value FROM declared_profile")] == [
        ("scope_appetite", 0.9)
    ]
    assert count(conn, "office_hours_sessions") == 2


def test_builder_profile_sessions_share_keys_with_the_migrated_profile(state_root, conn):
    legacy = os.path.join(str(state_root), "builder-profile.jsonl")
    write(legacy, line(SESSION_A) + "this is not json\n{broken json\n" + line(SESSION_B))
    summary = history.ingest_state_root(conn, state_root)
    report = summary.files[0]
    assert (report.imported, report.skipped) == (2, 2)
    assert [(i.line, i.message) for i in report.issues] == [
        (2, "invalid JSON"),
        (3, "invalid JSON"),
    ]
    assert os.path.exists(legacy)  # ingest never renames gstack's files
    # gstack's --migrate then moves the same sessions into developer-profile.json
    write(
        os.path.join(str(state_root), "developer-profile.json"),
        json.dumps({"declared": {}, "sessions": [SESSION_A, SESSION_B]}, indent=2),
    )
    summary = history.ingest_state_root(conn, state_root)
    assert summary.imported == 0 and summary.duplicate == 2
    assert count(conn, "office_hours_sessions") == 2
    origins = [r[0] for r in conn.execute("SELECT origin FROM office_hours_sessions")]
    assert origins == ["builder-profile.jsonl", "builder-profile.jsonl"]


def test_session_key_is_the_sha1_of_canonical_json():
    import hashlib

    a = {"mode": "builder", "date": "2026-01-01", "signals": ["é"]}
    b = {"signals": ["é"], "date": "2026-01-01", "mode": "builder"}
    assert (
        ingest_base.session_key(a)
        == ingest_base.session_key(b)
        == hashlib.sha1(
            '{"date":"2026-01-01","mode":"builder","signals":["é"]}'.encode()
        ).hexdigest()
    )
