"""Benchmark: `plantune ingest` of a large question log vs `sqlite-utils insert --nl`.

Generates N gstack question-log lines (default 1,000,000; a realistic mix of agent,
hook, free-text and auto-decided events over the bundled registry), then in one run:

1. `sqlite-utils insert DB question_log FILE --nl` (the baseline: parse and insert, no
   validation, no keys),
2. `plantune ingest STATE_ROOT` (validates every line with gstack's rules, classifies the
   door type, computes the event key, stores raw JSON and extra fields),
3. `plantune ingest` again (nothing changed: a stat per file),
4. `plantune ingest` after appending 1% more lines (reads only the new bytes).

Repetition (an assumption: no real log of this size is at hand): an agent asks the same
kinds of question again and again. A registered question is summarised in one of 8
phrasings of its own, a hook question in one of 1,920 (plus 5 risky ones per release); a
fifth of all summaries carry a number of their own ("(finding 123)"), as a summary naming
a specific thing does. A hook question's id is a hash of its text and labels, as gstack's
and plantune's hooks make it, so the same question asked again has the same id.
``--unique-summaries`` gives the worst case instead: every summary different, every hook
id random.

Each command runs as its own child process. Memory: os.wait4's peak RSS (the largest
single process of the command's tree), and the peak memory of the whole process tree
(the main process and any children) sampled every 200 ms from /proc: the sum of PSS, which
counts pages a forked child still shares with its parent once rather than twice.

    .venv/bin/python benchmarks/ingest.py              # 1,000,000 lines
    .venv/bin/python benchmarks/ingest.py --lines 100000
"""

import argparse
import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = os.path.dirname(sys.executable)
sys.path.insert(0, ROOT)

RSS_LIMIT_MB = 200

VERBS = [
    "Fix",
    "Defer",
    "Split",
    "Rename",
    "Cache",
    "Inline",
    "Document",
    "Test",
    "Refactor",
    "Ship",
    "Review",
    "Pin",
    "Upgrade",
    "Mock",
    "Retry",
    "Batch",
]
THINGS = [
    "the flaky login test",
    "the N+1 query",
    "the changelog entry",
    "the retry loop",
    "the config loader",
    "the migration order",
    "the API error messages",
    "the CLI help",
    "the cache key",
    "the onboarding copy",
    "the release notes",
    "the rate limiter",
    "the café menu parser",
    "the 🚀 launch checklist",
    "the webhook handler",
]
PLACES = ["billing", "auth", "search", "the dashboard", "the worker", "the SDK", "docs", "CI"]
RISKY = [
    "delete the stale branch",
    "drop table sessions",
    "force-push main",
    "run the schema migration now",
    "rotate the API key",
]
LABELS = ["A) Fix now", "B) Defer to a TODO", "C) Skip it", "D) Ask me later"]
FREE = [
    "only if it does not slow the build",
    "do it but keep the old flag for a week",
    "let's talk about this tomorrow",
    "ok, but write a test first",
]


# Share of summaries that name a specific finding (unique text) in the realistic mix.
SPECIFIC_SHARE = 0.2


def _summary(rng, i, unique, question=None):
    """A summary; ``question`` (the registry index of a registered question) fixes the
    verb and the thing, as an agent summarises one question in a few phrasings."""
    if rng.random() < 0.03:
        return f"Should we {rng.choice(RISKY)} before release {i % 97}?"
    if question is None or unique:
        verb, thing = rng.choice(VERBS), rng.choice(THINGS)
    else:
        verb, thing = VERBS[question % len(VERBS)], THINGS[question % len(THINGS)]
    text = f"{verb} {thing} in {rng.choice(PLACES)}?"
    if unique or rng.random() < SPECIFIC_SHARE:
        text += f" (finding {i})"
    return text


def _hook_id(rng, summary, unique):
    if unique:
        return f"hook-{rng.getrandbits(40):010x}"
    return "hook-" + hashlib.sha1(("|".join([summary, *LABELS])).encode()).hexdigest()[:10]


