"""Open the plantune database, apply migrations, re-create views and declared rollups.

Hooks open the database on every call, so the common case (an up-to-date database) costs
one ``PRAGMA user_version`` read and no DDL. The schema stamp stored in ``user_version``
is a hash of the migration names, the view files and the rollup files: when any changes,
the next open migrates under a write lock, re-creates every view and re-creates and
refills each rollup whose file changed.

Only the standard library is imported here: this module is on the hot path.
"""

import os
import sys
import time


def _load_sqlite3():
    """The ``_sqlite3`` C module, without the ``functools`` it would import.

    The sqlite3 package on top of the C module only adds the (deprecated) datetime
    adapters, unused here since times are stored as text; the classes are the same objects
    either way. The C module itself takes ``functools.lru_cache`` when it loads, to wrap
    each connection's statement cache, and ``functools`` pulls in ``collections`` and
    more, a cost on every hot call, and the ``sqlite3`` package more again
    (``benchmarks/hot_path.py``; measured: see docs/performance.md, section "What the hot path leaves out"). So
    while the module loads (and only if nothing has imported ``functools`` yet),
    ``functools`` is a stand-in whose ``lru_cache`` wraps with the very C cache
    ``functools.lru_cache`` uses (``_functools._lru_cache_wrapper``); the stand-in is gone
    from ``sys.modules`` before anything else can import it. A Python whose ``_sqlite3``
    wants more from ``functools`` gets the real module instead.
    """
    if "functools" in sys.modules:
        import _sqlite3

        return _sqlite3
    import _functools

    def lru_cache(maxsize=128, typed=False):
        # functools.lru_cache(maxsize)(f) with the same C wrapper; the statement cache
        # never asks for cache_info(), whose named tuple is what needs collections.
        return lambda function: _functools._lru_cache_wrapper(function, maxsize, typed, tuple)

    stand_in = type(sys)("functools")
    stand_in.lru_cache = lru_cache
    sys.modules["functools"] = stand_in
    try:
        import _sqlite3
    except AttributeError:  # pragma: no cover - a _sqlite3 wanting more of functools
        sys.modules.pop("_sqlite3", None)
        del sys.modules["functools"]
        import _sqlite3
    finally:
        if sys.modules.get("functools") is stand_in:
            del sys.modules["functools"]
    return _sqlite3


try:
    sqlite3 = _load_sqlite3()
except ImportError:  # pragma: no cover - a Python built without the split module
    import sqlite3

import _weakref  # noqa: E402 - builtin, already loaded by the interpreter

from toolkit.store import resources  # noqa: E402 - after the sqlite3 module, on purpose

SQL_DIR = resources.path("sql")
MIGRATIONS_DIR = os.path.join(SQL_DIR, "migrations")
VIEWS_DIR = os.path.join(SQL_DIR, "views")
ROLLUPS_DIR = os.path.join(SQL_DIR, "rollups")
MIGRATIONS_TABLE = "plantune_migrations"
# The migration that handed the rollups the earlier migrations made over to the files of
# sql/rollups/: a schema without it (an earlier release's migrations) has none declared.
ROLLUPS_FROM = "0020_rollups_declared.sql"
# Migrations whose file was renamed after a release (old name -> new name), so a name says
# what the migration does. A database that recorded the old name has that migration
# applied: the runner records the new name beside it (the old row stays, for an earlier
# release opening the database again), all in one transaction before anything runs, and
# never runs it again. Keep every entry: a database last opened
# by any earlier release may still hold an old name. Every new name is a current file and
# keeps its number, so the order of migrations never changes (tests check both).
RENAMED_MIGRATIONS = {
    "0003_profile.sql": "0003_profile_index.sql",
    "0004_ingest.sql": "0004_ingest_tail_fingerprint.sql",
    "0005_views_indexes.sql": "0005_analysis_rollups.sql",
    "0006_pacing.sql": "0006_pacing_state.sql",
    "0008_guidance.sql": "0008_guidance_apply.sql",
    "0013_team.sql": "0013_team_provenance.sql",
}
# Unreleased migrations squashed into one (its name -> the names it replaces, in order).
# A database that recorded every one of them has the squash applied: the runner records
# its name beside theirs (kept, for a copy of that code opening the database again) and
# never runs it. A new database records them too. A database with only some of them was
# made by a development version between two of them and is refused with one line.
SQUASHED_MIGRATIONS = {
    "0015_team_deletes_fast_views.sql": (
        "0015_view_rollups.sql",
        "0015b_pacing_rollup_project_index.sql",
        "0016_team_history.sql",
        "0019_deletion_records.sql",
        "0020_dimension_trace_plans.sql",
        "0021_rollup_feeds.sql",
        "0021b_rollup_feeds_split.sql",
    ),
}
BUSY_TIMEOUT_SECONDS = 10.0
GLOBAL_SCOPE = "__global__"
ALL_PROJECTS = "__all__"


