"""Simulated rows never change a real decision, unless the caller opts in.

The central test builds a real history, takes a copy, simulates several histories into
the original (every project name the simulator knows, a synthetic calibration stored as
the global default), and then asks both databases the same questions through every
decision path: check (the fast path and the library), the PreToolUse hook, pacing rank,
flips, guidance proposals, the profile and the preference files gstack reads. Every
answer must be the same. Opting in (--include-synthetic, a demo database) must then
make the simulated rows count.
"""

import json
import shutil

import pytest
from click.testing import CliRunner

from tests.helpers.hooks import payload, question
from toolkit.analysis import calibrate as cal
from toolkit.analysis import simulate
from toolkit.claude import hooks
from toolkit.cli.app import cli
from toolkit.cli.fast import run_check
from toolkit.core import preferences, profile, questions, seeded_db
from toolkit.guidance import files
from toolkit.guidance import proposals as guidance
from toolkit.pacing import decisions
from toolkit.pacing import rank as pacing
from toolkit.store import db

NOW = "2026-12-01T12:00:00.000Z"
REAL_PROJECTS = ("acme-storefront", "river-mobile", "real-app", "fresh-project")
AD_HOC = (
    "real-app-deploy-notes",
    "acme-storefront-cache-choice",
    "office-hours-cross-model-run",
    "plan-ceo-review-split-scope",
    "hook-0123456789",
)


def two_way_ids(conn):
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM registry_questions WHERE door_type = 'two-way' ORDER BY id"
        )
    ]


def build_real_history(conn):
    """Real preferences, answers over several sessions, a real calibration and findings."""
    ids = two_way_ids(conn)
    with db.transaction(conn):
        preferences.write(conn, db.GLOBAL_SCOPE, ids[0], "never-ask", "plan-tune", now=NOW)
        preferences.write(conn, db.GLOBAL_SCOPE, ids[1], "always-ask", "plan-tune", now=NOW)
        preferences.write(
            conn, "acme-storefront", ids[2], "ask-only-for-one-way", "inline-user", now=NOW
        )
        preferences.write(conn, "real-app", ids[3], "never-ask", "plan-tune", now=NOW)
        for s in range(5):
            for project in ("acme-storefront", "real-app"):
                record = questions.validate_event(
                    {
                        "skill": "plan-eng-review",
                        "question_id": "plan-eng-review-test-gap",
                        "question_summary": "Add the missing test?",
                        "user_choice": "add-test",
                        "recommended": "add-test",
                        "session_id": f"real-{project}-{s}",
                        "phase": "eng",
                        "ts": f"2026-11-2{s}T10:00:00.000Z",
                    },
                    now=NOW,
                    allow_phase=True,
                )
                questions.record_event(conn, record, project, recorded_at=NOW)
        conn.execute(
            "INSERT INTO calibrations (project, created_at, target, threshold, tie_fraction, score_function,"
            " n_findings, n_sessions, achieved_rate, ci_low, ci_high)"
            " VALUES ('real-app', '2026-11-01T00:00:00.000Z', 0.2, 3, 0.5, 'additive', 500, 80, 0.2, 0.17, 0.23)"
        )
        profile.set_declared(
            conn, {"scope_appetite": 0.8, "autonomy": 0.3}, source="plantune", now=NOW
        )
    for project in ("acme-storefront", "real-app"):
        pacing.rank(conn, rank_request(f"real-{project}-ranked", "ceo"), project, now=NOW)


def rank_request(session, phase="eng", chain=None):
    def f(fid, s, i, d, **kw):
        base = {
            "id": fid,
            "summary": f"Summary of {fid}",
            "severity": s,
            "irreversibility": i,
            "decision_matters": d,
            "recommended": "fix-now",
            "options": ["fix-now", "defer"],
        }
        base.update(kw)
        return base

    return {
        "session_id": session,
        "chain_id": chain or f"chain-{session}",
        "phase": phase,
        "budget": 4,
        "findings": [
            f("plan-eng-review-test-gap", 1, 1, 1),
            f("plan-eng-review-arch-finding", 2, 1, 2),
            f("eng-cache-ttl", 0, 1, 1),
            f("eng-index", 1, 2, 1),
            f("eng-logging", 0, 0, 1),
            f("plan-ceo-review-expansion-proposal", 1, 0, 1),
        ],
    }


