"""Latency of `plantune hook post-tool-use` / `pre-tool-use`, side by side with a baseline.

Baseline: a bare `python -c "import sqlite3, json"` start, the floor any Python hook pays
before doing work. Each hook is run as Claude Code runs it (a new process, the payload
on stdin) in a throwaway state root; the cases are interleaved so machine load hits them
alike. Also times the hook logic in-process (no interpreter or click start-up).
Prints medians and the ratio to the baseline.

Run: .venv/bin/python benchmarks/hook_latency.py [RUNS]
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


def payload(cwd, tool_use_id, event):
    text = "Null check missing. <gstack-qid:ship-pre-landing-review-fix>"
    return json.dumps(
        {
            "session_id": "bench",
            "cwd": cwd,
            "hook_event_name": event,
            "tool_name": "AskUserQuestion",
            "tool_use_id": tool_use_id,
            "tool_input": {
                "questions": [
                    {
                        "question": text,
                        "options": [{"label": "A) Fix now (recommended)"}, {"label": "B) Skip"}],
                    }
                ]
            },
            "tool_response": {"answers": {text: "B) Skip"}},
        }
    ).encode()


def timed(cmd, data, env):
    start = time.perf_counter()
    subprocess.run(cmd, input=data, env=env, check=True, capture_output=True)
    return (time.perf_counter() - start) * 1000


def main():
    with tempfile.TemporaryDirectory() as root:
        env = dict(
            os.environ,
            GSTACK_STATE_ROOT=root,
            GSTACK_HOME=root,
            HOME=root,
            PLANTUNE_DB=os.path.join(root, "plantune.db"),
        )
        env.pop("GSTACK_PROJECT_SLUG", None)
        cwd = os.path.join(root, "acme-web")
        os.makedirs(cwd)
        plantune = os.path.join(BIN, "plantune")
        subprocess.run([plantune, "init"], env=env, check=True, capture_output=True)
        cases = {
            "baseline: python -c 'import sqlite3, json'": lambda i: timed(
                [sys.executable, "-c", "import sqlite3, json"], b"", env
            ),
            "hook post-tool-use (records 1 event)": lambda i: timed(
                [plantune, "hook", "post-tool-use"], payload(cwd, f"tu-{i}", "PostToolUse"), env
            ),
            "hook pre-tool-use (pass-through)": lambda i: timed(
                [plantune, "hook", "pre-tool-use"], payload(cwd, f"tu-{i}", "PreToolUse"), env
            ),
        }
        samples = {name: [] for name in cases}
        for fn in cases.values():
            fn(-1)  # warm the page cache and .pyc files
        for i in range(RUNS):
            for name, fn in cases.items():
                samples[name].append(fn(i))
        results = {name: statistics.median(v) for name, v in samples.items()}
        base = results[next(iter(results))]
        for name, ms in results.items():
            print(f"{name:45s} median {ms:7.1f} ms  ratio {ms / base:4.2f}x")
        in_process(env, cwd)


def in_process(env, cwd):
    os.environ.update(env)
    from toolkit.claude import hooks

    for name, fn, event in (
        ("post_tool_use()", hooks.post_tool_use, "PostToolUse"),
        ("pre_tool_use()", hooks.pre_tool_use, "PreToolUse"),
    ):
        times = []
        for i in range(RUNS):
            p = json.loads(payload(cwd, f"ip-{i}", event))
            start = time.perf_counter()
            fn(p)
            times.append((time.perf_counter() - start) * 1000)
        print(f"in-process {name:34s} median {statistics.median(times):7.2f} ms")


if __name__ == "__main__":
    main()
