"""Import gstack's own stores into the database: incrementally, idempotently, tolerantly.

Files read (under a state root):

- ``projects/<slug>/question-log.jsonl``      -> question_log
- ``projects/<slug>/question-events.jsonl``   -> preference_events
- ``projects/<slug>/question-preferences.json`` -> preferences (scope <slug>)
- ``developer-profile.json``  -> declared_profile (scope '__global__'), office_hours_sessions
- ``builder-profile.jsonl``   -> office_hours_sessions (gstack's legacy session log)

Rules:

- Idempotent: every row has a deterministic key (sha1 of the project and the canonical
  record), inserted with INSERT OR IGNORE, so a second run, or a line that a compat
  command already recorded live and mirrored to the file, adds nothing.
- Incremental: ``ingest_state`` remembers each file's inode, size, mtime, byte offset and
  two fingerprints. Unchanged file -> one ``stat``, nothing read. Grown file -> read from
  the offset. Replaced, shrunk or rewritten file -> rescanned from byte 0 (safe, see above).
- Only complete lines are consumed; a partial last line is left for the next run.
- Rows and the offset that covers them are committed in the same transaction, in batches,
  so a killed import leaves a consistent database and a rerun finishes the job exactly.
- Tolerant: a bad line is skipped and reported with its line number; a pretty-printed
  (multi-line) object inside a ``.jsonl`` file is joined and imported, with a note.

Whole-file stores (preferences, developer profile) are made to match the file when the file
changed. Writers that mirror the database into those files must rewrite the file before
they commit (inside their write transaction): this module reads them under the write lock,
so it never applies a file that is older than the database.
"""

from __future__ import annotations

import json
import os
import re
import time

try:
    # CPython's own sha1. hashlib would load OpenSSL first (~3 ms), and compat commands import this
    # module on every call to pick up other writers' changes.
    from _sha1 import sha1 as _sha1
except ImportError:  # pragma: no cover
    from hashlib import sha1 as _sha1

from toolkit.store import db, json_lite, rollups, safe_io
from toolkit.core import identity, questions
from toolkit.store.paths import is_valid_slug
from toolkit.gstack.mirror import unread_bytes

__all__ = [
    "QUESTION_LOG",
    "PREFERENCES",
    "EVENTS",
    "DEVELOPER_PROFILE",
    "BUILDER_PROFILE",
    "IngestError",
    "StrictError",
    "FileReport",
    "Summary",
    "session_key",
    "sync_project",
    "ingest_file",
    "ingest_state_root",
]

QUESTION_LOG = "question-log.jsonl"
PREFERENCES = "question-preferences.json"
EVENTS = "question-events.jsonl"
DEVELOPER_PROFILE = "developer-profile.json"
BUILDER_PROFILE = "builder-profile.jsonl"

# Per project, in this order: events first, so a preference imported from the JSON file
# can take its source from the event that set it.
PROJECT_FILES = (
    (EVENTS, "question-events"),
    (PREFERENCES, "question-preferences"),
    (QUESTION_LOG, "question-log"),
)
ROOT_FILES = (
    (DEVELOPER_PROFILE, "developer-profile"),
    (BUILDER_PROFILE, "builder-profile"),
)

FINGERPRINT_BYTES = 4096
# Lines per transaction: large enough that commits cost little, small enough that memory
# stays bounded and a hook waiting for the write lock waits about a second at most. Event
# keys are random, so a batch dirties leaves all over the unique index: the larger the
# batch, the more of its rows share each page written to the WAL (and checkpointed).
BATCH_LINES = 10000
# How often (in lines) a read with a deadline looks at the clock.
DEADLINE_CHECK_LINES = 32
# A pretty-printed record longer than this is not a record: its first line is reported.
MULTILINE_MAX_LINES = 500
MULTILINE_MAX_CHARS = 1 << 20
# No record is this long; reading such a line whole would unbound memory.
MAX_LINE_BYTES = 16 << 20

PREFERENCE_VALUES = ("always-ask", "never-ask", "ask-only-for-one-way")
EVENT_TYPES = ("preference-set", "preference-cleared")
DIMENSIONS = ("scope_appetite", "risk_tolerance", "detail_preference", "autonomy", "architecture_care")
EVENT_FIELDS = ("ts", "event_type", "question_id", "preference", "source", "free_text")
PREFERENCE_FILE_SOURCE = "gstack-file"
PROFILE_SOURCE = "developer-profile.json"


class IngestError(Exception):
    """Nothing could be ingested (missing state root...); ``str()`` is the one-line reason."""


class StrictError(IngestError):
    """``strict`` ingest met a line it had to skip; ``report`` is the file's report."""

    def __init__(self, report, line, reason):
        where = f"{report.path}:{line}" if line else report.path
        super().__init__(f"{where}: {reason} (--strict: stopped, this run imported nothing from this file)")
        self.report = report


class _Skip(Exception):
    """One record cannot be imported; the message is the reason shown to the user."""


def _parse(text):
    """The decoded JSON value, or raise ValueError (:class:`~toolkit.json_lite.BadValue`,
    with the reason, for 1e999, NaN, nesting past the limit).

    Lone surrogates are let through: gstack's own lines carry them (a summary cut in the
    middle of an emoji) and rows store them as U+FFFD (see ``_storable``).
    """
    return json_lite.loads_checked(text, surrogates=True)


def _canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def session_key(session) -> str:
    """Deterministic key of an office-hours session: sha1 of its canonical JSON.

    The same session read from builder-profile.jsonl, from developer-profile.json or
    logged live gets the same key, so no path can record it twice.
    """
    return _sha1(_canonical(session).encode("utf-8", "surrogatepass")).hexdigest()


def _text_or_none(v):
    return v if isinstance(v, str) else None


def _mtime_ts(st) -> str:
    # Stands in for a missing `ts`: the file's last write is an upper bound of when the
    # line was written, and it is the same on every rerun over the same file.
    from datetime import datetime, timezone  # only when a file is actually read

    return questions.format_ts(datetime.fromtimestamp(st.st_mtime_ns / 1e9, tz=timezone.utc))


# ---------------------------------------------------------------------------
# Reports


class Issue:
    __slots__ = ("line", "message", "skip")

    def __init__(self, line, message, skip):
        self.line, self.message, self.skip = line, message, skip


