"""Merge developers' databases into one team database.

Each source is attached read-only and copied with set-based ``INSERT … SELECT`` statements
(one transaction per source, so a failed source leaves nothing behind):

- question events and preference events by their event keys (``INSERT OR IGNORE``: merging
  the same source twice adds nothing);
- calibrations by a merge key (source database id + its row id);
- findings by (session, finding id), with their links re-pointed at the team database's
  copies of the answering event and the calibration;
- office-hours sessions by their session keys (qualified by the merge source: the key
  hashes the content, which two developers can share), trace runs by run id and guidance
  proposals by id (a proposal's later status, and a trace run's later state, follow on
  a re-merge; a merged proposal is evidence here, never applied from the team database);
- preferences into ``developer_preferences`` and declared profiles into
  ``developer_declared_profile``, one row per developer, scope and key: what a developer
  chose or declared is never folded into anyone else's, nor into the team database's own
  ``preferences`` or ``declared_profile``; a newer row of a source replaces an older one,
  never the reverse (a backup of a source is as mergeable as the source).

Nothing deleted comes back, whichever database it was deleted in and whatever the order of
merges, backups and deletes. A source's tombstones (0010) and deletion records (0019) are
merged first: the team database removes its copies of what they name (with
``secure_delete``, so removed text leaves the file) and keeps them, so the same row of
that developer from any source or backup is never added again; the team database's own
records (its ``profile delete``) keep out what it deleted. A record covers the rows written up to its
delete: a preference set again, or a session ranked again, afterwards is newer and is
merged. A source from before deletion records has only its rows to say what it deleted:
a row it no longer holds is removed from that source's merged copy.

A source database is one developer's: ``--developer``, else the one developer its rows
name (a source whose rows name several is refused; one naming none needs ``--developer``).
It speaks for that developer only. Its rows that name someone else are refused and counted,
never merged; its tombstones (kept here in ``developer_tombstones``, with the developer)
and its deletion records (kept with the developer's name) remove and keep out only that
developer's rows, so no source can delete or forge another developer's history, and a
merge never removes what another source contributed. A team database merged into another
is the exception, and only when asked (``--trust-attribution``): its rows keep the
developers they name, and its deletes count for whom they say.

Names compare in their stored form (``identity.normalise``: case, spacing, ``mailto:``,
compatibility forms), and a name mixing scripts is a look-alike only ``--developer`` can
vouch for. A database id is only a claim: a source's removals and updates reach only its
developer's copies. A key another developer's row already holds here (a squat) never
drops the source's row silently: a question event whose held copy does not hash to its
key is replaced by the source's genuine one; any other is counted as contested.

Rows of a table with no developer of their own (declared profile, office hours, trace
runs, proposals) belong to the source's developer.

Every merged row keeps its developer and the merge source it came from
(``merge_sources``). A source whose schema has a migration this plantune does not know is
refused before anything is written.
"""

from __future__ import annotations

import os
import sqlite3
from urllib.parse import quote

from toolkit.core import identity
from toolkit.store import db

# Tables copied by key, in dependency order (findings point at events and calibrations).
KEYED_TABLES = ("question_log", "preference_events", "calibrations", "findings")
# Tables copied by their own unique key: (key column, rows can change later, rows can be
# deleted in the source, the key is the content's hash). Their rows name no developer in a
# developer's own database. Two developers can hold the same office-hours session (its key
# hashes its content), so a merged copy's key is prefixed with its merge source: both are
# kept, and the team database's own sessions never count merged ones as earlier copies.
OWNED_TABLES = {
    "office_hours_sessions": ("session_key", False, True, True),
    "trace_runs": ("run_id", True, False, False),
    "guidance_proposals": ("id", True, False, False),
}
# Per-developer snapshots: source table -> (team table, key columns, value columns).
SNAPSHOTS = {
    "preferences": (
        "developer_preferences",
        ("scope", "question_id"),
        ("preference", "raw_value", "source", "free_text", "synthetic", "updated_at"),
    ),
    "declared_profile": (
        "developer_declared_profile",
        ("scope", "dimension"),
        ("value", "source", "synthetic", "declared_at"),
    ),
}
# Defaults for value columns an older source schema lacks.
_SNAPSHOT_DEFAULTS = {"source": "'unknown'", "synthetic": "0"}
# Deletion records (0019), per copied table: (kind, key columns, time column, kind of the
# records that erase only its free text). Every kind but the developer-scoped ones matches
# rows of any developer.
DELETABLE = {
    "findings": ("finding", ("session_id", "finding_id"), "updated_at", None),
    "office_hours_sessions": ("office-hours", ("session_key",), "recorded_at", None),
    "trace_runs": ("trace-run", ("run_id",), "created_at", None),
    "guidance_proposals": ("guidance-proposal", ("id",), "created_at", None),
    "calibrations": ("calibration", ("merge_key",), "created_at", None),
    "developer_preferences": (
        "developer-preference",
        ("scope", "question_id"),
        "updated_at",
        "developer-preference-text",
    ),
    "developer_declared_profile": (
        "developer-declared-profile",
        ("scope", "dimension"),
        "declared_at",
        None,
    ),
}
# A source's record kinds as the team database keeps them: a developer's own preferences and
# declared profile are the team's developer_preferences and developer_declared_profile.
TEAM_KIND = {
    "preference": "developer-preference",
    "preference-text": "developer-preference-text",
    "declared-profile": "developer-declared-profile",
}
_DEVELOPER_KINDS = (
    "developer-preference",
    "developer-preference-text",
    "developer-declared-profile",
)
# Tables whose developer is the source's when they carry none of their own.
_OWNER_TABLES = ("declared_profile",) + tuple(OWNED_TABLES)
# Columns the merge sets itself rather than copying.
_OWN_COLUMNS = {"id", "developer", "merged_from", "merge_key", "answer_event_id", "calibration_id"}


