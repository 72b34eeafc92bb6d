"""Benchmark: the dedup check of a hook or compat log call when gstack's file is read to its end.

A state root holds a project whose question-log.jsonl of --rows lines is fully imported
(and a second project's rows interleaved with it, --other-share of the table). Measured side
by side in alternating rounds, in one process, on the same database:

  before  the window query plantune ran up to this change: the project's newest 100 rows
          by id (sorting the project's index entries) searched for the event
  after   the whole check ``record_event`` now runs for a caught-up file: one stat, the
          file's ingest_state row, and one query that finds the project's newest rows
          among the table's newest rows first, with the out-of-order test of imported rows

Both for the project that wrote the table's newest rows (the one being worked in) and, as
``-other``, for the project that did not (its window is not among the newest 1,000 rows:
the probe finds too few and the project's index is sorted, as before).

The event is never a duplicate (the common case: a new tool_use_id), so every step runs.
Reports best-of and median microseconds per check and the ratio after / before.

Usage: python benchmarks/dedup_window.py [--rows 100000] [--other-share 0.2] [--trials 5]
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SLUG = "bench"
OTHER = "other"

BEFORE_SQL = (
    "SELECT 1 FROM (SELECT source, tool_use_id, question_index FROM question_log"
    " WHERE project = ? ORDER BY id DESC LIMIT ?)"
    " WHERE source = ? AND tool_use_id = ? AND question_index = ?"
)


def write_log(path, rows, start=0):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        for i in range(start, start + rows):
            record = {
                "skill": "ship",
                "question_id": "ship-changelog-voice-polish",
                "question_summary": f"Polish the changelog voice? ({i})",
                "user_choice": "accept",
                "source": "hook",
                "tool_use_id": f"tu-{i}",
                "ts": "2026-03-01T10:00:00.000Z",
            }
            f.write(json.dumps(record, separators=(",", ":")) + "\n")


def build(root, rows, other_share):
    from toolkit.core import seeded_db
    from toolkit.gstack import ingest

    conn = seeded_db.connect(os.path.join(root, "plantune.db"))
    mine = os.path.join(root, "projects", SLUG, "question-log.jsonl")
    other = os.path.join(root, "projects", OTHER, "question-log.jsonl")
    step = 10000
    for start in range(0, rows, step):
        n = min(step, rows - start)
        if other_share:
            write_log(other, int(n * other_share / (1 - other_share)), start)
            ingest.sync_project(conn, root, OTHER)
        write_log(mine, n, start)
        ingest.sync_project(conn, root, SLUG)
    return conn


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--other-share", type=float, default=0.2)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as root:
        os.environ["GSTACK_STATE_ROOT"] = root
        os.environ["PLANTUNE_DB"] = os.path.join(root, "plantune.db")
        print(f"building {args.rows:,} rows of {SLUG} (+{args.other_share:.0%} other)...")
        conn = build(root, args.rows, args.other_share)
        from toolkit.core.questions import DEDUP_WINDOW
        from toolkit.gstack import mirror

        check = mirror.backlog_twin(SLUG)
        check_other = mirror.backlog_twin(OTHER)
        event = ("hook", "tu-new", 0)
        assert not check(conn, *event)
        assert check(conn, "hook", f"tu-{args.rows - 1}", 0)  # the newest line is a twin

        def before():
            return conn.execute(BEFORE_SQL, (SLUG, DEDUP_WINDOW, *event)).fetchone()

        def after():
            return check(conn, *event)

        def before_other():
            return conn.execute(BEFORE_SQL, (OTHER, DEDUP_WINDOW, *event)).fetchone()

        def after_other():
            return check_other(conn, *event)

        runs = [("before", before), ("after", after)]
        if args.other_share:
            runs += [("before-other", before_other), ("after-other", after_other)]
        times = {name: [] for name, _ in runs}
        for _ in range(args.trials):
            for name, fn in runs:
                t = time.perf_counter()
                for _ in range(args.calls):
                    fn()
                times[name].append((time.perf_counter() - t) / args.calls * 1e6)
        conn.close()
    for name, ts in times.items():
        print(f"{name:12s} best {min(ts):8.0f} us   median {statistics.median(ts):8.0f} us")
    print(f"ratio after/before (best-of): {min(times['after']) / min(times['before']):.3f}")
    if args.other_share:
        ratio = min(times["after-other"]) / min(times["before-other"])
        print(f"ratio for the project that did not write the newest rows: {ratio:.3f}")


if __name__ == "__main__":
    main()
