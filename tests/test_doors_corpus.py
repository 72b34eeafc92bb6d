"""Recall and false alarms of the door classifier on the labelled corpus.

Targets: every one-way summary caught (recall 100%), at most 10% of two-way summaries
flagged. The corpus was written for plantune in two halves (tests/door_corpus.py).
"""

import pytest

from tests.helpers import door_corpus
from toolkit.core.doors import classify


def test_corpus_shape():
    items = door_corpus.load("a") + door_corpus.load("b")
    one_way = [i for i in items if i["door"] == "one-way"]
    assert len(items) >= 300
    assert 0.45 <= len(one_way) / len(items) <= 0.55
    texts = [i["text"] for i in items]
    assert len(set(texts)) == len(texts)
    assert any(i["pad"] >= 2000 for i in one_way)
    assert any(any(c in i["text"] for c in "\u200b\u200c\u200d") for i in one_way)
    assert any(
        any("\u0400" <= c <= "\u04ff" or "\u0370" <= c <= "\u03ff" for c in i["text"])
        for i in one_way
    )


@pytest.mark.parametrize("half", door_corpus.HALVES)
def test_recall_and_false_alarms(half):
    result = door_corpus.score(door_corpus.load(half), classify)
    missed = [m["text"][-80:] for m in result["missed"]]
    assert result["recall"] == 1.0, f"one-way summaries missed: {missed}"
    alarms = [(m["text"][-80:], why) for m, why in result["false_alarms"]]
    assert result["false_alarm_rate"] <= 0.10, f"false alarms: {alarms}"


def test_padding_is_before_the_dangerous_words():
    padded = [i for i in door_corpus.load("a") if i["pad"]]
    assert padded and all(len(i["text"]) > 2000 for i in padded)
    for item in padded:
        assert classify(item["text"][:2000]).door == "two-way"  # the filler alone is harmless
