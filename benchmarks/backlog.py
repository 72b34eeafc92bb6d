"""Benchmark: the first call after switching from gstack, with a large unimported backlog.

A state root holds a gstack ``question-log.jsonl`` of --lines lines (default 1,000,000)
that the database has never seen. Measured side by side in alternating rounds:

  usual   ``gstack-question-preference --check`` and ``plantune hook post-tool-use`` as
          the first call on a fresh copy of a database that is caught up (its offsets
          cover the whole file: nothing to import)
  first   the same two commands as the first call on a fresh copy of a database that has
          read nothing: the backlog is handed to the background ingest, which each trial
          then stops (by its process id) before the next trial starts

Target: first / usual <= 1.5x for both commands. The report gives medians and best-of.

Usage: python benchmarks/backlog.py [--lines 1000000] [--trials 10]
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(sys.executable)
SLUG = "bench"
TWO_WAY_ID = "ship-changelog-voice-polish"
QUESTION = "Polish the changelog voice before shipping? <gstack-qid:ship-changelog-voice-polish>"


def write_backlog(path, lines):
    template = (
        '{"skill":"ship","question_id":"%s","question_summary":"Polish the changelog'
        ' voice? (%d)","user_choice":"accept","recommended":"accept",'
        '"session_id":"s%d","ts":"2026-0%d-%02dT10:00:00.000Z"}\n'
    )
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for start in range(0, lines, 10000):
            f.write(
                "".join(
                    template % (TWO_WAY_ID, i, i % 50, 1 + i % 9, 1 + i % 28)
                    for i in range(start, min(lines, start + 10000))
                )
            )


def hook_payload(i):
    return json.dumps(
        {
            "session_id": "bench",
            "cwd": "/",
            "hook_event_name": "PostToolUse",
            "tool_name": "AskUserQuestion",
            "tool_use_id": f"tu-{i}",
            "tool_input": {
                "questions": [
                    {"question": QUESTION, "options": ["A) Polish it (recommended)", "B) Ship"]}
                ]
            },
            "tool_response": {"answers": {QUESTION: "A) Polish it"}},
        }
    ).encode()


def timed(argv, env, stdin=None):
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, input=stdin, capture_output=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{argv} failed: {proc.stderr.decode(errors='replace')}")
    return elapsed


def stop_background(db_file):
    """Stop the background ingest started for ``db_file`` (found by its command line)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if db_file.encode() in args and b"toolkit.gstack.backlog" in b" ".join(args):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1000000)
    ap.add_argument("--trials", type=int, default=10)
    args = ap.parse_args()
    pref = os.path.join(BIN, "gstack-question-preference")
    plantune = os.path.join(BIN, "plantune")
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "state")
        log = os.path.join(root, "projects", SLUG, "question-log.jsonl")
        t = time.perf_counter()
        write_backlog(log, args.lines)
        print(
            f"{args.lines:,} lines ({os.path.getsize(log) / 1048576:.0f} MiB) written in"
            f" {time.perf_counter() - t:.1f}s",
            flush=True,
        )
        base = {
            **os.environ,
            "HOME": tmp,
            "GSTACK_STATE_ROOT": root,
            "GSTACK_HOME": root,
            "GSTACK_PROJECT_SLUG": SLUG,
            "GSTACK_QUESTION_LOG_NO_DERIVE": "1",
        }
        base.pop("PLANTUNE_MIRROR", None)
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        pristine = os.path.join(tmp, "pristine.db")
        subprocess.run(
            [plantune, "init", "--db", pristine], env=base, check=True, capture_output=True
        )
        # The caught-up database: its offsets say the whole file was read. Marking it read
        # stands in for importing a million lines (what matters is that nothing is new).
        caught_up = os.path.join(tmp, "caught-up.db")
        shutil.copy(pristine, caught_up)
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from toolkit.core import seeded_db
        from toolkit.gstack import file_state
        from toolkit.store import db

        conn = seeded_db.connect(caught_up)
        st = os.stat(log)
        with open(log, "rb") as f:
            head, tail = file_state.fingerprints(f.fileno(), st.st_size)
        with db.transaction(conn):
            db.save_ingest_state(conn, log, "question-log", st, st.st_size, args.lines, head, tail)
        conn.close()
        usual_env = dict(base, PLANTUNE_DB=caught_up)
        for _ in range(3):  # warm-up: byte-code, page cache
            timed([pref, "--check", TWO_WAY_ID], usual_env)
            timed([plantune, "hook", "post-tool-use"], usual_env, hook_payload(0))
        results = {
            "--check": {"usual": [], "first": []},
            "hook post-tool-use": {"usual": [], "first": []},
        }
        for i in range(args.trials):
            for name, argv, stdin in (
                ("--check", [pref, "--check", TWO_WAY_ID], None),
                ("hook post-tool-use", [plantune, "hook", "post-tool-use"], hook_payload(i)),
            ):
                # Both are a first call on a fresh copy of a database; only the backlog
                # differs (the usual one has read the whole file already).
                usual = os.path.join(tmp, f"usual-{i}-{len(name)}.db")
                shutil.copy(caught_up, usual)
                results[name]["usual"].append(timed(argv, dict(base, PLANTUNE_DB=usual), stdin))
                fresh = os.path.join(tmp, f"fresh-{i}-{len(name)}.db")
                shutil.copy(pristine, fresh)
                results[name]["first"].append(timed(argv, dict(base, PLANTUNE_DB=fresh), stdin))
                stop_background(fresh)
                time.sleep(0.2)  # let the stopped process's CPU settle before the next round
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.trials} trials (load average after: {load})")
    for name, r in results.items():
        usual_med, first_med = statistics.median(r["usual"]), statistics.median(r["first"])
        usual_best, first_best = min(r["usual"]), min(r["first"])
        print(
            f"{name:20s} usual median {usual_med * 1000:7.2f} ms, best {usual_best * 1000:7.2f}"
            f" ms | first call median {first_med * 1000:7.2f} ms, best"
            f" {first_best * 1000:7.2f} ms | first/usual median {first_med / usual_med:.2f}x,"
            f" best {first_best / usual_best:.2f}x (target <= 1.5x)"
        )


if __name__ == "__main__":
    main()
