"""``plantune serve``: browse the database in Datasette, read-only."""

import click

from toolkit.cli.app import db_option, fail


@click.command()
@click.option(
    "--port",
    "-p",
    type=click.IntRange(0, 65535),
    default=8001,
    show_default=True,
    help="Port to listen on (0 picks a free one).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to listen on; keep 127.0.0.1 unless you mean to share your history.",
)
@click.option(
    "--get",
    "get_path",
    metavar="PATH",
    help="Print one page (e.g. /plantune/phase_counts.json) and exit instead of "
    "serving; exit 1 unless it answers 200.",
)
@db_option
def serve(port, host, get_path, db_path):
    """Browse the database in Datasette: described views, facets, charts, canned queries.

    Read-only: nothing served can change the data, and hooks may keep writing while it
    runs. Stop it with Ctrl-C.

    \b
    Example:
        plantune serve --port 8001
        # then open http://127.0.0.1:8001/plantune
        plantune serve --get /plantune/phase_counts.json
    """
    from toolkit.analysis import serve as serving
    from toolkit.store import paths

    path = paths.db_path(db_path)
    if get_path:
        try:
            status, body = serving.get(path, get_path)
        except serving.ServeError as e:
            fail(str(e))
        if status != 200:
            fail(f"{get_path} answered HTTP {status}")
        click.echo(body)
        return

    def ready(url):
        click.echo(f"Serving {path} read-only at {url}  (Ctrl-C stops)")

    try:
        serving.serve(path, host=host, port=port, on_ready=ready)
    except serving.ServeError as e:
        fail(str(e))
    click.echo("Stopped.")