class MergeError(Exception):
    """A source that cannot be merged, explained in one line."""


class Source:
    """A checked source database: path, identity, schema facts."""

    def __init__(self, path, database_id, migrations, unattributed, owner="", trusted=False):
        self.path, self.database_id = path, database_id
        self.migrations, self.unattributed = migrations, unattributed
        # The developer the source speaks for (its rows, tombstones and deletion records),
        # and of its rows that name none; '' only for a trusted source naming several.
        self.owner = owner
        # A merged team database whose rows keep the developers they name.
        self.trusted = trusted


def _open_readonly(path):
    return sqlite3.connect(
        f"file:{quote(os.path.abspath(path))}?mode=ro",
        uri=True,
        timeout=db.BUSY_TIMEOUT_SECONDS,
        isolation_level=None,
    )


def inspect_source(path, known_migrations, developer=None, trust=False, team_id=None):
    """Check that ``path`` can be merged; returns a :class:`Source` or raises MergeError.

    A source speaks for one developer: ``developer`` (--developer), else the one developer
    its rows name. A source whose rows name several is refused unless ``trust`` (a team
    database merged into another, --trust-attribution): then each row keeps its own."""
    if not os.path.exists(path):
        raise MergeError(f"{path}: no such database")
    if not os.path.isfile(path):
        raise MergeError(f"{path}: not a regular file")
    try:
        conn = _open_readonly(path)
    except sqlite3.Error as e:
        raise MergeError(f"{path}: cannot open ({e})") from None
    try:
        try:
            names = [
                r[0] for r in conn.execute(f"SELECT name FROM {db.MIGRATIONS_TABLE} ORDER BY name")
            ]
        except sqlite3.DatabaseError:
            raise MergeError(f"{path}: not a plantune database") from None
        unknown = [n for n in names if n not in known_migrations]
        if unknown:
            raise MergeError(
                f"{path}: schema is newer than this plantune or unknown to it (migration"
                f" {unknown[0].removesuffix('.sql')}); upgrade plantune, then merge again"
            )
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in KEYED_TABLES + ("preferences",) if t not in tables]
        if missing:
            raise MergeError(f"{path}: not a plantune database (no {missing[0]} table)")
        row = conn.execute("SELECT value FROM plantune_meta WHERE key = 'database_id'").fetchone()
        if row and row[0]:
            database_id = row[0]
        else:
            # A database from before attribution has no id of its own; its real path is the
            # best stable name it has.
            from hashlib import sha1

            database_id = "path-" + sha1(os.path.realpath(path).encode()).hexdigest()[:32]
        if team_id and database_id == team_id:
            raise MergeError(f"{path}: is the team database itself")
        unattributed = []
        for table in KEYED_TABLES + ("preferences",):
            cols = _columns(conn, "main", table)
            if "developer" not in cols:
                if conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone():
                    unattributed.append(table)
            elif conn.execute(f"SELECT 1 FROM {table} WHERE developer = '' LIMIT 1").fetchone():
                unattributed.append(table)
        if unattributed and not developer:
            raise MergeError(
                f"{path}: some rows record no developer ({', '.join(unattributed)});"
                " name their developer with --developer"
            )
        owners = _developers(conn, tables)
        if developer:
            owner = merge_identity(developer)
            if not owner:
                raise MergeError(f"{path}: --developer {developer!r} is not an identity")
        elif len(owners) == 1:
            owner = next(iter(owners))
            if owner.startswith("invalid "):
                # Letters of several scripts (a Cyrillic ``а`` in ``аlice``) look like
                # someone else: only --developer can say whose rows they are.
                raise MergeError(
                    f"{path}: its rows name {owner.removeprefix('invalid ')}, which is not an"
                    " identity (look-alike letters or control characters); name their"
                    " developer with --developer"
                )
        elif owners and not trust:
            raise MergeError(
                f"{path}: its rows name several developers, and a source speaks for one:"
                " name its developer with --developer (rows of anyone else are refused),"
                " or merge a team database you made yourself with --trust-attribution"
            )
        else:
            owner = ""
        ownerless = [
            t
            for t in _OWNER_TABLES
            if t in tables
            and conn.execute(
                f"SELECT 1 FROM {t}"
                + (" WHERE developer = ''" if "developer" in _columns(conn, "main", t) else "")
                + " LIMIT 1"
            ).fetchone()
        ]
        if ownerless and not owner:
            said = "rows of several developers" if owners else "no developer"
            raise MergeError(
                f"{path}: its {', '.join(ownerless)} cannot be attributed (it records"
                f" {said}); name their developer with --developer"
            )
        source = Source(path, database_id, names, unattributed, owner, trust)
        source.holds_deletes = any(
            conn.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone()
            for t in ("tombstones", "deletions", "developer_tombstones")
            if t in tables
        )
        return source
    except sqlite3.DatabaseError as e:
        raise MergeError(f"{path}: not a plantune database ({e})") from None
    finally:
        conn.close()