# plantune_meta key marking a demo database (made by `make demo` or `simulate --new-db`):
# there simulated rows count as if they were real, since nothing real lives there.
DEMO_KEY = "demo-database"


def real_rows(alias=None, include_synthetic=False):
    """SQL predicate keeping the rows a real decision may use.

    A simulated row (synthetic = 1) counts only when the caller opted in
    (``include_synthetic``) or the database is marked as a demo database. One cheap
    predicate, so every decision path (check, hooks, pacing, guidance, profile) asks the
    same question the same way.
    """
    if include_synthetic:
        return "1"
    column = f"{alias}.synthetic" if alias else "synthetic"
    return (
        f"({column} = 0 OR EXISTS (SELECT 1 FROM plantune_meta"
        f" WHERE key = '{DEMO_KEY}' AND value = '1'))"
    )


# Tables whose rows are a user's history; a demo database must hold none that are real.
HISTORY_TABLES = (
    "question_log",
    "findings",
    "preferences",
    "preference_events",
    "declared_profile",
    "calibrations",
    "office_hours_sessions",
    "pacing_chains",
    "pacing_runs",
    "trace_runs",
    "guidance_proposals",
)


def real_history(conn):
    """``{table: rows}`` of real (not simulated) history rows, tables with none left out."""
    out = {}
    for name in HISTORY_TABLES:
        columns = {r[1] for r in conn.execute(f'PRAGMA table_info("{name}")')}
        where = " WHERE synthetic = 0" if "synthetic" in columns else ""
        n = conn.execute(f'SELECT count(*) FROM "{name}"{where}').fetchone()[0]
        if n:
            out[name] = n
    return out


def is_demo(conn):
    """True when the database is marked as a demo database."""
    row = conn.execute("SELECT value FROM plantune_meta WHERE key = ?", (DEMO_KEY,)).fetchone()
    return row is not None and row[0] == "1"


def mark_demo(conn):
    """Mark the database as a demo database (the caller's transaction)."""
    conn.execute(
        "INSERT INTO plantune_meta (key, value) VALUES (?, '1')"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (DEMO_KEY,),
    )


class DatabaseError(Exception):
    """A database problem explained in one sentence a user can act on."""


def no_database_message(path):
    """What a command that only reads says for a database file that is not there."""
    return f"no database at {path} (plantune init creates one)"


def utc_now():
    """UTC now as ISO-8601 with milliseconds and a Z, the format gstack writes."""
    ms = time.time_ns() // 1_000_000
    t = time.gmtime(ms // 1000)
    return (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T"
        f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{ms % 1000:03d}Z"
    )


def _sql_files(directory, what):
    """The ``.sql`` files of ``directory`` in name order; a missing folder is an error.

    An empty list would read as "nothing to apply" and leave a database without tables,
    which every later command would report as a confusing "no such table".
    """
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".sql"))
    except OSError:
        raise DatabaseError(resources.missing_message(what, directory)) from None
    return [(n, os.path.join(directory, n)) for n in names]