def simulate_into(conn):
    for seed, days in ((12, 20), (3, 15)):
        simulate.simulate(
            conn, days=days, seed=seed, projects=len(simulate.PROJECT_NAMES), end="2026-11-30"
        )
    simulate.simulate(conn, days=10, seed=12, projects=4, end="2026-11-30", replace=True)
    simulate.simulate(conn, days=90, seed=5, projects=len(simulate.PROJECT_NAMES), end="2026-11-30")
    # The hostile case beyond what one simulation happens to draw: a simulated never-ask for
    # every registered id, in every real project's scope and the global one.
    ids = [r[0] for r in conn.execute("SELECT id FROM registry_questions")] + list(AD_HOC)
    with db.transaction(conn):
        conn.executemany(
            "INSERT OR IGNORE INTO preferences (scope, question_id, preference, source, synthetic, updated_at)"
            " VALUES (?, ?, 'never-ask', 'plan-tune', 1, ?)",
            [(scope, qid, NOW) for scope in REAL_PROJECTS + (db.GLOBAL_SCOPE,) for qid in ids],
        )


def answers(path, tmp_path, label):
    """Every real decision the database gives, as plain data."""
    env = {"GSTACK_STATE_ROOT": str(tmp_path / f"state-{label}"), "PLANTUNE_DB": path}
    conn = seeded_db.connect(path)
    out = {}
    ids = [r[0] for r in conn.execute("SELECT id FROM registry_questions ORDER BY id")] + list(
        AD_HOC
    )
    for project in REAL_PROJECTS:
        for qid in ids:
            out[("check", project, qid)] = preferences.check(conn, project, qid).as_dict()
        out[("read", project)] = preferences.read(conn, project)
        out[("file", project)] = preferences.render(preferences.read(conn, project))
        out[("calibration", project)] = pacing.active_calibration(conn, project)
        out[("latest", project)] = (cal.latest(conn, project) or {}).get("id")
        out[("profile", project)] = profile.inferred(conn, project)
        layout = files.layout_for(project_dir=str(tmp_path / f"proj-{project}"))  # nothing written
        proposal = guidance.build_proposal(conn, layout, slug=project, run_id="run-1", now=NOW)
        out[("guidance", project)] = json.dumps(proposal, sort_keys=True, default=str)
    out["read-global"] = preferences.read(conn, db.GLOBAL_SCOPE)
    out["declared"] = profile.declared(conn)
    out["declared_at"] = profile.declared_at(conn)
    out["gap"] = [
        tuple(r)
        for r in conn.execute(
            "SELECT * FROM profile_gap WHERE synthetic = 0 ORDER BY project, dimension"
        )
    ]
    out["effective"] = [
        tuple(r)
        for r in conn.execute(
            "SELECT * FROM preference_effective WHERE project IN ('real-app', 'acme-storefront', '__global__')"
            " ORDER BY project, question_id"
        )
    ]
    # the fast path prints the same lines
    for qid in ids[:12] + list(AD_HOC):
        out[("fast", qid)] = run_check(qid, project="acme-storefront", db_path=path).out
    conn.close()

    # the PreToolUse hook (it writes an auto-decided event when it decides)
    for project in REAL_PROJECTS:
        for qid in ids[:25] + list(AD_HOC):
            data = payload(
                [question(f"Pick one. <gstack-qid:{qid}>", ["A) Go (recommended)", "B) Stop"])],
                cwd=tmp_path,
                event="PreToolUse",
                session_id=f"hook-{project}",
                tool_use_id=f"tu-{qid}",
            )
            out[("hook", project, qid)] = hooks.pre_tool_use(
                data, db_path=path, env=dict(env, GSTACK_PROJECT_SLUG=project)
            )

    # pacing rank on new sessions and on the real chains, then a flip by id
    conn = seeded_db.connect(path)
    for project in REAL_PROJECTS:
        for phase in ("ceo", "eng"):
            out[("rank", project, phase)] = pacing.rank(
                conn,
                rank_request(f"new-{project}-{phase}", phase, chain="shared-chain"),
                project,
                now=NOW,
            ).output
    # (row ids differ once simulated rows are in the tables; what they point at must not)
    out["flip"] = {
        k: v
        for k, v in decisions.find_decision(conn, "eng-logging", project="real-app").items()
        if k not in ("id", "answer_event_id")
    }
    out["session"] = decisions.session_summary(conn, "new-real-app-eng")
    conn.close()
    return out


