"""Hot-path benchmark: the commands agents run on every question, against gstack's own bins.

Runs, in alternating rounds (each round runs every command once, in a rotated order, so a
load change on a shared machine hits every command alike), the floor
``python -I -S -c pass`` (the bare interpreter: isolated, no site) and plantune's

  gstack-question-preference --check <two-way id>
  gstack-question-preference --check <two-way id> --summary-stdin  (a 200-character summary)
  gstack-question-log '<valid event>'
  plantune hook pre-tool-use      (an AskUserQuestion with no preference: passes through)
  plantune hook post-tool-use     (records the answered question)
                                  (both run as `plantune hook install` writes them:
                                  the launcher started by the Python beside it)
  gstack-developer-profile --derive, plantune check, plantune log

each call in a process of its own, as an agent starts it. With ``--gstack DIR`` the same
calls also run against gstack's own bins in the gstack tree at DIR (bash scripts, and the
two Claude Code hooks, TypeScript run by ``bun`` through their shims under
``hosts/claude/hooks``), in the same rounds and each in a state root of its own; the
report gives, per command, plantune's median wall time over gstack's (target: <= 0.6x)
beside each one's ratio to the floor. Without ``--gstack`` plantune is measured alone.

``--wheel`` measures this checkout as users install it: its wheel is built and installed
(without dependencies, which the hot path never imports) into a temporary venv, whose
commands then run instead of this venv's. An editable install computes the schema stamp
from the SQL files on every open; an installed wheel reads the one it ships.

``--baseline DIR`` (repeatable) also runs the five gstack-paired commands from the code
in DIR (a checkout of another version, e.g. ``git archive <rev> | tar -x -C DIR``, or a
copy with one change), started as an install starts it: DIR's own launchers in a
temporary bin folder beside a link to this interpreter, the package found through a
``.pth`` file. Each is reported as a ratio to this checkout's same command.

Everything happens in fresh temporary state roots with mirroring on (gstack's files kept
current, as by default). GSTACK_QUESTION_LOG_NO_DERIVE is set on both sides: a detached
profile derive after each log would compete with the next measurement for the CPU.
PYTHONDONTWRITEBYTECODE is dropped so the warm-up writes the package's byte-code, as any
installed copy has it. CPU time (the child's user + system) is reported too: it varies
less than wall time on a busy machine.

Usage: python benchmarks/hot_path.py [--runs 20] [--gstack DIR] [--wheel]
                                     [--baseline DIR ...] [--strict] [--json]
"""

import argparse
import glob
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from toolkit.claude.settings import hook_command  # noqa: E402 - this checkout's

BIN = os.path.dirname(sys.executable)
TWO_WAY_ID = "ship-changelog-voice-polish"
FLOOR = "floor (python -I -S -c pass)"
GSTACK_TARGET = 0.6  # plantune's median wall time over gstack's, per paired command
# A 200-character two-way summary: the door classifier reads all of it.
SUMMARY = (
    "Should the settings page keep the compact layout on narrow screens, with the "
    "section headings shortened and the help text moved under each field so the "
    "form reads top to bottom?"
)[:200].encode()
QUESTION = "Polish the changelog voice before shipping? <gstack-qid:ship-changelog-voice-polish>"
PAIRED = (
    "--check",
    "--check --summary-stdin",
    "gstack-question-log",
    "hook pre-tool-use",
    "hook post-tool-use",
)


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