class FileReport:
    """What one file gave: counts, and every skipped line (``issues``) with its reason.

    ``status``: ``read`` (new bytes were read), ``unchanged`` (a stat showed nothing new),
    ``error`` (could not be read) or ``failed`` (strict mode stopped on it).
    """

    def __init__(self, path, kind, project=None):
        self.path, self.kind, self.project = path, kind, project
        self.status = "read"
        self.imported = self.duplicate = self.skipped = self.updated = self.removed = 0
        self.rescanned = False
        self.bytes_read = 0
        self.pending = 0  # bytes left unread when a deadline stopped the read
        self.issues: list[Issue] = []
        self.error = None
        self.holds = []  # seconds each of this file's write transactions held the lock

    @property
    def transactions(self):
        return len(self.holds)

    @property
    def lock_max_ms(self):
        return max(self.holds, default=0.0) * 1000

    def add_holds(self, seconds):
        self.holds.extend(seconds)

    def skip(self, line, reason):
        self.skipped += 1
        self.issues.append(Issue(line, reason, True))

    def note(self, line, message):
        self.issues.append(Issue(line, message, False))

    def as_dict(self):
        return {
            "path": self.path,
            "kind": self.kind,
            "project": self.project,
            "status": self.status,
            "imported": self.imported,
            "duplicate": self.duplicate,
            "skipped": self.skipped,
            "updated": self.updated,
            "removed": self.removed,
            "rescanned": self.rescanned,
            "bytes_read": self.bytes_read,
            "transactions": self.transactions,
            "lock_max_ms": round(self.lock_max_ms, 1),
            "error": self.error,
            "issues": [
                {"line": i.line, "message": i.message, "skipped": i.skip} for i in self.issues
            ],
        }


class Summary:
    """The reports of one run, with totals."""

    def __init__(self, state_root):
        self.state_root = state_root
        self.files: list[FileReport] = []
        self.projects: list[str] = []
        self.problems: list[str] = []  # entries that are not files we read (bad project dirs)
        self.spool = None  # what draining the spool did (toolkit.spool.Drained)

    def _total(self, name):
        return sum(getattr(f, name) for f in self.files)

    @property
    def imported(self):
        return self._total("imported")

    @property
    def duplicate(self):
        return self._total("duplicate")

    @property
    def skipped(self):
        return self._total("skipped")

    @property
    def lock_max_ms(self):
        """The longest any of this run's transactions held the write lock, in ms."""
        return max((f.lock_max_ms for f in self.files), default=0.0)

    def lock_stats(self):
        """How long this run's transactions held the write lock (ms): p50, p99, max, and
        how many held it longer than 100 ms."""
        holds = sorted(h for f in self.files for h in f.holds)
        if not holds:
            return {"lock_p50_ms": 0.0, "lock_p99_ms": 0.0, "lock_over_100ms": 0}

        def at(q):
            return round(holds[min(len(holds) - 1, int(q * (len(holds) - 1) + 0.5))] * 1000, 1)

        return {"lock_p50_ms": at(0.5), "lock_p99_ms": at(0.99),
                "lock_over_100ms": sum(h > 0.1 for h in holds)}

    @property
    def readable(self):
        """True when at least one file could be read (or was known and unchanged)."""
        return any(f.status in ("read", "unchanged") for f in self.files)

    def as_dict(self):
        return {
            "state_root": self.state_root,
            "projects": self.projects,
            "imported": self.imported,
            "duplicate": self.duplicate,
            "skipped": self.skipped,
            "transactions": self._total("transactions"),
            "lock_max_ms": round(self.lock_max_ms, 1),
            **self.lock_stats(),
            "files": [f.as_dict() for f in self.files],
            "problems": self.problems,
            "spool": self.spool.as_dict() if self.spool is not None else None,
        }


# ---------------------------------------------------------------------------
# ingest_state


class _State:
    __slots__ = ("inode", "size", "offset", "line_no", "mtime_ns", "head", "tail")

    def __init__(self, row):
        (self.inode, self.size, self.offset, self.line_no, self.mtime_ns,
         self.head, self.tail) = row

    def unchanged(self, st):
        return (self.inode == st.st_ino and self.size == st.st_size
                and self.mtime_ns == st.st_mtime_ns)


def _load_states(conn, paths):
    marks = ",".join("?" * len(paths))
    rows = conn.execute(
        "SELECT path, inode, size, offset, line_no, mtime_ns, head_sha1, tail_sha1"
        f" FROM ingest_state WHERE path IN ({marks})",
        list(paths),
    ).fetchall()
    return {r[0]: _State(tuple(r)[1:]) for r in rows}


_save_state = db.save_ingest_state


def _fingerprints(fd, offset):
    """sha1 of the first and of the last (up to 4 KiB) bytes before ``offset``."""
    n = min(offset, FINGERPRINT_BYTES)
    head = os.pread(fd, n, 0)
    tail = head if offset <= FINGERPRINT_BYTES else os.pread(fd, n, offset - n)
    return _sha1(head).hexdigest(), _sha1(tail).hexdigest()


class _Tx:
    """Batch transactions that also work inside a caller's open transaction.

    When the caller already holds a transaction we never commit or roll it back: the
    caller decides, and our rows go with its. Every transaction of our own is timed from
    the moment the write lock is held to the end of its COMMIT (``holds``), and before
    taking the lock again we let writers that announced a wait go first.
    """

    def __init__(self, conn):
        self.conn = conn
        self.own = not conn.in_transaction
        self.started = None
        self.holds = []  # seconds each of our transactions held the write lock
        self.db_file = db.file_of(conn) if self.own else None
        self.autocheckpoint = None

    def checkpoint_between(self):
        """Checkpoint the WAL between our transactions instead of inside our COMMITs.

        SQLite checkpoints in the COMMIT call that grows the WAL past its limit. The lock
        is free by then, but the time is ours and would stretch our measured holds; a
        passive checkpoint run between two transactions never blocks another writer. It
        runs once about CHECKPOINT_FRAMES pages were written (measured at the previous
        one): a page that many transactions touch is then copied back once, not each time.
        """
        if self.own and self.autocheckpoint is None:
            self.autocheckpoint = self.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
            self.conn.execute("PRAGMA wal_autocheckpoint = 0")
            self.since_checkpoint, self.checkpoint_every = 0, 4

    def restore(self):
        if self.autocheckpoint is not None:
            self.conn.execute(f"PRAGMA wal_autocheckpoint = {int(self.autocheckpoint)}")
            self.autocheckpoint = None

    def begin(self):
        if self.own and not self.conn.in_transaction:
            if self.db_file:
                _let_waiters_in(self.db_file)
            self.conn.execute("BEGIN IMMEDIATE")
            self.started = time.perf_counter()

    def commit(self):
        if self.own and self.conn.in_transaction:
            self.conn.execute("COMMIT")
            self._held()
            if self.autocheckpoint:
                self.since_checkpoint += 1
                if self.since_checkpoint >= self.checkpoint_every:
                    self._checkpoint()

    def _checkpoint(self):
        frames = self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
        per_commit = max(frames, 1) / self.since_checkpoint
        self.checkpoint_every = max(1, min(64, int(CHECKPOINT_FRAMES / per_commit)))
        self.since_checkpoint = 0

    def rollback(self):
        if self.own and self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
            self._held()

    def _held(self):
        if self.started is not None:
            self.holds.append(time.perf_counter() - self.started)
            self.started = None


