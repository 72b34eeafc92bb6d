"""``plantune profile``: show, derive, gap, trace, mismatch, declare, setup, export, delete."""

import json
import os
import stat

import pytest
from click.testing import CliRunner

from tests.helpers.profile import PROJECT, add_event, add_events
from toolkit.cli.app import cli
from toolkit.core import seeded_db
from toolkit.store import db


@pytest.fixture(autouse=True)
def project_slug(monkeypatch):
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", PROJECT)


def invoke(*args, input=None):
    return CliRunner().invoke(cli, ["profile", *args], input=input)


def declared_rows(conn):
    return dict(conn.execute("SELECT dimension, value FROM declared_profile").fetchall())


def test_show_below_the_gate_explains_what_is_missing(conn):
    add_events(conn, [("plan-ceo-review-mode", "expand")] * 5)
    r = invoke("show")
    assert r.exit_code == 0, r.output
    assert f"Profile for {PROJECT}" in r.output
    assert "scope_appetite" in r.output and "0.711" in r.output
    assert (
        "Not enough observed data yet — need 15 more events across 2 more skills, "
        "7 more different questions and 2 more days"
    ) in r.output
    assert "Nothing declared yet" in r.output


def test_show_json_and_all_projects(conn):
    add_events(conn, [("plan-ceo-review-mode", "expand")] * 2)
    add_events(conn, [("plan-ceo-review-mode", "expand")] * 3, project="other")
    data = json.loads(invoke("show", "--project", "__all__", "--json").output)
    assert data["diversity"]["sample_size"] == 5
    assert data["inferred"]["values"]["scope_appetite"] == 0.711
    data = json.loads(invoke("show", "--json").output)
    assert data["project"] == PROJECT and data["diversity"]["sample_size"] == 2


def test_show_synthetic_history_separately(conn):
    add_events(conn, [("plan-ceo-review-mode", "expand")] * 5, synthetic=1)
    assert json.loads(invoke("show", "--json").output)["diversity"]["sample_size"] == 0
    data = json.loads(invoke("show", "--synthetic", "--json").output)
    assert data["diversity"]["sample_size"] == 5 and data["synthetic"] is True


def test_a_demo_database_shows_its_simulated_profile_unless_asked_for_the_real_one(conn):
    add_events(conn, [("plan-ceo-review-mode", "expand")] * 5, synthetic=1)
    add_events(conn, [("plan-ceo-review-mode", "reduce")] * 2)
    with db.transaction(conn):
        db.mark_demo(conn)
    data = json.loads(invoke("show", "--json").output)
    assert data["synthetic"] is True and data["diversity"]["sample_size"] == 5
    assert "(simulated history)" in invoke("show").output
    data = json.loads(invoke("show", "--real", "--json").output)
    assert data["synthetic"] is False and data["diversity"]["sample_size"] == 2
    # never the two added together
    with db.transaction(conn):
        conn.execute("DELETE FROM plantune_meta WHERE key = ?", (db.DEMO_KEY,))
    data = json.loads(invoke("show", "--json").output)
    assert data["synthetic"] is False and data["diversity"]["sample_size"] == 2


def test_show_never_sets_declared_values_of_one_history_against_the_other(conn):
    """Declared values come from the same history as the inferred ones they are compared
    with: a real declaration in a demo database is not part of its simulated profile, and a
    simulated one never appears in the real view."""
    with db.transaction(conn):
        conn.executemany(
            "INSERT INTO declared_profile (scope, dimension, value, source, synthetic,"
            " declared_at) VALUES (?, ?, ?, 'test', ?, '2026-10-01T00:00:00.000Z')",
            [(db.GLOBAL_SCOPE, "scope_appetite", 0.67, 1), (db.GLOBAL_SCOPE, "autonomy", 0.9, 0)],
        )
        db.mark_demo(conn)
    simulated = json.loads(invoke("show", "--json").output)
    assert simulated["synthetic"] is True
    assert simulated["declared"] == {"scope_appetite": 0.67}
    assert set(simulated["gap"]) == {"scope_appetite"}
    real = json.loads(invoke("show", "--real", "--json").output)
    assert real["declared"] == {"autonomy": 0.9} and set(real["gap"]) == {"autonomy"}
    with db.transaction(conn):
        conn.execute("DELETE FROM plantune_meta WHERE key = ?", (db.DEMO_KEY,))
    assert json.loads(invoke("show", "--json").output)["declared"] == {"autonomy": 0.9}
    synthetic = json.loads(invoke("show", "--synthetic", "--json").output)
    assert synthetic["declared"] == {"scope_appetite": 0.67}


