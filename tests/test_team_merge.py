"""Attribution (who wrote each row) and `plantune merge` into a team database."""

import json
import os
import sqlite3
from pathlib import Path

import pytest

from tests.helpers import query
from tests.helpers.team import developer_db, invoke, ok, real_rows, team_db
from toolkit.core import identity, seeded_db
from toolkit.pacing import rank as pacing
from toolkit.store import db, paths

ATTRIBUTED = ("question_log", "preference_events", "preferences", "findings", "calibrations")


# ---------------------------------------------------------------- identity


def test_identity_comes_from_the_environment_first(monkeypatch):
    monkeypatch.setenv("PLANTUNE_DEVELOPER", "  Dana@Example.COM ")
    assert identity.resolve() == "dana@example.com"


def test_identity_falls_back_to_the_git_user_email(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".gitconfig").write_text('[user]\n\tname = Eve\n\temail = "Eve@Example.com" # me\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text("[core]\n\tbare = false\n")
    assert identity.resolve(cwd=str(repo)) == "eve@example.com"
    # The repository's own user.email beats the global one, as with git.
    (repo / ".git" / "config").write_text("[user]\n  email = work@corp.example\n")
    assert identity.resolve(cwd=str(repo / "sub")) == "work@corp.example"
    # [user "x"] is another section: its email is not the user's.
    (repo / ".git" / "config").write_text('[user "x"]\n  email = nope@x\n')
    assert identity.resolve(cwd=str(repo)) == "eve@example.com"


def test_identity_without_git_is_login_at_host(tmp_path, monkeypatch):
    monkeypatch.setenv("USER", "frank")
    monkeypatch.chdir(tmp_path)
    assert identity.resolve(cwd=str(tmp_path)).startswith("frank@")


def test_identity_is_resolved_once_per_process(monkeypatch):
    monkeypatch.setenv("PLANTUNE_DEVELOPER", "first@x")
    assert identity.developer() == "first@x"
    monkeypatch.setenv("PLANTUNE_DEVELOPER", "second@x")
    assert identity.developer() == "first@x"


@pytest.mark.parametrize("bad", ["", "   ", "a\nb", "x" * 201])
def test_bad_developer_names_are_refused(bad, db_file):
    result = invoke(["merge", db_file, "--developer", bad, "--db", db_file + ".team"])
    assert result.exit_code == 2
    assert "developer must" in result.output
    assert not os.path.exists(db_file + ".team")


def test_pseudonym_is_stable_salted_and_not_the_identity():
    a = identity.pseudonym("alice@example.com", "salt-1")
    assert a == identity.pseudonym("alice@example.com", "salt-1")
    assert a != identity.pseudonym("alice@example.com", "salt-2")
    assert a != identity.pseudonym("bob@example.com", "salt-1")
    assert "alice" not in a and a.startswith("dev-") and len(a) == 4 + identity.PSEUDONYM_HEX
    with pytest.raises(identity.IdentityError):
        identity.pseudonym("alice@example.com", "")


def test_git_email_reader_is_the_slug_readers_parser(tmp_path):
    config = tmp_path / "config"
    config.write_text('[remote "origin"]\n\turl = git@github.com:o/r.git\n[user]\n\temail = a@b\n')
    assert paths._config_origin_url(str(config)) == "git@github.com:o/r.git"
    assert paths._config_get(str(config), "user", None, "email") == "a@b"


# ---------------------------------------------------------------- attribution


def test_every_writer_records_the_developer(tmp_path, monkeypatch):
    path = str(tmp_path / "me.db")
    monkeypatch.setenv("PLANTUNE_DEVELOPER", "Me@Example.com")
    developer_db(path, None, 3)
    # three days are below the storage guard's minimum sessions: --force stores it anyway
    ok(["calibrate", "--include-synthetic", "--force", "--db", path])
    for table in ATTRIBUTED:
        devs = query(path, f"SELECT DISTINCT developer FROM {table}")
        assert devs == [("me@example.com",)], table


def test_ingest_developer_option_names_the_imported_rows(tmp_path, state_root):
    project = state_root / "projects" / "p1"
    project.mkdir(parents=True)
    (project / "question-log.jsonl").write_text(
        json.dumps(
            {
                "skill": "ship",
                "question_id": "ship-x",
                "question_summary": "Ship?",
                "user_choice": "yes",
                "ts": "2026-11-01T00:00:00Z",
            }
        )
        + "\n"
    )
    (project / "question-events.jsonl").write_text(
        json.dumps(
            {
                "ts": "2026-11-01T00:00:00Z",
                "event_type": "preference-set",
                "question_id": "ship-x",
                "preference": "never-ask",
                "source": "plan-tune",
            }
        )
        + "\n"
    )
    (project / "question-preferences.json").write_text('{"ship-x": "never-ask"}')
    team = str(tmp_path / "team.db")
    ok(["ingest", str(state_root), "--developer", "Gina@Example.com", "--db", team])
    for table in ("question_log", "preference_events", "preferences"):
        assert query(team, f"SELECT DISTINCT developer FROM {table}") == [("gina@example.com",)]


# ---------------------------------------------------------------- merge


def test_merge_keeps_every_row_attributed_and_is_idempotent(tmp_path):
    a, b, team = team_db(tmp_path)
    for table in ("question_log", "preference_events", "findings"):
        want = {("alice@example.com",) + r for r in query(a, f"SELECT count(*) FROM {table}")}
        want |= {("bob@example.com",) + r for r in query(b, f"SELECT count(*) FROM {table}")}
        got = set(query(team, f"SELECT developer, count(*) FROM {table} GROUP BY developer"))
        assert got == want, table
    before = {
        t: query(team, f"SELECT * FROM {t} ORDER BY 1")
        for t in ATTRIBUTED + ("developer_preferences",)
    }
    again = ok(["merge", a, b, "--db", team, "--json"])
    results = json.loads(again.output)
    assert [r["tables"]["question_log"]["added"] for r in results] == [0, 0]
    assert [r["tables"]["findings"]["added"] for r in results] == [0, 0]
    after = {t: query(team, f"SELECT * FROM {t} ORDER BY 1") for t in before}
    assert after == before


def test_merge_reports_counts_per_source_and_keeps_provenance(tmp_path):
    a = developer_db(str(tmp_path / "alice.db"), "alice@example.com", 1)
    b = developer_db(str(tmp_path / "bob.db"), "bob@example.com", 2, project="proj-b")
    team = str(tmp_path / "team.db")
    result = ok(["merge", a, b, "--db", team])
    lines = result.output.strip().splitlines()
    n_a = query(a, "SELECT count(*) FROM question_log")[0][0]
    assert lines[0].startswith(f"{a} as alice@example.com: {n_a:,} of {n_a:,} question events new")
    assert lines[1].startswith(f"{b} as bob@example.com:")
    sources = query(team, "SELECT id, database_id, path FROM merge_sources ORDER BY id")
    ids = [
        query(p, "SELECT value FROM plantune_meta WHERE key = 'database_id'")[0][0] for p in (a, b)
    ]
    assert [s[1] for s in sources] == ids and [s[2] for s in sources] == [a, b]
    # Each row names the source it came from.
    by_source = dict(query(team, "SELECT merged_from, count(*) FROM question_log GROUP BY 1"))
    assert by_source == {
        sources[0][0]: n_a,
        sources[1][0]: query(b, "SELECT count(*) FROM question_log")[0][0],
    }


def test_merged_findings_point_at_the_team_copies_of_their_answers(tmp_path):
    a, b, team = team_db(tmp_path)
    for src in (a, b):
        want = query(
            src,
            "SELECT f.session_id, f.finding_id, q.event_key FROM findings f"
            " JOIN question_log q ON q.id = f.answer_event_id ORDER BY 1, 2",
        )
        got = query(
            team,
            "SELECT f.session_id, f.finding_id, q.event_key FROM findings f"
            " JOIN question_log q ON q.id = f.answer_event_id"
            " WHERE f.session_id IN (SELECT session_id FROM findings f2"
            " WHERE f2.developer = q.developer) ORDER BY 1, 2",
        )
        assert set(want) <= set(got)
        assert want


def test_preferences_stay_per_developer(tmp_path):
    a, b, team = team_db(tmp_path)
    # Both set the same question in their own databases; neither overwrites the other.
    ok(
        [
            "pref",
            "set",
            "plan-eng-review-q1",
            "always-ask",
            "--source",
            "plan-tune",
            "--project",
            "proj-a",
            "--db",
            a,
        ],
        developer="alice@example.com",
    )
    ok(
        [
            "pref",
            "set",
            "plan-eng-review-q1",
            "never-ask",
            "--source",
            "plan-tune",
            "--project",
            "proj-a",
            "--db",
            b,
        ],
        developer="bob@example.com",
    )
    ok(["merge", a, b, "--db", team])
    rows = query(
        team,
        "SELECT developer, preference FROM developer_preferences"
        " WHERE scope = 'proj-a' AND question_id = 'plan-eng-review-q1'"
        " ORDER BY developer",
    )
    assert rows == [("alice@example.com", "always-ask"), ("bob@example.com", "never-ask")]
    # The team database's own preferences (what its user acts on) are not touched.
    assert query(team, "SELECT count(*) FROM preferences") == [(0,)]


def test_a_cleared_preference_never_comes_back_through_a_merge(tmp_path):
    a, _, team = team_db(tmp_path)
    assert query(
        team,
        "SELECT count(*) FROM developer_preferences WHERE developer ="
        " 'alice@example.com' AND question_id = 'plan-eng-review-q0'",
    ) == [(1,)]
    ok(
        ["pref", "clear", "plan-eng-review-q0", "--project", "proj-a", "--db", a],
        developer="alice@example.com",
    )
    result = json.loads(ok(["merge", a, "--db", team, "--json"]).output)
    assert result[0]["tables"]["preferences"]["removed"] == 1
    assert query(
        team,
        "SELECT count(*) FROM developer_preferences WHERE developer ="
        " 'alice@example.com' AND question_id = 'plan-eng-review-q0'",
    ) == [(0,)]
    assert query(
        team, "SELECT count(*) FROM developer_preferences WHERE developer = 'bob@example.com'"
    ) == [(1,)]


def _counts(path):
    return {
        t: query(path, f"SELECT count(*) FROM {t}")[0][0]
        for t in ATTRIBUTED + ("developer_preferences", "merge_sources")
    }


def test_a_newer_schema_is_refused_and_nothing_is_written(tmp_path):
    *_, team = team_db(tmp_path)
    newer = str(tmp_path / "newer.db")
    developer_db(newer, "carol@example.com", 4, real=False)
    conn = sqlite3.connect(newer)
    conn.execute(f"INSERT INTO {db.MIGRATIONS_TABLE} VALUES ('0099_future.sql', 'x')")
    conn.commit()
    conn.close()
    fresh = developer_db(str(tmp_path / "dan.db"), "dan@example.com", 5, real=False)
    before = _counts(team)
    result = invoke(["merge", fresh, newer, "--db", team])
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: {newer}: schema is newer than this plantune or unknown to it (migration"
        " 0099_future); upgrade plantune, then merge again"
    )
    assert _counts(team) == before  # not even the good source before it


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: Path(p).write_text("not a database"), "not a plantune database"),
        (lambda p: sqlite3.connect(p).execute("CREATE TABLE t (x)"), "not a plantune database"),
        (lambda p: None, "no such database"),
    ],
)
def test_bad_sources_get_one_line(tmp_path, make, message):
    src = str(tmp_path / "src.db")
    make(src)
    team = str(tmp_path / "team.db")
    result = invoke(["merge", src, "--db", team])
    assert result.exit_code == 1
    assert message in result.output and len(result.output.strip().splitlines()) == 1