class Schema:
    """The migrations, views and rollups a database should have, and the stamp naming them."""

    def __init__(
        self,
        migrations_dir=MIGRATIONS_DIR,
        views_dir=VIEWS_DIR,
        renamed=None,
        squashed=None,
        rollups_dir=ROLLUPS_DIR,
    ):
        self.migrations = _sql_files(migrations_dir, "schema migrations folder")
        self.renamed = RENAMED_MIGRATIONS if renamed is None else renamed
        names = {name for name, _ in self.migrations}
        self.squashed = {
            new: parts
            for new, parts in (SQUASHED_MIGRATIONS if squashed is None else squashed).items()
            if new in names
        }
        # Every name a database of this schema or an earlier release may have recorded.
        self.known_names = names | {old for old, new in self.renamed.items() if new in names}
        self.earlier_names = {}
        for old, new in self.renamed.items():
            self.earlier_names.setdefault(new, []).append(old)
        for new, parts in self.squashed.items():
            self.known_names |= set(parts)
            self.earlier_names.setdefault(new, []).extend(parts)
        if not self.migrations:
            raise DatabaseError(
                resources.missing_message("schema migrations (*.sql)", migrations_dir)
            )
        self.views = []
        # SHA-1, which the event keys load anyway (zlib would be one more library per hook).
        from toolkit.store.digest import sha1

        digest = sha1("\n".join(n for n, _ in self.migrations).encode())
        for name, path in _sql_files(views_dir, "views folder"):
            with open(path, "rb") as f:
                body = f.read()
            self.views.append((name[:-4], body.decode("utf-8")))
            digest.update(b"\0" + name.encode() + b"\0" + body)
        self.rollup_files = []  # (name, bytes); none before the migration handing them over
        if ROLLUPS_FROM in names:
            for name, path in _sql_files(rollups_dir, "rollups folder"):
                with open(path, "rb") as f:
                    body = f.read()
                self.rollup_files.append((name[:-4], body))
                digest.update(b"\0rollup\0" + name.encode() + b"\0" + body)
        from toolkit.store import declared

        self.rollups = declared.Rollups(self.rollup_files)
        # user_version is a signed 32-bit integer; keep the stamp positive and non-zero so
        # a brand-new database (user_version 0) never looks current.
        self.stamp = (int.from_bytes(digest.digest()[:4], "big") & 0x7FFFFFFF) or 1


# An installed wheel ships the stamp of its own migrations and views in this file of its
# ``sql`` folder (computed at build time by hatch_build.py, with :class:`Schema`): its
# files never change, so opening a current database reads one small file instead of
# reading and hashing every view. A source checkout (an editable install) has no such
# file, and its stamp is computed on each open, since its files do change.
STAMP_FILE = "schema-stamp"


def shipped_stamp():
    """The stamp the installed package ships, or None (a source checkout, no file)."""
    if SQL_DIR != os.path.join(resources.package_dir(), "sql"):
        return None
    try:
        fd = os.open(os.path.join(SQL_DIR, STAMP_FILE), os.O_RDONLY)
    except OSError:
        return None
    try:
        text = os.read(fd, 32)
    finally:
        os.close(fd)
    try:
        return int(text)
    except ValueError:
        return None


_default_schema = None


def default_schema():
    global _default_schema
    if _default_schema is None:
        _default_schema = Schema()
    return _default_schema