def test_simulated_history_changes_no_real_decision(db_file, tmp_path):
    conn = seeded_db.connect(db_file)
    build_real_history(conn)
    conn.close()
    before = str(tmp_path / "before.db")
    shutil.copy(db_file, before)

    conn = seeded_db.connect(db_file)
    simulate_into(conn)
    # a simulated calibration stored as the global default and as a real project's own
    for args in (
        ["--include-synthetic", "--force"],
        ["--include-synthetic", "--force", "--project", "acme-storefront"],
    ):
        r = CliRunner().invoke(cli, ["calibrate", "--db", db_file, "--json", *args])
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["synthetic"] is True
    assert conn.execute("SELECT count(*) FROM preferences WHERE synthetic = 1").fetchone()[0] > 0
    assert (
        conn.execute("SELECT count(*) FROM declared_profile WHERE synthetic = 1").fetchone()[0] > 0
    )
    # simulated preferences exist for ids the real checks ask about, in the real projects' scopes
    simulated_scopes = {
        r[0] for r in conn.execute("SELECT scope FROM preferences WHERE synthetic = 1")
    }
    assert {db.GLOBAL_SCOPE, *REAL_PROJECTS} <= simulated_scopes
    conn.close()

    got_before = answers(before, tmp_path, "before")
    got_after = answers(db_file, tmp_path, "after")
    assert got_before.keys() == got_after.keys()
    different = [k for k in got_before if got_before[k] != got_after[k]]
    assert different == []
    # the comparison is not empty: real preferences decide, and pacing uses the real calibration
    assert (
        got_after[("check", "real-app", two_way_ids(seeded_db.connect(db_file))[3])]["decision"]
        == "AUTO_DECIDE"
    )
    assert got_after[("calibration", "real-app")]["threshold"] == 3
    assert got_after[("calibration", "acme-storefront")]["id"] is None