def test_derive_json(conn):
    add_events(conn, [("plan-eng-review-arch-finding", "fix-now")] * 2)
    data = json.loads(invoke("derive", "--json").output)
    assert data["values"]["architecture_care"] == round(1 / (1 + 2.718281828459045**-0.3), 3)
    assert data["totals"]["risk_tolerance"] == -0.04 and data["events"]["risk_tolerance"] == 2
    r = invoke("derive")
    assert "2 events, 1 skill, 1 question" in r.output


def test_declare_then_gap(conn, state_root):
    add_events(conn, [("plan-ceo-review-mode", "expand")] * 5)
    r = invoke("declare", "scope_appetite", "0.3")
    assert r.exit_code == 0 and "Declared scope_appetite = 0.3" in r.output
    assert declared_rows(conn) == {"scope_appetite": 0.3}
    # gstack's file follows, so the /plan-tune skill sees the new value.
    assert json.loads((state_root / "developer-profile.json").read_text())["declared"] == {
        "scope_appetite": 0.3
    }
    data = json.loads(invoke("gap", "--json").output)
    assert data == [
        {
            "dimension": "scope_appetite",
            "declared": 0.3,
            "inferred": 0.711,
            "gap": 0.411,
            "gap_word": "wide",
        }
    ]
    assert "gap 0.411  wide (too few answers to call it a mismatch)" in invoke("gap").output


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["scope_appetite", "1.5"],
            "Error: value for scope_appetite must be between 0 and 1, got 1.5",
        ),
        (
            ["scope_appetite", "-0.1"],
            "Error: value for scope_appetite must be between 0 and 1, got -0.1",
        ),
        (
            ["scope_appetite", "high"],
            "Error: value for scope_appetite must be a number between 0 and 1, got 'high'",
        ),
        (
            ["scope_appetite", "nan"],
            "Error: value for scope_appetite must be between 0 and 1, got nan",
        ),
        (
            ["happiness", "0.5"],
            "Error: unknown dimension 'happiness' (expected one of: scope_appetite, "
            "risk_tolerance, detail_preference, autonomy, architecture_care)",
        ),
    ],
)
def test_declare_refuses_bad_values_and_writes_nothing(conn, state_root, args, message):
    r = invoke("declare", *args)
    assert r.exit_code == 1
    assert r.output.strip() == message
    assert declared_rows(conn) == {}
    assert not (state_root / "developer-profile.json").exists()


def test_setup_with_answers(conn):
    r = invoke("setup", "--answers", "a,B,c,b,A")
    assert r.exit_code == 0, r.output
    assert declared_rows(conn) == {
        "scope_appetite": 0.25,
        "risk_tolerance": 0.5,
        "detail_preference": 0.85,
        "autonomy": 0.5,
        "architecture_care": 0.25,
    }


@pytest.mark.parametrize("answers", ["a,b,c", "a,b,c,d,a", "", "a,b,c,b,a,a"])
def test_setup_rejects_bad_answers(conn, answers):
    r = invoke("setup", "--answers", answers)
    assert r.exit_code == 1
    assert "--answers needs 5 comma-separated letters A, B or C" in r.output
    assert declared_rows(conn) == {}


def test_setup_interactive(conn):
    r = invoke("setup", input="c\nc\nx\nb\na\nb\n")
    assert r.exit_code == 0, r.output
    assert "When a plan could grow" in r.output
    assert declared_rows(conn)["detail_preference"] == 0.5  # "x" was asked again
    assert declared_rows(conn)["architecture_care"] == 0.5


def test_trace_and_unknown_dimension(conn):
    add_events(conn, [("plan-ceo-review-mode", "expand"), ("plan-ceo-review-mode", "reduce")])
    r = invoke("trace", "scope_appetite")
    assert "plan-ceo-review-mode  → expand  (+0.06)" in r.output
    assert "2 answers, total +0" in r.output
    assert len(json.loads(invoke("trace", "scope_appetite", "--json").output)) == 2
    r = invoke("trace", "happiness")
    assert r.exit_code == 1 and "unknown dimension 'happiness'" in r.output
    assert "No answers in" in invoke("trace", "autonomy").output


