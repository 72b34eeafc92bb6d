"""The user's word on a door: allows of the classifier's false alarms, questions already
seen, and why a question is one-way.

* ``allow(conn, id, source)`` marks a question the classifier read as one-way as two-way
  for this user (``plantune doors allow``), ``undo`` takes that back; each is an event in
  ``door_allow_events``. Only the user may do it (the preferences' user-origin gate), and
  only readings can be allowed: the classifier's rules on a text, the id's own words, a
  recorded question read as one-way (a pacing finding too, when that is why it was
  one-way). A registry one-way id, a skill's approval gate, a logged ``door_type:
  one-way`` and a finding the agent called one-way never can.
* ``seen_before(conn, id, text)``: text the classifier cannot read (``unreadable-language``)
  is one-way unless the user already answered this very question with this same text.
* ``why_one_way(conn, id)``: which fact makes a question one-way, and how to correct it.

``toolkit.core.door_checks.door_for`` asks here only when a reading or a recorded fact says
one-way, so a check of a two-way question never touches these tables.
"""

from toolkit.core import doors

__all__ = [
    "AllowError",
    "READING_SOURCES",
    "UNREADABLE_LANGUAGE",
    "allow_of",
    "allowed",
    "overruled",
    "covers_records",
    "seen_before",
    "stated_fact",
    "one_way_facts",
    "why_one_way",
    "allow",
    "undo",
    "events",
    "allowed_decision",
]

UNREADABLE_LANGUAGE = doors.UNREADABLE_LANGUAGE  # the engine says it; one spelling
# door_knowledge sources that are plantune's own readings of a text (allowable).
READING_SOURCES = frozenset({"classified", "classifier"})


class AllowError(ValueError):
    """A refused allow; ``exit_code`` 1 (not allowable, bad id) or 2 (not the user)."""

    def __init__(self, message, exit_code=1):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def _is_reading(reason) -> bool:
    """A door reason that comes from reading text (allowable), not from a stated fact."""
    if not isinstance(reason, str):
        return False
    if reason.startswith(("keyword:", "id-words:")) or reason == UNREADABLE_LANGUAGE:
        return True
    return reason.startswith("recorded:") and reason[9:] in READING_SOURCES


def allow_of(conn, question_id):
    """The last question-log row the user's allow of this question (any spelling of its
    id) covers (0: none), or None when it is not allowed."""
    key = doors.canonical_id(question_id)
    if conn is None or not key:
        return None
    from toolkit.store.db import sqlite3

    try:
        row = conn.execute(
            "SELECT up_to_event FROM door_allows WHERE canonical_id = ?", (key,)
        ).fetchone()
    except sqlite3.OperationalError:
        return None  # a read-only database from before migration 0016: nothing allowed
    return None if row is None else row[0]


def allowed(conn, question_id) -> bool:
    """True while the user's allow of this question stands."""
    return allow_of(conn, question_id) is not None


def _same_text(conn, question_id, text, up_to=None, answered=False) -> bool:
    """Whether ``text`` is, normalised, a recorded text of this question: one logged up
    to row ``up_to``, or (``answered``) one the user answered."""
    from toolkit.core.whole_question import logged_text

    try:
        if not isinstance(text, str):
            text = bytes(text).decode("utf-8")
        wanted = doors.normalise(text)
    except (ValueError, TypeError):
        return False
    sql = (
        "SELECT question_summary, raw_json, extra_json FROM question_log"
        " WHERE question_id = ? AND synthetic = 0"
    )
    params = [question_id]
    if up_to is not None:
        sql += " AND id <= ?"
        params.append(up_to)
    if answered:
        sql += " AND source <> 'auto-decided'"
    for summary, raw, extra in conn.execute(sql, params).fetchall():
        for seen in {summary, logged_text(summary, raw, extra)}:
            try:
                if doors.normalise(seen) == wanted:
                    return True
            except ValueError:
                continue
    return False


def seen_before(conn, question_id, text) -> bool:
    """Whether the user already answered this question (this id) with this same text,
    compared normalised: then they have read it, in whatever language it is."""
    if conn is None or not isinstance(question_id, str) or text is None:
        return False
    return _same_text(conn, question_id, text, answered=True)


def _later_reading(conn, question_id, up_to) -> bool:
    """Whether an event of the question logged after the allow was read as one-way."""
    row = conn.execute(
        "SELECT 1 FROM question_log WHERE question_id = ? AND id > ? AND synthetic = 0"
        " AND door_class = 'one-way' LIMIT 1",
        (question_id, up_to),
    ).fetchone()
    return row is not None


