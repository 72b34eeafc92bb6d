"""Keep gstack's own files in sync with the database: the sync contract.

gstack's skill scripts read ``projects/<slug>/question-log.jsonl`` and friends directly, so
every write that lands in the database is also appended to (or rewritten in) the file
gstack would have written, and changes other writers make to those files are picked up.
``PLANTUNE_MIRROR=0`` turns mirroring off. The contract every writer keeps:

1. **The database commit is the acknowledgement.** A line is appended only after its
   row committed (:func:`append_committed`), never inside the transaction: a failed
   commit leaves no line, so no phantom event is imported later. The lines plantune
   appends itself move ``ingest_state`` on in the same step (a short transaction that
   checks nobody else touched the file), so pickup never reads them back; when the step
   is skipped, the importer meets the line again and finds its row by the event key.
   Whole files are rewritten atomically (:func:`toolkit.safe_io.write_atomic`: temp file
   in the same folder, fsync, rename, mode kept; the temp file removed on every failure).
2. **Deletes propagate.** A delete rewrites the affected files without the deleted lines
   (:func:`rewrite_without`, :func:`forget`) and tombstones the lines' event keys; the
   database triggers of migration 0010 then refuse those keys from any writer, so a copy
   of an old line is never imported again. ``profile delete`` also clears pacing runs,
   findings and typed preference text, scrubs hook-errors.log and vacuums.
3. **One bad line never blocks anything.** The importer skips a line with a value no
   record can hold (:func:`toolkit.json_lite.loads_checked`) and reports ``FILE:LINE:
   reason``; the compat commands refuse such values with one line, exit 1.
4. **Only regular files, only under the state root** (:mod:`toolkit.store.safe_io`): FIFOs,
   sockets, devices and symlinks leading elsewhere are refused with one line, never
   opened in a way that blocks. A preferences file that changed since plantune last read
   it (an edit it could not parse, a file it cannot read) is reported, never replaced.
5. **Disk full and I/O errors** fail the command with one line and leave the files as
   they were: an append that fails takes its partial bytes back, a partial last line
   left by someone else is ended with a newline before the next append.

The database is the record: a failed file write after the commit never fails the
command, it is reported on stderr (or in hook-errors.log) by the caller.
"""

import errno
import os

from toolkit.gstack import file_state
from toolkit.gstack.file_state import EVENTS, PREFERENCES, QUESTION_LOG
from toolkit.store import paths, safe_io
from toolkit.store.digest import sha1_hex


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
    return (
        not db_option
        or _state_root_given
        or paths.is_own_database(db_option, os.environ if env is None else env)
    )


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


def append_line(path, line, env=None):
    """Append one line to a file under the state root (regular files only, mode 0600 when
    new, a partial last line completed first); see :func:`toolkit.safe_io.append_line`."""
    return safe_io.append_line(path, line, root=paths.state_root(env)).written


def write_atomic(path, text, env=None):
    """Replace a whole file under the state root atomically (temp file, fsync, rename;
    mode kept, 0600 when new; the temp file never left behind)."""
    return safe_io.write_atomic(path, text, root=paths.state_root(env))


GLOBAL_PREFERENCES = "global-question-preferences.json"
# What gstack's ensure-file puts in a missing preferences file.
EMPTY_PREFERENCES = "{}\n"


def preferences_file(scope, env=None):
    """The preferences file gstack reads for ``scope`` (a slug, or the global scope)."""
    from toolkit.store.db import GLOBAL_SCOPE

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
    from toolkit.core import preferences
    from toolkit.store import db

    with db.transaction(conn):
        prefs = preferences.read(conn, slug)
        text = preferences.render(prefs) if prefs else EMPTY_PREFERENCES
        if safe_io.create_exclusive(path, text, root=paths.state_root(env)):
            st = os.stat(path)
            digest = sha1_hex(text.encode("utf-8"))
            file_state.save(conn, path, "question-preferences", st, st.st_size, 0, digest, digest)
    return path


def failure(path, err):
    """The one stderr line for a mirror write that failed (the database has the data)."""
    if isinstance(err, safe_io.UnsafeFile):
        reason = err.reason
    else:
        reason = getattr(err, "strerror", None) or " ".join(str(err).split())
    return f"warning: recorded in the database, but could not update {path}: {reason}"


def _stat(path):
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            return None  # a file that cannot exist (a project named by a huge folder)
        raise


