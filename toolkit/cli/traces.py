"""``plantune ingest-traces``: load run trace indexes into the database."""

import os

import click

from toolkit.cli.app import db_option, fail, json_option, open_db, print_json


def find_trace_projects(root):
    """Project folders under ``root`` that hold a ``.plantune/trace/index.jsonl``.

    ``root`` may itself be a project folder, its ``.plantune`` folder or the trace folder.
    """
    root = os.path.abspath(root)
    parts = root.split(os.sep)
    # Accept the inner folders too: walk back up to the folder that owns .plantune.
    for inner in ("trace", ".plantune"):
        if parts and parts[-1] == inner:
            parts = parts[:-1]
    root = os.sep.join(parts) or os.sep
    found = []
    for dirpath, dirnames, _ in os.walk(root):
        if os.path.isfile(os.path.join(dirpath, ".plantune", "trace", "index.jsonl")):
            found.append(dirpath)
        # Never descend into bulky or private folders.
        dirnames[:] = [
            d for d in dirnames if d not in (".git", "node_modules", ".venv", ".plantune")
        ]
    return sorted(found)


@click.command(name="ingest-traces")
@click.argument("directory", type=click.Path(file_okay=False))
@db_option
@json_option
def ingest_traces(directory, db_path, as_json):
    """Load every .plantune/trace/index.jsonl under DIRECTORY into trace_runs (idempotent).

    DIRECTORY is a project folder (or a folder of projects); runs already in the
    database are left as they are, corrupt index lines are reported and skipped.

    \b
    Example:
        plantune ingest-traces ~/code
    """
    from toolkit.guidance import files, traces

    if not os.path.isdir(directory):
        fail(f"{directory} is not a folder")
    projects = find_trace_projects(directory)
    if not projects:
        fail(f"no .plantune/trace/index.jsonl found under {directory}")
    conn = open_db(db_path)
    results = []
    for project_dir in projects:
        summary = traces.ingest_index(conn, files.Layout(project_dir))
        for bad in summary["bad_lines"]:
            click.echo(
                f"{os.path.join(project_dir, bad['file'])}:{bad['line']}: {bad['reason']}", err=True
            )
        results.append({"project_dir": project_dir, **summary})
    if as_json:
        print_json(results)
        return
    for r in results:
        click.echo(
            f"{r['project_dir']}: {r['inserted']} new runs, "
            f"{r['already_present']} already present, {len(r['bad_lines'])} bad lines"
        )
    total = sum(r["inserted"] for r in results)
    click.echo(f"Ingested {total} new runs from {len(results)} project(s).")
