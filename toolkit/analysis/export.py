"""Export the database as team datasets: Parquet (or CSV, JSONL) files, hive-partitioned.

Five datasets, one folder each under the export directory::

    question_events/  findings/  pacing_decisions/  calibrations/  profile_signals/
        project=<slug>/month=<YYYY-MM>/part-<run>.parquet
        _schema.json        the columns, their types and what they mean
    manifest.json          what was written: per partition its rows, fingerprint and files

The partition columns (project, month) live in the folder names, not in the files, as
hive-partitioned readers (DuckDB, Spark, pyarrow) expect.

Incremental: a rerun reads the manifest and the database's per-partition counts. A
partition whose old rows are unchanged gets one new file holding only its new rows; a
partition whose old rows changed (a flip, a deletion, a new answer) is rewritten whole; an
unchanged partition is not touched. Readers take the file list from the manifest, so a
run killed halfway leaves the dataset as the previous run described it (its leftover files
are removed by the next run).

Deterministic: rows are written in (project, time, id) order in fixed-size batches, file
names come from the run number and nothing records the wall clock, so the same database
exported into an empty folder always gives the same bytes. Memory stays bounded: rows are
streamed from SQLite in batches and at most one file is open at a time.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from urllib.parse import quote

from toolkit.core import identity

FORMATS = ("parquet", "csv", "jsonl")
MANIFEST = "manifest.json"
SCHEMA_FILE = "_schema.json"
MANIFEST_VERSION = 1
BATCH_ROWS = 50_000
PARTITION_COLUMNS = ("project", "month")
_PART_RE = re.compile(r"^(\.)?part-\d{5}\.(parquet|csv|jsonl)(\.tmp)?$")


def _iso(col):
    """True when an ISO time column starts with a year and month."""
    return f"coalesce({col}, '') GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]*'"


def _month(col):
    """The partition month of an ISO time column: YYYY-MM, or 'unknown'."""
    return f"CASE WHEN {_iso(col)} THEN substr({col}, 1, 7) ELSE 'unknown' END"


class ExportError(Exception):
    """An export that cannot go ahead, explained in one line."""


class Dataset:
    """One exported dataset: its SQL (``_id``, ``_project``, ``_month`` first, then the
    columns), the column types and descriptions, and the per-partition fingerprint of rows
    that can change after they are written."""

    def __init__(self, name, description, sql, columns, order, fingerprint="''"):
        self.name, self.description, self.sql = name, description, sql
        # The time column the month is cut from: the second column of the order.
        self.time = order.split(", ")[1]
        self.columns = columns  # [(name, type, description)]
        # Row order inside a partition: project first, then the time the month is cut from,
        # then a unique tail, so an index on (project, time) streams rows with no sort.
        self.order = order
        self.fingerprint = fingerprint


# Column types: string, int64, float64 (the same names in _schema.json).
S, I, F = "string", "int64", "float64"

DATASETS = [
    Dataset(
        "question_events",
        "One row per question asked or auto-decided (the question log, without free text or"
        " raw JSON).",
        "SELECT q.id AS _id, q.project AS _project, " + _month("q.ts") + " AS _month,"
        " q.event_key, q.developer, q.ts, q.skill, q.question_id, q.question_summary,"
        " q.category, coalesce(q.door_class, q.door_type, r.door_type) AS door,"
        " q.door_class, q.door_type, q.options_count, q.user_choice, q.recommended,"
        " q.followed_recommendation, q.session_id, q.source, q.question_index, q.phase,"
        " q.synthetic, q.recorded_at"
        " FROM question_log q LEFT JOIN registry_questions r ON r.id = q.question_id",
        [
            ("event_key", S, "deterministic key of the event (same in every database)"),
            ("developer", S, "whose event (or its salted pseudonym)"),
            ("ts", S, "when it was asked, UTC ISO-8601"),
            ("skill", S, "the skill that asked"),
            ("question_id", S, "registered, ad-hoc or hook question id"),
            ("question_summary", S, "the question as shown"),
            ("category", S, "approval, clarification, routing, cherry-pick or feedback-loop"),
            (
                "door",
                S,
                "one-way or two-way: plantune's class, else the caller's, else the registry's",
            ),
            ("door_class", S, "plantune's door classification when recorded"),
            ("door_type", S, "the door type the caller gave"),
            ("options_count", I, "number of options offered"),
            ("user_choice", S, "the answer"),
            ("recommended", S, "the recommended option"),
            ("followed_recommendation", I, "1 followed, 0 overrode, empty unknown"),
            ("session_id", S, "agent session"),
            ("source", S, "who wrote it: agent, hook, auto-decided, flip, ..."),
            ("question_index", I, "position inside a multi-question call"),
            ("phase", S, "review phase: ceo, design, eng, dx, other, unknown"),
            ("synthetic", I, "1 for simulated history"),
            ("recorded_at", S, "when plantune stored it"),
        ],
        order="q.project, q.ts, q.id",
    ),
    Dataset(
        "findings",
        "One row per finding a review phase ranked, with its scores and decision.",
        "SELECT f.id AS _id, f.project AS _project, " + _month("f.created_at") + " AS _month,"
        " f.developer, f.session_id, f.chain_id, f.phase, f.finding_id, f.question_id, f.skill,"
        " f.summary, f.kind, f.door_type, f.door_reason, f.severity, f.irreversibility,"
        " f.decision_matters, f.score, f.threshold, f.disposition, f.surface_reason,"
        " f.recommended, f.choice,"
        " (SELECT q.event_key FROM question_log q WHERE q.id = f.answer_event_id)"
        " AS answer_event_key, f.flipped_at, f.synthetic, f.created_at, f.updated_at"
        " FROM findings f",
        [
            ("developer", S, "whose finding (or its salted pseudonym)"),
            ("session_id", S, "agent session"),
            ("chain_id", S, "review chain"),
            ("phase", S, "review phase"),
            ("finding_id", S, "the finding's id"),
            ("question_id", S, "question id its answers are logged under"),
            ("skill", S, "skill of its events"),
            ("summary", S, "what was found"),
            ("kind", S, "finding, approval or migration"),
            ("door_type", S, "one-way or two-way"),
            ("door_reason", S, "why that door type"),
            ("severity", I, "0-2"),
            ("irreversibility", I, "0-2"),
            ("decision_matters", I, "0-2"),
            ("score", F, "ranking score"),
            ("threshold", F, "threshold in force"),
            ("disposition", S, "surfaced or silent"),
            ("surface_reason", S, "one-way, gate, rank or flip"),
            ("recommended", S, "recommended choice"),
            ("choice", S, "choice recorded"),
            ("answer_event_key", S, "event_key of the answering question event"),
            ("flipped_at", S, "when a silent decision was flipped"),
            ("synthetic", I, "1 for simulated history"),
            ("created_at", S, "when ranked"),
            ("updated_at", S, "last change"),
        ],
        order="f.project, f.created_at, f.id",
        fingerprint="max(updated_at) || '|' || count(flipped_at)",
    ),
    Dataset(
        "pacing_decisions",
        "Every pacing decision with the answer in force (the pacing_decisions view).",
        "SELECT p.id AS _id, p.project AS _project, " + _month("p.created_at") + " AS _month,"
        " f.developer, p.session_id, p.chain_id, p.phase, p.finding_id, p.question_id, p.kind,"
        " p.door_type, p.score, p.threshold, p.disposition, p.surface_reason, p.recommended,"
        " p.choice, p.flipped, p.created_at, p.answer_source, p.answer_choice, p.answered_at,"
        " p.choice_in_force, f.synthetic, f.updated_at, p.answer_event_id AS _answer"
        " FROM pacing_decisions p JOIN findings f ON f.id = p.id",
        [
            ("developer", S, "whose decision (or its salted pseudonym)"),
            ("session_id", S, "agent session"),
            ("chain_id", S, "review chain"),
            ("phase", S, "review phase"),
            ("finding_id", S, "the finding's id"),
            ("question_id", S, "question id"),
            ("kind", S, "finding, approval or migration"),
            ("door_type", S, "one-way or two-way"),
            ("score", F, "ranking score"),
            ("threshold", F, "threshold in force"),
            ("disposition", S, "surfaced or silent"),
            ("surface_reason", S, "one-way, gate, rank or flip"),
            ("recommended", S, "recommended choice"),
            ("choice", S, "choice recorded"),
            ("flipped", I, "1 when flipped"),
            ("created_at", S, "when ranked"),
            ("answer_source", S, "source of the answering event"),
            ("answer_choice", S, "the answer given"),
            ("answered_at", S, "when answered"),
            ("choice_in_force", S, "what the agent acts on"),
            ("synthetic", I, "1 for simulated history"),
            ("updated_at", S, "last change"),
        ],
        order="p.project, p.created_at, p.id",
        fingerprint="max(updated_at) || '|' || coalesce(max(_answer), '') || '|' || count(_answer)",
    ),
    Dataset(
        "calibrations",
        "Every fitted surfacing threshold.",
        "SELECT c.id AS _id, c.project AS _project, " + _month("c.created_at") + " AS _month,"
        " c.developer, c.created_at, c.target, c.threshold, c.tie_fraction, c.score_function,"
        " c.weights_json, c.achieved_rate, c.ci_low, c.ci_high, c.n_findings, c.n_sessions,"
        " c.override_recall, c.window_start, c.window_end, c.include_synthetic"
        " FROM calibrations c",
        [
            ("developer", S, "who fitted it (or its salted pseudonym)"),
            ("created_at", S, "when fitted"),
            ("target", F, "target surfacing rate"),
            ("threshold", F, "fitted threshold"),
            ("tie_fraction", F, "share of tied scores surfaced"),
            ("score_function", S, "scoring function"),
            ("weights_json", S, "its weights"),
            ("achieved_rate", F, "rate achieved on the fit data"),
            ("ci_low", F, "bootstrap interval, low"),
            ("ci_high", F, "bootstrap interval, high"),
            ("n_findings", I, "findings fitted on"),
            ("n_sessions", I, "sessions fitted on"),
            ("override_recall", F, "overrides caught"),
            ("window_start", S, "fit window start"),
            ("window_end", S, "fit window end"),
            ("include_synthetic", I, "1 if simulated rows used"),
        ],
        order="c.project, c.created_at, c.id",
    ),
    Dataset(
        "profile_signals",
        "Every question event that moved a profile dimension, with its delta"
        " (the dimension_trace view).",
        "SELECT d.event_id AS _id, d.project AS _project, " + _month("d.ts") + " AS _month,"
        " q.event_key, q.developer, d.ts, d.skill, d.question_id, d.user_choice, d.source,"
        " d.signal_key, d.dimension, d.delta, d.synthetic"
        " FROM dimension_trace d JOIN question_log q ON q.id = d.event_id",
        [
            ("event_key", S, "the question event"),
            ("developer", S, "whose signal (or pseudonym)"),
            ("ts", S, "when"),
            ("skill", S, "skill"),
            ("question_id", S, "question id"),
            ("user_choice", S, "the answer"),
            ("source", S, "event source"),
            ("signal_key", S, "registry signal key"),
            ("dimension", S, "profile dimension"),
            ("delta", F, "how far the answer moves it"),
            ("synthetic", I, "1 for simulated"),
        ],
        order="d.project, d.ts, d.event_id, d.dimension",
        fingerprint="printf('%.9f', total(delta)) || '|' || count(*)",
    ),
]
BY_NAME = {d.name: d for d in DATASETS}


def _streams(conn, ds, watermark, rewrite_projects):
    """Cursors giving the rows to write, grouped by partition: the rows with a proper month
    in the dataset's order (the time orders the months), then the 'unknown' month's rows
    (their times sort anywhere). A first export reads everything, so no filter gets in the
    way of the (project, time) index that gives the order without a sort."""
    cond, params = "", []
    if watermark or rewrite_projects:
        cond = " AND (_id > ? OR _project IN (SELECT value FROM json_each(?)))"
        params = [watermark, json.dumps(sorted(rewrite_projects))]
    iso = _iso(ds.time)
    yield conn.execute(f"{ds.sql} WHERE {iso}{cond} ORDER BY {ds.order}", params)
    yield conn.execute(f"{ds.sql} WHERE NOT ({iso}){cond} ORDER BY {ds.order}", params)


def partition_dir(project, month):
    return f"project={quote(project, safe='')}/month={quote(month, safe='')}"


# ---------------------------------------------------------------- writers


class _ParquetFile:
    ext = "parquet"

    def __init__(self, path, ds):
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.pa = pa
        types = {S: pa.string(), I: pa.int64(), F: pa.float64()}
        self.schema = pa.schema([(n, types[t]) for n, t, _ in ds.columns])
        self.writer = pq.ParquetWriter(path, self.schema, compression="zstd")

    def write(self, columns):
        arrays = [self.pa.array(col, type=f.type) for col, f in zip(columns, self.schema)]
        self.writer.write_batch(self.pa.RecordBatch.from_arrays(arrays, schema=self.schema))

    def close(self):
        self.writer.close()


class _CsvFile:
    ext = "csv"

    def __init__(self, path, ds):
        self.fh = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed by close()
        self.out = csv.writer(self.fh, lineterminator="\n")
        self.out.writerow([n for n, _, _ in ds.columns])

    def write(self, columns):
        self.out.writerows(zip(*columns))

    def close(self):
        self.fh.close()


class _JsonlFile:
    ext = "jsonl"

    def __init__(self, path, ds):
        self.fh = open(path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 - see above
        self.names = [n for n, _, _ in ds.columns]

    def write(self, columns):
        buf = io.StringIO()
        for row in zip(*columns):
            buf.write(
                json.dumps(dict(zip(self.names, row)), ensure_ascii=False, separators=(",", ":"))
            )
            buf.write("\n")
        self.fh.write(buf.getvalue())

    def close(self):
        self.fh.close()


WRITERS = {"parquet": _ParquetFile, "csv": _CsvFile, "jsonl": _JsonlFile}


# ---------------------------------------------------------------- manifest


def _salt_check(salt):
    return identity.pseudonym("plantune-salt-check", salt) if salt else None


def read_manifest(directory):
    path = os.path.join(directory, MANIFEST)
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ExportError(f"{path} cannot be read ({e}); export into a new folder") from None
    if not isinstance(manifest, dict) or manifest.get("version") != MANIFEST_VERSION:
        raise ExportError(f"{path} is not a plantune export manifest; export into a new folder")
    return manifest


def _write_json_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def manifest_files(directory, dataset, manifest=None):
    """[(absolute file path, project, month)] of one dataset, as the manifest lists them."""
    manifest = manifest if manifest is not None else read_manifest(directory)
    if manifest is None:
        raise ExportError(
            f"{directory} holds no plantune export (no {MANIFEST}); run `plantune export` first"
        )
    out = []
    parts = manifest["datasets"].get(dataset, {}).get("partitions", {})
    for key in sorted(parts):
        p = parts[key]
        for name in p["files"]:
            out.append((os.path.join(directory, dataset, key, name), p["project"], p["month"]))
    return out


# ---------------------------------------------------------------- export


def _check_manifest(manifest, fmt, database_id, salt, directory):
    if manifest["format"] != fmt:
        raise ExportError(
            f"{directory} holds a {manifest['format']} export; export {fmt} into another folder"
        )
    if manifest.get("database_id") != database_id:
        raise ExportError(
            f"{directory} was exported from another database; export into another folder"
        )
    if manifest.get("salt_check") != _salt_check(salt):
        said = "with --pseudonymise" if manifest.get("salt_check") else "without --pseudonymise"
        raise ExportError(
            f"{directory} was exported {said} (or with another salt);"
            " rerun it the same way or export into another folder"
        )


def _remove_leftovers(directory, manifest):
    """Delete part files a killed run left that the manifest does not list."""
    listed = set()
    if manifest:
        for name, info in manifest["datasets"].items():
            for key, p in info["partitions"].items():
                listed.update(os.path.join(directory, name, key, f) for f in p["files"])
    for ds in DATASETS:
        root = os.path.join(directory, ds.name)
        for dirpath, _, files in os.walk(root):
            for f in files:
                path = os.path.join(dirpath, f)
                if _PART_RE.match(f) and path not in listed:
                    os.unlink(path)


def _partition_stats(conn, ds, watermark):
    """{(project, month): (rows now, their fingerprint, rows with id <= watermark, the
    fingerprint of those, the highest id)}: one grouped pass, and a second only for datasets whose rows can
    change after they were written."""
    stats = {}
    for project, month, n, fp, old, top in conn.execute(
        f"SELECT _project, _month, count(*), {ds.fingerprint}, sum(_id <= ?), max(_id)"
        f" FROM ({ds.sql}) GROUP BY 1, 2",
        (watermark,),
    ):
        stats[(project, month)] = [n, fp or "", old, fp or "", top]
    if ds.fingerprint != "''" and watermark:
        for row in stats.values():
            row[3] = ""
        for project, month, fp in conn.execute(
            f"SELECT _project, _month, {ds.fingerprint} FROM ({ds.sql})"
            " WHERE _id <= ? GROUP BY 1, 2",
            (watermark,),
        ):
            stats[(project, month)][3] = fp or ""
    return stats


def export(conn, directory, fmt="parquet", salt=None, datasets=None, progress=None):
    """Export (or bring up to date) the datasets under ``directory``; returns a summary."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
    if salt is not None and not salt:
        raise ExportError("the pseudonymisation salt must not be empty")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise ExportError(f"{directory} exists and is not a folder")
    database_id = conn.execute(
        "SELECT value FROM plantune_meta WHERE key = 'database_id'"
    ).fetchone()[0]
    manifest = read_manifest(directory) if os.path.isdir(directory) else None
    if manifest is None:
        if os.path.isdir(directory) and any(
            n for n in os.listdir(directory) if not n.startswith(".")
        ):
            raise ExportError(
                f"{directory} is not empty and holds no plantune export;"
                " choose an empty or new folder"
            )
        manifest = {
            "version": MANIFEST_VERSION,
            "format": fmt,
            "database_id": database_id,
            "salt_check": _salt_check(salt),
            "runs": 0,
            "datasets": {},
        }
    else:
        _check_manifest(manifest, fmt, database_id, salt, directory)
    os.makedirs(directory, exist_ok=True)
    _remove_leftovers(directory, manifest)
    run = manifest["runs"] + 1
    pseudonyms = {}

    def pseudonym_of(value):
        if value not in pseudonyms:
            pseudonyms[value] = identity.pseudonym(value or "", salt)
        return pseudonyms[value]

    developer_of = pseudonym_of if salt is not None else None

    summary = {"directory": directory, "format": fmt, "run": run, "datasets": {}}
    obsolete = []
    # Reading every dataset inside one read transaction gives one consistent snapshot.
    conn.execute("BEGIN")
    try:
        for ds in DATASETS:
            if datasets and ds.name not in datasets:
                continue
            info = manifest["datasets"].setdefault(ds.name, {"watermark": 0, "partitions": {}})
            done = _export_dataset(conn, directory, fmt, ds, info, run, developer_of, obsolete)
            os.makedirs(os.path.join(directory, ds.name), exist_ok=True)
            _write_json_atomic(os.path.join(directory, ds.name, SCHEMA_FILE), _schema_doc(ds, fmt))
            summary["datasets"][ds.name] = done
            if progress:
                progress(ds.name, done)
    finally:
        conn.execute("COMMIT")
    changed = any(d["files"] or d["removed"] for d in summary["datasets"].values())
    if changed or manifest["runs"] == 0:
        manifest["runs"] = run
    else:
        summary["run"] = manifest["runs"]  # nothing new: the folder is left as it was
    _write_json_atomic(os.path.join(directory, MANIFEST), manifest)
    for path in obsolete:  # replaced by this run's files; the manifest no longer names them
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    for ds_name in summary["datasets"]:
        _prune_empty_dirs(os.path.join(directory, ds_name))
    return summary


