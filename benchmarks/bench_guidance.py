"""Cost of tracing a session end, side by side with the bare CLI start-up, in one run.

Builds a throwaway state root with a synthetic history (question events over many
sessions), then times, each as a fresh process as Claude Code runs hooks:
  baseline  `plantune --version`                  (interpreter + CLI import)
  hook      `plantune hook session-end --mode M`  (trace + guidance per mode)
and, in-process, `runs.run_session` per mode and `guidance.build_proposal` over the
whole history. Prints medians and the
hook/baseline ratio. Usage: python benchmarks/bench_guidance.py [EVENTS] [REPEATS]
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from toolkit.core import (
    questions,
    seeded_db,  # noqa: E402
)
from toolkit.guidance import files, runs
from toolkit.guidance import proposals as guidance
from toolkit.store import db  # noqa: E402

BIN = os.path.join(os.path.dirname(sys.executable), "plantune")


def build_history(conn, slug, n_events):
    qids = [r[0] for r in conn.execute("SELECT id FROM registry_questions ORDER BY id")]
    with db.transaction(conn):
        for i in range(n_events):
            qid = qids[i % len(qids)]
            rec = questions.validate_event(
                {
                    "skill": "ship",
                    "question_id": qid,
                    "question_summary": f"Question {i % 97}?",
                    "user_choice": "accept" if i % 3 else "skip",
                    "recommended": "accept",
                    "session_id": f"s{i // 40}",
                    "ts": f"2026-01-01T00:00:{i % 60:02d}.{i % 1000:03d}Z",
                    "tool_use_id": f"t{i}",
                },
                allow_phase=True,
            )
            questions.record_event(conn, rec, slug, dedup=False)


def timed(argv, stdin=None, env=None):
    t = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t
    assert proc.returncode == 0, proc.stderr
    return elapsed


def main():
    n_events = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    with tempfile.TemporaryDirectory() as tmp:
        root, project = os.path.join(tmp, "state"), os.path.join(tmp, "proj")
        os.makedirs(project)
        open(os.path.join(project, "pyproject.toml"), "w").close()
        env = dict(
            os.environ,
            GSTACK_STATE_ROOT=root,
            GSTACK_HOME=root,
            PLANTUNE_DB=os.path.join(root, "plantune.db"),
            HOME=tmp,
        )
        env.pop("GSTACK_PROJECT_SLUG", None)
        # Installed packages run from cached bytecode; a sandbox that forbids writing it
        # would time the compiler instead of plantune.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ.update({k: env[k] for k in ("GSTACK_STATE_ROOT", "GSTACK_HOME", "PLANTUNE_DB")})
        conn = seeded_db.connect(env["PLANTUNE_DB"])
        slug = files.Layout(project).slug()
        build_history(conn, slug, n_events)
        files.init_guidance(files.Layout(project))
        payload = json.dumps({"session_id": "s1", "cwd": project, "hook_event_name": "SessionEnd"})

        base = [timed([BIN, "--version"], env=env) for _ in range(repeats)]
        rows = [("baseline: plantune --version", statistics.median(base))]
        for mode in ("off", "read", "propose"):
            hook = [
                timed([BIN, "hook", "session-end", "--mode", mode], payload, env)
                for _ in range(repeats)
            ]
            rows.append((f"hook session-end --mode {mode}", statistics.median(hook)))
        inproc = {}
        for mode in ("off", "read", "propose"):
            ts = []
            for i in range(repeats):
                t = time.perf_counter()
                runs.run_session(conn, session_id=f"s{i}", cwd=project, mode=mode)
                ts.append(time.perf_counter() - t)
            inproc[mode] = statistics.median(ts)
        props = []
        for _ in range(repeats):
            t = time.perf_counter()
            guidance.build_proposal(conn, files.Layout(project), slug)
            props.append(time.perf_counter() - t)
        log = os.path.join(root, "hook-errors.log")
        if os.path.exists(log):
            print(open(log).read(), file=sys.stderr)

    print(f"events: {n_events}, sessions: {n_events // 40}, repeats: {repeats} (medians)")
    b = rows[0][1]
    for name, t in rows:
        print(f"  {name:<34} {t * 1000:8.1f} ms   x{t / b:5.2f} of baseline")
    for mode, t in inproc.items():
        print(f"  {'run_session --mode ' + mode + ' (in-process)':<34} {t * 1000:8.1f} ms")
    print(f"  {'build_proposal (in-process)':<34} {statistics.median(props) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
