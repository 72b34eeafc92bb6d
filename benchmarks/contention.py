"""Benchmark: hot-path writers while `plantune ingest` imports a large question log.

Two scenarios, each on a fresh state root and database, every command its own process:

A. 8 `plantune hook post-tool-use` processes started at once while `plantune ingest`
   imports N lines (default 300,000): how many answers are recorded (directly, or through
   the spool), how long each hook took, and how long any ingest transaction held the
   write lock.
B. 8 workers x 200 `gstack-question-log` calls each, while `plantune ingest` imports N
   lines, `plantune backup` copies the database in a loop and `plantune serve` answers
   page requests in a loop: rows recorded, gstack lines written, failed calls, latency.

After the writers finish, one more `plantune ingest` drains anything spooled; the counts
are taken after it. The correctness figures (recorded, lines, failures) are the point;
latencies include process start-up, and lock holds include any time the importer was
descheduled while holding the lock, so both grow with the machine's load.

    .venv/bin/python benchmarks/contention.py               # 300,000 lines
    .venv/bin/python benchmarks/contention.py --lines 50000
"""

import argparse
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)
sys.path.insert(0, HERE)

from ingest import generate  # noqa: E402 - the same question-log mix as the ingest benchmark

SLUG = "hot-project"


def plantune(*args):
    return [os.path.join(BIN, "plantune"), *args]


def env_for(state):
    env = dict(
        os.environ,
        GSTACK_STATE_ROOT=state,
        GSTACK_HOME=state,
        HOME=state,
        PLANTUNE_DB=os.path.join(state, "plantune.db"),
        GSTACK_PROJECT_SLUG=SLUG,
        GSTACK_QUESTION_LOG_NO_DERIVE="1",
    )
    env.pop("PLANTUNE_MIRROR", None)
    return env


def setup(work, name, lines):
    state = os.path.join(work, name)
    log_dir = os.path.join(state, "projects", "bulk")
    os.makedirs(log_dir)
    generate(os.path.join(log_dir, "question-log.jsonl"), lines)
    env = env_for(state)
    subprocess.run(plantune("init"), env=env, check=True, capture_output=True)
    return state, env


def count(db_file, where=""):
    conn = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(f"SELECT count(*) FROM question_log {where}").fetchone()[0]
    finally:
        conn.close()


def start_ingest(state, env):
    proc = subprocess.Popen(
        plantune("ingest", state, "--json"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    db_file = env["PLANTUNE_DB"]
    while proc.poll() is None and count(db_file) == 0:
        time.sleep(0.02)
    return proc


def finish_ingest(proc):
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"plantune ingest failed: {err[-2000:]}")
    return json.loads(out)


def spooled(state):
    folder = os.path.join(state, "spool")
    return (
        len([n for n in os.listdir(folder) if n.endswith(".json")]) if os.path.isdir(folder) else 0
    )


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))] if values else 0.0


def hook_payload(state, i):
    repo = os.path.join(state, "repo")
    os.makedirs(repo, exist_ok=True)
    text = f"Hook question {i}: ship it now?"
    return json.dumps(
        {
            "session_id": "bench",
            "transcript_path": "/dev/null",
            "cwd": repo,
            "hook_event_name": "PostToolUse",
            "tool_name": "AskUserQuestion",
            "tool_use_id": f"tu-{i}",
            "tool_input": {
                "questions": [
                    {
                        "question": text,
                        "header": "H",
                        "multiSelect": False,
                        "options": [
                            {"label": "Yes", "description": ""},
                            {"label": "No", "description": ""},
                        ],
                    }
                ]
            },
            "tool_response": {"answers": {text: "Yes"}},
        }
    )


