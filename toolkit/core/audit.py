"""Reading recorded questions again with the current rules, and the one-way audit.

``reclassify`` re-reads every recorded question (its summary, and the header, options and
recommendation its logged line carries) that the current rules have not read yet; a
question logged two-way that they find one-way becomes a ``door_knowledge`` fact, so
every later check, and the audit, treats it as one-way. ``audit`` lists the rows of the
``one_way_audit`` view: auto-decisions on questions that are one-way now, leaving out
those the user had allowed when they were made (``toolkit.core.allows``).
"""

import json

from toolkit.core import doors, questions
from toolkit.core.whole_question import of_question

__all__ = ["AUDIT_COLUMNS", "reclassify", "audit", "logged_text"]

_SCAN_KEY = "door_rules_scan"
# What a scan reads besides the rules' own version: bumped when it reads more of a row
# (2: the whole question, options included), so every row is read again once.
_READING = 2
# Logged parts besides the summary that a door reads (questions.WHOLE_PARTS, as keys).
_PARTS = tuple(f'"{part}"' for part in questions.WHOLE_PARTS)


def logged_text(summary, raw_json, extra_json=None) -> str:
    """The whole question of a logged event: what the hook recorded it was shown
    (``whole_question``), else its summary with the header, options and recommendation
    of its original line when it has them."""
    if extra_json and '"whole_question"' in extra_json:
        try:
            whole = json.loads(extra_json).get("whole_question")
        except (ValueError, AttributeError):
            whole = None
        if isinstance(whole, str) and whole:
            return whole
    if raw_json and any(p in raw_json for p in _PARTS):
        try:
            raw = json.loads(raw_json)
        except ValueError:
            raw = None
        if isinstance(raw, dict):
            return of_question(raw, text=summary)
    return summary


def reclassify(conn, progress=None, batch=5000) -> int:
    """Read recorded questions not yet read by these rules; record new one-way facts.

    Incremental: remembers the rules version and the last event read. Returns the number
    of new facts. ``progress(done, total)`` is called per batch.
    """
    from toolkit.store import db

    version = f"{doors.rules_version()}/{_READING}"
    row = conn.execute("SELECT value FROM plantune_meta WHERE key = ?", (_SCAN_KEY,)).fetchone()
    state = json.loads(row[0]) if row and row[0] else {}
    last = state.get("last_id", 0) if state.get("version") == version else 0
    total = conn.execute(
        "SELECT count(*) FROM question_log WHERE id > ? AND synthetic = 0", (last,)
    ).fetchone()[0]
    learned = done = 0
    while True:
        rows = conn.execute(
            "SELECT id, question_id, question_summary, door_class, raw_json, extra_json"
            " FROM question_log"
            " WHERE id > ? AND synthetic = 0 ORDER BY id LIMIT ?",
            (last, batch),
        ).fetchall()
        if not rows:
            break
        facts = []
        now = db.utc_now()
        for rid, qid, summary, door_class, raw, extra in rows:
            if door_class == doors.ONE_WAY:
                continue
            if doors.classify(logged_text(summary, raw, extra)).door == doors.ONE_WAY:
                for key in {doors.canonical_id(qid), doors.sql_key(qid)}:  # the view's key too
                    facts.append((key, "classifier", qid, f"question_log:{rid}", now))
        last = rows[-1][0]
        with db.transaction(conn):
            before = conn.total_changes
            conn.executemany(
                "INSERT OR IGNORE INTO door_knowledge (canonical_id, source, question_id,"
                " evidence, learned_at) VALUES (?, ?, ?, ?, ?)",
                facts,
            )
            learned += conn.total_changes - before
            _save(conn, version, last)
        done += len(rows)
        if progress:
            progress(done, total)
    if done == 0:
        with db.transaction(conn):
            _save(conn, version, last)
    return learned


def _save(conn, version, last):
    conn.execute(
        "INSERT INTO plantune_meta (key, value) VALUES (?, ?) ON CONFLICT (key)"
        " DO UPDATE SET value = excluded.value",
        (_SCAN_KEY, json.dumps({"version": version, "last_id": last})),
    )


AUDIT_COLUMNS = (
    "id",
    "ts",
    "project",
    "session_id",
    "phase",
    "question_id",
    "question_summary",
    "user_choice",
    "decided_by",
    "flagged_by",
)


def audit(conn) -> list:
    """The rows of ``one_way_audit`` (auto-decisions on one-way questions), oldest first,
    except those whose only one-way facts are readings the user had allowed by then."""
    from toolkit.core import allows

    cols = ", ".join(AUDIT_COLUMNS)
    rows = [
        dict(zip(AUDIT_COLUMNS, r))
        for r in conn.execute(f"SELECT {cols} FROM one_way_audit ORDER BY ts, id")
    ]
    return [r for r in rows if not allows.allowed_decision(conn, r)]