def _fingerprints(path, st, env):
    """The file's fingerprints at size ``st.st_size``, or None when it is no longer that
    file at that size."""
    fd = safe_io.open_regular(path, root=paths.state_root(env))
    try:
        now = os.fstat(fd)
        if (now.st_ino, now.st_size) != (st.st_ino, st.st_size):
            return None
        return file_state.fingerprints(fd, st.st_size)
    finally:
        os.close(fd)


def append_committed(conn, path, kind, line, env=None):
    """Append the line of a row already committed; mark it read when the importer had read
    the file to its end, so pickup never reads our own line back.

    Called with no transaction open: the row is committed before, so a failed commit never
    leaves a line (no phantom event) and a failed append loses nothing the database
    acknowledged. The state moves on in a short transaction of its own, and only if
    nobody touched the file or its state meanwhile; otherwise (a racing writer, a busy
    database) the importer reads the line again later and finds the row by its event key.
    Raises OSError (an :class:`~toolkit.safe_io.UnsafeFile` for a FIFO, a symlink out of
    the state root...) when the line could not be appended.
    """
    state = file_state.load(conn, [path]).get(path)
    done = safe_io.append_line(path, line, root=paths.state_root(env))
    before = done.before
    caught_up = (state is None and before.st_size == 0) or (
        file_state.unchanged(state, before) and state.offset == before.st_size
    )
    if not (caught_up and done.alone and not done.completed):
        return
    try:
        marks = _fingerprints(path, done.after, env)
    except OSError:
        return
    if marks is not None:
        file_state.advance(
            conn, path, kind, state, done.after, (state.line_no if state else 0) + 1, *marks
        )


def log_question(conn, record, project, *, enabled=True, env=None, question_index=None):
    """Record a validated question event, then append gstack's line to question-log.jsonl.

    Under the database write lock: pick up other writers' lines (so dedup sees them),
    insert, commit. Only then is the line appended (see :func:`append_committed`); a line
    read again by the importer maps to the row already there (same event key).
    ``question_index`` (position in a multi-question call) defaults to the record's own.
    Returns ``(Recorded, warning or None)``.
    """
    from toolkit.core import questions
    from toolkit.gstack.pickup import pickup
    from toolkit.store import db

    picked, warnings = None, []
    row = conn.execute(
        "SELECT door_type FROM registry_questions WHERE id = ?", (record["question_id"],)
    ).fetchone()
    registry = {record["question_id"]: row[0]} if row else {}
    with db.transaction(conn):
        if enabled:
            picked = pickup(conn, project, env)
        rec = questions.record_event(
            conn,
            record,
            project,
            registry=registry,
            question_index=question_index,
            unimported=backlog_twin(project, env, mirrored=enabled),
        )
    if rec.status == "inserted" and enabled:
        warnings.append(append_question_event(conn, project, record, env))
    return rec, _one_warning(picked, warnings)


def backlog_twin(project, env=None, mirrored=True):
    """``record_event``'s dedup check when gstack's question-log.jsonl takes part in it.

    gstack's window is the file's last 100 lines. Once the file is read to its end, the
    database's newest rows are that window, unless rows sit out of the file's order (a
    backlog imported after events logged live, whose lines plantune appended after it).
    Then, and while lines wait for the background ingest, a file plantune keeps
    (``mirrored``: every event it records is appended) is the window itself: a line counts
    when its event is in the database, or when it is unread and will be imported. A file
    plantune does not keep holds only gstack's lines: its unread lines among its last 100
    come first, the database's newest rows fill the rest. A file read to its end costs one
    stat and one indexed read.
    """
    path = project_file(project, QUESTION_LOG, env)

    def check(conn, source, tool_use_id, question_index):
        from toolkit.core.questions import DEDUP_WINDOW, window_twin

        event = (source, tool_use_id, question_index)
        st = _stat(path)
        state = file_state.load(conn, [path]).get(path) if st else None
        # Read to its end: the file as the importer last saw it, and its offset at the end.
        if st is None or (file_state.unchanged(state, st) and state.offset == st.st_size):
            kept = f"{path}:" if mirrored and st else None
            twin, out_of_order = window_twin(
                conn, project, *event, DEDUP_WINDOW, kept, state.line_no if state else 0
            )
            if not out_of_order:
                return twin
        if mirrored:
            return _file_window(conn, path, project, event, env, whole=True)[0]
        twin, unread = _file_window(conn, path, project, event, env)
        if twin or unread >= DEDUP_WINDOW:
            return twin
        return window_twin(conn, project, *event, DEDUP_WINDOW - unread)[0]

    return check