def generate(path, n, seed=7, start=0, unique=False):
    """Append ``n`` question-log lines as gstack writes them (compact JSON, keys in order);
    ``unique``: every summary different and every hook id random (the worst case for
    anything keyed by a question's text)."""
    from toolkit.core import doors

    registry = doors.load_bundled_registry()
    rng = random.Random(seed + start)
    t = 1767225600.0 + start * 40  # 2026-01-01 UTC
    session = "s-0"
    with open(path, "a", encoding="utf-8") as fh:
        for i in range(start, start + n):
            t += rng.randint(5, 75)
            if rng.random() < 0.05:
                session = f"s-{i}"
            ms = int((t - int(t)) * 1000)
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{ms:03d}Z"
            r = rng.random()
            if r < 0.60:
                q = rng.randrange(len(registry))
                e = registry[q]
                options = e["options"] or ["accept", "defer", "skip"]
                choice = rng.choice(options)
                rec = {
                    "skill": e["skill"],
                    "question_id": e["id"],
                    "question_summary": _summary(rng, i, unique, q),
                    "category": e["category"],
                    "door_type": e["door_type"],
                    "options_count": len(options),
                    "user_choice": choice,
                    "recommended": options[0],
                    "session_id": session,
                    "source": "agent",
                    "followed_recommendation": choice == options[0],
                }
            elif r < 0.85:
                summary = _summary(rng, i, unique)
                rec = {
                    "skill": "unknown",
                    "question_id": _hook_id(rng, summary, unique),
                    "question_summary": summary,
                    "options_count": 4,
                    "user_choice": rng.choice(LABELS),
                    "recommended": LABELS[0],
                    "session_id": session,
                    "source": "hook",
                    "tool_use_id": f"toolu_{rng.getrandbits(96):024x}",
                    "followed_recommendation": False,
                }
                rec["followed_recommendation"] = rec["user_choice"] == LABELS[0]
            elif r < 0.95:
                summary = _summary(rng, i, unique)
                rec = {
                    "skill": "unknown",
                    "question_id": _hook_id(rng, summary, unique),
                    "question_summary": summary,
                    "user_choice": "Other",
                    "session_id": session,
                    "source": "auq-other",
                    "tool_use_id": f"toolu_{rng.getrandbits(96):024x}",
                    "free_text": rng.choice(FREE),
                }
            else:
                q = rng.randrange(len(registry))
                rec = {
                    "skill": "unknown",
                    "question_id": registry[q]["id"],
                    "question_summary": _summary(rng, i, unique, q),
                    "user_choice": LABELS[0],
                    "recommended": LABELS[0],
                    "session_id": session,
                    "source": "auto-decided",
                    "followed_recommendation": True,
                }
            rec["ts"] = ts
            fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")


