"""Put a backup back in place of the database, safely while other processes use it.

Copying a file over a database whose ``-wal`` holds data corrupts it (the old WAL is
replayed into the new file), and renaming files away from under open connections leaves
them writing to the old set. So the backup is written into the live database through
SQLite's backup API: one write transaction, under the database's own write lock, that
readers (a running ``plantune serve``) and writers waiting for the lock see as any other
commit. While that transaction holds the lock, and before it commits, the database as it
stands is copied to ``<db>.before-restore``: no commit can fall between the two.

Only the standard library is imported here.
"""

import os

from toolkit.store import db

sqlite3 = db.sqlite3
BEFORE_SUFFIX = ".before-restore"


def check_backup(path):
    """(page size, page count) of a backup that is a sound plantune database, else
    DatabaseError with the reason in one line."""
    if not os.path.isfile(path):
        raise db.DatabaseError(f"no backup at {path}")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as e:
        raise db.DatabaseError(f"cannot open backup {path}: {e}") from None
    try:
        problems = [row[0] for row in conn.execute("PRAGMA integrity_check")]
        if problems != ["ok"]:
            raise db.DatabaseError(f"{path} fails SQLite's integrity check: {problems[0]}")
        found = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
            (db.MIGRATIONS_TABLE,),
        ).fetchone()
        if found is None:
            raise db.DatabaseError(f"{path} is not a plantune database (no migrations table)")
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        count = conn.execute("PRAGMA page_count").fetchone()[0]
    except sqlite3.DatabaseError as e:
        raise db.DatabaseError(f"{path} is not a plantune database ({e})") from None
    finally:
        conn.close()
    return size, count


def _summary(path, readonly=False):
    """Migrations applied and question events held by the database at ``path`` (read
    only for a backup; the live database is opened as usual, so that its last close
    leaves nothing of it behind)."""
    target, uri = (f"file:{path}?mode=ro", True) if readonly else (path, False)
    conn = sqlite3.connect(target, uri=uri, isolation_level=None, timeout=db.BUSY_TIMEOUT_SECONDS)
    try:
        migrations = conn.execute(f"SELECT count(*) FROM {db.MIGRATIONS_TABLE}").fetchone()[0]
        try:
            events = conn.execute("SELECT count(*) FROM question_log").fetchone()[0]
        except sqlite3.Error:
            events = 0
        return {"migrations": migrations, "question_events": events}
    finally:
        conn.close()


def describe(path):
    """What the database at ``path`` holds, for a confirmation prompt; None when absent."""
    return _summary(path) if os.path.exists(path) else None


def _copy_current(path, dest):
    """``dest`` := a consistent copy of the database at ``path`` (replaced atomically)."""
    tmp = f"{dest}.tmp-{os.getpid()}"
    if os.path.exists(tmp):
        os.unlink(tmp)
    conn = sqlite3.connect(path, isolation_level=None, timeout=db.BUSY_TIMEOUT_SECONDS)
    old_umask = os.umask(0o077)
    try:
        conn.execute("VACUUM INTO ?", (tmp,))
    finally:
        os.umask(old_umask)
        conn.close()
    os.chmod(tmp, 0o600)
    os.replace(tmp, dest)


def restore(path, backup):
    """Replace the database at ``path`` with the backup at ``backup``.

    Returns ``{"restored": summary, "replaced": summary or None, "kept_as": path or
    None}``; the caller's next open brings the schema up to date. A backup that is missing, damaged, not a plantune database or the database
    itself raises DatabaseError and nothing is changed.
    """
    page_size, pages = check_backup(backup)
    if os.path.exists(path) and os.path.samefile(path, backup):
        raise db.DatabaseError(f"{backup} is the database itself")
    before = path + BEFORE_SUFFIX
    existed = os.path.exists(path)
    if existed:
        live = sqlite3.connect(path, isolation_level=None, timeout=db.BUSY_TIMEOUT_SECONDS)
        try:
            live_size = live.execute("PRAGMA page_size").fetchone()[0]
            mode = live.execute("PRAGMA journal_mode").fetchone()[0]
        finally:
            live.close()
        if mode == "wal" and live_size != page_size:
            raise db.DatabaseError(
                f"{backup} has {page_size}-byte pages, the database {live_size}-byte pages;"
                " a database in WAL mode cannot take it"
            )
    else:
        db.connect(path, migrate=False).close()  # a new private file
    replaced = _summary(path) if existed else None
    source = sqlite3.connect(f"file:{backup}?mode=ro", uri=True, isolation_level=None)
    target = sqlite3.connect(path, isolation_level=None, timeout=db.BUSY_TIMEOUT_SECONDS)
    copied = []

    def progress(status, _remaining, _total):
        # After the first step the backup holds the database's write lock, its pages
        # not yet committed: what a reader sees now is the database being replaced.
        if not copied and status == 0 and existed:
            _copy_current(path, before)
            copied.append(before)

    try:
        if existed and pages < 2:  # pragma: no cover - a plantune schema has many pages
            raise db.DatabaseError(f"{backup} is too small to be a plantune database")
        source.backup(target, pages=1 if existed else -1, progress=progress)
    except sqlite3.Error as e:
        raise db.DatabaseError(f"restore failed, the database is unchanged: {e}") from None
    finally:
        source.close()
        target.close()
    conn = sqlite3.connect(path, isolation_level=None, timeout=db.BUSY_TIMEOUT_SECONDS)
    try:
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
    finally:
        conn.close()
    return {
        "restored": _summary(path),
        "replaced": replaced,
        "kept_as": copied[0] if copied else None,
    }