def _file_window(conn, path, project, event, env, whole=False):
    """:func:`log_tail.unimported_twin` over the file, opened as the importer opens it: a
    FIFO, a device or a symlink out of the state root is never read (the importer will not
    import it either)."""
    from toolkit.core.questions import DEDUP_WINDOW
    from toolkit.gstack import log_tail

    try:
        fd = safe_io.open_regular(path, root=paths.state_root(env))
    except OSError:
        return False, 0
    try:
        return log_tail.unimported_twin(conn, fd, path, project, event, DEDUP_WINDOW, whole)
    finally:
        os.close(fd)


def _one_warning(picked, writes):
    """The one line to show: a file write that failed, else the pickup's warning."""
    return next((w for w in writes if w), picked)


def _append_or_warn(conn, path, kind, line, env):
    try:
        append_committed(conn, path, kind, line, env)
    except (OSError, ValueError) as e:
        return failure(path, e)
    return None


def _once_committed(conn, write, warnings):
    """Run ``write`` (a file write returning a warning line or None) once the caller's
    transaction committed: at once when none is open (its warning is returned), else
    right after the COMMIT (its warning added to ``warnings``); never after a ROLLBACK."""
    from toolkit.store import db

    if not conn.in_transaction:
        return write()

    def run():
        warning = write()
        if warning and warnings is not None:
            warnings.append(warning)

    db.after_commit(conn, run)
    return None


def append_question_event(conn, project, record, env=None, warnings=None):
    """Append gstack's line for one question event, once its row is committed.

    For every writer of question events (compat, hooks, pacing decisions and flips):
    called inside a ``db.transaction`` the append waits for the COMMIT (and a warning
    goes to ``warnings``); called after it, the append happens at once and its warning
    line (or None) is returned. See :func:`append_committed`.
    """
    from toolkit.core import jscompat

    path = project_file(project, QUESTION_LOG, env)
    line = jscompat.stringify(record)
    return _once_committed(
        conn, lambda: _append_or_warn(conn, path, "question-log", line, env), warnings
    )


def preferences_changed(conn, scope, events=(), env=None, warnings=None):
    """Mirror a change of ``scope``'s preferences, once it is committed: rewrite its
    preferences file, append the events' lines to question-events.jsonl.

    The one writer of gstack's preference files, for `--write`, `pref set` and applied
    guidance alike. Inside a ``db.transaction`` it waits for the COMMIT (a warning goes to
    ``warnings``); after it, it runs at once and returns a warning line or None.
    """
    from toolkit.core import jscompat
    from toolkit.store.db import GLOBAL_SCOPE

    lines = [jscompat.stringify(record) for record in events]

    def write():
        found = [_rewrite_preferences(conn, scope, env)]
        if scope != GLOBAL_SCOPE:
            path = project_file(scope, EVENTS, env)
            for line in lines:
                found.append(_append_or_warn(conn, path, "question-events", line, env))
                if found[-1]:
                    break
        return next((w for w in found if w), None)

    return _once_committed(conn, write, warnings)


def _rewrite_preferences(conn, scope, env):
    """After the commit, under a write lock of its own: make the scope's preferences file
    say what the database holds (atomic rewrite, mode kept) and mark it read.

    A project file that changed since plantune last read it (a hand edit pickup could not
    parse, an unreadable file) is never replaced: it is reported and left for the user.
    """
    from toolkit.core import preferences
    from toolkit.store import db
    from toolkit.store.db import GLOBAL_SCOPE, sqlite3

    path = preferences_file(scope, env)
    try:
        with db.transaction(conn):
            project = scope != GLOBAL_SCOPE
            if project:
                st = _stat(path)
                if st is not None and not file_state.unchanged(
                    file_state.load(conn, [path]).get(path), st
                ):
                    kind = safe_io.kind_of(st.st_mode)
                    reason = (
                        f"is {kind}, not a regular file; refused"
                        if kind
                        else "it could not be read, so it is left as it is"
                        " (details: plantune ingest)"
                    )
                    return failure(path, safe_io.UnsafeFile(path, reason))
            text = preferences.render(preferences.read(conn, scope))
            # The global file is not a project file: the importer does not read it.
            new = write_atomic(path, text, env)
            data = text.encode("utf-8")
            if project and new.st_size == len(data):
                digest = sha1_hex(data)
                file_state.save(
                    conn, path, "question-preferences", new, new.st_size, 0, digest, digest
                )
    except (OSError, ValueError, sqlite3.Error) as e:
        return failure(path, e)
    return None


