"""Question events: validate them (gstack-question-log's rules), then record them.

The validation section below is pure (stdlib only, no I/O) because every agent
hook call goes through it.  Recording lives further down the module.
"""

# json's own C scanner and encoder without the json package's import cost (hot path).
from toolkit.core.jscompat import (
    JS_WHITESPACE,
    is_falsy,
    is_finite,
    js_trim,
    numbers_after_round_trip,
    stringify,
    to_number,
    truncate,
    utf16_len,
)
from toolkit.core.screening import flatten_newlines, has_injection
from toolkit.core.vocabulary import (
    CATEGORIES,
    DOOR_TYPES,
    FREE_TEXT_MAX,
    OPTIONS_MAX,
    PHASES,
    QUESTION_ID_MAX,
    SESSION_ID_MAX,
    is_kebab,
)
from toolkit.core.whole_question import WHOLE_PARTS, of_question
from toolkit.store import json_lite as json

# ===========================================================================
# Validation — gstack-question-log's fields, checks, truncation and followed_recommendation.
# Self-contained; keep it first.
# Rule order and messages are a contract: scripts match on the stderr text.
# ===========================================================================

__all__ = [
    "PREFIX",
    "SOURCES",
    "CATEGORIES",
    "DOOR_TYPES",
    "PHASES",
    "UNKNOWN_CHOICE",
    "CANCELLED_CHOICE",
    "NO_ANSWER_CHOICES",
    "QuestionError",
    "parse_event",
    "validate_event",
    "validate_json",
    "normalize_choice",
    "format_ts",
]

PREFIX = "gstack-question-log"

SOURCES = (
    "agent",
    "hook",
    "auq-other",
    "auto-decided",
    "codex-import-marker",
    "codex-import-pattern",
)

# An answer the hook could not extract; it says nothing about following advice.
UNKNOWN_CHOICE = "__unknown__"
# A question the user dismissed (Esc) without answering: asked, never an answer, so it is
# neither followed nor overridden and moves no dimension.
CANCELLED_CHOICE = "__cancelled__"
NO_ANSWER_CHOICES = (UNKNOWN_CHOICE, CANCELLED_CHOICE)

TOOL_USE_ID_MAX = 128
SUMMARY_MAX = 200
CHOICE_MAX = 64
RECOMMENDED_MAX = 64
OPTIONS_MIN = 1
QUESTION_INDEX_LIMIT = 1000

# fullmatch, because JS `$` never matches before a trailing newline.
_RECOMMENDED = "(recommended)"


class QuestionError(ValueError):
    """A rejected question event; ``str(err)`` is the exact one-line message."""

    exit_code = 1

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def _fail(text: str):
    raise QuestionError(f"{PREFIX}: {text}")


def parse_event(text) -> dict:
    """Parse one JSON object; anything else is ``invalid JSON``.

    Duplicate keys behave as in JSON.parse: first position, last value.
    (Upstream reports a non-object such as ``[1]`` as a bad skill; we call it
    what it is.) Values no record can be stored with (1e999, NaN, a lone surrogate,
    nesting past the limit) are refused with the reason after ``invalid JSON:``.
    """
    try:
        obj = json.loads_checked(text, object_pairs_hook=dict)
    except json.BadValue as e:
        _fail(f"invalid JSON: {e}")
    except (ValueError, TypeError, RecursionError):
        _fail("invalid JSON")
    if not isinstance(obj, dict):
        _fail("invalid JSON")
    return obj


def normalize_choice(s: str) -> str:
    """Drop one trailing "(recommended)" marker (any case, with its spaces), then trim.

    What gstack's ``/\\s*\\(recommended\\)\\s*$/i`` replace does, without a regex (``re``
    costs every logged question several ms to import): ASCII case folding only, JS
    whitespace on both sides of the marker.
    """
    t = s.rstrip(JS_WHITESPACE)
    tail = t[-len(_RECOMMENDED) :]
    if tail.isascii() and tail.lower() == _RECOMMENDED:
        t = t[: -len(_RECOMMENDED)]
    else:
        t = s
    return js_trim(t)


