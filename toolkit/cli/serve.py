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
@click.option(
    "--no-auth",
    is_flag=True,
    help="Serve without sign-in: anyone who can reach the port reads everything.",
)
@db_option
def serve(port, host, get_path, no_auth, db_path):
    """Browse the database in Datasette: described views, facets, charts, canned queries.

    Read-only: nothing served can change the data, and hooks may keep writing while it
    runs. Only you can read it: each run prints a sign-in link with a token of its own
    (as Jupyter does) and refuses every page, JSON and query to a browser that has not
    opened it; --no-auth drops that. Stop it with Ctrl-C.

    \b
    Example:
        plantune serve --port 8001
        # then open the printed http://127.0.0.1:8001/-/sign-in?token=... link
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

    def ready(url, sign_in):
        if sign_in is None:
            click.echo(f"Serving {path} read-only at {url}  (Ctrl-C stops)")
            click.echo(
                "No sign-in (--no-auth): anyone who can reach this port reads every question "
                "and answer."
            )
            return
        click.echo(f"Serving {path} read-only at {url}  (Ctrl-C stops), to you only.")
        click.echo("To sign in, open this link (it changes every run):")
        click.echo(f"    {sign_in}")

    try:
        serving.serve(path, host=host, port=port, on_ready=ready, auth=not no_auth)
    except serving.ServeError as e:
        fail(str(e))
    click.echo("Stopped.")
