"""Benchmark: deriving the inferred profile from 10k, 100k and 1M question events.

Side by side in one run:
Each in-process figure is the best of --repeat runs, wall and CPU time.

  sql     plantune's derive for one project: the inferred_profile and profile_diversity
          views, filtered by project (what `gstack-developer-profile --derive` runs)
  jsonl   the baseline: gstack's `--derive` algorithm in plain Python, parsing the
          same events from a question-log.jsonl file line by line
  compat  the whole `gstack-developer-profile --derive` process at 100k events, against
          the interpreter floor (`python -c pass`)

Events are synthetic: registered questions with real signal-map answers, ad-hoc and hook
ids, __unknown__ answers, spread over a year, generated in SQL by a recursive CTE.

Usage: python benchmarks/profile.py [--sizes 10000,100000,1000000] [--repeat 3]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from toolkit.core import (  # noqa: E402
    jscompat,
    profile,
    seeded_db,  # noqa: E402
)
from toolkit.core.registry import bundled_registry, bundled_signal_map  # noqa: E402
from toolkit.store import db  # noqa: E402

PROJECT = "bench"

GENERATE = """
INSERT INTO question_log (event_key, project, ts, skill, question_id, question_summary,
                          user_choice, source, raw_json, recorded_at)
WITH RECURSIVE
n (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < :count - 1),
questions AS (
    SELECT id, skill, signal_key, row_number() OVER (ORDER BY id) - 1 AS rn
    FROM registry_questions
    UNION ALL SELECT 'adhoc-cleanup-question', 'adhoc', NULL, (SELECT count(*) FROM registry_questions)
    UNION ALL SELECT 'hook-3f2a9c0d1e', 'unknown', NULL, (SELECT count(*) + 1 FROM registry_questions)
),
nq (c) AS (SELECT count(*) FROM questions),
choices AS (
    SELECT signal_key, user_choice,
           row_number() OVER (PARTITION BY signal_key ORDER BY user_choice) - 1 AS rn,
           count(*) OVER (PARTITION BY signal_key) AS total
    FROM (SELECT DISTINCT signal_key, user_choice FROM signal_map)
),
events AS (
    SELECT n.i, q.id, q.skill,
        CASE WHEN n.i % 17 = 0 THEN '__unknown__'
             ELSE coalesce((SELECT user_choice FROM choices AS c
                            WHERE c.signal_key = q.signal_key AND c.rn = (n.i / 7) % c.total),
                           'accept') END AS choice,
        strftime('%Y-%m-%dT%H:%M:%S.000Z', 1767225600 + (n.i * 31536000) / :count, 'unixepoch') AS ts
    FROM n JOIN questions AS q ON q.rn = n.i % (SELECT c FROM nq)
)
SELECT 'bench-' || i, :project, ts, skill, id, 'benchmark question', choice,
       CASE WHEN id LIKE 'hook-%' THEN 'hook' ELSE 'agent' END,
       json_object('skill', skill, 'question_id', id, 'question_summary', 'benchmark question',
                   'user_choice', choice, 'source', CASE WHEN id LIKE 'hook-%' THEN 'hook' ELSE 'agent' END,
                   'ts', ts),
       ts
FROM events
"""


def build(directory, count):
    path = os.path.join(directory, f"bench-{count}.db")
    conn = seeded_db.connect(path)
    with db.transaction(conn):
        conn.execute(GENERATE, {"count": count, "project": PROJECT})
    conn.execute("ANALYZE")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # measure reads from the database file
    log = os.path.join(directory, "state", "projects", PROJECT, f"question-log-{count}.jsonl")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w", encoding="utf-8") as f:
        for (raw,) in conn.execute("SELECT raw_json FROM question_log ORDER BY id"):
            f.write(raw + "\n")
    return path, conn, log


def sql_derive(conn):
    inferred = profile.inferred(conn, PROJECT)
    div = profile.diversity(conn, PROJECT)
    return inferred["values"], div["sample_size"]


def jsonl_derive(log, registry, signal_map):
    """gstack's `--derive` as its bin does it: parse every line, fold the signal map."""
    totals = {d: 0.0 for d in profile.DIMENSIONS}
    skills, questions, days = set(), set(), set()
    sample = 0
    with open(log, encoding="utf-8") as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if not e.get("question_id") or not e.get("user_choice"):
                continue
            sample += 1
            skills.add(e.get("skill"))
            questions.add(e["question_id"])
            if e.get("ts"):
                days.add(e["ts"][:10])
            key = registry.get(e["question_id"])
            for dim, delta in signal_map.get(key, {}).get(e["user_choice"], []):
                totals[dim] += delta
    import math

    values = {d: jscompat.round3(1 / (1 + math.exp(-3 * t))) for d, t in totals.items()}
    return values, sample