def set_preference(
    conn, scope, question_id, preference, source, free_text=None, *, enabled=True, env=None
):
    """Store a validated preference; then rewrite the preferences file and append the event.

    The store runs under the write lock after picking up the files, so a hand edit made
    a moment ago is kept, not overwritten; the files follow once it committed. Returns
    ``(event record, warning or None)``. The global scope has no events file in gstack;
    its preferences go to global-question-preferences.json, which gstack's PreToolUse
    hook reads.
    """
    from toolkit.core import preferences
    from toolkit.gstack.pickup import pickup
    from toolkit.store import db

    picked, warnings = None, []
    with db.transaction(conn):
        if enabled:
            picked = pickup(conn, scope, env)
        record = preferences.write(conn, scope, question_id, preference, source, free_text)
    if enabled:
        warnings.append(preferences_changed(conn, scope, [record], env))
    return record, _one_warning(picked, warnings)


def clear_preferences(conn, scope, question_id=None, *, enabled=True, env=None):
    """Remove one or all preferences of ``scope``; then rewrite its file when anything
    changed. Returns ``(removed ids, warning or None)``.
    """
    from toolkit.core import preferences
    from toolkit.gstack.pickup import pickup
    from toolkit.store import db

    picked, warnings = None, []
    with db.transaction(conn):
        if enabled:
            picked = pickup(conn, scope, env)
        removed = preferences.clear(conn, scope, question_id)
    if enabled and (removed or question_id is None):
        warnings.append(_rewrite_preferences(conn, scope, env))
    return removed, _one_warning(picked, warnings)


# --------------------------------------------------------------------------
# Deletes: the lines go too, and their keys are tombstoned


def rewrite_without(conn, path, kind, project, drop, env=None):
    """Rewrite a gstack JSONL file without the records ``drop(record)`` picks; returns how
    many lines went.

    Runs in the caller's write transaction. Lines that are no JSON record (a fragment
    left by a full disk, a hand edit) go too: they could hold the very text being deleted
    and no import can use them. The removed records' keys are tombstoned; the new file
    replaces the old one atomically (mode kept) and is marked read. A missing file is
    nothing to do.
    """
    from toolkit.core import questions
    from toolkit.store import db, json_lite

    root = paths.state_root(env)
    try:
        data = safe_io.read_bytes(path, root=root)
    except FileNotFoundError:
        return 0
    keep, keys, removed = [], [], 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            obj = json_lite.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            obj = None
        if not isinstance(obj, dict):
            removed += 1
            continue
        if drop(obj):
            keys.append(questions.event_key(project, obj))
            removed += 1
            continue
        keep.append(raw)
    if not removed:
        return 0
    db.tombstone(conn, keys, kind)
    text = b"".join(line + b"\n" for line in keep)
    st = safe_io.write_atomic(path, text, root=root)
    file_state.save(conn, path, kind, st, st.st_size, len(keep), *file_state.fingerprints_of(text))
    return removed


def forget(conn, project=None, env=None):
    """``profile delete``'s side of gstack's files, in one write transaction: every line
    of the project's question-log.jsonl (every project's when ``project`` is None) and
    every question-events.jsonl line that carries typed free text (every line, for
    everything: the preference history goes, the preferences stay) are removed and their
    keys tombstoned. hook-errors.log loses its lines about the deleted data (all of them
    for everything). Returns ``(paths rewritten, one-line problems)``.
    """
    from toolkit.store import db

    root = paths.state_root(env)
    projects_dir = os.path.join(root, "projects")
    if project is None:
        try:
            slugs = sorted(n for n in os.listdir(projects_dir) if paths.is_valid_slug(n))
        except OSError:
            slugs = []
    else:
        slugs = [project]
    rewritten, problems = [], []
    jobs = []
    for slug in slugs:
        jobs.append((project_file(slug, QUESTION_LOG, env), "question-log", slug, lambda r: True))
        jobs.append(
            (
                project_file(slug, EVENTS, env),
                "question-events",
                slug,
                (lambda r: True) if project is None else (lambda r: bool(r.get("free_text"))),
            )
        )
    for path, kind, slug, drop in jobs:
        # One file at a time: a FIFO or an unreadable file is reported, the others still
        # lose their lines (the rows' tombstones already keep the deleted events out).
        try:
            with db.transaction(conn):
                if rewrite_without(conn, path, kind, slug, drop, env):
                    rewritten.append(path)
        except OSError as e:
            problems.append(
                f"could not remove the deleted lines from {path}: {safe_io.describe(e)}"
            )
    return rewritten, problems
