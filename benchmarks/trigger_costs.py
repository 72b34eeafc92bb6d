"""Benchmark: what the triggers of each table cost a logged question, on the hot path.

A hook or compat call opens a new connection (SQLite parses the whole schema, every
trigger included, on its first statement) and records one question event (the insert
runs the triggers it reaches). This builds the current schema, then a copy without the
triggers of one table at a time, and times, in alternating rounds, connect + record one
event + commit + close on each, as CPU time of this process. The difference to the full
schema is what those triggers cost each logged question; ``--by rollup`` drops the
triggers of one declared rollup (sql/rollups/NAME.sql) at a time instead. With
``--baseline DIR`` (a
checkout or ``git archive`` of an earlier revision) the schema that tree's migrations,
views and rollups build is timed in the same rounds, the same way.

    .venv/bin/python benchmarks/trigger_costs.py [--rounds 10] [--per-round 30]
        [--by table|rollup] [--baseline DIR]
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from toolkit.core import questions, seeded_db  # noqa: E402
from toolkit.store import db  # noqa: E402

PROJECT = "bench-proj"


def log_one(path, i):
    conn = db.connect(path, migrate=False)  # every variant is migrated already
    record = questions.validate_event(
        {
            "skill": "plan-eng-review",
            "question_id": "plan-eng-review-q0",
            "question_summary": f"Question {i}?",
            "user_choice": "a",
            "session_id": "s-1",
        }
    )
    questions.record_event(conn, record, PROJECT)
    conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--per-round", type=int, default=30)
    ap.add_argument("--baseline", metavar="DIR", help="earlier tree whose schema to time too")
    ap.add_argument("--by", choices=("table", "rollup"), default="table")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="plantune-triggers-")
    try:
        full = os.path.join(work, "full.db")
        conn = seeded_db.connect(full)
        groups, sizes = {}, {}
        for name, table, sql in conn.execute(
            "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'"
        ):
            groups.setdefault(table, []).append((name, len(sql)))
            sizes[name] = len(sql)
        if args.by == "rollup":
            groups = {}
            for rollup, objects in conn.execute("SELECT name, objects FROM plantune_rollups"):
                for kind, name in (line.split(" ", 1) for line in objects.splitlines()):
                    if kind == "trigger":
                        groups.setdefault(rollup, []).append((name, sizes[name]))
        conn.close()
        variants = {"full schema": full}
        if args.baseline:
            sql = os.path.join(os.path.abspath(args.baseline), "sql")
            baseline = os.path.join(work, "baseline.db")
            seeded_db.connect(
                baseline,
                schema=db.Schema(
                    os.path.join(sql, "migrations"),
                    os.path.join(sql, "views"),
                    rollups_dir=os.path.join(sql, "rollups"),
                ),
            ).close()
            variants["baseline schema"] = baseline
        for table, triggers in sorted(groups.items()):
            path = os.path.join(work, f"without-{table}.db")
            shutil.copy(full, path)
            c = db.connect(path, migrate=False)
            for name, _ in triggers:
                c.execute(f'DROP TRIGGER "{name}"')
            c.close()
            variants[f"without {table}'s triggers"] = path
        times = {label: [] for label in variants}
        n = 0
        for _ in range(args.rounds):
            for label, path in variants.items():
                t = time.process_time()
                for _ in range(args.per_round):
                    n += 1
                    log_one(path, n)
                times[label].append((time.process_time() - t) / args.per_round)
        base = statistics.median(times["full schema"])
        print(f"{'schema':<52}{'triggers':>9}{'KiB':>7}{'median ms':>11}{'saves ms':>10}")
        for label, values in times.items():
            table = label.removeprefix("without ").removesuffix("'s triggers")
            if label.endswith("schema"):
                c = db.connect(variants[label], migrate=False)
                count, size = c.execute(
                    "SELECT count(*), sum(length(sql)) FROM sqlite_master WHERE type = 'trigger'"
                ).fetchone()
                c.close()
            else:
                count = len(groups.get(table, []))
                size = sum(s for _, s in groups.get(table, []))
            median = statistics.median(values)
            saved = "" if label.endswith("schema") else f"{(base - median) * 1000:.3f}"
            print(f"{label:<52}{count:>9}{size / 1024:>7.1f}{median * 1000:>11.3f}{saved:>10}")
        print(f"(connect + one logged question + close, CPU; load {os.getloadavg()[0]:.1f})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
