"""Calibration guards and management: the ±5 point guard, --force, synthetic fits, and
`plantune calibrations list/show/diff/use` with their events and calibration_history."""

import json

import pytest
from click.testing import CliRunner

from toolkit.analysis import simulate
from toolkit.cli.app import cli
from toolkit.core import seeded_db
from toolkit.pacing import rank as pacing
from toolkit.store import db


def run(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input)


def counts(conn):
    return (
        conn.execute("SELECT count(*) FROM calibrations").fetchone()[0],
        conn.execute("SELECT count(*) FROM calibration_events").fetchone()[0],
    )


def make_real(conn):
    """Turn the simulated history into real history (what an imported log would be)."""
    with db.transaction(conn):
        for table in (
            "question_log",
            "findings",
            "preferences",
            "preference_events",
            "declared_profile",
        ):
            conn.execute(f"UPDATE {table} SET synthetic = 0")


def _real_history(db_file, days, projects):
    conn = seeded_db.connect(db_file)
    simulate.simulate(
        conn, days=days, seed=4 if days > 2 else 1, projects=projects, end="2026-11-30"
    )
    make_real(conn)
    return conn


@pytest.fixture
def real_history(db_file):
    conn = _real_history(db_file, 120, 3)
    yield conn
    conn.close()


@pytest.fixture
def tiny_history(db_file):
    """Two days of one project: far too few sessions for the guard."""
    conn = _real_history(db_file, 2, 1)
    yield conn
    conn.close()


def test_too_little_data_is_refused_with_how_much_more_is_needed(tiny_history):
    r = run("calibrate")
    assert r.exit_code == 1
    err = r.output.splitlines()[-1]
    assert err.startswith(
        "Error: not stored: a calibration needs at least 10 sessions and 100 two-way findings; "
    )
    assert "more sessions" in err and "--force" in err
    assert counts(tiny_history) == (0, 0)
    # --json still reports the fit and the guard, and stores nothing
    r = run("calibrate", "--json")
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    assert out["confidence"]["ok"] is False and out["confidence"]["sessions_needed"] > 0
    assert out["calibration_id"] is None and counts(tiny_history) == (0, 0)
    # a dry run warns but is not an error
    r = run("calibrate", "--dry-run")
    assert (
        r.exit_code == 0
        and "Warning: a calibration needs at least 10 sessions" in r.output
        and counts(tiny_history) == (0, 0)
    )


