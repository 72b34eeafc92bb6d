"""Pacing benchmarks: interruptions saved, a 10,000-finding phase, and the hook-side cost.

1. The simulated 4-phase review (tests/test_pacing_simulation.py): questions shown by
   pacing vs the V0 baseline of asking all 40 findings.
2. `gstack-pacing-rank` on 10,000 findings in one call, beside the V0 baseline of
   logging the same 10,000 findings as question events (what asking all of them writes).
3. The hook-side call for a typical phase (10 findings) through the `gstack-pacing-rank`
   console script vs the interpreter floor `python -c pass` of the same venv, in
   alternating runs; the contract is a median ratio of at most 1.6x.

Usage: python benchmarks/pacing.py [--runs N] [--check]   (--check: exit 1 over 1.6x)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
BIN = os.path.dirname(sys.executable)
RATIO_LIMIT = 1.6
LOG_ONE = (
    "import time; from toolkit.store import paths; from toolkit.core import seeded_db, questions;"
    " c = seeded_db.connect(paths.db_path());"
    " r = questions.validate_event({'skill': 'plan-eng-review', 'question_id': 'bench-q',"
    " 'question_summary': 'One question', 'user_choice': 'a', 'session_id': str(time.time())},"
    " allow_phase=True);"
    " questions.record_event(c, r, paths.resolve_slug()); c.close()"
)


def findings(n, prefix="f", seed=7):
    import random

    rng = random.Random(seed)
    topics = ["cache ttl", "retry policy", "naming", "error copy", "index", "timeout", "docs"]
    out = []
    for k in range(n):
        out.append(
            {
                "id": f"{prefix}-{k}",
                "summary": f"Adjust the {rng.choice(topics)} in module {k % 97}",
                "severity": rng.randint(0, 2),
                "irreversibility": rng.randint(0, 2),
                "decision_matters": rng.randint(0, 2),
                "recommended": "fix-now",
                "options": ["fix-now", "defer"],
            }
        )
        if k % 50 == 0:
            out[-1]["door_type"] = "one-way"
    return out


def simulation():
    from tests.test_pacing_simulation import ONE_WAY, PHASES, run_review, shown
    from toolkit.core import seeded_db

    print("== 4-phase review, 40 findings (8 one-way) vs asking all 40 (V0)")
    one_way = {fid for p in PHASES for fid, _, _ in ONE_WAY[p]}
    rows = []
    for budget in (None, 6):
        with tempfile.TemporaryDirectory() as d:
            conn = seeded_db.connect(os.path.join(d, "sim.db"))
            outs = run_review(conn, budget=budget)
            conn.close()
        asked = shown(outs)
        per_phase = [len(o["surface"]) for o in outs]
        rows.append((budget, len(asked), len(one_way & set(asked)), per_phase))
        label = "per-phase cap only" if budget is None else f"chain budget {budget}"
        print(
            f"  {label:<20} shown {len(asked):>2}/40 ({len(asked) / 40:.0%} of baseline),"
            f" one-way shown {len(one_way & set(asked))}/8, per phase {per_phase},"
            f" silent {40 - len(asked)}"
        )
    return rows


def run(cmd, stdin=None, env=None, cwd=None):
    start = time.perf_counter()
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {p.stderr.strip()}")
    return elapsed


def big_call(env, cwd, runs=3):
    from toolkit.core import questions, seeded_db
    from toolkit.store import db

    print("== 10,000 findings in one call")
    rank_times = []
    for r in range(runs):
        request = {"session_id": f"big-{r}", "phase": "eng", "findings": findings(10_000, f"b{r}")}
        rank_times.append(
            run([os.path.join(BIN, "gstack-pacing-rank")], json.dumps(request), env, cwd)
        )
    # V0 baseline: every finding logged as an answered question, in one process.
    log_times = []
    for r in range(runs):
        with tempfile.TemporaryDirectory() as d:
            conn = seeded_db.connect(os.path.join(d, "log.db"))
            start = time.perf_counter()
            with db.transaction(conn):
                for f in findings(10_000, f"l{r}"):
                    rec = questions.validate_event(
                        {
                            "skill": "plan-eng-review",
                            "question_id": f["id"],
                            "question_summary": f["summary"],
                            "user_choice": f["recommended"],
                            "recommended": f["recommended"],
                            "session_id": f"log-{r}",
                            "phase": "eng",
                        },
                        allow_phase=True,
                    )
                    questions.record_event(conn, rec, "bench")
            log_times.append(time.perf_counter() - start)
            conn.close()
    rank_s, log_s = statistics.median(rank_times), statistics.median(log_times)
    print(
        f"  gstack-pacing-rank, 10,000 findings (whole process): median {rank_s:.2f} s"
        f" ({rank_s / 10_000 * 1e6:.0f} us per finding) over {runs} runs"
    )
    print(f"  baseline: log 10,000 question events in-process:   median {log_s:.2f} s")
    print(f"  ratio rank / log-all: {rank_s / log_s:.2f}x")
    return rank_s, log_s


def hook_call(env, cwd, runs):
    print(f"== hook-side call: 10 findings, {runs} alternating runs each")
    floor_cmd = [sys.executable, "-c", "pass"]
    rank_cmd = [os.path.join(BIN, "gstack-pacing-rank")]
    for i in range(3):  # warm the page cache, the bytecode cache and the slug cache
        run(floor_cmd, env=env)
        run(
            rank_cmd,
            json.dumps(
                {"session_id": f"warm-{i}", "phase": "eng", "findings": findings(10, f"w{i}")}
            ),
            env,
            cwd,
        )
    # Where the time goes: importing the hot-path modules alone (no database, no work).
    import_cmd = [sys.executable, "-c", "import toolkit.pacing.rank, toolkit.store.paths"]
    # Reference: one question event written by a one-shot process through the same
    # modules (the write path every hook shares: open, insert, commit, close).
    log_cmd = [sys.executable, "-c", LOG_ONE]
    floor, imports, logs, rank = [], [], [], []
    for i in range(runs):
        request = json.dumps(
            {
                "session_id": f"hook-{i}",
                "chain_id": "bench-chain",
                "phase": "eng",
                "budget": 10_000,
                "findings": findings(10, f"h{i}", seed=i),
            }
        )
        floor.append(run(floor_cmd, env=env))
        imports.append(run(import_cmd, env=env))
        logs.append(run(log_cmd, env=env, cwd=cwd))
        rank.append(run(rank_cmd, request, env, cwd))
    f_med, i_med, l_med, r_med = (statistics.median(x) for x in (floor, imports, logs, rank))
    ratio = r_med / f_med
    print(
        f"  python -c pass (floor):      median {f_med * 1000:.1f} ms  (min {min(floor) * 1000:.1f})"
    )
    print(
        f"  import toolkit.pacing.rank only:  median {i_med * 1000:.1f} ms  (min {min(imports) * 1000:.1f})"
        f"  = {i_med / f_med:.2f}x floor"
    )
    print(
        f"  log one question event:      median {l_med * 1000:.1f} ms  (min {min(logs) * 1000:.1f})"
        f"  = {l_med / f_med:.2f}x floor"
    )
    print(
        f"  gstack-pacing-rank (10):     median {r_med * 1000:.1f} ms  (min {min(rank) * 1000:.1f})"
    )
    verdict = "ok" if ratio <= RATIO_LIMIT else "OVER"
    print(
        f"  ratio: {ratio:.2f}x (limit {RATIO_LIMIT}x: {verdict});"
        f" min/min {min(rank) / min(floor):.2f}x"
    )
    return ratio


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=40, help="alternating runs for the hook-side call"
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when the ratio is over the limit"
    )
    args = parser.parse_args()
    simulation()
    with tempfile.TemporaryDirectory() as tmp:
        project = os.path.join(tmp, "project")
        os.makedirs(project)
        open(os.path.join(project, "pyproject.toml"), "w").close()
        env = dict(
            os.environ,
            HOME=tmp,
            GSTACK_STATE_ROOT=os.path.join(tmp, "state"),
            PLANTUNE_DB=os.path.join(tmp, "state", "plantune.db"),
        )
        env.pop("GSTACK_PROJECT_SLUG", None)
        # An installed package runs from cached bytecode; keep that cache out of the repo
        # (and do not let a PYTHONDONTWRITEBYTECODE in the caller's shell force recompiles).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
        subprocess.run(
            [os.path.join(BIN, "plantune"), "init"], env=env, check=True, capture_output=True
        )
        ratio = hook_call(env, project, max(30, args.runs))
        big_call(env, project)
    if args.check and ratio > RATIO_LIMIT:
        sys.exit(1)


if __name__ == "__main__":
    main()
