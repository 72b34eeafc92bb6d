import json
import re

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.analysis import calibrate as cal
from toolkit.analysis import fit as analysis_fit
from toolkit.analysis import simulate
from toolkit.cli.app import cli
from toolkit.core import scoring, seeded_db
from toolkit.store import db

END = "2026-11-30"


def ids_for(n, prefix="f"):
    return [f"{prefix}-{i}" for i in range(n)]


def python_mask(scores, ids, threshold, fraction):
    return np.array(
        [scoring.reaches_threshold(s, i, threshold, fraction) for s, i in zip(scores, ids)]
    )


# --------------------------------------------------------------------------- fit_threshold


def test_two_distinct_values_split_exactly_without_ties():
    scores = [3] * 80 + [5] * 20
    fit = analysis_fit.fit_threshold(scores, 0.20, ids=ids_for(100))
    assert (fit.threshold, fit.tie_fraction, fit.achieved_rate) == (5.0, 1.0, 0.20)
    assert (fit.n_above, fit.n_ties, fit.n_tie_surfaced) == (0, 20, 20)


def test_two_distinct_values_with_a_tie_at_the_threshold():
    scores = np.array([2] * 60 + [4] * 40)
    ids = ids_for(100)
    fit = analysis_fit.fit_threshold(scores, 0.25, ids=ids)
    assert fit.threshold == 4.0
    assert fit.n_tie_surfaced == 25 and fit.achieved_rate == 0.25
    assert 0 < fit.tie_fraction < 1
    # The fraction is exactly the hot-path rule: the same 25 findings surface there.
    assert python_mask(scores, ids, fit.threshold, fit.tie_fraction).sum() == 25


def test_all_equal_scores_are_split_by_the_tie_fraction():
    ids = ids_for(1000)
    fit = analysis_fit.fit_threshold([3] * 1000, 0.20, ids=ids)
    assert fit.threshold == 3.0 and fit.n_ties == 1000 and fit.n_above == 0
    assert fit.achieved_rate == 0.2
    assert abs(fit.tie_fraction - 0.2) < 0.02  # hashes are uniform, so the fraction sits near k/m
    assert python_mask([3] * 1000, ids, 3, fit.tie_fraction).sum() == 200


def test_without_ids_the_fraction_is_the_ideal_share_of_ties():
    fit = analysis_fit.fit_threshold([1, 2, 2, 2, 2], 0.4)
    assert (fit.threshold, fit.tie_fraction, fit.achieved_rate) == (2.0, 0.5, 0.4)


def test_target_zero_surfaces_nothing_and_one_surfaces_everything():
    scores = [0, 1, 1, 2, 6, 6]
    ids = ids_for(6)
    zero = analysis_fit.fit_threshold(scores, 0.0, ids=ids)
    assert (zero.threshold, zero.tie_fraction, zero.achieved_rate) == (6.0, 0.0, 0.0)
    assert not python_mask(scores, ids, zero.threshold, zero.tie_fraction).any()
    one = analysis_fit.fit_threshold(scores, 1.0, ids=ids)
    assert (one.threshold, one.tie_fraction, one.achieved_rate) == (0.0, 1.0, 1.0)
    assert python_mask(scores, ids, one.threshold, one.tie_fraction).all()


def test_single_finding():
    fit = analysis_fit.fit_threshold([4], 0.2, ids=["only"])
    assert fit.achieved_rate == 0.0 and fit.n == 1
    assert analysis_fit.fit_threshold([4], 0.6, ids=["only"]).achieved_rate == 1.0


@pytest.mark.parametrize(
    "scores,target,message",
    [
        ([], 0.2, "no scores to fit: need at least one two-way finding"),
        (np.array([]), 0.2, "no scores to fit: need at least one two-way finding"),
        ([1, 2], 1.5, "target must be between 0 and 1"),
        ([1, 2], -0.1, "target must be between 0 and 1"),
        ([1, 2], "lots", "target must be a number between 0 and 1"),
        ([1, float("nan")], 0.2, "scores must be finite numbers"),
        ([1, float("inf")], 0.2, "scores must be finite numbers"),
    ],
)
def test_bad_input_is_a_clear_error(scores, target, message):
    with pytest.raises(analysis_fit.CalibrationError) as e:
        analysis_fit.fit_threshold(scores, target)
    assert str(e.value) == message


