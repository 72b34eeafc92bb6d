"""Merge developers' databases into one team database.

Each source is attached read-only and copied with set-based ``INSERT … SELECT`` statements
(one transaction per source, so a failed source leaves nothing behind):

- question events and preference events by their event keys (``INSERT OR IGNORE``: merging
  the same source twice adds nothing);
- calibrations by a merge key (source database id + its row id);
- findings by (session, finding id), with their links re-pointed at the team database's
  copies of the answering event and the calibration;
- preferences into ``developer_preferences``, one row per developer, scope and question: a
  developer's preferences are never folded into anyone else's, nor into the team
  database's own ``preferences``. A preference a source no longer holds is removed from
  that source's merged copy, so a cleared preference never comes back through a merge.

Every merged row keeps its developer and the merge source it came from
(``merge_sources``). A source whose schema has a migration this plantune does not know is
refused before anything is written.
"""

from __future__ import annotations

import os
import sqlite3
from urllib.parse import quote

from toolkit.store import db

# Tables copied by key, in dependency order (findings point at events and calibrations).
KEYED_TABLES = ("question_log", "preference_events", "calibrations", "findings")
# Columns the merge sets itself rather than copying.
_OWN_COLUMNS = {"id", "developer", "merged_from", "merge_key", "answer_event_id", "calibration_id"}


class MergeError(Exception):
    """A source that cannot be merged, explained in one line."""


class Source:
    """A checked source database: path, identity, schema facts."""

    def __init__(self, path, database_id, migrations, unattributed):
        self.path, self.database_id = path, database_id
        self.migrations, self.unattributed = migrations, unattributed


def _open_readonly(path):
    return sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True,
                           timeout=db.BUSY_TIMEOUT_SECONDS, isolation_level=None)


def inspect_source(path, known_migrations, developer=None):
    """Check that ``path`` can be merged; returns a :class:`Source` or raises MergeError."""
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
            names = [r[0] for r in conn.execute(
                f"SELECT name FROM {db.MIGRATIONS_TABLE} ORDER BY name")]
        except sqlite3.DatabaseError:
            raise MergeError(f"{path}: not a plantune database") from None
        unknown = [n for n in names if n not in known_migrations]
        if unknown:
            raise MergeError(
                f"{path}: schema is newer than this plantune or unknown to it (migration"
                f" {unknown[0].removesuffix('.sql')}); upgrade plantune, then merge again")
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
                " name their developer with --developer")
        return Source(path, database_id, names, unattributed)
    except sqlite3.DatabaseError as e:
        raise MergeError(f"{path}: not a plantune database ({e})") from None
    finally:
        conn.close()


def _columns(conn, schema, table):
    return [r[1] for r in conn.execute(f'PRAGMA "{schema}".table_info("{table}")')]


def _developer_expr(src_cols, developer):
    """SQL for a merged row's developer: --developer wins, else the row's own."""
    if developer:
        return ":developer"
    return "s.developer" if "developer" in src_cols else ":developer"


def merge(conn, paths, developer=None, progress=None):
    """Merge every database in ``paths`` into ``conn`` (an open, migrated team database).

    All sources are checked first; one that cannot be merged stops the run before anything
    is written. Returns one dict of counts per source.
    """
    known = db.default_schema().known_names
    own_id = conn.execute("SELECT value FROM plantune_meta WHERE key = 'database_id'").fetchone()
    own_id = own_id[0] if own_id else None
    target = os.path.realpath(conn.execute("PRAGMA database_list").fetchone()[2] or "")
    sources, seen = [], set()
    for path in paths:
        source = inspect_source(path, known, developer)
        if source.database_id == own_id or os.path.realpath(path) == target:
            raise MergeError(f"{path}: is the team database itself")
        if source.database_id in seen:
            raise MergeError(f"{path}: the same database is named twice")
        seen.add(source.database_id)
        sources.append(source)
    results = []
    for source in sources:
        results.append(_merge_one(conn, source, developer))
        if progress:
            progress(results[-1])
    return results


def _merge_one(conn, source, developer):
    now = db.utc_now()
    conn.execute("ATTACH DATABASE ? AS src", (f"file:{quote(os.path.abspath(source.path))}?mode=ro",))
    try:
        with db.transaction(conn):
            source_id = _source_row(conn, source, developer or "", now)
            params = {"developer": developer or "", "source": source_id,
                      "dbid": source.database_id}
            counts = {}
            for table in KEYED_TABLES:
                counts[table] = _copy_keyed(conn, table, params)
            counts["preferences"] = _copy_preferences(conn, params)
            conn.execute("UPDATE merge_sources SET last_merged_at = ?, counts_json = json(?),"
                         " path = ? WHERE id = ?",
                         (now, _json(counts), os.path.abspath(source.path), source_id))
    finally:
        conn.execute("DETACH DATABASE src")
    return {"path": source.path, "database_id": source.database_id, "source_id": source_id,
            "developer": developer or "", "tables": counts}


def _json(value):
    import json

    return json.dumps(value, sort_keys=True)


def _source_row(conn, source, developer, now):
    conn.execute(
        "INSERT INTO merge_sources (database_id, developer, path, first_merged_at, last_merged_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (database_id, developer) DO NOTHING",
        (source.database_id, developer, os.path.abspath(source.path), now, now))
    return conn.execute("SELECT id FROM merge_sources WHERE database_id = ? AND developer = ?",
                        (source.database_id, developer)).fetchone()[0]