def test_mismatch(conn):
    assert "Not enough data to compare yet: 0 events, need 10" in invoke("mismatch").output
    add_events(conn, [("land-and-deploy-merge-confirm", "accept")] * 12)
    invoke("declare", "autonomy", "0.1")
    r = invoke("mismatch")
    assert "autonomy: you declared 0.100 but your answers say 0.808 (gap 0.708)" in r.output
    data = json.loads(invoke("mismatch", "--json").output)
    assert data["mismatches"][0]["dimension"] == "autonomy"


def test_export_is_opt_in_private_and_never_overwrites(conn, tmp_path):
    add_events(conn, [("plan-ceo-review-mode", "expand")] * 5)
    invoke("declare", "autonomy", "0.7")
    dest = tmp_path / "me.json"
    r = invoke("export", str(dest))
    assert r.exit_code == 0, r.output
    doc = json.loads(dest.read_text())
    assert doc["declared"] == {"autonomy": 0.7}
    assert doc["inferred"]["sample_size"] == 5 and doc["schema_version"] == 1
    assert doc["plantune"]["inferred_by_project"][PROJECT]["scope_appetite"] == 0.711
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o600
    dest.write_text("keep")
    r = invoke("export", str(dest))
    assert r.exit_code == 1 and "already exists (use --force to overwrite)" in r.output
    assert dest.read_text() == "keep"
    assert invoke("export", str(dest), "--force").exit_code == 0
    r = invoke("export", str(tmp_path / "missing" / "x.json"))
    assert r.exit_code == 1 and "does not exist" in r.output


# delete ------------------------------------------------------------------------------------

MARKER = "zebra-quartz-7c1f0e"


def plant_marked(conn, db_file):
    add_event(conn, "plan-ceo-review-mode", "expand", summary=f"about {MARKER} one")
    add_event(
        conn, "plan-ceo-review-mode", "reduce", project="other", summary=f"about {MARKER} two"
    )
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO office_hours_sessions (session_key, mode, project_slug, assignment, raw_json,"
            " origin, recorded_at) VALUES ('k:0', 'builder', 'x', ?, ?, 't', 't')",
            (f"assign {MARKER}", json.dumps({"mode": "builder", "assignment": MARKER})),
        )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with open(db_file, "rb") as f:
        assert MARKER.encode() in f.read()


def raw_bytes(db_file):
    data = b""
    for suffix in ("", "-wal"):
        if os.path.exists(db_file + suffix):
            with open(db_file + suffix, "rb") as f:
                data += f.read()
    return data


def test_delete_refuses_without_yes(conn, db_file):
    plant_marked(conn, db_file)
    r = invoke("delete", "--all")
    assert r.exit_code == 1
    assert (
        r.output.strip() == "Error: refusing to delete everything (2 question events) without --yes"
    )
    r = invoke("delete")
    assert (
        r.output.strip()
        == f"Error: refusing to delete project {PROJECT} (1 question event) without --yes"
    )
    assert conn.execute("SELECT count(*) FROM question_log").fetchone()[0] == 2


def test_delete_project_and_all_are_exclusive(conn):
    r = invoke("delete", "--all", "--project", "x", "--yes")
    assert r.exit_code == 1 and "use either --project or --all, not both" in r.output


def test_delete_one_project_keeps_the_others(conn, db_file):
    plant_marked(conn, db_file)
    r = invoke("delete", "--project", "other", "--yes")
    assert r.exit_code == 0, r.output
    assert "Deleted other: 1 question_log, 0 office_hours_sessions. Database vacuumed." in r.output
    assert [r[0] for r in conn.execute("SELECT project FROM question_log")] == [PROJECT]