# How long one of our batch transactions should hold the write lock: hooks and compat
# scripts wait for it, and the issue of a starved hook is a lost answer. The batch size
# adapts to the measured insert rate so that each transaction stays near this.
LOCK_TARGET_SECONDS = 0.03
# WAL pages written between two passive checkpoints of a bulk import (32 MB of 4 KiB pages).
CHECKPOINT_FRAMES = 8192
MIN_WRITE_ROWS = 50
# A writer that announced its wait gets the lock within this; then the import goes on
# even if more keep arriving.
MAX_YIELD_SECONDS = 0.5


def _let_waiters_in(db_file):
    deadline = time.monotonic() + MAX_YIELD_SECONDS
    while db.writers_waiting(db_file) and time.monotonic() < deadline:
        time.sleep(0.005)


def _next_chunk(current, rows, seconds):
    """Rows for the next transaction, from how long ``rows`` rows took (``seconds``)."""
    if rows <= 0 or seconds <= 0:
        return current
    fit = int(rows * LOCK_TARGET_SECONDS / seconds)
    # Grow slowly (a fast batch may have been a lucky one), shrink at once.
    return max(MIN_WRITE_ROWS, min(fit, current * 2, BATCH_LINES))


# ---------------------------------------------------------------------------
# JSONL: complete lines -> records


class BadLine:
    """A line that cannot be a record before parsing (not UTF-8, absurdly long)."""

    __slots__ = ("reason",)

    def __init__(self, reason):
        self.reason = reason


_NOT_UTF8 = BadLine("not valid UTF-8")
_TOO_LONG = BadLine(f"line longer than {MAX_LINE_BYTES >> 20} MiB")


class _LineJoiner:
    """Turns complete physical lines into JSON records.

    A line that starts with ``{`` and ends with ``}`` is one record: it is handed on
    undecoded (``obj`` None) and decoded where it is turned into a row, possibly in a
    worker process. A line that starts with ``{`` but does not end with ``}`` opens a
    block: following lines are added until the block parses as one object (a
    pretty-printed record, imported with a note). The block is abandoned, its first line
    reported and the rest read again line by line, when a new top-level record starts (a
    line at column 0 that parses alone), when it grows past the limits, or at the end of
    the input.
    """

    def __init__(self, on_record, report, line_no=0, end=0):
        self.on_record = on_record  # (obj, text, first_line_no, last_line_no) -> None
        self.report = report
        self.block = None  # [(line_no, text, start, end)]
        self.block_chars = 0
        self.line_no, self.end = line_no, end  # the last line resolved, and where it ends

    def safe(self):
        """(offset, line_no) up to which every line is resolved (a block is not)."""
        if self.block:
            line_no, _, start, _ = self.block[0]
            return start, line_no - 1
        return self.end, self.line_no

    def feed(self, line_no, text, start, end):
        """One complete line; ``text`` is a :class:`BadLine` when it cannot be text."""
        if self.block is not None:
            if isinstance(text, BadLine) or (text[:1] == "{" and self._whole(text) is not None):
                self._abandon()
                self.feed(line_no, text, start, end)
                return
            self.block.append((line_no, text, start, end))
            self.block_chars += len(text) + 1
            if len(self.block) > MULTILINE_MAX_LINES or self.block_chars > MULTILINE_MAX_CHARS:
                self._abandon()
                return
            # Only a line that closes an object can complete the block.
            if text.rstrip()[-1:] != "}":
                return
            joined = "\n".join(t for _, t, _, _ in self.block)
            obj = self._whole(joined)
            if obj is not None:
                first = self.block[0][0]
                self.block = None
                self._advance(line_no, end)
                self.report.note(first, f"multi-line JSON record (lines {first}-{line_no}) joined")
                self.on_record(obj, joined, first, line_no)
            return
        self._single(line_no, text, start, end)

    def finish(self):
        if self.block is not None:
            self._abandon()

    def _advance(self, line_no, end):
        self.line_no, self.end = line_no, end

    @staticmethod
    def _whole(text):
        try:
            obj = _parse(text)
        except (ValueError, RecursionError):
            return None
        return obj if isinstance(obj, dict) else None

    def _single(self, line_no, text, start, end):
        if isinstance(text, BadLine):
            self._advance(line_no, end)
            self.report.skip(line_no, text.reason)
            return
        stripped = text.strip()
        if stripped[:1] == "{":
            if stripped[-1] == "}":
                self._advance(line_no, end)
                self.on_record(None, text, line_no, line_no)
            else:
                self.block = [(line_no, text, start, end)]
                self.block_chars = len(text)
            return
        self._advance(line_no, end)
        if stripped:
            try:
                _parse(text)
            except (ValueError, RecursionError):
                self.report.skip(line_no, "invalid JSON")
            else:
                self.report.skip(line_no, "not a JSON object")

    def _abandon(self):
        block, self.block = self.block, None
        line_no, _, _, end = block[0]
        self._advance(line_no, end)
        self.report.skip(line_no, "invalid JSON")
        for item in block[1:]:
            self.feed(*item)


# ---------------------------------------------------------------------------
# JSONL kinds: record -> row
#
# A handler turns one decoded record into the parameters of its INSERT. Handlers are pure
# (no database access), so a batch of records can be prepared in a worker process while
# the main process writes the previous batch.


