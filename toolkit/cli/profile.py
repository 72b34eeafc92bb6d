"""``plantune profile``: see, edit, export and delete your developer profile."""

import click

from toolkit.cli.app import db_option, fail, gstack_files_apply, json_option, open_db, print_json
from toolkit.core.vocabulary import plural

project_option = click.option(
    "--project",
    "-p",
    help="Project slug (default: the current directory's project; __all__ for all).",
)


def _context(db_path, project=None, existing=True):
    """Open the database, pick up gstack's files and resolve the project.

    Commands that only read (``existing``) refuse a --db that does not exist.
    """
    from toolkit.gstack import profile_sync
    from toolkit.store import paths

    conn = open_db(db_path, existing=existing)
    project = project or paths.resolve_slug() or "unknown"
    if gstack_files_apply(db_path):
        profile_sync.sync(conn, paths.state_root(), project)
    return conn, project


def _refresh_mirror(conn, project):
    from toolkit.gstack import profile_sync
    from toolkit.store import paths

    if profile_sync.mirror_enabled():
        profile_sync.publish(conn, paths.state_root(), project)


def _bar(value, width=20):
    filled = int(round(value * width))
    return "█" * filled + "·" * (width - filled)


@click.group()
def profile():
    """Your developer profile: what you declared, what your answers show, and the gap.

    \b
    Example:
        plantune profile show
        plantune profile declare autonomy 0.7
    """


@profile.command()
@project_option
@click.option(
    "--synthetic/--real",
    default=None,
    help="Show the profile of simulated (or real) history. Default: real, except in "
    "a demo database (make demo, simulate --new-db), whose history is simulated.",
)
@db_option
@json_option
def show(project, synthetic, db_path, as_json):
    """Show declared and inferred values, the gap and whether there is enough data.

    Simulated and real history are never mixed: the profile shown is the real one, or in a
    demo database the simulated one (--real and --synthetic choose).

    \b
    Example:
        plantune profile show
        plantune profile show --project __all__ --json
        plantune profile show --synthetic
    """
    from toolkit.core import profile as prof
    from toolkit.store.db import is_demo

    conn, project = _context(db_path, project)
    if synthetic is None:
        synthetic = is_demo(conn)
    flag = 1 if synthetic else 0
    dec = prof.declared(conn, flag)
    inf = prof.inferred(conn, project, flag)
    div = prof.diversity(conn, project, flag)
    gaps = prof.gap(dec, inf["values"])
    if as_json:
        print_json(
            {
                "project": project,
                "synthetic": bool(synthetic),
                "declared": dec,
                "inferred": inf,
                "diversity": div,
                "gap": gaps,
                "gate_message": prof.gate_message(div),
            }
        )
        return
    click.echo(
        f"Profile for {'all projects' if project == '__all__' else project}"
        f"{' (simulated history)' if synthetic else ''}"
    )
    click.echo("")
    width = max(len(d) for d in prof.DIMENSIONS)
    for d in prof.DIMENSIONS:
        low, high = prof.DIMENSION_WORDS[d]
        line = f"  {d.ljust(width)}  inferred {inf['values'][d]:.3f} {_bar(inf['values'][d])}"
        if d in dec:
            word = prof.gap_word(gaps[d], div["sample_size"])
            line += f"  declared {dec[d]:.3f}  gap {gaps[d]:.3f} ({word})"
        click.echo(line)
        click.echo(f"  {''.ljust(width)}  0 = {low}, 1 = {high}")
    click.echo("")
    if div["sample_size"]:
        click.echo(
            f"Observed: {plural(div['sample_size'], 'event')}, "
            f"{plural(div['skills_covered'], 'skill')}, "
            f"{plural(div['question_ids_covered'], 'question')} on "
            f"{plural(div['distinct_days'], 'day')} "
            f"(from {div['first_day']} to {div['last_day']})."
        )
    else:
        click.echo("Observed: no answers recorded for this project yet.")
    message = prof.gate_message(div)
    click.echo(message if message else "Enough observed data: the inferred values are meaningful.")
    if not dec:
        click.echo(
            "Nothing declared yet: run `plantune profile setup` to say how you like to work."
        )


