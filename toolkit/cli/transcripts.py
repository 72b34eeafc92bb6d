"""``plantune ingest-transcripts DIR``: backfill questions from Claude Code session transcripts."""

import click

from toolkit.cli.app import db_option, fail, json_option, open_db, print_json


@click.command("ingest-transcripts")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--project",
    help="Record every question under this project slug "
    "(default: resolved from each session's working directory).",
)
@db_option
@json_option
def ingest_transcripts(directory, project, db_path, as_json):
    """Backfill AskUserQuestion answers from Claude Code transcripts under DIRECTORY.

    Each answered question is recorded as the PostToolUse hook would record it
    (source transcript-import). Unanswered, rejected and interrupted calls are
    counted, not recorded. Running it again adds nothing.

    \b
    Example:
        plantune ingest-transcripts ~/.claude/projects
    """
    from toolkit.claude import transcripts
    from toolkit.store import paths

    if project is not None and not paths.is_valid_slug(project):
        fail(f"invalid project slug {project!r}: use letters, digits, '.', '_' and '-'")
    try:
        transcripts.check_root(directory)  # before the database is created
    except transcripts.TranscriptError as e:
        fail(str(e))
    conn = open_db(db_path)
    try:
        summary = transcripts.import_transcripts(conn, directory, project=project)
    except transcripts.TranscriptError as e:
        fail(str(e))
    if as_json:
        print_json(summary.as_dict())
        return
    for problem in summary.problems:
        click.echo(problem, err=True)
    s = summary
    click.echo(
        f"Read {s.files} transcript file{'s' if s.files != 1 else ''}: {s.calls} AskUserQuestion "
        f"call{'s' if s.calls != 1 else ''}; imported {s.imported} question"
        f"{'s' if s.imported != 1 else ''}, {s.already_imported} already imported, "
        f"{s.captured_by_hook} already captured by hooks."
    )
    skipped = s.unanswered + s.rejected + s.unreadable + s.refused
    if skipped:
        click.echo(
            f"Skipped: {s.unanswered} unanswered, {s.rejected} rejected or interrupted, "
            f"{s.unreadable} unreadable, {s.refused} refused."
        )