# Question-log sources plantune writes beyond gstack's own (a flipped Silent Decision).
OWN_SOURCES = ("flip",)


class _QuestionLog:
    """question-log.jsonl lines: validated with gstack's rules, stored with their original
    content (key and raw_json from the line as written, ts/source/unknown fields kept)."""

    kind = "question-log"

    def __init__(self, ctx):
        self.path, self.project, self.default_ts, self.recorded_at, self.registry = ctx
        self.annotated = []

    @staticmethod
    def context(conn, path, project, st):
        registry = dict(conn.execute("SELECT id, door_type FROM registry_questions"))
        return (path, project, _mtime_ts(st), db.utc_now(), registry)

    def row(self, obj, text, line_no):
        try:
            if obj.get("source") in OWN_SOURCES:
                # A line plantune itself wrote (a pacing flip): gstack's rules but that
                # source, which gstack's readers count like any other.
                rec = questions.validate_event(dict(obj, source="agent"), now=self.default_ts)
                rec["source"] = obj["source"]
            else:
                rec = questions.validate_event(obj, now=self.default_ts)
        except questions.QuestionError as e:
            raise _Skip(e.message.removeprefix(questions.PREFIX + ": ")) from None
        key = questions.event_key(self.project, obj)
        row = questions.prepare_row(
            rec, self.project, registry=self.registry, key=key,
            raw=text if text is not None else questions.serialize(obj),
            ingested_from=f"{self.path}:{line_no}", recorded_at=self.recorded_at,
            default_ts=self.default_ts, classify=_classify,
        )
        if any(k in obj for k in questions.ANNOTATION_FIELDS):
            self.annotated.append((row[20], row[21], key, row[21]))
        return row

    @staticmethod
    def flush(conn, rows, annotated, bulk=None):
        if bulk is not None:
            inserted = bulk.insert(questions.INSERT_SQL, rows)
        else:
            inserted = conn.executemany(questions.INSERT_SQL, rows).rowcount
        updated = 0
        if annotated:
            # The same event, annotated in place by gstack since we saw it: keep the note.
            updated = conn.executemany(
                "UPDATE question_log SET extra_json = ?, raw_json = ?"
                " WHERE event_key = ? AND raw_json != ?",
                annotated,
            ).rowcount
        return inserted, updated


class _PreferenceEvents:
    """question-events.jsonl lines (the preference audit trail)."""

    kind = "question-events"
    SQL = (
        "INSERT OR IGNORE INTO preference_events (event_key, scope, ts, event_type, question_id,"
        " preference, source, free_text, extra_json, ingested_from, synthetic, developer)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)"
    )

    def __init__(self, ctx):
        self.path, self.project, self.default_ts = ctx
        self.annotated = []

    @staticmethod
    def context(conn, path, project, st):
        return (path, project, _mtime_ts(st))

    def row(self, obj, text, line_no):
        event_type = obj.get("event_type")
        if event_type not in EVENT_TYPES:
            raise _Skip("event_type must be one of: " + ", ".join(EVENT_TYPES))
        # A known field of the wrong type is kept in extra_json rather than dropped.
        extra = {k: v for k, v in obj.items()
                 if k not in EVENT_FIELDS or (k != "event_type" and not isinstance(v, str))}
        ts = obj.get("ts")
        return (
            questions.event_key(self.project, obj), self.project,
            ts if isinstance(ts, str) and ts else self.default_ts, event_type,
            _text_or_none(obj.get("question_id")), _text_or_none(obj.get("preference")),
            _text_or_none(obj.get("source")), _text_or_none(obj.get("free_text")),
            json.dumps(extra, ensure_ascii=False, separators=(",", ":")) if extra else "{}",
            f"{self.path}:{line_no}", identity.developer(),
        )

    @classmethod
    def flush(cls, conn, rows, annotated, bulk=None):
        return conn.executemany(cls.SQL, rows).rowcount, 0


