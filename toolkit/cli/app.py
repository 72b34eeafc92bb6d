"""The ``plantune`` command line: a thin layer that parses, calls one library function, formats.

Subcommands that pull in heavy modules are registered lazily by name (``LAZY_COMMANDS``)
so that the hot-path commands (``plantune log``, ``plantune check``) import only what
they use.
"""

import importlib
import json
import os
import sys

import click

from toolkit import __version__
from toolkit.core.errors import Refused, run_script

# name -> "module:attribute". Each module defines one click command or group.
LAZY_COMMANDS = {
    "registry": "toolkit.cli.registry:registry",
    "simulate": "toolkit.cli.simulate:simulate",
    "calibrate": "toolkit.cli.calibrate:calibrate",
    "calibrations": "toolkit.cli.calibrations:calibrations",
    "notebooks": "toolkit.cli.notebooks:notebooks",
    "ingest-transcripts": "toolkit.cli.transcripts:ingest_transcripts",
    "guidance": "toolkit.cli.guidance:guidance",
    "profile": "toolkit.cli.profile:profile",
    "ingest-traces": "toolkit.cli.traces:ingest_traces",
    "pacing": "toolkit.cli.pacing:pacing",
    "flip": "toolkit.cli.pacing:flip",
    "ingest": "toolkit.cli.ingest:ingest",
    "log": "toolkit.cli.questions:log",
    "check": "toolkit.cli.questions:check",
    "pref": "toolkit.cli.questions:pref",
    "serve": "toolkit.cli.serve:serve",
    "merge": "toolkit.cli.team:merge",
    "export": "toolkit.cli.team:export",
    "team": "toolkit.cli.team:team",
    "doors": "toolkit.cli.doors:doors",
    "report": "toolkit.cli.report:report",
    "gstack": "toolkit.cli.gstack:gstack",
}

