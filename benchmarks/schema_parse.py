"""Benchmark: what a new connection pays to parse the schema, this tree against a baseline.

SQLite reads and parses every table, index, view and trigger of the schema when a
connection runs its first statement, and every hook and compat command opens a new
connection, so that parse is paid on every call. This builds one database from this tree's
migrations and views and one from the baseline's (``--baseline DIR``, a checkout or
``git archive`` of an earlier revision), then times ``connect`` + a one-row query on each,
in alternating rounds, as CPU time of this process. It also reports what the schema holds
(count and bytes of SQL per kind) and the cost with each kind dropped from a copy.

Usage: python benchmarks/schema_parse.py --baseline DIR [--rounds 20] [--per-round 50]
"""

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)

from toolkit.core import seeded_db  # noqa: E402
from toolkit.store import db  # noqa: E402

PLURAL = {"index": "indexes", "table": "tables", "trigger": "triggers", "view": "views"}


def build(path, sql_dir):
    schema = db.Schema(
        os.path.join(sql_dir, "migrations"),
        os.path.join(sql_dir, "views"),
        rollups_dir=os.path.join(sql_dir, "rollups"),
    )
    seeded_db.connect(path, schema=schema).close()


def first_statement(path):
    start = time.process_time()
    conn = sqlite3.connect(path)
    conn.execute("SELECT 1 FROM plantune_meta LIMIT 1").fetchall()
    spent = time.process_time() - start
    conn.close()
    return spent


def contents(path):
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "SELECT type, count(*), sum(length(sql)) FROM sqlite_master WHERE sql IS NOT NULL"
        " GROUP BY type ORDER BY type"
    ).fetchall()
    conn.close()
    return {kind: (n, size) for kind, n, size in rows}


def without(path, kind, dest):
    shutil.copy(path, dest)
    conn = sqlite3.connect(dest)
    names = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = ? AND sql IS NOT NULL", (kind,)
    ).fetchall()
    for (name,) in names:
        conn.execute(f'DROP {kind.upper()} "{name}"')
    conn.commit()
    conn.close()
    return dest


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", metavar="DIR", required=True, help="earlier tree to compare")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--per-round", type=int, default=50)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        after = os.path.join(tmp, "after.db")
        before = os.path.join(tmp, "before.db")
        build(after, os.path.join(HERE, "sql"))
        build(before, os.path.join(os.path.abspath(args.baseline), "sql"))
        files = {"baseline": before, "this tree": after}
        for kind in ("trigger", "view", "index"):
            files[f"this tree without {PLURAL[kind]}"] = without(
                after, kind, os.path.join(tmp, kind)
            )
        times = {name: [] for name in files}
        for _ in range(args.rounds):
            for name, path in files.items():
                times[name].extend(first_statement(path) for _ in range(args.per_round))
        for name, path in (("baseline", before), ("this tree", after)):
            parts = ", ".join(
                f"{n} {PLURAL[kind]} {size / 1024:.1f} KiB"
                for kind, (n, size) in contents(path).items()
            )
            print(f"{name}: {parts}")
        base = min(times["baseline"])
        print(f"{'database':32s} {'best':>9s} {'median':>9s} {'vs baseline':>12s}")
        for name, values in times.items():
            best, med = min(values), statistics.median(values)
            print(f"{name:32s} {best * 1e3:7.3f}ms {med * 1e3:7.3f}ms {best / base:11.3f}x")
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"(connect + first statement, CPU time; load average after: {load})")


if __name__ == "__main__":
    main()