def scenario_a(work, lines):
    state, env = setup(work, "a", lines)
    proc = start_ingest(state, env)
    hooks, times = [], []
    t0 = time.perf_counter()
    for i in range(8):
        p = subprocess.Popen(
            plantune("hook", "post-tool-use"),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        p.stdin.write(hook_payload(state, i).encode())
        p.stdin.close()
        hooks.append(p)
    for p in hooks:
        p.wait()
        times.append(time.perf_counter() - t0)
    overlapped = proc.poll() is None
    spooled_now = spooled(state)
    summary = finish_ingest(proc)
    direct = count(env["PLANTUNE_DB"], "WHERE session_id = 'bench'")
    drain = subprocess.run(
        plantune("ingest", state, "--json"), env=env, capture_output=True, text=True
    )
    recorded = count(env["PLANTUNE_DB"], "WHERE session_id = 'bench'")
    errors_log = os.path.join(state, "hook-errors.log")
    errors = open(errors_log).read() if os.path.exists(errors_log) else ""
    return {
        "lines": lines,
        "hooks": 8,
        "exit_0": sum(p.returncode == 0 for p in hooks),
        "recorded_directly": direct,
        "spooled": spooled_now,
        "recorded": recorded,
        "hook_s_max": max(times),
        "overlapped": overlapped,
        "ingest_transactions": summary["transactions"],
        "ingest_lock_max_ms": summary["lock_max_ms"],
        "ingest_lock_p99_ms": summary["lock_p99_ms"],
        "hook_errors": len(errors.splitlines()),
        "drain_ok": drain.returncode == 0,
    }


def scenario_b(work, lines, workers=8, calls=200):
    state, env = setup(work, "b", lines)
    stop = threading.Event()
    side = {"backups": 0, "backup_failures": 0, "pages": 0, "page_failures": 0}

    def backups():
        n = 0
        while not stop.is_set():
            dest = os.path.join(work, f"backup-{n}.db")
            r = subprocess.run(plantune("backup", dest), env=env, capture_output=True)
            side["backups" if r.returncode == 0 else "backup_failures"] += 1
            if os.path.exists(dest):
                os.unlink(dest)
            n += 1

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        plantune("serve", "--port", str(port)),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # pages count once the server answers
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/versions.json", timeout=5):
                break
        except OSError:
            time.sleep(0.2)

    def pages():
        url = f"http://127.0.0.1:{port}/plantune/phase_counts.json?_size=5"
        while not stop.is_set():
            try:
                with urllib.request.urlopen(url, timeout=30) as r:
                    ok = r.status == 200
            except OSError as e:
                ok = False
                side.setdefault("page_errors", []).append(str(e))
            side["pages" if ok else "page_failures"] += 1
            time.sleep(0.05)

    proc = start_ingest(state, env)
    threads = [threading.Thread(target=backups), threading.Thread(target=pages)]
    for t in threads:
        t.start()
    latencies, failures = [], []

    def worker(w):
        for i in range(calls):
            event = {
                "skill": "ship",
                "question_id": "ship-changelog-voice-polish",
                "question_summary": f"Worker {w} call {i}: polish the changelog?",
                "user_choice": "accept",
                "recommended": "accept",
                "session_id": f"w{w}",
                "tool_use_id": f"w{w}-{i}",
            }
            t = time.perf_counter()
            r = subprocess.run(
                [os.path.join(BIN, "gstack-question-log"), json.dumps(event)],
                env=env,
                capture_output=True,
                text=True,
            )
            latencies.append(time.perf_counter() - t)
            if r.returncode != 0 or r.stderr:
                failures.append(r.stderr.strip() or f"exit {r.returncode}")

    t0 = time.perf_counter()
    writers = [threading.Thread(target=worker, args=(w,)) for w in range(workers)]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    elapsed = time.perf_counter() - t0
    overlapped = proc.poll() is None
    spooled_now = spooled(state)
    summary = finish_ingest(proc)
    stop.set()
    for t in threads:
        t.join()
    server.terminate()
    server.wait()
    subprocess.run(plantune("ingest", state), env=env, capture_output=True)
    rows = count(env["PLANTUNE_DB"], f"WHERE project = '{SLUG}'")
    with open(os.path.join(state, "projects", SLUG, "question-log.jsonl")) as fh:
        gstack_lines = sum(1 for line in fh if line.strip())
    return {
        "lines": lines,
        "calls": workers * calls,
        "rows": rows,
        "gstack_lines": gstack_lines,
        "failures": len(failures),
        "failure_samples": failures[:3],
        "spooled": spooled_now,
        "p50_ms": percentile(latencies, 0.5) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "max_ms": max(latencies) * 1000,
        "elapsed_s": elapsed,
        "overlapped": overlapped,
        "ingest_lock_max_ms": summary["lock_max_ms"],
        "ingest_lock_p99_ms": summary["lock_p99_ms"],
        "ingest_transactions": summary["transactions"],
        **side,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--only", choices=("a", "b"))
    ap.add_argument("--calls", type=int, default=200, help="calls per worker in scenario B")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="plantune-bench-contention-")
    try:
        load = os.getloadavg()[0]
        print(f"load average at start: {load:.1f} on {os.cpu_count()} CPUs")
        if args.only in (None, "a"):
            a = scenario_a(work, args.lines)
            print(
                "A: 8 post-tool-use hooks during `plantune ingest` of"
                f" {a['lines']:,} lines (the import still running: {a['overlapped']})"
            )
            print(
                f"   recorded {a['recorded']}/8 ({a['recorded_directly']} directly,"
                f" {a['spooled']} through the spool), exit 0: {a['exit_0']}/8,"
                f" slowest hook {a['hook_s_max']:.2f} s, hook-errors.log lines"
                f" {a['hook_errors']}"
            )
            print(
                f"   ingest: {a['ingest_transactions']:,} transactions, write-lock hold p99"
                f" {a['ingest_lock_p99_ms']:.0f} ms, max {a['ingest_lock_max_ms']:.0f} ms"
            )
        if args.only in (None, "b"):
            b = scenario_b(work, args.lines, calls=args.calls)
            print(
                f"B: 8 x {args.calls} gstack-question-log during ingest of {b['lines']:,} lines +"
                f" backup + serve (the import still running at the end: {b['overlapped']})"
            )
            print(
                f"   rows {b['rows']:,} / {b['calls']:,}, gstack lines {b['gstack_lines']:,},"
                f" failures {b['failures']} {b['failure_samples'] or ''}, spooled"
                f" {b['spooled']}"
            )
            print(
                f"   call latency p50 {b['p50_ms']:.0f} ms, p99 {b['p99_ms']:.0f} ms,"
                f" max {b['max_ms']:.0f} ms; {b['elapsed_s']:.1f} s for all calls"
            )
            print(
                f"   meanwhile: {b['backups']} backups ({b['backup_failures']} failed),"
                f" {b['pages']} pages served ({b['page_failures']} failed"
                f"{': ' + b['page_errors'][0] if b.get('page_errors') else ''}); ingest"
                f" {b['ingest_transactions']:,} transactions, hold p99"
                f" {b['ingest_lock_p99_ms']:.0f} ms, max {b['ingest_lock_max_ms']:.0f} ms"
            )
        print(f"load average at end: {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
