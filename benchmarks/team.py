"""Team scale on generated events: export, DuckDB report, DuckDB/Spark calibration, numpy fit.

Part one builds a real plantune database of N question events (default 1,000,000) over 8
projects, 20 developers and 12 months, plus one finding per 5 events, the way a bulk
import writes: set-based SQL (one INSERT … SELECT over a recursive counter per chunk of a
million rows), every trigger running except the per-row rollup INSERTs, whose totals
toolkit.store.rollups adds set-based per chunk as ``ingest`` does; the secondary indexes are
built after the rows. The rollups are checked against the rows. Then, each as its own
process so peak memory is its own:

* ``plantune export --format parquet``     time and peak RSS (the export streams batches);
* ``plantune team report``                 DuckDB over the Parquet dataset, against the
                                           same three reports read from the SQLite views
                                           (phase_counts, question_review,
                                           profile_diversity) on the database: a ratio;
* ``plantune team calibrate``              DuckDB, and Spark in local mode (JVM start
                                           included), against the numpy fit on the same
                                           findings loaded from SQLite: ratios;
  all three must give the same threshold and tie fraction (checked).

Part two (``--parquet-events``, default 10,000,000; 0 skips it) generates that many events
straight as a Parquet dataset with DuckDB and runs the report and the fits on them.

``--export-events N [N ...]`` measures only the Parquet export (time, peak RSS) of a
database of each size, built in --dir if missing, to show that memory stays flat.

Run: ``python benchmarks/team.py [--events N] [--parquet-events N] [--dir DIR] [--keep]``;
the export at 1M and 10M events (build the databases first under ``nice``)::

    nice -n 19 python benchmarks/team.py --dir D --events 1000000 --generate-only
    nice -n 19 python benchmarks/team.py --dir D --events 10000000 --generate-only
    python benchmarks/team.py --dir D --export-events 1000000 10000000

The machine is shared: run it when ``uptime`` is low and read the figures as one run's.
"""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

from toolkit.analysis import calibrate
from toolkit.analysis import fit as analysis_fit
from toolkit.core.seeded_db import connect as open_database
from toolkit.store import db, rollups

BIN = os.path.dirname(sys.executable)
PROJECTS = 8
DEVELOPERS = 20
EVENTS_PER_SESSION = 40
EVENTS_PER_FINDING = 5
START = 1735689600  # 2025-01-01T00:00:00Z
SPAN = 365 * 86400

# A cheap deterministic hash of the counter i, for the pseudo-random columns.
H = "((i * 2654435761) % 4294967291)"


EVENTS_SQL = f"""
    WITH RECURSIVE c(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM c WHERE i + 1 < ?)
    INSERT INTO question_log (event_key, project, ts, skill, question_id,
        question_summary, category, door_type, options_count, user_choice, recommended,
        followed_recommendation, session_id, source, phase, door_class, door_reason,
        raw_json, recorded_at, developer)
    SELECT printf('bench-%012d', i),
        'proj-' || ((i / {EVENTS_PER_SESSION}) % {PROJECTS}),
        strftime('%Y-%m-%dT%H:%M:%SZ', {START} + CAST(i * :step AS INTEGER), 'unixepoch'),
        r.skill, r.id, 'Generated question about ' || r.id, r.category, r.door_type, 3,
        CASE WHEN {H} % 100 < 8 THEN 'b' ELSE 'a' END, 'a',
        CASE WHEN {H} % 100 < 8 THEN 0 ELSE 1 END,
        'bs-' || (i / {EVENTS_PER_SESSION}),
        CASE WHEN {H} % 10 < 6 THEN 'auto-decided' ELSE 'agent' END,
        CASE (i / 10) % 4 WHEN 0 THEN 'ceo' WHEN 1 THEN 'design' WHEN 2 THEN 'eng'
            ELSE 'dx' END,
        r.door_type, 'registry', '{{}}', '2026-01-01T00:00:00.000Z',
        'dev' || ((i / {EVENTS_PER_SESSION}) % {DEVELOPERS}) || '@bench.example'
    FROM c JOIN temp.reg r ON r.k = {H} % (SELECT count(*) FROM temp.reg)
"""