def overruled(conn, question_id, verdict, text=None) -> bool:
    """Whether the user's word turns this one-way reading two-way.

    An allow covers the id's own words, the recorded readings up to it (none logged as
    one-way since) and every text recorded up to it: the same question asked again is
    two-way, a new text the classifier reads as one-way is asked. Text it cannot read
    at all is two-way once the user answered this same text.
    """
    if conn is None or not isinstance(question_id, str) or not _is_reading(verdict.reason):
        return False
    reason = verdict.reason
    up_to = allow_of(conn, question_id)
    if up_to is not None:
        if reason.startswith("id-words:"):
            return True
        if reason.startswith("recorded:"):
            return not _later_reading(conn, question_id, up_to)
        if text is not None and _same_text(conn, question_id, text, up_to=up_to):
            return True
    return reason == UNREADABLE_LANGUAGE and seen_before(conn, question_id, text)


def covers_records(conn, question_id) -> bool:
    """Whether an allow sets aside every recorded one-way fact of the question: it is
    allowed, no fact is a stated one, and nothing logged since reads one-way."""
    up_to = allow_of(conn, question_id)
    if up_to is None or stated_fact(conn, question_id) is not None:
        return False
    return not _later_reading(conn, question_id, up_to)


_EVIDENCE_SQL = {
    "findings": "SELECT door_reason FROM findings WHERE id = ?",
    "question_log": "SELECT door_reason FROM question_log WHERE id = ?",
}


def _read_from(conn, evidence) -> bool:
    """Whether the record behind a fact (``findings:<id>``, ``question_log:<id>``) was
    one-way because plantune read its text, not because the agent, the registry or an
    approval gate said so."""
    kind, _, rowid = (evidence or "").partition(":")
    if kind not in _EVIDENCE_SQL or not rowid.isdigit():
        return False
    row = conn.execute(_EVIDENCE_SQL[kind], (int(rowid),)).fetchone()
    return row is not None and _is_reading(row[0])


def _recorded(conn, question_id):
    """``[(source, evidence, allowable)]``: every recorded one-way fact about the id. A
    logged door_type is never allowable; a re-reading always is; plantune's reading of
    an event (``classified``) and a pacing finding are when a reading made them one-way."""
    rows = conn.execute(
        "SELECT source, evidence FROM door_knowledge WHERE canonical_id IN (?, ?)"
        " ORDER BY source, evidence",
        doors.keys_of(question_id),
    ).fetchall()
    out = []
    for source, evidence in dict.fromkeys(rows):
        if source == "classifier":
            allowable = True
        elif source in ("classified", "finding"):
            allowable = _read_from(conn, evidence)
        else:
            allowable = False
        out.append((source, evidence, allowable))
    return out


def stated_fact(conn, question_id):
    """The source of a recorded one-way fact no allow overrules (a logged door_type, a
    finding the agent or a fact made one-way), or None."""
    for source, _, allowable in _recorded(conn, question_id):
        if not allowable:
            return source
    return None


# --------------------------------------------------------------------------
# Why a question is one-way


def one_way_facts(conn, question_id) -> list:
    """Every one-way fact about the question: ``[(what, allowable)]``, stated facts first."""
    facts = []
    row = doors.registry_door(conn, question_id)
    if row is not None and row[1] == doors.ONE_WAY:
        facts.append((f'the registry marks "{row[0]}" one-way', False))
    elif row is not None and f"{row[2]}:{row[3]}" in doors.SKILL_CATEGORY_ONE_WAY:
        facts.append((f"{row[2]} {row[3]} questions are always one-way", False))
    said = {
        "logged": "a logged event says door_type: one-way",
        "finding": "a pacing finding is one-way",
        "classified": "plantune read a recorded question as one-way",
        "classifier": "plantune read a recorded question again as one-way",
    }
    recorded = sorted(_recorded(conn, question_id), key=lambda r: r[2])  # stated first
    for source, evidence, allowable in recorded:
        what = said.get(source, source)
        if source == "classified" and not allowable:
            what = "a recorded event of it is one-way by the registry or an approval gate"
        facts.append((f"{what} ({evidence})", allowable))
    words = doors.classify(doors.id_text(question_id), prose=False)
    if words.door == doors.ONE_WAY:
        facts.append((f"the id's own words read as one-way ({words.reason})", True))
    return facts


def why_one_way(conn, question_id) -> str:
    """One sentence: the fact that makes the question one-way, and how to correct it."""
    facts = one_way_facts(conn, question_id)
    if not facts:
        return "its text reads as one-way"
    what, allowable = facts[0]
    if all(a for _, a in facts):
        return (
            f"{what}; if that is a false alarm, say so with:"
            f" plantune doors allow {question_id} --source plan-tune"
        )
    return f"{what}, which cannot be allowed: it is always asked"


