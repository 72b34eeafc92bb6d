"""``plantune doors``: explain a door decision, and audit auto-decisions on one-way doors."""

import sys

import click

from toolkit.cli.app import db_option, json_option, open_db, print_json


@click.group()
def doors():
    """One-way doors: why a question is one-way, and whether one was ever auto-decided.

    \b
    Example:
        plantune doors explain "Drop the users table?"
        plantune doors audit
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
        verdict = rules.door_for(open_db(db_path), question_id, data)
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
@db_option
@json_option
def audit(db_path, as_json):
    """List every auto-decision on a question that is one-way by any source; exit 1 if any.

    Sources: the registry, a logged door_type, plantune's classification of any recorded
    summary (read again first with the current rules), a one-way pacing finding. A
    question that became one-way after it was auto-decided is listed too.

    \b
    Example:
        plantune doors audit --json
    """
    from toolkit.core import doors as rules
    from toolkit.store.db import sqlite3

    conn = open_db(db_path)

    def progress(done, total):
        if total >= 50_000:
            click.echo(f"re-reading recorded summaries: {done:,}/{total:,}", err=True)

    try:
        rules.reclassify(conn, progress=progress)
    except sqlite3.Error as e:  # a locked or read-only database is still audited
        click.echo(f"plantune: summaries not re-read ({e}); auditing what is recorded", err=True)
    rows = rules.audit(conn)
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
