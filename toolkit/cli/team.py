"""Team-scale commands: ``plantune merge``, ``plantune export`` and ``plantune team``."""

import sqlite3

import click

from toolkit.cli.app import db_option, developer_option, fail, json_option, open_db, print_json
from toolkit.core.vocabulary import plural


def _merge_line(result):
    t = result["tables"]
    prefs, profile = t["preferences"], t["declared_profile"]
    who = f" as {result['developer']}" if result["developer"] else ""
    return (
        f"{result['path']}{who}: {t['question_log']['added']:,} of"
        f" {t['question_log']['source']:,} question events new,"
        f" {t['findings']['added']:,} of {t['findings']['source']:,} findings,"
        f" {t['preference_events']['added']:,} of {t['preference_events']['source']:,}"
        f" preference events, {t['calibrations']['added']:,} of"
        f" {t['calibrations']['source']:,} calibrations,"
        f" {t['office_hours_sessions']['added']:,} of {t['office_hours_sessions']['source']:,}"
        f" office-hours sessions, {t['trace_runs']['added']:,} of"
        f" {t['trace_runs']['source']:,} trace runs, {t['guidance_proposals']['added']:,} of"
        f" {t['guidance_proposals']['source']:,} guidance proposals; preferences:"
        f" {prefs['added']:,} added, {prefs['updated']:,} updated, {prefs['removed']:,} removed;"
        f" declared profile: {profile['added']:,} added, {profile['updated']:,} updated,"
        f" {profile['removed']:,} removed"
        + (f"; {result['removed']:,} deleted rows removed" if result.get("removed") else "")
        + (
            f"; {result['refused']:,} rows attributed to another developer refused"
            if result.get("refused")
            else ""
        )
        + (
            f"; {result['contested']:,} rows whose keys another developer's rows hold not"
            " merged (contested)"
            if result.get("contested")
            else ""
        )
    )


@click.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=False))
@developer_option(
    "The developer each source speaks for (default: the one developer its rows name;"
    " required for rows recorded before attribution). Rows naming anyone else are refused."
)
@click.option(
    "--trust-attribution",
    is_flag=True,
    help="Sources are team databases you merged yourself: keep the developer each row"
    " names, and let their deletes remove any developer's rows.",
)
@db_option
@json_option
def merge(sources, developer, trust_attribution, db_path, as_json):
    """Merge developers' databases (SOURCES) into one team database (--db).

    Safe to rerun: rows are matched by their keys, so nothing is added twice. Every merged
    row keeps its developer and the source it came from; preferences and declared profiles
    stay per developer (tables developer_preferences, developer_declared_profile).
    Office-hours sessions, trace runs and guidance proposals come along too (a merged
    proposal is evidence: it is applied where it was made, never from the team database).
    Nothing deleted comes back: what a source deleted (its tombstones and deletion
    records) leaves the team database too, and what was deleted in either never returns
    from any source or backup. A source speaks for one developer (--developer, else the
    one its rows name): its deletes remove only that developer's rows, and its rows that
    name anyone else are refused and counted. A team database merged into another needs
    --trust-attribution. A source with a schema this plantune does not know is refused
    before anything is written. Prints the counts per source.

    \b
    Example:
        plantune merge alice.db bob.db --db team.db
        plantune merge old-laptop.db --developer carol@example.com --db team.db
        plantune merge team-a.db team-b.db --trust-attribution --db org.db
    """
    from toolkit.analysis import merge as merging

    conn = open_db(db_path)
    if trust_attribution:
        click.echo(
            "warning: --trust-attribution: every row keeps the developer it names and every"
            " delete of these sources counts for everyone; use it only for team databases"
            " you merged yourself",
            err=True,
        )

    def progress(result):
        if not as_json:
            click.echo(_merge_line(result))

    try:
        results = merging.merge(
            conn,
            list(sources),
            developer=developer,
            progress=progress,
            trust_attribution=trust_attribution,
        )
    except merging.MergeError as e:
        fail(str(e))
    except sqlite3.Error as e:
        fail(f"database error: {e}")
    if as_json:
        print_json(results)
        return
    added = sum(r["tables"]["question_log"]["added"] for r in results)
    click.echo(
        f"Merged {len(results)} database{'s' * (len(results) != 1)}: {added:,} new question events."
    )


