"""Benchmark: finding the bundled schema on every hook start, toolkit.store.resources vs importlib.resources.

Every hook process opens the database, and opening it reads the migration names and view
files to compute the schema stamp, so the lookup of the bundled ``sql/`` folder is on the
hot path. ``toolkit.store.resources`` takes the package's own folder (what
``importlib.resources.files("toolkit")`` returns for a package on disk) without importing
importlib.resources. This script starts fresh interpreters (``python -S``, as a launcher
would) that build the schema both ways, side by side, and prints best-of and median wall
times and their ratio.

    .venv/bin/python benchmarks/bundled_files.py [runs]
"""

import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PLANTUNE = "import sys; sys.path.insert(0, {root!r})\nfrom toolkit.store import db\ndb.Schema()\n"
IMPORTLIB = (
    "import sys; sys.path.insert(0, {root!r})\n"
    "import importlib.resources, os\n"
    "sql = os.fspath(importlib.resources.files('toolkit'))\n"
    "from toolkit.store import db\n"
    "db.Schema()\n"
)
BARE = "pass\n"


def _child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(code, runs):
    """Best-of and median wall time, and best-of CPU time (less disturbed by a shared machine)."""
    wall, cpu = [], []
    for _ in range(runs):
        started, cpu_before = time.perf_counter(), _child_cpu()
        subprocess.run([sys.executable, "-S", "-c", code.format(root=ROOT)], check=True)
        wall.append(time.perf_counter() - started)
        cpu.append(_child_cpu() - cpu_before)
    return min(wall), statistics.median(wall), min(cpu)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    rows = [
        ("bare interpreter (python -S)", timed(BARE, runs)),
        ("schema via toolkit.store.resources", timed(PLANTUNE, runs)),
        ("schema via importlib.resources", timed(IMPORTLIB, runs)),
    ]
    print(f"{runs} fresh interpreters each; load: {os.getloadavg()[0]:.2f}")
    print(f"{'':34} {'best ms':>8} {'median ms':>10} {'best CPU ms':>12}")
    for name, (best, median, cpu) in rows:
        print(f"{name:34} {best * 1000:8.1f} {median * 1000:10.1f} {cpu * 1000:12.1f}")
    (_, _, bare), (_, _, ours), (_, _, theirs) = (r[1] for r in rows)
    print(
        f"\nCPU above bare start-up: toolkit.store.resources {(ours - bare) * 1000:.1f} ms, "
        f"importlib.resources {(theirs - bare) * 1000:.1f} ms; "
        f"ratio {(theirs - bare) / (ours - bare):.2f}"
    )


if __name__ == "__main__":
    main()