def _prune_empty_dirs(root):
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        if dirpath != root and not dirnames and not filenames:
            try:
                os.rmdir(dirpath)
            except OSError:
                pass


def _schema_doc(ds, fmt):
    return {
        "dataset": ds.name,
        "description": ds.description,
        "format": fmt,
        "partitioning": {
            "style": "hive",
            "columns": [
                {"name": "project", "type": S, "description": "project slug (folder project=...)"},
                {
                    "name": "month",
                    "type": S,
                    "description": "YYYY-MM of the row's time, or 'unknown' (folder month=...)",
                },
            ],
        },
        "columns": [{"name": n, "type": t, "description": d} for n, t, d in ds.columns],
    }


def _export_dataset(conn, directory, fmt, ds, info, run, developer_of, obsolete):
    from functools import partial
    from itertools import groupby

    watermark = info["watermark"]
    parts = info["partitions"]
    stats = _partition_stats(conn, ds, watermark)
    append, rewrite = set(), set()
    for key, (now, _, old, old_fp, _) in stats.items():
        prev = parts.get(partition_dir(*key))
        if prev and old == prev["rows"] and old_fp == prev["fingerprint"]:
            if now > old:
                append.add(key)
        elif prev or now:
            # New partitions are "rewritten" from nothing.
            rewrite.add(key)
    gone = [k for k, p in parts.items() if (p["project"], p["month"]) not in stats]
    for pkey in gone:
        obsolete.extend(os.path.join(directory, ds.name, pkey, f) for f in parts.pop(pkey)["files"])
    written = {
        "rows": 0,
        "files": 0,
        "appended": len(append),
        "rewritten": len(rewrite),
        "removed": len(gone),
    }
    names = [n for n, _, _ in ds.columns]
    if append or rewrite:
        # Rows above the watermark, plus every row of the projects holding a partition to
        # rewrite; the loop keeps exactly the rows each partition needs.
        dev = names.index("developer")
        current, out, new_files = None, None, {}

        def keep(r):
            key = (r[1], r[2])
            return key in rewrite or (key in append and r[0] > watermark)

        for cur in _streams(conn, ds, watermark, {p for p, _ in rewrite}):
            col_index = [d[0] for d in cur.description]
            take = [col_index.index(n) for n in names]
            for rows in iter(partial(cur.fetchmany, BATCH_ROWS), []):
                for key, group in groupby(filter(keep, rows), key=lambda r: (r[1], r[2])):
                    chunk = list(group)
                    if key != current:
                        if out is not None:
                            out.close()
                        if key in new_files:  # the order promises one run per partition
                            raise ExportError(f"{ds.name}: rows of {key} came out of order")
                        out = _open_part(directory, fmt, ds, key, run, new_files)
                        current = key
                        written["files"] += 1
                    # One C-level transpose, then the columns the files hold.
                    transposed = list(zip(*chunk))
                    columns = [transposed[j] for j in take]
                    if developer_of is not None:
                        columns[dev] = [developer_of(v) for v in columns[dev]]
                    out.write(columns)
                    written["rows"] += len(chunk)
        if out is not None:
            out.close()
        for key, (tmp, final) in new_files.items():
            os.replace(tmp, final)
            pkey = partition_dir(*key)
            entry = parts.get(pkey)
            if key in rewrite or entry is None:
                if entry is not None:
                    obsolete.extend(
                        os.path.join(directory, ds.name, pkey, f) for f in entry["files"]
                    )
                entry = parts[pkey] = {"project": key[0], "month": key[1], "files": []}
            entry["files"].append(os.path.basename(final))
    for key, (now, fp, _, _, _) in stats.items():
        pkey = partition_dir(*key)
        if pkey in parts:
            parts[pkey]["rows"], parts[pkey]["fingerprint"] = now, fp
    info["watermark"] = max([watermark] + [s[4] for s in stats.values()])
    written["total_rows"] = sum(p["rows"] for p in parts.values())
    return written


def _open_part(directory, fmt, ds, key, run, new_files):
    folder = os.path.join(directory, ds.name, partition_dir(*key))
    os.makedirs(folder, exist_ok=True)
    name = f"part-{run:05d}.{WRITERS[fmt].ext}"
    final = os.path.join(folder, name)
    tmp = os.path.join(folder, f".{name}.tmp")
    new_files[key] = (tmp, final)
    return WRITERS[fmt](tmp, ds)
