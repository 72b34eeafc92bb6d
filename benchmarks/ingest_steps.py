"""Benchmark: what each step of importing a gstack question-log line costs, per line.

Generates N lines (default 100,000; the generator of benchmarks/ingest.py), then times
each step of `plantune ingest` on them in this one process, one step after the other:

  decode          the line's JSON into a dict (json_lite, gstack's number rules)
  validation      gstack's rules for a question event (the importer's question_record)
  key             the deterministic event key (sha1 of project and canonical record)
  classification  the door type (registry, else the keyword classifier), every line
                  through the rules
  classify/import the same through the import's DoorCache (a question asked again with
                  the same id, skill, category and text keeps its first verdict)
  row             the rest of the stored row (raw JSON, extra fields, phase, ...)
  insert          INSERT into question_log with no trigger but the tombstone check
  rollups/trigger the rollup triggers, row by row (the hot path's way): insert with them
                  minus insert without
  rollups/bulk    the set-based upkeep over the new rows (a large import's way)
  write           the same rows written as the import writes them (its batches, its
                  transactions and their offsets, the set-based upkeep, its checkpoints):
                  the real cost of storing a line, to set beside insert + rollups/bulk,
                  which are one transaction

With --indexes, also what each index of question_log adds to the insert: the plain insert
with all of them minus the same insert with that one index dropped.

The figures are CPU microseconds per line (this process's CPU time: a loaded machine
stretches wall time, not this), best of --repeat runs; the whole import is in
benchmarks/ingest.py (side by side with sqlite-utils).

    .venv/bin/python benchmarks/ingest_steps.py --lines 100000
    .venv/bin/python benchmarks/ingest_steps.py --unique-summaries   # the worst case
    .venv/bin/python benchmarks/ingest_steps.py --lines 30000 --only-write   # storing alone
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from ingest import generate  # noqa: E402 - the benchmark's own generator

from toolkit.core import doors, questions, seeded_db  # noqa: E402
from toolkit.gstack import ingest_base, ingest_jsonl, ingest_tx  # noqa: E402
from toolkit.store import json_lite, rollups  # noqa: E402

PROJECT = "bench-proj"
TS = "2026-10-01T00:00:00.000Z"


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def fresh_db(path, triggers=True, drop_index=None):
    conn = seeded_db.connect(path)
    if drop_index:
        conn.execute(f'DROP INDEX "{drop_index}"')
    if not triggers:
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'question_log'"
            " AND name != 'question_log_tombstoned'"
        ).fetchall():
            conn.execute(f'DROP TRIGGER "{name}"')
    return conn


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--indexes", action="store_true", help="measure each index's cost too")
    ap.add_argument("--only-write", action="store_true", help="measure the write step alone")
    ap.add_argument(
        "--unique-summaries",
        action="store_true",
        help="every summary different, every hook id random (the worst case)",
    )
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="plantune-steps-")
    try:
        log = os.path.join(work, "question-log.jsonl")
        generate(log, args.lines, unique=args.unique_summaries)
        with open(log, encoding="utf-8") as f:
            texts = [line.rstrip("\n") for line in f if line.strip()]
        n = len(texts)
        conn = fresh_db(os.path.join(work, "registry.db"))
        registry = dict(conn.execute("SELECT id, door_type FROM registry_questions"))
        conn.close()
        objs = [json_lite.loads(t) for t in texts]
        recs = [ingest_jsonl.question_record(o, TS) for o in objs]
        keys = [questions.event_key(PROJECT, o) for o in objs]

        def decode():
            for t in texts:
                json_lite.loads(t)

        def validation():
            for o in objs:
                ingest_jsonl.question_record(o, TS)

        def key():
            for o in objs:
                questions.event_key(PROJECT, o)

        def classification():
            for r in recs:
                doors.decide(
                    r["question_id"],
                    r.get("skill"),
                    r.get("category"),
                    r.get("question_summary"),
                    registry,
                )

        def classification_cached():
            cache = ingest_jsonl.DoorCache()
            for r in recs:
                cache(
                    r["question_id"],
                    r.get("skill"),
                    r.get("category"),
                    r.get("question_summary"),
                    registry,
                )

        def prepared(classify):
            return [
                questions.prepare_row(
                    r,
                    PROJECT,
                    registry=registry,
                    key=k,
                    raw=t,
                    ingested_from=f"{log}:{i}",
                    recorded_at=TS,
                    default_ts=TS,
                    classify=classify,
                )
                for i, (r, k, t) in enumerate(zip(recs, keys, texts))
            ]

        harmless = doors.decide("bench-q", None, None, "Rename a helper", {})

        def fixed_door(question_id, skill, category, summary, registry):
            return harmless

        rows = prepared(ingest_jsonl.DoorCache())  # the verdicts doors.decide gives
        results = {}
        if not args.only_write:
            results["decode"] = best(decode, args.repeat)
            results["validation"] = best(validation, args.repeat)
            results["key"] = best(key, args.repeat)
            results["classification"] = best(classification, args.repeat)
            results["classify/import"] = best(classification_cached, args.repeat)
            results["row"] = best(lambda: prepared(fixed_door), args.repeat)

        def insert(triggers, bulk=False, drop_index=None):
            def go():
                path = os.path.join(work, f"insert-{time.monotonic_ns()}.db")
                c = fresh_db(path, triggers, drop_index)
                # the import's settings for a large read
                c.execute(f"PRAGMA cache_size = -{ingest_jsonl.LARGE_READ_CACHE_KIB}")
                c.execute(f"PRAGMA temp_store = {ingest_jsonl.LARGE_READ_TEMP_STORE}")
                t = time.process_time()
                c.execute("BEGIN IMMEDIATE")
                if bulk:
                    b = rollups.Bulk(c)
                    b.put(questions.INSERT_SQL, rows)
                    b.finish()
                else:
                    c.executemany(questions.INSERT_SQL, rows)
                c.execute("COMMIT")
                elapsed = time.process_time() - t
                c.close()
                return elapsed

            return min(go() for _ in range(args.repeat))

        def write():
            path = os.path.join(work, f"write-{time.monotonic_ns()}.db")
            c = fresh_db(path)
            c.execute(f"PRAGMA cache_size = -{ingest_jsonl.LARGE_READ_CACHE_KIB}")
            c.execute(f"PRAGMA temp_store = {ingest_jsonl.LARGE_READ_TEMP_STORE}")
            with open(log, "rb") as fh:
                ends, end = [], 0
                for line in fh:
                    end += len(line)
                    ends.append(end)
                st = os.fstat(fh.fileno())
                report = ingest_base.FileReport(log, "question-log", PROJECT)
                tx = ingest_tx.Tx(c)
                tx.checkpoint_between()
                writer = ingest_jsonl._BatchWriter(
                    c, log, "question-log", st, fh.fileno(), report, tx, False,
                    rollups.Bulk(c), None, 0,
                )  # fmt: skip
                handler = ingest_jsonl._QuestionLog
                size = ingest_tx.BATCH_LINES
                t = time.process_time()
                for lo in range(0, n, size):
                    marks = [(ends[i], i + 1) for i in range(lo, min(lo + size, n))]
                    prepared = (rows[lo : lo + size], marks, [], [])
                    writer.land(handler, prepared, *marks[-1], marks[-1][0], lo + size >= n)
                tx.commit()
                elapsed = time.process_time() - t
                tx.restore()
            assert report.imported == n, report.imported
            c.close()
            write.transactions = len(tx.holds)
            return elapsed

        if not args.only_write:
            plain = insert(False)
            results["insert"] = plain
            results["rollups/trigger"] = insert(True) - plain
            results["rollups/bulk"] = insert(True, bulk=True) - plain
        results["write"] = min(write() for _ in range(args.repeat))
        asked = {
            (r["question_id"], r.get("skill"), r.get("category"), r.get("question_summary"))
            for r in recs
        }
        print(
            f"{n:,} lines, {len(asked):,} distinct questions to classify"
            f" ({len(asked) / n:.0%}); CPU microseconds per line (best of {args.repeat}):\n"
        )
        print(f"{'step':<18}{'us/line':>10}")
        for name, seconds in results.items():
            print(f"{name:<18}{seconds / n * 1e6:>10.1f}")
        skip = ("rollups/trigger", "classification", "insert", "rollups/bulk")
        total = sum(v for k, v in results.items() if k not in skip)
        print(f"{'sum (import path)':<18}{total / n * 1e6:>10.1f}")
        print(f"(write: {write.transactions:,} transactions)")
        if args.indexes and not args.only_write:
            c = fresh_db(os.path.join(work, "indexes.db"))
            names = [
                r[0]
                for r in c.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'index'"
                    " AND tbl_name = 'question_log' AND sql IS NOT NULL ORDER BY name"
                )
            ]
            c.close()
            print(f"\n{'index of question_log':<30}{'us/line':>10}")
            for name in names:
                cost = plain - insert(False, drop_index=name)
                print(f"{name:<30}{cost / n * 1e6:>10.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
