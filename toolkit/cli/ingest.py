"""``plantune ingest``: import gstack's files from a state root into the database."""

import os
import sqlite3
import sys

import click

from toolkit.cli.app import db_option, developer_option, fail, json_option, open_db, print_json

# Below this many bytes to read, a progress bar would only flash.
PROGRESS_MIN_BYTES = 4 << 20


class Progress:
    """A click progress bar on stderr, opened on the first tick of a large enough run."""

    def __init__(self, enabled, label="Ingesting"):
        self.enabled = enabled
        self.label = label
        self.bar = None

    def __call__(self, advance, total):
        if not self.enabled or total < PROGRESS_MIN_BYTES:
            return
        if self.bar is None:
            self.bar = click.progressbar(
                length=total, label=self.label, file=sys.stderr, show_eta=True, show_percent=True
            )
            self.bar.__enter__()
        self.bar.update(advance)

    def close(self):
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def _counts(report):
    if report.status == "unchanged" and not report.skipped:
        return "unchanged"
    if report.status == "error":
        return f"not read: {report.error}"
    parts = [
        f"{report.imported:,} imported",
        f"{report.duplicate:,} duplicate",
        f"{report.skipped:,} skipped",
    ]
    if report.updated:
        parts.append(f"{report.updated:,} updated")
    if report.removed:
        parts.append(f"{report.removed:,} removed")
    return ", ".join(parts)


def _spool_line(drained):
    return (
        f"spool: {drained.recorded:,} recorded, {drained.already:,} already recorded,"
        f" {len(drained.failed):,} set aside"
    )


def _echo_issues(report):
    if report.status == "error":
        click.echo(f"{report.path}: {report.error}", err=True)
    for issue in report.issues:
        where = f"{report.path}:{issue.line}" if issue.line else report.path
        prefix = "" if issue.skip else "note: "
        click.echo(f"{where}: {prefix}{issue.message}", err=True)


@click.command()
@click.argument("state_root", required=False, type=click.Path())
@click.option(
    "--strict",
    is_flag=True,
    help="Any skipped line is an error: exit 1, nothing from that file imported.",
)
@developer_option(
    "Record the imported rows as this developer's (default: $PLANTUNE_DEVELOPER,"
    " else your git user email)."
)
@db_option
@json_option
def ingest(state_root, strict, developer, db_path, as_json):
    """Import gstack's files (question logs, preferences, events, profile) from STATE_ROOT.

    Reads every projects/*/question-log.jsonl, question-events.jsonl and
    question-preferences.json, plus developer-profile.json and builder-profile.jsonl.
    STATE_ROOT defaults to $GSTACK_STATE_ROOT, else $GSTACK_HOME, else ~/.gstack.
    Safe to rerun: only new bytes are read and nothing is imported twice. Lines that
    cannot be imported are reported as FILE:LINE: REASON on stderr and skipped. A
    state root with no gstack files yet says so and exits 0. Events that hooks spooled
    while the database was locked (STATE_ROOT/spool/) are recorded first. Rows are
    written in transactions of about 0.1 s, each ended early for any hook or compat
    script that waits for the write lock, so such a writer waits only briefly.

    \b
    Example:
        plantune ingest
        plantune ingest ~/.gstack --json
        plantune ingest ./backup-of-gstack --strict
        plantune ingest ./alice-gstack --developer alice@example.com --db team.db
    """
    from toolkit.gstack import history, ingest_base
    from toolkit.store import paths

    root = state_root or paths.state_root()
    conn = open_db(db_path)
    progress = Progress(enabled=sys.stderr.isatty() and not as_json)
    try:
        summary = history.ingest_state_root(conn, root, strict=strict, progress=progress)
    except ingest_base.StrictError as e:
        progress.close()
        _echo_issues(e.report)
        fail(str(e))
    except ingest_base.IngestError as e:
        progress.close()
        fail(str(e))
    except sqlite3.Error as e:
        # Batches already committed stay; a rerun continues from them.
        progress.close()
        fail(f"database error: {e}")
    progress.close()

    for problem in summary.problems:
        click.echo(problem, err=True)
    spooled = summary.spool
    for failed in spooled.failed if spooled else ():
        click.echo(f"spooled event set aside: {failed}", err=True)
    for report in summary.files:
        _echo_issues(report)
    drained = spooled is not None and (spooled.recorded or spooled.already or spooled.failed)
    if not summary.files:
        # A state root without gstack files yet (a fresh install) is not an error; a
        # STATE_ROOT that does not exist at all still is (IngestError above).
        if as_json:
            print_json(summary.as_dict())
            return
        if drained:
            click.echo(_spool_line(spooled))
        click.echo(f"Nothing to ingest yet: no gstack files under {root}.")
        return
    if not summary.readable:
        fail(f"nothing could be read under {root}")
    if as_json:
        print_json(summary.as_dict())
        return
    if drained:
        click.echo(_spool_line(spooled))
    for report in summary.files:
        click.echo(f"{os.path.relpath(report.path, root)}: {_counts(report)}")
    n_tx = summary.as_dict()["transactions"]
    if n_tx:
        click.echo(
            f"{n_tx:,} write transaction{'s' * (n_tx != 1)}; the longest held the"
            f" database's write lock {summary.lock_max_ms:,.0f} ms."
        )
    n_files, n_projects = len(summary.files), len(summary.projects)
    click.echo(
        f"Ingested {n_files} file{'s' * (n_files != 1)} from {n_projects}"
        f" project{'s' * (n_projects != 1)}:"
        f" {summary.imported:,} imported, {summary.duplicate:,} duplicate,"
        f" {summary.skipped:,} skipped."
    )
