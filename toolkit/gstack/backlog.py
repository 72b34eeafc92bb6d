"""Import a large backlog of gstack lines in a detached background process.

A user switching from gstack may have a million lines in ``question-log.jsonl`` that the
database has not seen. Hooks and compat commands pick up other writers' changes on every
call, but they must answer within an agent's hook timeout: past a small budget they hand
the rest of the backlog to one background process and answer from what is imported.

One background ingest runs per database, under an exclusive ``flock`` on
``<database>-backlog.lock``. The caller takes the lock before it spawns the process and the
process inherits it, so two callers can never start two ingests, and the lock goes with
the process however it ends. The importer commits rows together with the offset that
covers them, in short transactions: a killed ingest loses nothing and the next one continues
where it stopped, and a line is never counted twice (rows also have deterministic keys).

Only the standard library is imported here: this module is on the hot path.
"""

import os
import sys

LOCK_SUFFIX = "-backlog.lock"
# The background process yields the CPU to the commands an agent is waiting for.
NICENESS = 10


def lock_path(db_path):
    return f"{db_path}{LOCK_SUFFIX}"


def _open_lock(db_path):
    return os.open(lock_path(db_path), os.O_RDWR | os.O_CREAT, 0o600)


def _try_lock(fd):
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def running(db_path):
    """True while a background ingest holds the lock for this database."""
    try:
        fd = _open_lock(db_path)
    except OSError:
        return False
    try:
        return not _try_lock(fd)
    finally:
        os.close(fd)  # closing the only descriptor of this open file releases our lock


