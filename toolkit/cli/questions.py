"""``plantune log``, ``plantune check`` and ``plantune pref``: the hot write path, natively.

Same rules as gstack-question-log and gstack-question-preference (one library, two thin
command layers), plus plantune's extensions: ``phase`` on question events, global
preferences, ``--json`` output and an explicit ``--project``.
"""

import click

from toolkit.cli.app import db_option, fail, json_option, open_db, print_json, require_database
from toolkit.core.errors import Refused

_PROJECT_HELP = (
    "Project slug (default: $GSTACK_PROJECT_SLUG, else resolved from the current directory)."
)


def _project(project):
    from toolkit.cli.fast import project_slug as resolve

    try:
        return resolve(project)
    except Refused as e:
        fail(e.message)


def _warn(warning):
    if warning:
        click.echo(f"plantune: {warning}", err=True)


def _pickup(conn, slug):
    from toolkit.gstack import mirror, pickup

    if mirror.enabled():
        _warn(pickup.pickup(conn, slug))


def _emit(run, **kwargs):
    """Run a shared hot-path command and print its output the way click prints."""
    try:
        result = run(**kwargs)
    except Refused as e:
        fail(e.message, e.exit_code)
    for line in result.err:
        click.echo(line, err=True)
    for line in result.out:
        click.echo(line)


@click.command()
@click.argument("event", metavar="JSON|-")
@click.option("--project", help=_PROJECT_HELP)
@db_option
@json_option
def log(event, project, db_path, as_json):
    """Record one question event (gstack-question-log's rules, plus an optional phase).

    EVENT is the JSON object, or - to read it from stdin. phase is one of ceo, design,
    eng, dx, other, unknown (default unknown). Prints gstack's DEDUP line when the same
    source, tool_use_id and question_index is among the project's last 100 events.

    \b
    Example:
        plantune log '{"skill":"ship","question_id":"ship-todos-create",
          "question_summary":"Create TODOS.md?","user_choice":"accept","phase":"eng"}'
    """
    from toolkit.cli.fast import run_log

    _emit(run_log, event=event, project=project, db_path=db_path, as_json=as_json)


@click.command()
@click.argument("question_id")
@click.option(
    "--summary-stdin",
    is_flag=True,
    help="Read the question text from stdin for the one-way keyword net.",
)
@click.option(
    "--question-stdin",
    is_flag=True,
    help="Read the whole question from stdin as JSON (question, header, options with"
    " label and description, recommendation): every part is read for one-way doors.",
)
@click.option("--project", help=_PROJECT_HELP)
@click.option(
    "--include-synthetic",
    is_flag=True,
    help="Let simulated preferences count too (a demo database always does).",
)
@db_option
@json_option
def check(question_id, summary_stdin, question_stdin, project, include_synthetic, db_path, as_json):
    """Say whether to ask a question: ASK_NORMALLY or AUTO_DECIDE, with NOTE lines.

    One-way doors (registry, else the keyword net on the piped summary) are always asked;
    so are options inside a split chain (ids containing -split-). Otherwise never-ask and
    ask-only-for-one-way auto-decide. The project's preference beats the global one.
    Simulated preferences (plantune simulate) never count, unless --include-synthetic is
    given or the database is a demo database.

    \b
    Example:
        echo "Drop the users table?" | plantune check adhoc-db-cleanup --summary-stdin
        echo '{"question": "Which cleanup?", "options": [{"label": "Drop the users table"}]}' \
          | plantune check adhoc-db-cleanup --question-stdin
    """
    from toolkit.cli.fast import run_check

    _emit(
        run_check,
        question_id=question_id,
        summary_stdin=summary_stdin,
        question_stdin=question_stdin,
        project=project,
        db_path=db_path,
        as_json=as_json,
        include_synthetic=include_synthetic,
    )


@click.group()
def pref():
    """Set, list, clear and count question preferences (per project, or --global).

    \b
    Example:
        plantune pref set ship-todos-create never-ask --source plan-tune
        plantune pref list
    """


def _scope(global_, project):
    from toolkit.store.db import GLOBAL_SCOPE

    if global_ and project:
        fail("use either --global or --project, not both")
    return GLOBAL_SCOPE if global_ else _project(project)


_global_option = click.option(
    "--global",
    "global_",
    is_flag=True,
    help="The global scope (every project without its own preference).",
)