def test_include_synthetic_and_demo_databases_opt_in(tmp_path):
    demo = str(tmp_path / "demo.db")
    r = CliRunner().invoke(
        cli,
        [
            "simulate",
            "--new-db",
            "--db",
            demo,
            "--days",
            "40",
            "--seed",
            "12",
            "--end",
            "2026-11-30",
        ],
    )
    assert r.exit_code == 0, r.output
    real = str(tmp_path / "real.db")
    shutil.copy(demo, real)
    conn = seeded_db.connect(real)
    with db.transaction(conn):
        conn.execute("DELETE FROM plantune_meta WHERE key = ?", (db.DEMO_KEY,))
    # a never-ask simulated preference on a two-way id, in some scope
    scope, qid = conn.execute(
        "SELECT p.scope, p.question_id FROM preferences p JOIN registry_questions r ON r.id = p.question_id"
        " WHERE p.synthetic = 1 AND p.preference = 'never-ask' AND r.door_type = 'two-way'"
        " AND p.question_id NOT LIKE '%-split-%' LIMIT 1"
    ).fetchone()
    project = "some-project" if scope == db.GLOBAL_SCOPE else scope
    conn.close()

    def check(path, *extra):
        r = CliRunner().invoke(cli, ["check", qid, "--project", project, "--db", path, *extra])
        assert r.exit_code == 0, r.output
        return r.output.splitlines()[0]

    assert check(real) == "ASK_NORMALLY"
    assert check(real, "--include-synthetic") == "AUTO_DECIDE"
    assert check(demo) == "AUTO_DECIDE"
    assert run_check(qid, project=project, db_path=real).out[0] == "ASK_NORMALLY"
    assert (
        run_check(qid, project=project, db_path=real, include_synthetic=True).out[0]
        == "AUTO_DECIDE"
    )

    # a synthetic calibration ranks in the demo database only
    for path in (demo, real):
        r = CliRunner().invoke(
            cli, ["calibrate", "--include-synthetic", "--force", "--json", "--db", path]
        )
        assert r.exit_code == 0, r.output
    for path, in_force in ((demo, True), (real, False)):
        conn = seeded_db.connect(path)
        cal_id = pacing.active_calibration(conn, "any-project")["id"]
        assert (cal_id is not None) is in_force
        conn.close()

    # status and pref list say what is simulated
    r = CliRunner().invoke(cli, ["status", "--db", demo, "--json"])
    data = json.loads(r.output)
    assert data["demo_database"] is True and data["synthetic_rows"]["question_log"] > 0
    r = CliRunner().invoke(cli, ["status", "--db", real])
    assert "Simulated rows: kept apart; no real decision uses them" in r.output
    r = CliRunner().invoke(cli, ["pref", "list", "--all", "--db", real])
    assert "simulated: never used for decisions" in r.output
    r = CliRunner().invoke(cli, ["pref", "list", "--all", "--json", "--db", real])
    assert all(row["synthetic"] is True for row in json.loads(r.output))


def test_a_real_write_over_a_simulated_row_makes_it_real(db_file):
    conn = seeded_db.connect(db_file)
    simulate.simulate(conn, days=20, seed=12, projects=3, end="2026-11-30")
    scope, qid = conn.execute(
        "SELECT p.scope, p.question_id FROM preferences p JOIN registry_questions r ON r.id = p.question_id"
        " WHERE p.synthetic = 1 AND r.door_type = 'two-way' LIMIT 1"
    ).fetchone()
    project = "elsewhere" if scope == db.GLOBAL_SCOPE else scope
    with db.transaction(conn):
        preferences.write(conn, scope, qid, "never-ask", "plan-tune")
    assert (
        conn.execute(
            "SELECT synthetic FROM preferences WHERE scope = ? AND question_id = ?", (scope, qid)
        ).fetchone()[0]
        == 0
    )
    assert preferences.check(conn, project, qid).decision == "AUTO_DECIDE"
    dim = conn.execute(
        "SELECT dimension FROM declared_profile WHERE synthetic = 1 LIMIT 1"
    ).fetchone()[0]
    assert dim not in profile.declared(conn)
    with db.transaction(conn):
        profile.set_declared(conn, {dim: 0.5}, source="plantune")
    assert profile.declared(conn)[dim] == 0.5


def test_demo_marking_refuses_real_history(db_file, tmp_path):
    conn = seeded_db.connect(db_file)
    with db.transaction(conn):
        preferences.write(conn, "real-app", two_way_ids(conn)[0], "never-ask", "plan-tune")
    conn.close()
    r = CliRunner().invoke(cli, ["init", "--demo", "--db", db_file])
    assert r.exit_code == 1
    assert "holds real history (1 in preferences, 1 in preference_events)" in r.output
    conn = seeded_db.connect(db_file)
    assert not db.is_demo(conn)
    conn.close()
    r = CliRunner().invoke(cli, ["simulate", "--new-db", "--db", db_file, "--days", "2"])
    assert r.exit_code == 1 and "already exists" in r.output
    fresh = str(tmp_path / "fresh.db")
    r = CliRunner().invoke(cli, ["init", "--demo", "--db", fresh])
    assert r.exit_code == 0 and "Marked as a demo database" in r.output


@pytest.mark.parametrize("flag", ["--include-synthetic"])
def test_check_help_documents_the_opt_in(flag):
    r = CliRunner().invoke(cli, ["check", "--help"])
    assert flag in r.output and "demo database" in r.output