def test_rows_without_a_developer_need_one_named(tmp_path):
    old = str(tmp_path / "old.db")
    developer_db(old, "x@example.com", 6, real=False)
    conn = sqlite3.connect(old)
    conn.execute("UPDATE question_log SET developer = ''")  # written before attribution
    conn.commit()
    conn.close()
    team = str(tmp_path / "team.db")
    result = invoke(["merge", old, "--db", team])
    assert result.exit_code == 1 and "--developer" in result.output
    ok(["merge", old, "--developer", "Old@Example.com", "--db", team])
    assert query(team, "SELECT DISTINCT developer FROM question_log") == [("old@example.com",)]
    assert query(team, "SELECT developer FROM merge_sources") == [("old@example.com",)]


def test_merging_the_team_database_into_itself_is_refused(tmp_path):
    *_, team = team_db(tmp_path)
    result = invoke(["merge", team, "--db", team])
    assert result.exit_code == 1 and "team database itself" in result.output


def test_a_team_database_merges_into_another_with_its_developers(tmp_path):
    *_, team = team_db(tmp_path)
    org = str(tmp_path / "org.db")
    result = invoke(["merge", team, "--db", org])
    assert result.exit_code == 1 and "--trust-attribution" in result.output
    assert not os.path.exists(org) or query(org, "SELECT count(*) FROM question_log") == [(0,)]
    ok(["merge", team, "--trust-attribution", "--db", org])
    assert set(query(org, "SELECT developer, count(*) FROM question_log GROUP BY 1")) == set(
        query(team, "SELECT developer, count(*) FROM question_log GROUP BY 1")
    )
    assert sorted(
        query(org, "SELECT developer, scope, question_id, preference FROM developer_preferences")
    ) == sorted(
        query(team, "SELECT developer, scope, question_id, preference FROM developer_preferences")
    )


