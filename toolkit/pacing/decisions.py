"""Pacing decisions after the ranking: answers linked to findings, flips, reports.

A silent decision is reversible: ``flip`` turns it into the choice the user makes (or back
into a question), every change a row. The per-session summary and the Silent Decisions
block report what pacing decided, phase by phase.
"""

from toolkit.core import questions
from toolkit.pacing.rank import log_event, number
from toolkit.pacing.request import OPTION_MAX, PHASES, PacingError, one_line
from toolkit.store import db

# question_log truncates session_id to its limit; longer ids could not link.
# json_lite: the json package is slow to import on the hot path (see docs/performance.md).
from toolkit.store import json_lite as json

# ---------------------------------------------------------------------------
# Answers, flips and reports
# ---------------------------------------------------------------------------


def link_answers(conn, session_id=None):
    """Copy each decision's newest answer (the ``pacing_decisions`` view) into ``findings``.

    The view is the rule; this keeps ``findings.answer_event_id`` / ``choice`` current for
    readers of the table. Called lazily by ``pacing show``, ``pacing silent`` and ``flip``;
    returns how many decisions changed.
    """
    where = "" if session_id is None else " AND d.session_id = ?"
    params = [db.utc_now()] + ([] if session_id is None else [session_id])
    with db.transaction(conn):
        cur = conn.execute(
            "UPDATE findings SET answer_event_id = d.answer_event_id, choice = d.answer_choice,"
            " updated_at = ? FROM pacing_decisions d WHERE d.id = findings.id"
            " AND d.answer_event_id IS NOT NULL"
            " AND d.answer_event_id IS NOT findings.answer_event_id" + where,
            params,
        )
        return cur.rowcount


def link_answer(conn, event_row_id):
    """Link one just-logged question-log event to the decision it answers, if any."""
    row = conn.execute(
        "SELECT session_id FROM question_log WHERE id = ?", (event_row_id,)
    ).fetchone()
    if row is None or row[0] is None:
        return 0
    return link_answers(conn, row[0])


_DECISION_COLUMNS = (
    "id, project, session_id, chain_id, phase, finding_id, question_id, summary, kind,"
    " door_type, door_reason, score, disposition, surface_reason, recommended, options_json,"
    " choice, flipped_at, skill, answer_event_id"
)


def find_decision(conn, finding_id, session_id=None, project=None):
    """The decision a ``flip ID`` means: by finding id or question id, in ``session_id``
    when given, else the newest one (preferring ``project``)."""
    sql = (
        f"SELECT {_DECISION_COLUMNS} FROM findings WHERE (finding_id = ? OR question_id = ?)"
        " AND " + db.real_rows()
    )
    params = [finding_id, finding_id]
    if session_id is not None:
        sql += " AND session_id = ?"
        params.append(session_id)
    sql += " ORDER BY project = ? DESC, id DESC LIMIT 1"
    params.append(project or "")
    row = conn.execute(sql, params).fetchone()
    if row is None:
        where = f" in session {session_id}" if session_id is not None else ""
        raise PacingError(f"no pacing decision with id {finding_id}{where}")
    d = dict(zip([c.strip() for c in _DECISION_COLUMNS.split(",")], row))
    d["options"] = json.loads(d.pop("options_json"))
    return d


def flip_question(decision):
    """The re-opened decision as JSON ready for AskUserQuestion."""
    from shlex import quote

    options = decision["options"] or [decision["recommended"]]
    # Decisions that started silent were auto-chosen; rank/one-way/gate ones never were.
    was_silent = decision["disposition"] == "silent" or decision["surface_reason"] == "flip"
    auto = decision["recommended"] if was_silent else None
    labels = []
    for opt in options:
        notes = []
        if opt == decision["recommended"]:
            notes.append("recommended")
        if opt == auto:
            notes.append("auto-chosen")
        if decision["flipped_at"] and opt == decision["choice"]:
            notes.append("current choice")
        labels.append({"label": opt, "description": ", ".join(notes)})
    return {
        "finding_id": decision["finding_id"],
        "question_id": decision["question_id"],
        "session_id": decision["session_id"],
        "phase": decision["phase"],
        "door_type": decision["door_type"],
        "disposition": decision["disposition"],
        "question": decision["summary"],
        "options": options,
        "recommended": decision["recommended"],
        "auto_chosen": auto,
        "current_choice": decision["choice"],
        "flipped": decision["flipped_at"] is not None,
        "ask_user_question": {
            "questions": [
                {
                    "question": decision["summary"],
                    "header": f"Flip {decision['phase']}",
                    "multiSelect": False,
                    "options": labels,
                }
            ]
        },
        "record_answer": (
            f"plantune flip {quote(decision['finding_id'])} --session"
            f" {quote(decision['session_id'])} --choice OPTION"
        ),
    }


def flip_choice(conn, decision, choice, project=None, now=None):
    """Record the user's new choice for a decision (a 'flip' question-log event)."""
    choice = one_line(choice, "choice", OPTION_MAX)
    options = decision["options"]
    if options and choice not in options:
        normalised = {questions.normalize_choice(o): o for o in options}
        choice = normalised.get(questions.normalize_choice(choice))
        if choice is None:
            raise PacingError(f"choice must be one of: {', '.join(options)}")
    now = now or db.utc_now()
    ctx = {
        "skill": decision["skill"],
        "session_id": decision["session_id"],
        "phase": decision["phase"],
        "chain_id": decision["chain_id"],
    }
    f = {
        "question_id": decision["question_id"],
        "door": decision["door_type"],
        "recommended": decision["recommended"],
        "options": options,
    }
    notes = []
    with db.transaction(conn):
        event_id = log_event(
            conn, decision["project"], ctx, f, decision["summary"], choice, "flip", now, None, notes
        )
        conn.execute(
            "UPDATE findings SET choice = ?, answer_event_id = ?, flipped_at = ?, updated_at = ?"
            " WHERE id = ?",
            (choice, event_id, now, now, decision["id"]),
        )
    decision = dict(decision, choice=choice, flipped_at=now, answer_event_id=event_id)
    if notes:
        decision["warning"] = notes[0]
    return decision


