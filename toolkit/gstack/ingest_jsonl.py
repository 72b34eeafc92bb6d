"""Importing gstack's JSONL stores: complete lines to records, records to rows, read from
where the last import stopped.

Only complete lines are consumed (a partial last line waits for the next run); a bad line
is skipped and reported with its line number; a pretty-printed object spread over several
lines is joined and imported, with a note.
"""

from __future__ import annotations

import json
import re
import time

from toolkit.core import identity, jscompat, questions
from toolkit.gstack import file_state, ingest_tx
from toolkit.gstack.file_state import BUILDER_PROFILE
from toolkit.gstack.ingest_base import (
    DEADLINE_CHECK_LINES,
    EVENT_FIELDS,
    EVENT_TYPES,
    MULTILINE_MAX_CHARS,
    MULTILINE_MAX_LINES,
    Skip,
    StrictError,
    decode_json,
    mtime_ts,
    session_key,
    text_or_none,
)
from toolkit.store import db, json_lite, rollups

# ---------------------------------------------------------------------------
# JSONL: complete lines -> records


class BadLine:
    """A line that cannot be a record before parsing (not UTF-8, absurdly long)."""

    __slots__ = ("reason",)

    def __init__(self, reason):
        self.reason = reason


_NOT_UTF8 = BadLine("not valid UTF-8")
# No record is this long; reading such a line whole would unbound memory.
MAX_LINE_BYTES = 16 << 20
_TOO_LONG = BadLine(f"line longer than {MAX_LINE_BYTES >> 20} MiB")