def keep_one_way_facts(path, replaced):
    """Copy the one-way facts (``door_knowledge``) of the database a restore replaced
    (kept at ``replaced``) into the restored one, whose schema is current: what was known
    to be a one-way door stays one, as facts are only ever added; an allow taken back
    since the backup stays taken back. Returns how many facts were new; 0 when the
    replaced database had none to give."""
    if not replaced or not os.path.isfile(replaced):
        return 0
    conn = sqlite3.connect(path, isolation_level=None, timeout=db.BUSY_TIMEOUT_SECONDS)
    try:
        conn.execute("ATTACH DATABASE ? AS replaced", (replaced,))
    except sqlite3.Error:
        conn.close()
        return 0
    try:
        found = conn.execute(
            "SELECT 1 FROM replaced.sqlite_master WHERE type = 'table' AND name = 'door_knowledge'"
        ).fetchone()
        if found is None:
            return 0
        conn.execute("BEGIN IMMEDIATE")
        before = conn.execute("SELECT count(*) FROM main.door_knowledge").fetchone()[0]
        # The evidence names a row of the replaced database; when the restored one holds
        # no such row with the same door reason it is marked as carried, so an allow
        # never reads another question's row (a carried fact then is not allowable).
        try:
            conn.execute(_CARRY.format(evidence=_EVIDENCE_KEPT))
        except sqlite3.Error:  # a replaced database of another shape: every fact marked
            conn.execute(_CARRY.format(evidence="'restored:' || k.evidence"))
        added = conn.execute("SELECT count(*) FROM main.door_knowledge").fetchone()[0] - before
        _keep_undone_allows(conn)
        conn.execute("COMMIT")
        return added
    finally:
        conn.close()


def _keep_undone_allows(conn):
    """An allow of the backup that the replaced database no longer holds was taken back
    since (``doors allow --undo``): it is taken back in the restored one too, with an
    ``undo`` event, so a restore never turns a question two-way again."""
    found = conn.execute(
        "SELECT 1 FROM replaced.sqlite_master WHERE type = 'table' AND name = 'door_allows'"
    ).fetchone()
    if found is None:
        return
    gone = conn.execute(
        "SELECT canonical_id, question_id FROM main.door_allows WHERE canonical_id NOT IN"
        " (SELECT canonical_id FROM replaced.door_allows)"
    ).fetchall()
    for key, question_id in gone:
        conn.execute("DELETE FROM main.door_allows WHERE canonical_id = ?", (key,))
        conn.execute(
            "INSERT INTO main.door_allow_events (ts, action, canonical_id, question_id, source)"
            " VALUES (?, 'undo', ?, ?, 'restore')",
            (db.utc_now(), key, question_id),
        )


_CARRY = (
    "INSERT OR IGNORE INTO main.door_knowledge"
    " (canonical_id, source, question_id, evidence, learned_at)"
    " SELECT k.canonical_id, k.source, k.question_id, {evidence}, k.learned_at"
    " FROM replaced.door_knowledge k"
)
_EVIDENCE_KEPT = (
    "CASE WHEN EXISTS (SELECT 1 FROM main.question_log m JOIN replaced.question_log r"
    " ON r.id = m.id WHERE 'question_log:' || m.id = k.evidence"
    " AND m.question_id = r.question_id AND m.door_reason IS r.door_reason)"
    " OR EXISTS (SELECT 1 FROM main.findings m JOIN replaced.findings r"
    " ON r.id = m.id WHERE 'findings:' || m.id = k.evidence"
    " AND m.finding_id = r.finding_id AND m.door_reason IS r.door_reason)"
    " THEN k.evidence ELSE 'restored:' || k.evidence END"
)
