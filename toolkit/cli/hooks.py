"""``plantune hook …``: Claude Code hook entry points and their installer.

The hook commands read the hook JSON on stdin, always exit 0 and print only what
Claude Code should act on; every internal problem goes to hook-errors.log.
"""

import os

import click

from toolkit.cli.app import db_option, fail


def _run_hook(name, db_path):
    from toolkit.claude import hooks

    hooks.run_named_hook(name, db_path=db_path)


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
    _run_hook("post-tool-use", db_path)


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
    _run_hook("pre-tool-use", db_path)


@click.command("post-tool-use-failure")
@db_option
def post_tool_use_failure(db_path):
    """Record an AskUserQuestion the user cancelled (Claude Code PostToolUseFailure hook).

    A call dismissed with Esc (is_interrupt) or turned down is recorded once, each
    question with the choice __cancelled__: asked, but never an answer (not followed, not
    overridden, no profile dimension moved). Other failures record nothing. Prints nothing and
    always exits 0.

    \b
    Example:
        plantune hook post-tool-use-failure < payload.json
    """
    _run_hook("post-tool-use-failure", db_path)


@click.command("permission-request")
@db_option
def permission_request(db_path):
    """Let an AskUserQuestion delivered as a permission request through (PermissionRequest hook).

    Never answers nor blocks it: prints no decision, so the host shows its own picker, and
    always exits 0. Answers the host already put in the request are recorded (once); the
    others arrive with post-tool-use or post-tool-use-failure.

    \b
    Example:
        plantune hook permission-request < payload.json
    """
    _run_hook("permission-request", db_path)


@click.command("session-start")
def session_start():
    """Link gstack again where its upgrade undid `plantune gstack link` (SessionStart hook).

    Only the installs you linked; a stat per bin when nothing changed. Prints nothing
    unless one could not be linked again or gstack's own question hooks are back in a
    settings file `hook install` wrote, then one line of context; always exits 0.

    \b
    Example:
        plantune hook session-start < payload.json
    """
    from toolkit.claude import session_start

    session_start.run()


@click.command()
@click.option(
    "--settings",
    "settings_path",
    type=click.Path(dir_okay=False),
    help="Merge the entries into this settings.json instead of printing them.",
)
@click.option(
    "--keep-gstack-hooks",
    is_flag=True,
    help="Leave gstack's own question hooks registered beside plantune's (answers are "
    "then judged and logged twice).",
)
@click.option(
    "--executable",
    default=None,
    help="The plantune to run (default: the absolute path of this one; a bare name "
    "is looked up on PATH). Written absolute and shell-quoted.",
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False),
    help="Pin the database the hooks write to (default: the one they find at run "
    "time from $PLANTUNE_DB or the state root).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Then run each installed command as Claude Code would (sh -c, "
    "PATH=/usr/bin:/bin, a sample payload that records nothing) and report "
    "OK or failed; exit 1 if any failed.",
)
def install(settings_path, keep_gstack_hooks, executable, db_path, check):
    """Print or merge the .claude/settings.json entries that run plantune's hooks.

    PreToolUse and PostToolUse handle AskUserQuestion; SessionStart links gstack again
    after its upgrade (see `plantune gstack link`). The commands name plantune by its
    absolute path, so they work whatever PATH Claude Code runs them with (while it is
    there, plantune's launcher is started by the Python beside it, `PYTHON -I -S
    PLANTUNE hook ...`, as the launcher itself would: one shell start less on every
    call). Without --settings the hooks block is printed. With it, the entries are merged into the file
    (created if missing): an existing plantune entry is repointed, never duplicated;
    gstack's own question hooks are replaced (one handler per event; `plantune hook
    uninstall` puts them back) unless --keep-gstack-hooks; other keys and other tools'
    hooks are kept; and gstack's history under the state root is imported right away
    (progress on stderr), so no hook call has a backlog to import.

    \b
    Example:
        plantune hook install
        plantune hook install --settings ~/.claude/settings.json --check
        plantune hook install --settings .claude/settings.json --db ~/projects/pinned.db
    """
    import json

    from toolkit.claude import settings

    try:
        executable = settings.resolve_executable(executable)
    except settings.SettingsError as e:
        fail(str(e))
    if not settings_path:
        entries = settings.settings_entries(executable, db_path)
        click.echo(json.dumps({"hooks": entries}, indent=2))
        if check:
            _check(
                [(event, groups[0]["hooks"][0]["command"]) for event, groups in entries.items()],
                err=True,
            )
        return
    try:
        outcome, replaced, gstack = settings.install_settings(
            settings_path, executable, db_path, keep_gstack_hooks=keep_gstack_hooks
        )
    except settings.SettingsError as e:
        fail(str(e))
    except OSError as e:
        fail(f"cannot write {settings_path}: {e.strerror or e}")
    for event, status in outcome.items():
        verb = {"added": "added", "present": "already installed", "updated": "command updated"}[
            status
        ]
        click.echo(f"{event}: {verb} ({settings.hook_command(event, executable, db_path)})")
    if not os.access(executable, os.X_OK) or os.path.isdir(executable):
        click.echo(
            f"note: {executable} is not an executable file; the hooks fail until it is", err=True
        )
    for entry in replaced:
        for item in entry["group"].get("hooks", []):
            click.echo(
                f"{entry['event']}: replaced gstack's {item.get('command')} "
                "(`plantune hook uninstall` puts it back)"
            )
    if gstack:
        click.echo(
            f"note: {settings_path} still runs gstack's own question hooks; answers will be "
            "recorded twice until you remove them (install without --keep-gstack-hooks)",
            err=True,
        )
    _initial_import(db_path)
    if check:
        with open(settings_path, encoding="utf-8") as f:
            _check(settings.installed_commands(json.load(f)))


