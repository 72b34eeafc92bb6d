"""Calibrating from the question log: the scorer, the fit, out-of-time validation, --explain.

Histories are generated in gstack's own file format by two generators of different shapes
(tests/gstack_history.py) and ingested with `plantune ingest`, exactly like a real state root.
"""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from tests.helpers import gstack_history as gh
from toolkit.analysis import question_scores as qs
from toolkit.analysis import sources as analysis_sources
from toolkit.cli.app import cli
from toolkit.core import seeded_db
from toolkit.gstack.history import ingest_state_root

GENERATORS = {
    "registry": lambda root: gh.registry_history(root, days=150, seed=3, sessions_per_day=9.0),
    "adhoc": lambda root: gh.adhoc_history(root, days=150, seed=4),
}


def _history_db(root, make):
    make(root)
    conn = seeded_db.connect(str(root / "plantune.db"))
    ingest_state_root(conn, str(root))
    return conn


@pytest.fixture(scope="module", params=sorted(GENERATORS))
def history(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(request.param)
    conn = _history_db(root, GENERATORS[request.param])
    yield conn
    conn.close()


# --------------------------------------------------------------------------- acceptance


def test_fit_holdout_and_recall_on_generated_histories(history):
    report = analysis_sources.run_question_log(history, holdout_days=30, resamples=200)
    assert report["source"] == "question-log"
    assert abs(report["achieved_rate"] - 0.20) <= 0.02
    assert report["ci_low"] <= report["achieved_rate"] <= report["ci_high"]
    assert report["override_recall"] >= 2 * report["random_recall"]
    held = report["holdout"]
    assert held["n_findings"] > 300
    assert abs(held["achieved_rate"] - 0.20) <= 0.04
    assert held["override_recall"] >= 2 * 0.20
    # The fit never saw the held-out days.
    assert report["window_end"][:10] <= held["after"]
    # Interruptions drop once two-way questions are paced.
    inter = report["interruptions"]
    assert inter["per_session"]["after"] < inter["per_session"]["before"]
    assert set(inter["per_phase"]) >= {"ceo", "eng"}


def test_fit_set_is_answered_two_way_real_questions_only(history):
    ev = qs.load_events(history)
    expected = int(np.count_nonzero(ev["answered"] & (ev["door"] == "two-way")))
    report = analysis_sources.run_question_log(history, resamples=50)
    assert report["n_findings"] == expected
    sources = {r[0] for r in history.execute("SELECT DISTINCT source FROM question_log")}
    assert "auto-decided" in sources  # the generators log auto-decisions; none of them is fitted
    n_auto = history.execute(
        "SELECT count(*) FROM question_log WHERE source = 'auto-decided'"
    ).fetchone()[0]
    n_one_way = int(np.count_nonzero(ev["answered"] & (ev["door"] == "one-way")))
    assert n_auto > 0 and n_one_way > 0
    assert report["n_findings"] < ev["n"] - n_auto - n_one_way + 1


def test_own_answer_never_moves_own_factors(history):
    """No label leak: flipping an answer leaves that event's estimate and factors as they were."""
    ev = qs.load_events(history)
    fitted = ev["answered"] & (ev["door"] == "two-way")
    before = qs.score_events(ev, ev["labelled"], fitted, 0.2)
    for i in np.flatnonzero(fitted & ev["labelled"])[::97][:12]:
        ev2 = dict(ev)
        ev2["overridden"] = ev["overridden"].copy()
        ev2["overridden"][i] = not ev["overridden"][i]
        after = qs.score_events(ev2, ev2["labelled"], fitted, 0.2, cuts=before.matters_cuts)
        assert after.override_estimate[i] == before.override_estimate[i]
        assert after.decision_matters[i] == before.decision_matters[i]
        # ... while it is evidence for other sessions' events.
        assert not np.array_equal(before.override_estimate, after.override_estimate)


def test_holdout_answers_are_not_evidence(history):
    """Changing held-out answers changes nothing in the fit."""
    report = analysis_sources.run_question_log(history, holdout_days=30, resamples=50, seed=1)
    cut = report["holdout"]["after"]
    saved = history.execute(
        "SELECT id, followed_recommendation FROM question_log WHERE substr(ts, 1, 10) > ?", (cut,)
    ).fetchall()
    try:
        history.execute(
            "UPDATE question_log SET followed_recommendation = 0"
            " WHERE substr(ts, 1, 10) > ? AND followed_recommendation IS NOT NULL",
            (cut,),
        )
        again = analysis_sources.run_question_log(history, holdout_days=30, resamples=50, seed=1)
    finally:
        history.executemany(
            "UPDATE question_log SET followed_recommendation = ? WHERE id = ?",
            [(f, i) for i, f in saved],
        )
    for key in ("threshold", "tie_fraction", "weights", "achieved_rate", "matters_cuts"):
        assert again[key] == report[key]
    assert again["holdout"]["achieved_rate"] == report["holdout"]["achieved_rate"]


# --------------------------------------------------------------------------- scorer rules


def test_door_of_takes_the_safe_side():
    assert qs.door_of("two-way", "one-way", "keyword:/\\bdelete\\b/i", None) == (
        "one-way",
        "keyword",
    )
    assert qs.door_of("one-way", "two-way", "default-two-way", None) == ("one-way", "caller")
    assert qs.door_of(None, "two-way", "default-two-way", "one-way") == ("one-way", "registry")
    assert qs.door_of(None, "two-way", "registry", "two-way") == ("two-way", "registry")
    assert qs.door_of(None, None, None, None) == ("two-way", "unclassified")
    assert qs.door_of("two-way", "two-way", "registry", "two-way", "classifier") == (
        "one-way",
        "recorded",
    )


def test_any_spelling_of_an_id_is_one_question_and_recorded_one_way_facts_stick(conn):
    from toolkit.core import questions

    def log(qid, summary, followed, door_type=None, sid="s1"):
        rec = {
            "skill": "review",
            "question_id": qid,
            "question_summary": summary,
            "user_choice": "a",
            "recommended": "a" if followed else "b",
            "session_id": sid,
        }
        if door_type:
            rec["door_type"] = door_type
        questions.record_event(conn, questions.validate_event(rec), "proj")

    log("plan-ceo-review-mode", "Which review mode", True)
    # An odd spelling of a registered id still gets its registry category and phase.
    conn.execute("UPDATE question_log SET question_id = 'PLAN_CEO_REVIEW-MODE'")
    log("review-cache-ttl", "Cache TTL", False, sid="s2")
    log("review-cache-ttl", "Cache TTL again", True, sid="s3")
    ev = qs.load_events(conn)
    assert list(ev["question_key"]) == [
        "plan-ceo-review-mode",
        "review-cache-ttl",
        "review-cache-ttl",
    ]
    assert ev["category"][0] == "routing" and ev["phase"][0] == "ceo"
    assert list(ev["door"]) == ["two-way"] * 3
    # One event said one-way: every event of that question is one-way from then on.
    log("review-cache-ttl", "Cache TTL once more", True, door_type="one-way", sid="s4")
    ev = qs.load_events(conn)
    assert list(ev["door"]) == ["two-way", "one-way", "one-way", "one-way"]
    assert set(ev["reason"][1:]) == {"recorded", "caller"}


def test_phase_comes_from_the_event_else_the_skill():
    assert qs.phase_of("dx", "plan-eng-review") == "dx"
    assert qs.phase_of("unknown", "plan-eng-review") == "eng"
    assert qs.phase_of(None, "ship") == "unknown"
    assert qs.phase_of(None, "autoplan", "plan-design-review-fix") == "design"
    assert qs.phase_of(None, "autoplan", "plan-designer-x") == "unknown"


def test_summary_features_and_factor_rules():
    assert qs.summary_features("Deploy the fix to production now") == ("production", "Deploy")
    assert qs.summary_features("Reword the tooltip") == (None, None)
    rows = [
        (
            1,
            "k1",
            "p",
            "2026-11-01T10:00:00Z",
            "s1",
            "ship",
            "ship-a",
            "Publish to production",
            "approval",
            "two-way",
            "two-way",
            "registry",
            "two-way",
            "unknown",
            3,
            "agent",
            1,
            0,
        ),
        (
            2,
            "k2",
            "p",
            "2026-11-01T10:01:00Z",
            "s1",
            "qa",
            "qa-b",
            "Reword the tooltip",
            "clarification",
            None,
            "two-way",
            "default-two-way",
            None,
            "unknown",
            2,
            "agent",
            0,
            0,
        ),
        (
            3,
            "k3",
            "p",
            "2026-11-01T10:02:00Z",
            "s1",
            "qa",
            "qa-c",
            "Pick a colour",
            None,
            "one-way",
            "two-way",
            "default-two-way",
            None,
            "unknown",
            5,
            "hook",
            None,
            0,
        ),
    ]
    ev = qs.events_from_rows(rows)
    s = qs.score_events(ev, ev["labelled"], ev["answered"], 0.2)
    assert list(s.severity) == [2, 0, 1]  # stakes category + stakes word; nothing; five options
    assert list(s.irreversibility) == [1, 0, 2]  # lasting step; nothing; one-way door
    assert list(ev["labelled"]) == [True, True, False]


# --------------------------------------------------------------------------- the command


@pytest.fixture
def gstack_db(db_file, state_root):
    gh.registry_history(state_root, days=60, seed=5)
    r = CliRunner().invoke(cli, ["ingest", str(state_root)])
    assert r.exit_code == 0, r.output
    conn = seeded_db.connect(db_file)
    yield conn
    conn.close()


def test_auto_source_uses_the_question_log_without_findings_and_stores_it(gstack_db):
    r = CliRunner().invoke(cli, ["calibrate", "--holdout-days", "10"])
    assert r.exit_code == 0, r.output
    assert "Source: question-log (auto: no findings recorded yet" in r.output
    assert "answered two-way questions" in r.output
    assert "x random)" in r.output and "Held out the last 10 days" in r.output
    row = gstack_db.execute(
        "SELECT source, score_function, n_findings FROM calibrations"
    ).fetchone()
    assert row[0] == "question-log" and row[2] > 0


def test_question_log_calibration_drives_pacing_rank(gstack_db):
    r = CliRunner().invoke(cli, ["calibrate", "--source", "question-log", "--json"])
    assert r.exit_code == 0, r.output
    fit = json.loads(r.stdout)
    assert fit["source"] == "question-log"
    findings = [
        {
            "id": f"f-{dm}-{i}",
            "summary": f"finding {i}",
            "severity": 1,
            "irreversibility": 0,
            "decision_matters": dm,
            "door_type": "two-way",
            "recommended": "a",
            "options": ["a", "b"],
        }
        for dm in (0, 2)
        for i in range(2)
    ]
    payload = json.dumps({"session_id": "s-ql", "phase": "eng", "findings": findings})
    r = CliRunner().invoke(cli, ["pacing", "rank"], input=payload)
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["calibration_id"] == fit["calibration_id"]
    surfaced = {f["id"] for f in out["surface"]}
    # decision_matters carries the weight the question log gave it: only those findings surface.
    assert surfaced and all(i.startswith("f-2-") for i in surfaced)


def test_findings_source_keeps_the_findings_error(gstack_db):
    r = CliRunner().invoke(cli, ["calibrate", "--source", "findings"])
    assert r.exit_code == 1
    assert r.stderr.strip() == "Error: no two-way findings to calibrate on"


def test_explain_shows_factors_and_evidence(gstack_db):
    r = CliRunner().invoke(cli, ["calibrate", "--explain", "plan-ceo-review-mode"])
    assert r.exit_code == 0, r.output
    assert "severity = " in r.output and "decision matters = " in r.output
    assert "Override evidence from other sessions" in r.output and "  question: " in r.output
    r = CliRunner().invoke(cli, ["calibrate", "--explain", "plan-ceo-review-mode", "--json"])
    info = json.loads(r.stdout)
    assert info["question_id"] == "plan-ceo-review-mode" and info["phase"] == "ceo"
    assert [e["level"] for e in info["evidence"]][-1] == "question"
    assert gstack_db.execute("SELECT count(*) FROM calibrations").fetchone()[0] == 0


@pytest.mark.parametrize(
    "args,message",
    [
        (["--explain", "no-such-question"], "no logged question with id 'no-such-question'"),
        (["--holdout-days", "0"], "--holdout-days must be between 1 and 3650, got 0"),
        (["--holdout-days", "soon"], "--holdout-days must be a whole number, got 'soon'"),
        (
            ["--holdout-days", "3000"],
            "the whole history is within the last 3000 days: choose a smaller --holdout-days",
        ),
        (["--source", "tea-leaves"], None),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(gstack_db, args, message):
    r = CliRunner().invoke(cli, ["calibrate"] + args)
    assert r.exit_code != 0
    if message:
        assert r.stderr.strip() == f"Error: {message}"
    assert gstack_db.execute("SELECT count(*) FROM calibrations").fetchone()[0] == 0


def test_synthetic_questions_are_not_fitted(gstack_db):
    n = gstack_db.execute("SELECT count(*) FROM question_log").fetchone()[0]
    gstack_db.execute("UPDATE question_log SET synthetic = 1")
    r = CliRunner().invoke(cli, ["calibrate", "--source", "question-log"])
    assert r.exit_code == 1
    assert "no answered two-way questions in the question log" in r.stderr
    r = CliRunner().invoke(
        cli, ["calibrate", "--source", "question-log", "--include-synthetic", "--json"]
    )
    assert r.exit_code == 0 and json.loads(r.stdout)["n_findings"] < n


def test_findings_source_takes_a_holdout_too(db_file):
    from toolkit.analysis import simulate

    conn = seeded_db.connect(db_file)
    simulate.simulate(conn, days=40, seed=3, projects=2, end="2026-11-30")
    r = CliRunner().invoke(
        cli, ["calibrate", "--include-synthetic", "--holdout-days", "10", "--json"]
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["source"] == "findings" and out["window_end"][:10] <= "2026-11-20"
    held = out["holdout"]
    assert held["after"] == "2026-11-20" and held["n_findings"] > 0
    assert 0.0 <= held["achieved_rate"] <= 1.0 and held["ci_low"] <= held["ci_high"]
    row = conn.execute(
        "SELECT source FROM calibrations WHERE id = ?", (out["calibration_id"],)
    ).fetchone()
    assert row[0] == "findings"