def test_real_rows_helper_writes_real_rows(tmp_path):
    path = str(tmp_path / "r.db")
    real_rows(path, "r@example.com", "proj-r")
    assert query(path, "SELECT count(*), sum(synthetic) FROM question_log")[0][0] > 0
    assert query(path, "SELECT DISTINCT project FROM findings") == [("proj-r",)]


def test_compat_script_records_the_developer_from_git_config(tmp_path, db_file):
    import subprocess

    from tests.helpers import script

    home = tmp_path / "home"
    (home / ".gitconfig").write_text("[user]\n\temail = Hook.User@Example.com\n")
    env = dict(os.environ, GSTACK_PROJECT_SLUG="p-hook")
    env.pop("PLANTUNE_DEVELOPER", None)
    event = {
        "skill": "ship",
        "question_id": "ship-x",
        "question_summary": "Ship?",
        "user_choice": "yes",
    }
    p = subprocess.run(
        [script("gstack-question-log"), json.dumps(event)],
        env=env,
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    env["PLANTUNE_DEVELOPER"] = "override@example.com"
    event["tool_use_id"] = "t2"
    p = subprocess.run(
        [script("gstack-question-log"), json.dumps(event)],
        env=env,
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    assert query(db_file, "SELECT developer FROM question_log ORDER BY id") == [
        ("hook.user@example.com",),
        ("override@example.com",),
    ]


# ---------------------------------------------------------------- the rest of a history


def _history(path, developer, n):
    """A declared profile, an office-hours session, a trace run and a guidance proposal."""
    ok(["profile", "declare", "autonomy", f"0.{n}", "--db", path], developer=developer)
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO office_hours_sessions (session_key, ts, mode, raw_json, origin,"
        " recorded_at) VALUES (?, '2026-10-01T10:00:00Z', 'builder', '{}', 'test',"
        " '2026-10-01T10:00:00Z')",
        (f"oh-{developer}",),
    )
    conn.execute(
        "INSERT INTO trace_runs (run_id, project, session_id, created_at,"
        " guidance_mode) VALUES (?, 'proj-a', 's1', '2026-10-01', 'propose')",
        (f"run-{developer}",),
    )
    conn.execute(
        "INSERT INTO guidance_proposals (id, project, created_at, project_dir,"
        " items_json) VALUES (?, 'proj-a', '2026-10-01', ?, ?)",
        (
            f"prop{n}xxxxxx",
            os.path.dirname(path),
            json.dumps([{"id": "x", "section": "Preferences", "text": "t"}]),
        ),
    )
    conn.commit()
    conn.close()


OWNED = ("office_hours_sessions", "trace_runs", "guidance_proposals")


def test_profile_office_hours_traces_and_proposals_merge_per_developer(tmp_path):
    a, b, team = team_db(tmp_path)
    _history(a, "alice@example.com", 2)
    _history(b, "bob@example.com", 9)
    ok(["merge", a, b, "--db", team])
    sa, sb = [r[0] for r in query(team, "SELECT id FROM merge_sources ORDER BY id")]
    assert query(
        team,
        "SELECT developer, scope, value, synthetic, merged_from FROM"
        " developer_declared_profile WHERE dimension = 'autonomy'"
        " ORDER BY developer",
    ) == [
        ("alice@example.com", "__global__", 0.2, 0, sa),
        ("bob@example.com", "__global__", 0.9, 0, sb),
    ]
    # Neither profile is folded into the team database's own.
    assert query(team, "SELECT count(*) FROM declared_profile") == [(0,)]
    for table, key, alice, bob in (
        (
            "office_hours_sessions",
            "session_key",
            f"merged:{sa}:oh-alice@example.com",
            f"merged:{sb}:oh-bob@example.com",
        ),
        ("trace_runs", "run_id", "run-alice@example.com", "run-bob@example.com"),
        ("guidance_proposals", "id", "prop2xxxxxx", "prop9xxxxxx"),
    ):
        got = query(
            team,
            f"SELECT {key}, developer, merged_from FROM {table} WHERE {key} IN (?, ?) ORDER BY 1",
            (alice, bob),
        )
        assert got == [(alice, "alice@example.com", sa), (bob, "bob@example.com", sb)], table
    before = {
        t: query(team, f"SELECT * FROM {t} ORDER BY 1")
        for t in OWNED + ("developer_declared_profile",)
    }
    again = json.loads(ok(["merge", a, b, "--db", team, "--json"]).output)
    for table in OWNED + ("declared_profile",):
        assert [r["tables"][table]["added"] + r["tables"][table]["updated"] for r in again] == [
            0,
            0,
        ], table
    assert {t: query(team, f"SELECT * FROM {t} ORDER BY 1") for t in before} == before
    # A merged proposal is evidence here: it is applied where it was made.
    result = invoke(["guidance", "apply", "prop2xxxxxx", "--db", team])
    assert result.exit_code == 1 and "merged from another database" in result.output


def test_later_changes_follow_and_deleted_rows_never_come_back(tmp_path):
    a, b, team = team_db(tmp_path)
    _history(a, "alice@example.com", 2)
    ok(["merge", a, "--db", team])
    conn = sqlite3.connect(a)
    conn.execute("UPDATE guidance_proposals SET status = 'applied', applied_at = '2026-10-02'")
    conn.execute("DELETE FROM office_hours_sessions")
    conn.commit()
    conn.close()
    ok(["profile", "declare", "autonomy", "0.5", "--db", a], developer="alice@example.com")
    result = json.loads(ok(["merge", a, "--db", team, "--json"]).output)[0]["tables"]
    assert result["guidance_proposals"]["updated"] == 1
    assert result["office_hours_sessions"]["removed"] == 1
    assert result["declared_profile"]["updated"] == 1
    assert query(team, "SELECT status, applied_at FROM guidance_proposals") == [
        ("applied", "2026-10-02")
    ]
    assert query(team, "SELECT count(*) FROM office_hours_sessions") == [(0,)]
    assert query(
        team,
        "SELECT value FROM developer_declared_profile WHERE developer ="
        " 'alice@example.com' AND dimension = 'autonomy'",
    ) == [(0.5,)]
    # Another source's row with the same key is never overwritten by this one.
    _history(b, "bob@example.com", 2)
    ok(["merge", b, "--db", team])
    assert query(team, "SELECT developer, status FROM guidance_proposals") == [
        ("alice@example.com", "applied")
    ]


def test_rows_that_name_no_developer_need_a_source_with_one(tmp_path):
    lone = str(tmp_path / "lone.db")
    ok(["profile", "declare", "autonomy", "0.4", "--db", lone])
    team = str(tmp_path / "team.db")
    result = invoke(["merge", lone, "--db", team])
    assert result.exit_code == 1 and "declared_profile cannot be attributed" in result.output
    assert "--developer" in result.output
    assert query(team, "SELECT count(*) FROM merge_sources") == [(0,)]
    ok(["merge", lone, "--developer", "Lone@Example.com", "--db", team])
    assert query(team, "SELECT developer, value FROM developer_declared_profile") == [
        ("lone@example.com", 0.4)
    ]


def test_another_developers_calibration_never_ranks_in_the_team_database(tmp_path):
    a = developer_db(str(tmp_path / "alice.db"), "alice@example.com", 1)
    ok(["calibrate", "--include-synthetic", "--force", "--db", a], developer="alice@example.com")
    conn = seeded_db.connect(a)
    own = pacing.calibration_in_force(conn, "proj-a", include_synthetic=True)
    conn.close()
    assert own is not None
    team = str(tmp_path / "team.db")
    ok(["merge", a, "--db", team])
    conn = seeded_db.connect(team)
    try:
        assert query(team, "SELECT count(*) FROM calibrations") == [(1,)]
        assert pacing.calibration_in_force(conn, "proj-a", include_synthetic=True) is None
    finally:
        conn.close()


def test_the_same_office_hours_session_of_two_developers_is_kept_for_each(tmp_path):
    from toolkit.core import profile

    a, b, team = team_db(tmp_path)
    session = {"date": "2026-10-01", "mode": "builder", "project_slug": "proj-a"}
    for path in (a, b):
        conn = db.connect(path)
        with db.transaction(conn):
            profile.add_sessions(conn, [session], "test")
        conn.close()
    ok(["merge", a, b, "--db", team])
    assert sorted(query(team, "SELECT developer, raw_json FROM office_hours_sessions")) == [
        ("alice@example.com", json.dumps(session)),
        ("bob@example.com", json.dumps(session)),
    ]
    conn = db.connect(team)
    try:
        # Theirs, not the profile of the team database's own user; and a session that user
        # logs is not taken for a copy of a merged one.
        assert profile.sessions(conn) == []
        with db.transaction(conn):
            assert profile.add_sessions(conn, [session], "test") == 1
    finally:
        conn.close()
    again = json.loads(ok(["merge", a, b, "--db", team, "--json"]).output)
    assert [r["tables"]["office_hours_sessions"]["added"] for r in again] == [0, 0]


def test_a_simulated_calibration_from_an_old_source_arrives_marked_simulated(tmp_path):
    """A source written before calibrations carried `synthetic` (migration 0011b): a fit that
    was allowed simulated findings arrives marked simulated, a real fit stays real, and the
    simulated one never becomes the calibration real ranking uses."""
    mig = tmp_path / "migrations"
    mig.mkdir()
    for name, path in db.default_schema().migrations:
        if name < "0011b":
            (mig / name).write_text(Path(path).read_text(encoding="utf-8"))
    (tmp_path / "no-views").mkdir()
    old = str(tmp_path / "old.db")
    conn = seeded_db.connect(
        old, schema=db.Schema(migrations_dir=str(mig), views_dir=str(tmp_path / "no-views"))
    )
    with db.transaction(conn):
        for created, include_synthetic in (
            ("2026-10-01T00:00:00.000Z", 0),
            ("2026-10-02T00:00:00.000Z", 1),
        ):
            conn.execute(
                "INSERT INTO calibrations (project, created_at, target, threshold, tie_fraction,"
                " score_function, n_findings, include_synthetic)"
                " VALUES ('proj-a', ?, 0.2, 3, 0.5, 'additive', 400, ?)",
                (created, include_synthetic),
            )
    conn.close()
    team = str(tmp_path / "team.db")
    ok(["merge", old, "--developer", "old@example.com", "--db", team])
    assert query(
        team, "SELECT include_synthetic, synthetic FROM calibrations ORDER BY created_at"
    ) == [(0, 0), (1, 1)]
    # Even pinned (a merged calibration ranks only when pinned), the simulated one is never
    # the calibration in force for real findings.
    (sim_id,) = query(team, "SELECT id FROM calibrations WHERE include_synthetic = 1")[0]
    conn = seeded_db.connect(team)
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO calibration_pins (scope, calibration_id, pinned_at)"
            " VALUES ('proj-a', ?, '2026-10-03T00:00:00.000Z')",
            (sim_id,),
        )
    in_force = pacing.calibration_in_force(conn, "proj-a")
    conn.close()
    assert in_force is None or in_force["id"] != sim_id, in_force
