"""Door net benchmark: what the wider one-way net costs, and what it catches, against a
baseline checkout in the same run.

Side by side with ``--baseline DIR`` (another checkout, e.g. ``git archive main | tar -x -C
DIR``), in alternating rounds:

* ``gstack-question-preference --check <two-way id>`` with no preference (the plain path:
  the id's words are never read here) and ``--check adhoc-tidy-notes`` with a never-ask
  preference (the path about to answer AUTO_DECIDE, where the id's words are read):
  best-of wall time and the children's CPU time per call, as ratios to the baseline;
* ``doors.classify`` per 200-character summary, in process (best of the rounds, the two
  versions in alternating processes);
* recall and false alarms on the held-out set (tests/fixtures/doors_heldout.jsonl) and
  on the corpus halves.

Usage: python benchmarks/door_net.py --baseline DIR [--runs 20] [--json]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.doors import summaries  # noqa: E402
from benchmarks.hot_path import BIN, TWO_WAY_ID, baseline_bin  # noqa: E402

HELD_OUT = os.path.join(ROOT, "tests", "fixtures", "doors_heldout.jsonl")
CORPUS = os.path.join(ROOT, "tests", "fixtures", "doors")
AUTO_ID = "adhoc-tidy-notes"

# Run in a child process with the code of one checkout: classification time and scores.
SCORE = """import json, sys, time
sys.path.insert(0, sys.argv[1])
from toolkit.core import doors
data = json.load(sys.stdin)
best = None
for _ in range(7):
    s = time.perf_counter()
    for t in data["texts"]:
        doors.classify(t)
    e = (time.perf_counter() - s) / len(data["texts"]) * 1000
    best = e if best is None else min(best, e)
scores = {}
for name, items in data["sets"].items():
    tp = sum(doors.classify(i["text"])[0] == "one-way" for i in items if i["door"] == "one-way")
    fp = sum(doors.classify(i["text"])[0] == "one-way" for i in items if i["door"] == "two-way")
    one = sum(i["door"] == "one-way" for i in items)
    scores[name] = {"recall": tp / one, "false_alarms": fp, "two_way": len(items) - one,
                    "precision": tp / (tp + fp) if tp + fp else 1.0}
print(json.dumps({"ms": best, "scores": scores}))
"""


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def labelled_sets():
    sets = {"held-out": load(HELD_OUT)}
    for name in sorted(os.listdir(CORPUS)):
        sets[name.rsplit(".", 1)[0]] = [
            i for i in load(os.path.join(CORPUS, name)) if not i.get("pad")
        ]
    return sets


def score(code_dir):
    data = {"texts": summaries(), "sets": labelled_sets()}
    out = subprocess.run(
        [sys.executable, "-c", SCORE, code_dir],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def timed(argv, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="a checkout of the code to compare with")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as root:
        env = dict(
            os.environ,
            GSTACK_STATE_ROOT=root,
            GSTACK_PROJECT_SLUG="bench",
            PLANTUNE_DB=os.path.join(root, "plantune.db"),
        )
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        old_bin = baseline_bin(args.baseline, root)
        pref = os.path.join(BIN, "gstack-question-preference")
        subprocess.run(
            [
                pref,
                "--write",
                json.dumps(
                    {"question_id": AUTO_ID, "preference": "never-ask", "source": "plan-tune"}
                ),
            ],
            env=env,
            check=True,
            capture_output=True,
        )
        cases = {}
        for label, bin_dir in (("new", BIN), ("baseline", old_bin)):
            p = os.path.join(bin_dir, "gstack-question-preference")
            cases[("plain --check", label)] = [p, "--check", TWO_WAY_ID]
            cases[("auto-decide --check", label)] = [p, "--check", AUTO_ID]
        for argv in cases.values():  # warm-up: byte-code and the word-index cache
            timed(argv, env)
        times = {k: [] for k in cases}
        for _ in range(args.runs):
            for key, argv in cases.items():
                times[key].append(timed(argv, env))
    result = {"runs": args.runs, "load_after": os.getloadavg(), "commands": {}}
    for name in ("plain --check", "auto-decide --check"):
        new, old = times[(name, "new")], times[(name, "baseline")]
        row = {
            "best_ms": min(w for w, _ in new),
            "baseline_best_ms": min(w for w, _ in old),
            "cpu_ms": min(c for _, c in new),
            "baseline_cpu_ms": min(c for _, c in old),
        }
        row["best_ratio"] = row["best_ms"] / row["baseline_best_ms"]
        row["cpu_ratio"] = row["cpu_ms"] / row["baseline_cpu_ms"]
        result["commands"][name] = row
    # Alternating processes, best of three each: a shared machine only ever adds time.
    runs = {"new": [], "baseline": []}
    for _ in range(3):
        runs["new"].append(score(ROOT))
        runs["baseline"].append(score(os.path.abspath(args.baseline)))
    result["classify"] = {k: min(v, key=lambda r: r["ms"]) for k, v in runs.items()}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{args.runs} alternating rounds; load average after: "
        + ", ".join(f"{x:.2f}" for x in result["load_after"])
    )
    for name, row in result["commands"].items():
        print(
            f"{name:22} best {row['best_ms']:7.2f} ms vs {row['baseline_best_ms']:7.2f} ms "
            f"({row['best_ratio']:.2f}x); cpu {row['cpu_ms']:6.2f} ms vs "
            f"{row['baseline_cpu_ms']:6.2f} ms ({row['cpu_ratio']:.2f}x)"
        )
    new, old = result["classify"]["new"], result["classify"]["baseline"]
    print(
        f"classify per 200-char summary: {new['ms']:.3f} ms vs {old['ms']:.3f} ms "
        f"({new['ms'] / old['ms']:.2f}x)"
    )
    for name in new["scores"]:
        a, b = new["scores"][name], old["scores"][name]
        print(
            f"{name:10} recall {a['recall']:.3f} (baseline {b['recall']:.3f}); false alarms "
            f"{a['false_alarms']}/{a['two_way']} (baseline {b['false_alarms']}); precision "
            f"{a['precision']:.3f} (baseline {b['precision']:.3f})"
        )


if __name__ == "__main__":
    main()
