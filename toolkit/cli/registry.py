"""``plantune registry``: the question registry in the database."""

import click

from toolkit.cli.app import db_option, fail, json_option, open_db, print_json
from toolkit.core.vocabulary import plural


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
    from toolkit.core import registry as reg

    conn = open_db(db_path, existing=True)
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


@registry.command()
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--dry-run", is_flag=True, help="Report what would change without writing.")
@click.option(
    "--allow-downgrade",
    "allow_downgrade",
    multiple=True,
    metavar="ID",
    help="Let the file drop ID or make it two-way although it is one-way now "
    "(repeatable; recorded in registry_downgrades).",
)
@db_option
@json_option
def sync(path, dry_run, allow_downgrade, db_path, as_json):
    """Load a gstack question-registry.ts (or a JSON array) as the registry.

    Reports added, changed and removed entries. A file with any entry that breaks
    the registry rules is refused as a whole, naming each entry and why. So is a file
    that drops a one-way question or makes it two-way (the bundled one-way ids and any
    one-way entry already synced are a floor), unless --allow-downgrade names the id.

    \b
    Example:
        plantune registry sync ~/.claude/skills/gstack/scripts/question-registry.ts
        plantune registry sync mine.json --allow-downgrade ship-test-failure-triage
    """
    from toolkit.core import registry as reg

    conn = open_db(db_path)
    try:
        report = reg.sync(conn, path, dry_run=dry_run, allow_downgrade=allow_downgrade)
    except reg.RegistryError as e:
        for problem in e.problems:
            click.echo(f"{path}: {problem}", err=True)
        fail(f"{path}: {e.message}" if e.problems else e.message)
    if as_json:
        print_json(report)
        return
    for eid in report["added"]:
        click.echo(f"+ {eid}")
    for item in report["changed"]:
        click.echo(f"~ {item['id']} ({', '.join(item['fields'])})")
    for eid in report["removed"]:
        click.echo(f"- {eid}")
    for eid in report["downgraded"]:
        click.echo(f"! {eid} is no longer one-way in the registry (allowed, recorded)")
    verb = "Would sync" if dry_run else "Synced"
    click.echo(
        f"{verb} {report['total']} questions from {path}: {len(report['added'])} added, "
        f"{len(report['changed'])} changed, {len(report['removed'])} removed, "
        f"{report['unchanged']} unchanged."
    )


@registry.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--registry",
    "registry_path",
    type=click.Path(dir_okay=False),
    help="Lint against this question-registry.ts or JSON file instead of the database.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Count registry entries that no template uses as drift too (exit 1).",
)
@click.option(
    "--allow-unreferenced",
    is_flag=True,
    help="Unreferenced entries are warnings only (the default; overrides --strict).",
)
@db_option
@json_option
def lint(directory, registry_path, strict, allow_unreferenced, db_path, as_json):
    """Check skill templates (SKILL.md.tmpl, SKILL.md) against the registry; exit 1 on drift.

    Drift: a marker or question_id naming an unregistered id (an example quoted in a
    backtick code span is prose, not an id), or one id marked in several skills'
    templates. A registry entry no template references is a warning, drift only with
    --strict.

    \b
    Example:
        plantune registry lint . --registry scripts/question-registry.ts
        plantune registry lint ~/.claude/skills/gstack --strict
    """
    import os

    from toolkit.core import registry as reg

    if not os.path.isdir(directory):
        fail(f"{directory} is not a directory")
    try:
        if registry_path:
            signal_keys = {k for k in reg.bundled_signal_map()["map"]}
            entries = reg.validate_source(reg.load_source(registry_path), signal_keys)
        else:
            entries = reg.list_questions(open_db(db_path, existing=True))
        report = reg.lint(directory, entries)
    except reg.RegistryError as e:
        for problem in e.problems:
            click.echo(f"{registry_path}: {problem}", err=True)
        fail(f"{registry_path}: {e.message}" if e.problems else e.message)
    if report["files"] == 0:
        fail(f"no SKILL.md or SKILL.md.tmpl files under {directory}")
    drift = bool(
        report["unregistered"]
        or report["duplicates"]
        or (report["unreferenced"] and strict and not allow_unreferenced)
    )
    report["drift"] = drift
    if as_json:
        print_json(report)
    else:
        for item in report["unregistered"]:
            click.echo(f"unregistered  {item['id']}  {', '.join(item['where'])}")
        for item in report["duplicates"]:
            click.echo(f"duplicate     {item['id']}  marked in {', '.join(item['skills'])}")
        for eid in report["unreferenced"]:
            click.echo(f"unreferenced  {eid}")
        warned = report["unreferenced"] and not drift
        click.echo(
            f"{plural(report['files'], 'template file')}, "
            f"{plural(report['referenced'], 'id')} referenced: "
            f"{len(report['unregistered'])} unregistered, {len(report['duplicates'])} duplicate, "
            f"{len(report['unreferenced'])} unreferenced"
            + (" (warnings; --strict fails on them)." if warned else ".")
        )
    if drift:
        raise SystemExit(1)
