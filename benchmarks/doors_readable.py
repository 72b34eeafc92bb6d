"""What the allow-list of words (``toolkit/core/door_readable.py``) finds and costs.

Scores: texts in languages without rules read one-way (``unruled*.jsonl``), and harmless
texts of the languages with rules, the English corpora and English developer questions
that become ``unreadable-language``. Costs (CPU): ``unknown_language`` per call on English
texts; its first call in a fresh process (which reads the lists it needs); and
``doors.classify`` with and without the check, run alternately.

    python benchmarks/doors_readable.py [--rounds 5]
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from toolkit.core import door_readable as readable  # noqa: E402
from toolkit.core import doors  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "doors")
# Which lists a first call reads: the English head only, then all of English, then the
# other Latin languages, then Russian (and English).
FIRST_READS = (
    ("common English (head only)", "Should I run the tests again before the next change?"),
    ("English jargon (head, en)", "Bump pydantic to 2.7 and regenerate the lockfile?"),
    ("Spanish (head, en, es)", "¿Actualizo la documentación del componente?"),
    ("Indonesian (head, en, five Latin lists)", "Jadikan repositori publik?"),
    ("Russian (head, en, ru)", "Переименовать переменную в тесте?"),
)
_FIRST_CALL = (
    "import sys, time\n"
    "from toolkit.core import door_readable as readable\n"
    "t = time.process_time(); readable.unknown_language(sys.argv[1]); a = time.process_time() - t\n"
    "t = time.process_time(); readable.unknown_language(sys.argv[1]); b = time.process_time() - t\n"
    "print(a * 1e3, b * 1e3)\n"
)


def _rows(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def scores():
    print("| set | texts | result |\n| --- | ---: | ---: |")
    for name in ("unruled.jsonl", "unruled_fresh.jsonl"):
        rows = _rows(os.path.join(FIXTURES, name))
        miss = [r["text"] for r in rows if doors.classify(r["text"]).door != "one-way"]
        print(f"| {name} (one-way) | {len(rows)} | {len(rows) - len(miss)} one-way |")
    harmless = {"en_dev_questions.jsonl": _rows(os.path.join(FIXTURES, "en_dev_questions.jsonl"))}
    for name in ["rules_own_phrasings.jsonl"] + [f"corpus_{c}.jsonl" for c in "abc"]:
        harmless[name] = [r for r in _rows(os.path.join(FIXTURES, name)) if r["door"] == "two-way"]
    for path in sorted(glob.glob(os.path.join(FIXTURES, "*", "tune.jsonl"))):
        name = os.path.relpath(path, FIXTURES)
        harmless[name] = [r for r in _rows(path) if r["door"] == "two-way"]
    for name, rows in harmless.items():
        bad = [r["text"] for r in rows if doors.classify(r["text"]).reason == "unreadable-language"]
        print(f"| {name} (harmless) | {len(rows)} | {len(bad)} unreadable |")


def _cpu(fn, texts, passes):
    start = time.process_time()
    for _ in range(passes):
        for t in texts:
            fn(t)
    return (time.process_time() - start) / (passes * len(texts)) * 1e6


def costs(rounds):
    en = [
        r["text"]
        for r in _rows(os.path.join(FIXTURES, "en", "tune.jsonl"))
        if r["door"] == "two-way"
    ]
    dev = [r["text"] for r in _rows(os.path.join(FIXTURES, "en_dev_questions.jsonl"))]
    whole = [t + "\nHeader\nYes, go ahead\nNo, skip it\nAsk me later" for t in en]
    labels = ["Fix now", "Skip", "Yes", "Later", "Use the default"]
    readable.unknown_language("warm up the lists")
    for name, texts in (
        ("English sentence", en),
        ("developer question", dev),
        ("whole question", whole),
        ("short label", labels),
    ):
        best = min(_cpu(readable.unknown_language, texts, 20) for _ in range(rounds))
        print(f"unknown_language, {name}: {best:.1f} µs per call")
    for name, text in FIRST_READS:
        first, again = [], []
        for _ in range(rounds):
            out = subprocess.run(
                [sys.executable, "-c", _FIRST_CALL, text],
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
            ).stdout.split()
            first.append(float(out[0]))
            again.append(float(out[1]))
        print(
            f"first call in a process, {name}: {min(first):.2f} ms (a second call {min(again):.2f} ms)"
        )
    # classify with and without the check, alternately, on the same texts
    original = readable.unknown_language
    with_check, without = [], []
    for _ in range(rounds):
        with_check.append(_cpu(doors.classify, dev, 3))
        readable.unknown_language = lambda text: None
        try:
            without.append(_cpu(doors.classify, dev, 3))
        finally:
            readable.unknown_language = original
    print(
        f"doors.classify of a developer question: {min(without):.0f} µs without, {min(with_check):.0f} µs with"
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print("load average: %.2f" % os.getloadavg()[0])
    scores()
    costs(args.rounds)


if __name__ == "__main__":
    main()