@profile.command()
@project_option
@db_option
@json_option
def derive(project, db_path, as_json):
    """Recompute the inferred profile from the question log (a query: always current).

    \b
    Example:
        plantune profile derive --project my-repo
    """
    from toolkit.core import profile as prof

    conn, project = _context(db_path, project)
    if not prof.signals_loaded(conn):
        fail("the registry or signal map is empty; run `plantune init` or `plantune registry sync`")
    inf = prof.inferred(conn, project)
    div = prof.diversity(conn, project)
    if as_json:
        print_json(
            {
                "project": project,
                "values": inf["values"],
                "totals": inf["totals"],
                "events": inf["events"],
                "diversity": div,
            }
        )
        return
    click.echo(
        f"{project}: {plural(div['sample_size'], 'event')}, "
        f"{plural(div['skills_covered'], 'skill')}, "
        f"{plural(div['question_ids_covered'], 'question')}, {plural(div['distinct_days'], 'day')}"
    )
    for d in prof.DIMENSIONS:
        click.echo(
            f"  {d:<18} {inf['values'][d]:.3f}  (total {inf['totals'][d]:+.2f} from "
            f"{plural(inf['events'][d], 'event')})"
        )


@profile.command()
@project_option
@db_option
@json_option
def gap(project, db_path, as_json):
    """Compare what you declared with what your answers show, dimension by dimension.

    A gap above 0.3 is a mismatch only on enough answers (as `profile mismatch` needs);
    on fewer it reads "wide".

    \b
    Example:
        plantune profile gap
    """
    from toolkit.core import profile as prof

    conn, project = _context(db_path, project)
    dec = prof.declared(conn)
    values = prof.inferred(conn, project)["values"]
    gaps = prof.gap(dec, values)
    # The sample `profile mismatch` uses, so the two never disagree about a mismatch.
    sample = prof.diversity(conn, project)["sample_size"]
    rows = [
        {
            "dimension": d,
            "declared": dec[d],
            "inferred": values[d],
            "gap": gaps[d],
            "gap_word": prof.gap_word(gaps[d], sample),
        }
        for d in dec
    ]
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo(
            "Nothing declared yet: run `plantune profile setup` or `plantune profile declare`."
        )
        return
    for r in rows:
        word = r["gap_word"]
        if word == prof.WIDE_GAP_WORD:
            word += " (too few answers to call it a mismatch)"
        click.echo(
            f"  {r['dimension']:<18} declared {r['declared']:.3f}  inferred "
            f"{r['inferred']:.3f}  gap {r['gap']:.3f}  {word}"
        )


@profile.command()
@click.argument("dimension")
@project_option
@db_option
@json_option
def trace(dimension, project, db_path, as_json):
    """List every answer that moved DIMENSION, with its delta.

    \b
    Example:
        plantune profile trace scope_appetite
    """
    from toolkit.core import profile as prof

    if dimension not in prof.DIMENSIONS:
        fail(f"unknown dimension '{dimension}' (expected one of: {', '.join(prof.DIMENSIONS)})")
    conn, project = _context(db_path, project)
    rows = prof.trace(conn, project, dimension)
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo(f"No answers in {project} moved {dimension}.")
        return
    total = 0
    for r in rows:
        total += round(r["delta"] * 1000000)
        click.echo(f"  {r['ts'][:19]}  {r['question_id']}  → {r['user_choice']}  ({r['delta']:+g})")
    click.echo(f"{len(rows)} answers, total {total / 1000000:+g}")