def package_parent():
    """The folder that holds the ``toolkit`` package (what the child puts on sys.path)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# gstack's dedup window is the last 100 lines of the file, whatever their size. While a
# backlog waits for import, the file's newest unread lines are found by reading backwards
# from the end in chunks, up to 100 line ends or the importer's offset. Lines are kept as
# positions only; the newest bytes (up to TAIL_KEEP_BYTES) stay in memory to be searched,
# an older (long) line is searched in pieces, and only a line that holds the id's bytes (or
# an escape that could spell it) is decoded and parsed.
TAIL_CHUNK = 64 << 10
TAIL_KEEP_BYTES = 1 << 20


def unimported_twin(conn, fd, path, project, event, window, whole=False):
    """``(twin, lines)`` over the last ``window`` lines of the open ``fd`` (``path``,
    ``project``'s question-log.jsonl, opened as the importer opens it) that the importer
    has not read, or, with ``whole``, over the file's last lines, read or not. ``lines``
    is how many lines were looked at; ``twin`` whether one of them holds ``event``
    (source, tool_use_id, question position) and is recorded: its event is in the
    database, or the line is unread and the importer will import it.

    The caller asks inside the write transaction that would insert the event: the importer
    commits rows together with the offset that covers them, so database rows plus the
    lines past the offset are the whole history, nothing seen twice or missed.
    """
    import stat

    from toolkit.gstack import ingest_state

    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return False, 0
    # Where the importer will start: its offset only when the file is still the one it
    # read (fingerprints), else the start (replaced, or truncated and written again).
    state = ingest_state._load_states(conn, [path]).get(path)
    start, _ = ingest_state.resume_point(fd, state, st)
    tail = _Tail(fd, 0 if whole else start, st.st_size)
    spans = tail.last_lines(window)
    needle = event[1].encode("utf-8", "surrogatepass")
    for lo, hi in spans:
        if tail.holds(lo, hi, needle) and _is_twin(conn, tail, lo, hi, project, event, lo >= start):
            return True, len(spans)
    return False, len(spans)


class _Tail:
    """The lines of ``[start, end)`` of a file, read backwards with bounded memory."""

    def __init__(self, fd, start, end):
        self.fd, self.start, self.end = fd, start, end
        self.kept, self.kept_at = b"", end  # the newest bytes: [kept_at, end)

    def _chunk(self, pos, n):
        data = os.pread(self.fd, n, pos)
        if len(self.kept) + len(data) <= TAIL_KEEP_BYTES and pos + len(data) == self.kept_at:
            self.kept, self.kept_at = data + self.kept, pos
        return data

    def last_lines(self, window):
        """``(lo, hi)`` of up to ``window`` last lines, newest first (``hi`` excludes the
        newline). A last line without its newline yet counts, as it does for gstack."""
        spans, hi, pos = [], self.end, self.end
        while pos > self.start and len(spans) < window:
            n = min(TAIL_CHUNK, pos - self.start)
            pos -= n
            data = self._chunk(pos, n)
            i = len(data)
            while len(spans) < window:
                j = data.rfind(b"\n", 0, i)
                if j < 0:
                    break
                nl, i = pos + j, j
                if nl != self.end - 1:  # the file's final newline ends the last line
                    spans.append((nl + 1, hi))
                hi = nl
        if len(spans) < window and pos <= self.start and (hi < self.end or hi > self.start):
            spans.append((self.start, hi))  # the first unread line
        return spans

    def read(self, lo, hi):
        if lo >= self.kept_at:
            return self.kept[lo - self.kept_at : hi - self.kept_at]
        return os.pread(self.fd, hi - lo, lo)

    def holds(self, lo, hi, needle):
        """Whether ``[lo, hi)`` holds ``needle`` or a backslash (an escape can spell the id
        in other bytes), searched in pieces so a long line is never read whole."""
        if lo >= self.kept_at:
            line = self.read(lo, hi)
            return needle in line or b"\\" in line
        overlap = max(len(needle) - 1, 0)
        pos = lo
        while pos < hi:
            piece = os.pread(self.fd, min(TAIL_KEEP_BYTES, hi - pos), pos)
            if not piece:
                return False
            if needle in piece or b"\\" in piece:
                return True
            if pos + len(piece) >= hi:
                return False
            pos += max(len(piece) - overlap, 1)
        return False


def _is_twin(conn, tail, lo, hi, project, event, unread):
    """Whether line ``[lo, hi)`` is this event, recorded: read as the importer reads lines,
    checked with its own rules, and its event in the database or, for an ``unread`` line,
    not deleted (tombstoned), so the importer will bring it in. gstack counts only lines
    that carry both a source and a tool_use_id."""
    source, tool_use_id, question_index = event
    from toolkit.core import questions
    from toolkit.gstack import ingest_base, ingest_jsonl

    if hi - lo >= ingest_jsonl.MAX_LINE_BYTES:
        return False  # the importer skips a line this long
    try:
        text = tail.read(lo, hi).decode("utf-8")
    except UnicodeDecodeError:
        return False
    text = text[:-1] if text[-1:] == "\r" else text
    try:
        obj = ingest_base._parse(text)
    except (ValueError, RecursionError):
        return False  # as gstack: only parseable lines count
    if not (isinstance(obj, dict) and "source" in obj and "tool_use_id" in obj):
        return False
    try:
        rec = ingest_jsonl.question_record(obj, questions.format_ts())
    except ingest_base._Skip:
        return False  # the importer skips it: the event would be in no store
    if not (
        rec.get("source") == source
        and rec.get("tool_use_id") == tool_use_id
        and questions.index_of(rec, None) == question_index
    ):
        return False
    key = questions.event_key(project, obj)
    return bool(
        conn.execute(
            "SELECT EXISTS (SELECT 1 FROM question_log WHERE event_key = ?)"
            " OR (? AND NOT EXISTS (SELECT 1 FROM tombstones WHERE event_key = ?))",
            (key, unread, key),
        ).fetchone()[0]
    )


_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from toolkit.gstack.backlog import main; main(sys.argv[2:])"
)


def start(db_path, state_root, slug, env=None):
    """Start the background ingest of ``slug`` unless one is running; True if started."""
    try:
        fd = _open_lock(db_path)
    except OSError:
        return False
    try:
        if not _try_lock(fd):
            return False
        os.set_inheritable(fd, True)
        argv = [
            sys.executable,
            "-I",
            "-S",
            "-c",
            _BOOT,
            package_parent(),
            str(fd),
            db_path,
            state_root,
            slug,
        ]
        devnull = [(os.POSIX_SPAWN_OPEN, n, os.devnull, os.O_RDWR, 0) for n in (0, 1, 2)]
        try:
            os.posix_spawn(
                sys.executable,
                argv,
                dict(os.environ if env is None else env),
                file_actions=devnull,
                setsid=True,
            )
        except OSError:
            return False
        return True
    finally:
        # The child holds the lock through its inherited descriptor from here on.
        os.close(fd)


def main(argv):
    """The background process: ``<lock fd> <database> <state root> <slug>``."""
    fd, db_path, state_root, slug = int(argv[0]), argv[1], argv[2], argv[3]
    try:
        os.nice(NICENESS)
    except OSError:
        pass
    code = 0
    try:
        from toolkit.core import database
        from toolkit.gstack import ingest

        conn = database.connect(db_path)
        # Lines appended while this runs are read too, until nothing is left.
        for _ in range(100):
            # The importer's write transactions are short and yield to waiting writers, so
            # hooks and compat calls meanwhile wait milliseconds for the lock, not seconds.
            summary = ingest.sync_project(conn, state_root, slug)
            if not summary["pending"] and not summary["imported"]:
                break
        conn.close()
    except Exception:  # noqa: BLE001 - nothing to tell; the next call starts a new run
        code = 1
    finally:
        os.close(fd)
    os._exit(code)
