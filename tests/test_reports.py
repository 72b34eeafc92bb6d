"""`plantune report interruptions` and `plantune report first-run` on hand-made histories
whose answers are known, and the views that feed Datasette the same numbers."""

import json
import os

import pytest
from click.testing import CliRunner

from toolkit.cli.app import cli
from toolkit.core import questions, seeded_db
from toolkit.store import db


def run(*args):
    return CliRunner().invoke(cli, list(args))


class History:
    """Question-log events written the way `plantune log` writes them, at chosen times."""

    def __init__(self, conn):
        self.conn = conn
        self.minute = 0

    def ask(self, project, session, qid, phase="eng", source="agent", door=None, developer=None):
        self.minute += 1
        record = {
            "skill": "plan-eng-review",
            "question_id": qid,
            "question_summary": f"{qid.replace('-', ' ')} for the plan",
            "user_choice": "a",
            "recommended": "a",
            "session_id": session,
            "phase": phase,
            "source": source,
            "ts": f"2026-11-0{1 + self.minute // 1000}T{self.minute // 60 % 24:02d}:{self.minute % 60:02d}:00.000Z",
        }
        if door:
            record["door_type"] = door
        record = questions.validate_event(record, allow_phase=True)
        with db.transaction(self.conn):
            questions.record_event(self.conn, record, project)
        if developer is not None:
            with db.transaction(self.conn):
                self.conn.execute(
                    "UPDATE question_log SET developer = ? WHERE id = (SELECT max(id) FROM question_log)",
                    (developer,),
                )


def calibration(conn, threshold, project=db.GLOBAL_SCOPE):
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO calibrations (project, created_at, target, threshold, tie_fraction,"
            " score_function, n_findings, n_sessions) VALUES (?, ?, 0.2, ?, 1.0, 'additive', 100, 10)",
            (project, db.utc_now(), threshold),
        )


@pytest.fixture
def conn(db_file):
    c = seeded_db.connect(db_file)
    yield c
    c.close()


ONE_WAY = "plan-eng-review-arch-finding"  # one-way in the registry
TWO_WAY = "plan-eng-review-test-gap"


def fill_sessions(h):
    # Session a: eng has 1 one-way, 1 gate, 5 two-way; design has 2 two-way; 1 auto-decided.
    h.ask("acme", "a", ONE_WAY)
    h.ask("acme", "a", "preamble-telemetry-consent")
    for k in range(5):
        h.ask("acme", "a", f"{TWO_WAY}-{k}", door="two-way")
    for k in range(2):
        h.ask("acme", "a", f"plan-design-review-fix-{k}", phase="design", door="two-way")
    h.ask("acme", "a", f"{TWO_WAY}-9", source="auto-decided", door="two-way")
    # Session b: two two-way questions in one phase.
    for k in range(2):
        h.ask("acme", "b", f"qa-tier-{k}", phase="other", door="two-way")


def sessions_of(out):
    return {s["session_id"]: s for s in out["sessions"]}


def test_interruptions_when_every_two_way_question_reaches_the_threshold(conn):
    h = History(conn)
    fill_sessions(h)
    calibration(conn, 0.0)  # score >= 0: every two-way question is eligible
    r = run("report", "interruptions", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    s = sessions_of(out)
    # a: logged 9 (auto-decided not asked); paced = 1 one-way + 1 gate + 3 (eng cap) + 2 (design)
    assert {k: s["a"][k] for k in ("logged", "one_way", "paced", "silent")} == {
        "logged": 9,
        "one_way": 1,
        "paced": 7,
        "silent": 2,
    }
    assert s["a"]["non_trivial"] is True and s["b"]["non_trivial"] is False
    assert {k: s["b"][k] for k in ("logged", "one_way", "paced")} == {
        "logged": 2,
        "one_way": 0,
        "paced": 2,
    }
    assert out["median_ratio"] == pytest.approx((7 / 9 + 1.0) / 2)
    assert out["meets_design"] is False and out["design_ratio"] == 0.5
    assert out["median_silent_non_trivial"] == 2
    # the view reads the same numbers
    rows = {
        r["session_id"]: dict(r)
        for r in conn.execute("SELECT * FROM session_pacing ORDER BY session_id")
    }
    assert (rows["a"]["logged"], rows["a"]["one_way"], rows["a"]["paced"]) == (9, 1, 7)
    assert rows["a"]["within_design"] == 0 and rows["a"]["paced_ratio"] == round(7 / 9, 3)


def test_interruptions_when_no_two_way_question_does(conn):
    h = History(conn)
    fill_sessions(h)
    calibration(conn, 99.0)
    out = json.loads(run("report", "interruptions", "--json").stdout)
    s = sessions_of(out)
    assert (s["a"]["paced"], s["b"]["paced"]) == (2, 0)  # one-way and gate only
    assert out["median_ratio"] == pytest.approx((2 / 9 + 0) / 2)
    assert out["meets_design"] is True
    words = run("report", "interruptions").output
    assert "2 sessions: 11 questions logged, 2 with pacing" in words
    assert "within the design's 50%" in words
    assert "Silent Decisions per non-trivial session (median over 1 session): N = 7." in words


def test_chain_budget_limits_what_pacing_would_ask(conn):
    h = History(conn)
    fill_sessions(h)
    calibration(conn, 0.0)
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO pacing_chains (project, chain_id, budget, created_at, updated_at)"
            " VALUES ('acme', 'a', 2, ?, ?)",
            (db.utc_now(), db.utc_now()),
        )
    out = json.loads(run("report", "interruptions", "--project", "acme", "--json").stdout)
    # eng spends the whole budget of 2; design has nothing left; one-way and gate still asked
    assert sessions_of(out)["a"]["paced"] == 1 + 1 + 2


