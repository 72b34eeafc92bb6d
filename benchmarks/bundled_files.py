"""Benchmark: finding the bundled schema on every hook start, toolkit.resources vs importlib.resources.

Every hook process opens the database, and opening it reads the migration names and view
files to compute the schema stamp, so the lookup of the bundled ``sql/`` folder is on the
hot path. ``toolkit.resources`` takes the package's own folder (what
``importlib.resources.files("toolkit")`` returns for a package on disk) without importing
importlib.resources. This script starts fresh interpreters (``python -S``, as a launcher
would) that build the schema both ways, side by side, and prints best-of and median wall
times and their ratio.

    .venv/bin/python benchmarks/bundled_files.py [runs]
"""

import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PLANTUNE = (
    "import sys; sys.path.insert(0, {root!r})\n"
    "from toolkit import db\n"
    "db.Schema()\n"
)
IMPORTLIB = (
    "import sys; sys.path.insert(0, {root!r})\n"
    "import importlib.resources, os\n"
    "sql = os.fspath(importlib.resources.files('toolkit'))\n"
    "from toolkit import db\n"
    "db.Schema()\n"
)
BARE = "pass\n"


def timed(code, runs):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-S", "-c", code.format(root=ROOT)], check=True)
        times.append(time.perf_counter() - started)
    return min(times), statistics.median(times)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    rows = [("bare interpreter (python -S)", timed(BARE, runs)),
            ("schema via toolkit.resources", timed(PLANTUNE, runs)),
            ("schema via importlib.resources", timed(IMPORTLIB, runs))]
    print(f"{runs} fresh interpreters each; load: {os.getloadavg()[0]:.2f}")
    print(f"{'':34} {'best ms':>8} {'median ms':>10}")
    for name, (best, median) in rows:
        print(f"{name:34} {best * 1000:8.1f} {median * 1000:10.1f}")
    bare, ours, theirs = (r[1][0] for r in rows)
    print(f"\nratio importlib.resources / toolkit.resources, best-of, above bare start-up: "
          f"{(theirs - bare) / (ours - bare):.2f}")


if __name__ == "__main__":
    main()
