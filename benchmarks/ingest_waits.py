"""Benchmark: how long another writer waits for the write lock while `plantune ingest` runs.

Generates N question-log lines (the generator of benchmarks/ingest.py), starts `plantune
ingest` on them as a child process, and meanwhile, from this process, takes the write lock
again and again (one short transaction every --every seconds) in one of two ways:

  announced   ``db.transaction``, as plantune's hooks and compat commands write: a writer
              that finds the lock taken leaves a marker in ``<db>-waiting/``, which the
              importer looks for (ingest_tx.CHECK_SECONDS) and yields to
  silent      a bare ``BEGIN IMMEDIATE`` that waits in SQLite's busy handler and leaves no
              marker (an earlier release's writer): it waits for the importer's
              transaction to end (ingest_tx.LOCK_MAX_SECONDS at most)

Reported: the writer's wait from its first try to holding the lock (median, p99, max, in
ms; only the tries made while the import ran; and the median of the waits of 1 ms or
more, the writes that found the lock taken), and the importer's own transactions and
lock holds. Wall times: the machine's load stretches them.

    .venv/bin/python benchmarks/ingest_waits.py --lines 40000
"""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from ingest import generate  # noqa: E402 - the same question-log mix as the ingest benchmark

from toolkit.store import db  # noqa: E402

BIN = os.path.dirname(sys.executable)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")


def announced(path):
    conn = db.connect(path, migrate=False)

    def write():
        t = time.perf_counter()
        with db.transaction(conn):
            waited = time.perf_counter() - t
            conn.execute("INSERT OR REPLACE INTO plantune_meta (key, value) VALUES ('bench', '1')")
        return waited

    return conn, write


def silent(path):
    conn = sqlite3.connect(path, timeout=db.BUSY_TIMEOUT_SECONDS, isolation_level=None)

    def write():
        t = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        waited = time.perf_counter() - t
        conn.execute("INSERT OR REPLACE INTO plantune_meta (key, value) VALUES ('bench', '2')")
        conn.execute("COMMIT")
        return waited

    return conn, write


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=40_000)
    ap.add_argument("--every", type=float, default=0.1, help="seconds between two writes")
    ap.add_argument("--way", choices=("announced", "silent"), default="announced")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="plantune-bench-waits-")
    try:
        state = os.path.join(work, "state")
        log_dir = os.path.join(state, "projects", "bench")
        os.makedirs(log_dir)
        generate(os.path.join(log_dir, "question-log.jsonl"), args.lines)
        env = dict(
            os.environ, GSTACK_STATE_ROOT=state, GSTACK_HOME=state, HOME=work, PLANTUNE_MIRROR="0"
        )
        env.pop("PLANTUNE_DB", None)
        path = os.path.join(work, "plantune.db")
        plantune = os.path.join(BIN, "plantune")
        subprocess.run([plantune, "init", "--db", path], env=env, check=True, capture_output=True)
        proc = subprocess.Popen(
            [plantune, "ingest", state, "--db", path, "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        waits = []

        def writer():
            conn, write = (announced if args.way == "announced" else silent)(path)
            try:
                while proc.poll() is None:
                    waited = write()
                    if proc.poll() is None:
                        waits.append(waited)
                    time.sleep(args.every)
            finally:
                conn.close()

        thread = threading.Thread(target=writer)
        thread.start()
        out, err = proc.communicate()
        thread.join()
        if proc.returncode != 0:
            raise SystemExit(f"plantune ingest failed: {err.decode()[-2000:]}")
        summary = json.loads(out)
        ms = [w * 1000 for w in waits]
        waited = [w for w in ms if w >= 1]  # found the lock taken
        print(
            f"{args.lines:,} lines; {args.way} writer, {len(ms)} writes during the import:"
            f" wait median {percentile(ms, 0.5):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms,"
            f" max {max(ms, default=float('nan')):.1f} ms; {len(waited)} waited 1 ms or"
            f" more, their median {percentile(waited, 0.5):.1f} ms"
        )
        print(
            f"importer: {summary['transactions']:,} transactions, lock held"
            f" {summary['lock_p50_ms']:.0f} ms (median), {summary['lock_p99_ms']:.0f} ms (p99),"
            f" {summary['lock_max_ms']:.0f} ms (max); load {os.getloadavg()[0]:.1f}"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