def hook_payload(event_name, i, cwd="/"):
    payload = {
        "session_id": "bench",
        "cwd": cwd,
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


def baseline_bin(directory, root):
    """A bin folder whose commands start the code in ``directory`` as an install would."""
    prefix = os.path.join(root, "baseline-" + os.path.basename(os.path.normpath(directory)))
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


def wheel_bin(root):
    """The bin folder of a temporary venv holding this checkout's wheel."""
    dist = os.path.join(root, "dist")
    quiet = {"check": True, "stdout": subprocess.DEVNULL}
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    subprocess.run(
        pip + ["wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", dist, ROOT], **quiet
    )
    venv = os.path.join(root, "wheel-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], **quiet)
    python = os.path.join(venv, "bin", "python")
    (wheel,) = glob.glob(os.path.join(dist, "*.whl"))
    subprocess.run(pip + ["--python", python, "install", "--quiet", "--no-deps", wheel], **quiet)
    return os.path.join(venv, "bin")


def installed_hook(event, plantune):
    """The argv of the hook command ``plantune hook install`` writes for ``event``: the
    words after its ``exec`` when it has one (what the shell Claude Code starts for it
    runs once its ``test -x`` passes), as gstack's hooks are run without that shell."""
    import shlex

    words = shlex.split(hook_command(event, plantune))
    return words[words.index("exec") + 1 :] if "exec" in words else words


def plantune_commands(i, bin_dir=BIN):
    """name -> (argv, stdin bytes or None)."""
    pref = os.path.join(bin_dir, "gstack-question-preference")
    plantune = os.path.join(bin_dir, "plantune")
    return {
        "--check": ([pref, "--check", TWO_WAY_ID], None),
        "--check --summary-stdin": ([pref, "--check", TWO_WAY_ID, "--summary-stdin"], SUMMARY),
        "gstack-question-log": ([os.path.join(bin_dir, "gstack-question-log"), event(i)], None),
        "hook pre-tool-use": (
            installed_hook("PreToolUse", plantune),
            hook_payload("PreToolUse", i),
        ),
        "hook post-tool-use": (
            installed_hook("PostToolUse", plantune),
            hook_payload("PostToolUse", i),
        ),
        "gstack-developer-profile --derive": (
            [os.path.join(bin_dir, "gstack-developer-profile"), "--derive"],
            None,
        ),
        "plantune check": ([plantune, "check", TWO_WAY_ID], None),
        "plantune log": ([plantune, "log", event(i)], None),
    }


def gstack_commands(i, tree, cwd):
    """gstack's own bins and hooks for the paired commands."""
    pref = os.path.join(tree, "bin", "gstack-question-preference")
    hooks = os.path.join(tree, "hosts", "claude", "hooks")
    return {
        "--check": ([pref, "--check", TWO_WAY_ID], None),
        "--check --summary-stdin": ([pref, "--check", TWO_WAY_ID, "--summary-stdin"], SUMMARY),
        "gstack-question-log": ([os.path.join(tree, "bin", "gstack-question-log"), event(i)], None),
        "hook pre-tool-use": (
            [os.path.join(hooks, "question-preference-hook")],
            hook_payload("PreToolUse", i, cwd),
        ),
        "hook post-tool-use": (
            [os.path.join(hooks, "question-log-hook")],
            hook_payload("PostToolUse", i, cwd),
        ),
    }


def state_env(base, root):
    os.makedirs(root, exist_ok=True)
    return dict(
        base,
        HOME=root,
        GSTACK_STATE_ROOT=root,
        GSTACK_HOME=root,
        PLANTUNE_DB=os.path.join(root, "plantune.db"),
        GSTACK_PROJECT_SLUG="bench",
        GSTACK_QUESTION_LOG_NO_DERIVE="1",
    )


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(argv, env, stdin=None, cwd=None):
    """(wall seconds, CPU seconds of the child)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(
        argv, env=env, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}")
    return elapsed, _children_cpu() - cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20, help="alternating rounds")
    ap.add_argument("--gstack", metavar="DIR", help="also run gstack's own bins of the tree at DIR")
    ap.add_argument(
        "--baseline",
        metavar="DIR",
        action="append",
        default=[],
        help="also run the paired commands from the code in DIR (repeatable)",
    )
    ap.add_argument("--wheel", action="store_true", help="measure this checkout's wheel, installed")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()
    if args.gstack and shutil.which("bun") is None:
        sys.exit("--gstack needs bun on PATH (gstack's hooks are TypeScript run by bun)")

    with tempfile.TemporaryDirectory() as root:
        base = dict(os.environ)
        base.pop("PLANTUNE_MIRROR", None)
        # Installed packages run from byte-code; an editable checkout only gets its
        # __pycache__ written if the environment allows it (the warm-up writes it).
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        env = state_env(base, os.path.join(root, "plantune"))
        bin_dir = wheel_bin(root) if args.wheel else BIN
        # Create and migrate the database once; the hot path never migrates. (A wheel
        # installed without dependencies has no click: this venv's plantune creates it.)
        subprocess.run(
            [os.path.join(BIN, "plantune"), "init"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        baselines = []
        for directory in args.baseline:
            label = os.path.basename(os.path.normpath(directory))
            b_env = state_env(base, os.path.join(root, "state-" + label))
            subprocess.run(
                [os.path.join(BIN, "plantune"), "init"],
                check=True,
                env=dict(b_env, PYTHONPATH=os.path.abspath(directory)),
                stdout=subprocess.DEVNULL,
            )
            baselines.append((label, baseline_bin(directory, root), b_env))
        g_env = g_cwd = None
        if args.gstack:
            g_cwd = os.path.join(root, "gstack", "bench")
            os.makedirs(g_cwd)
            g_env = state_env(base, os.path.join(root, "gstack"))

        def all_commands(i):
            out = {FLOOR: ([sys.executable, "-I", "-S", "-c", "pass"], None, env, None)}
            for name, (argv, stdin) in plantune_commands(i, bin_dir).items():
                out[name] = (argv, stdin, env, None)
            if g_env is not None:
                for name, (argv, stdin) in gstack_commands(i, args.gstack, g_cwd).items():
                    out[f"gstack: {name}"] = (argv, stdin, g_env, g_cwd)
            for label, b_bin, b_env in baselines:
                for name, (argv, stdin) in plantune_commands(i, b_bin).items():
                    if name in PAIRED:
                        out[f"[{label}] {name}"] = (argv, stdin, b_env, None)
            return out

        for argv, stdin, e, cwd in all_commands(-1).values():  # page cache, byte-code
            run_once(argv, e, stdin, cwd)
        times = {name: [] for name in all_commands(0)}
        for i in range(args.runs):
            items = list(all_commands(i).items())
            k = i % len(items)  # rotate: no command always runs right after another
            for name, (argv, stdin, e, cwd) in items[k:] + items[:k]:
                times[name].append(run_once(argv, e, stdin, cwd))

    floor = statistics.median(t for t, _ in times[FLOOR])
    floor_cpu = statistics.median(c for _, c in times[FLOOR])
    results = {}
    for name, pairs in times.items():
        med = statistics.median(t for t, _ in pairs)
        cpu = statistics.median(c for _, c in pairs)
        results[name] = {
            "command": name,
            "median_ms": round(med * 1000, 2),
            "best_ms": round(min(t for t, _ in pairs) * 1000, 2),
            "floor_ratio": round(med / floor, 3),
            "cpu_ms": round(cpu * 1000, 2),
            "cpu_floor_ratio": round(cpu / floor_cpu, 3) if floor_cpu else None,
        }
    for name in PAIRED:
        g = results.get(f"gstack: {name}")
        if g:
            r = results[name]
            r["vs_gstack"] = round(r["median_ms"] / g["median_ms"], 3)
            r["cpu_vs_gstack"] = round(r["cpu_ms"] / g["cpu_ms"], 3) if g["cpu_ms"] else None
            r["target"] = GSTACK_TARGET
        for label, _bin, _env in baselines:
            key = f"[{label}] {name}"
            b = results[key]
            b["vs_this"] = round(b["median_ms"] / results[name]["median_ms"], 3)
            # The median of the per-round differences: both ran in the same round, under
            # the same load, so this is steadier than a difference of medians.
            pairs = list(zip(times[key], times[name]))
            b["extra_ms"] = round(statistics.median(x[0] - y[0] for x, y in pairs) * 1000, 2)
            b["extra_cpu_ms"] = round(statistics.median(x[1] - y[1] for x, y in pairs) * 1000, 2)
    missed = [r for r in results.values() if "target" in r and r["vs_gstack"] > r["target"]]
    load = os.getloadavg()
    if args.json:
        print(
            json.dumps(
                {"runs": args.runs, "load_average": load, "results": list(results.values())},
                indent=2,
            )
        )
    else:
        print(
            f"{args.runs} alternating rounds (load average after: "
            f"{', '.join(f'{x:.2f}' for x in load)}); medians"
        )
        print(
            f"{'command':42s} {'wall':>9s} {'/floor':>7s} {'cpu':>8s} {'/floor':>7s}"
            f"  {'vs gstack (wall, cpu)':>22s}"
        )
        for r in results.values():
            extra = ""
            if "vs_gstack" in r:
                verdict = "ok" if r["vs_gstack"] <= r["target"] else "MISSED"
                extra = f"  {r['vs_gstack']:5.2f}x {r['cpu_vs_gstack']:5.2f}x  (<= {r['target']}x {verdict})"
            elif "vs_this" in r:
                extra = (
                    f"  {r['vs_this']:5.3f}x this (per round: {r['extra_ms']:+.2f} ms wall,"
                    f" {r['extra_cpu_ms']:+.2f} ms cpu)"
                )
            print(
                f"{r['command']:42s} {r['median_ms']:7.2f}ms {r['floor_ratio']:6.2f}x"
                f" {r['cpu_ms']:6.2f}ms {r['cpu_floor_ratio']:6.2f}x{extra}"
            )
    if args.strict and missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