def _developers(conn, tables, most=2):
    """Up to ``most`` distinct developers named by a database's attributed rows, in their
    stored form (``Alice@Example.com`` and ``mailto:alice@example.com`` are one). A name
    that is no identity at all (a look-alike, a control character) counts as one more."""
    found = set()
    candidates = KEYED_TABLES + ("preferences",) + tuple(OWNED_TABLES)
    candidates += tuple(team for team, _, _ in SNAPSHOTS.values())
    for table in candidates:
        if table in tables and "developer" in _columns(conn, "main", table):
            for (name,) in conn.execute(
                f"SELECT DISTINCT developer FROM {table} WHERE developer IS NOT ''"
            ):
                value = merge_identity(name)
                ok = value and identity.same_script(value)
                found.add(value if ok else f"invalid {name!r}")
                if len(found) >= most:
                    return found
    return found


def merge_identity(name):
    """A source's developer name as the team database stores it; '' for none, None for a
    name that is no identity (a control character, not text): its rows are refused."""
    if name == "":
        return ""
    try:
        return identity.normalise(name) if isinstance(name, str) else None
    except identity.IdentityError:
        return None


def _columns(conn, schema, table):
    return [r[1] for r in conn.execute(f'PRAGMA "{schema}".table_info("{table}")')]


def _developer_expr(src_cols, trusted, alias="s"):
    """SQL for a merged row's developer: the source's (:owner), except in a trusted team
    database, whose rows keep the developer they name (the source's when they name none)."""
    if trusted and "developer" in src_cols:
        return f"coalesce(nullif(merge_identity({alias}.developer), ''), :owner)"
    return ":owner"


def _refused(src_cols, trusted, alias="s"):
    """SQL true for a source row attributed to someone other than the developer the source
    speaks for, or to a name that is no identity: never merged, only counted (a trusted
    source keeps every identity it names)."""
    if "developer" not in src_cols:
        return "0"
    if trusted:
        return f"merge_identity({alias}.developer) IS NULL"
    return f"coalesce(merge_identity({alias}.developer), '-') NOT IN ('', :owner)"


def merge(conn, paths, developer=None, progress=None, trust_attribution=False):
    """Merge every database in ``paths`` into ``conn`` (an open, migrated team database).

    All sources are checked first; one that cannot be merged stops the run before anything
    is written. Returns one dict of counts per source. ``trust_attribution`` merges team
    databases: each row keeps the developer it names, and their deletes count for everyone.
    """
    known = db.default_schema().known_names
    own_id = conn.execute("SELECT value FROM plantune_meta WHERE key = 'database_id'").fetchone()
    own_id = own_id[0] if own_id else None
    target = os.path.realpath(conn.execute("PRAGMA database_list").fetchone()[2] or "")
    sources, seen = [], set()
    for path in paths:
        if os.path.realpath(path) == target:
            raise MergeError(f"{path}: is the team database itself")
        source = inspect_source(path, known, developer, trust_attribution, own_id)
        if source.database_id in seen:
            raise MergeError(f"{path}: the same database is named twice")
        if not source.owner:
            # A source that deleted every row it had: the developer its earlier merges named.
            source.owner = _owner_from_history(conn, source)
        if not source.owner and not source.trusted and source.holds_deletes:
            raise MergeError(
                f"{path}: its deletes cannot be attributed (it records no developer);"
                " name their developer with --developer"
            )
        seen.add(source.database_id)
        sources.append(source)
    results = []
    # Rows a merge removes (deleted in a source) leave no copy of their text in the file.
    conn.execute("PRAGMA secure_delete = ON")
    # A source is attached read-only and only read: its triggers never fire, and its
    # views and triggers cannot name this database's tables (SQLite keeps an attached
    # schema's objects to that schema). The one function added here is pure.
    conn.create_function("merge_identity", 1, merge_identity, deterministic=True)
    for source in sources:
        results.append(_merge_one(conn, source, developer))
        if progress:
            progress(results[-1])
    if any(r["removed"] for r in results):
        # The write-ahead log holds the pages as they were; empty it into the zeroed file.
        db.empty_wal(conn)
    return results


