"""Which gstack files plantune reads, and how far it has read each (``ingest_state``).

The one copy of the rules the importer, the writer (which marks its own appended line as
read) and pickup (which decides from a stat whether there is anything to import) all
follow: the files and their kinds, when a file is unchanged, the two fingerprints that
tell a grown file from a replaced one, where a read resumes, and how many bytes are
still unread. Light on purpose: the hot path asks it on every call, before (and usually
instead of) importing the importer.
"""

import os

from toolkit.store.digest import sha1_hex

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
# Kinds read line by line from a byte offset; the others are read whole when they change.
JSONL_KINDS = ("question-events", "question-log", "builder-profile")

FINGERPRINT_BYTES = 4096


class State:
    """One file's row of ``ingest_state``: what the last read saw and where it stopped."""

    __slots__ = ("inode", "size", "offset", "line_no", "mtime_ns", "head", "tail")

    def __init__(self, row):
        (self.inode, self.size, self.offset, self.line_no, self.mtime_ns, self.head, self.tail) = (
            row
        )

    def unchanged(self, st):
        """True when ``st`` (an ``os.stat`` result) shows the file as the last read left it."""
        return (
            self.inode == st.st_ino and self.size == st.st_size and self.mtime_ns == st.st_mtime_ns
        )

    def seen(self):
        """``(inode, size, offset, line_no, mtime_ns)``: what a compare-and-set expects."""
        return (self.inode, self.size, self.offset, self.line_no, self.mtime_ns)


def load(conn, paths):
    """``{path: State}`` for the files of ``paths`` that were read before."""
    marks = ",".join("?" * len(paths))
    rows = conn.execute(
        "SELECT path, inode, size, offset, line_no, mtime_ns, head_sha1, tail_sha1"
        f" FROM ingest_state WHERE path IN ({marks})",
        list(paths),
    ).fetchall()
    return {r[0]: State(tuple(r)[1:]) for r in rows}


def unchanged(state, st):
    """True when there is a state and a stat and they agree (None for either: changed)."""
    return state is not None and st is not None and state.unchanged(st)


def fingerprints(fd, offset):
    """sha1 (hex) of the first and of the last (up to 4 KiB) bytes before ``offset``."""
    n = min(offset, FINGERPRINT_BYTES)
    head = os.pread(fd, n, 0)
    tail = head if offset <= FINGERPRINT_BYTES else os.pread(fd, n, offset - n)
    return sha1_hex(head), sha1_hex(tail)


def fingerprints_of(data):
    """:func:`fingerprints` of a file whose bytes are ``data``, read to its end."""
    n = min(len(data), FINGERPRINT_BYTES)
    return sha1_hex(data[:n]), sha1_hex(data[len(data) - n :])


def resume_point(fd, state, st):
    """``(offset, line_no)`` a read starts from: where the last import stopped when the
    file is still the one it read (same inode, not shorter, same fingerprints), else the
    start (the file was replaced, or truncated and written again)."""
    if state is not None and state.inode == st.st_ino and st.st_size >= state.offset:
        head, tail = fingerprints(fd, state.offset)
        if head == state.head and tail == state.tail:
            return state.offset, state.line_no
    return 0, 0


def unread(state, st):
    """Bytes of a JSONL file (stat ``st``) not read yet: all of it when it was never read
    or is another file now."""
    if state is None or state.inode != st.st_ino or state.offset > st.st_size:
        return st.st_size
    return st.st_size - state.offset


def unread_bytes(state, path):
    """:func:`unread` of the file at ``path`` (0 when it cannot be stat'ed)."""
    try:
        st = os.stat(path)
    except OSError:
        return 0
    return unread(state, st)


def save(conn, path, kind, st, offset, line_no, head, tail, size=None):
    """Record how far ``path`` was read (see :func:`toolkit.store.db.save_ingest_state`)."""
    from toolkit.store.db import save_ingest_state

    save_ingest_state(conn, path, kind, st, offset, line_no, head, tail, size=size)


# A file read whole (a JSON store such as developer-profile.json): its row holds the stat
# it was read at and the sha1 of its whole content in head_sha1, offset = size.


def whole_read(conn, path):
    """``(inode, size, mtime_ns, sha1)`` of the last whole read of ``path``, or None."""
    row = conn.execute(
        "SELECT inode, size, mtime_ns, head_sha1 FROM ingest_state WHERE path = ?", (path,)
    ).fetchone()
    return None if row is None else (row[0], row[1], row[2], row[3])


def save_whole_read(conn, path, kind, key, digest):
    """Record a whole read of ``path``: ``key`` is ``(inode, size, mtime_ns)``."""
    from toolkit.store.db import utc_now

    conn.execute(
        "INSERT OR REPLACE INTO ingest_state (path, kind, inode, size, offset, line_no, mtime_ns,"
        " head_sha1, updated_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)",
        (path, kind, key[0], key[1], key[1], key[2], digest, utc_now()),
    )


def forget(conn, paths):
    """Drop what was recorded of ``paths`` (removed files: a new file of that name is read
    from the start)."""
    conn.executemany("DELETE FROM ingest_state WHERE path = ?", [(p,) for p in paths])


# How long the follow-up write that marks our own line as read may wait for the lock:
# skipping it only means the importer reads that line once more (and finds its key).
STATE_WAIT_MS = 200


def advance(conn, path, kind, expected, st, line_no, head, tail):
    """Move the file's ingest_state past our own line, in one statement of its own, and
    only if the state is still ``expected`` (a compare-and-set: nobody else read or wrote
    meanwhile). Gives up quietly on a busy or failing database."""
    from toolkit.store.db import sqlite3, utc_now

    new = (kind, st.st_ino, st.st_size, st.st_size, line_no, st.st_mtime_ns, head, tail, utc_now())
    wait = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute(f"PRAGMA busy_timeout = {min(wait, STATE_WAIT_MS)}")
    try:
        if expected is None:
            conn.execute(
                "INSERT OR IGNORE INTO ingest_state (kind, inode, size, offset, line_no,"
                " mtime_ns, head_sha1, tail_sha1, updated_at, path)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*new, path),
            )
        else:
            conn.execute(
                "UPDATE ingest_state SET kind = ?, inode = ?, size = ?, offset = ?,"
                " line_no = ?, mtime_ns = ?, head_sha1 = ?, tail_sha1 = ?, updated_at = ?"
                " WHERE path = ? AND inode = ? AND size = ? AND offset = ? AND line_no = ?"
                " AND mtime_ns = ?",
                (*new, path, *expected.seen()),
            )
    except sqlite3.Error:
        pass
    finally:
        conn.execute(f"PRAGMA busy_timeout = {wait}")