def test_ids_must_match_scores():
    with pytest.raises(analysis_fit.CalibrationError, match="same length"):
        analysis_fit.fit_threshold([1, 2, 3], 0.2, ids=["a"])


def test_duplicate_ids_at_the_cut_pick_the_nearest_reachable_count():
    # Every tie has the same id, so ties surface all together or not at all.
    fit = analysis_fit.fit_threshold([1] * 10 + [2] * 4, 0.2, ids=["x"] * 10 + ["same"] * 4)
    assert fit.threshold == 2.0
    assert fit.n_tie_surfaced in (0, 4)
    assert fit.achieved_rate == fit.n_tie_surfaced / 14
    assert python_mask([2] * 4, ["same"] * 4, 2, fit.tie_fraction).sum() == fit.n_tie_surfaced


def test_weighted_scores_are_fitted_at_rounded_values():
    weights = {"severity": 0.1, "irreversibility": 0.2, "decision_matters": 0.7}
    rng = np.random.default_rng(3)
    factors = rng.integers(0, 3, size=(3, 500))
    scores = analysis_fit.score_findings(*factors, "weighted", weights)
    ids = ids_for(500, "w")
    fit = analysis_fit.fit_threshold(scores, 0.2, ids=ids)
    findings = [dict(zip(scoring.FACTORS, map(int, col))) for col in factors.T]
    expected = [
        scoring.reaches_threshold(
            scoring.score(f, "weighted", weights), i, fit.threshold, fit.tie_fraction
        )
        for f, i in zip(findings, ids)
    ]
    assert np.array_equal(
        analysis_fit.surfaced_mask(scores, fit.threshold, fit.tie_fraction, ids=ids), expected
    )
    assert sum(expected) == 100


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=300),
    st.floats(0, 1),
)
def test_fit_is_optimal_and_matches_the_hot_path_rule(scores, target):
    ids = ids_for(len(scores), "h")
    fit = analysis_fit.fit_threshold(scores, target, ids=ids)
    mask = python_mask(scores, ids, fit.threshold, fit.tie_fraction)
    assert mask.sum() == fit.n_above + fit.n_tie_surfaced
    assert fit.achieved_rate == mask.mean()
    # Unique ids make every count reachable: the error is at most half a finding.
    assert abs(mask.sum() - target * len(scores)) <= 0.5 + 1e-9
    assert np.array_equal(
        analysis_fit.surfaced_mask(scores, fit.threshold, fit.tie_fraction, ids=ids), mask
    )
    hashes = analysis_fit.tie_hashes(ids)
    assert np.array_equal(
        analysis_fit.surfaced_mask(scores, fit.threshold, fit.tie_fraction, hashes=hashes), mask
    )


def test_tie_hashes_match_scoring():
    ids = ["a", "plan-eng-review-test-gap-login-flow-00ff00", 17, "ünïcode"]
    assert analysis_fit.tie_hashes(ids).tolist() == [scoring.tie_hash(i) for i in ids]


def test_score_table_matches_scoring_for_every_combination():
    weights = {"severity": 0.3, "irreversibility": 1.7, "decision_matters": 1.0}
    for function, w in (("additive", None), ("weighted", weights)):
        table = analysis_fit.score_table(function, w)
        for s in range(3):
            for i in range(3):
                for d in range(3):
                    f = {"severity": s, "irreversibility": i, "decision_matters": d}
                    assert table[s * 9 + i * 3 + d] == scoring.score(f, function, w)
    with pytest.raises(analysis_fit.CalibrationError, match="unknown score function"):
        analysis_fit.score_table("product")
    with pytest.raises(analysis_fit.CalibrationError, match="severity must be 0, 1 or 2"):
        analysis_fit.score_findings([3], [0], [0])


def test_mask_needs_ids_for_ties():
    with pytest.raises(analysis_fit.CalibrationError, match="ids or hashes"):
        analysis_fit.surfaced_mask([4, 4], 4, 0.5)
    assert analysis_fit.surfaced_mask([4, 5], 4, 0.0).tolist() == [False, True]


# --------------------------------------------------------------------------- measures