def format_ts(dt=None) -> str:
    """``Date.prototype.toISOString`` of a datetime (now when None): UTC, milliseconds, ``Z``
    (naive means UTC)."""
    if dt is None:
        # time, not datetime: datetime is slow to import (see docs/performance.md).
        import time

        ms = time.time_ns() // 1_000_000
        t = time.gmtime(ms // 1000)
        return (
            f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T"
            f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{ms % 1000:03d}Z"
        )
    from datetime import timezone

    if dt.tzinfo is not None:
        dt = dt.astimezone(timezone.utc)
    return (
        f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T"
        f"{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}.{dt.microsecond // 1000:03d}Z"
    )


def _no_nul(field: str, value: str):
    # plantune hardening: NUL cannot round-trip through every consumer (C strings, shells).
    if "\x00" in value:
        _fail(f"{field} must not contain NUL bytes")


class Event(dict):
    """A validated event with more to read than its stored summary: ``door_text`` is what
    its door is read from (the whole summary when it was cut, or the whole question);
    ``whole_question`` the question with its header and options, kept in extra_json so
    later readings (the audit, the user's allows) read what the user was shown."""

    door_text = None
    whole_question = None


def validate_event(obj: dict, now=None, allow_phase: bool = False) -> dict:
    """Validate and normalise a question event; returns a new dict.

    First failing rule raises QuestionError.  Key order is the input's, with
    ``source``, ``followed_recommendation`` and ``ts`` appended (in that order)
    when they are added; unknown keys pass through untouched.  ``now`` (a
    datetime, or an already formatted string) is the default ``ts``.  With
    ``allow_phase``, ``phase`` and ``question_index`` are validated too;
    without it they are unknown keys, as in gstack.
    """
    if not isinstance(obj, dict):
        _fail("invalid JSON")
    j = dict(obj)

    # Upstream's regex.test() would coerce a number like 123 to "123" and accept
    # it; a non-string skill or id is never meant, so we refuse it.
    skill = j.get("skill")
    if not is_kebab(skill):
        _fail("invalid skill, must be kebab-case")

    qid = j.get("question_id")
    if not is_kebab(qid) or len(qid) > QUESTION_ID_MAX:
        _fail("invalid question_id, must be kebab-case <=64 chars")

    if "source" in j:
        if j["source"] not in SOURCES:  # present null is refused too
            _fail("invalid source, must be one of: " + ", ".join(SOURCES))
    else:
        j["source"] = "agent"

    if "tool_use_id" in j:
        tid = j["tool_use_id"]
        if not isinstance(tid, str) or utf16_len(tid) > TOOL_USE_ID_MAX:
            _fail("tool_use_id must be string <=128 chars")

    if "free_text" in j:
        ft = j["free_text"]
        if not isinstance(ft, str):
            _fail("free_text must be string")
        _no_nul("free_text", ft)
        # Deliberately not screened: it is the user's own words.
        j["free_text"] = flatten_newlines(truncate(ft, FREE_TEXT_MAX))

    summary = j.get("question_summary")
    if not isinstance(summary, str) or not summary:
        _fail("question_summary required")
    _no_nul("question_summary", summary)
    kept = flatten_newlines(truncate(summary, SUMMARY_MAX))
    if kept != summary:
        # The stored summary is cut (as gstack's); the door is still read from all of it.
        j = Event(j)
        j.door_text = summary
    summary = kept
    j["question_summary"] = summary
    # The one shared list (screening.SHARED_PATTERNS), never a private copy.
    if has_injection(summary):
        _fail("question_summary contains suspicious instruction-like content, rejected")

    if "category" in j and j["category"] not in CATEGORIES:
        _fail("invalid category, must be one of: " + ", ".join(CATEGORIES))

    if "door_type" in j and j["door_type"] not in DOOR_TYPES:
        _fail("invalid door_type, must be one-way or two-way")

    if "options_count" in j:
        n = to_number(j["options_count"])
        if not (is_finite(n) and n.is_integer() and OPTIONS_MIN <= n <= OPTIONS_MAX):
            _fail("options_count must be integer in [1, 26]")
        j["options_count"] = int(n)

    choice = j.get("user_choice")
    if not isinstance(choice, str) or not choice:
        _fail("user_choice required")
    _no_nul("user_choice", choice)
    choice = flatten_newlines(truncate(choice, CHOICE_MAX))
    j["user_choice"] = choice

    if "recommended" in j:
        rec = j["recommended"]
        if not isinstance(rec, str):
            _fail("recommended must be string")
        _no_nul("recommended", rec)
        rec = truncate(rec, RECOMMENDED_MAX)
        j["recommended"] = rec
        # A caller-sent value survives only when the rule does not fire (#2400).
        if choice not in NO_ANSWER_CHOICES:
            j["followed_recommendation"] = normalize_choice(choice) == normalize_choice(rec)

    if "session_id" in j:
        sid = j["session_id"]
        if not isinstance(sid, str):
            _fail("session_id must be string")
        _no_nul("session_id", sid)
        j["session_id"] = truncate(sid, SESSION_ID_MAX)

    if allow_phase:
        if "phase" in j:
            phase = j["phase"]
            if not (isinstance(phase, str) and phase.isascii() and phase.lower() in PHASES):
                _fail("invalid phase, must be one of: " + ", ".join(PHASES))
            j["phase"] = phase.lower()
        if "question_index" in j:
            qi = j["question_index"]
            is_index = isinstance(qi, int) and not isinstance(qi, bool)
            if not (is_index and 0 <= qi < QUESTION_INDEX_LIMIT):
                _fail("question_index must be a non-negative integer")

    if is_falsy(j.get("ts")):
        j["ts"] = now if isinstance(now, str) else format_ts(now)

    if any(part in obj for part in WHOLE_PARTS):
        # The door is read from the whole question the event carries (header, options,
        # recommendation), as the audit reads it again later (toolkit.core.audit).
        whole = of_question(obj, text=getattr(j, "door_text", None) or summary)
        if whole != (getattr(j, "door_text", None) or summary):
            j = j if isinstance(j, Event) else Event(j)
            j.door_text = whole
    return j


def validate_json(text, now=None, allow_phase: bool = False) -> dict:
    """``parse_event`` then ``validate_event``: the whole gstack-question-log check."""
    return validate_event(parse_event(text), now=now, allow_phase=allow_phase)


# ===========================================================================
# Recording (database) — below this line.
# ===========================================================================
#
# One function records a validated event for every writer (compat script, `plantune log`,
# hooks, importers, pacing). It computes the deterministic event key, plantune's own door
# classification, applies the dedup window and inserts, all in one write transaction.

# Columns that mirror a gstack field; every other key of the record goes to extra_json.
_COLUMN_FIELDS = (
    "skill",
    "question_id",
    "question_summary",
    "category",
    "door_type",
    "options_count",
    "user_choice",
    "recommended",
    "followed_recommendation",
    "session_id",
    "source",
    "tool_use_id",
    "free_text",
    "ts",
    "phase",
    "question_index",
)
DEDUP_WINDOW = 100


class Recorded:
    """What happened to one event: status is 'inserted', 'dedup' or 'duplicate'."""

    __slots__ = ("status", "id", "event_key")

    def __init__(self, status, id=None, event_key=None):
        self.status, self.id, self.event_key = status, id, event_key

    def dedup_line(self, source):
        return f"DEDUP: skipped (source={source}, tool_use_id duplicate)"


# Annotations gstack adds to a line after the fact (gstack-distill-free-text rewrites the
# log in place to add `distilled_at`); they do not make the line another event.
ANNOTATION_FIELDS = ("distilled_at",)


def event_key(project: str, record: dict) -> str:
    """sha1 of the project and the canonical record: the same line imported twice, or
    recorded live and later imported from the mirror file, gets the same key.

    Annotation fields (``distilled_at``) are left out, so a line that gstack later
    annotated in place is still recognised as the event it was; numbers are taken as they
    read back from the JS-formatted line.
    """
    from toolkit.store.digest import sha1

    if any(k in record for k in ANNOTATION_FIELDS):
        record = {k: v for k, v in record.items() if k not in ANNOTATION_FIELDS}
    record = numbers_after_round_trip(record)
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha1(f"{project}\0{canonical}".encode("utf-8", "surrogatepass")).hexdigest()


def _text_or_none(v):
    return v if isinstance(v, str) else None


def index_of(record, question_index):
    if question_index is None:
        question_index = record.get("question_index")
    # JSON has one number type: 1.0 is the number 1 to gstack (and is written back as 1).
    if isinstance(question_index, float) and question_index.is_integer():
        question_index = int(question_index)
    valid = isinstance(question_index, int) and not isinstance(question_index, bool)
    # Outside the range it is an unknown field gstack never interpreted; raw_json keeps it.
    return question_index if valid and 0 <= question_index < QUESTION_INDEX_LIMIT else 0


INSERT_SQL = (
    "INSERT OR IGNORE INTO question_log (event_key, project, ts, skill, question_id,"
    " question_summary, category, door_type, options_count, user_choice, recommended,"
    " followed_recommendation, session_id, source, tool_use_id, question_index, free_text,"
    " phase, door_class, door_reason, extra_json, raw_json, ingested_from, synthetic,"
    " recorded_at, developer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
    " ?, ?, ?, ?, ?, ?, ?, ?)"
)


def prepare_row(
    record: dict,
    project: str,
    *,
    registry,
    key=None,
    raw=None,
    question_index=None,
    ingested_from=None,
    synthetic=False,
    recorded_at=None,
    default_ts=None,
    classify=None,
    developer=None,
) -> tuple:
    """The ``INSERT_SQL`` parameters for one validated event: the one row mapping.

    ``key`` defaults to :func:`event_key` of the record and ``raw`` to its serialisation;
    ``developer`` to this process's identity (:func:`toolkit.identity.developer`);
    an importer passes the original line's key and text instead. ``classify`` replaces
    ``doors.decide`` (same signature), e.g. with a cached variant for bulk imports.
    """
    if classify is None:
        from toolkit.core.doors import decide as classify
    phase = record.get("phase")
    phase = phase.lower() if isinstance(phase, str) and phase.lower() in PHASES else "unknown"
    followed = record.get("followed_recommendation")
    followed = int(followed) if isinstance(followed, bool) else None
    options_count = record.get("options_count")
    if not (isinstance(options_count, int) and not isinstance(options_count, bool)):
        options_count = None
    ts = record.get("ts")
    if not (isinstance(ts, str) and ts):
        ts = default_ts or format_ts()
    category = _text_or_none(record.get("category"))
    verdict = classify(
        record.get("question_id"),
        record.get("skill"),
        category,
        getattr(record, "door_text", None) or record.get("question_summary"),
        registry,
    )
    extra = {k: v for k, v in record.items() if k not in _COLUMN_FIELDS}
    choice, recommended = record["user_choice"], _text_or_none(record.get("recommended"))
    if record.get("source") == "auto-decided":
        choice, recommended = _auto_decided_keys(extra, choice, recommended)
    whole = getattr(record, "whole_question", None)
    if whole:
        extra["whole_question"] = whole
    if not recorded_at:
        from toolkit.store.db import utc_now

        recorded_at = utc_now()
    return (
        key or event_key(project, record),
        project,
        ts,
        record["skill"],
        record["question_id"],
        record["question_summary"],
        category,
        _text_or_none(record.get("door_type")),
        options_count,
        choice,
        recommended,
        followed,
        _text_or_none(record.get("session_id")),
        record.get("source", "agent"),
        _text_or_none(record.get("tool_use_id")) or None,
        index_of(record, question_index),
        _text_or_none(record.get("free_text")),
        phase,
        "one-way" if verdict.one_way else "two-way",
        verdict.reason,
        json.dumps(extra, ensure_ascii=False, separators=(",", ":")) if extra else "{}",
        raw if raw is not None else stringify(record),
        ingested_from,
        1 if synthetic else 0,
        recorded_at,
        developer or _developer(),
    )


def _auto_decided_keys(extra, choice, recommended):
    """An auto-decided event's choice and recommendation as stored: the option keys
    gstack's line carries beside its labels (``user_choice_key``, ``recommended_key``),
    like an answered row's, the labels kept in ``extra`` (``user_choice_label``,
    ``recommended_label``). A key that is not non-empty text (or holds a NUL) is ignored, and a line
    without keys (gstack's own) keeps its labels. Such a row never moves the profile."""
    key = extra.get("user_choice_key")
    if isinstance(key, str) and key and "\x00" not in key:
        del extra["user_choice_key"]
        extra["user_choice_label"], choice = choice, key
    key = extra.get("recommended_key")
    if isinstance(key, str) and key and "\x00" not in key and recommended is not None:
        del extra["recommended_key"]
        extra["recommended_label"], recommended = recommended, key
    return choice, recommended


def _developer():
    from toolkit.core import identity

    return identity.developer()


# The rows of a line imported from gstack's file carry ``ingested_from`` = ``<file>:<line>``.
# Over the newest rows, every row imported from the file must have exactly as many rows
# after it as the file has lines after its line: else rows sit out of the file's order.
# The original line (raw_json, which can be megabytes) is read only for a row that matches
# the event, never for the whole window.
_WINDOW_SQL = (
    "WITH top AS (SELECT id, source, tool_use_id, question_index FROM question_log"
    " WHERE {where} ORDER BY id DESC LIMIT :limit),"
    " w AS (SELECT top.*, q.ingested_from,"
    " row_number() OVER (ORDER BY top.id DESC) - 1 AS newer"
    " FROM top JOIN question_log q ON q.id = top.id)"
    " SELECT coalesce(max(CASE WHEN source = :source AND tool_use_id = :tool_use_id"
    " AND question_index = :question_index THEN ingested_from IS NULL"
    " OR (SELECT NOT json_valid(raw_json) OR json_extract(raw_json, '$.source') IS NOT NULL"
    " FROM question_log WHERE id = w.id) ELSE 0 END), 0),"
    " coalesce(max(:file IS NOT NULL AND substr(ingested_from, 1, length(:file)) = :file"
    " AND :lines - CAST(substr(ingested_from, length(:file) + 1) AS INTEGER) != newer), 0),"
    " count(*) FROM w"
)
# The project's newest rows are looked for among the table's newest RECENT_ROWS first (a
# walk down the rowids); only a project with fewer rows there has its whole index sorted.
RECENT_ROWS = 1000
_WINDOW_RECENT = _WINDOW_SQL.format(
    # `+project`: walk the rowids, not the project's index entries.
    where="id > (SELECT coalesce(max(id), 0) FROM question_log) - :recent AND +project = :project"
)
_WINDOW_ALL = _WINDOW_SQL.format(where="project = :project")


def window_twin(conn, project, source, tool_use_id, question_index, limit, file=None, lines=0):
    """``(twin, out_of_order)`` over the project's newest ``limit`` rows: whether one holds
    this event, and whether rows imported from ``file`` (``"<path>:"``, which has ``lines``
    lines) sit out of the file's order among them. As gstack, a row counts only if its line
    carried a source: an imported line without one is stored with the default source, but
    gstack never matches it."""
    params = {
        "project": project,
        "limit": limit,
        "recent": RECENT_ROWS,
        "source": source,
        "tool_use_id": tool_use_id,
        "question_index": question_index,
        "file": file,
        "lines": lines,
    }
    twin, out_of_order, rows = conn.execute(_WINDOW_RECENT, params).fetchone()
    if rows < limit:  # the window reaches further back than the table's newest rows
        twin, out_of_order, rows = conn.execute(_WINDOW_ALL, params).fetchone()
    return bool(twin), bool(out_of_order)


def record_event(
    conn,
    record: dict,
    project: str,
    *,
    question_index=None,
    ingested_from=None,
    synthetic=False,
    dedup=True,
    registry=None,
    recorded_at=None,
    unimported=None,
    raw=None,
) -> Recorded:
    """Insert one validated event (from ``validate_event``) for ``project``.

    Dedup follows gstack's rule (same source and tool_use_id among the project's last 100
    events) extended with the question's position, so questions 2..n of one
    multi-question call are all kept. ``registry`` maps id -> door type; by default the
    database's (synced) registry is used. ``unimported(conn, source, tool_use_id,
    question_index)`` replaces the window check when gstack's file takes part in the
    window (lines still waiting for a background ingest, or rows imported out of the file's
    order); it is asked inside the write transaction, so the event is neither counted
    twice nor lost to a twin outside gstack's window. ``raw`` is the record's serialisation
    when the caller has it already (``prepare_row``).
    """
    question_index = index_of(record, question_index)
    tool_use_id = _text_or_none(record.get("tool_use_id")) or None

    own = not conn.in_transaction
    if own:
        from toolkit.store.db import begin_immediate

        begin_immediate(conn)
    try:
        if dedup and tool_use_id:
            key = (record.get("source"), tool_use_id, question_index)
            if unimported is None:
                hit = window_twin(conn, project, *key, DEDUP_WINDOW)[0]
            else:
                hit = unimported(conn, *key)
            if hit:
                if own:
                    conn.execute("COMMIT")
                return Recorded("dedup", event_key=event_key(project, record))
        if registry is None:
            registry = dict(conn.execute("SELECT id, door_type FROM registry_questions"))
        row = prepare_row(
            record,
            project,
            registry=registry,
            question_index=question_index,
            ingested_from=ingested_from,
            synthetic=synthetic,
            recorded_at=recorded_at,
            raw=raw,
        )
        cur = conn.execute(INSERT_SQL, row)
        if own:
            conn.execute("COMMIT")
    except BaseException:
        if own and conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    if cur.rowcount == 0:
        return Recorded("duplicate", event_key=row[0])
    return Recorded("inserted", id=cur.lastrowid, event_key=row[0])