@click.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["parquet", "csv", "jsonl"]),
    default="parquet",
    show_default=True,
    help="File format of the datasets.",
)
@click.option(
    "--pseudonymise",
    "salt",
    metavar="SALT",
    help="Write a stable salted hash in place of each developer identity (keep the"
    " salt secret and the same across runs).",
)
@db_option
@json_option
def export(directory, fmt, salt, db_path, as_json):
    """Export question events, findings, pacing decisions, calibrations and profile
    signals as datasets in DIRECTORY, hive-partitioned by project and month.

    Each dataset gets a _schema.json; manifest.json records what was written, so a rerun
    adds only new rows (and rewrites only partitions whose rows changed). Memory stays
    bounded whatever the size: rows are streamed in batches.

    \b
    Example:
        plantune export team-data --db team.db
        plantune export team-csv --format csv --pseudonymise "$TEAM_SALT"
    """
    from toolkit.analysis import export as exporting

    conn = open_db(db_path)

    def progress(name, done):
        if not as_json:
            click.echo(
                f"{name}: {plural(done['rows'], 'row')} written in "
                f"{plural(done['files'], 'file')} ({done['total_rows']:,} in the dataset)"
            )

    try:
        summary = exporting.export(conn, directory, fmt=fmt, salt=salt, progress=progress)
    except exporting.ExportError as e:
        fail(str(e))
    except sqlite3.Error as e:
        fail(f"database error: {e}")
    except OSError as e:
        fail(f"cannot write {directory}: {e.strerror or e}")
    if as_json:
        print_json(summary)
        return
    click.echo(f"Exported to {directory} ({fmt}, run {summary['run']}).")


@click.group()
def team():
    """Team analysis over an exported dataset (see `plantune export`).

    \b
    Example:
        plantune team report team-data
        plantune team calibrate team-data --engine spark
    """


def _table(rows, columns):
    """Plain aligned columns; None shows as '-'."""
    if not rows:
        click.echo("  (no rows)")
        return
    cells = [
        [
            (
                "-"
                if r[c] is None
                else f"{r[c]:,}"
                if isinstance(r[c], int) and not isinstance(r[c], bool)
                else str(r[c])
            )
            for c in columns
        ]
        for r in rows
    ]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    for row in [list(columns)] + cells:
        click.echo(("  " + "  ".join(v.ljust(w) for v, w in zip(row, widths))).rstrip())


@team.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--include-synthetic", is_flag=True, help="Count simulated history too.")
@click.option(
    "--top",
    type=click.IntRange(1),
    default=15,
    show_default=True,
    help="Questions listed by override count.",
)
@json_option
def report(directory, include_synthetic, top, as_json):
    """Team report from an exported dataset, on DuckDB: interruptions per review phase,
    override rates by question and by category, and data diversity per developer.

    The numbers are those of the SQLite views (phase_counts, question_review,
    question_events, profile_diversity) over the same rows.

    \b
    Example:
        plantune team report team-data
        plantune team report team-data --json > team-report.json
    """
    from toolkit.analysis import team as teams

    try:
        data = teams.report(directory, include_synthetic=include_synthetic)
    except teams.TeamError as e:
        fail(str(e))
    if as_json:
        print_json(data)
        return
    scope = "all rows" if include_synthetic else "real rows (simulated history left out)"
    click.echo(f"Team report for {directory}: {scope}")
    click.echo("\nInterruptions per review phase:")
    _table(
        data["phases"],
        [
            "phase",
            "sessions",
            "questions",
            "asked",
            "auto_decided",
            "one_way",
            "findings_surfaced",
            "findings_silent",
            "budget_spent",
            "asked_per_session",
        ],
    )
    click.echo("\nOverride rates by category:")
    _table(data["categories"], ["category", "events", "followed", "overridden", "override_rate"])
    click.echo(f"\nMost overridden questions (top {top}):")
    ranked = sorted(
        data["questions"], key=lambda r: (-r["overridden"], r["project"], r["question_id"])
    )[:top]
    _table(ranked, ["project", "question_id", "events", "followed", "overridden", "override_rate"])
    click.echo("\nDiversity per developer (enough_data: 20 events, 3 skills, 8 questions, 7 days):")
    _table(
        data["diversity"],
        [
            "developer",
            "sample_size",
            "skills_covered",
            "question_ids_covered",
            "distinct_days",
            "calendar_span_days",
            "enough_data",
        ],
    )


