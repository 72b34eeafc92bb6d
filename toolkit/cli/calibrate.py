"""``plantune calibrate``: fit the pacing thresholds to the recorded history."""

import json

import click

from toolkit.cli.app import db_option, fail, iso_day, json_option, open_db, print_json, whole_number


def _fraction(value, name):
    try:
        x = float(str(value).strip())
    except ValueError:
        fail(f"{name} must be a number between 0 and 1, got {value!r}")
    if not 0.0 <= x <= 1.0:
        fail(f"{name} must be between 0 and 1, got {value}")
    return x


@click.command()
@click.option(
    "--target",
    default="0.20",
    show_default=True,
    help="Share of two-way decisions to ask about (0-1).",
)
@click.option(
    "--max-miss",
    default=None,
    metavar="E",
    help="Instead of --target, ask least while at most E of the decisions you would override "
    "are silenced, with --confidence (0-1, e.g. 0.1).",
)
@click.option(
    "--confidence",
    "confidence_level",
    default=None,
    metavar="C",
    help="Confidence of the --max-miss promise (0-1, default 0.90).",
)
@click.option(
    "--source",
    type=click.Choice(["auto", "findings", "question-log"]),
    default="auto",
    show_default=True,
    help="Fit on recorded pacing findings, on answered questions of the question log, or "
    "auto: findings when there are any, else the question log.",
)
@click.option(
    "--holdout-days",
    default=None,
    help="Fit on the older history and report how the rule does on the last N days.",
)
@click.option(
    "--explain",
    "explain_id",
    default=None,
    metavar="QUESTION_ID",
    help="Show how the question-log scorer rates a question (factors and evidence); fits nothing.",
)
@click.option("--since", default=None, help="Only history on or after this date (YYYY-MM-DD).")
@click.option(
    "--project", default=None, help="Fit on one project's history and store the calibration for it."
)
@click.option(
    "--include-synthetic", is_flag=True, help="Also use simulated rows (left out by default)."
)
@click.option(
    "--score-function",
    type=click.Choice(["additive", "weighted"]),
    default=None,
    help="How the three factors combine into a score (default: additive for findings, "
    "weighted with fitted weights for the question log).",
)
@click.option(
    "--weights",
    default=None,
    help="Weights for the weighted score as JSON, e.g. '{\"decision_matters\": 2}' (default: fitted).",
)
@click.option(
    "--resamples", default="1000", show_default=True, help="Bootstrap resamples of sessions."
)
@click.option("--dry-run", is_flag=True, help="Report the fit without storing a calibration.")
@click.option(
    "--force",
    is_flag=True,
    help="Store the fit even when it rests on too little data (marked low_confidence).",
)
@db_option
@json_option
def calibrate(
    target,
    max_miss,
    confidence_level,
    source,
    holdout_days,
    explain_id,
    since,
    project,
    include_synthetic,
    score_function,
    weights,
    resamples,
    dry_run,
    force,
    db_path,
    as_json,
):
    """Fit the pacing threshold so about --target of two-way decisions are asked, and store it.

    Reports the achieved share with a 95% interval (resampling whole sessions), how many
    of your overrides the rule would have caught next to a random rule, and questions per
    session and phase before and after pacing. `pacing rank` uses the newest calibration
    of the project, else the newest global one (stored when --project is not given),
    unless one is pinned with `plantune calibrations use ID`.

    A fit is stored only when it rests on at least 10 sessions and 100 two-way decisions
    and its 95% interval is narrower than ±5 points (a zero-width interval, such as 0.0%
    to 0.0% from one session, never counts as narrow); otherwise calibrate says how much
    more data it needs and exits 1 (--force stores it marked low_confidence).

    With --max-miss E the threshold is the one that asks least while, with confidence C
    (--confidence, default 0.90), at most E of the two-way decisions you override are
    silenced: a Clopper-Pearson upper bound of the miss rate over your overridden
    decisions, the threshold chosen by fixed-sequence testing (Learn-then-Test). The
    report gives the bound and the share asked, and the same at the plain --target; when
    no threshold can reach the bound, calibrate says how many more overridden decisions
    it would take and exits 1. A fit that used simulated rows is stored synthetic and never ranks
    real findings (only a demo database uses it).

    With --source question-log (or auto, when no findings are recorded yet) the fit uses
    the two-way questions you answered (sources agent, hook, transcript-import; never
    auto-decided or simulated). Each is scored with the same three factors a finding
    has: severity from its category, options and summary, irreversibility from its door
    and summary, decision matters from how often you overrode similar questions in
    other sessions. --explain QUESTION_ID shows that scoring for one question.

    \b
    Example:
        plantune calibrate --include-synthetic
        plantune calibrate --source question-log --holdout-days 14
        plantune calibrate --max-miss 0.1 --confidence 0.9 --holdout-days 14
        plantune calibrate --explain ship-release-pipeline-missing
        plantune calibrate --project acme-web --since 2026-09-01 --dry-run --json
    """
    from toolkit.analysis import calibrate as cal
    from toolkit.analysis import fit, sources
    from toolkit.store import paths

    target_value = _fraction(target, "--target")
    miss_value, confidence_value = _promise_request(max_miss, confidence_level)
    since_day = iso_day(since, "--since")
    n_resamples = whole_number(resamples, "--resamples", 1, 100_000)
    n_holdout = (
        None if holdout_days is None else whole_number(holdout_days, "--holdout-days", 1, 3650)
    )
    if project is not None and not paths.is_valid_slug(project):
        fail(
            f"--project must be a project slug (letters, digits, '.', '_' or '-'), got {project!r}"
        )
    weight_values = None
    if weights is not None:
        weight_values = _parse_weights(weights)
        if score_function != "weighted":
            fail("--weights needs --score-function weighted")
    # --explain and --dry-run only read: a missing database is an error, never created.
    conn = open_db(db_path, existing=dry_run or explain_id is not None)
    if explain_id is not None:
        _explain(conn, explain_id.strip(), target_value, project, include_synthetic, as_json)
        return
    try:
        report = sources.run_source(
            conn,
            source,
            target_value,
            project,
            since_day,
            include_synthetic,
            score_function,
            weight_values,
            resamples=n_resamples,
            holdout_days=n_holdout,
            max_miss=miss_value,
            confidence=confidence_value,
        )
    except fit.CalibrationError as e:
        fail(str(e))
    report = sources.public(report)
    chosen = report["source"]
    check = cal.confidence(report)
    report["confidence"] = check
    refused = not check["ok"] and not force and not dry_run
    if not dry_run and not refused:
        cal.store(conn, report)
    _show_report(report, source, chosen, as_json)
    if refused:
        fail(cal.guard_message(report, check))
    if as_json:
        return
    if dry_run:
        if not check["ok"]:
            click.echo("Warning: " + cal.guard_message(report, check).removeprefix("not stored: "))
        click.echo("Dry run: nothing stored.")
        return
    _say_stored(conn, report, chosen)


