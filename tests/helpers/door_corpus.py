"""The labelled door corpus (tests/fixtures/doors/corpus_*.jsonl) and how it is scored.

Each line: {"door": "one-way"|"two-way", "text": ..., "pad": N (optional)}. ``pad`` puts N
characters of harmless prose before the text, so a rule must read the whole summary.
Half a was written and tuned against first; half b was scored before any tuning on it;
half c holds the shell, code, prose and disguise classes of the wider door net.
"""

import json
import os

CORPUS_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "doors")
HALVES = ("a", "b", "c")

# Harmless filler: ordinary review chatter with no door words in it.
_FILLER = (
    "We looked at the layout of the settings screen and the wording of the help text. "
    "The spacing between the cards feels a little tight on narrow screens, and the "
    "headings could be shorter. Nothing here changes behaviour; it is about how the "
    "page reads. "
)


def padding(n):
    text = (_FILLER * (n // len(_FILLER) + 1))[:n]
    return text[: text.rfind(" ") + 1] if " " in text else text


def load(half):
    items = []
    with open(os.path.join(CORPUS_DIR, f"corpus_{half}.jsonl"), encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            item = json.loads(line)
            text = item["text"]
            if item.get("pad"):
                text = padding(item["pad"]) + text
            items.append(
                {"door": item["door"], "text": text, "line": line_no, "pad": item.get("pad", 0)}
            )
    return items


def score(items, classify):
    """``{recall, false_alarm_rate, missed, false_alarms, one_way, two_way}``."""
    missed, alarms = [], []
    one_way = [i for i in items if i["door"] == "one-way"]
    two_way = [i for i in items if i["door"] == "two-way"]
    for item in one_way:
        if classify(item["text"])[0] != "one-way":
            missed.append(item)
    for item in two_way:
        verdict = classify(item["text"])
        if verdict[0] == "one-way":
            alarms.append((item, verdict[1]))
    return {
        "one_way": len(one_way),
        "two_way": len(two_way),
        "recall": 1 - len(missed) / len(one_way) if one_way else 1.0,
        "false_alarm_rate": len(alarms) / len(two_way) if two_way else 0.0,
        "missed": missed,
        "false_alarms": alarms,
    }