@profile.command()
@project_option
@db_option
@json_option
def mismatch(project, db_path, as_json):
    """Flag dimensions where what you declared and what you do differ by more than 0.3.

    \b
    Example:
        plantune profile mismatch
    """
    from toolkit.core import profile as prof

    conn, project = _context(db_path, project)
    div = prof.diversity(conn, project)
    flagged = prof.mismatch(
        prof.declared(conn), prof.inferred(conn, project)["values"], div["sample_size"]
    )
    if as_json:
        print_json(
            {
                "sample_size": div["sample_size"],
                "enough": flagged is not None,
                "mismatches": [
                    dict(zip(("dimension", "declared", "inferred", "gap"), f))
                    for f in flagged or []
                ],
            }
        )
        return
    if flagged is None:
        click.echo(
            f"Not enough data to compare yet: {plural(div['sample_size'], 'event')}, "
            f"need {prof.MISMATCH_MIN_SAMPLE}."
        )
    elif not flagged:
        click.echo("No mismatch: what you declared agrees with what you do.")
    else:
        for dim, d, i, g in flagged:
            click.echo(f"  {dim}: you declared {d:.3f} but your answers say {i:.3f} (gap {g:.3f})")


# ignore_unknown_options lets a negative VALUE reach the range check instead of
# being parsed as an option.
@profile.command(context_settings={"ignore_unknown_options": True})
@click.argument("dimension")
@click.argument("value")
@db_option
def declare(dimension, value, db_path):
    """Declare your own value (0 to 1) for one dimension.

    \b
    Example:
        plantune profile declare scope_appetite 0.8
    """
    from toolkit.core import profile as prof
    from toolkit.store import db

    try:
        number = prof.parse_declared_value(dimension, value)
    except prof.ProfileError as e:
        fail(str(e))
    conn, project = _context(db_path, existing=False)
    with db.transaction(conn):
        prof.set_declared(conn, {dimension: number}, source="plantune")
    _refresh_mirror(conn, project)
    click.echo(f"Declared {dimension} = {number:g}")


@profile.command()
@click.option("--answers", help="Five letters A/B/C, one per dimension, e.g. a,b,c,b,a.")
@db_option
def setup(answers, db_path):
    """Answer five plain-English questions, one per dimension, to set your declared profile.

    A is about 0.25, B is 0.5 (balanced) and C is about 0.85.

    \b
    Example:
        plantune profile setup
        plantune profile setup --answers a,b,c,b,a
    """
    from toolkit.core import profile as prof
    from toolkit.store import db

    if answers is not None:
        try:
            values = prof.setup_answers(answers)
        except prof.ProfileError as e:
            fail(str(e))
    else:
        values = {}
        for dim, question, options in prof.SETUP_QUESTIONS:
            click.echo(question)
            for letter, text in zip("ABC", options):
                click.echo(f"  {letter}) {text}")
            letter = click.prompt(
                "Your answer", type=click.Choice(["A", "B", "C", "a", "b", "c"]), show_choices=False
            )
            values[dim] = prof.SETUP_VALUES[letter.lower()]
            click.echo("")
    conn, project = _context(db_path, existing=False)
    with db.transaction(conn):
        prof.set_declared(conn, values, source="setup")
    _refresh_mirror(conn, project)
    for dim, value in values.items():
        click.echo(f"  {dim:<18} {value:g}")
    click.echo("Declared profile saved.")


@profile.command()
@click.argument("path", type=click.Path(dir_okay=False))
@project_option
@click.option("--force", is_flag=True, help="Overwrite PATH if it exists.")
@db_option
def export(path, project, force, db_path):
    """Write your whole profile to PATH as JSON (opt-in; nothing leaves otherwise).

    \b
    Example:
        plantune profile export ~/my-profile.json
    """
    from toolkit.core import profile as prof

    conn, project = _context(db_path, project)
    try:
        doc = prof.export(conn, path, project, force=force)
    except prof.ProfileError as e:
        fail(str(e))
    click.echo(
        f"Exported profile ({plural(len(doc['sessions']), 'session')}, "
        f"{plural(doc['inferred']['sample_size'], 'event')} in {project}) to {path}"
    )