def _copy_keyed(conn, table, params):
    """Copy one keyed table; returns {"source": rows there, "added": new rows here}."""
    src_cols = _columns(conn, "src", table)
    dst_cols = _columns(conn, "main", table)
    common = [c for c in src_cols if c in dst_cols and c not in _OWN_COLUMNS]
    names = common + ["developer", "merged_from"]
    values = [f's."{c}"' for c in common]
    values += [_developer_expr(src_cols, params["developer"]),
               # A row that was itself merged into the source keeps its first provenance
               # only in the source; here it comes from this source.
               ":source"]
    if table == "calibrations":
        names.append("merge_key")
        key = "coalesce(s.merge_key, :dbid || ':' || s.id)" if "merge_key" in src_cols \
            else ":dbid || ':' || s.id"
        values.append(key)
        if "synthetic" not in src_cols:
            # A source from before calibrations were marked synthetic: as the migration that
            # added the mark did, a fit that was allowed simulated findings is taken as
            # simulated, so it never ranks real findings here.
            names.append("synthetic")
            values.append("coalesce(s.include_synthetic, 0)" if "include_synthetic" in src_cols
                          else "0")
    if table == "findings":
        names += ["answer_event_id", "calibration_id"]
        values += [
            ("(SELECT m.id FROM main.question_log m WHERE m.event_key ="
             " (SELECT e.event_key FROM src.question_log e WHERE e.id = s.answer_event_id))"),
            "(SELECT c.id FROM main.calibrations c WHERE c.merge_key = "
            + ("(SELECT coalesce(k.merge_key, :dbid || ':' || k.id) FROM src.calibrations k"
               " WHERE k.id = s.calibration_id)" if "merge_key" in src_cols
               else ":dbid || ':' || s.calibration_id") + ")",
        ]
    total = conn.execute(f"SELECT count(*) FROM src.{table}").fetchone()[0]
    quoted = ", ".join(f'"{n}"' for n in names)
    sql = (f"INSERT OR IGNORE INTO main.{table} ({quoted})"
           f' SELECT {", ".join(values)} FROM src.{table} AS s ORDER BY s.id')
    added = conn.execute(sql, params).rowcount
    return {"source": total, "added": added}


def _copy_preferences(conn, params):
    """A source's preferences, as a snapshot per developer: added, updated and removed."""
    src_cols = _columns(conn, "src", "preferences")
    dev = _developer_expr(src_cols, params["developer"])
    cols = ("scope", "question_id", "preference", "raw_value", "source", "free_text",
            "synthetic", "updated_at")
    select = (f"SELECT {dev} AS developer, " + ", ".join(
        f"s.{c}" if c in src_cols else f"NULL AS {c}" for c in cols) + " FROM src.preferences s")
    selects = [select]
    if conn.execute("SELECT 1 FROM src.sqlite_master WHERE name = 'developer_preferences'"
                    ).fetchone():
        # A team database merged into another: its developers' preferences come along.
        selects.append("SELECT " + ("d.developer" if not params["developer"] else ":developer")
                       + ", " + ", ".join(f"d.{c}" for c in cols)
                       + " FROM src.developer_preferences d")
    conn.execute("CREATE TEMP TABLE merge_prefs AS " + " UNION ALL ".join(selects),
                 {"developer": params["developer"]})
    try:
        total = conn.execute("SELECT count(*) FROM temp.merge_prefs").fetchone()[0]
        removed = conn.execute(
            "DELETE FROM developer_preferences WHERE merged_from = :source AND NOT EXISTS"
            " (SELECT 1 FROM temp.merge_prefs p WHERE p.developer = developer_preferences.developer"
            " AND p.scope = developer_preferences.scope"
            " AND p.question_id = developer_preferences.question_id)", params).rowcount
        before = conn.execute("SELECT count(*) FROM developer_preferences").fetchone()[0]
        changed = conn.execute(
            "INSERT INTO developer_preferences (developer, scope, question_id, preference,"
            " raw_value, source, free_text, synthetic, updated_at, merged_from)"
            " SELECT developer, scope, question_id, preference, raw_value,"
            " coalesce(source, 'unknown'), free_text, coalesce(synthetic, 0), updated_at, :source"
            " FROM temp.merge_prefs WHERE true"
            " ON CONFLICT (developer, scope, question_id) DO UPDATE SET"
            " preference = excluded.preference, raw_value = excluded.raw_value,"
            " source = excluded.source, free_text = excluded.free_text,"
            " synthetic = excluded.synthetic, updated_at = excluded.updated_at,"
            " merged_from = excluded.merged_from"
            " WHERE developer_preferences.preference IS NOT excluded.preference"
            " OR developer_preferences.raw_value IS NOT excluded.raw_value"
            " OR developer_preferences.source IS NOT excluded.source"
            " OR developer_preferences.updated_at IS NOT excluded.updated_at", params).rowcount
        added = conn.execute("SELECT count(*) FROM developer_preferences").fetchone()[0] - before
    finally:
        conn.execute("DROP TABLE temp.merge_prefs")
    return {"source": total, "added": added, "updated": changed - added, "removed": removed}