class _LineJoiner:
    """Turns complete physical lines into JSON records.

    A line that starts with ``{`` and ends with ``}`` is one record: it is handed on
    undecoded (``obj`` None) and decoded where it is turned into a row. A line that starts
    with ``{`` but does not end with ``}`` opens a block: following lines are added until
    the block parses as one object (a pretty-printed record, imported with a note). The
    block is abandoned, its first line reported and the rest read again line by line, when
    a new top-level record starts (a line at column 0 that parses alone), when it grows
    past the limits, or at the end of the input.
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
            obj = decode_json(text)
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
                decode_json(text)
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
# (no database access): one handler serves one file's import.


# Question-log sources plantune writes beyond gstack's own (a flipped Silent Decision).
OWN_SOURCES = ("flip",)


def question_record(obj, default_ts):
    """The validated record a question-log.jsonl line is imported as; raises ``Skip`` with
    the reason when the line is not imported. The one check for both the importer and the
    dedup window over lines still waiting for import (:mod:`toolkit.gstack.backlog`)."""
    try:
        if obj.get("source") in OWN_SOURCES:
            # A line plantune itself wrote (a pacing flip): gstack's rules but that
            # source, which gstack's readers count like any other.
            rec = questions.validate_event(dict(obj, source="agent"), now=default_ts)
            rec["source"] = obj["source"]
            return rec
        return questions.validate_event(obj, now=default_ts)
    except questions.QuestionError as e:
        raise Skip(e.message.removeprefix(questions.PREFIX + ": ")) from None


class _QuestionLog:
    """question-log.jsonl lines: validated with gstack's rules, stored with their original
    content (key and raw_json from the line as written, ts/source/unknown fields kept)."""

    kind = "question-log"

    def __init__(self, ctx):
        self.path, self.project, self.default_ts, self.recorded_at, self.registry = ctx
        self.annotated = []
        self.classify = DoorCache()

    @staticmethod
    def context(conn, path, project, st):
        registry = dict(conn.execute("SELECT id, door_type FROM registry_questions"))
        return (path, project, mtime_ts(st), db.utc_now(), registry)

    def row(self, obj, text, line_no):
        rec = question_record(obj, self.default_ts)
        key = questions.event_key(self.project, obj)
        row = questions.prepare_row(
            rec,
            self.project,
            registry=self.registry,
            key=key,
            raw=text if text is not None else jscompat.stringify(obj),
            ingested_from=f"{self.path}:{line_no}",
            recorded_at=self.recorded_at,
            default_ts=self.default_ts,
            classify=self.classify,
        )
        if any(k in obj for k in questions.ANNOTATION_FIELDS):
            self.annotated.append((row[20], row[21], key, row[21]))
        return row

    @staticmethod
    def flush(conn, rows, annotated, bulk=None):
        if bulk is not None:
            inserted = bulk.put(questions.INSERT_SQL, rows)  # the writer finishes it
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
        return (path, project, mtime_ts(st))

    def row(self, obj, text, line_no):
        event_type = obj.get("event_type")
        if event_type not in EVENT_TYPES:
            raise Skip("event_type must be one of: " + ", ".join(EVENT_TYPES))
        # A known field of the wrong type is kept in extra_json rather than dropped.
        extra = {
            k: v
            for k, v in obj.items()
            if k not in EVENT_FIELDS or (k != "event_type" and not isinstance(v, str))
        }
        ts = obj.get("ts")
        return (
            questions.event_key(self.project, obj),
            self.project,
            ts if isinstance(ts, str) and ts else self.default_ts,
            event_type,
            text_or_none(obj.get("question_id")),
            text_or_none(obj.get("preference")),
            text_or_none(obj.get("source")),
            text_or_none(obj.get("free_text")),
            json.dumps(extra, ensure_ascii=False, separators=(",", ":")) if extra else "{}",
            f"{self.path}:{line_no}",
            identity.developer(),
        )

    @classmethod
    def flush(cls, conn, rows, annotated, bulk=None):
        return conn.executemany(cls.SQL, rows).rowcount, 0


SESSION_SQL = (
    "INSERT OR IGNORE INTO office_hours_sessions (session_key, ts, date, mode, project_slug,"
    " signals_json, resources_json, topics_json, design_doc, assignment, raw_json, origin,"
    " recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _json_array(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":")) if isinstance(v, list) else "[]"


def session_row(session, origin, recorded_at):
    return (
        session_key(session),
        text_or_none(session.get("ts")),
        text_or_none(session.get("date")),
        text_or_none(session.get("mode")),
        text_or_none(session.get("project_slug")),
        _json_array(session.get("signals")),
        _json_array(session.get("resources_shown")),
        _json_array(session.get("topics")),
        text_or_none(session.get("design_doc")),
        text_or_none(session.get("assignment")),
        jscompat.stringify(session),
        origin,
        recorded_at,
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
        return session_row(obj, BUILDER_PROFILE, self.recorded_at)

    @staticmethod
    def flush(conn, rows, annotated, bulk=None):
        return conn.executemany(SESSION_SQL, rows).rowcount, 0


HANDLERS = {
    "question-log": _QuestionLog,
    "question-events": _PreferenceEvents,
    "builder-profile": _BuilderSessions,
}


def _prepare(handler, records):
    """Rows for a batch of records: ``(rows, marks, skips, annotated)``.

    ``records`` are ``(obj, text, line_no, multiline, mark)``; ``obj`` is None when the
    line is still undecoded. ``mark`` is the (offset, line number) at the end of the
    record; ``marks`` has the mark of each row, so a part of the batch can be committed
    with its own offset.
    """
    annotated = handler.annotated = []
    rows, marks, skips = [], [], []
    for obj, text, line_no, multiline, mark in records:
        if obj is None:
            try:
                obj = decode_json(text)
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
        except Skip as e:
            skips.append((line_no, str(e)))
            continue
        except RecursionError:
            skips.append((line_no, "nested too deeply"))
            continue
        rows.append(storable(row) if "\\u" in text else row)
        marks.append(mark)
    return rows, marks, skips, annotated


LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(row):
    """The row with unpaired surrogates replaced by U+FFFD, which SQLite can store.

    JS strings may hold them and JSON.stringify writes them as ``\\udXXX`` escapes (gstack
    truncating a summary in the middle of an emoji does exactly that). The key and raw_json
    keep the original.
    """
    return tuple(
        LONE_SURROGATE.sub("\ufffd", v) if isinstance(v, str) and LONE_SURROGATE.search(v) else v
        for v in row
    )


# Verdicts a DoorCache keeps at most; then it starts again (memory stays bounded when
# every question of a large log is worded differently).
DOOR_CACHE_ENTRIES = 20_000


class DoorCache:
    """``doors.decide`` (same signature) that keeps its verdicts for one import, keyed by
    exactly what it was asked: a question asked again with the same id, skill, category
    and text gets the verdict the same rules gave it the first time. The registry is the
    one the import loaded, the same for every call."""

    def __init__(self):
        from toolkit.core import doors

        self.decide = doors.decide
        self.seen = {}

    def __call__(self, question_id, skill, category, summary, registry):
        key = (question_id, skill, category, summary)
        if not all(v is None or type(v) is str for v in key):
            return self.decide(question_id, skill, category, summary, registry)
        verdict = self.seen.get(key)
        if verdict is None:
            if len(self.seen) >= DOOR_CACHE_ENTRIES:
                self.seen.clear()
            verdict = self.seen[key] = self.decide(question_id, skill, category, summary, registry)
        return verdict


# ---------------------------------------------------------------------------
# JSONL reader

# Inputs at least this large are read with a larger page cache.
LARGE_READ_BYTES = 8 << 20
# Page cache for a large read (KiB). Event keys are random, so each insert lands on a
# random leaf of the unique index; SQLite's default 2 MB cache turns that into a read
# syscall per row once the table passes a few hundred thousand rows.
LARGE_READ_CACHE_KIB = 32 << 10
# A large read keeps SQLite's temporary b-trees (the sorting and grouping of the set-based
# rollup upkeep, ``rollups.Bulk``) in memory instead of temporary files: they hold one
# batch's rows at most, and nothing in them is ever the data itself (measured:
# benchmarks/RESULTS.md, "Issue 28 point 3, round 3").
LARGE_READ_TEMP_STORE = "MEMORY"


def _resume_point(fd, state, st, report):
    """``(offset, line_no)`` to read from (see :func:`file_state.resume_point`)."""
    offset, line_no = file_state.resume_point(fd, state, st)
    if state is not None:
        if offset == 0 and state.offset > 0:
            report.rescanned = True
            report.note(None, "file was replaced or rewritten; read again from the start")
    return offset, line_no


def _read_lines(fh, offset, line_no, st, joiner, check_strict, cut, deadline):
    """Feed the complete lines from ``offset`` to ``joiner``, cutting a batch every
    ``BATCH_LINES`` lines; ``(offset, line_no, stopped)`` at the end (``stopped``: the
    deadline passed, the rest waits for the next run)."""
    fh.seek(offset)
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
        if batch >= ingest_tx.BATCH_LINES:
            cut(offset)
            batch = 0
        if offset >= st.st_size:
            break  # bytes appended after our stat are for the next run
        if (
            deadline is not None
            and not line_no % DEADLINE_CHECK_LINES
            and time.monotonic() >= deadline
        ):
            stopped = True  # out of time: what is read so far is kept, the rest waits
            break
    return offset, line_no, stopped


class _BatchWriter:
    """Writes the prepared batches of one JSONL file.

    A batch is prepared without the write lock; it is written in parts of about
    CHECK_SECONDS each, in one transaction that commits when a writer waits, after
    LOCK_MAX_SECONDS, and at the batch's end (``ingest_tx``). The offset that covers the
    rows goes with the commit: a kill in between only means rows read again (and ignored
    by key) on the next run.
    """

    def __init__(self, conn, path, kind, st, fd, report, tx, strict, bulk, progress, offset):
        self.conn, self.path, self.kind, self.st, self.fd = conn, path, kind, st, fd
        self.report, self.tx, self.strict = report, tx, strict
        self.bulk, self.progress = bulk, progress
        self.chunk = min(ingest_tx.BATCH_LINES, 1000)
        self.reported = offset

    def check_strict(self):
        report = self.report
        if self.strict and report.skipped:
            bad = min((i for i in report.issues if i.skip), key=lambda i: i.line or 0)
            raise StrictError(report, bad.line, bad.message)

    def land(self, handler, prepared, safe_offset, safe_line, end, last):
        conn, report, tx, strict = self.conn, self.report, self.tx, self.strict
        rows, marks, skips, annotated = prepared
        for line, reason in skips:
            report.skip(line, reason)
        self.check_strict()
        i = 0
        while True:
            part = rows[i : i + self.chunk] if tx.own and not strict else rows[i:]
            i += len(part)
            done = i >= len(rows)
            # Annotations of rows already stored go with the first part (a kill after
            # it keeps them), and again with the last (rows of this very batch).
            notes = annotated if done or i == len(part) else ()
            tx.begin()
            started = time.perf_counter()
            if part or notes:
                inserted, updated = handler.flush(conn, part, notes, self.bulk)
                report.imported += inserted
                report.duplicate += len(part) - inserted
                report.updated += updated
            if done or tx.should_commit():
                if self.bulk is not None:
                    self.bulk.finish()
                at, at_line = (safe_offset, safe_line) if done else marks[i - 1]
                head, tail = file_state.fingerprints(self.fd, at)
                file_state.save(
                    conn,
                    self.path,
                    self.kind,
                    self.st,
                    at,
                    at_line,
                    head,
                    tail,
                    size=None if done and last else at,
                )
                if not strict:
                    tx.commit()
            if part and tx.own and not strict:
                self.chunk = ingest_tx.next_chunk(
                    self.chunk, len(part), time.perf_counter() - started
                )
            if done:
                break
        if self.progress and end > self.reported:
            self.progress(end - self.reported)
            self.reported = end


def read_jsonl(job):
    """Import the complete lines of ``job`` (a :class:`FileRead`) from where the last
    import stopped; returns the job's report."""
    conn, path, kind, project, report, st = (
        job.conn,
        job.path,
        job.kind,
        job.project,
        job.report,
        job.st,
    )
    state, strict, final, progress, fh = job.state, job.strict, job.final, job.progress, job.fh
    deadline = job.deadline
    tx = ingest_tx.Tx(conn)
    cache_size = temp_store = bulk = None
    try:
        fd = fh.fileno()
        if tx.own:
            # Another process may have moved the state on since the caller looked. Rows
            # are keyed, so two imports of the same lines at once only add them once.
            state = file_state.load(conn, [path]).get(path)
            if state is not None and state.unchanged(st):
                report.status = "unchanged"
                return report_partial(report, state, st, final, strict)
        if strict:
            tx.begin()  # --strict: one transaction, so a bad line undoes the whole file
        else:
            tx.checkpoint_between()
        offset, line_no = _resume_point(fd, state, st, report)

        if st.st_size - offset >= LARGE_READ_BYTES:
            cache_size = conn.execute("PRAGMA cache_size").fetchone()[0]
            temp_store = conn.execute("PRAGMA temp_store").fetchone()[0]
            conn.execute(f"PRAGMA cache_size = -{LARGE_READ_CACHE_KIB}")
            conn.execute(f"PRAGMA temp_store = {LARGE_READ_TEMP_STORE}")
        kind_class = HANDLERS[kind]
        handler = kind_class(kind_class.context(conn, path, project, st))
        records = []
        joiner = _LineJoiner(
            lambda obj, text, first, last: records.append(
                (obj, text, first, last != first, joiner.safe())
            ),
            report,
            line_no,
            offset,
        )

        # A large read adds the analysis rollups set-based instead of row by row.
        if kind == "question-log" and st.st_size - offset >= rollups.BULK_MIN_BYTES:
            bulk = rollups.Bulk(conn)
        writer = _BatchWriter(conn, path, kind, st, fd, report, tx, strict, bulk, progress, offset)
        check_strict = writer.check_strict

        def cut(end, last=False):
            prepared = _prepare(handler, records)
            records.clear()
            writer.land(handler, prepared, *joiner.safe(), end, last)

        start_offset = offset
        offset, line_no, stopped = _read_lines(
            fh, offset, line_no, st, joiner, check_strict, cut, deadline
        )
        if not stopped:
            joiner.finish()
            check_strict()
        cut(offset, last=not stopped)
        report.bytes_read = offset - start_offset
        safe_offset, safe_line = joiner.safe()
        report.pending = st.st_size - safe_offset if stopped else 0
        if final and not stopped and safe_offset < st.st_size:
            report.skip(safe_line + 1, _PARTIAL)
            check_strict()
        tx.commit()
    except BaseException:
        if bulk is not None and not tx.own:
            bulk.finish()  # the caller's transaction keeps its rollups and their triggers
        tx.rollback()
        raise
    finally:
        report.add_holds(tx.holds)
        tx.restore()
        if cache_size is not None:
            conn.execute(f"PRAGMA cache_size = {cache_size}")
            conn.execute(f"PRAGMA temp_store = {temp_store}")
        report.issues.sort(key=lambda i: i.line or 0)
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


def report_partial(report, state, st, final, strict):
    if final and state.offset < st.st_size:
        report.skip(state.line_no + 1, _PARTIAL)
        if strict:
            raise StrictError(report, state.line_no + 1, _PARTIAL)
    return report