def _create_private_file(path):
    """Create the database file with mode 0600 before SQLite opens it.

    SQLite gives its -wal and -shm files the main file's permissions, so this one call
    keeps the whole database private whatever the process umask is.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return False
    os.close(fd)
    os.chmod(path, 0o600)
    return True


class Connection(sqlite3.Connection):
    """A connection ``fold_wal`` can find (the C class takes no weak references).

    ``wal_file``, set by ``connect``, names its ``-wal``: an empty one needs no checkpoint.
    """


_opened = []  # weak references to the connections this process opened (fold_wal)


def _open(target, **kwargs):
    conn = sqlite3.connect(
        target, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, factory=Connection, **kwargs
    )
    if len(_opened) >= 16:
        _opened[:] = [ref for ref in _opened if ref() is not None]
    _opened.append(_weakref.ref(conn))
    conn.row_factory = sqlite3.Row
    return conn


_finished = []  # connections a one-shot command is done with, open to its end (``finish``)


def finish(conn):
    """The command is done with ``conn``: close it, unless this process ends with its
    command (``safe_io.one_shot``); then it stays open to the end, where ``fold_wal``
    folds its WAL and the process leaves without closing it. The last connection's close
    makes SQLite delete the ``-wal`` and ``-shm`` files, which the next command must then
    create again (on a full disk it could not, and could not even read), and frees the
    parsed schema just before the process ends anyway: 1 to 2 ms of a hook that passes
    through (``benchmarks/RESULTS.md``)."""
    from toolkit.store import safe_io

    if safe_io.one_shot:
        _finished.append(conn)
    else:
        conn.close()


def fold_wal():
    """At a command's end: fold the WAL of every connection this process still holds back
    into its database and leave the ``-wal`` empty (a truncating checkpoint).

    A database no process is writing is then whole in its main file, safe to copy over or
    to replace with a backup (an old WAL left behind would be replayed into the new file).
    The checkpoint waits for no one: while another process reads or writes, it folds what
    it can and that process's own end does the rest. The ``-wal`` and ``-shm`` files stay,
    empty, rather than being deleted by a close: on a full disk the next command could not
    create them again, and could not even read.
    """
    while _opened:
        conn = _opened.pop()()
        if conn is None or conn.in_transaction:
            continue  # an open transaction rolls back as the process ends
        wal = getattr(conn, "wal_file", None)
        if wal is not None:
            try:
                if os.stat(wal).st_size == 0:
                    continue  # nothing in the WAL: nothing to fold (a reader's usual end)
            except FileNotFoundError:
                continue  # no WAL at all
            except OSError:
                pass
        try:
            conn.execute("PRAGMA busy_timeout = 0")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error:
            pass  # read-only, closed already, or busy: nothing to fold here


def connect(path, migrate=True, schema=None, readonly=False, seed=None):
    """Open ``path`` and bring its schema up to date.

    Returns a ``sqlite3.Connection`` in autocommit mode (``isolation_level=None``): writers
    use ``with transaction(conn):`` for ``BEGIN IMMEDIATE`` … ``COMMIT``. ``seed(conn)``, if
    given, runs in the transaction that brings the schema up to date (the rules layer
    passes the bundled registry: ``toolkit.core.seeded_db.connect``).
    """
    if readonly:
        if not os.path.exists(path):
            raise DatabaseError(no_database_message(path))
        return _open(f"file:{path}?mode=ro", uri=True)
    expected = None
    exists = os.path.exists(path)
    if migrate and schema is None:
        expected = shipped_stamp()
        if expected is None or not exists:
            # Loaded before the file is created: a broken installation creates no empty file.
            schema = default_schema()
    if schema is not None:
        expected = schema.stamp
    created = not exists and _create_private_file(path)
    try:
        conn = _open(path)
    except sqlite3.Error as e:
        raise DatabaseError(f"cannot open database {path}: {e}") from None
    conn.wal_file = os.path.abspath(path) + "-wal"  # a later chdir must not hide it
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        # WAL with synchronous=NORMAL: a commit survives a killed process (what hooks and
        # agents face) without an fsync per call; only an OS crash or power cut can lose
        # the last commits, exactly as with gstack's own `echo >>` appends.
        conn.execute("PRAGMA synchronous = NORMAL")
        current = conn.execute("PRAGMA user_version").fetchone()[0] if migrate else None
    except sqlite3.DatabaseError as e:
        conn.close()
        raise DatabaseError(f"{path} is not a plantune database ({e})") from None
    if migrate and current != expected:
        try:
            schema = schema or default_schema()
        except DatabaseError:
            conn.close()
            raise
        _migrate(conn, schema, created, seed)
    return conn


# Waiting for the write lock. SQLite has no queue: a writer that finds the lock taken
# sleeps in its busy handler (up to 100 ms between tries), and a bulk importer that commits
# and begins again a millisecond later could keep winning. So a writer that has to wait
# leaves a marker file in ``<db>-waiting/`` for as long as it waits; a bulk importer checks
# that folder between its batches and pauses until the waiters are through.
WAITING_SUFFIX = "-waiting"
# A marker older than this belongs to a writer that was killed while it waited.
WAITING_STALE_SECONDS = 15.0


def is_busy(error):
    """True when ``error`` means another connection holds the lock (retry or spool)."""
    if not isinstance(error, sqlite3.OperationalError):
        return False
    text = str(error)
    return "locked" in text or "busy" in text


def file_of(conn):
    """The file behind ``conn``'s main database (None for an in-memory one)."""
    for row in conn.execute("PRAGMA database_list"):
        if row[1] == "main":
            return row[2] or None
    return None


