"""Keep gstack's own files current beside the database.

gstack's skill scripts read ``projects/<slug>/question-log.jsonl`` and friends directly, so
every write that lands in the database is also appended to (or rewritten in) the file
gstack would have written. The database is the record: a mirror failure never fails the
command, it is reported on stderr by the caller. ``PLANTUNE_MIRROR=0`` turns mirroring off.
"""

import os

from toolkit import paths

QUESTION_LOG = "question-log.jsonl"
PREFERENCES = "question-preferences.json"
EVENTS = "question-events.jsonl"


def enabled(env=None):
    env = os.environ if env is None else env
    return env.get("PLANTUNE_MIRROR", "1") not in ("0", "false", "no", "off")


# Set by `plantune --state-root PATH`: this command was told whose files to use.
_state_root_given = False


def set_state_root(path, env=None):
    """``--state-root``: use ``path`` as the state root for this command (None: as configured)."""
    global _state_root_given
    _state_root_given = bool(path)
    if path:
        env = os.environ if env is None else env
        env["GSTACK_STATE_ROOT"] = os.path.abspath(os.path.expanduser(path))


def belongs_to_state_root(db_option, env=None):
    """Whether gstack's files under the state root go with the database of ``--db``.

    They belong to the state root's own database. A ``--db`` that points elsewhere (a
    backup, a copy, a scratch file) is neither fed from them nor written to them, unless
    the command was also given ``--state-root``: reading a backup must not change it,
    and a scratch database must not rewrite live files.
    """
    return (not db_option or _state_root_given
            or paths.is_own_database(db_option, os.environ if env is None else env))


def keep_to_own_database(db_option, env=None):
    """Turn gstack's files off for this process when ``--db`` names another database.

    Returns :func:`belongs_to_state_root`.
    """
    env = os.environ if env is None else env
    if belongs_to_state_root(db_option, env):
        return True
    env["PLANTUNE_MIRROR"] = "0"
    return False


def project_file(slug, name, env=None):
    return os.path.join(paths.project_dir(slug, env), name)


def append_line(path, line):
    """Append one JSON line with a single O_APPEND write (atomic for concurrent appenders).

    New files get mode 0600, as gstack's store creates them.
    """
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = (line + "\n").encode("utf-8", "surrogatepass")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return len(data)


def _write_temp(path, text):
    """Write ``text`` to a private temp file beside ``path``; returns the temp path."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
    return tmp


def write_atomic(path, text):
    """Replace a whole file atomically (temp file in the same folder, then rename)."""
    os.replace(_write_temp(path, text), path)


GLOBAL_PREFERENCES = "global-question-preferences.json"
# What gstack's ensure-file puts in a missing preferences file.
EMPTY_PREFERENCES = "{}\n"


def preferences_file(scope, env=None):
    """The preferences file gstack reads for ``scope`` (a slug, or the global scope)."""
    from toolkit.db import GLOBAL_SCOPE

    if scope == GLOBAL_SCOPE:
        return os.path.join(paths.state_root(env), GLOBAL_PREFERENCES)
    return project_file(scope, PREFERENCES, env)


def ensure_project_dir(slug, env=None):
    """Create ``projects/<slug>/`` as gstack's bins do before they validate anything."""
    os.makedirs(paths.project_dir(slug, env), exist_ok=True)


def ensure_preferences_file(conn, slug, env=None):
    """gstack's ensure-file: a missing project preferences file is created (``{}``).

    It is created with what the database holds for the project (``{}`` and a newline
    when nothing, as gstack), never empty over existing preferences: the importer makes
    the database match this file, so an empty file would erase them (say, preferences
    set while mirroring was off, or after the folder was deleted).
    """
    path = project_file(slug, PREFERENCES, env)
    if os.path.exists(path):
        return path
    from toolkit import db, preferences

    with db.transaction(conn):
        prefs = preferences.read(conn, slug)
        text = preferences.render(prefs) if prefs else EMPTY_PREFERENCES
        if _create_exclusive(path, text):
            st = os.stat(path)
            digest = _sha1_hex(text.encode("utf-8"))
            _save_state(conn, path, "question-preferences", st, 0, digest, digest)
    return path


