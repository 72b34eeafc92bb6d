"""Question preferences: check, write, read, clear and count them (gstack-question-preference).

A preference belongs to a scope: a project slug, or ``db.GLOBAL_SCOPE`` for every
project. A project's own preference beats the global one. Every change is also an
append-only row in ``preference_events`` so a preference can always be explained.

Hot path (``--check`` runs before every question an agent asks): stdlib only, and the
classifier and the question module are imported only when a decision needs them.
Messages carry no command prefix; the callers add ``gstack-question-preference: `` or
click's ``Error: `` themselves.
"""

from toolkit.core.vocabulary import (
    FREE_TEXT_MAX,
    PREFERENCES,
    QUESTION_ID_MAX,
    is_kebab,
    source_refusal,
)
from toolkit.core.vocabulary import SILENCING_PREFERENCES as SILENCING
from toolkit.store.db import GLOBAL_SCOPE, real_rows

UNKNOWN = "unknown"

ASK = "ASK_NORMALLY"
AUTO = "AUTO_DECIDE"


__all__ = [
    "PREFERENCES",
    "PreferenceError",
    "Decision",
    "check_source",
    "validate_write",
    "parse_write",
    "get",
    "effective_preference",
    "check",
    "write",
    "read",
    "clear",
    "stats",
    "render",
]


class PreferenceError(ValueError):
    """A refused preference change; ``exit_code`` is 1 (bad input) or 2 (not the user)."""

    def __init__(self, message, exit_code=1):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


# --------------------------------------------------------------------------
# validation (as in gstack's --write, the order of the checks is part of the contract)


def parse_write(text):
    """Parse a ``--write`` payload: a JSON object, else ``invalid JSON``."""
    from toolkit.store import json_lite

    try:
        obj = json_lite.loads_checked(text)
    except json_lite.BadValue as e:
        raise PreferenceError(f"invalid JSON: {e}") from None
    except (ValueError, TypeError, RecursionError):
        raise PreferenceError("invalid JSON") from None
    if not isinstance(obj, dict):
        # JSON.parse accepts "[]" or "3"; the id check that follows then fails on it.
        raise PreferenceError("invalid question_id")
    return obj


def classify(conn, question_id, summary=None):
    """The question's door from every source (``door_checks.door_for``): registry, text, records."""
    from toolkit.core import door_checks

    return door_checks.door_for(conn, question_id, summary)


def _never_decided(conn, question_id) -> bool:
    """Whether ``check`` would ask this question whatever its text: one-way by a source,
    or by the second look every auto-decision takes (``door_checks.before_auto_decide``:
    the id's own words, a fact under a look-alike spelling)."""
    from toolkit.core import door_checks

    door = classify(conn, question_id)
    return door.one_way or door_checks.before_auto_decide(conn, question_id, door) is not None


def check_source(source):
    """The user-origin gate (``vocabulary.source_refusal``) as a PreferenceError: exit 1
    when missing, exit 2 for any other source than the user's."""
    refusal = source_refusal(source)
    if refusal:
        raise PreferenceError(*refusal)


def validate_write(conn, obj):
    """Check a preference write in gstack's order; returns ``(id, preference, source, free_text)``.

    JSON → id → preference → source present → source is the user (exit 2) → one-way
    reject → free_text. The origin gate runs before the one-way check so that a poisoning
    source always gets exit 2, whatever the id.
    """
    qid = obj.get("question_id")
    if not is_kebab(qid) or len(qid) > QUESTION_ID_MAX:
        raise PreferenceError("invalid question_id")
    pref = obj.get("preference")
    if pref not in PREFERENCES:
        raise PreferenceError(
            "invalid preference (must be one of: always-ask, never-ask, ask-only-for-one-way)"
        )
    check_source(obj.get("source"))
    source = obj["source"]
    if pref in SILENCING and _never_decided(conn, qid):
        from toolkit.core.allows import why_one_way

        raise PreferenceError(
            f'cannot set {pref} on one-way question "{qid}" (door_type: one-way):'
            f" {why_one_way(conn, qid)}"
        )
    free_text = None
    if "free_text" in obj and obj["free_text"] is not None:
        ft = obj["free_text"]
        if not isinstance(ft, str):
            raise PreferenceError("free_text must be string")
        if "\x00" in ft:
            raise PreferenceError("free_text must not contain NUL bytes")
        from toolkit.core.jscompat import truncate
        from toolkit.core.screening import (
            PREFERENCE_FREE_TEXT_PATTERNS,
            flatten_newlines,
            has_injection,
        )

        ft = flatten_newlines(truncate(ft, FREE_TEXT_MAX))
        # gstack's older local list (it still has the broad `override[:\s]`), on purpose.
        if has_injection(ft, PREFERENCE_FREE_TEXT_PATTERNS):
            raise PreferenceError("free_text contains injection-like content, rejected")
        free_text = ft or None
    return qid, pref, source, free_text


# --------------------------------------------------------------------------
# reading


