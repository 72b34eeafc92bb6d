"""Connections a resident server keeps open between the calls it runs (``toolkit.resident``).

Opening the database costs a fresh process about 2 ms of SQLite reading the schema; a
server keeps each database's connection, schema read, for the next call. Only a server
imports this module and turns keeping on; ``toolkit.store.db.connect`` then takes its
connections from here.

A kept connection is used only while its path, and the paths of its WAL and
shared-memory files, still name the files it opened: a database deleted, restored or
replaced (by a rename, or by a copy with its -wal and -shm removed) is never written
through an old connection. One that lost its files is never used again and never
closed: a close would checkpoint and then delete the WAL file by its name, which may by
then belong to the new file. The server leaves at once (``replaced_files``), ending with
``os._exit`` as every hot command does, so nothing is closed by name.
"""

import os

from toolkit.store import db

# Databases kept open at once; the one used longest ago is closed for another.
KEPT_MAX = 8
# What a command may change on its connection (a hook's shorter lock wait, an import's
# cache, a delete's secure_delete), put back as it was when opened before the next call.
SETTINGS = ("busy_timeout", "cache_size", "wal_autocheckpoint", "secure_delete")

# {absolute path: (files, settings, connection)}, the newest last; None: keeping is off.
_kept = None
_orphans = []  # connections that lost their files: held, unused, until the process ends
_settings = {}  # each kept database's settings as its first connection was opened


class KeptConnection(db.sqlite3.Connection):
    """A kept connection: a command's ``close()`` ends its transaction but not the
    connection."""

    def close(self):
        if self.in_transaction:
            self.execute("ROLLBACK")


def keep_connections(on=True):
    """Keep the connections this process opens from now on (a resident server)."""
    global _kept
    _kept = {} if on else None


def on():
    return _kept is not None


def _close(conn):
    db.sqlite3.Connection.close(conn)


def _files(path):
    """(device, inode, owner, permissions) of the database, its -wal and its -shm (None
    where missing): a file made read-only is not written through an old connection either."""
    out = []
    for name in (path, path + "-wal", path + "-shm"):
        try:
            st = os.stat(name)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_dev, st.st_ino, st.st_uid, st.st_mode & 0o7777))
    return tuple(out)


def replaced_files():
    """True when a kept connection's files are no longer at their paths (or one was found
    so)."""
    if _orphans:
        return True
    return any(_files(path) != files for path, (files, _s, _c) in (_kept or {}).items())


def connection(path):
    """The kept connection for ``path``, its settings put back; None to open one."""
    key = os.path.abspath(path)
    entry = _kept.pop(key, None)
    if entry is None:
        return None
    files, settings, conn = entry
    if _files(key) != files:
        _orphans.append(conn)
        return None
    for name, value in settings:
        conn.execute(f"PRAGMA {name} = {int(value)}")
    conn.row_factory = db.sqlite3.Row
    conn.isolation_level = None
    # Callbacks a command sets for a while (the rollups' authorizer) end with the call.
    conn.set_authorizer(None)
    conn.set_progress_handler(None, 0)
    conn.set_trace_callback(None)
    return conn


def keep(path, conn):
    """Keep ``conn`` (just opened or taken back for ``path``) for the next call."""
    key = os.path.abspath(path)
    files = _files(key)
    if None in files:
        _orphans.append(conn)  # not a database in WAL mode as plantune keeps it
        return
    if key not in _settings:
        _settings[key] = tuple(
            (name, conn.execute(f"PRAGMA {name}").fetchone()[0]) for name in SETTINGS
        )
    _kept[key] = (files, _settings[key], conn)
    while len(_kept) > KEPT_MAX:
        oldest = next(iter(_kept))
        old_files, _old_settings, old = _kept.pop(oldest)
        if _files(oldest) == old_files:
            _close(old)  # its own files: an ordinary close
        else:
            _orphans.append(old)


def end_of_call():
    """After a call: no kept connection is left inside a transaction or with work waiting
    for a commit."""
    for _files_then, _settings_then, conn in (_kept or {}).values():
        db.forget_after_commit(conn)
        if conn.in_transaction:
            conn.execute("ROLLBACK")