@profile.command()
@click.option(
    "--project", "-p", help="Delete only this project's events (default: current project)."
)
@click.option(
    "--all", "all_", is_flag=True, help="Delete every event, the declared profile and sessions."
)
@click.option(
    "--files",
    is_flag=True,
    help="Also remove gstack's copies (question-log.jsonl, developer-profile.json).",
)
@click.option("--yes", is_flag=True, help="Really delete (required).")
@db_option
@json_option
def delete(project, all_, files, yes, db_path, as_json):
    """Delete profile data for good: rows, gstack's lines, then VACUUM so no bytes remain.

    Without --all: the project's question events, its office-hours sessions, pacing
    findings and runs, and the free text typed with its preferences. With --all: all of
    that for every project, plus the declared profile and every preference event (the
    history behind the preferences). gstack's question-log.jsonl lines of the deleted
    events and their question-events.jsonl lines are removed (atomic rewrite) and
    remembered as deleted, so no copy of them is imported again; hook-errors.log loses its
    lines about them. Preferences in force are kept (`plantune pref clear` removes those).

    \b
    Example:
        plantune profile delete --project old-repo --yes
        plantune profile delete --all --yes
    """
    from toolkit.claude import hook_entries
    from toolkit.core import profile as prof
    from toolkit.gstack import mirror, profile_sync, spool
    from toolkit.store import db, paths, safe_io

    if project and all_:
        fail("use either --project or --all, not both")
    conn = open_db(db_path)
    root = paths.state_root()
    scope = None if all_ else (project or paths.resolve_slug() or "unknown")
    if not yes:
        counts = prof.delete_counts(conn, scope)
        what = "everything" if scope is None else f"project {scope}"
        events = plural(counts["question_log"], "question event")
        fail(f"refusing to delete {what} ({events}) without --yes")
    own_files = gstack_files_apply(db_path)
    problems = []
    if own_files:
        profile_sync.sync(conn, root, scope or "unknown", legacy=False)
    conn.execute("PRAGMA secure_delete = ON")
    # One write transaction for the whole delete, so no import (ingest, the background
    # backlog import, a spool drain) commits in the middle of it: events spooled while the
    # database was busy are recorded first and deleted with the rest, the rows and gstack's
    # lines go (their keys tombstoned), and an import that read them before commits nothing
    # of them after (the tombstones refuse every one).
    with db.transaction(conn):
        if own_files:
            drained = spool.drain(conn, unmirrored=lambda p: scope is None or p == scope)
            problems.extend(drained.failed)
        texts = prof.deleted_texts(conn, scope)
        counts = prof.delete(conn, scope)
        # gstack's files lose the deleted lines too (tombstoned, so no copy comes back),
        # and hook-errors.log its lines about them: when they feed this database.
        if own_files:
            problems.extend(mirror.forget(conn, scope)[1])
    if own_files:
        problems.extend(spool.forget(scope))
        try:
            hook_entries.scrub_error_log(texts, everything=scope is None)
        except OSError as e:
            problems.append(f"could not clean hook-errors.log: {safe_io.describe(e)}")
    removed = []
    if files:
        removed = profile_sync.remove_files(root, scope)
        profile_sync.forget_files(conn, removed)
    if profile_sync.mirror_enabled() and not (files and scope is None):
        _refresh_mirror(conn, paths.resolve_slug() or "unknown")
    if not prof.vacuum(conn):
        problems.append(
            "another process still reads the database: the deleted data leaves its"
            " write-ahead log at the next checkpoint"
        )
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)
    if as_json:
        print_json({"scope": scope or "__all__", "deleted": counts, "files_removed": removed})
        return
    what = "all projects" if scope is None else scope
    parts = ", ".join(f"{n} {table}" for table, n in counts.items())
    click.echo(f"Deleted {what}: {parts}. Database vacuumed.")
    for path in removed:
        click.echo(f"Removed {path}")