@pref.command(name="set")
@click.argument("question_id")
@click.argument("preference", metavar="PREF")
@click.option(
    "--source",
    required=True,
    help="Who asked for it: plan-tune or inline-user (anything else exits 2).",
)
@click.option("--free-text", help="The user's own words, kept with the event.")
@_global_option
@click.option("--project", help=_PROJECT_HELP)
@db_option
def set_(question_id, preference, source, free_text, global_, project, db_path):
    """Set PREF (always-ask, never-ask, ask-only-for-one-way) for QUESTION_ID.

    Only user-originated sources may write (exit 2 otherwise, nothing written), and a
    one-way question cannot be silenced (exit 1).

    \b
    Example:
        plantune pref set ship-changelog-voice-polish never-ask --source inline-user
    """
    from toolkit.core import preferences
    from toolkit.gstack import mirror

    scope = _scope(global_, project)
    conn = open_db(db_path)
    payload = {"question_id": question_id, "preference": preference, "source": source}
    if free_text is not None:
        payload["free_text"] = free_text
    try:
        qid, value, source, free_text = preferences.validate_write(conn, payload)
    except preferences.PreferenceError as e:
        fail(e.message, e.exit_code)
    _, warning = mirror.set_preference(
        conn, scope, qid, value, source, free_text, enabled=mirror.enabled()
    )
    _warn(warning)
    click.echo(f"OK: {qid} → {value} (source: {source}, scope: {scope})")


@pref.command(name="list")
@_global_option
@click.option("--project", help=_PROJECT_HELP)
@click.option("--all", "all_", is_flag=True, help="Every scope, not just this project and global.")
@db_option
@json_option
def list_(global_, project, all_, db_path, as_json):
    """List preferences: this project's and the global ones (or one scope, or --all).

    \b
    Example:
        plantune pref list --json
    """
    from toolkit.store.db import GLOBAL_SCOPE

    conn = open_db(db_path, existing=True)
    sql = (
        "SELECT scope, question_id, CASE preference WHEN 'unknown' THEN raw_value"
        " ELSE preference END AS preference, source, synthetic, updated_at FROM preferences"
    )
    if all_:
        rows = conn.execute(sql + " ORDER BY scope, rowid").fetchall()
    elif global_:
        rows = conn.execute(sql + " WHERE scope = ? ORDER BY rowid", (GLOBAL_SCOPE,)).fetchall()
    else:
        slug = _project(project)
        _pickup(conn, slug)
        rows = conn.execute(
            sql + " WHERE scope IN (?, ?) ORDER BY scope = ?, rowid",
            (slug, GLOBAL_SCOPE, GLOBAL_SCOPE),
        ).fetchall()
    data = [dict(r, synthetic=bool(r["synthetic"])) for r in rows]
    if as_json:
        print_json(data)
        return
    if not data:
        click.echo("(no preferences)")
        return
    from toolkit.store.db import is_demo

    simulated = ", simulated" if is_demo(conn) else ", simulated: never used for decisions"
    width = max(len(r["question_id"]) for r in data)
    for r in data:
        mark = simulated if r["synthetic"] else ""
        click.echo(
            f"{r['scope']}  {r['question_id'].ljust(width)}  {r['preference']}"
            f"  ({r['source']}, {r['updated_at']}{mark})"
        )


@pref.command(name="clear")
@click.argument("question_id", required=False)
@_global_option
@click.option("--project", help=_PROJECT_HELP)
@db_option
def clear(question_id, global_, project, db_path):
    """Clear the preference for QUESTION_ID, or every preference of the scope.

    \b
    Example:
        plantune pref clear ship-changelog-voice-polish
    """
    from toolkit.gstack import mirror

    scope = _scope(global_, project)
    conn = open_db(db_path)
    removed, warning = mirror.clear_preferences(conn, scope, question_id, enabled=mirror.enabled())
    _warn(warning)
    if question_id is None:
        click.echo(f"OK: cleared all preferences ({len(removed)} in {scope})")
    elif removed:
        click.echo(f"OK: cleared {question_id}")
    else:
        click.echo(f"NOOP: no preference set for {question_id}")


@pref.command(name="stats")
@_global_option
@click.option("--project", help=_PROJECT_HELP)
@db_option
@json_option
def stats(global_, project, db_path, as_json):
    """Count preferences by value; silencing a one-way question counts as inert.

    \b
    Example:
        plantune pref stats --global
    """
    from toolkit.core import preferences

    require_database(db_path)
    scope = _scope(global_, project)
    conn = open_db(db_path)
    _pickup(conn, scope)
    counts = preferences.stats(conn, scope)
    if as_json:
        print_json(counts)
        return
    for line in preferences.stats_lines(counts):
        click.echo(line)