def _merge_one(conn, source, developer):
    now = db.utc_now()
    conn.execute(
        "ATTACH DATABASE ? AS src", (f"file:{quote(os.path.abspath(source.path))}?mode=ro",)
    )
    try:
        with db.transaction(conn):
            source_id = _source_row(conn, source, developer or "", now)
            params = {
                "source": source_id,
                "dbid": source.database_id,
                "owner": source.owner,
                "trusted": int(source.trusted),
            }
            # A source with deletion records says what it deleted; an older one only by
            # no longer holding a row it held (its merged copy follows it).
            records = _has_table(conn, "src", "deletions")
            removed = _merge_deletions(conn, params)
            counts = {}
            for table in KEYED_TABLES:
                counts[table] = _copy_keyed(conn, table, params)
            for table in OWNED_TABLES:
                counts[table] = _copy_owned(conn, table, params, records)
            for table in SNAPSHOTS:
                counts[table] = _copy_snapshot(conn, table, params, records)
            # A row updated from an older copy of the source loses erased text again.
            for table, n in _apply_deletions(conn).items():
                removed[table] = removed.get(table, 0) + n
            for table, n in removed.items():
                entry = counts[_COUNTED_AS.get(table, table)]
                entry["removed"] = entry.get("removed", 0) + n
            conn.execute(
                "UPDATE merge_sources SET last_merged_at = ?, counts_json = json(?),"
                " path = ? WHERE id = ?",
                (now, _json(counts), os.path.abspath(source.path), source_id),
            )
    except sqlite3.IntegrityError as e:
        # A value no plantune database holds (a tombstone without a key, a record without
        # its parts): what the source meant cannot be known, so none of it is taken.
        raise MergeError(f"{source.path}: malformed rows ({e}); nothing merged from it") from None
    finally:
        conn.execute("DETACH DATABASE src")
    return {
        "path": source.path,
        "database_id": source.database_id,
        "source_id": source_id,
        "developer": source.owner,
        "trusted": source.trusted,
        "refused": sum(c.get("refused", 0) for c in counts.values()),
        "contested": sum(c.get("contested", 0) for c in counts.values()),
        "tables": counts,
        "removed": sum(removed.values()),
    }


def _json(value):
    import json

    return json.dumps(value, sort_keys=True)


def _source_row(conn, source, developer, now):
    conn.execute(
        "INSERT INTO merge_sources (database_id, developer, path, first_merged_at, last_merged_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (database_id, developer) DO NOTHING",
        (source.database_id, developer, os.path.abspath(source.path), now, now),
    )
    return conn.execute(
        "SELECT id FROM merge_sources WHERE database_id = ? AND developer = ?",
        (source.database_id, developer),
    ).fetchone()[0]


