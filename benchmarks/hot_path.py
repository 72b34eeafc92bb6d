"""Hot-path benchmark: the commands agents run on every question, against interpreter start-up.

Runs, in alternating rounds (so load changes on a shared machine hit every command
alike), the floor ``python -I -S -c pass`` (the bare interpreter: isolated, no site) and:

  gstack-question-preference --check <two-way id>
  gstack-question-preference --check <two-way id> --summary-stdin  (a 200-character summary)
  gstack-question-log '<valid event>'
  plantune hook pre-tool-use      (an AskUserQuestion with no preference: passes through)
  plantune hook post-tool-use     (records the answered question)
  plantune check <two-way id>
  plantune log '<valid event>'
  gstack-developer-profile --derive  (the profile from the events logged so far)
  python -c pass                  (the venv's plain start-up, for reference)

and, for the four targets, the same command started by the entry-point script an
installer writes for a [project.scripts] entry ("before:", what plantune had before its
launcher), and prints each median wall time as a ratio to the floor's median, and the best-of
ratio (best time over best floor time), the steadier figure on a busy machine.
Everything happens in a fresh temporary state root with mirroring on (gstack's files
kept current, as by default). GSTACK_QUESTION_LOG_NO_DERIVE is set: a detached profile
derive after each log would compete with the next measurement for the CPU.
PYTHONDONTWRITEBYTECODE is dropped so the warm-up writes the package's byte-code, as any
installed copy has it.

Targets (ratio to the floor): --check <= 1.8x, --check --summary-stdin <= 1.9x,
gstack-question-log <= 2.0x, hook pre-tool-use pass-through <= 1.8x, --derive <= 2.5x
(its time does not grow with the history: benchmarks/derive_scale.py). ``--strict`` exits
1 when a best-of ratio misses its target.

With ``--baseline DIR`` (a checkout of another version of the code, e.g. made with
``git archive <rev> | tar -x -C DIR``) every command also runs from DIR, started exactly
as an install starts it: DIR's own launchers in a temporary bin folder beside a link to
this interpreter, the package found through a ``.pth`` file (as for an editable
install), so both versions start with ``python -I -S``. The runs are interleaved in the
same rounds, and each command's ratio is reported beside the baseline's (the last
column divides the two ratios).

Usage: python benchmarks/hot_path.py [--runs 30] [--strict] [--json] [--baseline DIR]
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from toolkit import resident

BIN = os.path.dirname(sys.executable)
TWO_WAY_ID = "ship-changelog-voice-polish"
FLOOR = "floor (python -I -S -c pass)"
TARGETS = {
    "gstack-question-preference --check": 1.8,
    "--check --summary-stdin": 1.9,
    "gstack-question-log": 2.0,
    "hook pre-tool-use (pass-through)": 1.8,
    "gstack-developer-profile --derive": 2.5,
}
# A 200-character two-way summary: the door classifier reads all of it.
SUMMARY = (
    "Should the settings page keep the compact layout on narrow screens, with the "
    "section headings shortened and the help text moved under each field so the "
    "form reads top to bottom?"
)[:200].encode()
QUESTION = "Polish the changelog voice before shipping? <gstack-qid:ship-changelog-voice-polish>"


def event(i):
    return json.dumps(
        {
            "skill": "ship",
            "question_id": TWO_WAY_ID,
            "question_summary": f"Polish the changelog voice? (run {i})",
            "user_choice": "accept",
            "recommended": "accept",
            "session_id": "bench",
        }
    )


def hook_payload(event_name, i):
    payload = {
        "session_id": "bench",
        "cwd": "/",
        "hook_event_name": event_name,
        "tool_name": "AskUserQuestion",
        "tool_use_id": f"tu-{i}",
        "tool_input": {
            "questions": [
                {"question": QUESTION, "options": ["A) Polish it (recommended)", "B) Ship as is"]}
            ]
        },
    }
    if event_name == "PostToolUse":
        payload["tool_response"] = {"answers": {QUESTION: "A) Polish it"}}
    return json.dumps(payload).encode()


# What an installer writes for a [project.scripts] entry point: the start-up plantune's
# commands had before the launcher. Written into a temporary folder so both run side by side.
SHIM = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from {module} import {function}
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit({function}())
"""
SHIMMED = {
    "gstack-question-preference": ("toolkit.gstack.compat", "question_preference_main"),
    "gstack-question-log": ("toolkit.gstack.compat", "question_log_main"),
    "plantune": ("toolkit.cli.fast", "main"),
}


def write_shims(directory):
    for name, (module, function) in SHIMMED.items():
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.write(SHIM.format(python=sys.executable, module=module, function=function))
        os.chmod(path, 0o755)