def _create_exclusive(path, text):
    """Create ``path`` with ``text`` unless it exists (never a half-written file)."""
    tmp = _write_temp(path, text)
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)


def failure(path, err):
    """The one stderr line for a mirror write that failed (the database has the data)."""
    reason = getattr(err, "strerror", None) or str(err)
    return f"warning: recorded in the database, but could not update {path}: {reason}"


# --------------------------------------------------------------------------
# Pickup: other writers' changes come in through the incremental importer
# (toolkit.ingest). Two shortcuts keep it off the hot path when it has nothing to do:
# a stat of each file against ingest_state before the importer is even imported, and,
# after our own write, moving ingest_state past the bytes we wrote ourselves, so the next
# call does not read back its own line. Both follow the importer's rules exactly
# (same unchanged test, same fingerprints); tests compare them with the importer's own.

# (file name, ingest kind), in the importer's order.
PROJECT_FILES = ((EVENTS, "question-events"), (PREFERENCES, "question-preferences"),
                 (QUESTION_LOG, "question-log"))
FINGERPRINT_BYTES = 4096


def _sha1_hex(data):
    try:
        from _sha1 import sha1
    except ImportError:  # pragma: no cover
        from hashlib import sha1
    return sha1(data).hexdigest()


def _states(conn, paths_):
    marks = ",".join("?" * len(paths_))
    return {
        r[0]: tuple(r)[1:]
        for r in conn.execute(
            "SELECT path, inode, size, offset, line_no, mtime_ns FROM ingest_state"
            f" WHERE path IN ({marks})", list(paths_))
    }


def _stat(path):
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def _unchanged(state, st):
    return state is not None and st is not None and (state[0], state[1], state[4]) == (
        st.st_ino, st.st_size, st.st_mtime_ns)


# A hook or compat call imports at most this much of other writers' lines itself; a larger
# backlog (say, a million lines gstack wrote before the switch) goes to a background
# ingest (toolkit.backlog) and the call answers from what is imported. The time budget
# bounds the inline part whatever the size.
INLINE_MAX_BYTES = 64 << 10
INLINE_BUDGET_SECONDS = 0.02
JSONL_KINDS = ("question-events", "question-log")


def _changed(conn, slug, env):
    """``(changed, unread JSONL bytes)`` for the project's files, or None when unknown."""
    files = [(project_file(slug, name, env), kind) for name, kind in PROJECT_FILES]
    try:
        states = _states(conn, [p for p, _ in files])
    except Exception:  # noqa: BLE001 - no ingest_state table yet: let the importer decide
        return None
    changed, unread = False, 0
    for path, kind in files:
        st = _stat(path)
        if st is None and path not in states:
            continue  # the importer skips a file it never saw that does not exist
        state = states.get(path)
        if _unchanged(state, st):
            continue
        changed = True
        if kind in JSONL_KINDS and st is not None:
            same = state is not None and state[0] == st.st_ino and state[2] <= st.st_size
            unread += st.st_size - (state[2] if same else 0)
    return changed, unread


def _database_file(conn):
    row = conn.execute("PRAGMA database_list").fetchone()
    return row[2] if row and row[2] else None