FINDINGS_SQL = f"""
    WITH RECURSIVE c(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM c WHERE i + 1 < ?)
    INSERT INTO findings (project, session_id, chain_id, phase, finding_id, summary,
        severity, irreversibility, decision_matters, door_type, door_reason, kind,
        recommended, score, threshold, disposition, surface_reason, choice,
        created_at, updated_at, question_id, developer)
    SELECT 'proj-' || ((i * {EVENTS_PER_FINDING} / {EVENTS_PER_SESSION}) % {PROJECTS}),
        'bs-' || (i * {EVENTS_PER_FINDING} / {EVENTS_PER_SESSION}),
        'bc-' || (i * {EVENTS_PER_FINDING} / {EVENTS_PER_SESSION}),
        CASE (i * {EVENTS_PER_FINDING} / 10) % 4 WHEN 0 THEN 'ceo' WHEN 1 THEN 'design'
            WHEN 2 THEN 'eng' ELSE 'dx' END,
        'bf-' || i, 'Generated finding ' || i,
        {H} % 3, ({H} / 3) % 3, ({H} / 9) % 3,
        CASE WHEN {H} % 20 = 0 THEN 'one-way' ELSE 'two-way' END, 'registry',
        CASE WHEN {H} % 50 = 1 THEN 'approval' ELSE 'finding' END, 'fix',
        {H} % 3 + ({H} / 3) % 3 + ({H} / 9) % 3, 4,
        CASE WHEN {H} % 5 = 0 THEN 'surfaced' ELSE 'silent' END,
        CASE WHEN {H} % 5 = 0 THEN 'rank' END, 'fix',
        strftime('%Y-%m-%dT%H:%M:%SZ',
                 {START} + CAST(i * {EVENTS_PER_FINDING} * :step AS INTEGER), 'unixepoch'),
        '2026-01-01T00:00:00.000Z', 'bf-' || i,
        'dev' || ((i * {EVENTS_PER_FINDING} / {EVENTS_PER_SESSION}) % {DEVELOPERS})
            || '@bench.example'
    FROM c
"""


def generate(path, n, chunk=1_000_000):
    """A real plantune database of N generated events and N/5 findings, written the way a
    bulk import writes: every trigger runs except the rollups' insert triggers, whose totals
    toolkit.store.rollups adds set-based per chunk (one transaction each), exactly as ``ingest``
    does for a large file. The tables' secondary indexes are dropped while the rows go in
    and built again afterwards from their own SQL (one sort per index instead of millions
    of random B-tree inserts), so the finished schema is the migrated one."""
    conn = open_database(path)
    conn.execute("PRAGMA cache_size = -1048576")  # 1 GiB
    conn.execute("PRAGMA temp_store = FILE")
    events, findings = rollups.Bulk(conn), rollups.Bulk(conn, "findings")
    if not (events.ready and findings.ready):
        raise SystemExit("the database does not hold the declared rollups")
    conn.execute(
        "CREATE TEMP TABLE reg AS SELECT row_number() OVER (ORDER BY id) - 1 AS k,"
        " id, skill, category, door_type FROM registry_questions"
    )
    step = SPAN / n
    indexes = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        " AND tbl_name IN ('question_log', 'findings') ORDER BY name"
    ).fetchall()
    with db.transaction(conn):
        for name, _ in indexes:
            conn.execute(f'DROP INDEX "{name}"')
    t0 = time.perf_counter()
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        with db.transaction(conn):
            events.put(EVENTS_SQL.replace(":step", repr(step)), [(lo, hi)])
            events.finish()
        print(f"  events {hi:,}/{n:,} ({time.perf_counter() - t0:.0f} s)", flush=True)
    t1 = time.perf_counter()
    m = n // EVENTS_PER_FINDING
    for lo in range(0, m, chunk):
        hi = min(m, lo + chunk)
        with db.transaction(conn):
            findings.put(FINDINGS_SQL.replace(":step", repr(step)), [(lo, hi)])
            findings.finish()
        print(f"  findings {hi:,}/{m:,} ({time.perf_counter() - t1:.0f} s)", flush=True)
    t2 = time.perf_counter()
    with db.transaction(conn):
        for _, sql in indexes:
            conn.execute(sql)
    t3 = time.perf_counter()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return {
        "events": n,
        "findings": m,
        "events_s": t1 - t0,
        "findings_s": t2 - t1,
        "indexes_s": t3 - t2,
        "indexes": len(indexes),
        "db_bytes": os.path.getsize(path),
    }