def flip_surface(conn, decision, now=None):
    """Take a Silent Decision out of the block: it counts as surfaced (reason 'flip') and
    waits for the user's answer. Spends no chain budget: the user asked for it."""
    if decision["disposition"] != "silent":
        raise PacingError(
            f"{decision['finding_id']} is already surfaced ({decision['surface_reason']})"
        )
    now = now or db.utc_now()
    with db.transaction(conn):
        conn.execute(
            # The auto-decided event no longer answers it; the user's answer will.
            "UPDATE findings SET disposition = 'surfaced', surface_reason = 'flip', flipped_at = ?,"
            " answer_event_id = NULL, updated_at = ? WHERE id = ?",
            (now, now, decision["id"]),
        )
    return dict(
        decision,
        disposition="surfaced",
        surface_reason="flip",
        flipped_at=now,
        answer_event_id=None,
    )


_PHASE_ORDER = {p: i for i, p in enumerate(PHASES + ("unknown",))}


def session_summary(conn, session_id):
    """Per-phase counts and budgets of one session (for ``pacing show``)."""
    link_answers(conn, session_id)
    counts = conn.execute(
        "SELECT * FROM pacing_phase_counts WHERE session_id = ?", (session_id,)
    ).fetchall()
    if not counts:
        raise PacingError(f"no pacing decisions for session {session_id}")
    runs = {
        (r[0], r[1]): json.loads(r[2])
        for r in conn.execute(
            "SELECT project, phase, output_json FROM pacing_runs WHERE session_id = ? ORDER BY rowid",
            (session_id,),
        )
    }
    phases = []
    for c in counts:
        c = dict(c)
        run = runs.get((c["project"], c["phase"]), {})
        c["budget"] = run.get("budget")
        c["threshold"] = run.get("threshold")
        c["calibration_id"] = run.get("calibration_id")
        phases.append(c)
    phases.sort(key=lambda c: (c["ranked_at"], _PHASE_ORDER.get(c["phase"], 99)))
    chains = [
        dict(r)
        for r in conn.execute(
            "SELECT project, chain_id, budget, spent, remaining, sessions FROM pacing_chain_budgets"
            " WHERE (project, chain_id) IN (SELECT DISTINCT project, chain_id FROM findings"
            " WHERE session_id = ?) ORDER BY chain_id",
            (session_id,),
        )
    ]
    total = {k: sum(p[k] for p in phases) for k in ("findings", "surfaced", "silent", "flipped")}
    closed = [
        dict(r)
        for r in conn.execute(
            "SELECT project, archived_as, last_activity, closed_at FROM pacing_expiries"
            " WHERE kind = 'session' AND original_id = ? ORDER BY id",
            (session_id,),
        )
    ]
    return {
        "session_id": session_id,
        "phases": phases,
        "chains": chains,
        "total": total,
        "closed_earlier": closed,
    }


def silent_decisions(conn, session_id, phase=None):
    """The session's Silent Decisions in ranking order (optionally one phase)."""
    link_answers(conn, session_id)
    sql = (
        "SELECT phase, finding_id, question_id, summary, recommended, choice_in_force AS choice,"
        " flipped, score FROM pacing_decisions WHERE session_id = ? AND disposition = 'silent'"
    )
    params = [session_id]
    if phase is not None:
        if phase.lower() not in PHASES:
            raise PacingError(
                f"unknown phase {json.dumps(phase)}, must be one of: {', '.join(PHASES)}"
            )
        sql += " AND phase = ?"
        params.append(phase.lower())
    sql += " ORDER BY created_at, id"
    rows = [dict(r) for r in conn.execute(sql, params)]
    if (
        not rows
        and not conn.execute(
            "SELECT 1 FROM findings WHERE session_id = ? LIMIT 1", (session_id,)
        ).fetchone()
    ):
        raise PacingError(f"no pacing decisions for session {session_id}")
    for r in rows:
        r["flipped"] = bool(r["flipped"])
        r["score"] = number(r["score"])
        r["flip"] = f"flip {r['finding_id']}"
    return rows


def silent_block(rows):
    """The Silent Decisions block as Markdown: one line per decision."""
    if not rows:
        return "### Silent Decisions (0)\n\nNone: every finding of this session was surfaced."
    lines = [
        f"### Silent Decisions ({len(rows)})",
        "",
        "Auto-accepted with the recommended option. Reply `flip <id>` to reopen one.",
        "",
    ]
    for r in rows:
        if r["flipped"] and r["choice"] != r["recommended"]:
            chosen = f"`{r['choice']}` (flipped from `{r['recommended']}`)"
        elif r["flipped"]:
            chosen = f"`{r['choice']}` (confirmed)"
        else:
            chosen = f"`{r['choice']}`"
        lines.append(f"- **{r['phase']}** {r['summary']} → {chosen} · `{r['flip']}`")
    return "\n".join(lines)