def pickup(conn, slug, env=None):
    """Bring in what other writers changed in gstack's files since plantune last looked.

    gstack's own bins (during a switch-over) and hand edits of question-preferences.json
    write the files directly; the incremental importer reads only what changed. Returns a
    warning line or None; never raises, never blocks the answer. Inside the caller's
    transaction the import joins it (a savepoint undoes just the import if it fails).

    A backlog of lines beyond INLINE_MAX_BYTES, or what is left when the inline budget
    runs out, is handed to the background ingest; while that runs, calls leave the JSONL
    files to it and only make the whole-file stores (preferences) current.
    """
    from toolkit.db import GLOBAL_SCOPE

    if slug == GLOBAL_SCOPE:
        return None
    seen = _changed(conn, slug, env)
    if seen is not None and not seen[0]:
        return None
    unread = seen[1] if seen is not None else 0
    db_file = _database_file(conn) if unread else None
    defer = False
    if db_file:
        from toolkit import backlog

        defer = unread > INLINE_MAX_BYTES or backlog.running(db_file)
    import time

    from toolkit import ingest

    root = paths.state_root(env)
    nested = conn.in_transaction
    if nested:
        conn.execute("SAVEPOINT plantune_pickup")
    try:
        summary = ingest.sync_project(conn, root, slug, skip_jsonl=defer,
                                      deadline=time.monotonic() + INLINE_BUDGET_SECONDS)
    except Exception as e:  # noqa: BLE001 - the answer must not depend on the import
        if nested:
            conn.execute("ROLLBACK TO plantune_pickup")
            conn.execute("RELEASE plantune_pickup")
        elif conn.in_transaction:
            conn.execute("ROLLBACK")
        return f"warning: could not pick up changes to gstack's files: {e}"
    if nested:
        conn.execute("RELEASE plantune_pickup")
    if summary.get("pending"):
        db_file = db_file or _database_file(conn)
        if db_file:
            from toolkit import backlog

            backlog.start(db_file, root, slug, env)
    skipped = summary.get("skipped") if isinstance(summary, dict) else 0
    if skipped:
        bad = [f["path"] for f in summary.get("files", ()) if f.get("skipped")]
        where = bad[0] if len(bad) == 1 else "gstack's files"
        return (f"warning: skipped {skipped} unreadable entr{'y' if skipped == 1 else 'ies'}"
                f" in {where} (details: plantune ingest)")
    return None


def backlog_note(conn, slug, env=None):
    """A stderr line while gstack lines of ``slug`` still wait for import, else None.

    For answers that depend on the whole history (``--derive``, ``--profile``): they
    answer from what is imported and say so.
    """
    from toolkit import ingest

    files = [project_file(slug, name, env) for name, kind in PROJECT_FILES
             if kind in JSONL_KINDS]
    try:
        states = _states(conn, files)
    except Exception:  # noqa: BLE001 - no ingest_state table: nothing imported yet either
        return None
    unread = total = 0
    for path in files:
        st = _stat(path)
        if st is None:
            continue
        total += st.st_size
        state = states.get(path)
        unread += ingest.unread_bytes(_OffsetState(state) if state else None, path)
    if not unread:
        return None
    done = 100 * (total - unread) // total if total else 0
    return (f"note: gstack's history is still being imported in the background ({done}% done,"
            f" {unread / 1048576:.1f} MiB left); this answer covers what is imported so far")


class _OffsetState:
    """The inode and offset of a mirror state row, as ingest.unread_bytes reads them."""

    __slots__ = ("inode", "offset")

    def __init__(self, row):
        self.inode, self.offset = row[0], row[2]


def _save_state(conn, path, kind, st, line_no, head, tail):
    from toolkit.db import save_ingest_state

    save_ingest_state(conn, path, kind, st, st.st_size, line_no, head, tail)