def test_interruptions_bad_input_and_empty_history(db_file, conn):
    r = run("report", "interruptions", "--since", "yesterday")
    assert r.exit_code == 1
    assert r.output.strip() == "Error: --since must be a date like 2026-01-31, got 'yesterday'"
    r = run("report", "interruptions", "--project", "no such")
    assert r.exit_code == 1 and "--project must be a project slug" in r.output
    r = run("report", "interruptions")
    assert r.exit_code == 1
    assert r.output.strip() == "Error: no answered questions in the question log"


def test_first_run_counts_meta_prompts_before_the_first_skill_question(conn):
    h = History(conn)
    # web: lake intro, telemetry, proactive, routing before the first skill question (V1's 4)
    for qid in (
        "preamble-completeness-intro",
        "preamble-telemetry-consent",
        "preamble-proactive-behavior",
        "preamble-routing-injection",
    ):
        h.ask("web", "s1", qid, phase="other")
    h.ask("web", "s1", TWO_WAY, door="two-way")
    h.ask("web", "s2", "gstack-upgrade-inline", phase="other")  # after: not counted
    # api: one meta-prompt, and an auto-decided one that was never shown
    h.ask("api", "t1", "preamble-telemetry-consent", phase="other", source="auto-decided")
    h.ask("api", "t1", "plan-tune-enable-setup", phase="other")
    h.ask("api", "t1", ONE_WAY)
    # cli: no real question yet
    h.ask("cli", "u1", "preamble-completeness-intro", phase="other")
    r = run("report", "first-run", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    got = {p["project"]: p["meta_prompts_before_first_skill"] for p in out["projects"]}
    assert got == {"web": 4, "api": 1, "cli": 1}
    web = next(p for p in out["projects"] if p["project"] == "web")
    assert web["meta_prompts_total"] == 5 and web["within_design"] is False
    assert web["meta_prompts"].split(",")[0] == "preamble-completeness-intro"
    assert out["design_max"] == 1 and out["within_design"] == 2
    words = run("report", "first-run").output
    assert "web: 4 before the first skill question" in words
    assert "cli: 1 before the first skill question (no real skill question yet)" in words
    assert "2 of 3 projects within the design's 1." in words


def test_first_run_per_developer_on_a_team_database(conn):
    h = History(conn)
    h.ask("web", "s1", "preamble-telemetry-consent", phase="other", developer="ann@x")
    h.ask("web", "s1", TWO_WAY, door="two-way", developer="ann@x")
    h.ask("web", "s2", "preamble-telemetry-consent", phase="other", developer="bo@x")
    h.ask("web", "s2", "preamble-routing-injection", phase="other", developer="bo@x")
    h.ask("web", "s2", TWO_WAY, door="two-way", developer="bo@x")
    out = json.loads(run("report", "first-run", "--json").stdout)
    got = {p["developer"]: p["meta_prompts_before_first_skill"] for p in out["projects"]}
    assert got == {"ann@x": 1, "bo@x": 2} and out["team"] is True
    assert "web (bo@x): 2 before" in run("report", "first-run").output


def test_the_view_and_pacing_share_one_list_of_meta_prompts():
    from toolkit.core import vocabulary
    from toolkit.store import resources

    with open(
        os.path.join(resources.path("sql"), "views", "first_run_meta_prompts.sql"), encoding="utf-8"
    ) as f:
        sql = f.read()
    assert f"LIKE '{vocabulary.META_PROMPT_PREFIX}%'" in sql
    for qid in vocabulary.META_PROMPT_IDS:
        assert f"'{qid}'" in sql