def timed(fn, repeat):
    """Best wall time and best CPU time of ``repeat`` runs.

    Best-of, and CPU time beside wall time, because this machine is shared: other jobs
    stretch wall time, CPU time shows the work the query itself does.
    """
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return min(walls), min(cpus), result


def run_process(args, env, repeat):
    """Median wall time and mean CPU time (user + system) of a child process."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        r = subprocess.run(args, env=env, capture_output=True, text=True)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if r.returncode != 0:
            raise SystemExit(f"{args} failed: {r.stderr}")
    return statistics.median(walls), statistics.median(cpus), r.stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    registry = {e["id"]: e.get("signal_key") for e in bundled_registry()}
    signal_map = bundled_signal_map()["map"]
    bin_dir = os.path.dirname(sys.executable)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for count in sizes:
            t = time.perf_counter()
            path, conn, log = build(tmp, count)
            made = time.perf_counter() - t
            repeat = args.repeat
            sql_w, sql_c, (sql_values, sql_n) = timed(lambda: sql_derive(conn), repeat)
            all_w, all_c, _ = timed(
                lambda: conn.execute("SELECT * FROM inferred_profile").fetchall(), repeat
            )
            base_w, base_c, (base_values, base_n) = timed(
                lambda: jsonl_derive(log, registry, signal_map), repeat
            )
            assert sql_n == base_n == count, (sql_n, base_n)
            assert sql_values == base_values, (sql_values, base_values)
            results[count] = {"sql": (sql_w, sql_c), "jsonl": (base_w, base_c)}
            print(
                f"{count:>9,} events (generated in {made:5.1f}s)  wall/cpu ms:  "
                f"sql derive {sql_w * 1000:7.1f} / {sql_c * 1000:7.1f}   "
                f"all-projects view {all_w * 1000:7.1f} / {all_c * 1000:7.1f}   "
                f"jsonl baseline {base_w * 1000:7.1f} / {base_c * 1000:7.1f}   "
                f"sql/jsonl (cpu) {sql_c / base_c:4.2f}x",
                flush=True,
            )
            conn.close()
            if count == 100000 or (count == sizes[-1] and "compat" not in results):
                env = {
                    **os.environ,
                    "GSTACK_STATE_ROOT": os.path.join(tmp, "state"),
                    "PLANTUNE_DB": path,
                    "GSTACK_PROJECT_SLUG": PROJECT,
                }
                env.pop("PLANTUNE_MIRROR", None)
                floor_w, floor_c, _ = run_process([sys.executable, "-c", "pass"], env, 7)
                compat = [os.path.join(bin_dir, "gstack-developer-profile"), "--derive"]
                run_process(compat, env, 1)
                compat_w, compat_c, out = run_process(compat, env, 7)
                results["compat"] = (count, compat_w, compat_c)
                print(
                    f"  compat `gstack-developer-profile --derive` at {count:,}: wall {compat_w * 1000:.0f} ms,"
                    f" cpu {compat_c * 1000:.0f} ms (median of 7); floor `python -c pass` wall "
                    f"{floor_w * 1000:.0f} ms, cpu {floor_c * 1000:.0f} ms; ratio {compat_w / floor_w:.1f}x"
                    f"  → {out}",
                    flush=True,
                )
    if 100000 in results and 1000000 in results:
        growth = [results[1000000][k][1] / results[100000][k][1] for k in ("sql", "jsonl")]
        growth_wall = [results[1000000][k][0] / results[100000][k][0] for k in ("sql", "jsonl")]
        print(
            f"growth time(1M)/time(100k), cpu: sql {growth[0]:.1f}x, jsonl baseline "
            f"{growth[1]:.1f}x; wall: sql {growth_wall[0]:.1f}x, jsonl {growth_wall[1]:.1f}x "
            f"(10x = linear)"
        )
    if "compat" in results:
        count, compat_t, _ = results["compat"]
        verdict = "PASS" if compat_t < 1.0 else "FAIL"
        print(f"compat --derive on {count:,} events under 1 s (wall): {verdict} ({compat_t:.3f} s)")


if __name__ == "__main__":
    main()