def _memory_kb(pid):
    """PSS of one process in kB (VmRSS where smaps_rollup is missing), 0 once gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree_rss_kb(root):
    """Memory of ``root`` and its descendants (Linux /proc), in kB."""
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in tree:
                tree.add(child)
                frontier.append(child)
    return sum(_memory_kb(p) for p in tree)


def run(argv, env=None):
    """Run a command as a child: (seconds, peak RSS MB of one process, of the tree, stdout)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.wait(0.2):
            if os.path.isdir("/proc"):
                peak[0] = max(peak[0], _tree_rss_kb(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # Read before waiting so a chatty child never blocks on a full pipe.
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {err.decode()[-2000:]}")
    # CPU of the command and its reaped children: less sensitive to
    # other load on the machine than the wall time.
    cpu = usage.ru_utime + usage.ru_stime
    run.last_cpu = cpu
    return elapsed, usage.ru_maxrss / 1024, peak[0] / 1024, out.decode()


run.last_cpu = 0.0


def count(db, table):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument(
        "--unique-summaries",
        action="store_true",
        help="every summary different, every hook id random (the worst case)",
    )
    args = ap.parse_args()
    n = args.lines

    work = tempfile.mkdtemp(prefix="plantune-bench-ingest-")
    try:
        state = os.path.join(work, "state")
        log_dir = os.path.join(state, "projects", "bench")
        os.makedirs(log_dir)
        log = os.path.join(log_dir, "question-log.jsonl")
        t0 = time.perf_counter()
        generate(log, n, unique=args.unique_summaries)
        size_mb = os.path.getsize(log) / 2**20
        print(f"generated {n:,} lines ({size_mb:.0f} MB) in {time.perf_counter() - t0:.1f} s")

        env = dict(
            os.environ, GSTACK_STATE_ROOT=state, GSTACK_HOME=state, HOME=work, PLANTUNE_MIRROR="0"
        )
        env.pop("PLANTUNE_DB", None)
        su_db = os.path.join(work, "sqlite-utils.db")
        pt_db = os.path.join(work, "plantune.db")
        # Create the plantune database first so schema set-up is not timed.
        subprocess.run(
            [os.path.join(BIN, "plantune"), "init", "--db", pt_db],
            env=env,
            check=True,
            capture_output=True,
        )

        su_t, su_rss, su_tree, _ = run(
            [os.path.join(BIN, "sqlite-utils"), "insert", su_db, "question_log", log, "--nl"], env
        )
        su_cpu = run.last_cpu
        assert count(su_db, "question_log") == n
        pt_t, pt_rss, pt_tree, out = run(
            [os.path.join(BIN, "plantune"), "ingest", state, "--db", pt_db, "--json"], env
        )
        pt_cpu = run.last_cpu
        pt_summary = json.loads(out)
        got = count(pt_db, "question_log")
        assert got == n, f"plantune ingest stored {got:,} rows, expected {n:,}:\n{out}"
        again_t, again_rss, again_tree, out = run(
            [os.path.join(BIN, "plantune"), "ingest", state, "--db", pt_db], env
        )
        again_cpu = run.last_cpu
        assert count(pt_db, "question_log") == n, out
        extra = max(n // 100, 1)
        generate(log, extra, start=n, unique=args.unique_summaries)
        inc_t, inc_rss, inc_tree, out = run(
            [os.path.join(BIN, "plantune"), "ingest", state, "--db", pt_db], env
        )
        inc_cpu = run.last_cpu
        assert count(pt_db, "question_log") == n + extra, out

        rows = [
            ("sqlite-utils insert --nl", n, su_t, su_cpu, su_rss, su_tree),
            ("plantune ingest (validating)", n, pt_t, pt_cpu, pt_rss, pt_tree),
            ("plantune ingest, unchanged", 0, again_t, again_cpu, again_rss, again_tree),
            (f"plantune ingest, +{extra:,} lines", extra, inc_t, inc_cpu, inc_rss, inc_tree),
        ]
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(
            f"\n{'command':<34} {'lines':>10} {'wall s':>8} {'cpu s':>8} {'lines/s':>9}"
            f" {'RSS/proc':>9} {'PSS/tree':>9}"
        )
        for name, lines, secs, cpu, rss, tree in rows:
            rate = f"{lines / secs:,.0f}" if lines else "-"
            tree_text = f"{tree:>6.0f} MB" if tree else f"{'-':>9}"  # over before a sample
            print(
                f"{name:<34} {lines:>10,} {secs:>8.2f} {cpu:>8.2f} {rate:>9} {rss:>6.0f} MB"
                f" {tree_text}"
            )
        print(
            f"\nratio plantune / sqlite-utils, wall time: {pt_t / su_t:.2f}"
            f"  ({'faster' if pt_t < su_t else 'slower'} than the baseline)"
        )
        print(
            f"ratio plantune / sqlite-utils, CPU time:  {pt_cpu / su_cpu:.2f}"
            f"  (1-minute load average at the end: {load:.1f} on {os.cpu_count()} CPUs)"
        )
        print(
            f"peak RSS of plantune ingest: {pt_rss:.0f} MB per process, {pt_tree:.0f} MB for"
            f" the whole process tree (limit {RSS_LIMIT_MB} MB)"
        )
        print(
            f"plantune ingest wrote in {pt_summary['transactions']:,} transactions holding the"
            f" write lock {pt_summary['lock_p50_ms']:.0f} ms (median),"
            f" {pt_summary['lock_p99_ms']:.0f} ms (p99), {pt_summary['lock_max_ms']:.0f} ms"
            f" (max); {pt_summary['lock_over_100ms']} over 100 ms"
        )
        if max(pt_tree, pt_rss) >= RSS_LIMIT_MB:
            raise SystemExit(
                f"peak memory {max(pt_tree, pt_rss):.0f} MB is over the {RSS_LIMIT_MB} MB limit"
            )
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