def test_delete_all_leaves_no_bytes_behind(conn, db_file, state_root):
    plant_marked(conn, db_file)
    invoke("declare", "autonomy", "0.7")
    conn.close()
    r = invoke("delete", "--all", "--yes")
    assert r.exit_code == 0, r.output
    assert (
        "Deleted all projects: 2 question_log, 1 declared_profile, 1 office_hours_sessions."
        in r.output
    )
    assert MARKER.encode() not in raw_bytes(db_file)
    c = seeded_db.connect(db_file)
    assert c.execute("SELECT count(*) FROM question_log").fetchone()[0] == 0
    assert (
        c.execute("SELECT count(*) FROM registry_questions").fetchone()[0] == 53
    )  # not profile data
    c.close()
    doc = json.loads((state_root / "developer-profile.json").read_text())
    assert doc["declared"] == {} and doc["sessions"] == []


def test_delete_with_files_removes_gstack_copies(conn, state_root):
    add_event(conn, "plan-ceo-review-mode", "expand")
    log = state_root / "projects" / PROJECT / "question-log.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text('{"skill":"x"}\n')
    (state_root / "builder-profile.jsonl.migrated-2026-01-01-000000").write_text("{}\n")
    invoke("show")
    assert (state_root / "developer-profile.json").exists()
    r = invoke("delete", "--all", "--files", "--yes", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert len(data["files_removed"]) == 3
    assert not log.exists() and not (state_root / "developer-profile.json").exists()


def test_delete_all_removes_the_preference_events_and_their_lines(conn, state_root):
    r = CliRunner().invoke(
        cli, ["pref", "set", "ship-todos-create", "never-ask", "--source", "plan-tune"]
    )
    assert r.exit_code == 0, r.output
    events_file = state_root / "projects" / PROJECT / "question-events.jsonl"
    assert '"event_type":"preference-set"' in events_file.read_text()
    r = invoke("delete", "--all", "--yes")
    assert r.exit_code == 0, r.output
    assert "1 preference_events" in r.output
    assert events_file.read_text() == ""
    c = seeded_db.connect(str(state_root / "plantune.db"))
    try:
        assert c.execute("SELECT count(*) FROM preference_events").fetchone()[0] == 0
        # The preference in force stays (pref clear removes it).
        assert [tuple(r) for r in c.execute("SELECT preference FROM preferences")] == [
            ("never-ask",)
        ]
    finally:
        c.close()
    # Nothing deleted comes back: importing the state root again brings no event back.
    assert CliRunner().invoke(cli, ["ingest"]).exit_code == 0
    c = seeded_db.connect(str(state_root / "plantune.db"))
    try:
        assert c.execute("SELECT count(*) FROM preference_events").fetchone()[0] == 0
    finally:
        c.close()


def test_counts_of_one_read_in_the_singular(conn):
    add_event(conn, "plan-ceo-review-mode", "expand")
    r = invoke("show")
    assert r.exit_code == 0, r.output
    assert "Observed: 1 event, 1 skill, 1 question on 1 day" in r.output
    assert "(have 1 event, 1 skill, 1 question, 1 day)." in r.output


def test_gap_and_mismatch_agree_about_a_mismatch(conn):
    assert invoke("declare", "scope_appetite", "0.1").exit_code == 0
    add_events(conn, [("plan-ceo-review-mode", "expand")] * 3)
    gap = json.loads(invoke("gap", "--json").output)
    mismatch = json.loads(invoke("mismatch", "--json").output)
    assert mismatch["enough"] is False and gap[0]["gap"] > 0.3
    assert gap[0]["gap_word"] == "wide"
    view = conn.execute(
        "SELECT gap_word FROM profile_gap WHERE project = ? AND dimension = 'scope_appetite'",
        (PROJECT,),
    ).fetchone()[0]
    assert view == "wide"
    assert "mismatch" not in invoke("gap").output.replace("call it a mismatch", "")
    assert "Not enough data to compare yet: 3 events, need 10." in invoke("mismatch").output
    add_events(conn, [("plan-ceo-review-mode", "expand")] * 7)
    gap = json.loads(invoke("gap", "--json").output)
    mismatch = json.loads(invoke("mismatch", "--json").output)
    assert gap[0]["gap_word"] == "mismatch"
    assert [m["dimension"] for m in mismatch["mismatches"]] == ["scope_appetite"]
    words = conn.execute(
        "SELECT project, gap_word FROM profile_gap WHERE dimension = 'scope_appetite'"
        " ORDER BY project"
    ).fetchall()
    assert [tuple(w) for w in words] == [("__all__", "mismatch"), (PROJECT, "mismatch")]
