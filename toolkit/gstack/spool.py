"""The spool: answers that could not reach the database in time, kept until they can.

Hooks and compat scripts run while an agent waits. When the database stays locked longer
than they may wait (an import, a backup, another busy writer), or cannot be opened at all,
the event is not dropped: it is written to ``<state root>/spool/`` as one file per event
and the command succeeds. The next writer that gets the database, or ``plantune ingest``,
drains the spool.

Rules that make this safe:

- A spool file is complete or absent. It is written to a hidden temp name (mode 0600,
  never following a symlink), fsynced, renamed into place, and the folder is fsynced: a
  kill or a power cut never leaves half an event to import.
- Draining is exactly once by key, not by luck. An entry is recorded through the same
  function as a live write (same event key, same dedup rule, gstack's line appended after
  the row), and its file is removed only after that commit. A drain killed in between
  finds the row already there on the next run and just removes the file; two drains at
  once record it once.
- A file that cannot be an entry (not a regular file, unreadable, not ours) is moved to
  ``spool/failed/`` with a report, never retried forever and never blocking the others.

Only the standard library and other hot-path modules are imported: hooks import this.
"""

import os
import stat
import time

from toolkit.store import json_lite, paths, safe_io

SPOOL_DIR = "spool"
FAILED_DIR = "failed"
SUFFIX = ".json"
VERSION = 1
QUESTION_EVENT = "question-event"
# Far above any event (a summary is at most 200 characters); a bigger file is not ours.
MAX_ENTRY_BYTES = 1 << 20
# A hot writer drains at most this many entries after its own write, so one call never
# pays for a long backlog; `plantune ingest` drains everything.
HOT_DRAIN_LIMIT = 50
# A temp file this old belongs to a writer that was killed before its rename.
STALE_TEMP_SECONDS = 60.0


class SpoolError(Exception):
    """An entry could not be spooled; ``str()`` is the one-line reason."""


def folder(env=None):
    return os.path.join(paths.state_root(env), SPOOL_DIR)


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _private_dir(path):
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise SpoolError(f"{path} is not a folder")


def put_question(
    record, project, db_file, *, question_index=None, mirror=True, allow_phase=True, env=None
):
    """Spool one validated question event meant for database ``db_file``; returns the
    spool file's path.

    ``record`` is what ``questions.validate_event`` returned (its ``ts`` is the time of
    the answer, kept as is when the entry is drained later), with ``allow_phase`` as the
    writer validated it: the drain checks it again by the same rules, so an event that was
    acknowledged is never refused later. Raises :class:`SpoolError`.
    """
    from toolkit.core import questions

    key = questions.event_key(project, record)
    entry = {
        "v": VERSION,
        "kind": QUESTION_EVENT,
        "db": _same_file_key(db_file),
        "project": project,
        "key": key,
        "question_index": question_index,
        "mirror": bool(mirror),
        "allow_phase": bool(allow_phase),
        "record": record,
    }
    # What the door is read from beyond the record (the whole question the hook saw, a
    # summary before its cut): a drained entry is classified on the same text.
    for name in _READINGS:
        value = getattr(record, name, None)
        if isinstance(value, str) and value:
            entry[name] = value
    return _put(entry, key, env)


# questions.Event's attributes, kept beside the record in an entry.
_READINGS = ("door_text", "whole_question")


def _with_readings(record, entry):
    """``record`` (validated again) with the entry's whole-question texts put back."""
    from toolkit.core import questions

    readings = {n: entry[n] for n in _READINGS if isinstance(entry.get(n), str) and entry[n]}
    if not readings:
        return record
    # Never less than the record itself says: a text without its summary gets it back.
    own = getattr(record, "door_text", None) or record["question_summary"]
    record = record if isinstance(record, questions.Event) else questions.Event(record)
    for name, value in readings.items():
        setattr(record, name, value if own in value else f"{own}\n{value}")
    return record


def _same_file_key(path):
    return os.path.realpath(os.path.abspath(path)) if path else None


def _put(entry, key, env):
    where = folder(env)
    # ASCII-only JSON: a lone surrogate in a summary survives as its \\u escape.
    data = json_lite.dumps(entry, separators=(",", ":")).encode("ascii")
    name = f"{time.time_ns():020d}-{os.getpid()}-{key[:16]}{SUFFIX}"
    final = os.path.join(where, name)
    try:
        _private_dir(where)
        # Written in full and fsynced beside the target, then linked into place: a drain
        # sees the whole entry or none of it.
        safe_io.create_exclusive(final, data)
    except OSError as e:
        raise SpoolError(f"could not spool the event to {where}: {e.strerror or e}") from None
    _fsync_dir(where)
    return final


def pending(env=None):
    """Names of the spooled entries, oldest first (an empty list when there is no spool)."""
    try:
        names = os.listdir(folder(env))
    except OSError:
        return []
    return sorted(n for n in names if n.endswith(SUFFIX) and not n.startswith("."))


class Drained:
    """What one drain did: entries recorded, already there, failed (with reasons)."""

    def __init__(self):
        self.recorded = self.already = 0
        self.failed = []  # "path: reason"
        self.left = 0  # entries not drained (the limit, or the database was busy)

    def as_dict(self):
        return {
            "recorded": self.recorded,
            "already": self.already,
            "failed": self.failed,
            "left": self.left,
        }


