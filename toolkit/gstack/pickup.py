"""Pickup: other writers' changes to gstack's files come in before plantune answers.

gstack's own bins (during a switch-over) and hand edits of question-preferences.json
write the files directly; hooks and compat commands bring in what changed through the
incremental importer (:mod:`toolkit.gstack.ingest`). A stat of each file against
``ingest_state`` (:mod:`toolkit.gstack.file_state`) keeps the importer off the hot path
when nothing changed; a small change is imported inline, within a time budget; a larger
backlog is handed to the background ingest (:mod:`toolkit.gstack.backlog`).
"""

import os

from toolkit.gstack import file_state
from toolkit.gstack.file_state import JSONL_KINDS, PROJECT_FILES
from toolkit.store import paths


def _project_file(slug, name, env):
    return os.path.join(paths.project_dir(slug, env), name)


def _stat(path):
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


# A hook or compat call imports at most this much of other writers' lines itself; a larger
# backlog (say, a million lines gstack wrote before the switch) goes to a background
# ingest (toolkit.gstack.backlog) and the call answers from what is imported. The time budget
# bounds the inline part whatever the size.
INLINE_MAX_BYTES = 64 << 10
INLINE_BUDGET_SECONDS = 0.02


def _changed(conn, slug, env):
    """``(changed, unread JSONL bytes)`` for the project's files, or None when unknown."""
    files = [(_project_file(slug, name, env), kind) for name, kind in PROJECT_FILES]
    try:
        states = file_state.load(conn, [p for p, _ in files])
    except Exception:  # noqa: BLE001 - no ingest_state table yet: let the importer decide
        return None
    changed, unread = False, 0
    for path, kind in files:
        st = _stat(path)
        if st is None and path not in states:
            continue  # the importer skips a file it never saw that does not exist
        state = states.get(path)
        if file_state.unchanged(state, st):
            continue
        changed = True
        if kind in JSONL_KINDS and st is not None:
            unread += file_state.unread(state, st)
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
    from toolkit.store.db import GLOBAL_SCOPE

    if slug == GLOBAL_SCOPE:
        return None
    seen = _changed(conn, slug, env)
    if seen is not None and not seen[0]:
        return None
    unread = seen[1] if seen is not None else 0
    db_file = _database_file(conn) if unread else None
    defer = False
    if db_file:
        from toolkit.gstack import backlog

        defer = unread > INLINE_MAX_BYTES or backlog.running(db_file)
    import time

    from toolkit.gstack import ingest

    root = paths.state_root(env)
    nested = conn.in_transaction
    if nested:
        conn.execute("SAVEPOINT plantune_pickup")
    try:
        summary = ingest.sync_project(
            conn, root, slug, skip_jsonl=defer, deadline=time.monotonic() + INLINE_BUDGET_SECONDS
        )
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
            from toolkit.gstack import backlog

            backlog.start(db_file, root, slug, env)
    failed = [f for f in summary.get("files", ()) if f.get("error")]
    if failed:
        return f"warning: could not pick up {failed[0]['path']}: {failed[0]['error']}"
    skipped = summary.get("skipped") if isinstance(summary, dict) else 0
    if skipped:
        # Named here: once read, the file is unchanged for the next `plantune ingest`.
        first = next(f for f in summary.get("files", ()) if f.get("skipped"))
        issue = next(i for i in first["issues"] if i["skipped"])
        entries = "1 unreadable entry" if skipped == 1 else f"{skipped} unreadable entries"
        return (
            f"warning: skipped {entries}, first {first['path']}:{issue['line']}: {issue['message']}"
        )
    return None


def backlog_note(conn, slug, env=None):
    """A stderr line while gstack lines of ``slug`` still wait for import, else None.

    For answers that depend on the whole history (``--derive``, ``--profile``): they
    answer from what is imported and say so.
    """
    files = [_project_file(slug, name, env) for name, kind in PROJECT_FILES if kind in JSONL_KINDS]
    try:
        states = file_state.load(conn, files)
    except Exception:  # noqa: BLE001 - no ingest_state table: nothing imported yet either
        return None
    unread = total = 0
    for path in files:
        st = _stat(path)
        if st is None:
            continue
        total += st.st_size
        unread += file_state.unread(states.get(path), st)
    if not unread:
        return None
    done = 100 * (total - unread) // total if total else 0
    return (
        f"note: gstack's history is still being imported in the background ({done}% done,"
        f" {unread / 1048576:.1f} MiB left); this answer covers what is imported so far"
    )
