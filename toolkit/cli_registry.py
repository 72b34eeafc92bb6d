"""``plantune registry``: the question registry in the database."""

import click

from toolkit.cli import db_option, json_option, open_db, print_json


@click.group()
def registry():
    """List, sync and lint the question registry.

    \b
    Example:
        plantune registry list --json
    """


@registry.command(name="list")
@db_option
@json_option
def list_(db_path, as_json):
    """List every registered question with its skill, category and door type.

    \b
    Example:
        plantune registry list
    """
    from toolkit import registry as reg

    conn = open_db(db_path)
    rows = reg.list_questions(conn)
    if as_json:
        print_json(rows)
        return
    one_way = sum(1 for r in rows if r["door_type"] == "one-way")
    width = max((len(r["id"]) for r in rows), default=10)
    for r in rows:
        door = "ONE-WAY" if r["door_type"] == "one-way" else "two-way"
        options = "|".join(r["options"]) if r["options"] else "-"
        click.echo(f"{r['id'].ljust(width)}  {door}  {r['category']:<12} {options}")
    click.echo(f"\n{len(rows)} questions ({one_way} one-way, {len(rows) - one_way} two-way)")