def generate_parquet(directory, n):
    """N question events and N/5 findings written straight to a hive-partitioned Parquet
    dataset by DuckDB (same columns as `plantune export`), with a manifest listing them."""
    import duckdb

    from toolkit.analysis import export as exp

    with tempfile.TemporaryDirectory() as tmp:
        conn = open_database(os.path.join(tmp, "registry.db"))
        registry = conn.execute(
            "SELECT id, skill, category, door_type FROM registry_questions ORDER BY id"
        ).fetchall()
        conn.close()
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE reg (k BIGINT, id VARCHAR, skill VARCHAR, category VARCHAR,"
        " door_type VARCHAR)"
    )
    con.executemany(
        "INSERT INTO reg VALUES (?, ?, ?, ?, ?)", [(k,) + tuple(r) for k, r in enumerate(registry)]
    )
    step = SPAN / n
    when = f"to_timestamp({START} + CAST(i * {step} AS BIGINT))"
    t0 = time.perf_counter()
    con.execute(f"""
        COPY (
            SELECT 'proj-' || ((i // {EVENTS_PER_SESSION}) % {PROJECTS}) AS project,
                strftime({when}, '%Y-%m') AS month,
                printf('bench-%012d', i) AS event_key,
                'dev' || ((i // {EVENTS_PER_SESSION}) % {DEVELOPERS}) || '@bench.example'
                    AS developer,
                strftime({when}, '%Y-%m-%dT%H:%M:%SZ') AS ts, r.skill, r.id AS question_id,
                'Generated question about ' || r.id AS question_summary, r.category,
                r.door_type AS door, r.door_type AS door_class, r.door_type,
                3::BIGINT AS options_count,
                CASE WHEN {H} % 100 < 8 THEN 'b' ELSE 'a' END AS user_choice,
                'a' AS recommended,
                CASE WHEN {H} % 100 < 8 THEN 0 ELSE 1 END::BIGINT AS followed_recommendation,
                'bs-' || (i // {EVENTS_PER_SESSION}) AS session_id,
                CASE WHEN {H} % 10 < 6 THEN 'auto-decided' ELSE 'agent' END AS source,
                0::BIGINT AS question_index,
                CASE (i // 10) % 4 WHEN 0 THEN 'ceo' WHEN 1 THEN 'design' WHEN 2 THEN 'eng'
                    ELSE 'dx' END AS phase,
                0::BIGINT AS synthetic, '2026-01-01T00:00:00.000Z' AS recorded_at
            FROM range({n}) t(i) JOIN reg r ON r.k = {H} % {len(registry)}
        ) TO '{directory}/question_events'
        (FORMAT PARQUET, PARTITION_BY (project, month), COMPRESSION zstd)
    """)
    m = n // EVENTS_PER_FINDING
    e = f"(i * {EVENTS_PER_FINDING})"
    fwhen = f"to_timestamp({START} + CAST({e} * {step} AS BIGINT))"
    con.execute(f"""
        COPY (
            SELECT 'proj-' || (({e} // {EVENTS_PER_SESSION}) % {PROJECTS}) AS project,
                strftime({fwhen}, '%Y-%m') AS month,
                'dev' || (({e} // {EVENTS_PER_SESSION}) % {DEVELOPERS}) || '@bench.example'
                    AS developer,
                'bs-' || ({e} // {EVENTS_PER_SESSION}) AS session_id,
                'bc-' || ({e} // {EVENTS_PER_SESSION}) AS chain_id,
                CASE ({e} // 10) % 4 WHEN 0 THEN 'ceo' WHEN 1 THEN 'design' WHEN 2 THEN 'eng'
                    ELSE 'dx' END AS phase,
                'bf-' || i AS finding_id, 'bf-' || i AS question_id, 'pacing' AS skill,
                'Generated finding ' || i AS summary,
                CASE WHEN {H} % 50 = 1 THEN 'approval' ELSE 'finding' END AS kind,
                CASE WHEN {H} % 20 = 0 THEN 'one-way' ELSE 'two-way' END AS door_type,
                'registry' AS door_reason,
                ({H} % 3)::BIGINT AS severity, (({H} // 3) % 3)::BIGINT AS irreversibility,
                (({H} // 9) % 3)::BIGINT AS decision_matters,
                ({H} % 3 + ({H} // 3) % 3 + ({H} // 9) % 3)::DOUBLE AS score,
                4.0 AS threshold,
                CASE WHEN {H} % 5 = 0 THEN 'surfaced' ELSE 'silent' END AS disposition,
                CASE WHEN {H} % 5 = 0 THEN 'rank' END AS surface_reason,
                'fix' AS recommended, 'fix' AS choice, NULL::VARCHAR AS answer_event_key,
                NULL::VARCHAR AS flipped_at, 0::BIGINT AS synthetic,
                strftime({fwhen}, '%Y-%m-%dT%H:%M:%SZ') AS created_at,
                '2026-01-01T00:00:00.000Z' AS updated_at
            FROM range({m}) t(i)
        ) TO '{directory}/findings'
        (FORMAT PARQUET, PARTITION_BY (project, month), COMPRESSION zstd)
    """)
    wall = time.perf_counter() - t0
    manifest = {
        "version": exp.MANIFEST_VERSION,
        "format": "parquet",
        "database_id": "generated",
        "salt_check": None,
        "runs": 1,
        "datasets": {},
    }
    for ds in exp.DATASETS:
        parts = {}
        root = os.path.join(directory, ds.name)
        for dirpath, _, files in os.walk(root):
            files = sorted(f for f in files if f.endswith(".parquet"))
            if files:
                key = os.path.relpath(dirpath, root)
                project, month = (x.split("=", 1)[1] for x in key.split(os.sep))
                parts[key] = {
                    "project": project,
                    "month": month,
                    "files": files,
                    "rows": 0,
                    "fingerprint": "",
                }
        manifest["datasets"][ds.name] = {"watermark": 0, "partitions": parts}
    with open(os.path.join(directory, exp.MANIFEST), "w", encoding="utf-8") as f:
        json.dump(manifest, f)
    return wall, m


