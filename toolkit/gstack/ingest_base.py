"""What every part of an import of gstack's stores shares: the file kinds and limits, the
errors, canonical keys, and the report of what was read, skipped and why.
"""

from __future__ import annotations

import json

from toolkit.core import questions
from toolkit.store import json_lite
from toolkit.store.digest import sha1 as _sha1

# How often (in lines) a read with a deadline looks at the clock.
DEADLINE_CHECK_LINES = 32
# A pretty-printed record longer than this is not a record: its first line is reported.
MULTILINE_MAX_LINES = 500
MULTILINE_MAX_CHARS = 1 << 20

EVENT_TYPES = ("preference-set", "preference-cleared")
EVENT_FIELDS = ("ts", "event_type", "question_id", "preference", "source", "free_text")
PREFERENCE_FILE_SOURCE = "gstack-file"
PROFILE_SOURCE = "developer-profile.json"


class FileRead:
    """One file's import: the file (open, with its stat), where it goes and the rules of
    this run. ``state`` is what ``ingest_state`` knew of the file (None: never read);
    ``final`` marks an explicit run (a truncated last line is reported as skipped);
    ``progress(advance_bytes)`` is called as bytes are read; a JSONL read stops at a line
    boundary once ``time.monotonic()`` passes ``deadline``."""

    __slots__ = (
        "conn",
        "path",
        "kind",
        "project",
        "report",
        "fh",
        "st",
        "state",
        "strict",
        "final",
        "progress",
        "deadline",
    )

    def __init__(
        self,
        conn,
        path,
        kind,
        project,
        report,
        fh,
        st,
        *,
        state=None,
        strict=False,
        final=True,
        progress=None,
        deadline=None,
    ):
        self.conn, self.path, self.kind, self.project = conn, path, kind, project
        self.report, self.fh, self.st, self.state = report, fh, st, state
        self.strict, self.final, self.progress, self.deadline = strict, final, progress, deadline


class IngestError(Exception):
    """Nothing could be ingested (missing state root...); ``str()`` is the one-line reason."""


class StrictError(IngestError):
    """``strict`` ingest met a line it had to skip; ``report`` is the file's report."""

    def __init__(self, report, line, reason):
        where = f"{report.path}:{line}" if line else report.path
        super().__init__(
            f"{where}: {reason} (--strict: stopped, this run imported nothing from this file)"
        )
        self.report = report


class Skip(Exception):
    """One record cannot be imported; the message is the reason shown to the user."""


def decode_json(text):
    """The decoded JSON value, or raise ValueError (:class:`~toolkit.json_lite.BadValue`,
    with the reason, for 1e999, NaN, nesting past the limit).

    Lone surrogates are let through: gstack's own lines carry them (a summary cut in the
    middle of an emoji) and rows store them as U+FFFD (see ``storable``).
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


def text_or_none(v):
    return v if isinstance(v, str) else None


def mtime_ts(st) -> str:
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

        return {
            "lock_p50_ms": at(0.5),
            "lock_p99_ms": at(0.99),
            "lock_over_100ms": sum(h > 0.1 for h in holds),
        }

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
