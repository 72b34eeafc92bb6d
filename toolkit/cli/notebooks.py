"""``plantune notebooks``: run the analysis notebooks against the database."""

import os

import click

from toolkit.cli.app import db_option, fail, whole_number


@click.group()
def notebooks():
    """Run the analysis notebooks (question-log distributions, threshold calibration).

    \b
    Example:
        plantune notebooks run --out ./shared-notebooks
    """


@notebooks.command(name="run")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder for the executed copies and HTML, written 0600 (default: a notebooks "
    "folder beside the database).",
)
@click.option("--include-synthetic", is_flag=True, help="Let the notebooks use simulated rows.")
@click.option(
    "--write-calibration", is_flag=True, help="Let notebook 02 store the calibration it fits."
)
@click.option("--no-html", is_flag=True, help="Save executed notebooks only, no HTML copies.")
@click.option("--timeout", default="600", show_default=True, help="Seconds allowed per cell.")
@click.option(
    "--param",
    "param",
    multiple=True,
    metavar="NAME=VALUE",
    help="Fill a parameter of the notebooks' parameters cell (repeatable), e.g. target=0.2.",
)
@db_option
def notebooks_run(out_dir, include_synthetic, write_calibration, no_html, timeout, param, db_path):
    """Execute every notebook against the database and save executed copies and HTML.

    --param NAME=VALUE fills a parameter of the notebooks' parameters cell, as papermill's
    -p does: the name matches without regard to case (project fills PROJECT), the value
    takes the type of the parameter's default, and each notebook gets only the parameters
    it declares. The executed copy records what it ran with in an injected cell.

    \b
    Example:
        plantune notebooks run --include-synthetic --out .demo/notebooks
        plantune notebooks run --param project=acme-web --param since=2026-09-01 --param target=0.2
    """
    from toolkit.analysis import notebooks as nbs
    from toolkit.store import paths

    seconds = whole_number(timeout, "--timeout", 1, 86_400)
    path = paths.db_path(db_path)
    out = out_dir or nbs.default_out_dir(path)
    params = {
        "INCLUDE_SYNTHETIC": bool(include_synthetic),
        "WRITE_CALIBRATION": bool(write_calibration),
    }

    def shown(p):
        rel = os.path.relpath(p)
        return p if rel.startswith("..") else rel

    def done(result):
        saved = shown(result["notebook"])
        if result["html"]:
            saved += f" and {shown(result['html'])}"
        click.echo(f"Ran {result['name']} in {result['seconds']:.1f} s → {saved}")

    try:
        notebook_params = nbs.parse_params(param)
        results = nbs.run(
            path,
            out,
            params,
            html_copy=not no_html,
            timeout=seconds,
            on_done=done,
            notebook_params=notebook_params,
        )
    except nbs.NotebookError as e:
        fail(str(e))
    click.echo(f"{len(results)} notebooks executed against {path}.")