def _has_table(conn, schema, table):
    return (
        conn.execute(
            f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        is not None
    )


def _owner_from_history(conn, source):
    """The developer a source speaks for when it holds no row naming one (it deleted
    them): the one developer its earlier merges named, else ''."""
    tables = ("question_log", "preference_events") + tuple(DELETABLE)
    union = " UNION ".join(
        f"SELECT developer FROM main.{t} WHERE merged_from IN"
        " (SELECT id FROM main.merge_sources WHERE database_id = :dbid)"
        for t in tables
    )
    found = [
        r[0]
        for r in conn.execute(
            f"SELECT DISTINCT developer FROM ({union}) WHERE developer != '' LIMIT 2",
            {"dbid": source.database_id},
        )
    ]
    return found[0] if len(found) == 1 else ""


def _deleted(table, keys, time, developer):
    """SQL true when a deletion record of this database covers the row of ``table`` with
    key ``keys`` (SQL expressions) of ``developer``, last written at ``time``: the record's
    key matches and the row is not newer than the delete (a row with no readable time
    counts as older)."""
    kind = DELETABLE[table][0]
    return _record_covers(kind, keys, time, developer)


def _record_covers(kind, keys, time, developer):
    match = [
        f"d.kind = '{kind}'",
        f"d.k1 = {keys[0]}",
        f"d.k2 = {keys[1]}" if len(keys) > 1 else "d.k2 = ''",
    ]
    # Every part of the records' key is matched, so each row is one index lookup.
    # A record of a non-developer kind names '' (a delete here: every copy) or the
    # developer whose copies it covers (a merged source speaks only for its own).
    match.append(
        f"d.developer = {developer}"
        if kind in _DEVELOPER_KINDS
        else f"d.developer IN ('', {developer})"
    )
    return (
        f"EXISTS (SELECT 1 FROM main.deletions d WHERE {' AND '.join(match)}"
        f" AND coalesce(julianday({time}) > julianday(d.deleted_at), 0) = 0)"
    )


# The counts a team table's removals are reported under.
_COUNTED_AS = {
    "developer_preferences": "preferences",
    "developer_declared_profile": "declared_profile",
}
_OWN_CALIBRATION_KEY = (
    "coalesce(calibrations.merge_key, (SELECT value FROM main.plantune_meta"
    " WHERE key = 'database_id') || ':' || calibrations.id)"
)


def _merge_deletions(conn, params):
    """Take in the source's tombstones and deletion records, and remove what they name
    from this database. Returns how many rows went, per table.

    They speak for the source's developer only: kept with that developer's name, they
    remove that developer's copies and keep that developer's rows out, and never touch
    anyone else's. A trusted team database's own tombstones count for every developer,
    and its records keep the developers they name."""
    removed = {}
    trusted = params["trusted"]
    for table, developer in (
        ("tombstones", "''" if trusted else ":owner"),
        ("developer_tombstones", "merge_identity(t.developer)" if trusted else ":owner"),
    ):
        if _has_table(conn, "src", table):
            conn.execute(
                "INSERT INTO main.developer_tombstones (event_key, developer, kind, deleted_at)"
                f" SELECT t.event_key, {developer}, t.kind, t.deleted_at FROM src.{table} t"
                f" WHERE {developer} IS NOT NULL ON CONFLICT DO NOTHING",
                params,
            )
    conn.execute(
        "UPDATE main.findings SET answer_event_id = NULL WHERE answer_event_id IN"
        f" ({_tombstoned_rows('question_log')})"
    )
    for table in ("question_log", "preference_events"):
        n = conn.execute(f"DELETE FROM main.{table} WHERE rowid IN ({_tombstoned_rows(table)})")
        if n.rowcount:
            removed[table] = n.rowcount
    if _has_table(conn, "src", "deletions"):
        kind = (
            "CASE d.kind "
            + " ".join(f"WHEN '{a}' THEN '{b}'" for a, b in TEAM_KIND.items())
            + " ELSE d.kind END"
        )
        # An untrusted source's records are its developer's, whatever developer they name.
        developer = _developer_expr(["developer"], trusted, "d")
        kinds = ", ".join(f"'{k}'" for k in _DEVELOPER_KINDS)
        if trusted:
            developer = f"iif({kind} IN ({kinds}), {developer}, merge_identity(d.developer))"
        # A table whose merged copies carry a source-qualified key: the record names the
        # copy this source's rows have here.
        qualified = ", ".join(f"'{DELETABLE[t][0]}'" for t, o in OWNED_TABLES.items() if o[3])
        k1 = f"iif(d.kind IN ({qualified}), {_qualified_key('d.k1')}, d.k1)"
        conn.execute(
            "INSERT INTO main.deletions (kind, developer, k1, k2, deleted_at)"
            f" SELECT {kind}, {developer}, {k1}, d.k2,"
            f" d.deleted_at FROM src.deletions d WHERE {developer} IS NOT NULL"
            " ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at"
            " WHERE julianday(excluded.deleted_at) > julianday(deletions.deleted_at)",
            params,
        )
    for table, n in _apply_deletions(conn).items():
        removed[table] = removed.get(table, 0) + n
    return removed


def _tombstoned(key, developer):
    """SQL true when a merged source's tombstone keeps out the event with ``key`` of
    ``developer`` (its own tombstone, or a trusted team database's for everyone)."""
    return (
        "EXISTS (SELECT 1 FROM main.developer_tombstones t WHERE t.event_key = "
        f"{key} AND t.developer IN ('', {developer}))"
    )


def _tombstoned_rows(table):
    """SQL for the rowids of ``table`` that merged sources' tombstones remove."""
    return (
        f"SELECT e.rowid FROM main.developer_tombstones t JOIN main.{table} e"
        " ON e.event_key = t.event_key AND t.developer IN ('', e.developer)"
    )


def _apply_deletions(conn):
    """Remove the rows this database's deletion records cover (and the free text of the
    preferences whose text was erased). Returns how many rows went or lost their text, per
    table. Each kind is read from its records to the rows, through the rows' key index."""
    present = {r[0] for r in conn.execute("SELECT DISTINCT kind FROM main.deletions")}
    removed = {}
    for table, (kind, keys, time, text_kind) in DELETABLE.items():
        key_sql = (
            [_OWN_CALIBRATION_KEY] if table == "calibrations" else [f'{table}."{k}"' for k in keys]
        )
        if kind in present:
            covered = f"rowid IN ({_covered_rows(table, kind, key_sql, time)})"
            if table == "calibrations":
                # A calibration something here still points at (a pin, its history) stays;
                # the pacing decisions that used it keep their threshold.
                covered += (
                    " AND id NOT IN (SELECT calibration_id FROM main.calibration_pins)"
                    " AND id NOT IN (SELECT calibration_id FROM main.calibration_events"
                    " WHERE calibration_id IS NOT NULL UNION SELECT previous_id FROM"
                    " main.calibration_events WHERE previous_id IS NOT NULL)"
                )
                conn.execute(
                    "UPDATE main.findings SET calibration_id = NULL WHERE"
                    f" calibration_id IN (SELECT id FROM main.calibrations WHERE {covered})"
                )
            n = conn.execute(f"DELETE FROM main.{table} WHERE {covered}").rowcount
            if n:
                removed[table] = n
        if text_kind and text_kind in present:
            n = conn.execute(
                f"UPDATE main.{table} SET free_text = NULL WHERE free_text IS NOT NULL AND rowid IN"
                f" ({_covered_rows(table, text_kind, key_sql, time)})"
            ).rowcount
            if n:
                removed[table] = removed.get(table, 0) + n
    return removed


def _covered_rows(table, kind, key_sql, time):
    """SQL for the rowids of ``table`` that records of ``kind`` cover."""
    match = [f"d.k1 = {key_sql[0]}", f"d.k2 = {key_sql[1]}" if len(key_sql) > 1 else "d.k2 = ''"]
    match.append(
        f"d.developer = {table}.developer"
        if kind in _DEVELOPER_KINDS
        else f"d.developer IN ('', {table}.developer)"
    )
    return (
        f"SELECT {table}.rowid FROM main.deletions d JOIN main.{table} ON"
        f" {' AND '.join(match)} WHERE d.kind = '{kind}' AND"
        f" coalesce(julianday({table}.{time}) > julianday(d.deleted_at), 0) = 0"
    )


def _copy_keyed(conn, table, params):
    """Copy one keyed table; returns {"source": rows there, "added": new rows here}."""
    src_cols = _columns(conn, "src", table)
    dst_cols = _columns(conn, "main", table)
    common = [c for c in src_cols if c in dst_cols and c not in _OWN_COLUMNS]
    names = common + ["developer", "merged_from"]
    values = [f's."{c}"' for c in common]
    trusted = params["trusted"]
    dev = _developer_expr(src_cols, trusted)
    values += [
        dev,
        # A row that was itself merged into the source keeps its first provenance
        # only in the source; here it comes from this source.
        ":source",
    ]
    if table == "calibrations":
        names.append("merge_key")
        key = (
            "coalesce(s.merge_key, :dbid || ':' || s.id)"
            if "merge_key" in src_cols
            else ":dbid || ':' || s.id"
        )
        values.append(key)
        if "synthetic" not in src_cols:
            # A source from before calibrations were marked synthetic: as the migration that
            # added the mark did, a fit that was allowed simulated findings is taken as
            # simulated, so it never ranks real findings here.
            names.append("synthetic")
            values.append(
                "coalesce(s.include_synthetic, 0)" if "include_synthetic" in src_cols else "0"
            )
    if table == "findings":
        names += ["answer_event_id", "calibration_id"]
        values += [
            (
                "(SELECT m.id FROM main.question_log m WHERE m.event_key ="
                " (SELECT e.event_key FROM src.question_log e WHERE e.id = s.answer_event_id)"
                f" AND m.developer IS {dev})"
            ),
            # A finding links its own developer's rows only, never a squatter's copy.
            f"(SELECT c.id FROM main.calibrations c WHERE c.developer IS {dev} AND c.merge_key = "
            + (
                "(SELECT coalesce(k.merge_key, :dbid || ':' || k.id) FROM src.calibrations k"
                " WHERE k.id = s.calibration_id)"
                if "merge_key" in src_cols
                else ":dbid || ':' || s.calibration_id"
            )
            + ")",
        ]
    refused = _refused(src_cols, trusted)
    where = f" WHERE NOT {refused}"
    if table in DELETABLE:
        _, keys, time, _ = DELETABLE[table]
        key_sql = (
            [values[names.index("merge_key")]]
            if table == "calibrations"
            else [f's."{k}"' for k in keys]
        )
        where += f" AND NOT {_deleted(table, key_sql, f's.{time}', dev)}"
    else:
        where += f" AND NOT {_tombstoned('s.event_key', dev)}"
    total, refused = conn.execute(
        f"SELECT count(*), coalesce(sum({refused}), 0) FROM src.{table} AS s", params
    ).fetchone()
    quoted = ", ".join(f'"{n}"' for n in names)
    sql = (
        f"INSERT OR IGNORE INTO main.{table} ({quoted})"
        f" SELECT {', '.join(values)} FROM src.{table} AS s{where} ORDER BY s.id"
    )
    added = conn.execute(sql, params).rowcount
    counts = {"source": total, "added": added, "refused": refused}
    if table in _EVENT_TABLES:
        won, contested = _contest_keys(conn, table, params, where, dev, sql)
        counts["added"] += won
        if won:
            counts["replaced"] = won
    else:
        if table == "calibrations":
            key = {"merge_key": values[names.index("merge_key")]}
        else:
            key = {"session_id": 's."session_id"', "finding_id": 's."finding_id"'}
        contested = _held_by_another(conn, table, params, where, dev, key)
    if contested:
        counts["contested"] = contested
    return counts


def _held_by_another(conn, table, params, where, dev, key):
    """How many source rows (merged otherwise) have a key another developer's row holds
    here: never merged silently, they are counted and reported."""
    match = " AND ".join(f'm."{c}" = {k}' for c, k in key.items())
    return conn.execute(
        f"SELECT count(*) FROM src.{table} AS s{where} AND EXISTS (SELECT 1 FROM"
        f" main.{table} m WHERE {match} AND m.developer IS NOT {dev})",
        params,
    ).fetchone()[0]


# Tables whose rows are keyed by a hash of the event they record.
_EVENT_TABLES = ("question_log", "preference_events")


def _contest_keys(conn, table, params, where, dev, insert_sql):
    """Source events whose key a row of another developer already holds here (a squat:
    someone merged first a copy of these events under their own name). A held copy whose
    content does not hash to its key is forged: it is replaced by the source's row when
    that one's does. Returns (rows replaced, rows still contested): a contested row is
    never merged silently, it is counted and reported."""
    checked = all("raw_json" in _columns(conn, d, table) for d in ("src", "main"))
    content = ", {0}.project, {0}.raw_json" if checked else ", NULL, NULL"
    pairs = conn.execute(
        f"SELECT s.id, m.id, s.event_key{content.format('s')}{content.format('m')}"
        f" FROM src.{table} AS s JOIN main.{table} m ON m.event_key = s.event_key"
        f"{where} AND m.developer IS NOT {dev}",
        params,
    ).fetchall()
    won = 0
    one = insert_sql.replace(" ORDER BY s.id", " AND s.id = :one")
    for source_id, held_id, key, *content in pairs:
        if not _genuine(key, *content[:2]) or _genuine(key, *content[2:]):
            continue
        if table == "question_log":
            conn.execute(
                "UPDATE main.findings SET answer_event_id = NULL WHERE answer_event_id = ?",
                (held_id,),
            )
        conn.execute(f"DELETE FROM main.{table} WHERE id = ?", (held_id,))
        won += conn.execute(one, {**params, "one": source_id}).rowcount
    return won, len(pairs) - won


def _genuine(key, project, raw_json):
    """True when ``key`` is the hash of the event ``raw_json`` records in ``project``."""
    from toolkit.core import questions
    from toolkit.store import json_lite

    try:
        record = json_lite.loads(raw_json)
        return isinstance(record, dict) and questions.event_key(str(project), record) == key
    except (TypeError, ValueError, RecursionError):
        return False


def _qualified_key(key):
    """SQL for the key of a merged copy whose own key hashes its content."""
    return f"'merged:' || :source || ':' || {key}"


def _copy_owned(conn, table, params, records):
    """Copy one table keyed by its own unique column: new rows added unless deleted here;
    rows that change in the source (a proposal applied, a trace run completed) updated,
    but only the copies this source wrote; for a source without deletion ``records``, rows
    it no longer holds removed from its copies."""
    key, mutable, deletable, by_content = OWNED_TABLES[table]
    src_cols = _columns(conn, "src", table)
    dst_cols = _columns(conn, "main", table)
    common = [c for c in src_cols if c in dst_cols and c not in _OWN_COLUMNS or c == key]
    names = common + ["developer", "merged_from"]
    # The key of a row's merged copy.
    copy_key = _qualified_key(f's."{key}"') if by_content else f's."{key}"'
    values = [copy_key if c == key else f's."{c}"' for c in common]
    dev = _developer_expr(src_cols, params["trusted"])
    refused = _refused(src_cols, params["trusted"])
    values += [dev, ":source"]
    quoted = ", ".join(f'"{n}"' for n in names)
    total, refused_n = conn.execute(
        f"SELECT count(*), coalesce(sum({refused}), 0) FROM src.{table} AS s", params
    ).fetchone()
    removed = 0
    if deletable and not records:
        removed = conn.execute(
            f"DELETE FROM main.{table} WHERE merged_from = :source AND {_own_copy(params)}"
            f' AND NOT EXISTS (SELECT 1 FROM src.{table} s WHERE {copy_key} = main.{table}."{key}")',
            params,
        ).rowcount
    before = conn.execute(f"SELECT count(*) FROM main.{table}").fetchone()[0]
    _, _, time, _ = DELETABLE[table]
    covered = _deleted(table, [copy_key], f"s.{time}", dev)
    sql = (
        f"INSERT INTO main.{table} ({quoted}) SELECT {', '.join(values)}"
        f' FROM src.{table} AS s WHERE NOT {refused} AND NOT {covered} ORDER BY s."{key}"'
        f' ON CONFLICT ("{key}")'
    )
    if mutable:
        changing = [n for n in names if n not in (key, "merged_from")]
        sql += (
            " DO UPDATE SET "
            + ", ".join(f'"{n}" = excluded."{n}"' for n in changing)
            + f" WHERE {table}.merged_from IS excluded.merged_from"
            + f" AND {table}.developer IS excluded.developer AND ("
            + " OR ".join(f'{table}."{n}" IS NOT excluded."{n}"' for n in changing)
            + ")"
        )
    else:
        sql += " DO NOTHING"
    changed = conn.execute(sql, params).rowcount
    added = conn.execute(f"SELECT count(*) FROM main.{table}").fetchone()[0] - before
    where = f" WHERE NOT {refused} AND NOT {covered}"
    contested = _held_by_another(conn, table, params, where, dev, {key: copy_key})
    return {
        "source": total,
        "added": added,
        "updated": changed - added,
        "removed": removed,
        "refused": refused_n,
        "contested": contested,
    }


def _own_copy(params):
    """SQL true for a merged copy the source speaks for: its developer's (any, for a
    trusted team database). A source's database id is only its claim: another database
    claiming it removes or changes nothing of anyone else's."""
    return "true" if params["trusted"] else "developer = :owner"


def _copy_snapshot(conn, table, params, records):
    """A source's per-developer rows (preferences, declared profile) as a snapshot per
    developer: added unless deleted here, updated when newer, and (for a source without
    deletion ``records``) removed when the source no longer holds them."""
    team_table, keys, cols = SNAPSHOTS[table]
    time = DELETABLE[team_table][2]
    src_cols = _columns(conn, "src", table)
    trusted = params["trusted"]
    dev = _developer_expr(src_cols, trusted)
    refused = [_refused(src_cols, trusted)]
    select = (
        f"SELECT {dev} AS developer, "
        + ", ".join(f"s.{c}" for c in keys)
        + ", "
        + ", ".join(
            f"s.{c}" if c in src_cols else f"{_SNAPSHOT_DEFAULTS.get(c, 'NULL')} AS {c}"
            for c in cols
        )
        + f" FROM src.{table} s WHERE NOT {refused[0]}"
    )
    selects = [select]
    counted = [f"SELECT count(*) AS n, coalesce(sum({refused[0]}), 0) AS r FROM src.{table} s"]
    if conn.execute("SELECT 1 FROM src.sqlite_master WHERE name = ?", (team_table,)).fetchone():
        # A team database merged into another: its developers' rows come along (trusted;
        # otherwise only the source's own developer's).
        refused.append(_refused(["developer"], trusted, "d"))
        selects.append(
            "SELECT "
            + _developer_expr(["developer"], trusted, "d")
            + ", "
            + ", ".join(f"d.{c}" for c in keys + cols)
            + f" FROM src.{team_table} d WHERE NOT {refused[1]}"
        )
        counted.append(f"SELECT count(*), coalesce(sum({refused[1]}), 0) FROM src.{team_table} d")
    conn.execute("CREATE TEMP TABLE merge_snapshot AS " + " UNION ALL ".join(selects), params)
    match = " AND ".join(f"p.{c} = {team_table}.{c}" for c in ("developer",) + keys)
    try:
        total, refused_n = conn.execute(
            f"SELECT sum(n), sum(r) FROM ({' UNION ALL '.join(counted)})", params
        ).fetchone()
        removed = 0
        if not records:
            removed = conn.execute(
                f"DELETE FROM {team_table} WHERE merged_from = :source AND {_own_copy(params)}"
                f" AND NOT EXISTS (SELECT 1 FROM temp.merge_snapshot p WHERE {match})",
                params,
            ).rowcount
        before = conn.execute(f"SELECT count(*) FROM {team_table}").fetchone()[0]
        names = ("developer",) + keys + cols
        covered = _deleted(team_table, [f"s.{k}" for k in keys], f"s.{time}", "s.developer")
        # Newer wins (an older backup never undoes a change); at the same time, the source's.
        newer = (
            f"julianday(excluded.{time}) > julianday({team_table}.{time})"
            f" OR (excluded.{time} IS {team_table}.{time} AND ("
            + " OR ".join(f"{team_table}.{c} IS NOT excluded.{c}" for c in cols)
            + "))"
        )
        changed = conn.execute(
            f"INSERT INTO {team_table} ({', '.join(names)}, merged_from)"
            f" SELECT {', '.join(names)}, :source FROM temp.merge_snapshot s WHERE NOT {covered}"
            f" ON CONFLICT ({', '.join(('developer',) + keys)}) DO UPDATE SET "
            + ", ".join(f"{c} = excluded.{c}" for c in cols + ("merged_from",))
            + f" WHERE {newer}",
            params,
        ).rowcount
        added = conn.execute(f"SELECT count(*) FROM {team_table}").fetchone()[0] - before
    finally:
        conn.execute("DROP TABLE temp.merge_snapshot")
    return {
        "source": total,
        "added": added,
        "updated": changed - added,
        "removed": removed,
        "refused": refused_n,
    }