def begin_immediate(conn):
    """``BEGIN IMMEDIATE``; when the lock is taken, announce the wait, then wait.

    The first try does not wait at all (busy timeout 0), so the common, uncontended case
    costs two pragmas more than a bare BEGIN. Raises ``sqlite3.OperationalError``
    ("database is locked") when the connection's busy timeout ran out.
    """
    timeout = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute("BEGIN IMMEDIATE")
        return
    except sqlite3.OperationalError as e:
        if not is_busy(e) or timeout <= 0:
            raise
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout)}")
    marker = _announce_wait(conn)
    try:
        conn.execute("BEGIN IMMEDIATE")
    finally:
        if marker:
            try:
                os.unlink(marker)
            except OSError:
                pass


def _announce_wait(conn):
    path = file_of(conn)
    if not path:
        return None
    folder = path + WAITING_SUFFIX
    marker = os.path.join(folder, f"{os.getpid()}-{time.monotonic_ns()}")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    except OSError:
        return None  # an unwritable folder only costs fairness, never the write
    return marker


def writers_waiting(path):
    """True while some writer announced that it waits for the lock of database ``path``."""
    folder = path + WAITING_SUFFIX
    try:
        entries = os.scandir(folder)
    except OSError:
        return False
    now = time.time()
    waiting = False
    with entries:
        for entry in entries:
            try:
                age = now - entry.stat(follow_symlinks=False).st_mtime
            except OSError:
                continue
            if age < WAITING_STALE_SECONDS:
                waiting = True
            else:
                try:
                    os.unlink(entry.path)  # left behind by a writer that was killed
                except OSError:
                    pass
    return waiting


class transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (or ``ROLLBACK`` on error).

    IMMEDIATE takes the write lock up front, so two writers queue on the busy timeout
    instead of one failing later with "database is locked" on lock upgrade. Inside a
    transaction already open (a delete that drains, deletes and rewrites in one), it is a
    savepoint: its work commits with the outer transaction, or is undone alone on error.
    """

    def __init__(self, conn):
        self.conn = conn
        self.nested = False

    def __enter__(self):
        if self.conn.in_transaction:
            self.nested = True
            self.conn.execute("SAVEPOINT plantune_nested")
        else:
            begin_immediate(self.conn)
        return self.conn

    def __exit__(self, exc_type, exc, tb):
        if self.nested:
            if exc_type is not None:
                self.conn.execute("ROLLBACK TO plantune_nested")
            self.conn.execute("RELEASE plantune_nested")
            return False
        waiting = _AFTER_COMMIT.pop(id(self.conn), ())
        if exc_type is None:
            self.conn.execute("COMMIT")
            for fn in waiting:
                fn()
        else:
            self.conn.execute("ROLLBACK")
        return False


# Work that may only happen once the transaction it belongs to committed (gstack's file
# lines: a line for a row that was rolled back would be a phantom event). Keyed by
# connection; run by ``transaction`` after its COMMIT, dropped on ROLLBACK.
_AFTER_COMMIT = {}


def forget_after_commit(conn):
    """Drop the work waiting for ``conn``'s commit (its transaction was abandoned)."""
    _AFTER_COMMIT.pop(id(conn), None)


def after_commit(conn, fn):
    """Run ``fn()`` right after the open ``transaction`` of ``conn`` commits (at once when
    none is open); never when it rolls back."""
    if not conn.in_transaction:
        fn()
        return
    _AFTER_COMMIT.setdefault(id(conn), []).append(fn)