def _promise_request(max_miss, confidence):
    """(E, C) from --max-miss and --confidence, each strictly between 0 and 1."""
    values = []
    for name, raw in (("--max-miss", max_miss), ("--confidence", confidence)):
        value = None if raw is None else _fraction(raw, name)
        if value is not None and not 0.0 < value < 1.0:
            fail(f"{name} must be above 0 and below 1, got {raw}")
        values.append(value)
    if confidence is not None and max_miss is None:
        fail("--confidence needs --max-miss")
    return tuple(values)


def _show_report(report, source, chosen, as_json):
    """The fit, as JSON or in words."""
    from toolkit.analysis import calibrate as cal

    if as_json:
        keys = (
            "threshold",
            "tie_fraction",
            "achieved_rate",
            "ci_low",
            "ci_high",
            "n_findings",
            "override_recall",
            "calibration_id",
            "source",
        )
        out = {k: report[k] for k in keys}
        out.update({k: v for k, v in report.items() if k not in out})
        print_json(out)
    else:
        if source == "auto":
            click.echo(
                f"Source: {chosen} (auto: "
                + (
                    "findings are recorded)."
                    if chosen == "findings"
                    else "no findings recorded yet, using the question log)."
                )
            )
        for line in cal.summary_lines(report):
            click.echo(line)


def _explain(conn, question_id, target, project, include_synthetic, as_json):
    """``calibrate --explain``: how one logged question is scored."""
    from toolkit.analysis import calibrate as cal
    from toolkit.analysis import fit, sources

    try:
        info = sources.explain_question(conn, question_id, target, project, include_synthetic)
    except fit.CalibrationError as e:
        fail(str(e))
    if as_json:
        print_json(info)
    else:
        for line in cal.explain_lines(info):
            click.echo(line)


def _say_stored(conn, report, chosen):
    """The line that says what was stored, and whether `pacing rank` will use it."""
    from toolkit.store.db import is_demo

    stored = f"Stored as calibration {report['calibration_id']} for {report['project']} (source {chosen})"
    if report["synthetic"] and not is_demo(conn):
        click.echo(
            f"{stored}, marked synthetic: it was fitted on simulated rows, so it never "
            "ranks real findings (only a demo database uses it)."
        )
    elif report["synthetic"]:
        click.echo(f"{stored}, marked synthetic; this demo database ranks with it from now on.")
    elif report["low_confidence"]:
        click.echo(
            f"{stored}, marked low_confidence (forced below the confidence guard); "
            "`pacing rank` uses it from now on."
        )
    else:
        click.echo(f"{stored}; `pacing rank` uses it from now on.")


def _parse_weights(text):
    from toolkit.core import scoring

    try:
        weights = json.loads(text)
    except json.JSONDecodeError:
        fail(
            '--weights must be a JSON object like {"severity": 1, "irreversibility": 1, "decision_matters": 2}'
        )
    if not isinstance(weights, dict) or not weights:
        fail("--weights must be a non-empty JSON object")
    unknown = sorted(set(weights) - set(scoring.FACTORS))
    if unknown:
        fail(
            f"--weights has unknown factor {unknown[0]!r} (expected severity, irreversibility, decision_matters)"
        )
    for k, v in weights.items():
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float))
            or v != v
            or v in (float("inf"), float("-inf"))
        ):
            fail(f"--weights value for {k} must be a number")
    return {k: float(v) for k, v in weights.items()}