def test_bootstrap_resamples_sessions_not_rows():
    # Every session surfaces exactly 1 of 5: any resample of sessions gives 20%.
    surfaced = np.tile([1, 0, 0, 0, 0], 40)
    sessions = np.repeat([f"s{i}" for i in range(40)], 5)
    low, high, samples = analysis_fit.bootstrap_rate(surfaced, sessions, 200, seed=1)
    assert low == high == 0.2 and samples.size == 200
    # Sessions that differ make the interval open, and it brackets the pooled rate.
    surfaced = np.concatenate([np.ones(50), np.zeros(150)])
    sessions = np.repeat([f"s{i}" for i in range(40)], 5)
    low, high, _ = analysis_fit.bootstrap_rate(surfaced, sessions, 500, seed=1)
    assert low < 0.25 < high
    assert analysis_fit.bootstrap_rate(surfaced, sessions, 500, seed=1)[:2] == (low, high)


def test_bootstrap_in_blocks_matches_sizes(monkeypatch):
    surfaced = np.random.default_rng(0).random(3000) < 0.2
    sessions = np.arange(3000) // 3
    low, high, samples = analysis_fit.bootstrap_rate(surfaced, sessions, 7000, seed=2)
    assert samples.size == 7000 and low < surfaced.mean() < high


def test_override_recall():
    assert analysis_fit.override_recall([1, 0, 1, 0], [1, 1, 0, 0]) == 0.5
    assert analysis_fit.override_recall([1, 0], [0, 0]) is None


def test_interruptions_apply_the_cap_and_always_ask_one_way_and_gates():
    # One phase: 5 eligible two-way findings, 2 ineligible, 1 one-way, 1 gate.
    sessions = ["s"] * 9
    phases = ["eng"] * 9
    one_way = [0] * 7 + [1, 0]
    gate = [0] * 8 + [1]
    eligible = [1] * 5 + [0] * 2 + [0, 0]
    out = analysis_fit.interruptions(sessions, phases, one_way, gate, eligible)
    assert out["per_phase"]["eng"] == {"phases": 1, "before": 9.0, "after": 5.0}
    # Two sessions, second with a ceo phase of 2 ineligible findings.
    out = analysis_fit.interruptions(
        sessions + ["t", "t"],
        phases + ["ceo", "ceo"],
        one_way + [0, 0],
        gate + [0, 0],
        eligible + [0, 0],
    )
    assert out["per_session"] == {"before": 5.5, "after": 2.5}
    assert list(out["per_phase"]) == ["ceo", "eng"]
    assert out["per_phase"]["ceo"] == {"phases": 1, "before": 2.0, "after": 0.0}


def test_override_rates_and_decision_matters_estimate():
    rates = analysis_fit.override_rates(
        ["a", "a", "a", "a", "b", "b", "c"], [1, 1, 0, 0, 0, 1, 1], [1, 1, 1, 1, 1, 0, 0]
    )
    assert rates[0] == {"question_id": "a", "answered": 4, "overridden": 2, "override_rate": 0.5}
    assert rates[1]["question_id"] == "b" and rates[1]["override_rate"] == 0.0
    assert [r["question_id"] for r in rates] == ["a", "b"]  # c was never answered by a person
    assert analysis_fit.decision_matters_from_override_rate(
        [0.0, 0.09, 0.1, 0.2, 0.25, 0.9]
    ).tolist() == [0, 0, 1, 1, 2, 2]


def test_fit_weights_finds_the_factor_that_drives_overrides():
    rng = np.random.default_rng(4)
    n = 4000
    sev, irr, dm = rng.integers(0, 3, size=(3, n))
    p = 1 / (1 + np.exp(-(-3 + 1.5 * dm)))
    overridden = rng.random(n) < p
    w = analysis_fit.fit_weights(sev, irr, dm, overridden)
    assert set(w) == set(scoring.FACTORS)
    assert w["decision_matters"] > 2 and w["severity"] < 0.5 and w["irreversibility"] < 0.5
    assert abs(sum(w.values()) - 3) < 0.01
    with pytest.raises(
        analysis_fit.CalibrationError, match="not enough overridden decisions to fit weights"
    ):
        analysis_fit.fit_weights(sev[:50], irr[:50], dm[:50], np.zeros(50))


# --- the fitted threshold meets its target on new data ----------------------------------


