"""``plantune hook …``: Claude Code hook entry points and their installer.

The hook commands read the hook JSON on stdin, always exit 0 and print only what
Claude Code should act on; every internal problem goes to hook-errors.log.
"""

import click

from toolkit.cli import db_option, fail


def _run_hook(name, handler):
    from toolkit import hooks

    hooks.run_hook(name, handler)


@click.command("post-tool-use")
@db_option
def post_tool_use(db_path):
    """Record every answer of an AskUserQuestion call (Claude Code PostToolUse hook).

    Reads the hook JSON on stdin, records one question-log event per question
    (option keys for registered questions), prints nothing and always exits 0.

    \b
    Example:
        plantune hook post-tool-use < payload.json
    """
    from toolkit import hooks

    _run_hook(hooks.HOOK_POST, lambda p: hooks.post_tool_use(p, db_path=db_path))


@click.command("pre-tool-use")
@db_option
def pre_tool_use(db_path):
    """Auto-decide an AskUserQuestion call from your preferences (Claude Code PreToolUse hook).

    Denies the call with the recommended answer only when every question is marked,
    two-way and set to never-ask; otherwise prints nothing (or memory context) and
    lets the question through. Always exits 0.

    \b
    Example:
        plantune hook pre-tool-use < payload.json
    """
    from toolkit import hooks

    _run_hook(hooks.HOOK_PRE, lambda p: hooks.pre_tool_use(p, db_path=db_path))


@click.command()
@click.option("--settings", "settings_path", type=click.Path(dir_okay=False),
              help="Merge the entries into this settings.json instead of printing them.")
@click.option("--executable", default="plantune", show_default=True,
              help="How the hook commands call plantune (a name on PATH or an absolute path).")
@click.option("--db", "db_path", type=click.Path(dir_okay=False),
              help="Pin the database the hooks write to (default: the one they find at run "
                   "time from $PLANTUNE_DB or the state root).")
def install(settings_path, executable, db_path):
    """Print or merge the .claude/settings.json entries that run plantune's hooks.

    Without --settings the hooks block is printed. With it, the entries are added to
    the file (created if missing) unless already there; other keys are kept, and
    gstack's history under the state root is imported right away (progress on stderr),
    so no hook call has a backlog to import.

    \b
    Example:
        plantune hook install
        plantune hook install --settings ~/.claude/settings.json
        plantune hook install --settings .claude/settings.json --db ~/projects/pinned.db
    """
    import json

    from toolkit import hooks

    if not settings_path:
        click.echo(json.dumps({"hooks": hooks.settings_entries(executable, db_path)}, indent=2))
        return
    try:
        outcome, gstack = hooks.install_settings(settings_path, executable, db_path)
    except hooks.SettingsError as e:
        fail(str(e))
    except OSError as e:
        fail(f"cannot write {settings_path}: {e.strerror or e}")
    for event, status in outcome.items():
        verb = {"added": "added", "present": "already installed", "updated": "command updated"}[status]
        click.echo(f"{event}: {verb} ({hooks.hook_command(event, executable, db_path)})")
    if gstack:
        click.echo(
            f"note: {settings_path} still runs gstack's own question hooks; answers will be "
            "recorded twice until you remove them", err=True)
    _initial_import(db_path)


def _initial_import(db_path):
    """Import gstack's history now, with progress on stderr, so no hook call meets it.

    Every batch is committed with its offset: an interrupted import keeps what it read,
    and the next `plantune ingest` (or the hooks' background ingest) does the rest.
    """
    import os
    import sys

    from toolkit import ingest, paths
    from toolkit.cli import open_db
    from toolkit.cli_ingest import _Progress

    root = paths.state_root()
    if not os.path.isdir(root) or not ingest.history_files(root):
        return
    conn = open_db(db_path)
    click.echo(f"Importing gstack's history from {root} ...", err=True)
    progress = _Progress(enabled=sys.stderr.isatty(), label="Importing")
    try:
        summary = ingest.ingest_state_root(conn, root, progress=progress)
    except KeyboardInterrupt:
        progress.close()
        fail("import interrupted; what was read is kept, `plantune ingest` does the rest")
    except (ingest.IngestError, OSError) as e:
        progress.close()
        click.echo(f"note: gstack's history was not imported: {e}", err=True)
        return
    except Exception as e:  # noqa: BLE001 - the hooks are installed; say what to run
        progress.close()
        click.echo(f"note: gstack's history was not imported ({e}); run `plantune ingest`",
                   err=True)
        return
    progress.close()
    click.echo(f"Imported {summary.imported:,} new entr{'y' if summary.imported == 1 else 'ies'}"
               f" from {len(summary.files)} file{'s' * (len(summary.files) != 1)}"
               f" ({summary.duplicate:,} already there, {summary.skipped:,} skipped).", err=True)
