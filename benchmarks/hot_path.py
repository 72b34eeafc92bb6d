"""Hot-path benchmark: the commands agents run on every question, against interpreter start-up.

Runs, in alternating rounds (so load changes on a shared machine hit every command
alike), the venv's own ``python -c pass`` (the floor: interpreter start-up with this
venv's site-packages) and:

  gstack-question-log '<valid event>'
  gstack-question-preference --check <two-way id>
  gstack-question-preference --check <two-way id> --summary-stdin  (a 200-character summary)
  plantune check <two-way id>
  plantune log '<valid event>'

and prints each median wall time as a ratio to the floor's median. Everything happens in
a fresh temporary state root with mirroring on (gstack's files kept current, as by
default). GSTACK_QUESTION_LOG_NO_DERIVE is set: a detached profile derive after each
log would compete with the next measurement for the CPU. PYTHONDONTWRITEBYTECODE is
dropped so the warm-up writes the package's byte-code, as any installed copy has it.

The child's CPU time (user + system) is reported beside the wall time: on a shared, busy
machine it is the steadier of the two. Targets (issue 3): gstack-question-log and --check <= 1.3x the floor, plantune check/log
<= 1.6x. ``--strict`` exits 1 when a median misses its target.

With ``--baseline DIR`` (a checkout of another version of the code, e.g. made with
``git archive <rev> | tar -x -C DIR``) every command also runs from DIR (PYTHONPATH=DIR,
same interpreter and venv), interleaved in the same rounds, and each command's ratio is
reported beside the baseline's (the last column divides the two ratios).

Usage: python benchmarks/hot_path.py [--runs 30] [--strict] [--json] [--baseline DIR]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(sys.executable)
TWO_WAY_ID = "ship-changelog-voice-polish"
# A 200-character two-way summary: the door classifier reads all of it.
SUMMARY = ("Should the settings page keep the compact layout on narrow screens, with the "
           "section headings shortened and the help text moved under each field so the "
           "form reads top to bottom?")[:200].encode()
TARGETS = {
    "gstack-question-log": 1.3,
    "gstack-question-preference --check": 1.3,
    "gstack-question-preference --check --summary-stdin": 1.3,
    "plantune check": 1.6,
    "plantune log": 1.6,
}


def event(i):
    return json.dumps({
        "skill": "ship", "question_id": TWO_WAY_ID,
        "question_summary": f"Polish the changelog voice? (run {i})",
        "user_choice": "accept", "recommended": "accept", "session_id": "bench",
    })


def commands(i):
    return {
        "floor (python -c pass)": [sys.executable, "-c", "pass"],
        "gstack-question-log": [os.path.join(BIN, "gstack-question-log"), event(i)],
        "gstack-question-preference --check": [
            os.path.join(BIN, "gstack-question-preference"), "--check", TWO_WAY_ID],
        "gstack-question-preference --check --summary-stdin": [
            os.path.join(BIN, "gstack-question-preference"), "--check", TWO_WAY_ID,
            "--summary-stdin"],
        "plantune check": [os.path.join(BIN, "plantune"), "check", TWO_WAY_ID],
        "plantune log": [os.path.join(BIN, "plantune"), "log", event(i)],
    }


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(argv, env):
    """(wall seconds, CPU seconds of the child): CPU time varies less on a busy machine."""
    stdin = SUMMARY if "--summary-stdin" in argv else b""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, input=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}")
    return elapsed, _children_cpu() - cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30, help="alternating rounds (>= 30)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--baseline", metavar="DIR",
                    help="also run every command from the code in DIR (PYTHONPATH=DIR)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as root:
        env = dict(os.environ)
        env.update({
            "HOME": root, "GSTACK_STATE_ROOT": root, "GSTACK_HOME": root,
            "PLANTUNE_DB": os.path.join(root, "plantune.db"),
            "GSTACK_PROJECT_SLUG": "bench", "GSTACK_QUESTION_LOG_NO_DERIVE": "1",
        })
        env.pop("PLANTUNE_MIRROR", None)
        # Installed packages run from byte-code; an editable checkout only gets its
        # __pycache__ written if the environment allows it (the warm-up writes it).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # Create and migrate the database once; the hot path never migrates.
        subprocess.run([os.path.join(BIN, "plantune"), "init"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        base_env = None
        if args.baseline:
            base_env = dict(env, PYTHONPATH=os.path.abspath(args.baseline))
            base_env["PLANTUNE_DB"] = os.path.join(root, "baseline.db")
            subprocess.run([os.path.join(BIN, "plantune"), "init"], env=base_env, check=True,
                           stdout=subprocess.DEVNULL)

        def all_commands(i):
            out = {name: (argv, env) for name, argv in commands(i).items()}
            if base_env is not None:
                out.update({f"{name} [baseline]": (argv, base_env)
                            for name, argv in commands(i).items() if not name.startswith("floor")})
            return out

        for argv, e in all_commands(-1).values():  # warm the page cache
            run_once(argv, e)
        times = {name: [] for name in all_commands(0)}
        for i in range(args.runs):
            items = list(all_commands(i).items())
            # Rotate the order each round so no command always runs right after another.
            k = i % len(items)
            for name, (argv, e) in items[k:] + items[:k]:
                times[name].append(run_once(argv, e))

    floor_name = next(iter(times))
    floor = statistics.median(t for t, _ in times[floor_name])
    floor_cpu = statistics.median(c for _, c in times[floor_name])
    results = []
    for name, pairs in times.items():
        values = sorted(t for t, _ in pairs)
        med = statistics.median(values)
        cpu = statistics.median(c for _, c in pairs)
        results.append({
            "command": name,
            "median_ms": round(med * 1000, 2),
            "p90_ms": round(values[int(0.9 * (len(values) - 1))] * 1000, 2),
            "ratio": round(med / floor, 3),
            "cpu_ms": round(cpu * 1000, 2),
            "cpu_ratio": round(cpu / floor_cpu, 3) if floor_cpu else None,
            "target": TARGETS.get(name),
        })
    by_name = {r["command"]: r for r in results}
    for r in results:
        base = by_name.get(f"{r['command']} [baseline]")
        if base:
            r["vs_baseline"] = round(r["ratio"] / base["ratio"], 3)
            r["cpu_vs_baseline"] = round(r["cpu_ratio"] / base["cpu_ratio"], 3)
    missed = [r for r in results if r["target"] and r["ratio"] > r["target"]]
    if args.json:
        print(json.dumps({"runs": args.runs, "load_average": os.getloadavg(),
                          "results": results}, indent=2))
    else:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"{args.runs} alternating rounds; medians per call; ratios to the floor"
              f" (load average after: {load})")
        print(f"{'command':62s} {'wall':>9s} {'p90':>9s} {'ratio':>7s} {'cpu':>9s} {'ratio':>7s}"
              "  target (wall)  vs baseline (wall, cpu)")
        for r in results:
            target = f"<= {r['target']}x" if r["target"] else ""
            verdict = ("ok" if r["ratio"] <= r["target"] else "MISSED") if r["target"] else ""
            versus = (f"  {r['vs_baseline']:.3f} {r['cpu_vs_baseline']:.3f}"
                      if "vs_baseline" in r else "")
            print(f"{r['command']:62s} {r['median_ms']:7.2f}ms {r['p90_ms']:7.2f}ms"
                  f" {r['ratio']:6.2f}x {r['cpu_ms']:7.2f}ms {r['cpu_ratio']:6.2f}x"
                  f"  {target} {verdict}{versus}")
    if args.strict and missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
