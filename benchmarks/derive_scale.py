"""Benchmark: `gstack-developer-profile --derive` at 1k and at 1M events, against the floor.

The derive should not grow with history: its time at 1,000,000 events is compared with its
time at 1,000 events (target: within 10%), and both with the interpreter floor
`python -I -S -c pass` (target: <= 2.5x), all in alternating rounds of one run so a load
change on the shared machine hits every command alike.

Events are the synthetic history of benchmarks/profile.py (registered questions with real
signal-map answers, ad-hoc and hook ids, __unknown__ answers, spread over a year),
generated in SQL. Mirroring is off (PLANTUNE_MIRROR=0): this measures the derive itself,
not the rewrite of developer-profile.json.

With --before-rev REV each size also runs against a copy of its database whose two profile
views are those of git revision REV (the views that grouped the question log on every
read), so before and after come from the same run and the same data.

Usage: python benchmarks/derive_scale.py [--runs 20] [--sizes 1000,1000000] [--json]
                                         [--before-rev REV]
"""

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from toolkit.core import seeded_db  # noqa: E402
from toolkit.store import db  # noqa: E402

BIN = os.path.dirname(sys.executable)


def _generator_sql():
    spec = importlib.util.spec_from_file_location(
        "profile_bench", os.path.join(ROOT, "benchmarks", "profile.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.GENERATE, module.PROJECT


def build(directory, count):
    sql, project = _generator_sql()
    path = os.path.join(directory, f"derive-{count}.db")
    conn = seeded_db.connect(path)
    with db.transaction(conn):
        conn.execute(sql, {"count": count, "project": project})
    conn.execute("ANALYZE")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path, project


def with_old_views(path, rev):
    """A copy of the database whose two profile views are those of git revision ``rev``."""
    import shutil
    import sqlite3

    old = path.replace(".db", f"-{rev.replace('/', '_')}.db")
    shutil.copy(path, old)
    conn = sqlite3.connect(old, isolation_level=None)
    for view in ("inferred_profile", "profile_diversity"):
        body = subprocess.run(
            ["git", "-C", ROOT, "show", f"{rev}:sql/views/{view}.sql"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        conn.execute(f"DROP VIEW {view}")
        conn.execute(body)
    conn.close()
    return old


def run_once(argv, env):
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{argv} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}")
    return elapsed, proc.stdout.decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20, help="alternating rounds")
    ap.add_argument("--sizes", default="1000,1000000")
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--before-rev",
        help="also run each size with the profile views of this"
        " git revision (the derive before the running totals), e.g. a commit",
    )
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    exe = os.path.join(BIN, "gstack-developer-profile")
    with tempfile.TemporaryDirectory() as tmp:
        commands = {
            "floor (python -I -S -c pass)": (
                [sys.executable, "-I", "-S", "-c", "pass"],
                dict(os.environ),
            )
        }
        for count in sizes:
            t = time.perf_counter()
            path, project = build(tmp, count)
            print(f"built {count:,} events in {time.perf_counter() - t:.1f}s", flush=True)
            state = os.path.join(tmp, f"state-{count}")
            os.makedirs(state)
            env = {
                **os.environ,
                "GSTACK_STATE_ROOT": state,
                "GSTACK_HOME": state,
                "HOME": state,
                "PLANTUNE_DB": path,
                "GSTACK_PROJECT_SLUG": project,
                "PLANTUNE_MIRROR": "0",
            }
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            commands[f"--derive at {count:,}"] = ([exe, "--derive"], env)
            if args.before_rev:
                commands[f"before: --derive at {count:,}"] = (
                    [exe, "--derive"],
                    dict(env, PLANTUNE_DB=with_old_views(path, args.before_rev)),
                )
        outputs = {}
        for name, (argv, env) in commands.items():  # warm-up: byte-code, page cache
            outputs[name] = run_once(argv, env)[1].strip()
        times = {name: [] for name in commands}
        items = list(commands.items())
        for i in range(args.runs):
            k = i % len(items)
            for name, (argv, env) in items[k:] + items[:k]:
                times[name].append(run_once(argv, env)[0])
    floor_name = next(iter(times))
    floor_med, floor_best = statistics.median(times[floor_name]), min(times[floor_name])
    results = []
    for name, values in times.items():
        med, best = statistics.median(values), min(values)
        results.append(
            {
                "command": name,
                "median_ms": round(med * 1000, 2),
                "best_ms": round(best * 1000, 2),
                "ratio_median": round(med / floor_med, 3),
                "ratio_best": round(best / floor_best, 3),
                "output": outputs[name],
            }
        )
    derive = [r for r in results if r["command"].startswith("--derive")]
    before = [r for r in results if r["command"].startswith("before: --derive")]
    growth = None
    if len(derive) >= 2:
        growth = {
            "median": round(derive[-1]["median_ms"] / derive[0]["median_ms"], 3),
            "best": round(derive[-1]["best_ms"] / derive[0]["best_ms"], 3),
        }
        if len(before) >= 2:
            growth["before_median"] = round(before[-1]["median_ms"] / before[0]["median_ms"], 3)
            growth["before_best"] = round(before[-1]["best_ms"] / before[0]["best_ms"], 3)
    load = os.getloadavg()
    if args.json:
        print(
            json.dumps(
                {
                    "runs": args.runs,
                    "load_average": load,
                    "results": results,
                    "growth_last_over_first": growth,
                },
                indent=2,
            )
        )
        return
    print(
        f"{args.runs} alternating rounds (load average after: "
        f"{', '.join(f'{x:.2f}' for x in load)})"
    )
    for r in results:
        print(
            f"{r['command']:32s} median {r['median_ms']:8.2f} ms ({r['ratio_median']:5.2f}x)"
            f"  best {r['best_ms']:8.2f} ms ({r['ratio_best']:5.2f}x)  {r['output'][:60]}"
        )
    if growth:
        print(
            f"largest / smallest: median {growth['median']:.3f}x, best {growth['best']:.3f}x"
            "  (target <= 1.10x); target vs floor <= 2.5x"
        )
        if "before_median" in growth:
            print(
                f"before: largest / smallest: median {growth['before_median']:.3f}x,"
                f" best {growth['before_best']:.3f}x"
            )


if __name__ == "__main__":
    main()