def test_one_session_is_never_enough_and_a_zero_width_interval_is_not_narrow(db_file):
    """A fresh root, one ranked phase with two findings: the fit's interval is 0.0% to
    0.0% (one session resampled), which is degenerate, not narrow; calibrate refuses,
    says how much more it needs, and the next ranking still uses the default rule."""
    request = {
        "session_id": "only-one",
        "phase": "eng",
        "findings": [
            {
                "id": f"eng-gap-{k}",
                "summary": f"no test covers path {k}",
                "severity": 1,
                "irreversibility": 0,
                "decision_matters": 1,
                "door_type": "two-way",
                "recommended": "add-test",
                "options": ["add-test", "skip"],
            }
            for k in range(2)
        ],
    }
    assert run("pacing", "rank", input=json.dumps(request)).exit_code == 0
    conn = seeded_db.connect(db_file)
    r = run("calibrate", "--json")
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    check = out["confidence"]
    assert check["ok"] is False and check["degenerate"] is True
    assert (check["min_sessions"], check["min_decisions"]) == (10, 100)
    assert check["sessions_needed"] >= 9 and check["findings_needed"] >= 98
    err = r.stderr.strip().splitlines()[-1] if r.stderr else r.output.splitlines()[-1]
    assert "a calibration needs at least 10 sessions and 100 two-way findings" in err
    assert "which is degenerate, not narrow" in err
    assert "fitted on 2 two-way findings from 1 session." in err
    assert counts(conn) == (0, 0)
    assert pacing.active_calibration(conn, "any-project")["id"] is None
    # --force stores it, marked low_confidence
    r = run("calibrate", "--force", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["low_confidence"] is True
    conn.close()


def test_force_stores_it_marked_low_confidence_and_pacing_uses_it(tiny_history):
    r = run("calibrate", "--force", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    row = tiny_history.execute(
        "SELECT low_confidence, synthetic FROM calibrations WHERE id = ?", (out["calibration_id"],)
    ).fetchone()
    assert tuple(row) == (1, 0)
    cal = pacing.active_calibration(tiny_history, "any-project")
    assert cal["id"] == out["calibration_id"] and cal["in_force"]["low_confidence"] is True
    event = tiny_history.execute("SELECT event_type, detail FROM calibration_history").fetchone()
    assert event["event_type"] == "fitted" and "--force" in event["detail"]


def test_enough_data_is_stored_without_force(real_history):
    r = run("calibrate", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["confidence"]["ok"] is True and out["ci_high"] - out["ci_low"] < 0.10
    assert out["low_confidence"] is False and out["synthetic"] is False


def test_a_fit_on_simulated_findings_is_synthetic_and_never_ranks_real_findings(db_file):
    conn = seeded_db.connect(db_file)
    simulate.simulate(conn, days=120, seed=4, projects=3, end="2026-11-30")
    r = run("calibrate", "--include-synthetic")
    assert r.exit_code == 0, r.output
    assert "marked synthetic" in r.output and "never ranks real findings" in r.output
    assert conn.execute("SELECT synthetic FROM calibrations").fetchone()[0] == 1
    assert pacing.active_calibration(conn, "acme-storefront")["id"] is None
    request = {
        "session_id": "real-1",
        "chain_id": "c",
        "phase": "eng",
        "findings": [
            {
                "id": "eng-x",
                "summary": "x",
                "severity": 1,
                "irreversibility": 1,
                "decision_matters": 1,
                "recommended": "a",
                "options": ["a", "b"],
            }
        ],
    }
    r = run("pacing", "rank", input=json.dumps(request))
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["calibration_id"] is None
    # and it cannot be pinned outside a demo database
    cid = conn.execute("SELECT id FROM calibrations").fetchone()[0]
    r = run("calibrations", "use", str(cid))
    assert r.exit_code == 1 and "fitted on simulated findings" in r.output
    assert conn.execute("SELECT count(*) FROM calibration_pins").fetchone()[0] == 0


def test_list_show_diff_use_and_history(real_history):
    conn = real_history
    first = json.loads(run("calibrate", "--json", "--target", "0.30").stdout)["calibration_id"]
    second = json.loads(run("calibrate", "--json", "--target", "0.10").stdout)["calibration_id"]
    own = json.loads(run("calibrate", "--json", "--project", "acme-storefront", "--force").stdout)
    assert first and second and own["calibration_id"]

    rows = json.loads(run("calibrations", "list", "--json").stdout)
    by_id = {r["id"]: r for r in rows}
    assert [r["id"] for r in rows][:2] == [own["calibration_id"], second]
    assert by_id[second]["active"] and not by_id[first]["active"]
    assert set(rows[0]) >= {
        "id",
        "scope",
        "source",
        "created_at",
        "n_findings",
        "n_sessions",
        "threshold",
        "tie_fraction",
        "achieved_rate",
        "ci_low",
        "ci_high",
        "override_recall",
        "synthetic",
        "low_confidence",
        "active",
        "pinned",
    }
    assert {r["source"] for r in rows} == {"findings"}
    text = run("calibrations", "list").output
    assert text.splitlines()[0].split()[:3] == ["id", "scope", "source"] and "active" in text

    shown = run("calibrations", "show", str(first))
    assert shown.exit_code == 0 and f"Calibration {first} for __global__" in shown.output
    assert "Share asked:" in shown.output

    diff = run("calibrations", "diff", str(first), str(second))
    assert diff.exit_code == 0, diff.output
    assert f"calibration {first}" in diff.output and "questions per session" in diff.output
    data = json.loads(run("calibrations", "diff", str(first), str(second), "--json").stdout)
    a, b = data["applied"]["a"], data["applied"]["b"]
    assert a["share_asked"] > b["share_asked"]
    assert a["interruptions"]["per_session"]["after"] >= b["interruptions"]["per_session"]["after"]
    assert set(a["interruptions"]["per_phase"]) == set(b["interruptions"]["per_phase"])

    # pin the older global one: pacing rank reports it, other scopes are not touched
    r = run("calibrations", "use", str(first))
    assert r.exit_code == 0 and f"Pinned calibration {first} for __global__" in r.output
    cal = pacing.active_calibration(conn, "river-mobile")
    assert cal["id"] == first and cal["in_force"]["pinned"] is True
    assert pacing.active_calibration(conn, "acme-storefront")["id"] == own["calibration_id"]
    request = {
        "session_id": "pinned-1",
        "chain_id": "c",
        "phase": "eng",
        "findings": [
            {
                "id": "eng-x",
                "summary": "x",
                "severity": 1,
                "irreversibility": 1,
                "decision_matters": 1,
                "recommended": "a",
                "options": ["a", "b"],
            }
        ],
    }
    out = json.loads(run("pacing", "rank", input=json.dumps(request)).stdout)
    assert out["calibration_id"] == first and out["calibration"]["pinned"] is True
    # a newer fit does not move a pinned scope
    newer = json.loads(run("calibrate", "--json", "--target", "0.2").stdout)["calibration_id"]
    assert pacing.active_calibration(conn, "river-mobile")["id"] == first
    r = run("calibrations", "use", "--latest")
    assert r.exit_code == 0 and f"Unpinned calibration {first}" in r.output
    assert pacing.active_calibration(conn, "river-mobile")["id"] == newer

    history = [
        dict(r)
        for r in conn.execute(
            "SELECT event_type, scope, calibration_id, previous_id FROM calibration_history ORDER BY id"
        )
    ]
    assert [h["event_type"] for h in history] == [
        "fitted",
        "fitted",
        "fitted",
        "pinned",
        "fitted",
        "unpinned",
    ]
    assert history[3] == {
        "event_type": "pinned",
        "scope": "__global__",
        "calibration_id": first,
        "previous_id": second,
    }
    assert history[5] == {
        "event_type": "unpinned",
        "scope": "__global__",
        "calibration_id": newer,
        "previous_id": first,
    }


@pytest.mark.parametrize(
    "args, message",
    [
        (["use"], "give a calibration ID to pin, or --latest"),
        (["use", "1", "--latest"], "give a calibration ID to pin, or --latest"),
        (["use", "abc"], "ID must be a calibration id"),
        (["use", "999"], "no calibration with id 999"),
        (["use", "1", "--project", "x"], "--project goes with --latest"),
        (["show", "0"], "ID must be a calibration id"),
        (["show", "42"], "no calibration with id 42"),
        (["diff", "1", "x"], "B must be a calibration id"),
        (["diff", "1", "2", "--days", "0"], "--days must be a whole number"),
    ],
)
def test_bad_input_is_one_line_exit_1_and_writes_nothing(db_file, args, message):
    conn = seeded_db.connect(db_file)
    r = run("calibrations", *args)
    assert r.exit_code == 1, r.output
    assert r.output.count("\n") == 1 and message in r.output
    assert (
        counts(conn) == (0, 0)
        and conn.execute("SELECT count(*) FROM calibration_pins").fetchone()[0] == 0
    )


def test_unpinning_nothing_says_so(db_file):
    r = run("calibrations", "use", "--latest", "--project", "acme-web")
    assert r.exit_code == 0 and "Nothing was pinned for acme-web." in r.output
    assert "the default rule" in r.output