def schema_is_current(path) -> bool:
    """Whether the file at ``path`` already has this release's schema (read-only look,
    so ``init`` can say "up to date" rather than "Upgraded")."""
    expected = shipped_stamp()
    if expected is None:
        try:
            expected = default_schema().stamp  # a source checkout: from the SQL files
        except DatabaseError:
            return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_SECONDS)
        try:
            return conn.execute("PRAGMA user_version").fetchone()[0] == expected
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def applied_migrations(conn):
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (MIGRATIONS_TABLE,)
    ).fetchone()
    if not exists:
        return []
    names = [r[0] for r in conn.execute(f"SELECT name FROM {MIGRATIONS_TABLE} ORDER BY name")]
    # An earlier name kept for earlier releases is not a migration of its own, nor is a
    # part of a squash that is recorded.
    recorded = set(names)
    parts = {p for new, ps in SQUASHED_MIGRATIONS.items() if new in recorded for p in ps}
    return [n for n in names if RENAMED_MIGRATIONS.get(n) not in recorded and n not in parts]


def _migrate(conn, schema, created, seed=None):
    from toolkit.store import declared

    # WAL cannot be switched on inside a transaction; it is persistent once set.
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError:
            # Another process holds the lock while switching; it will set WAL itself.
            pass
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} "
        "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL) STRICT"
    )
    _record_renames(conn, schema)
    for name, path in schema.migrations:
        with open(path, encoding="utf-8") as f:
            script = f.read()
        with transaction(conn):
            # Re-checked under the write lock: a concurrent process may have applied it.
            done = conn.execute(
                f"SELECT 1 FROM {MIGRATIONS_TABLE} WHERE name = ?", (name,)
            ).fetchone()
            if done:
                continue
            try:
                for statement in declared.split_statements(script):
                    conn.execute(statement)
            except sqlite3.Error as e:
                raise DatabaseError(f"migration {name} failed: {e}") from None
            if name == ROLLUPS_FROM:
                _sync_rollups(conn, schema)  # what it dropped is back in the same commit
            now = utc_now()
            # Recorded under its earlier names too, so an earlier release that opens this
            # database counts it applied instead of running it again.
            for recorded_as in (name, *schema.earlier_names.get(name, ())):
                conn.execute(
                    f"INSERT OR IGNORE INTO {MIGRATIONS_TABLE} (name, applied_at) VALUES (?, ?)",
                    (recorded_as, now),
                )
    with transaction(conn):
        _recreate_views(conn, schema)
        if seed is not None:
            seed(conn)
        conn.execute(f"PRAGMA user_version = {schema.stamp}")


def _record_renames(conn, schema):
    """Record each applied migration that was renamed under its new name as well, and a
    squash whose parts are all applied under its own name.

    The old name's row stays: a database opened again by an earlier release (a hook
    installed globally beside a newer copy) must still count that migration applied rather
    than run it a second time and fail on its CREATE statements; a newer name means nothing
    to that release. Every new name is written in one transaction: a kill leaves all of
    them or none, and a name already recorded keeps the time it has.
    """
    current = {name for name, _ in schema.migrations}
    renames = [(old, new) for old, new in schema.renamed.items() if new in current]
    recorded = set(applied_migrations(conn))
    squashes = []
    for new, parts in schema.squashed.items():
        if new in recorded or not recorded & set(parts):
            continue
        missing = [p for p in parts if p not in recorded]
        if missing:
            raise DatabaseError(
                f"{file_of(conn)} was made by a development version of plantune (it has"
                f" migration {sorted(recorded & set(parts))[-1].removesuffix('.sql')} but not"
                f" {missing[0].removesuffix('.sql')}); open it with that version to export"
                " what it holds, or start a new database"
            )
        squashes.append((new, parts))
    if not squashes and not any(old in recorded and new not in recorded for old, new in renames):
        return  # nothing recorded only under an old name: no write lock taken
    with transaction(conn):
        for old, new in renames:
            conn.execute(
                f"INSERT OR IGNORE INTO {MIGRATIONS_TABLE} (name, applied_at)"
                f" SELECT ?, applied_at FROM {MIGRATIONS_TABLE} WHERE name = ?",
                (new, old),
            )
        for new, parts in squashes:
            marks = ", ".join("?" * len(parts))
            conn.execute(
                f"INSERT OR IGNORE INTO {MIGRATIONS_TABLE} (name, applied_at)"
                f" SELECT ?, max(applied_at) FROM {MIGRATIONS_TABLE} WHERE name IN ({marks})",
                (new, *parts),
            )