def _simulated(path, seed):
    conn = seeded_db.connect(str(path))
    simulate.simulate(conn, days=90, seed=seed, projects=3, end=END)
    return conn


def test_calibration_meets_target_on_fitting_data_and_on_a_new_simulation(tmp_path, db_file):
    fitting = _simulated(db_file, seed=1)
    r = CliRunner().invoke(cli, ["calibrate", "--include-synthetic", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    row = dict(
        fitting.execute(
            "SELECT * FROM calibrations WHERE id = ?", (out["calibration_id"],)
        ).fetchone()
    )
    assert row["project"] == db.GLOBAL_SCOPE and row["include_synthetic"] == 1
    assert abs(row["achieved_rate"] - 0.20) <= 0.01
    assert row["ci_low"] <= row["achieved_rate"] <= row["ci_high"]

    def achieved(conn):
        rows = conn.execute(
            "SELECT finding_id, severity, irreversibility, decision_matters FROM findings"
            " WHERE door_type = 'two-way' AND kind = 'finding'"
        ).fetchall()
        hits = [
            scoring.reaches_threshold(
                scoring.score(f, row["score_function"], json.loads(row["weights_json"])),
                f["finding_id"],
                row["threshold"],
                row["tie_fraction"],
            )
            for f in rows
        ]
        return sum(hits) / len(hits)

    assert abs(achieved(fitting) - row["achieved_rate"]) < 1e-12  # stored rate is the hot-path rate
    other = _simulated(tmp_path / "other.db", seed=2)
    assert abs(achieved(other) - 0.20) <= 0.03


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def simulated_db(db_file):
    conn = seeded_db.connect(db_file)
    simulate.simulate(conn, days=20, seed=3, projects=2, end=END)
    return conn


def _calibrations(conn):
    return conn.execute("SELECT count(*) FROM calibrations").fetchone()[0]


def test_report_in_plain_english_and_stored(simulated_db):
    r = CliRunner().invoke(cli, ["calibrate", "--include-synthetic", "--resamples", "200"])
    assert r.exit_code == 0, r.output
    assert (
        "Rule: a two-way finding is asked about when its score (severity + irreversibility + decision matters)"
        in r.output
    )
    assert "target 20.0%" in r.output and "95% interval over resampled sessions" in r.output
    assert "Override recall:" in r.output and "Per phase: ceo" in r.output
    assert "Stored as calibration 1 for __global__" in r.output
    row = simulated_db.execute("SELECT * FROM calibrations").fetchone()
    details = json.loads(row["details_json"])
    assert details["bootstrap"] == {"unit": "session", "resamples": 200, "seed": 0, "level": 0.95}
    assert (
        details["interruptions"]["per_session"]["after"]
        < details["interruptions"]["per_session"]["before"]
    )
    assert row["window_start"] >= "2026-11-11" and row["window_end"] <= "2026-12-01"
    assert row["score_function"] == "additive" and json.loads(row["weights_json"]) == {}


def test_json_keys_and_dry_run(simulated_db):
    r = CliRunner().invoke(
        cli, ["calibrate", "--include-synthetic", "--dry-run", "--json", "--target", "0.3"]
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert list(out)[:8] == [
        "threshold",
        "tie_fraction",
        "achieved_rate",
        "ci_low",
        "ci_high",
        "n_findings",
        "override_recall",
        "calibration_id",
    ]
    assert out["calibration_id"] is None and abs(out["achieved_rate"] - 0.3) < 0.01
    assert _calibrations(simulated_db) == 0
    r = CliRunner().invoke(cli, ["calibrate", "--include-synthetic", "--dry-run"])
    assert "Dry run: nothing stored." in r.output
    assert _calibrations(simulated_db) == 0


def test_project_and_since_filters(simulated_db):
    r = CliRunner().invoke(
        cli, ["calibrate", "--include-synthetic", "--json", "--project", "acme-billing-api"]
    )
    one = json.loads(r.output)
    r = CliRunner().invoke(cli, ["calibrate", "--include-synthetic", "--json"])
    both = json.loads(r.output)
    assert one["project"] == "acme-billing-api" and both["project"] == db.GLOBAL_SCOPE
    assert 0 < one["n_findings"] < both["n_findings"]
    r = CliRunner().invoke(
        cli, ["calibrate", "--include-synthetic", "--json", "--since", "2026-11-25", "--dry-run"]
    )
    recent = json.loads(r.output)
    assert 0 < recent["n_findings"] < both["n_findings"] and recent["window_start"] >= "2026-11-25"
    # fitted on simulated findings: never in force for real ranking, unless asked
    assert cal.latest(simulated_db, "acme-billing-api") is None
    latest = cal.latest(simulated_db, "acme-billing-api", include_synthetic=True)
    assert latest["id"] == one["calibration_id"] and latest["synthetic"] == 1
    assert (
        cal.latest(simulated_db, "acme-storefront", include_synthetic=True)["id"]
        == both["calibration_id"]
    )
    assert cal.latest(simulated_db, include_synthetic=True)["id"] == both["calibration_id"]


def test_weighted_score_function_fits_weights_or_takes_them(simulated_db):
    r = CliRunner().invoke(
        cli, ["calibrate", "--include-synthetic", "--json", "--score-function", "weighted"]
    )
    out = json.loads(r.output)
    assert out["score_function"] == "weighted" and abs(sum(out["weights"].values()) - 3) < 0.01
    r = CliRunner().invoke(
        cli,
        [
            "calibrate",
            "--include-synthetic",
            "--json",
            "--score-function",
            "weighted",
            "--weights",
            '{"decision_matters": 2}',
        ],
    )
    out = json.loads(r.output)
    assert out["weights"] == {"decision_matters": 2.0}
    row = simulated_db.execute(
        "SELECT weights_json FROM calibrations WHERE id = ?", (out["calibration_id"],)
    )
    assert json.loads(row.fetchone()[0]) == {"decision_matters": 2.0}


def test_synthetic_rows_are_left_out_unless_asked(simulated_db):
    r = CliRunner().invoke(cli, ["calibrate"])
    assert r.exit_code == 1
    n = simulated_db.execute("SELECT count(*) FROM findings").fetchone()[0]
    assert r.stderr.strip() == (
        f"Error: no two-way findings to calibrate on; {n:,} simulated findings were left out, "
        "add --include-synthetic to use them"
    )
    assert _calibrations(simulated_db) == 0


def test_empty_database_is_a_clear_error(db_file):
    r = CliRunner().invoke(cli, ["calibrate", "--project", "nowhere"])
    assert r.exit_code == 1
    assert r.stderr.strip() == "Error: no two-way findings to calibrate on for project nowhere"


@pytest.mark.parametrize(
    "args,message",
    [
        (["--target", "1.5"], "--target must be between 0 and 1, got 1.5"),
        (["--target", "most"], "--target must be a number between 0 and 1, got 'most'"),
        (["--since", "last week"], "--since must be a date like 2026-01-31, got 'last week'"),
        (
            ["--project", "../etc"],
            "--project must be a project slug (letters, digits, '.', '_' or '-'), got '../etc'",
        ),
        (["--resamples", "0"], "--resamples must be between 1 and 100000, got 0"),
        (
            ["--weights", "{bad"],
            '--weights must be a JSON object like {"severity": 1, "irreversibility": 1, '
            '"decision_matters": 2}',
        ),
        (
            ["--score-function", "weighted", "--weights", '{"speed": 1}'],
            "--weights has unknown factor 'speed' (expected severity, irreversibility, decision_matters)",
        ),
        (
            ["--score-function", "weighted", "--weights", '{"severity": "high"}'],
            "--weights value for severity must be a number",
        ),
        (["--weights", '{"severity": 1}'], "--weights needs --score-function weighted"),
    ],
)
def test_bad_input_writes_nothing(simulated_db, args, message):
    r = CliRunner().invoke(cli, ["calibrate", "--include-synthetic"] + args)
    assert r.exit_code == 1, r.output
    assert r.stderr.strip() == f"Error: {message}"
    assert r.stdout == ""
    assert _calibrations(simulated_db) == 0


def test_a_rule_that_asks_nothing_reads_plainly(simulated_db):
    r = CliRunner().invoke(
        cli, ["calibrate", "--include-synthetic", "--resamples", "50", "--target", "0", "--dry-run"]
    )
    assert r.exit_code == 0, r.output
    assert "nan" not in r.output
    assert re.search(
        r"Override recall: nothing would be asked, so none of the [\d,]+ decisions", r.output
    )
