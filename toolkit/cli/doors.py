"""``plantune doors``: explain a door decision, and audit auto-decisions on one-way doors."""

import sys

import click

from toolkit.cli.app import db_option, fail, json_option, open_db, print_json


@click.group()
def doors():
    """One-way doors: why a question is one-way, whether one was ever auto-decided, and
    the user's corrections of false alarms.

    \b
    Example:
        plantune doors explain "Drop the users table?"
        plantune doors audit
        plantune doors allow ship-todos-create --source plan-tune --reason "creating a file"
    """


@doors.command()
@click.argument("text")
@click.option(
    "--id",
    "question_id",
    metavar="ID",
    help="Also decide for this question id: registry, recorded facts and the text.",
)
@db_option
@json_option
def explain(text, question_id, db_path, as_json):
    """Show the door decision for TEXT ("-" reads stdin): decision, rule and language, normalised text.

    \b
    Example:
        plantune doors explain "Make the S3 bucket public?"
        echo "git push -f?" | plantune doors explain - --id ship-push --json
    """
    from toolkit.core import doors as rules

    data = sys.stdin.buffer.read() if text == "-" else text
    out = rules.explain(data)
    if question_id is not None:
        from toolkit.core import door_checks

        verdict = door_checks.door_for(open_db(db_path), question_id, data)
        out["question_id"] = question_id
        out["canonical_id"] = rules.canonical_id(question_id)
        out["question_door"] = rules.ONE_WAY if verdict.one_way else rules.TWO_WAY
        out["question_reason"] = verdict.reason
    if as_json:
        print_json(out)
        return
    click.echo(f"decision:   {out['door']}")
    click.echo(f"reason:     {out['reason']}")
    if out.get("rule"):
        click.echo(f"rule:       {out['rule']} ({out.get('language')})")
    if out.get("problem"):
        click.echo(f"problem:    {out['problem']}")
    if out.get("normalised") is not None:
        click.echo(f"normalised: {out['normalised']}")
    if question_id is not None:
        click.echo(
            f"question:   {out['canonical_id']} is {out['question_door']}"
            f" ({out['question_reason']})"
        )


@doors.command()
@click.option(
    "--allowed",
    is_flag=True,
    help="List every allow and undo (plantune doors allow) instead; exits 0.",
)
@db_option
@json_option
def audit(allowed, db_path, as_json):
    """List every auto-decision on a question that is one-way now; exit 1 if any.

    Every recorded question is read again first with the current rules: its summary and
    the header, options and recommendation of its logged line, in every language. Then
    the sources: the registry, a logged door_type, plantune's reading of any recorded
    question, a one-way pacing finding. A question that became one-way after it was
    auto-decided is listed too; one the user allows (doors allow) is not.

    \b
    Example:
        plantune doors audit --json
        plantune doors audit --allowed
    """
    from toolkit.core import allows
    from toolkit.core import audit as audits
    from toolkit.store.db import sqlite3

    conn = open_db(db_path)
    if allowed:
        _list_allowed(allows.events(conn), as_json)
        return

    def progress(done, total):
        if total >= 50_000:
            click.echo(f"re-reading recorded questions: {done:,}/{total:,}", err=True)

    try:
        audits.reclassify(conn, progress=progress)
    except sqlite3.Error as e:  # a locked or read-only database is still audited
        click.echo(f"plantune: questions not re-read ({e}); auditing what is recorded", err=True)
    rows = audits.audit(conn)
    if as_json:
        print_json({"count": len(rows), "rows": rows})
    elif not rows:
        click.echo("No auto-decision on a one-way question.")
    else:
        for r in rows:
            summary = (r["question_summary"] or "").replace("\n", " ")
            summary = summary if len(summary) <= 60 else summary[:59] + "…"
            click.echo(
                f"{r['ts']}  {r['project']}  {r['question_id']}  by {r['decided_by']}"
                f"  flagged by {r['flagged_by']}  {summary}"
            )
    if rows:
        if not as_json:
            n = len(rows)
            click.echo(
                f"{n} auto-decision{'s' if n != 1 else ''} on one-way questions: "
                "one-way doors must always be asked; please report this.",
                err=True,
            )
        raise SystemExit(1)


def _list_allowed(events, as_json):
    if as_json:
        print_json({"count": len(events), "events": events})
        return
    if not events:
        click.echo("No question was ever allowed.")
        return
    for e in events:
        state = "in force" if e["in_force"] else "not in force"
        reason = f"  ({e['reason']})" if e["reason"] else ""
        click.echo(
            f"{e['ts']}  {e['action']:<5}  {e['question_id']}  by {e['source']}  {state}{reason}"
        )


@doors.command()
@click.argument("question_id")
@click.option(
    "--source",
    help="Who asked for it: plan-tune or inline-user (anything else exits 2).",
)
@click.option("--reason", metavar="TEXT", help="Why it is not one-way, in the user's words.")
@click.option("--undo", is_flag=True, help="Take the allow back: the question is read again.")
@db_option
@json_option
def allow(question_id, source, reason, undo, db_path, as_json):
    """Mark QUESTION_ID two-way for you although the classifier read it as one-way.

    For a false alarm: the question's text, its id's words or a recorded question read as
    one-way. A registry one-way id, a skill's approval gate, a logged door_type one-way
    and a one-way pacing finding can never be allowed (exit 1, the fact named). Only the
    user may allow (--source plan-tune or inline-user; anything else exits 2, nothing
    written). The allow covers what was recorded up to it: the same text asked again is
    two-way, a new text the classifier reads as one-way is asked. Every allow and undo
    is an event: plantune doors audit --allowed.

    \b
    Example:
        plantune doors allow ship-todos-create --source plan-tune --reason "creates a file"
        plantune doors allow --undo ship-todos-create
    """
    from toolkit.core import allows
    from toolkit.store import db

    conn = open_db(db_path)
    try:
        with db.transaction(conn):
            if undo:
                event = allows.undo(conn, question_id, source or "plan-tune")
            else:
                if source is None:
                    fail("--source is required (one of: plan-tune, inline-user)")
                event = allows.allow(conn, question_id, source, reason)
    except allows.AllowError as e:
        fail(e.message, e.exit_code)
    if as_json:
        print_json({"question_id": question_id, "event": event})
    elif event is None:
        click.echo(f"NOOP: {question_id} was not allowed")
    elif undo:
        click.echo(f"OK: {question_id} is read as the classifier reads it again")
    else:
        click.echo(f"OK: {question_id} is two-way for you (source: {source})")