def _sync_rollups(conn, schema):
    from toolkit.store import declared

    try:
        declared.sync(conn, schema.rollups)
    except declared.RollupError as e:
        raise DatabaseError(str(e)) from None


def _recreate_views(conn, schema):
    from toolkit.store import declared

    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view'").fetchall():
        conn.execute(f'DROP VIEW IF EXISTS "{name}"')
    _sync_rollups(conn, schema)  # with no view left, a rollup's table can be made again
    pending = list(schema.views)
    # Views may read other views; create in rounds until no progress, then report.
    while pending:
        failed, errors = [], {}
        for name, body in pending:
            try:
                for statement in declared.split_statements(body):
                    conn.execute(statement)
            except sqlite3.OperationalError as e:
                failed.append((name, body))
                errors[name] = str(e)
        if len(failed) == len(pending):
            detail = "; ".join(f"{n}: {errors[n]}" for n, _ in failed)
            raise DatabaseError(f"cannot create views: {detail}")
        pending = failed


def tombstone(conn, keys, kind):
    """Record deleted event keys (caller's transaction) so no copy is ever imported again."""
    now = utc_now()
    conn.executemany(
        "INSERT OR IGNORE INTO tombstones (event_key, kind, deleted_at) VALUES (?, ?, ?)",
        [(k, kind, now) for k in keys],
    )


def empty_wal(conn, tries=100, pause=0.05):
    """Copy the write-ahead log into the database file and truncate it, so pages as they
    were before a delete survive in neither. A reader still on an older snapshot holds the
    log back: wait for it (up to ``tries`` × ``pause`` seconds). True once it is empty."""
    for _ in range(tries):
        if conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0:
            return True
        time.sleep(pause)
    return False


def save_ingest_state(conn, path, kind, st, offset, line_no, head, tail, size=None):
    """Remember how far ``path`` was read (shared by the importer and the mirror writers).

    ``size`` is the size to compare with on the next run: the stat's size once the whole
    file was read, else the offset, so a run that stopped halfway never looks finished.
    """
    conn.execute(
        "INSERT INTO ingest_state (path, kind, inode, size, offset, line_no, mtime_ns,"
        " head_sha1, tail_sha1, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (path) DO UPDATE SET kind = excluded.kind, inode = excluded.inode,"
        " size = excluded.size, offset = excluded.offset, line_no = excluded.line_no,"
        " mtime_ns = excluded.mtime_ns, head_sha1 = excluded.head_sha1,"
        " tail_sha1 = excluded.tail_sha1, updated_at = excluded.updated_at",
        (
            path,
            kind,
            st.st_ino,
            st.st_size if size is None else size,
            offset,
            line_no,
            st.st_mtime_ns,
            head,
            tail,
            utc_now(),
        ),
    )


def table_counts(conn):
    names = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    return {n: conn.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}


def synthetic_counts(conn):
    """``{table: simulated rows}`` for every table with a ``synthetic`` column."""
    out = {}
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " AND name NOT LIKE 'rollup_%' ORDER BY name"
    ).fetchall():
        columns = {r[1] for r in conn.execute(f'PRAGMA table_info("{name}")')}
        if "synthetic" in columns:
            out[name] = conn.execute(
                f'SELECT count(*) FROM "{name}" WHERE synthetic = 1'
            ).fetchone()[0]
    return out


def backup(conn, dest):
    """Write a consistent copy of the database to ``dest`` while writers keep going.

    VACUUM INTO reads one snapshot (WAL readers never block writers) and writes a
    compact, self-contained file.
    """
    if os.path.exists(dest):
        raise DatabaseError(f"{dest} already exists; choose a new path")
    parent = os.path.dirname(os.path.abspath(dest))
    if not os.path.isdir(parent):
        raise DatabaseError(f"folder {parent} does not exist")
    _create_private_file(dest)
    os.unlink(dest)  # VACUUM INTO refuses an existing file, even an empty one
    old_umask = os.umask(0o077)
    try:
        conn.execute("VACUUM INTO ?", (dest,))
    finally:
        os.umask(old_umask)
    os.chmod(dest, 0o600)