@team.command("calibrate")
@click.argument("directory")
@click.option(
    "--engine",
    type=click.Choice(["duckdb", "spark"]),
    default="duckdb",
    show_default=True,
    help="Where the fit runs: embedded DuckDB or a Spark job.",
)
@click.option(
    "--master",
    metavar="URL",
    help="Spark master (default local[*]); e.g. spark://host:7077 or yarn.",
)
@click.option(
    "--target",
    type=click.FloatRange(0, 1),
    default=0.20,
    show_default=True,
    help="Share of two-way findings that should surface.",
)
@click.option("--project", help="Fit on one project's findings only.")
@click.option("--include-synthetic", is_flag=True, help="Fit on simulated history too.")
@click.option(
    "--store",
    is_flag=True,
    help="Store the fit in the database (--db) as a team calibration: listed by"
    " `calibrations list`, in force only once pinned with `calibrations use`.",
)
@db_option
@json_option
def team_calibrate(
    directory, engine, master, target, project, include_synthetic, store, db_path, as_json
):
    """Fit the surfacing threshold on a team dataset, as map-reduce steps on DuckDB or Spark.

    Gives the same threshold and tie fraction as `plantune calibrate` (numpy) on the same
    findings. DIRECTORY may be a URL Spark can read (hdfs://, s3a://) with --engine spark.
    With --store the fit is kept as a team calibration (developer 'team'); it never ranks
    anyone's findings until `plantune calibrations use ID` pins it.

    \b
    Example:
        plantune team calibrate team-data
        plantune team calibrate team-data --store --db team.db
        plantune team calibrate s3a://bucket/team-data --engine spark --master yarn
    """
    from toolkit.analysis import team as teams

    conn = open_db(db_path) if store else None  # a bad --db fails before a long fit
    try:
        result = teams.calibrate(
            directory,
            engine=engine,
            target=target,
            include_synthetic=include_synthetic,
            project=project,
            master=master,
        )
    except teams.TeamError as e:
        fail(str(e))
    except Exception as e:  # a Spark or DuckDB failure, reported in one line
        if type(e).__module__.split(".")[0] in ("duckdb", "pyspark", "py4j"):
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            fail(f"{engine} failed: {first}")
        raise
    if store:
        try:
            result["calibration_id"] = teams.store(conn, result, directory)
        except sqlite3.Error as e:
            fail(f"database error: {e}")
    if as_json:
        print_json(result)
        return
    click.echo(
        f"Threshold {result['threshold']:g} with tie fraction {result['tie_fraction']:.6f}:"
        f" {result['achieved_rate']:.1%} of {result['n']:,} two-way findings surface"
        f" (target {target:.0%}; {result['n_above']:,} above, {result['n_tie_surfaced']:,} of"
        f" {result['n_ties']:,} ties) [{engine}]"
    )
    if store:
        click.echo(
            f"Stored as team calibration {result['calibration_id']} for"
            f" {project or 'all projects'}; it ranks nothing until pinned with"
            f" `plantune calibrations use {result['calibration_id']}`."
        )
