"""Start-up cost of `plantune hook session-start`, side by side with the bare interpreter.

The SessionStart hook runs at every session start. With nothing to re-link it reads the
record of linked installs and stats each bin. Cases, interleaved so machine load hits
them alike, each a new process as Claude Code runs it:
the floor `python -I -S -c pass`; the hook with no install linked; the hook with one
linked gstack-shaped tree unchanged; the hook re-linking that tree after its bins were
put back (what follows gstack's `git reset --hard`). Prints medians, best and the ratio
to the floor.

Run: .venv/bin/python benchmarks/session_start.py [RUNS]
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(sys.executable)
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 30
BINS = (
    "gstack-question-log",
    "gstack-question-preference",
    "gstack-developer-profile",
    "gstack-builder-profile",
)
PAYLOAD = json.dumps({"hook_event_name": "SessionStart", "source": "startup"}).encode()


def make_tree(root):
    os.makedirs(os.path.join(root, "bin"))
    with open(os.path.join(root, "VERSION"), "w") as f:
        f.write("0.0.0.0\n")
    for name in BINS:
        path = os.path.join(root, "bin", name)
        with open(path, "w") as f:
            f.write(f"#!/usr/bin/env bash\necho {name}\n")
        os.chmod(path, 0o755)
    os.makedirs(os.path.join(root, ".git"))  # originals are kept in .git/plantune


def timed(cmd, env, data=b"", before=None):
    if before:
        before()
    start = time.perf_counter()
    p = subprocess.run(cmd, input=data, env=env, capture_output=True)
    took = (time.perf_counter() - start) * 1000
    assert p.returncode == 0 and p.stdout == b"", (cmd, p.stdout, p.stderr)
    return took


def main():
    plantune = os.path.join(BIN, "plantune")
    hook = [plantune, "hook", "session-start"]
    with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as linked:
        base = dict(os.environ)
        env_empty = dict(base, HOME=empty, GSTACK_STATE_ROOT=empty, GSTACK_HOME=empty)
        env_linked = dict(base, HOME=linked, GSTACK_STATE_ROOT=linked, GSTACK_HOME=linked)
        tree = os.path.join(linked, "gstack")
        make_tree(tree)
        subprocess.run(
            [plantune, "gstack", "link", "--gstack-dir", tree, "--force"],
            env=env_linked,
            check=True,
            capture_output=True,
        )
        originals = {n: open(os.path.join(tree, ".git/plantune/bin", n), "rb").read() for n in BINS}

        def put_back_originals():  # as `git reset --hard` does
            for name, data in originals.items():
                path = os.path.join(tree, "bin", name)
                os.unlink(path)
                with open(path, "wb") as f:
                    f.write(data)
                os.chmod(path, 0o755)

        cases = {
            "floor `python -I -S -c pass`": lambda: timed(
                [sys.executable, "-I", "-S", "-c", "pass"], base
            ),
            "session-start, nothing linked": lambda: timed(hook, env_empty, PAYLOAD),
            "session-start, one install linked, unchanged": lambda: timed(
                hook, env_linked, PAYLOAD
            ),
            "session-start, re-linking 4 bins after a reset": lambda: timed(
                hook, env_linked, PAYLOAD, before=put_back_originals
            ),
        }
        samples = {name: [] for name in cases}
        for fn in cases.values():
            fn()  # warm the page cache and .pyc files
        for _ in range(RUNS):
            for name, fn in cases.items():
                samples[name].append(fn())
        floor_med = statistics.median(samples[next(iter(cases))])
        floor_best = min(samples[next(iter(cases))])
        print(f"{RUNS} runs each, interleaved; load average {os.getloadavg()[0]:.1f}")
        print("| case | median (ratio) | best (ratio) |")
        print("| --- | ---: | ---: |")
        for name, values in samples.items():
            med, best = statistics.median(values), min(values)
            print(
                f"| {name} | {med:.2f} ms ({med / floor_med:.2f}×) "
                f"| {best:.2f} ms ({best / floor_best:.2f}×) |"
            )


if __name__ == "__main__":
    main()
