"""``plantune pacing`` and ``plantune flip``: rank findings, report decisions, reverse one."""

import json

import click

from toolkit.cli.app import db_option, fail, json_option, open_db, print_json


@click.group()
def pacing():
    """Rank review findings: surface few, auto-accept the rest visibly and reversibly.

    \b
    Example:
        echo '{"session_id": "s1", "phase": "eng", "findings": []}' | plantune pacing rank
        plantune pacing silent s1
    """


@pacing.command()
@db_option
def rank(db_path):
    """Rank one phase's findings (JSON on stdin) and print what to ask and what was decided.

    One-way doors and approval/migration gates always surface; two-way findings at or
    above the calibrated threshold surface best first, at most 3 per phase and within
    the chain's budget; the rest become Silent Decisions, logged at once. Ranking the
    same request again prints the same answer; a different request for an already
    ranked phase is refused. A session or chain idle for more than
    $PLANTUNE_PACING_TTL_MINUTES (default 120) is closed first: its decisions are kept
    under `<id>~closed-<n>`, the same ids start afresh, and the answer says so.

    \b
    Example:
        plantune pacing rank <<'EOF'
        {"session_id": "s1", "chain_id": "c1", "phase": "eng", "budget": 6,
         "findings": [{"id": "eng-missing-index", "summary": "Add an index on orders.user_id",
                       "severity": 2, "irreversibility": 0, "decision_matters": 2,
                       "recommended": "fix-now", "options": ["fix-now", "defer"]}]}
        EOF
    """
    from toolkit.pacing import rank as pc
    from toolkit.pacing import request as pacing_request
    from toolkit.store import paths
    from toolkit.store.safe_io import stdin_text

    try:
        request = pacing_request.parse_request(stdin_text())
        pacing_request.validate_request(request)
    except pacing_request.PacingError as e:
        fail(str(e))
    conn = open_db(db_path)
    try:
        result = pc.rank(conn, request, paths.resolve_slug())
    except pacing_request.PacingError as e:
        fail(str(e))
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    print_json(result.output)


@pacing.command()
@click.argument("session")
@db_option
@json_option
def show(session, db_path, as_json):
    """Show a session's pacing per phase: surfaced (and why), silent, flipped, budget.

    \b
    Example:
        plantune pacing show s1
        plantune pacing show s1 --json
    """
    from toolkit.pacing import decisions
    from toolkit.pacing import request as pacing_request

    conn = open_db(db_path)
    try:
        summary = decisions.session_summary(conn, session)
    except pacing_request.PacingError as e:
        fail(str(e))
    if as_json:
        print_json(summary)
        return
    click.echo(f"Session {session}")
    for c in summary["chains"]:
        if c["budget"] is None:
            budget = f"no chain budget ({c['spent']} rank-surfaced so far, per-phase cap only)"
        else:
            budget = f"budget {c['budget']}: {c['spent']} spent, {c['remaining']} left"
        click.echo(f"Chain {c['chain_id']}: {budget}")
    click.echo("")
    head = (
        "phase",
        "findings",
        "surfaced",
        "one-way",
        "gate",
        "rank",
        "flip",
        "silent",
        "flipped",
        "answered",
        "spent",
    )
    click.echo("  ".join(f"{h:>8}" if i else f"{h:<7}" for i, h in enumerate(head)))
    for p in summary["phases"]:
        b = p["budget"] or {}
        cells = (
            p["phase"],
            p["findings"],
            p["surfaced"],
            p["surfaced_one_way"],
            p["surfaced_gate"],
            p["surfaced_rank"],
            p["surfaced_flip"],
            p["silent"],
            p["flipped"],
            p["answered"],
            b.get("spent_this_phase", "-"),
        )
        click.echo("  ".join(f"{c:>8}" if i else f"{c:<7}" for i, c in enumerate(cells)))
    t = summary["total"]
    click.echo(
        f"\n{t['findings']} findings: {t['surfaced']} surfaced, {t['silent']} silent"
        f" ({t['flipped']} flipped)."
    )
    for c in summary["closed_earlier"]:
        click.echo(
            f"Closed earlier after a quiet spell (last active {c['last_activity']}): "
            f"kept as session {c['archived_as']}."
        )


@pacing.command()
@click.argument("session")
@click.option("--phase", help="Only this phase (ceo, design, eng, dx, other).")
@db_option
@json_option
def silent(session, phase, db_path, as_json):
    """Print a session's Silent Decisions block (Markdown), one line per decision with `flip <id>`.

    \b
    Example:
        plantune pacing silent s1 --phase eng
    """
    from toolkit.pacing import decisions
    from toolkit.pacing import request as pacing_request

    conn = open_db(db_path)
    try:
        rows = decisions.silent_decisions(conn, session, phase)
    except pacing_request.PacingError as e:
        fail(str(e))
    if as_json:
        print_json(rows)
        return
    click.echo(decisions.silent_block(rows))


@click.command()
@click.argument("finding_id", metavar="ID")
@click.option("--session", help="The session the decision belongs to (default: the newest one).")
@click.option("--choice", help="Record the user's new choice for the decision.")
@click.option("--surface", is_flag=True, help="Take a Silent Decision out of the block: ask it.")
@db_option
def flip(finding_id, session, choice, surface, db_path):
    """Reopen a pacing decision: print it as a question, record a new choice, or surface it.

    Without options, prints the decision as AskUserQuestion-ready JSON (question,
    options, recommended, what was auto-chosen). `--choice X` records the user's answer
    (a `flip` event in the question log) and the Silent Decisions block shows it.
    `--surface` moves a Silent Decision out of the block; it then waits for the user's
    answer, logged with the same question id and session.

    \b
    Example:
        plantune flip test-coverage-bookclub-form
        plantune flip test-coverage-bookclub-form --session s1 --choice add-tests
    """
    from toolkit.pacing import decisions
    from toolkit.pacing import request as pacing_request
    from toolkit.store import paths

    if choice is not None and surface:
        fail("use either --choice or --surface, not both")
    conn = open_db(db_path)
    try:
        decision = decisions.find_decision(conn, finding_id, session, paths.resolve_slug())
        if decisions.link_answers(conn, decision["session_id"]):
            decision = decisions.find_decision(
                conn, finding_id, decision["session_id"], decision["project"]
            )
        if choice is not None:
            decision = decisions.flip_choice(conn, decision, choice)
            if decision.get("warning"):
                click.echo(f"plantune: {decision['warning']}", err=True)
            click.echo(
                f"Recorded {decision['finding_id']} → {decision['choice']}"
                f" (session {decision['session_id']}, phase {decision['phase']})."
            )
            return
        if surface:
            decision = decisions.flip_surface(conn, decision)
    except pacing_request.PacingError as e:
        fail(str(e))
    out = decisions.flip_question(decision)
    click.echo(json.dumps(out, indent=2, ensure_ascii=False))
