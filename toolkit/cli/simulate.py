"""``plantune simulate``: a generated history, marked simulated, for demos and calibration."""

import os
import sys

import click

from toolkit.cli.app import db_option, fail, iso_day, json_option, open_db, print_json, whole_number
from toolkit.core.vocabulary import plural


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

    n_days = whole_number(days, "--days", 1, sim.MAX_DAYS)
    n_seed = whole_number(seed, "--seed", -(2**63), 2**63 - 1)
    n_projects = whole_number(projects, "--projects", 1, len(sim.PROJECT_NAMES))
    end_day = iso_day(end, "--end")
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