# --------------------------------------------------------------------------
# Allow, undo, list


def _checked_id(question_id):
    from toolkit.core.vocabulary import QUESTION_ID_MAX

    key = doors.canonical_id(question_id)
    if not key or len(question_id) > QUESTION_ID_MAX:
        raise AllowError(f"invalid question id (1 to {QUESTION_ID_MAX} characters)")
    return key


def allow(conn, question_id, source, reason=None, now=None) -> dict:
    """Mark the question two-way for this user (caller's transaction); returns the event.

    Refused (``AllowError``) unless ``source`` is the user's (exit 2), and when a stated
    fact makes the question one-way (exit 1: the message names it).
    """
    from toolkit.core.vocabulary import source_refusal

    refusal = source_refusal(source)
    if refusal:
        raise AllowError(*refusal)
    key = _checked_id(question_id)
    if reason is not None:
        reason = " ".join(str(reason).split()) or None
    facts = one_way_facts(conn, question_id)
    fixed = [what for what, allowable in facts if not allowable]
    if fixed:
        raise AllowError(f'cannot allow "{question_id}": {fixed[0]}; it is always asked')
    readings = [what for what, _ in facts]
    from toolkit.core import identity
    from toolkit.store.db import utc_now

    ts = now or utc_now()
    developer = identity.developer()
    up_to = conn.execute("SELECT coalesce(max(id), 0) FROM question_log").fetchone()[0]
    conn.execute(
        "INSERT INTO door_allows (canonical_id, question_id, source, reason, allowed_at,"
        " up_to_event, developer) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (canonical_id)"
        " DO UPDATE SET question_id = excluded.question_id, source = excluded.source,"
        " reason = excluded.reason, allowed_at = excluded.allowed_at,"
        " up_to_event = excluded.up_to_event, developer = excluded.developer",
        (key, question_id, source, reason, ts, up_to, developer),
    )
    return _event(conn, ts, "allow", key, question_id, source, reason, readings, developer)


def undo(conn, question_id, source="plan-tune", now=None):
    """Take an allow back (caller's transaction); returns the event, or None when the
    question was not allowed. Anyone may make a question one-way again."""
    key = _checked_id(question_id)
    if conn.execute("SELECT 1 FROM door_allows WHERE canonical_id = ?", (key,)).fetchone() is None:
        return None
    from toolkit.core import identity
    from toolkit.store.db import utc_now

    conn.execute("DELETE FROM door_allows WHERE canonical_id = ?", (key,))
    ts = now or utc_now()
    return _event(conn, ts, "undo", key, question_id, source, None, None, identity.developer())


def _event(conn, ts, action, key, question_id, source, reason, readings, developer):
    import json

    cur = conn.execute(
        "INSERT INTO door_allow_events (ts, action, canonical_id, question_id, source, reason,"
        " readings, developer) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            ts,
            action,
            key,
            question_id,
            source,
            reason,
            json.dumps(readings, ensure_ascii=False) if readings is not None else None,
            developer,
        ),
    )
    return events(conn, cur.lastrowid)[0]


_EVENT_COLUMNS = ("id", "ts", "action", "canonical_id", "question_id", "source", "reason")


def events(conn, event_id=None) -> list:
    """Every allow and undo, oldest first (or the one ``event_id``), with ``in_force``: the
    question's allow stands now."""
    import json

    where, params = ("WHERE e.id = ?", (event_id,)) if event_id is not None else ("", ())
    rows = conn.execute(
        f"SELECT {', '.join('e.' + c for c in _EVENT_COLUMNS)}, e.readings,"
        " a.canonical_id IS NOT NULL FROM door_allow_events AS e"
        f" LEFT JOIN door_allows AS a ON a.canonical_id = e.canonical_id {where} ORDER BY e.id",
        params,
    ).fetchall()
    out = []
    for r in rows:
        item = dict(zip(_EVENT_COLUMNS, r))
        item["readings"] = json.loads(r[-2]) if r[-2] else []
        item["in_force"] = bool(r[-1])
        out.append(item)
    return out


def allowed_decision(conn, row) -> bool:
    """Whether an audit row is flagged by readings only, of a question the user allows
    (no registry entry, logged door_type or stated fact among its flags) and whose text
    the allow covers."""
    flags = set((row.get("flagged_by") or "").split(","))
    qid = row["question_id"]
    up_to = allow_of(conn, qid)
    if "registry" in flags or "logged" in flags or up_to is None:
        return False
    if stated_fact(conn, qid) is not None:
        return False
    # Recorded before the allow, or the same text asked again after it.
    return row["id"] <= up_to or _same_text(conn, qid, row["question_summary"], up_to=up_to)