def numpy_fit_parquet(directory):
    """The numpy fit on the findings of a Parquet dataset (read with pyarrow)."""
    import pyarrow.dataset as pads

    t0 = time.perf_counter()
    table = pads.dataset(
        os.path.join(directory, "findings"), format="parquet", partitioning="hive"
    ).to_table(
        columns=[
            "finding_id",
            "severity",
            "irreversibility",
            "decision_matters",
            "door_type",
            "kind",
            "synthetic",
        ]
    )
    cols = {c: table.column(c).to_numpy(zero_copy_only=False) for c in table.column_names}
    t1 = time.perf_counter()
    np = calibrate.np
    keep = (
        (cols["door_type"] != "one-way")
        & ~np.isin(cols["kind"], calibrate.GATE_KINDS)
        & (cols["synthetic"] == 0)
    )
    scores = analysis_fit.score_findings(
        cols["severity"][keep], cols["irreversibility"][keep], cols["decision_matters"][keep]
    )
    fit = analysis_fit.fit_threshold(scores, 0.20, ids=cols["finding_id"][keep])
    return t1 - t0, time.perf_counter() - t1, fit


def parquet_run(work, n, master, env):
    """Part two: report and fits on N events generated straight as Parquet."""
    out = os.path.join(work, "generated")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    wall, m = generate_parquet(out, n)
    print(
        f"[parquet] generated {n:,} events and {m:,} findings as Parquet in {wall:.1f} s",
        flush=True,
    )
    plantune = os.path.join(BIN, "plantune")
    report_s, peak, _ = timed_process([plantune, "team", "report", out, "--json"], env)
    print(
        f"[parquet] team report (DuckDB, process incl. start): {report_s:.1f} s,"
        f" peak RSS {peak:.0f} MiB",
        flush=True,
    )
    load_s, fit_s, fit = numpy_fit_parquet(out)
    print(
        f"[parquet] numpy fit: load findings with pyarrow {load_s:.1f} s + fit {fit_s:.2f} s"
        f" (threshold {fit.threshold:g}, tie fraction {fit.tie_fraction:.9f}, n {fit.n:,})",
        flush=True,
    )
    for engine in ("duckdb", "spark"):
        cmd = [plantune, "team", "calibrate", out, "--engine", engine, "--json"]
        if engine == "spark":
            cmd += ["--master", master]
        wall, _, text = timed_process(cmd, env)
        r = json.loads(text)
        same = (r["threshold"], r["tie_fraction"], r["n"]) == (
            fit.threshold,
            fit.tie_fraction,
            fit.n,
        )
        print(
            f"[parquet] team calibrate --engine {engine}: {wall:.1f} s (process incl. start;"
            f" numpy load+fit {load_s + fit_s:.1f} s, ratio {wall / (load_s + fit_s):.2f}x);"
            f" same threshold and tie fraction as numpy: {same}",
            flush=True,
        )
        if not same:
            raise SystemExit(f"{engine} fit differs from numpy: {r} vs {fit}")