# Subcommands of `plantune hook` (Claude Code hook entry points), also loaded lazily.
HOOK_COMMANDS = {
    "pre-tool-use": "toolkit.cli.hooks:pre_tool_use",
    "post-tool-use": "toolkit.cli.hooks:post_tool_use",
    "post-tool-use-failure": "toolkit.cli.hooks:post_tool_use_failure",
    "permission-request": "toolkit.cli.hooks:permission_request",
    "install": "toolkit.cli.hooks:install",
    "uninstall": "toolkit.cli.hooks:uninstall",
    "session-start": "toolkit.cli.hooks:session_start",
    "session-end": "toolkit.cli.guidance:session_end",
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported only when they are run or listed."""

    def __init__(self, *args, lazy_commands=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands or {})

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_commands))

    def get_command(self, ctx, name):
        if name in self.lazy_commands:
            module_name, attr = self.lazy_commands[name].split(":")
            return getattr(importlib.import_module(module_name), attr)
        return super().get_command(ctx, name)

    def invoke(self, ctx):
        # A library refusal reads as click's own errors do: "Error: ..." and exit N.
        try:
            return super().invoke(ctx)
        except Refused as e:
            if e.message is None:
                raise click.exceptions.Exit(e.exit_code) from None
            fail(e.message, e.exit_code)


def fail(message, exit_code=1):
    """Stop the command with a one-line error on stderr (``Error: ...``) and exit code N
    (2 for a refusal callers must not retry, e.g. a non-user preference source)."""
    error = click.ClickException(message)
    error.exit_code = exit_code
    raise error


def whole_number(value, name, low, high):
    """``value`` (an option's text) as a whole number in ``[low, high]``, else ``fail``."""
    try:
        n = int(str(value).strip())
    except ValueError:
        fail(f"{name} must be a whole number, got {value!r}")
    if not low <= n <= high:
        fail(f"{name} must be between {low} and {high}, got {n}")
    return n


def iso_day(value, name):
    """``value`` (an option's text, or None) as a ``YYYY-MM-DD`` day, else ``fail``."""
    if value is None:
        return None
    from datetime import date

    try:
        return date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        fail(f"{name} must be a date like 2026-01-31, got {value!r}")


def db_option(f):
    return click.option(
        "--db",
        "db_path",
        type=click.Path(dir_okay=False),
        help="Database file (default: $PLANTUNE_DB, else <state root>/plantune.db).",
    )(f)


def _set_developer(ctx, param, value):
    if value is None:
        return None
    from toolkit.core import identity

    try:
        return identity.set_developer(value)
    except identity.IdentityError as e:
        raise click.BadParameter(str(e)) from None


def developer_option(help_text):
    """``--developer NAME``: whose rows these are (default: $PLANTUNE_DEVELOPER, else the git
    user email). Set for the whole process as soon as it is parsed."""

    def decorate(f):
        return click.option(
            "--developer",
            "developer",
            metavar="NAME",
            callback=_set_developer,
            expose_value=True,
            help=help_text,
        )(f)

    return decorate


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(f)


def open_db(db_path=None, readonly=False, existing=False):
    """Open (and migrate) the database named by --db, $PLANTUNE_DB or the state root.

    ``existing`` is for commands that only read: a --db that does not exist is refused
    and nothing is created (a typo must not leave an empty database behind). A --db
    that is not the state root's own database is kept apart from gstack's files.
    """
    from toolkit.core import seeded_db
    from toolkit.gstack import mirror
    from toolkit.store import db, paths

    path = paths.db_path(db_path)
    if existing:
        require_database(db_path)
    mirror.keep_to_own_database(db_path)
    try:
        return seeded_db.connect(path, readonly=readonly)
    except db.DatabaseError as e:
        fail(str(e))


def gstack_files_apply(db_path):
    """Whether gstack's files may feed the database of ``--db``.

    See mirror.belongs_to_state_root.
    """
    from toolkit.gstack import mirror

    return mirror.belongs_to_state_root(db_path)


def require_database(db_path):
    """Refuse a --db that does not exist (commands that only read create nothing)."""
    from toolkit.cli.fast import require_database as check

    try:
        check(db_path)
    except Refused as e:
        fail(e.message)


def print_json(data):
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _set_state_root(ctx, param, value):
    # Called on every invocation (value None without the option), so an earlier
    # in-process invocation never leaves the flag set.
    from toolkit.gstack import mirror

    mirror.set_state_root(value)
    return value


@click.group(cls=LazyGroup, lazy_commands=LAZY_COMMANDS)
@click.version_option(__version__, prog_name="plantune")
@click.option(
    "--state-root",
    type=click.Path(file_okay=False),
    expose_value=False,
    is_eager=True,
    callback=_set_state_root,
    help="gstack state root for this command (default: $GSTACK_STATE_ROOT, "
    "$GSTACK_HOME, ~/.gstack). Also lets a --db elsewhere pick up its files.",
)
def cli():
    """plantune: record, query and tune the questions AI coding agents ask you.

    Everything lands in one SQLite database (default ~/.gstack/plantune.db;
    $GSTACK_STATE_ROOT, $GSTACK_HOME, $PLANTUNE_DB or --db change it). gstack's files
    under the state root are kept in step with that database only; a --db elsewhere (a
    backup, a copy) never reads or writes them unless --state-root is given too.

    \b
    Example:
        plantune init
        plantune status
        plantune --state-root ~/.gstack profile show --db ~/pt-copy.db
    """


@cli.group(cls=LazyGroup, lazy_commands=HOOK_COMMANDS)
def hook():
    """Claude Code hook entry points: read the hook JSON on stdin, never break the agent.

    \b
    Example:
        plantune hook install --settings ~/.claude/settings.json
    """


@cli.command()
@click.option(
    "--demo",
    is_flag=True,
    help="Mark it as a demo database: simulated rows then count as real (refused if it holds real history).",
)
@db_option
@json_option
def init(demo, db_path, as_json):
    """Create the database (or upgrade it) and load the bundled registry.

    With --demo the database is marked as a demo database (what `make demo` does): there
    simulated preferences, calibrations and events steer check, hooks and pacing as if
    they were real. A database that holds any real history is never marked.

    \b
    Example:
        plantune init --db /tmp/plantune.db
        plantune init --demo --db .demo/plantune.db
    """
    from toolkit.store import db, paths

    path = paths.db_path(db_path)
    existed = os.path.exists(path)
    current = existed and db.schema_is_current(path)
    conn = open_db(db_path)
    if demo:
        mark_demo_database(conn, path)
    counts = db.table_counts(conn)
    if as_json:
        print_json(
            {
                "db": path,
                "created": not existed,
                "upgraded": existed and not current,
                "tables": counts,
                "demo_database": db.is_demo(conn),
            }
        )
        return
    if not existed:
        click.echo(f"Created {path}")
    elif current:
        click.echo(f"{path} is up to date")
    else:
        click.echo(f"Upgraded {path}")
    if demo:
        click.echo("Marked as a demo database: simulated rows count as real here.")
    click.echo(
        f"Registry: {counts.get('registry_questions', 0)} questions, "
        f"signal map: {counts.get('signal_map', 0)} rows."
    )


def mark_demo_database(conn, path):
    """Mark ``conn`` as a demo database, refusing one that holds real history."""
    from toolkit.store import db

    with db.transaction(conn):
        real = db.real_history(conn)
        if real:
            held = ", ".join(f"{n:,} in {t}" for t, n in real.items())
            fail(
                f"{path} holds real history ({held}); a demo database must hold simulated rows only."
                " Use a new file (e.g. simulate --new-db --db demo.db)"
            )
        db.mark_demo(conn)


@cli.command()
@click.option(
    "--all",
    "all_tables",
    is_flag=True,
    help="Also list plantune's internal tables (rollup feeds, running totals, bookkeeping).",
)
@db_option
@json_option
def status(all_tables, db_path, as_json):
    """Show where the data lives, the schema version and how many rows each table holds.

    Reads only: with no database yet it says so and creates nothing (not even the
    state root). Lists the tables that hold your data; --all adds the internal ones.

    \b
    Example:
        plantune status
        plantune status --all --json
    """
    from toolkit.store import db, paths

    path = paths.db_path(db_path)
    require_database(db_path)
    if not os.path.exists(path):
        if as_json:
            print_json({"db": path, "state_root": paths.state_root(), "exists": False})
            return
        click.echo(f"Database:       {path} (none yet; plantune init creates it)")
        click.echo(f"State root:     {paths.state_root()}")
        return
    conn = open_db(db_path, existing=True)
    counts = db.table_counts(conn)
    if not all_tables:
        hidden = internal_tables()
        counts = {name: n for name, n in counts.items() if name not in hidden}
    migrations = db.applied_migrations(conn)
    projects = [
        r[0]
        for r in conn.execute(
            "SELECT project FROM question_log UNION SELECT scope FROM preferences"
            " WHERE scope != ? ORDER BY 1",
            (db.GLOBAL_SCOPE,),
        )
    ]
    size = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
    info = {
        "db": path,
        "exists": True,
        "state_root": paths.state_root(),
        "size_bytes": size,
        "schema_version": migrations[-1].removesuffix(".sql") if migrations else None,
        "migrations": migrations,
        "tables": counts,
        "synthetic_rows": {
            t: n for t, n in db.synthetic_counts(conn).items() if all_tables or t in counts
        },
        "demo_database": db.is_demo(conn),
        "projects": projects,
    }
    if as_json:
        print_json(info)
        return
    click.echo(f"Database:       {path}")
    click.echo(f"State root:     {info['state_root']}")
    click.echo(f"Size:           {_human_size(size)}")
    click.echo(f"Schema version: {info['schema_version']} ({len(migrations)} migrations)")
    click.echo(f"Projects seen:  {', '.join(projects) if projects else '(none yet)'}")
    simulated = info["synthetic_rows"]
    if info["demo_database"]:
        click.echo("Demo database:  yes (simulated rows count as real here)")
    elif any(simulated.values()):
        click.echo("Simulated rows: kept apart; no real decision uses them")
    click.echo("")
    width = max(len(n) for n in counts)
    click.echo(f"{'table'.ljust(width)}  {'rows':>10}  simulated")
    for name, n in counts.items():
        sim = f"{simulated[name]:,}" if name in simulated else ""
        click.echo(f"{name.ljust(width)}  {n:>10,}  {sim}".rstrip())


def internal_tables():
    """The tables kept for plantune's own bookkeeping: those the Datasette metadata hides
    (rollups and their feeds, running totals, migrations, tombstones, ingest offsets)."""
    import json

    from toolkit.store import resources

    try:
        with open(resources.path("datasette-metadata.json"), encoding="utf-8") as f:
            tables = json.load(f)["databases"]["plantune"]["tables"]
    except (OSError, ValueError, KeyError):
        return set()
    return {name for name, meta in tables.items() if meta.get("hidden")}


def _human_size(n):
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024


@cli.command()
@click.argument("dest", type=click.Path(dir_okay=False))
@db_option
def backup(dest, db_path):
    """Write a consistent copy of the database to DEST, safe while hooks keep writing.

    \b
    Example:
        plantune backup ~/plantune-2026-11-30.db
    """
    from toolkit.store import db

    conn = open_db(db_path)
    try:
        db.backup(conn, dest)
    except db.DatabaseError as e:
        fail(str(e))
    click.echo(f"Backed up to {dest} ({_human_size(os.path.getsize(dest))})")


def _held(summary):
    return f"{summary['question_events']:,} question events, {summary['migrations']} migrations"


@cli.command()
@click.argument("backup_path", metavar="BACKUP", type=click.Path(dir_okay=False))
@click.option("--yes", is_flag=True, help="Really replace the database (required).")
@db_option
def restore(backup_path, yes, db_path):
    """Replace the database with BACKUP (a file `plantune backup` wrote), safely in use.

    The backup must pass SQLite's integrity check and hold a plantune schema. It is
    written in under the database's write lock, as one transaction: running hooks wait
    for it, and readers such as `plantune serve` see the restored data on their next
    read. The database it replaces is kept as <db>.before-restore, and what it had
    learned about one-way doors is kept in the restored one. Never copy a backup
    over the database file by hand while its -wal file holds data.

    \b
    Example:
        plantune restore ~/plantune-2026-11-30.db --yes
    """
    from toolkit.core import seeded_db
    from toolkit.store import db, paths
    from toolkit.store import restore as restoring

    path = paths.db_path(db_path)
    if not yes:
        try:
            restoring.check_backup(backup_path)
        except db.DatabaseError as e:
            fail(str(e))
        current = restoring.describe(path)
        what = f"the database at {path} ({_held(current)})" if current else path
        fail(f"refusing to replace {what} without --yes")
    try:
        done = restoring.restore(path, backup_path)
        seeded_db.connect(path).close()  # brought up to this version's schema
        kept = restoring.keep_one_way_facts(path, done["kept_as"])
    except db.DatabaseError as e:
        fail(str(e))
    click.echo(f"Restored {path} from {backup_path} ({_held(done['restored'])})")
    if done["kept_as"]:
        click.echo(
            f"The database it replaced ({_held(done['replaced'])}) is kept as {done['kept_as']}"
        )
    if kept:
        click.echo(f"Kept {kept} one-way door facts the replaced database had learned")


def main(argv=None):
    """Console-script entry point: the click application inside the one error boundary."""

    def command(args):
        out = sys.stdout
        try:
            return cli.main(args=args, prog_name="plantune", standalone_mode=True)
        except SystemExit:
            if sys.stdout is not out:
                # click swaps stdout when its reader went away (`| head`) and exits 1;
                # the command's own result stands, as for every other command.
                raise BrokenPipeError from None
            raise

    return run_script("plantune", command, argv, teardown=True)


if __name__ == "__main__":
    main()