_SESSION_SQL = (
    "INSERT OR IGNORE INTO office_hours_sessions (session_key, ts, date, mode, project_slug,"
    " signals_json, resources_json, topics_json, design_doc, assignment, raw_json, origin,"
    " recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _json_array(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":")) if isinstance(v, list) else "[]"


def _session_row(session, origin, recorded_at):
    return (
        session_key(session), _text_or_none(session.get("ts")),
        _text_or_none(session.get("date")), _text_or_none(session.get("mode")),
        _text_or_none(session.get("project_slug")), _json_array(session.get("signals")),
        _json_array(session.get("resources_shown")), _json_array(session.get("topics")),
        _text_or_none(session.get("design_doc")), _text_or_none(session.get("assignment")),
        questions.serialize(session), origin, recorded_at,
    )


class _BuilderSessions:
    """builder-profile.jsonl lines: gstack's legacy office-hours sessions (every object is one,
    as in gstack's migration). The file is never renamed here."""

    kind = "builder-profile"

    def __init__(self, ctx):
        (self.recorded_at,) = ctx
        self.annotated = []

    @staticmethod
    def context(conn, path, project, st):
        return (db.utc_now(),)

    def row(self, obj, text, line_no):
        return _session_row(obj, BUILDER_PROFILE, self.recorded_at)

    @staticmethod
    def flush(conn, rows, annotated, bulk=None):
        return conn.executemany(_SESSION_SQL, rows).rowcount, 0


JSONL_KINDS = {
    "question-log": _QuestionLog,
    "question-events": _PreferenceEvents,
    "builder-profile": _BuilderSessions,
}


def _prepare(kind, ctx, records):
    """Rows for a batch of records: ``(rows, marks, skips, annotated)``.

    ``records`` are ``(obj, text, line_no, multiline, mark)``; ``obj`` is None when the
    record crossed a process boundary as text (decoding again is cheaper than pickling a
    dict). ``mark`` is the (offset, line number) at the end of the record; ``marks`` has
    the mark of each row, so a part of the batch can be committed with its own offset.
    """
    handler = JSONL_KINDS[kind](ctx)
    rows, marks, skips = [], [], []
    for obj, text, line_no, multiline, mark in records:
        if obj is None:
            try:
                obj = _parse(text)
            except json_lite.BadValue as e:
                skips.append((line_no, str(e)))
                continue
            except (ValueError, RecursionError):
                skips.append((line_no, "invalid JSON"))
                continue
            if not isinstance(obj, dict):
                skips.append((line_no, "not a JSON object"))
                continue
        try:
            row = handler.row(obj, None if multiline else text, line_no)
        except _Skip as e:
            skips.append((line_no, str(e)))
            continue
        except RecursionError:
            skips.append((line_no, "nested too deeply"))
            continue
        rows.append(_storable(row) if "\\u" in text else row)
        marks.append(mark)
    return rows, marks, skips, handler.annotated


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _storable(row):
    """The row with unpaired surrogates replaced by U+FFFD, which SQLite can store.

    JS strings may hold them and JSON.stringify writes them as ``\\udXXX`` escapes (gstack
    truncating a summary in the middle of an emoji does exactly that). The key and raw_json
    keep the original.
    """
    return tuple(
        _LONE_SURROGATE.sub("\ufffd", v) if isinstance(v, str) and _LONE_SURROGATE.search(v)
        else v
        for v in row
    )


def _classify(question_id, skill, category, summary, registry):
    """``doors.decide`` with the registry given as ``{id: door_type}`` (import workers)."""
    from toolkit.core import doors

    return doors.decide(question_id, skill, category, summary, registry)


# ---------------------------------------------------------------------------
# JSONL reader

# Inputs at least this large are prepared by worker processes while this one writes.
PARALLEL_MIN_BYTES = 8 << 20
# Page cache for a large read (KiB). Event keys are random, so each insert lands on a
# random leaf of the unique index; SQLite's default 2 MB cache turns that into a read
# syscall per row once the table passes a few hundred thousand rows.
LARGE_READ_CACHE_KIB = 32 << 10


def _worker_count(nbytes, parallel=True):
    """Worker processes for a read of ``nbytes`` (0: prepare in this process).

    ``PLANTUNE_INGEST_WORKERS=N`` forces N workers (0: never) whatever the size.
    """
    if not parallel:
        return 0
    setting = os.environ.get("PLANTUNE_INGEST_WORKERS", "")
    if setting.strip().isdigit():
        return int(setting)
    if nbytes < PARALLEL_MIN_BYTES or not hasattr(os, "fork"):
        return 0
    return max(1, min((os.cpu_count() or 1) - 1, 3))


def _worker_init(parent):
    import signal
    import threading
    import time

    # Ctrl-C is the parent's to handle; a worker printing a traceback helps no one.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch():
        # A parent killed with SIGKILL cannot stop its pool: leave when orphaned.
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


class _Preparer:
    """Prepares batches in this process, or in a pool of workers, results in order."""

    def __init__(self, kind, ctx, workers):
        self.kind, self.ctx = kind, ctx
        self.pool = None
        self.limit = 1
        if workers > 0:
            import multiprocessing

            # Forked while this process holds the database open: the workers never touch
            # it (they only turn text into tuples) and end with os._exit or SIGTERM, so
            # no SQLite state is used or finalised on their side.
            self.pool = multiprocessing.get_context("fork").Pool(
                workers, initializer=_worker_init, initargs=(os.getpid(),))
            self.limit = workers + 1  # batches in flight: bounded memory

    def submit(self, records):
        if self.pool is None:
            return _prepare(self.kind, self.ctx, records)
        # Decoded objects stay here; the text travels and is decoded again over there.
        slim = [(None, t, n, m, k) for _, t, n, m, k in records]
        return self.pool.apply_async(_prepare, (self.kind, self.ctx, slim))

    @staticmethod
    def result(job):
        return job if isinstance(job, tuple) else job.get()

    def close(self):
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


def _ingest_jsonl(conn, path, kind, project, report, state, st, *, strict, final, progress,
                  parallel=True, fh, deadline=None):
    handler = JSONL_KINDS[kind]
    tx = _Tx(conn)
    preparer = cache_size = bulk = None
    try:
        fd = fh.fileno()
        if tx.own:
            # Another process may have moved the state on since the caller looked. Rows
            # are keyed, so two imports of the same lines at once only add them once.
            state = _load_states(conn, [path]).get(path)
            if state is not None and state.unchanged(st):
                report.status = "unchanged"
                return _report_partial(report, state, st, final, strict)
        if strict:
            tx.begin()  # --strict: one transaction, so a bad line undoes the whole file
        else:
            tx.checkpoint_between()
        offset, line_no = 0, 0
        if state is not None:
            if state.inode == st.st_ino and st.st_size >= state.offset:
                head, tail = _fingerprints(fd, state.offset)
                if head == state.head and tail == state.tail:
                    offset, line_no = state.offset, state.line_no
            if offset == 0 and state.offset > 0:
                report.rescanned = True
                report.note(None, "file was replaced or rewritten; read again from the start")

        if st.st_size - offset >= PARALLEL_MIN_BYTES:
            cache_size = conn.execute("PRAGMA cache_size").fetchone()[0]
            conn.execute(f"PRAGMA cache_size = -{LARGE_READ_CACHE_KIB}")
        preparer = _Preparer(kind, handler.context(conn, path, project, st),
                             _worker_count(st.st_size - offset, parallel))
        records = []
        joiner = _LineJoiner(
            lambda obj, text, first, last: records.append(
                (obj, text, first, last != first, joiner.safe())),
            report, line_no, offset)
        in_flight = []  # (job, safe_offset, safe_line, end_offset, last)
        reported = [offset]

        def check_strict():
            if strict and report.skipped:
                bad = min((i for i in report.issues if i.skip), key=lambda i: i.line or 0)
                raise StrictError(report, bad.line, bad.message)

        chunk = [min(BATCH_LINES, 1000)]
        # A large read adds the analysis rollups set-based instead of row by row.
        if (kind == "question-log" and st.st_size - offset >= rollups.BULK_MIN_BYTES
                and rollups.bulk_ready(conn)):
            bulk = rollups.Window(conn).__enter__()

        def land(job, safe_offset, safe_line, end, last):
            # The batch was prepared without the lock; it is written in transactions sized
            # to hold the lock about LOCK_TARGET_SECONDS each. The offset that covers the
            # batch goes with its last rows: a kill in between only means rows read again
            # (and ignored by key) on the next run.
            rows, marks, skips, annotated = preparer.result(job)
            for line, reason in skips:
                report.skip(line, reason)
            check_strict()
            i = 0
            while True:
                part = rows[i:i + chunk[0]] if tx.own and not strict else rows[i:]
                i += len(part)
                done = i >= len(rows)
                at, at_line = (safe_offset, safe_line) if done else marks[i - 1]
                head, tail = _fingerprints(fd, at)
                # Annotations of rows already stored go with the first part (a kill after
                # it keeps them), and again with the last (rows of this very batch).
                notes = annotated if done or i == len(part) else ()
                tx.begin()
                if part or notes:
                    inserted, updated = handler.flush(conn, part, notes, bulk)
                    report.imported += inserted
                    report.duplicate += len(part) - inserted
                    report.updated += updated
                _save_state(conn, path, kind, st, at, at_line, head, tail,
                            size=None if done and last else at)
                if not strict:
                    tx.commit()
                    if tx.holds:
                        chunk[0] = _next_chunk(chunk[0], len(part), tx.holds[-1])
                if done:
                    break
            if progress and end > reported[0]:
                progress(end - reported[0])
                reported[0] = end

        def cut(end, last=False):
            batch = records[:]
            records.clear()
            in_flight.append((preparer.submit(batch), *joiner.safe(), end, last))
            while len(in_flight) >= preparer.limit:
                land(*in_flight.pop(0))

        fh.seek(offset)
        start_offset = offset
        batch = 0
        stopped = False
        readline = fh.readline
        while True:
            raw = readline(MAX_LINE_BYTES)
            size = len(raw)
            if raw[-1:] != b"\n":
                if size < MAX_LINE_BYTES:
                    break  # end of file, or a partial last line left for the next run
                size, complete = _skip_long_line(readline, size)
                if not complete:
                    break
                text = _TOO_LONG
            else:
                try:
                    text = raw[:-1].decode("utf-8")
                except UnicodeDecodeError:
                    text = _NOT_UTF8
                else:
                    if text[-1:] == "\r":
                        text = text[:-1]
            start = offset
            offset += size
            line_no += 1
            joiner.feed(line_no, text, start, offset)
            check_strict()
            batch += 1
            if batch >= BATCH_LINES:
                cut(offset)
                batch = 0
            if offset >= st.st_size:
                break  # bytes appended after our stat are for the next run
            if deadline is not None and not line_no % DEADLINE_CHECK_LINES \
                    and time.monotonic() >= deadline:
                stopped = True  # out of time: what is read so far is kept, the rest waits
                break
        if not stopped:
            joiner.finish()
            check_strict()
        cut(offset, last=not stopped)
        while in_flight:
            land(*in_flight.pop(0))
        report.bytes_read = offset - start_offset
        safe_offset, safe_line = joiner.safe()
        report.pending = st.st_size - safe_offset if stopped else 0
        if final and not stopped and safe_offset < st.st_size:
            report.skip(safe_line + 1, _PARTIAL)
            check_strict()
        tx.commit()
    except BaseException:
        tx.rollback()
        raise
    finally:
        if bulk is not None:
            bulk.__exit__()
        report.add_holds(tx.holds)
        tx.restore()
        if preparer is not None:
            preparer.close()
        if cache_size is not None:
            conn.execute(f"PRAGMA cache_size = {cache_size}")
        report.issues.sort(key=lambda i: (i.line or 0))
    return report


def _skip_long_line(readline, size):
    """Read past the rest of an over-long line: (its total size, whether it ended)."""
    while True:
        chunk = readline(MAX_LINE_BYTES)
        size += len(chunk)
        if not chunk:
            return size, False
        if chunk[-1:] == b"\n":
            return size, True


_PARTIAL = "truncated last line (no newline at end of file); left for the next run"


def _report_partial(report, state, st, final, strict):
    if final and state.offset < st.st_size:
        report.skip(state.line_no + 1, _PARTIAL)
        if strict:
            raise StrictError(report, state.line_no + 1, _PARTIAL)
    return report


# ---------------------------------------------------------------------------
# Whole-file JSON stores


def _line_of(text, needle, start=0):
    """1-based line of the first ``needle`` at or after ``start`` (for file:line reports)."""
    i = text.find(needle, start)
    return text.count("\n", 0, i) + 1 if i >= 0 else None


_BAD_NUMBER = re.compile(r"[0-9][eE]\+?[0-9]{3}|[0-9]{300}|NaN|Infinity")


def _line_of_bad_value(text):
    """The line of the first number a whole-file store cannot hold (1 when not found)."""
    m = _BAD_NUMBER.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else 1


def _load_object(report, data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        report.skip(1, "not valid UTF-8")
        return None, None
    try:
        obj = _parse(text)
    except json_lite.BadValue as e:
        report.skip(_line_of_bad_value(text), str(e))
        return None, text
    except json.JSONDecodeError as e:
        report.skip(e.lineno, f"invalid JSON ({e.msg})")
        return None, text
    except (ValueError, RecursionError):
        report.skip(1, "invalid JSON")
        return None, text
    if not isinstance(obj, dict):
        report.skip(1, "not a JSON object")
        return None, text
    return obj, text


def _apply_preferences(conn, report, obj, text, scope, st):
    """Make the scope's real preference rows say what the file says.

    The file is real: a row it sets is real (synthetic = 0) even where a simulated one was,
    and simulated rows it does not mention are left alone (they never reach the file).
    """
    current = {
        r[0]: (r[1], r[2])
        for r in conn.execute(
            "SELECT question_id, preference, raw_value FROM preferences WHERE scope = ?"
            " AND synthetic = 0", (scope,)
        )
    }
    file_ts = _mtime_ts(st)
    seen = set()
    for qid, value in obj.items():
        qid = _LONE_SURROGATE.sub("\ufffd", qid)
        if isinstance(value, str):
            value = _LONE_SURROGATE.sub("\ufffd", value)
        if not qid:
            report.skip(_line_of(text, '""'), "empty question id")
            continue
        seen.add(qid)
        if isinstance(value, str) and value in PREFERENCE_VALUES:
            pref, raw = value, None
        else:
            # gstack keeps such values (and `--check` answers ASK_NORMALLY with a NOTE); so do we.
            pref = "unknown"
            raw = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if current.get(qid) == (pref, raw):
            report.duplicate += 1
            continue
        event = conn.execute(
            "SELECT source, free_text, ts FROM preference_events WHERE scope = ?"
            " AND question_id = ? AND event_type = 'preference-set' AND preference IS ?"
            " ORDER BY ts DESC, id DESC LIMIT 1",
            (scope, qid, value if isinstance(value, str) else None),
        ).fetchone()
        source, free_text, ts = event if event else (PREFERENCE_FILE_SOURCE, None, file_ts)
        conn.execute(
            "INSERT INTO preferences (scope, question_id, preference, raw_value, source,"
            " free_text, updated_at, developer) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (scope, question_id) DO UPDATE SET preference = excluded.preference,"
            " raw_value = excluded.raw_value, source = excluded.source,"
            " free_text = excluded.free_text, synthetic = 0, updated_at = excluded.updated_at,"
            " developer = excluded.developer",
            _storable((scope, qid, pref, raw, source or PREFERENCE_FILE_SOURCE, free_text,
                       ts or file_ts, identity.developer())),  # raw may be JSON text
        )
        if qid in current:
            report.updated += 1
        else:
            report.imported += 1
    gone = [qid for qid in current if qid not in seen]
    for qid in gone:
        conn.execute("DELETE FROM preferences WHERE scope = ? AND question_id = ? AND synthetic = 0",
                     (scope, qid))
    report.removed += len(gone)


def _apply_profile(conn, report, obj, text, st):
    """Declared values -> declared_profile ('__global__'); sessions -> office_hours_sessions."""
    declared = obj.get("declared")
    if declared is not None and not isinstance(declared, dict):
        report.skip(_line_of(text, '"declared"'), "declared must be an object")
    elif isinstance(declared, dict):
        at = obj.get("declared_at")
        at = at if isinstance(at, str) and at else _mtime_ts(st)
        start = text.find('"declared"')
        current = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT dimension, value FROM declared_profile WHERE scope = ? AND synthetic = 0",
                (db.GLOBAL_SCOPE,),
            )
        }
        keep = set()
        for dim, value in declared.items():
            line = _line_of(text, json.dumps(dim), max(start, 0))
            if dim not in DIMENSIONS:
                report.skip(line, f"declared.{dim}: unknown dimension")
                continue
            keep.add(dim)  # an invalid value leaves the stored one alone
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not (ok and 0 <= value <= 1):
                report.skip(line, f"declared.{dim}: must be a number between 0 and 1")
                continue
            if current.get(dim) == float(value):
                report.duplicate += 1
                continue
            conn.execute(
                "INSERT INTO declared_profile (scope, dimension, value, source, declared_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, dimension) DO UPDATE SET"
                " value = excluded.value, source = excluded.source, synthetic = 0,"
                " declared_at = excluded.declared_at",
                (db.GLOBAL_SCOPE, dim, float(value), PROFILE_SOURCE, at),
            )
            if dim in current:
                report.updated += 1
            else:
                report.imported += 1
        gone = [d for d in current if d not in keep]
        for dim in gone:
            conn.execute(
                "DELETE FROM declared_profile WHERE scope = ? AND dimension = ? AND synthetic = 0",
                (db.GLOBAL_SCOPE, dim),
            )
        report.removed += len(gone)

    sessions = obj.get("sessions")
    if sessions is None:
        return
    if not isinstance(sessions, list):
        report.skip(_line_of(text, '"sessions"'), "sessions must be an array")
        return
    recorded_at = db.utc_now()
    rows = []
    for i, session in enumerate(sessions):
        if not isinstance(session, dict):
            report.skip(_line_of(text, '"sessions"'), f"sessions[{i}]: not a JSON object")
            continue
        rows.append(_storable(_session_row(session, DEVELOPER_PROFILE, recorded_at)))
    inserted = conn.executemany(_SESSION_SQL, rows).rowcount if rows else 0
    report.imported += inserted
    report.duplicate += len(rows) - inserted