def _append_tracked(conn, path, kind, line):
    """Append one line; when the importer had read the file to its end, mark our line read.

    Someone else's bytes (an append that raced ours, outside our lock) leave the state as
    it was: the importer then reads everything new, ours included, by key without dupes.
    """
    before = _stat(path)
    state = _states(conn, [path]).get(path)
    caught_up = (before is None and state is None) or (
        _unchanged(state, before) and state[2] == before.st_size)
    written = append_line(path, line)
    if not caught_up:
        return
    size = (before.st_size if before else 0) + written
    fd = os.open(path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        if st.st_size != size:
            return
        n = min(size, FINGERPRINT_BYTES)
        head = os.pread(fd, n, 0)
        tail = head if size <= FINGERPRINT_BYTES else os.pread(fd, n, size - n)
    finally:
        os.close(fd)
    _save_state(conn, path, kind, st, (state[3] if state else 0) + 1, _sha1_hex(head),
                _sha1_hex(tail))


def _write_tracked(conn, path, kind, text):
    """Replace a whole file and record it as read: its content is the database's own."""
    data = text.encode("utf-8")
    write_atomic(path, text)
    st = os.stat(path)
    if st.st_size == len(data):
        digest = _sha1_hex(data)
        _save_state(conn, path, kind, st, 0, digest, digest)


def log_question(conn, record, project, *, enabled=True, env=None, question_index=None):
    """Record a validated question event and append gstack's line to question-log.jsonl.

    Under one database write lock: pick up other writers' lines (so dedup sees them),
    insert, append. The file's lines are thus in the same order as the rows, and a line
    read again by the importer maps to the row already there (same event key).
    ``question_index`` (position in a multi-question call) defaults to the record's own.
    Returns ``(Recorded, warning or None)``.
    """
    from toolkit import db, questions

    warnings = []
    row = conn.execute(
        "SELECT door_type FROM registry_questions WHERE id = ?", (record["question_id"],)
    ).fetchone()
    registry = {record["question_id"]: row[0]} if row else {}
    with db.transaction(conn):
        if enabled:
            warnings.append(pickup(conn, project, env))
        rec = questions.record_event(conn, record, project, registry=registry,
                                     question_index=question_index)
        if rec.status == "inserted" and enabled:
            path = project_file(project, QUESTION_LOG, env)
            try:
                _append_tracked(conn, path, "question-log", questions.serialize(record))
            except (OSError, ValueError) as e:
                warnings.append(failure(path, e))
    return rec, next((w for w in warnings if w), None)


def _rewrite_preferences(conn, scope, env):
    from toolkit import preferences
    from toolkit.db import GLOBAL_SCOPE

    path = preferences_file(scope, env)
    text = preferences.render(preferences.read(conn, scope))
    try:
        if scope == GLOBAL_SCOPE:
            write_atomic(path, text)  # not a project file: the importer does not read it
        else:
            _write_tracked(conn, path, "question-preferences", text)
    except (OSError, ValueError) as e:
        return failure(path, e)
    return None


def set_preference(conn, scope, question_id, preference, source, free_text=None, *,
                   enabled=True, env=None):
    """Store a validated preference, rewrite the preferences file, append the event line.

    All under one write lock, after picking up the files, so a hand edit made a moment
    ago is kept, not overwritten. Returns ``(event record, warning or None)``. The global
    scope has no events file in gstack; its preferences go to
    global-question-preferences.json, which gstack's PreToolUse hook reads.
    """
    from toolkit import db, preferences, questions

    from toolkit.db import GLOBAL_SCOPE

    warnings = []
    with db.transaction(conn):
        if enabled:
            warnings.append(pickup(conn, scope, env))
        record = preferences.write(conn, scope, question_id, preference, source, free_text)
        if enabled:
            warnings.append(_rewrite_preferences(conn, scope, env))
            if scope != GLOBAL_SCOPE:
                path = project_file(scope, EVENTS, env)
                try:
                    _append_tracked(conn, path, "question-events", questions.serialize(record))
                except (OSError, ValueError) as e:
                    warnings.append(failure(path, e))
    return record, next((w for w in warnings if w), None)


def clear_preferences(conn, scope, question_id=None, *, enabled=True, env=None):
    """Remove one or all preferences of ``scope`` and rewrite its file when anything changed.

    Returns ``(removed ids, warning or None)``.
    """
    from toolkit import db, preferences

    warnings = []
    with db.transaction(conn):
        if enabled:
            warnings.append(pickup(conn, scope, env))
        removed = preferences.clear(conn, scope, question_id)
        if enabled and (removed or question_id is None):
            warnings.append(_rewrite_preferences(conn, scope, env))
    return removed, next((w for w in warnings if w), None)
