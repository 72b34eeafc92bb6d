"""``plantune simulate``, ``plantune calibrate`` and ``plantune notebooks``: the analyst's commands."""

import json
import os
import sys
from datetime import date

import click

from toolkit.cli.app import db_option, fail, json_option, open_db, print_json
from toolkit.core.vocabulary import plural


def _whole(value, name, low, high):
    try:
        n = int(str(value).strip())
    except ValueError:
        fail(f"{name} must be a whole number, got {value!r}")
    if not low <= n <= high:
        fail(f"{name} must be between {low} and {high}, got {n}")
    return n


def _fraction(value, name):
    try:
        x = float(str(value).strip())
    except ValueError:
        fail(f"{name} must be a number between 0 and 1, got {value!r}")
    if not 0.0 <= x <= 1.0:
        fail(f"{name} must be between 0 and 1, got {value}")
    return x


def _day(value, name):
    if value is None:
        return None
    try:
        return date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        fail(f"{name} must be a date like 2026-01-31, got {value!r}")


class _Progress:
    """A progress bar on stderr, only when stderr is a terminal (never in logs or tests)."""

    def __init__(self, length, label):
        self.bar = None
        if sys.stderr.isatty():
            self.bar = click.progressbar(length=length, label=label, file=sys.stderr)
        self.done = 0

    def __enter__(self):
        if self.bar:
            self.bar.__enter__()
        return self

    def update(self, done):
        if self.bar:
            self.bar.update(done - self.done)
        self.done = done

    def __exit__(self, *exc):
        if self.bar:
            self.bar.__exit__(*exc)
        return False


# --------------------------------------------------------------------------- simulate


@click.command()
@click.option("--days", default="90", show_default=True, help="How many days of history (1-3650).")
@click.option(
    "--seed",
    default="0",
    show_default=True,
    help="Random seed: the same seed gives the same history.",
)
@click.option("--projects", default="3", show_default=True, help="How many projects (1-12).")
@click.option("--end", default=None, help="Last simulated day, YYYY-MM-DD (default: today, UTC).")
@click.option(
    "--replace",
    is_flag=True,
    help="Delete earlier simulated rows first (real rows are never touched).",
)
@click.option(
    "--new-db",
    is_flag=True,
    help="Create the database (it must not exist yet) and mark it as a demo database.",
)
@db_option
@json_option
def simulate(days, seed, projects, end, replace, new_db, db_path, as_json):
    """Write a realistic synthetic history (sessions, findings, answers), marked synthetic.

    Review chains run on most days: CEO and Eng phases always, Design and DX sometimes,
    5-10 findings each, decided by the uncalibrated pacing rule. Every row carries
    synthetic = 1: check, hooks, pacing, guidance, the profile and `plantune calibrate`
    ignore it unless given --include-synthetic. With --new-db the history goes into a new
    demo database, where simulated rows count as real.

    \b
    Example:
        plantune simulate --days 90 --seed 7
        plantune simulate --new-db --db /tmp/demo.db --days 365 --projects 5
    """
    from toolkit.analysis import simulate as sim
    from toolkit.cli.app import mark_demo_database
    from toolkit.store import paths

    n_days = _whole(days, "--days", 1, sim.MAX_DAYS)
    n_seed = _whole(seed, "--seed", -(2**63), 2**63 - 1)
    n_projects = _whole(projects, "--projects", 1, len(sim.PROJECT_NAMES))
    end_day = _day(end, "--end")
    if new_db:
        path = paths.db_path(db_path)
        if os.path.exists(path):
            fail(
                f"{path} already exists; --new-db creates a new demo database (choose another --db)"
            )
    conn = open_db(db_path)
    if new_db:
        mark_demo_database(conn, path)
    try:
        with _Progress(n_days, "simulating") as progress:
            summary = sim.simulate(
                conn, n_days, n_seed, n_projects, end_day, replace, progress=progress.update
            )
    except sim.SimulationError as e:
        fail(str(e))
    if as_json:
        print_json(summary)
        return
    written = summary["written"]
    surfaced = summary["surfaced"]
    if replace:
        click.echo(f"Removed {sum(summary['cleared'].values()):,} earlier simulated rows.")
    click.echo(
        f"Simulated {summary['days']} days ({summary['start']} to {summary['end']}, seed {summary['seed']}) "
        f"for {len(summary['projects'])} projects: {', '.join(summary['projects'])}."
    )
    click.echo(
        f"{plural(summary['sessions'], 'session')}, {plural(summary['findings'], 'finding')}: "
        f"{surfaced['one-way']:,} one-way and {surfaced['gate']:,} gates asked, {surfaced['rank']:,} ranked high "
        f"enough to ask, {summary['silent']:,} auto-accepted, {surfaced['flip']:,} flipped back later."
    )
    new = sum(written.values())
    if new == 0:
        click.echo("Nothing new written: this simulation is already in the database.")
    else:
        click.echo(
            f"Wrote {written['question_log']:,} question-log rows, {written['findings']:,} findings, "
            f"{written['preferences']:,} preferences and {written['declared_profile']:,} declared profile values, "
            "all marked synthetic."
        )