def _value(row):
    """The stored value as gstack's file would hold it (None for a JSON null).

    A value that is not one of the three is kept in raw_value: a string as itself, any
    other JSON value as its JSON text (the importer's rule), so a JSON null reads "null".
    """
    if row[0] != UNKNOWN:
        return row[0]
    return None if row[1] in (None, "null") else row[1]


def get(conn, scope, question_id):
    """The preference stored in exactly ``scope`` for ``question_id``, or None."""
    row = conn.execute(
        "SELECT preference, raw_value FROM preferences WHERE scope = ? AND question_id = ?",
        (scope, question_id),
    ).fetchone()
    return None if row is None else _value(row)


def effective_preference(conn, project, question_id, include_synthetic=False):
    """``(value, scope)`` in force for a question: the project's own row, else the global one.

    ``(None, None)`` when neither scope has a row. ``value`` may be a hand-written string
    that is not one of the three preferences; callers treat that as "ask". A project row
    whose value is JSON null does not hide the global one. A simulated preference is
    never in force unless the caller opts in or the database is a demo database.
    """
    rows = conn.execute(
        "SELECT preference, raw_value, scope FROM preferences"
        " WHERE question_id = ? AND scope IN (?, ?) AND " + real_rows(None, include_synthetic),
        (question_id, project, GLOBAL_SCOPE),
    ).fetchall()
    if not rows:
        return None, None
    if len(rows) > 1:
        rows.sort(key=lambda r: r[2] == GLOBAL_SCOPE)
        # A project entry holding JSON null says nothing; the global one then applies (the
        # hook's rule: "the project's value if it is a string, else the global one").
        if _value(rows[0]) is None:
            rows.pop(0)
    return _value(rows[0]), rows[0][2]


def read(conn, scope, include_synthetic=False):
    """``{question_id: value}`` of one scope, in the order the ids were first set.

    Simulated preferences are left out (unless opted in, or in a demo database): this is
    what the preferences file gstack itself reads is written from.
    """
    return {
        r[0]: _value(r[1:])
        for r in conn.execute(
            "SELECT question_id, preference, raw_value FROM preferences WHERE scope = ?"
            " AND " + real_rows(None, include_synthetic) + " ORDER BY rowid",
            (scope,),
        )
    }


class Decision:
    """The answer to ``--check``: ``decision`` plus any ``NOTE:`` lines, and why."""

    __slots__ = ("question_id", "decision", "notes", "preference", "scope", "door")

    def __init__(self, question_id, decision, notes, preference, scope, door):
        self.question_id, self.decision, self.notes = question_id, decision, notes
        self.preference, self.scope, self.door = preference, scope, door

    def lines(self):
        return [self.decision] + [f"NOTE: {n}" for n in self.notes]

    def as_dict(self):
        door = self.door
        return {
            "question_id": self.question_id,
            "decision": self.decision,
            "notes": self.notes,
            "preference": self.preference,
            "preference_scope": self.scope,
            "door_type": None if door is None else ("one-way" if door.one_way else "two-way"),
            "door_reason": None if door is None else door.reason,
            "matched": None if door is None else door.matched,
        }


def check(conn, project, question_id, summary=None, include_synthetic=False, need_door=True):
    """Decide whether to ask: one-way first, then the split-chain carve-out, then the preference.

    Never returns ``ASK_ONLY_ONE_WAY`` (gstack's --check does not either): by the time the
    preference is consulted the question is known to be two-way. Simulated preferences
    count only with ``include_synthetic`` or in a demo database.

    With ``need_door`` false (a caller printing only the lines) the door is not read when
    no door can change them: no preference, or ``always-ask``, is a plain ASK_NORMALLY
    whatever the door, and the decision's ``door`` is then None ("not read").
    """
    pref, scope = effective_preference(conn, project, question_id, include_synthetic)
    if not need_door and (pref is None or pref == "always-ask"):
        return Decision(question_id, ASK, [], pref, scope, None)
    door = classify(conn, question_id, summary or None)
    notes = []
    if door.one_way:
        if pref == "never-ask":
            notes.append("one-way door overrides your never-ask preference for safety.")
        return Decision(question_id, ASK, notes, pref, scope, door)
    if "-split-" in question_id:
        if pref in SILENCING:
            notes.append(
                "split-chain per-option calls always ASK_NORMALLY; your "
                f"{pref} preference does not apply to options inside a sequential split."
            )
        return Decision(question_id, ASK, notes, pref, scope, door)
    if pref in SILENCING:
        from toolkit.core import door_checks

        second = door_checks.before_auto_decide(conn, question_id, door)
        if second is not None:
            if pref == "never-ask":
                notes.append("one-way door overrides your never-ask preference for safety.")
            return Decision(question_id, ASK, notes, pref, scope, second)
        return Decision(question_id, AUTO, notes, pref, scope, door)
    if pref is not None and pref != "always-ask":
        notes.append(f"unknown preference value: {pref}")
    return Decision(question_id, ASK, notes, pref, scope, door)