def _ingest_whole(conn, path, kind, project, report, state, st, *, strict, final, progress,
                  parallel=False, fh):
    tx = _Tx(conn)
    tx.begin()
    try:
        if tx.own:
            state = _load_states(conn, [path]).get(path)
            if state is not None and state.unchanged(st):
                report.status = "unchanged"
                tx.commit()
                return report
        # Read under the write lock (see the module docstring).
        data = fh.read()
        digest = _sha1(data).hexdigest()
        report.bytes_read = len(data)
        if progress:
            progress(len(data))
        if state is not None and state.head == digest:
            # Touched but identical: remember the new stat so the next run is a stat again.
            _save_state(conn, path, kind, st, len(data), 0, digest, digest)
            tx.commit()
            return report
        obj, text = _load_object(report, data)
        if obj is not None:
            if kind == "question-preferences":
                _apply_preferences(conn, report, obj, text, project, st)
            else:
                _apply_profile(conn, report, obj, text, st)
        if strict and report.skipped:
            bad = next(i for i in report.issues if i.skip)
            raise StrictError(report, bad.line, bad.message)
        if obj is not None:
            # A file we could not parse keeps no state: it is read (and reported) again next
            # time, and a half-written file is picked up once its writer finishes.
            _save_state(conn, path, kind, st, len(data), 0, digest, digest)
        tx.commit()
    except BaseException:
        tx.rollback()
        raise
    finally:
        report.add_holds(tx.holds)
    return report