def _read_entry(path):
    """The decoded entry at ``path``: regular files only, never blocking, never following."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if st.st_size > MAX_ENTRY_BYTES:
            raise ValueError("too large to be a spooled event")
        chunks, size = [], 0
        while size <= MAX_ENTRY_BYTES:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    try:
        entry = json_lite.loads(b"".join(chunks).decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise ValueError("not a spooled event (invalid JSON)") from None
    if not (
        isinstance(entry, dict)
        and entry.get("v") == VERSION
        and isinstance(entry.get("db"), str)
        and entry.get("kind") == QUESTION_EVENT
        and isinstance(entry.get("record"), dict)
        and isinstance(entry.get("project"), str)
        and paths.is_valid_slug(entry["project"])
    ):
        raise ValueError("not a spooled event of this plantune version")
    return entry


def _set_aside(path, reason, env, drained):
    target = os.path.join(folder(env), FAILED_DIR)
    try:
        _private_dir(target)
        os.rename(path, os.path.join(target, os.path.basename(path)))
        where = os.path.join(target, os.path.basename(path))
    except (OSError, SpoolError):
        where = path
    drained.failed.append(f"{where}: {reason}")


def _clean_temps(where):
    now = time.time()
    try:
        names = [n for n in os.listdir(where) if n.startswith(".") and ".tmp." in n]
    except OSError:
        return
    for name in names:
        path = os.path.join(where, name)
        try:
            if now - os.lstat(path).st_mtime > STALE_TEMP_SECONDS:
                os.unlink(path)
        except OSError:
            pass


def drain(conn, env=None, limit=None, unmirrored=None):
    """Record the spooled entries through ``conn``, oldest first; returns :class:`Drained`.

    Only entries meant for ``conn``'s database are drained: an event spooled by a writer
    of another database (``--db``) waits for that one. Stops (leaving the rest for later)
    when the database is busy again. Never raises for a bad entry; a database error other
    than busy propagates. Inside the caller's transaction (``profile delete``), an entry's
    file goes once that transaction commits, and entries of the projects
    ``unmirrored(project)`` picks (about to be deleted) get no gstack line.
    """
    from toolkit.core import questions
    from toolkit.gstack import mirror
    from toolkit.store import db

    drained = Drained()
    names = pending(env)
    if not names:
        return drained
    ours = _same_file_key(db.file_of(conn))
    where = folder(env)
    _clean_temps(where)
    if limit is not None and len(names) > limit:
        drained.left = len(names) - limit
        names = names[:limit]
    for i, name in enumerate(names):
        path = os.path.join(where, name)
        try:
            entry = _read_entry(path)
        except FileNotFoundError:
            continue  # another drain took it
        except (OSError, ValueError) as e:
            _set_aside(path, getattr(e, "strerror", None) or str(e), env, drained)
            continue
        if entry["db"] != ours:
            drained.left += 1
            continue
        try:
            record = questions.validate_event(
                entry["record"], allow_phase=entry.get("allow_phase") is not False
            )
            record = _with_readings(record, entry)
        except questions.QuestionError as e:
            _set_aside(path, e.message, env, drained)
            continue
        enabled = bool(entry.get("mirror")) and mirror.enabled(env)
        if unmirrored is not None and unmirrored(entry["project"]):
            enabled = False
        try:
            rec, _ = mirror.log_question(
                conn,
                record,
                entry["project"],
                enabled=enabled,
                env=env,
                question_index=entry.get("question_index"),
            )
        except Exception as e:  # noqa: BLE001 - one entry never blocks the others
            if db.is_busy(e):
                drained.left += len(names) - i
                break
            if isinstance(e, db.sqlite3.Error):
                raise
            _set_aside(path, f"{type(e).__name__}: {e}", env, drained)
            continue
        if rec.status == "inserted":
            drained.recorded += 1
        else:
            drained.already += 1
        # Only once the row is committed: a kill before this replays it, by key, harmlessly.
        db.after_commit(conn, lambda path=path: _remove(path))
    return drained


def _remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def drain_after_write(conn, env=None):
    """A hot writer's share: drain a few entries after its own write; never raises.

    Returns a warning line for the caller's stderr (or log), or None.
    """
    if not pending(env):
        return None
    try:
        drained = drain(conn, env, limit=HOT_DRAIN_LIMIT)
    except Exception as e:  # noqa: BLE001 - the caller's own answer is already recorded
        return f"warning: could not drain the spool: {e}"
    if drained.failed:
        return f"warning: spooled event set aside: {drained.failed[0]}"
    return None


def forget(project=None, env=None):
    """Remove set-aside entries (``failed/``) about ``project`` (every one when None), for
    ``profile delete``: they may hold the deleted text. Returns one-line problems."""

    where = os.path.join(folder(env), FAILED_DIR)
    try:
        names = sorted(os.listdir(where))
    except FileNotFoundError:
        return []
    except OSError as e:
        return [f"could not read {where}: {safe_io.describe(e)}"]
    problems = []
    for name in names:
        path = os.path.join(where, name)
        if project is not None:
            try:
                entry = json_lite.loads(safe_io.read_bytes(path).decode("utf-8", "replace"))
            except (OSError, ValueError):
                continue  # not attributable to a project: left for the user
            if not (isinstance(entry, dict) and entry.get("project") == project):
                continue
        try:
            os.unlink(path)
        except OSError as e:
            problems.append(f"could not remove {path}: {safe_io.describe(e)}")
    return problems
