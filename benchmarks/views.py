"""Analysis views on a large database: every view page through Datasette vs a plain count.

Builds a database with N question-log events (default 1,000,000) plus pacing findings and
preferences in a few recursive-CTE inserts (the rollup triggers run on every row, as they
would for hooks), then loads every view page, every canned query and the raw question_log
page through Datasette's in-process client with its default settings (1 s query limit,
200 ms facet limit). The baseline is ``select count(*) from question_log`` run through the
same client. A page fails the benchmark if it is not a 200 or says a query took too long.

    .venv/bin/python benchmarks/views.py                 # 1,000,000 events
    .venv/bin/python benchmarks/views.py --events 50000  # quick look
    .venv/bin/python benchmarks/views.py --db /tmp/big.db --keep   # reuse a built database
"""

import argparse
import asyncio
import json
import os
import re
import sqlite3
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from toolkit.analysis import serve
from toolkit.core import seeded_db  # noqa: E402
from toolkit.store import db  # noqa: E402

EVENTS_PER_SESSION = 40
# Every view page must load within this, its synthetic facet included.
PAGE_BUDGET_S = 0.200
PROJECTS = 5
FINDINGS_PER_SESSION = 8
# Every fifth session is simulated (synthetic = 1), the rest real: the views' rollups keep
# the two apart and every view page carries a synthetic facet.
SIMULATED_EVERY = 5