# --------------------------------------------------------------------------- calibrate


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
    since_day = _day(since, "--since")
    n_resamples = _whole(resamples, "--resamples", 1, 100_000)
    n_holdout = None if holdout_days is None else _whole(holdout_days, "--holdout-days", 1, 3650)
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


# --------------------------------------------------------------------------- notebooks


@click.group()
def notebooks():
    """Run the analysis notebooks (question-log distributions, threshold calibration).

    \b
    Example:
        plantune notebooks run --out ./shared-notebooks
    """


@notebooks.command(name="run")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder for the executed copies and HTML, written 0600 (default: a notebooks "
    "folder beside the database).",
)
@click.option("--include-synthetic", is_flag=True, help="Let the notebooks use simulated rows.")
@click.option(
    "--write-calibration", is_flag=True, help="Let notebook 02 store the calibration it fits."
)
@click.option("--no-html", is_flag=True, help="Save executed notebooks only, no HTML copies.")
@click.option("--timeout", default="600", show_default=True, help="Seconds allowed per cell.")
@click.option(
    "--param",
    "param",
    multiple=True,
    metavar="NAME=VALUE",
    help="Fill a parameter of the notebooks' parameters cell (repeatable), e.g. target=0.2.",
)
@db_option
def notebooks_run(out_dir, include_synthetic, write_calibration, no_html, timeout, param, db_path):
    """Execute every notebook against the database and save executed copies and HTML.

    --param NAME=VALUE fills a parameter of the notebooks' parameters cell, as papermill's
    -p does: the name matches without regard to case (project fills PROJECT), the value
    takes the type of the parameter's default, and each notebook gets only the parameters
    it declares. The executed copy records what it ran with in an injected cell.

    \b
    Example:
        plantune notebooks run --include-synthetic --out .demo/notebooks
        plantune notebooks run --param project=acme-web --param since=2026-09-01 --param target=0.2
    """
    from toolkit.analysis import notebooks as nbs
    from toolkit.store import paths

    seconds = _whole(timeout, "--timeout", 1, 86_400)
    path = paths.db_path(db_path)
    out = out_dir or nbs.default_out_dir(path)
    params = {
        "INCLUDE_SYNTHETIC": bool(include_synthetic),
        "WRITE_CALIBRATION": bool(write_calibration),
    }

    def shown(p):
        rel = os.path.relpath(p)
        return p if rel.startswith("..") else rel

    def done(result):
        saved = shown(result["notebook"])
        if result["html"]:
            saved += f" and {shown(result['html'])}"
        click.echo(f"Ran {result['name']} in {result['seconds']:.1f} s → {saved}")

    try:
        notebook_params = nbs.parse_params(param)
        results = nbs.run(
            path,
            out,
            params,
            html_copy=not no_html,
            timeout=seconds,
            on_done=done,
            notebook_params=notebook_params,
        )
    except nbs.NotebookError as e:
        fail(str(e))
    click.echo(f"{len(results)} notebooks executed against {path}.")