WHOLE_KINDS = ("question-preferences", "developer-profile")


# ---------------------------------------------------------------------------
# Entry points


def ingest_file(conn, path, kind, project=None, *, state=None, strict=False, final=True,
                progress=None, report=None, parallel=True, root=None, deadline=None):
    """Ingest one gstack file of ``kind``; returns its :class:`FileReport`.

    ``final`` marks an explicit run: a truncated last line is then reported as skipped.
    ``state`` is the file's known ingest state when the caller already loaded it.
    ``parallel`` allows worker processes for a large read. Only a regular file is read
    (a FIFO, socket or device, or a symlink out of ``root``, is reported and skipped
    without ever blocking). A JSONL read stops at a line boundary once
    ``time.monotonic()`` passes ``deadline``, keeping what it read (the report's
    ``pending`` is the bytes left).
    """
    report = report or FileReport(path, kind, project)
    try:
        fh = safe_io.open_binary(path, root=root)
    except OSError as e:
        report.status = "error"
        report.error = e.reason if isinstance(e, safe_io.UnsafeFile) else (e.strerror or str(e))
        return report
    with fh:
        return _ingest_open(conn, path, kind, project, report, state, os.fstat(fh.fileno()),
                            strict=strict, final=final, progress=progress, parallel=parallel,
                            fh=fh, deadline=deadline)