def timed_process(args, env=None):
    """Wall time and peak RSS (MiB) of one child process (its own, from wait4); its stdout."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(args, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {stderr.strip()[-2000:]}")
    return wall, usage.ru_maxrss / 1024, stdout


def sqlite_reports(path):
    conn = sqlite3.connect(path)
    t0 = time.perf_counter()
    conn.execute(
        "SELECT phase, count(*), sum(questions), sum(asked), sum(auto_decided),"
        " sum(one_way), sum(findings_surfaced), sum(findings_silent),"
        " sum(budget_spent) FROM phase_counts GROUP BY phase"
    ).fetchall()
    conn.execute("SELECT * FROM question_review").fetchall()
    conn.execute(
        "SELECT category, sum(overridden = 0), sum(overridden = 1)"
        " FROM question_events GROUP BY category"
    ).fetchall()
    conn.execute("SELECT * FROM profile_diversity").fetchall()
    wall = time.perf_counter() - t0
    conn.close()
    return wall


def numpy_fit(path):
    conn = sqlite3.connect(path)
    t0 = time.perf_counter()
    findings = calibrate.load_findings(conn)
    t1 = time.perf_counter()
    two_way = (findings["door_type"] != "one-way") & ~calibrate.np.isin(
        findings["kind"], calibrate.GATE_KINDS
    )
    scores = analysis_fit.score_findings(
        findings["severity"][two_way],
        findings["irreversibility"][two_way],
        findings["decision_matters"][two_way],
    )
    fit = analysis_fit.fit_threshold(scores, 0.20, ids=findings["finding_id"][two_way])
    t2 = time.perf_counter()
    conn.close()
    return t1 - t0, t2 - t1, fit


def check_rollups(path):
    """The rollups hold exactly the generated rows (the bulk path's totals are complete)."""
    conn = sqlite3.connect(path)
    q = conn.execute("SELECT count(*) FROM question_log").fetchone()[0]
    f = conn.execute("SELECT count(*) FROM findings").fetchone()[0]
    got = conn.execute("SELECT total(questions), total(findings) FROM rollup_phase").fetchone()
    days = conn.execute("SELECT total(events) FROM rollup_day").fetchone()[0]
    profile = conn.execute("SELECT total(sample_size) FROM profile_totals").fetchone()[0]
    conn.close()
    if (got[0], got[1], days, profile) != (q, f, q, q):
        raise SystemExit(
            f"rollups out of line: {q} events, {f} findings; rollup_phase {got},"
            f" rollup_day {days}, profile_totals {profile}"
        )


def database(work, n):
    """The generated database of N events in ``work`` (built once, then reused)."""
    path = os.path.join(work, f"events-{n}.db")
    if not os.path.exists(path):
        print(f"building {path} ({n:,} events)", flush=True)
        g = generate(path + ".part", n)
        check_rollups(path + ".part")
        if os.path.exists(path + ".part-wal"):
            raise SystemExit(f"{path}.part was not closed cleanly")
        os.replace(path + ".part", path)
        print(
            f"generated {g['events']:,} events in {g['events_s']:.1f} s and"
            f" {g['findings']:,} findings in {g['findings_s']:.1f} s (rollups added"
            f" set-based per chunk), {g['indexes']} indexes built in {g['indexes_s']:.1f} s"
            f" ({g['db_bytes'] / 2**30:.2f} GiB)",
            flush=True,
        )
    return path


def export_run(work, sizes):
    """`plantune export --format parquet` of each generated database: time, peak RSS."""
    plantune = os.path.join(BIN, "plantune")
    for n in sizes:
        path = database(work, n)
        out = os.path.join(work, f"export-{n}")
        shutil.rmtree(out, ignore_errors=True)
        env = dict(os.environ, PLANTUNE_DB=path, GSTACK_STATE_ROOT=work, HOME=work)
        load = os.getloadavg()[0]
        wall, peak, text = timed_process(
            [plantune, "export", out, "--format", "parquet", "--json"], env
        )
        rows = sum(d["rows"] for d in json.loads(text)["datasets"].values())
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
        print(
            f"[export {n:,} events] {wall:.1f} s, peak RSS {peak:.0f} MiB, {rows:,} rows"
            f" ({rows / wall:,.0f} rows/s), {size / 2**20:.0f} MiB on disk"
            f" (load {load:.2f} before, {os.getloadavg()[0]:.2f} after)",
            flush=True,
        )
        shutil.rmtree(out, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--events",
        type=int,
        default=1_000_000,
        help="Events in the SQLite database that is exported.",
    )
    ap.add_argument("--dir", default=None, help="Work folder (default: a temporary one).")
    ap.add_argument("--keep", action="store_true", help="Keep the database and the export.")
    ap.add_argument("--master", default="local[2]", help="Spark master for the Spark run.")
    ap.add_argument(
        "--generate-only",
        action="store_true",
        help="Build the database in --dir and stop (the runs can follow later).",
    )
    ap.add_argument(
        "--parquet-events",
        type=int,
        default=10_000_000,
        help="Also generate this many events straight as Parquet and run the"
        " report and the fits on them.",
    )
    ap.add_argument(
        "--skip-sqlite", action="store_true", help="Only the Parquet part (with --parquet-events)."
    )
    ap.add_argument(
        "--export-events",
        type=int,
        nargs="+",
        metavar="N",
        help="Only measure `plantune export --format parquet` (time, peak RSS) of"
        " a generated database of each N events (built in --dir if missing;"
        " build it first under `nice` with --generate-only) and stop.",
    )
    args = ap.parse_args()
    work = args.dir or tempfile.mkdtemp(prefix="plantune-team-bench-")
    os.makedirs(work, exist_ok=True)
    if args.export_events:
        print(f"load before: {os.getloadavg()[0]:.2f} (2 cores, shared)", flush=True)
        export_run(work, args.export_events)
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
        return
    if args.generate_only:
        database(work, args.events)
        return
    path = database(work, args.events) if not args.skip_sqlite else None
    out = os.path.join(work, "export")
    env = dict(
        os.environ,
        PLANTUNE_DB=path or os.path.join(work, "plantune.db"),
        GSTACK_STATE_ROOT=work,
        HOME=work,
    )
    plantune = os.path.join(BIN, "plantune")
    print(f"load before: {os.getloadavg()[0]:.2f} (2 cores, shared)", flush=True)
    if args.parquet_events:
        parquet_run(work, args.parquet_events, args.master, env)
    if args.skip_sqlite:
        return
    shutil.rmtree(out, ignore_errors=True)
    wall, peak, text = timed_process([plantune, "export", out, "--json"], env)
    summary = json.loads(text)
    rows = sum(d["rows"] for d in summary["datasets"].values())
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    print(
        f"export parquet: {wall:.1f} s, peak RSS {peak:.0f} MiB, {rows:,} rows"
        f" ({rows / wall:,.0f} rows/s), {size / 2**20:.0f} MiB on disk",
        flush=True,
    )
    wall2, _, _ = timed_process([plantune, "export", out, "--json"], env)
    print(f"export again (nothing new): {wall2:.1f} s", flush=True)
    report_s, _, _ = timed_process([plantune, "team", "report", out, "--json"], env)
    views_s = sqlite_reports(path)
    print(
        f"team report (DuckDB, process incl. start): {report_s:.1f} s;"
        f" the same reports from the SQLite views: {views_s:.1f} s"
        f" (ratio {views_s / report_s:.2f}x)",
        flush=True,
    )
    load_s, fit_s, fit = numpy_fit(path)
    print(
        f"numpy fit: load findings from SQLite {load_s:.1f} s + fit {fit_s:.2f} s"
        f" (threshold {fit.threshold:g}, tie fraction {fit.tie_fraction:.9f},"
        f" n {fit.n:,})",
        flush=True,
    )
    results = {}
    for engine in ("duckdb", "spark"):
        cmd = [plantune, "team", "calibrate", out, "--engine", engine, "--json"]
        if engine == "spark":
            cmd += ["--master", args.master]
        wall, _, text = timed_process(cmd, env)
        r = json.loads(text)
        results[engine] = r
        same = (r["threshold"], r["tie_fraction"], r["n"]) == (
            fit.threshold,
            fit.tie_fraction,
            fit.n,
        )
        print(
            f"team calibrate --engine {engine}: {wall:.1f} s (process incl. start;"
            f" numpy load+fit {load_s + fit_s:.1f} s, ratio {wall / (load_s + fit_s):.2f}x);"
            f" same threshold and tie fraction as numpy: {same}",
            flush=True,
        )
        if not same:
            raise SystemExit(f"{engine} fit differs from numpy: {r} vs {fit}")
    print(f"load after: {os.getloadavg()[0]:.2f}")
    if not args.keep and not args.dir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