@click.command()
@click.option(
    "--settings",
    "settings_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="The settings.json that `plantune hook install --settings` wrote.",
)
def uninstall(settings_path):
    """Remove plantune's hook entries and put back gstack's hooks that install replaced.

    Other tools' entries and every other key are left as they are.

    \b
    Example:
        plantune hook uninstall --settings ~/.claude/settings.json
    """
    from toolkit.claude import settings

    try:
        removed, restored = settings.uninstall_settings(settings_path)
    except settings.SettingsError as e:
        fail(str(e))
    except OSError as e:
        fail(f"cannot write {settings_path}: {e.strerror or e}")
    for command in removed:
        click.echo(f"removed {command}")
    for command in restored:
        click.echo(f"put back gstack's {command}")
    if not removed and not restored:
        click.echo(f"{settings_path}: no plantune hook entries")


def _initial_import(db_path):
    """Import gstack's history now, with progress on stderr, so no hook call meets it.

    Every batch is committed with its offset: an interrupted import keeps what it read,
    and the next `plantune ingest` (or the hooks' background ingest) does the rest.
    """
    import sys

    from toolkit.cli.app import open_db
    from toolkit.cli.ingest import Progress
    from toolkit.gstack import history, ingest, ingest_base, mirror
    from toolkit.store import paths

    root = paths.state_root()
    if not mirror.belongs_to_state_root(db_path):
        return  # gstack's files feed only the state root's own database
    if not os.path.isdir(root) or not ingest.history_files(root):
        return
    conn = open_db(db_path)
    click.echo(f"Importing gstack's history from {root} ...", err=True)
    progress = Progress(enabled=sys.stderr.isatty(), label="Importing")
    try:
        summary = history.ingest_state_root(conn, root, progress=progress)
    except KeyboardInterrupt:
        progress.close()
        fail("import interrupted; what was read is kept, `plantune ingest` does the rest")
    except (ingest_base.IngestError, OSError) as e:
        progress.close()
        click.echo(f"note: gstack's history was not imported: {e}", err=True)
        return
    except Exception as e:  # noqa: BLE001 - the hooks are installed; say what to run
        progress.close()
        click.echo(
            f"note: gstack's history was not imported ({e}); run `plantune ingest`", err=True
        )
        return
    progress.close()
    click.echo(
        f"Imported {summary.imported:,} new entr{'y' if summary.imported == 1 else 'ies'}"
        f" from {len(summary.files)} file{'s' * (len(summary.files) != 1)}"
        f" ({summary.duplicate:,} already there, {summary.skipped:,} skipped).",
        err=True,
    )


def _check(commands, err=False):
    from toolkit.claude import settings

    failed = 0
    for event, command in commands:
        problem = settings.check_command(event, command)
        failed += bool(problem)
        status = f"failed: {problem}" if problem else "OK"
        click.echo(f"check {event}: {status} ({command})", err=err)
    if failed:
        fail(f"{failed} of {len(commands)} hook commands failed from a minimal PATH")