def baseline_bin(directory, root):
    """A bin folder whose commands start the code in ``directory`` as an install would."""
    prefix = os.path.join(root, "baseline-prefix")
    bin_dir = os.path.join(prefix, "bin")
    site = os.path.join(prefix, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
    os.makedirs(bin_dir)
    os.makedirs(site)
    os.symlink(sys.executable, os.path.join(bin_dir, "python"))
    # The launcher looks for the package in a .pth file named for plantune (editable install).
    with open(os.path.join(site, "_plantune_baseline.pth"), "w") as f:
        f.write(os.path.abspath(directory) + "\n")
    launchers = os.path.join(directory, "launchers")
    for name in os.listdir(launchers):
        shutil.copy(os.path.join(launchers, name), os.path.join(bin_dir, name))
    return bin_dir


def commands(i, shim_dir, bin_dir=BIN):
    """name -> (argv, stdin bytes or None)."""
    pref = os.path.join(bin_dir, "gstack-question-preference")
    plantune = os.path.join(bin_dir, "plantune")
    old_pref = os.path.join(shim_dir, "gstack-question-preference")
    old_plantune = os.path.join(shim_dir, "plantune")
    return {
        FLOOR: ([sys.executable, "-I", "-S", "-c", "pass"], None),
        "gstack-question-preference --check": ([pref, "--check", TWO_WAY_ID], None),
        "--check --summary-stdin": ([pref, "--check", TWO_WAY_ID, "--summary-stdin"], SUMMARY),
        "gstack-question-log": ([os.path.join(bin_dir, "gstack-question-log"), event(i)], None),
        "hook pre-tool-use (pass-through)": (
            [plantune, "hook", "pre-tool-use"],
            hook_payload("PreToolUse", i),
        ),
        "hook post-tool-use": ([plantune, "hook", "post-tool-use"], hook_payload("PostToolUse", i)),
        "gstack-developer-profile --derive": (
            [os.path.join(bin_dir, "gstack-developer-profile"), "--derive"],
            None,
        ),
        "plantune check": ([plantune, "check", TWO_WAY_ID], None),
        "plantune log": ([plantune, "log", event(i)], None),
        "python -c pass (venv start-up)": ([sys.executable, "-c", "pass"], None),
        "before: --check": ([old_pref, "--check", TWO_WAY_ID], None),
        "before: --check --summary-stdin": (
            [old_pref, "--check", TWO_WAY_ID, "--summary-stdin"],
            SUMMARY,
        ),
        "before: gstack-question-log": (
            [os.path.join(shim_dir, "gstack-question-log"), event(i)],
            None,
        ),
        "before: hook pre-tool-use": (
            [old_plantune, "hook", "pre-tool-use"],
            hook_payload("PreToolUse", i),
        ),
    }


# The targets again, each call in a process of its own (PLANTUNE_SERVER=off): what every
# call costs when no resident server runs (the first call after 10 idle minutes).
OWN_PROCESS = {
    "own process: --check": "gstack-question-preference --check",
    "own process: --summary-stdin": "--check --summary-stdin",
    "own process: gstack-question-log": "gstack-question-log",
    "own process: hook pre-tool-use": "hook pre-tool-use (pass-through)",
    "own process: --derive": "gstack-developer-profile --derive",
}


def server_cpu(pid):
    """CPU seconds the resident server has used (/proc schedstat: nanoseconds), or 0."""
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(argv, env, stdin=None, server=None):
    """(wall seconds, CPU seconds of the child and of the resident server meanwhile): CPU
    time varies less on a busy machine."""
    cpu = _children_cpu() + server_cpu(server)
    start = time.perf_counter()
    proc = subprocess.run(
        argv, env=env, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}")
    return elapsed, _children_cpu() + server_cpu(server) - cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30, help="alternating rounds (>= 30)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument(
        "--no-server",
        action="store_true",
        help="run every call in a process of its own (no resident server)",
    )
    ap.add_argument(
        "--baseline",
        metavar="DIR",
        help="also run every command from the code in DIR (its own launchers)",
    )
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as root:
        env = dict(os.environ)
        env.update(
            {
                "HOME": root,
                "GSTACK_STATE_ROOT": root,
                "GSTACK_HOME": root,
                "PLANTUNE_DB": os.path.join(root, "plantune.db"),
                "GSTACK_PROJECT_SLUG": "bench",
                "GSTACK_QUESTION_LOG_NO_DERIVE": "1",
                "PLANTUNE_RUNTIME_DIR": os.path.join(root, "run"),
                "PLANTUNE_SERVER": "off" if args.no_server else "on",
            }
        )
        env.pop("PLANTUNE_MIRROR", None)
        own_env = dict(env, PLANTUNE_SERVER="off")
        # Installed packages run from byte-code; an editable checkout only gets its
        # __pycache__ written if the environment allows it (the warm-up writes it).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # Create and migrate the database once; the hot path never migrates.
        subprocess.run(
            [os.path.join(BIN, "plantune"), "init"], env=env, check=True, stdout=subprocess.DEVNULL
        )
        write_shims(root)
        base_env = base_bin = None
        if args.baseline:
            base_bin = baseline_bin(args.baseline, root)
            # A state root of its own: gstack's files written by one version would otherwise
            # be picked up (imported) by the other's next call.
            base_root = os.path.join(root, "baseline-state")
            os.makedirs(base_root)
            base_env = dict(
                env,
                HOME=base_root,
                GSTACK_STATE_ROOT=base_root,
                GSTACK_HOME=base_root,
                PLANTUNE_DB=os.path.join(base_root, "plantune.db"),
            )
            # Created by the baseline's own code (its click application, normal start).
            subprocess.run(
                [os.path.join(BIN, "plantune"), "init"],
                check=True,
                env=dict(base_env, PYTHONPATH=os.path.abspath(args.baseline)),
                stdout=subprocess.DEVNULL,
            )

        def all_commands(i):
            listed = commands(i, root)
            out = {name: (argv, stdin, env) for name, (argv, stdin) in listed.items()}
            out.update(
                {
                    name: (listed[target][0], listed[target][1], own_env)
                    for name, target in OWN_PROCESS.items()
                }
            )
            if base_env is not None:
                out.update(
                    {
                        f"{name} [baseline]": (argv, stdin, base_env)
                        for name, (argv, stdin) in commands(i, root, base_bin).items()
                        if name != FLOOR and not name.startswith(("before:", "python -c"))
                    }
                )
            return out

        for argv, stdin, e in all_commands(-1).values():  # warm the page cache, byte-code
            run_once(argv, e, stdin)
        pid = None
        if not args.no_server:
            # The first calls started the resident server; time the calls it serves.
            path = resident.wait_for_server(env, os.path.join(BIN, "python"))
            info = path and resident.server_info(path)
            if not info:
                sys.exit("the resident server did not start")
            pid = info[0]
            for argv, stdin, e in all_commands(-2).values():  # warm the server too
                run_once(argv, e, stdin)
        times = {name: [] for name in all_commands(0)}
        try:
            for i in range(args.runs):
                items = list(all_commands(i).items())
                # Rotate the order each round so no command always runs right after another.
                k = i % len(items)
                for name, (argv, stdin, e) in items[k:] + items[:k]:
                    times[name].append(run_once(argv, e, stdin, pid))
        finally:
            if pid is not None:
                served = resident.server_info(path)
                resident.stop(path)
        if pid is not None and (served is None or served[1] < args.runs * 8):
            sys.exit(f"the resident server served too few calls: {served}")

    floor = statistics.median(t for t, _ in times[FLOOR])
    floor_best = min(t for t, _ in times[FLOOR])
    floor_cpu = statistics.median(c for _, c in times[FLOOR])
    results = []
    for name, pairs in times.items():
        values = sorted(t for t, _ in pairs)
        med = statistics.median(values)
        cpu = statistics.median(c for _, c in pairs)
        results.append(
            {
                "command": name,
                "median_ms": round(med * 1000, 2),
                "best_ms": round(values[0] * 1000, 2),
                "ratio": round(med / floor, 3),
                "best_ratio": round(values[0] / floor_best, 3),
                "cpu_ms": round(cpu * 1000, 2),
                "cpu_ratio": round(cpu / floor_cpu, 3) if floor_cpu else None,
                "target": TARGETS.get(name),
            }
        )
    by_name = {r["command"]: r for r in results}
    for r in results:
        base = by_name.get(f"{r['command']} [baseline]")
        if base:
            r["vs_baseline"] = round(r["ratio"] / base["ratio"], 3)
    missed = [r for r in results if r["target"] and r["best_ratio"] > r["target"]]
    if args.json:
        print(
            json.dumps(
                {"runs": args.runs, "load_average": os.getloadavg(), "results": results}, indent=2
            )
        )
    else:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"{args.runs} alternating rounds; ratios to the floor (load average after: {load})")
        print(
            f"{'command':36s} {'median':>9s} {'ratio':>6s} {'best':>9s} {'ratio':>6s}"
            f" {'cpu':>8s} {'ratio':>6s}  target (best-of)"
        )
        for r in results:
            target = f"<= {r['target']}x" if r["target"] else ""
            verdict = ("ok" if r["best_ratio"] <= r["target"] else "MISSED") if r["target"] else ""
            print(
                f"{r['command']:36s} {r['median_ms']:7.2f}ms {r['ratio']:5.2f}x"
                f" {r['best_ms']:7.2f}ms {r['best_ratio']:5.2f}x {r['cpu_ms']:6.2f}ms"
                f" {r['cpu_ratio']:5.2f}x  {target} {verdict}"
                + (f"  vs baseline {r['vs_baseline']:.3f}" if "vs_baseline" in r else "")
            )
    if args.strict and missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
