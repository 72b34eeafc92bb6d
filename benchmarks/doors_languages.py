"""Recall and false alarms of the door classifier on each language's labelled corpus.

Each language has a corpus written for plantune by someone who never saw the rules
(``tests/fixtures/doors/<lang>/{tune,holdout}.jsonl``): rules are tuned on the tune half
only; the holdout half is scored once before any tuning, then again at the end (both
figures are in benchmarks/RESULTS.md).

Usage: python benchmarks/doors_languages.py [--half holdout|tune] [--misses] [LANG ...]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from toolkit.core.doors import classify  # noqa: E402

FIXTURES = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "fixtures", "doors"
)
LANGS = ("en", "zh", "ja", "ko", "es", "fr", "de", "pt", "ru", "it")


def load(lang, half):
    with open(os.path.join(FIXTURES, lang, f"{half}.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def score(items):
    one = [i for i in items if i["door"] == "one-way"]
    two = [i for i in items if i["door"] == "two-way"]
    missed = [i for i in one if classify(i["text"]).door != "one-way"]
    alarms = [(i, classify(i["text"]).reason) for i in two if classify(i["text"]).door == "one-way"]
    return {
        "one_way": len(one),
        "two_way": len(two),
        "recall": 1 - len(missed) / len(one) if one else 1.0,
        "false_alarm_rate": len(alarms) / len(two) if two else 0.0,
        "missed": missed,
        "false_alarms": alarms,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", default="holdout", choices=("holdout", "tune"))
    parser.add_argument("--misses", action="store_true", help="print every miss and false alarm")
    parser.add_argument("langs", nargs="*", default=LANGS)
    args = parser.parse_args()
    print(f"{'lang':5} {'one-way':>8} {'two-way':>8} {'recall':>8} {'false alarms':>13}")
    for lang in args.langs:
        r = score(load(lang, args.half))
        print(
            f"{lang:5} {r['one_way']:8} {r['two_way']:8} {r['recall']:8.1%} "
            f"{r['false_alarm_rate']:13.1%}"
        )
        if args.misses:
            for i in r["missed"]:
                print(f"   MISSED [{i.get('family')}] {i['text']}")
            for i, why in r["false_alarms"]:
                print(f"   ALARM  [{why}] {i['text']}")


if __name__ == "__main__":
    main()
