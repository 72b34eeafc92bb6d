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


def write_atomic(path, text):
    """Replace a whole file atomically (temp file in the same folder, then rename)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(tmp, path)


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


def ensure_preferences_file(slug, env=None):
    """gstack's ensure-file: a missing project preferences file is created as ``{}``."""
    path = project_file(slug, PREFERENCES, env)
    if os.path.exists(path):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path
    try:
        os.write(fd, EMPTY_PREFERENCES.encode())
    finally:
        os.close(fd)
    return path


def failure(path, err):
    """The one stderr line for a mirror write that failed (the database has the data)."""
    reason = getattr(err, "strerror", None) or str(err)
    return f"warning: recorded in the database, but could not update {path}: {reason}"


def pickup(conn, slug, env=None):
    """Bring in what other writers changed in gstack's files since plantune last looked.

    gstack's own bins (during a switch-over) and hand edits of question-preferences.json
    write the files directly; the incremental importer reads only what changed (one stat
    per file when nothing did). Returns a warning line or None; never raises, never blocks
    the answer: if the importer is not installed, nothing is picked up.
    """
    from toolkit.db import GLOBAL_SCOPE

    if slug == GLOBAL_SCOPE:
        return None
    try:
        from toolkit import ingest
    except ImportError:
        return None
    sync = getattr(ingest, "sync_project", None)
    if sync is None:
        return None
    try:
        sync(conn, paths.state_root(env), slug)
    except Exception as e:  # noqa: BLE001 - the answer must not depend on the import
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return f"warning: could not pick up changes to gstack's files: {e}"
    return None


def _quick_commits(conn):
    # WAL with synchronous=NORMAL: a commit survives a killed process (what hooks face)
    # without an fsync per call (~4 ms here); only an OS crash or power cut can lose the
    # last commits, exactly as with gstack's own `echo >>` appends.
    conn.execute("PRAGMA synchronous = NORMAL")


def log_question(conn, record, project, *, enabled=True, env=None):
    """Record a validated question event and append gstack's line to question-log.jsonl.

    Both happen under the database write lock, so the file's lines are in the same order
    as the rows, and a line re-read by the importer maps to the row already there (same
    event key). Returns ``(Recorded, warning or None)``.
    """
    from toolkit import db, questions

    warning = None
    row = conn.execute(
        "SELECT door_type FROM registry_questions WHERE id = ?", (record["question_id"],)
    ).fetchone()
    registry = {record["question_id"]: row[0]} if row else {}
    _quick_commits(conn)
    with db.transaction(conn):
        rec = questions.record_event(conn, record, project, registry=registry)
        if rec.status == "inserted" and enabled:
            path = project_file(project, QUESTION_LOG, env)
            try:
                append_line(path, questions.serialize(record))
            except (OSError, ValueError) as e:
                warning = failure(path, e)
    return rec, warning


def _rewrite_preferences(conn, scope, env):
    from toolkit import preferences

    path = preferences_file(scope, env)
    try:
        write_atomic(path, preferences.render(preferences.read(conn, scope)))
    except (OSError, ValueError) as e:
        return failure(path, e)
    return None


def set_preference(conn, scope, question_id, preference, source, free_text=None, *,
                   enabled=True, env=None):
    """Store a validated preference, rewrite the preferences file, append the event line.

    Returns ``(event record, warning or None)``. The global scope has no events file in
    gstack; its preferences go to global-question-preferences.json, which gstack's
    PreToolUse hook reads.
    """
    from toolkit import db, preferences, questions

    from toolkit.db import GLOBAL_SCOPE

    warning = None
    _quick_commits(conn)
    with db.transaction(conn):
        record = preferences.write(conn, scope, question_id, preference, source, free_text)
        if enabled:
            warning = _rewrite_preferences(conn, scope, env)
            if scope != GLOBAL_SCOPE:
                path = project_file(scope, EVENTS, env)
                try:
                    append_line(path, questions.serialize(record))
                except (OSError, ValueError) as e:
                    warning = warning or failure(path, e)
    return record, warning


def clear_preferences(conn, scope, question_id=None, *, enabled=True, env=None):
    """Remove one or all preferences of ``scope`` and rewrite its file when anything changed.

    Returns ``(removed ids, warning or None)``.
    """
    from toolkit import db, preferences

    warning = None
    _quick_commits(conn)
    with db.transaction(conn):
        removed = preferences.clear(conn, scope, question_id)
        if enabled and (removed or question_id is None):
            warning = _rewrite_preferences(conn, scope, env)
    return removed, warning
