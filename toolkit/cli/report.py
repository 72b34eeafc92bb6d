"""``plantune report``: the pacing design's acceptance figures, from recorded history."""

import click

from toolkit.cli.app import db_option, fail, json_option, open_db, print_json


@click.group()
def report():
    """The pacing design's acceptance figures: interruptions per session, first-run prompts.

    \b
    Example:
        plantune report interruptions --project acme-web
        plantune report first-run --json
    """


def _pct(x):
    return "n/a" if x is None else f"{100 * x:.0f}%"


def _n(n, noun):
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


@report.command()
@click.option("--project", default=None, help="Only this project's sessions.")
@click.option("--since", default=None, help="Only questions on or after this date (YYYY-MM-DD).")
@click.option(
    "--include-synthetic", is_flag=True, help="Also use simulated rows (left out by default)."
)
@db_option
@json_option
def interruptions(project, since, include_synthetic, db_path, as_json):
    """Questions per session as logged, and as pacing with the calibration in force would ask.

    For each session of the question log: the questions asked (answered by a person),
    the one-way doors among them, and how many pacing would ask: every one-way door and
    gate (approval and mutation gates, one-time prompts), plus the two-way questions
    whose score reaches the threshold, at most 3 per phase and within the chain's budget.
    The median of paced / logged is set against the design's 50%, and the median number
    of Silent Decisions per non-trivial session (questions in two review phases, or ten
    questions) is the design's N. The rows also feed the session_pacing view (Datasette).

    \b
    Example:
        plantune report interruptions --project acme-web --since 2026-09-01
        plantune report interruptions --json | jq '.sessions[] | select(.paced > 5)'
    """
    from toolkit.analysis import reports
    from toolkit.store import paths

    if project is not None and not paths.is_valid_slug(project):
        fail(
            f"--project must be a project slug (letters, digits, '.', '_' or '-'), got {project!r}"
        )
    try:
        since_day = None if since is None else reports.check_day(since)
        conn = open_db(db_path, existing=True)
        out = reports.interruptions(conn, project, since_day, include_synthetic)
        reports.store_interruptions(conn, out)
    except reports.ReportError as e:
        fail(str(e))
    if as_json:
        print_json(out)
        return
    click.echo(f"{'session':<40} {'logged':>6} {'one-way':>7} {'paced':>5} {'ratio':>6}")
    for s in out["sessions"]:
        click.echo(
            f"{s['session_id'][:40]:<40} {s['logged']:>6} {s['one_way']:>7} {s['paced']:>5}"
            f" {_pct(s['ratio']):>6}"
        )
    verdict = "within" if out["meets_design"] else "above"
    click.echo(
        f"{_n(out['n_sessions'], 'session')}: {out['logged']:,} questions logged, {out['paced']:,} "
        f"with pacing; median share asked {_pct(out['median_ratio'])}, {verdict} the design's "
        f"{_pct(out['design_ratio'])}. Every one-way door is still asked."
    )
    if out["median_silent_non_trivial"] is None:
        click.echo("No non-trivial session (two review phases, or ten questions) yet.")
    else:
        click.echo(
            f"Silent Decisions per non-trivial session (median over "
            f"{_n(out['non_trivial_sessions'], 'session')}): N = {out['median_silent_non_trivial']:g}."
        )


@report.command(name="first-run")
@db_option
@json_option
def first_run(db_path, as_json):
    """One-time prompts asked before the first real skill question, per project.

    Counts the registry's one-time prompts (preamble-*, gstack-upgrade-inline,
    plan-tune-enable-setup) a person was asked in a project before its first real skill
    question, per developer on a team database; the design asks for at most 1 (the lake
    intro), against 4 before pacing. Reads the first_run_meta_prompts view.

    \b
    Example:
        plantune report first-run
        plantune report first-run --json
    """
    from toolkit.analysis import reports

    conn = open_db(db_path, existing=True)
    out = reports.first_run(conn)
    if as_json:
        print_json(out)
        return
    if not out["projects"]:
        click.echo("(no answered questions yet)")
        return
    for r in out["projects"]:
        who = f" ({r['developer']})" if out["team"] and r["developer"] else ""
        sim = " [simulated]" if r["synthetic"] else ""
        names = f": {r['meta_prompts'].replace(',', ', ')}" if r["meta_prompts"] else ""
        first = r["first_skill_ts"] or "no real skill question yet"
        mark = "ok" if r["within_design"] else "over"
        click.echo(
            f"{r['project']}{who}{sim}: {r['meta_prompts_before_first_skill']} before the first "
            f"skill question ({first}){names} [{mark}]"
        )
    click.echo(
        f"{out['within_design']} of {_n(len(out['projects']), 'project')} within the design's "
        f"{out['design_max']}."
    )