def build(path, n_events):
    """Fill a fresh database with a plausible history of ``n_events`` events.

    Sessions of 40 events in one project walk the four review phases (10 each), spread
    over a year. 85% of events are registered questions, 10% unmarked hook ids (2,000
    distinct), 5% ad-hoc ids; 10% of registered two-way questions are auto-decided.
    Every fifth session is simulated (synthetic = 1). Pseudo-random choices come from
    multiplicative hashes of the row number, so every build is identical.
    """
    conn = seeded_db.connect(path)
    conn.execute("PRAGMA cache_size = -200000")
    reg = conn.execute(
        "SELECT id, skill, door_type, coalesce(json_extract(options_json, '$[0]'), 'other') AS first,"
        " coalesce(json_extract(options_json, '$[1]'), 'other') AS second"
        " FROM registry_questions ORDER BY id"
    ).fetchall()
    conn.execute(
        "CREATE TEMP TABLE reg (n INTEGER PRIMARY KEY, id TEXT, skill TEXT, door TEXT, first TEXT, second TEXT)"
    )
    conn.executemany(
        "INSERT INTO reg VALUES (?, ?, ?, ?, ?, ?)", [(i, *tuple(r)) for i, r in enumerate(reg)]
    )
    n_reg = len(reg)
    sessions = max(1, n_events // EVENTS_PER_SESSION)
    seconds_between_sessions = max(1, 365 * 86400 // sessions)
    with db.transaction(conn):
        conn.execute(
            f"""
            WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < {n_events} - 1),
            e AS (
                SELECT i, i / {EVENTS_PER_SESSION} AS sess, i % {EVENTS_PER_SESSION} AS k,
                       (i * 2654435761) % 1000 AS h, (i * 48271) % 1000 AS h2,
                       (i * 40503) % {n_reg} AS rn
                FROM s
            )
            INSERT INTO question_log (event_key, project, ts, skill, question_id, question_summary,
                user_choice, recommended, followed_recommendation, session_id, source, phase,
                door_class, door_reason, tool_use_id, raw_json, synthetic, recorded_at)
            SELECT printf('bench-%09d', e.i),
                   'project-' || (e.sess % {PROJECTS}),
                   strftime('%Y-%m-%dT%H:%M:%fZ', '2025-01-01',
                            '+' || (e.sess * {seconds_between_sessions} + e.k * 30) || ' seconds'),
                   CASE WHEN e.h < 850 THEN reg.skill WHEN e.h < 950 THEN 'unknown' ELSE 'plan-eng-review' END,
                   CASE WHEN e.h < 850 THEN reg.id
                        WHEN e.h < 950 THEN printf('hook-%010x', ((e.i * 7919) % 2000) * 1048583)
                        ELSE 'plan-eng-review-topic-' || ((e.i * 31) % 500) END,
                   'Benchmark question ' || (e.i % 5000),
                   CASE WHEN e.h2 % 4 = 0 THEN reg.second ELSE reg.first END,
                   reg.first,
                   e.h2 % 4 != 0,
                   printf('bench-session-%07d', e.sess),
                   CASE WHEN e.h < 850 AND reg.door = 'two-way' AND e.h2 < 100 THEN 'auto-decided'
                        WHEN e.h >= 850 AND e.h < 950 THEN iif(e.h2 < 150, 'auq-other', 'hook')
                        ELSE 'agent' END,
                   CASE e.k / 10 WHEN 0 THEN 'ceo' WHEN 1 THEN 'design' WHEN 2 THEN 'eng' ELSE 'dx' END,
                   CASE WHEN e.h < 850 THEN reg.door WHEN e.h2 % 20 = 0 THEN 'one-way' ELSE 'two-way' END,
                   'benchmark',
                   printf('toolu_bench_%09d', e.i),
                   '{{}}', e.sess % {SIMULATED_EVERY} = 0, '2025-01-01T00:00:00.000Z'
            FROM e JOIN reg ON reg.n = e.rn
            """
        )
        n_findings = sessions * FINDINGS_PER_SESSION
        conn.execute(
            f"""
            WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < {n_findings} - 1)
            INSERT INTO findings (project, session_id, chain_id, phase, finding_id, summary, severity,
                irreversibility, decision_matters, door_type, door_reason, score, threshold,
                disposition, surface_reason, synthetic, created_at, updated_at)
            SELECT 'project-' || ((i / {FINDINGS_PER_SESSION}) % {PROJECTS}),
                   printf('bench-session-%07d', i / {FINDINGS_PER_SESSION}),
                   printf('bench-chain-%07d', i / {FINDINGS_PER_SESSION}),
                   CASE (i % {FINDINGS_PER_SESSION}) / 2 WHEN 0 THEN 'ceo' WHEN 1 THEN 'design'
                        WHEN 2 THEN 'eng' ELSE 'dx' END,
                   'finding-' || (i % {FINDINGS_PER_SESSION}), 'Benchmark finding',
                   i % 3, (i / 3) % 3, (i / 9) % 3, 'two-way', 'benchmark',
                   (i % 3) + ((i / 3) % 3) + ((i / 9) % 3), 4.0,
                   iif(i % 5 = 0, 'surfaced', 'silent'), iif(i % 5 = 0, 'rank', NULL),
                   (i / {FINDINGS_PER_SESSION}) % {SIMULATED_EVERY} = 0,
                   strftime('%Y-%m-%dT%H:%M:%fZ', '2025-01-01',
                            '+' || ((i / {FINDINGS_PER_SESSION}) * {seconds_between_sessions} + 1200) || ' seconds'),
                   '2025-01-01T00:00:00.000Z'
            FROM s
            """
        )
        conn.execute(
            "INSERT INTO preferences (scope, question_id, preference, source, synthetic, updated_at)"
            " SELECT 'project-' || (n % 5), id, iif(n % 2 = 0, 'never-ask', 'always-ask'), 'plan-tune', 0,"
            " '2025-06-01T00:00:00.000Z' FROM reg WHERE n % 3 = 0"
        )
        conn.execute(
            "INSERT INTO preferences (scope, question_id, preference, source, synthetic, updated_at)"
            " SELECT '__global__', id, 'never-ask', 'plan-tune', 1, '2025-06-01T00:00:00.000Z'"
            " FROM reg WHERE n % 4 = 0"
        )
    conn.close()


WITHOUT_TRIGGERS = "without rollup triggers"
BEFORE_VIEWS = "without the view indexes of 0015"
BEFORE_TRACE = "without the dimension_trace index"
CURRENT = "with rollup triggers"
# What each "before" variant leaves out of the schema (migration 0015 holds both, since the
# unreleased migrations were squashed into it).
LEFT_OUT = {
    BEFORE_VIEWS: [
        ("INDEX", name)
        for name in (
            "question_log_synthetic",
            "question_log_ts",
            "findings_synthetic",
            "findings_created",
            "trace_runs_created",
            "rollup_pacing_ranked_at",
            "rollup_pacing_phase",
            "rollup_pacing_synthetic",
            "rollup_pacing_project",
        )
    ],
    BEFORE_TRACE: [("INDEX", "question_log_choice")],
}


def schema_variant(path, label):
    """A fresh database with the schema as shipped, less what ``label`` leaves out."""
    conn = seeded_db.connect(path)
    if label == WITHOUT_TRIGGERS:
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall():
            conn.execute(f'DROP TRIGGER "{name}"')
    elif label in LEFT_OUT:
        for kind, name in LEFT_OUT[label]:
            conn.execute(f'DROP {kind} IF EXISTS "{name}"')
    return conn


def hook_insert(conn, i):
    """One question-log row as a hook writes it."""
    conn.execute(
        "INSERT INTO question_log (event_key, project, ts, skill, question_id, question_summary,"
        " user_choice, recommended, followed_recommendation, session_id, source, phase, door_class,"
        " raw_json, recorded_at) VALUES (?, 'p', ?, 'qa', 'qa-tier', 'Which tier?', 'quick',"
        " 'quick', 1, ?, 'agent', 'eng', 'two-way', '{}', ?)",
        (f"k{i}", f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.000Z", f"s{i // 40}", "now"),
    )


def insert_steps(directory, n=200):
    """SQLite virtual-machine steps per hook-style insert, as shipped and before 0020: a
    measure of the write path's work that does not depend on the machine's load."""
    out = {}
    for label in (BEFORE_TRACE, CURRENT):
        conn = schema_variant(os.path.join(directory, f"steps-{len(out)}.db"), label)
        steps = [0]

        def tick():
            steps[0] += 1
            return 0

        conn.set_progress_handler(tick, 1)
        with db.transaction(conn):
            for i in range(n):
                hook_insert(conn, i)
        conn.set_progress_handler(None, 0)
        out[label] = steps[0] / n
        conn.close()
    return out


def insert_cost(directory, n=1000, rounds=3):
    """Per-row cost of one hook-style write (own transaction) under four schemas.

    ``without rollup triggers``: every trigger dropped, what the hot path would pay if the
    views grouped the log on every read. ``without the indexes of 0015``: the current schema
    without the facet and sort indexes 0015 added (its pacing rollup triggers now live in
    0021's feeds and stay). ``before 0020``: without the dimension_trace index. ``with
    rollup triggers``: the schema as shipped.
    The same for a pacing finding (``pacing rank`` writes one per ranked finding). Rounds
    alternate between the schemas and the best round of each is kept, so a busy machine
    hurts all alike.
    """
    results = {}

    def keep(key, value):
        results[key] = min(value, results.get(key, value))

    for r in range(rounds):
        for k, label in enumerate((WITHOUT_TRIGGERS, BEFORE_VIEWS, BEFORE_TRACE, CURRENT)):
            path = os.path.join(directory, f"insert-{r}-{k}.db")
            conn = schema_variant(path, label)
            t = time.perf_counter()
            for i in range(n):
                with db.transaction(conn):
                    hook_insert(conn, i)
            keep(label, (time.perf_counter() - t) / n)
            t = time.perf_counter()
            for i in range(n):
                with db.transaction(conn):
                    conn.execute(
                        "INSERT INTO findings (project, session_id, chain_id, phase, finding_id, severity,"
                        " irreversibility, decision_matters, door_type, door_reason, score, threshold,"
                        " disposition, surface_reason, created_at, updated_at)"
                        " VALUES ('p', ?, ?, 'eng', ?, 1, 1, 1, 'two-way', 'bench', 3, 4, ?, ?, ?, 'now')",
                        (
                            f"s{i // 8}",
                            f"c{i // 8}",
                            f"f{i}",
                            "surfaced" if i % 5 == 0 else "silent",
                            "rank" if i % 5 == 0 else None,
                            f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
                        ),
                    )
            keep("finding " + label, (time.perf_counter() - t) / n)
            t = time.perf_counter()
            with db.transaction(conn):
                conn.execute("DELETE FROM findings")
                conn.execute("DELETE FROM question_log")
            keep("delete " + label, (time.perf_counter() - t) / n)
            conn.close()
    return results


# The same summaries written as plain GROUP BYs over the log: what the views would cost
# without the rollup tables. Each runs once, straight through sqlite3 (no time limit).
NAIVE = {
    "phase_counts": (
        "SELECT project, session_id, phase, count(*) AS questions, sum(source = 'auto-decided'),"
        " sum(door_class IS 'one-way' OR door_type IS 'one-way'), sum(followed_recommendation IS 1),"
        " sum(followed_recommendation IS 0), min(ts), max(ts) AS last_ts"
        " FROM question_log GROUP BY project, session_id, phase ORDER BY last_ts DESC LIMIT 101"
    ),
    "session_interruptions": (
        "SELECT project, session_id, sum(source != 'auto-decided'), min(ts), max(ts) AS last_ts"
        " FROM question_log GROUP BY project, session_id ORDER BY last_ts DESC LIMIT 101"
    ),
    "question_review": (
        "SELECT project, question_id, count(*) AS events, sum(followed_recommendation IS 1),"
        " sum(followed_recommendation IS 0) FROM question_log GROUP BY project, question_id"
        " ORDER BY events DESC LIMIT 101"
    ),
    "daily_activity": (
        "SELECT substr(ts, 1, 10) AS day, project, count(*) FROM question_log"
        " GROUP BY project, day ORDER BY day DESC LIMIT 101"
    ),
}
ROLLUP = {
    "phase_counts": "SELECT * FROM phase_counts ORDER BY last_ts DESC LIMIT 101",
    "session_interruptions": "SELECT * FROM session_interruptions ORDER BY last_ts DESC LIMIT 101",
    "question_review": "SELECT * FROM question_review ORDER BY events DESC LIMIT 101",
    "daily_activity": "SELECT * FROM daily_activity ORDER BY day DESC LIMIT 101",
}


def naive_vs_rollup(path):
    conn = sqlite3.connect(path)
    out = []
    for name in NAIVE:
        times = []
        for sql in (NAIVE[name], ROLLUP[name]):
            t = time.perf_counter()
            conn.execute(sql).fetchall()
            times.append(time.perf_counter() - t)
        out.append((name, *times))
    conn.close()
    return out


def view_names(path):
    conn = sqlite3.connect(path)
    names = [
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name")
    ]
    conn.close()
    return names


async def timed_get(ds, url, repeat):
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        r = await ds.client.get(url)
        elapsed = time.perf_counter() - t
        best = elapsed if best is None else min(best, elapsed)
    return r, best


def too_long(text):
    return "took too long" in text or "interrupted" in text.lower()


async def slowest_query(ds, url):
    """The slowest SQL statement a page runs (Datasette's own trace), in ms, and the time
    of its synthetic facet count (None when the page has no such facet)."""
    sep = "&" if "?" in url else "?"
    r = await ds.client.get(f"{url}.json{sep}_trace=1")
    traces = r.json().get("_trace", {}).get("traces", [])
    facet = [
        t["duration_ms"]
        for t in traces
        if "synthetic as value" in " ".join(t["sql"].split()).lower()
    ]
    worst = max(traces, key=lambda t: t["duration_ms"], default=None)
    if worst is None:
        return 0.0, "", None
    return (
        worst["duration_ms"],
        " ".join(worst["sql"].split())[:60],
        (max(facet) if facet else None),
    )


async def measure(path, repeat):
    ds = serve.build_datasette(path)
    traced = serve.build_datasette(path, settings={"trace_debug": True})
    await ds.invoke_startup()
    await traced.invoke_startup()
    metadata = serve.load_metadata()
    queries = sorted(metadata["databases"][serve.DATABASE_NAME].get("queries", {}))
    base = f"/{serve.DATABASE_NAME}"
    count_url = f"{base}.json?sql=select+count(*)+from+question_log&_shape=array"
    r, baseline = await timed_get(ds, count_url, repeat)
    assert r.status_code == 200, r.text
    rows = []
    failures = []
    pages = [(f"view {v}", f"{base}/{v}") for v in view_names(path)]
    pages += [(f"query {q}", f"{base}/{q}") for q in queries]
    pages.append(("table question_log", f"{base}/question_log"))
    for label, url in pages:
        r, elapsed = await timed_get(ds, url, repeat)
        _, bare = await timed_get(ds, url + "?_nosuggest=1", repeat)
        worst_ms, worst_sql, facet_ms = await slowest_query(traced, url)
        timed_out = re.findall(r"These facets timed out: ([^<]*)", r.text)
        ok = r.status_code == 200 and not too_long(r.text)
        if label.startswith("view") and (not ok or elapsed > PAGE_BUDGET_S or timed_out):
            failures.append(label)
        rows.append(
            (
                label,
                elapsed,
                bare,
                worst_ms,
                worst_sql,
                r.status_code,
                ok,
                timed_out[0].strip() if timed_out else "",
                facet_ms,
            )
        )
    return baseline, rows, failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--db", help="database file to build (or reuse with --keep)")
    parser.add_argument("--keep", action="store_true", help="reuse --db if it exists and keep it")
    parser.add_argument(
        "--repeat", type=int, default=3, help="loads per page; the best is reported"
    )
    args = parser.parse_args(argv)

    tmp = None
    path = args.db
    if path is None:
        tmp = tempfile.TemporaryDirectory()
        path = os.path.join(tmp.name, "plantune.db")
    if not (args.keep and os.path.exists(path)):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.unlink(path + suffix)
        t = time.perf_counter()
        build(path, args.events)
        print(f"built {args.events:,} events in {time.perf_counter() - t:.1f} s")
    # A kept database gets the migrations and views of this checkout, as `plantune serve` does.
    seeded_db.connect(path).close()
    conn = sqlite3.connect(path)
    n = conn.execute("SELECT count(*) FROM question_log").fetchone()[0]
    t = time.perf_counter()
    conn.execute("SELECT count(*) FROM question_log").fetchone()
    direct = time.perf_counter() - t
    conn.close()

    baseline, rows, failures = asyncio.run(measure(path, args.repeat))
    naive = naive_vs_rollup(path)
    with tempfile.TemporaryDirectory() as scratch:
        inserts = insert_cost(scratch)
        steps = insert_steps(scratch)
    print(f"question_log rows: {n:,}; sqlite3 count(*) directly: {direct * 1000:.1f} ms")
    print(
        f"baseline: select count(*) from question_log through Datasette: {baseline * 1000:.1f} ms\n"
    )
    print(
        f"{'page':<50} {'page ms':>8} {'x count':>8} {'no-sugg':>8} {'worst SQL':>9} {'synth facet':>11}"
        "  status, facets timed out"
    )
    for label, elapsed, bare, worst_ms, worst_sql, status, ok, timed_out, facet_ms in rows:
        flag = "" if ok else " QUERY TOOK TOO LONG / ERROR"
        if label.startswith("view") and elapsed > PAGE_BUDGET_S:
            flag += f" OVER {PAGE_BUDGET_S * 1000:.0f} ms"
        facet = "-" if facet_ms is None else f"{facet_ms:.1f}"
        print(
            f"{label:<50} {elapsed * 1000:8.1f} {elapsed / baseline:8.1f} {bare * 1000:8.1f} {worst_ms:9.1f}"
            f" {facet:>11}  {status}{flag} {timed_out}"
        )
    views = [r for r in rows if r[0].startswith("view")]
    slowest = max(views, key=lambda r: r[1])
    worst = max(views, key=lambda r: r[3])
    print(
        f"\nslowest view page: {slowest[0]} {slowest[1] * 1000:.1f} ms "
        f"= {slowest[1] / baseline:.1f}x the count(*) page ({baseline * 1000:.1f} ms); "
        f"{slowest[2] * 1000:.1f} ms without suggested facets"
    )
    print(
        f"slowest single SQL statement on any view page: {worst[3]:.1f} ms ({worst[0]}: {worst[4]}...)"
        f" against Datasette's 1000 ms limit"
    )
    print(
        "\nfirst page, newest first: GROUP BY over the log vs the rollup-backed view (sqlite3, no limit)"
    )
    for name, slow, fast in naive:
        print(f"  {name:<24} {slow * 1000:9.1f} ms vs {fast * 1000:7.1f} ms = {slow / fast:7.0f}x")
    plain, before, rolled = (inserts[k] for k in (WITHOUT_TRIGGERS, BEFORE_VIEWS, CURRENT))
    print(
        f"hook-style insert (own transaction): {plain * 1e6:.0f} us without rollup triggers, "
        f"{before * 1e6:.0f} us {BEFORE_VIEWS}, {rolled * 1e6:.0f} us as shipped = "
        f"{rolled / plain:.2f}x without triggers, {rolled / before:.2f}x without 0015's indexes"
    )
    before, rolled = inserts[BEFORE_TRACE], inserts[CURRENT]
    print(
        f"hook-style insert: {before * 1e6:.0f} us {BEFORE_TRACE}, {rolled * 1e6:.0f} us as shipped"
        f" = {rolled / before:.2f}x; SQLite VM steps per insert: {steps[BEFORE_TRACE]:.0f} before 0020,"
        f" {steps[CURRENT]:.0f} as shipped = {steps[CURRENT] / steps[BEFORE_TRACE]:.3f}x"
    )
    plain, before, rolled = (
        inserts["finding " + k] for k in (WITHOUT_TRIGGERS, BEFORE_VIEWS, CURRENT)
    )
    print(
        f"pacing finding insert (own transaction): {plain * 1e6:.0f} us without rollup triggers, "
        f"{before * 1e6:.0f} us {BEFORE_VIEWS}, {rolled * 1e6:.0f} us as shipped = "
        f"{rolled / before:.2f}x without 0015's indexes"
    )
    plain, before, rolled = (
        inserts["delete " + k] for k in (WITHOUT_TRIGGERS, BEFORE_VIEWS, CURRENT)
    )
    print(
        f"bulk delete of those rows, per event: {plain * 1e6:.1f} us without rollup triggers, "
        f"{before * 1e6:.1f} us {BEFORE_VIEWS}, {rolled * 1e6:.1f} us as shipped = "
        f"{rolled / plain:.1f}x without triggers, {rolled / before:.2f}x without 0015's indexes"
    )
    print(
        json.dumps(
            {
                "events": n,
                "baseline_ms": round(baseline * 1000, 1),
                "slowest_view": slowest[0],
                "slowest_view_ms": round(slowest[1] * 1000, 1),
            }
        )
    )
    if tmp is not None:
        tmp.cleanup()
    if failures:
        print("FAILED: " + ", ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