def stats(conn, scope):
    """gstack's --stats counters for one scope; silencing values on ids no check would
    ever auto-decide (``_never_decided``) are inert."""
    counts = {
        "TOTAL": 0,
        "ALWAYS_ASK": 0,
        "NEVER_ASK": 0,
        "ASK_ONLY_ONE_WAY": 0,
        "INERT_ONE_WAY": 0,
        "OTHER": 0,
    }
    labels = {
        "always-ask": "ALWAYS_ASK",
        "never-ask": "NEVER_ASK",
        "ask-only-for-one-way": "ASK_ONLY_ONE_WAY",
    }
    for qid, value in read(conn, scope).items():
        counts["TOTAL"] += 1
        if value in SILENCING and _never_decided(conn, qid):
            counts["INERT_ONE_WAY"] += 1
        else:
            counts[labels.get(value, "OTHER")] += 1
    return counts


def stats_lines(counts):
    lines = [
        f"{k}: {counts[k]}"
        for k in ("TOTAL", "ALWAYS_ASK", "NEVER_ASK", "ASK_ONLY_ONE_WAY", "INERT_ONE_WAY")
    ]
    if counts["OTHER"]:
        lines.append(f"OTHER: {counts['OTHER']}")
    return lines


def render(prefs):
    """The preferences object as gstack writes it: 2-space JSON, no trailing newline."""
    if not prefs:
        return "{}"
    items = list(prefs.items())
    # JS objects list integer-like keys first, ascending; ids like "123" are valid kebab.
    if any(k.isdigit() for k, _ in items):
        from toolkit.core.jscompat import is_array_index

        index = sorted((kv for kv in items if is_array_index(kv[0])), key=lambda kv: int(kv[0]))
        items = index + [kv for kv in items if not is_array_index(kv[0])]
    import json

    body = ",\n".join(
        f"  {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}"
        for k, v in items
    )
    return "{\n" + body + "\n}"


# --------------------------------------------------------------------------
# writing


def event_record(ts, event_type, question_id, preference, source, free_text=None):
    """A question-events.jsonl record, keys in gstack's order."""
    rec = {
        "ts": ts,
        "event_type": event_type,
        "question_id": question_id,
        "preference": preference,
        "source": source,
    }
    if free_text:
        rec["free_text"] = free_text
    return rec


def _developer():
    # Imported here: a check reads preferences and never needs the writer's identity.
    from toolkit.core import identity

    return identity.developer()


def _insert_event(conn, scope, record, synthetic=False):
    from toolkit.core.questions import event_key

    conn.execute(
        "INSERT OR IGNORE INTO preference_events (event_key, scope, ts, event_type, question_id,"
        " preference, source, free_text, synthetic, developer)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            event_key(scope, record),
            scope,
            record["ts"],
            record["event_type"],
            record.get("question_id"),
            record.get("preference"),
            record.get("source"),
            record.get("free_text"),
            1 if synthetic else 0,
            _developer(),
        ),
    )


def write(
    conn, scope, question_id, preference, source, free_text=None, *, now=None, synthetic=False
):
    """Store a validated preference and its ``preference-set`` event (caller's transaction).

    Returns the event record (what gstack appends to question-events.jsonl). Setting an id
    again keeps its position in the file, as a JS object does.
    """
    from toolkit.store.db import utc_now

    ts = now or utc_now()
    conn.execute(
        "INSERT INTO preferences (scope, question_id, preference, raw_value, source, free_text,"
        " synthetic, updated_at, developer) VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?)"
        " ON CONFLICT (scope, question_id) DO UPDATE SET preference = excluded.preference,"
        " raw_value = NULL, source = excluded.source, free_text = excluded.free_text,"
        " synthetic = excluded.synthetic, updated_at = excluded.updated_at,"
        " developer = excluded.developer",
        (
            scope,
            question_id,
            preference,
            source,
            free_text,
            1 if synthetic else 0,
            ts,
            _developer(),
        ),
    )
    record = event_record(ts, "preference-set", question_id, preference, source, free_text)
    _insert_event(conn, scope, record, synthetic)
    return record


def clear(conn, scope, question_id=None, *, now=None):
    """Remove one preference (or all of a scope); returns the ids removed, in file order.

    Each removal is audited as a ``preference-cleared`` event in the database (gstack's
    --clear leaves no trace; ours does, but it is not written to question-events.jsonl).
    """
    from toolkit.store.db import utc_now

    ts = now or utc_now()
    if question_id is None:
        removed = read(conn, scope, include_synthetic=True)
        conn.execute("DELETE FROM preferences WHERE scope = ?", (scope,))
    else:
        value = get(conn, scope, question_id)
        exists = conn.execute(
            "SELECT 1 FROM preferences WHERE scope = ? AND question_id = ?", (scope, question_id)
        ).fetchone()
        removed = {question_id: value} if exists else {}
        conn.execute(
            "DELETE FROM preferences WHERE scope = ? AND question_id = ?", (scope, question_id)
        )
    for qid, value in removed.items():
        record = {
            "ts": ts,
            "event_type": "preference-cleared",
            "question_id": qid,
            "preference": value if isinstance(value, str) else None,
            "source": "clear",
        }
        _insert_event(conn, scope, record)
    return list(removed)
