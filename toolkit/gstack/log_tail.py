"""gstack's dedup window over the lines of question-log.jsonl the importer has not read
yet: whether an event is already there, recorded (in the database, or unread and going to
be imported). Lines are read and checked with the importer's own rules.

Only the standard library is imported at the top: the hot path (a logged question) asks.
"""

import os

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

    from toolkit.gstack import file_state

    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return False, 0
    # Where the importer will start: its offset only when the file is still the one it
    # read (fingerprints), else the start (replaced, or truncated and written again).
    state = file_state.load(conn, [path]).get(path)
    start, _ = file_state.resume_point(fd, state, st)
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
        obj = ingest_base.decode_json(text)
    except (ValueError, RecursionError):
        return False  # as gstack: only parseable lines count
    if not (isinstance(obj, dict) and "source" in obj and "tool_use_id" in obj):
        return False
    try:
        rec = ingest_jsonl.question_record(obj, questions.format_ts())
    except ingest_base.Skip:
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