def _ingest_open(conn, path, kind, project, report, state, st, *, strict, final, progress,
                 parallel, fh, deadline=None):
    if state is None:
        state = _load_states(conn, [path]).get(path)
    if state is not None and state.unchanged(st):
        report.status = "unchanged"
        if kind in JSONL_KINDS:
            try:
                _report_partial(report, state, st, final, strict)
            except StrictError:
                report.status = "failed"
                raise
        return report
    run, extra = ((_ingest_whole, {}) if kind in WHOLE_KINDS
                  else (_ingest_jsonl, {"deadline": deadline}))
    try:
        return run(conn, path, kind, project, report, state, st, strict=strict, final=final,
                   progress=progress, parallel=parallel, fh=fh, **extra)
    except StrictError:
        report.status = "failed"
        raise
    except OSError as e:
        report.status = "error"
        report.error = e.strerror or str(e)
        return report


def _project_files(state_root, slug):
    base = os.path.join(state_root, "projects", slug)
    return [(os.path.join(base, name), kind) for name, kind in PROJECT_FILES]


def sync_project(conn, state_root, slug, *, deadline=None, skip_jsonl=False) -> dict:
    """Bring one project's three gstack files into the database; cheap when nothing changed.

    For the hot path: an unchanged file costs one ``stat`` (plus one indexed query for all
    three). A partial last line is left alone and not reported. ``deadline`` (a
    ``time.monotonic()`` value) bounds the JSONL reads; ``skip_jsonl`` leaves them all for
    later (whole-file stores are still made current). Returns a summary dict:
    ``{"project", "imported", "duplicate", "skipped", "pending", "files": [...]}`` where
    ``pending`` is the JSONL bytes left unread.
    """
    if not is_valid_slug(slug):
        raise ValueError(f"unsafe project slug: {slug!r}")
    files = _project_files(os.fspath(state_root), slug)
    states = _load_states(conn, [p for p, _ in files])
    reports = []
    pending = 0
    for path, kind in files:
        state = states.get(path)
        if state is None and not os.path.lexists(path):
            continue
        if kind in JSONL_KINDS and (skip_jsonl or (
                deadline is not None and time.monotonic() >= deadline)):
            pending += unread_bytes(state, path)
            continue
        report = ingest_file(conn, path, kind, slug, state=state, final=False,
                             parallel=False, root=state_root, deadline=deadline)
        pending += report.pending
        reports.append(report)
    return {
        "project": slug,
        "imported": sum(r.imported for r in reports),
        "duplicate": sum(r.duplicate for r in reports),
        "skipped": sum(r.skipped for r in reports),
        "pending": pending,
        "files": [r.as_dict() for r in reports],
    }


def history_files(state_root):
    """Every gstack file under ``state_root`` the importer would read: [(path, kind, project)]."""
    return _plan(os.fspath(state_root), Summary(os.fspath(state_root)))


def _plan(state_root, summary):
    """Every file to ingest under ``state_root``: [(path, kind, project)]."""
    plan = []
    projects_dir = os.path.join(state_root, "projects")
    try:
        names = sorted(os.listdir(projects_dir))
    except FileNotFoundError:
        names = []
    except OSError as e:
        summary.problems.append(f"{projects_dir}: {e.strerror or e}")
        names = []
    for name in names:
        base = os.path.join(projects_dir, name)
        if not os.path.isdir(base):
            continue
        if not is_valid_slug(name):
            summary.problems.append(f"{base}: not a gstack project slug, skipped")
            continue
        # Anything at a store's path is planned: a FIFO or a symlink out of the state root
        # is then reported by ingest_file (refused, never read), not silently passed over.
        found = [(p, k) for p, k in _project_files(state_root, name) if os.path.lexists(p)]
        if found:
            summary.projects.append(name)
        plan.extend((p, k, name) for p, k in found)
    for name, kind in ROOT_FILES:
        path = os.path.join(state_root, name)
        if os.path.lexists(path):
            plan.append((path, kind, None))
    return plan


def pending_bytes(conn, plan):
    """Bytes the plan will read (for a progress bar): whole changed files, JSONL tails."""
    states = _load_states(conn, [p for p, _, _ in plan]) if plan else {}
    total = 0
    for path, kind, _ in plan:
        try:
            st = os.stat(path)
        except OSError:
            continue
        state = states.get(path)
        if state is not None and state.unchanged(st):
            continue
        start = state.offset if state is not None and kind in JSONL_KINDS else 0
        total += max(st.st_size - min(start, st.st_size), 0)
    return total


def drain_spool(conn, state_root):
    """Record every event spooled under ``state_root`` (see toolkit.gstack.spool), oldest first.

    Events spooled while the database was locked are older than anything this run reads
    from the files, so they go first. Their gstack lines go to the same state root.
    """
    from toolkit.gstack import spool

    env = dict(os.environ, GSTACK_STATE_ROOT=state_root)
    return spool.drain(conn, env)


def ingest_state_root(conn, state_root, strict=False, progress=None) -> Summary:
    """Ingest every gstack store under ``state_root``; returns a :class:`Summary`.

    ``progress(advance_bytes, total_bytes)`` is called as bytes are read. With ``strict``
    the first skipped line raises :class:`StrictError` after rolling back its file (files
    finished before it stay imported). Raises :class:`IngestError` when the state root is
    missing.
    """
    state_root = os.fspath(state_root)
    if not os.path.exists(state_root):
        raise IngestError(f"state root {state_root} does not exist")
    if not os.path.isdir(state_root):
        raise IngestError(f"state root {state_root} is not a directory")
    summary = Summary(state_root)
    summary.spool = drain_spool(conn, state_root)
    plan = _plan(state_root, summary)
    tick = None
    if progress is not None:
        total = pending_bytes(conn, plan)

        def tick(n):
            progress(n, total)

    for path, kind, project in plan:
        report = FileReport(path, kind, project)
        summary.files.append(report)
        try:
            ingest_file(conn, path, kind, project, strict=strict, final=True, progress=tick,
                        report=report, root=state_root)
        except StrictError as e:
            e.summary = summary
            raise
    return summary
