"""The index of each language's entries (``door_engine``: a process that reads many texts
finds the families' entries through it) finds what reading entry by entry finds: the
same spans in the same order for every family of every language, on every text of the
door corpora (every language, both halves, the unruled files) and on random soups of
the families' own entries; and every verdict is the same either way."""

import glob
import json
import os
import random
import unicodedata

import pytest

from toolkit.core import door_data, door_engine, doors

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "doors")


def corpus_texts():
    texts = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "**", "*.jsonl"), recursive=True)):
        with open(path, encoding="utf-8") as f:
            texts += [json.loads(line)["text"] for line in f if line.strip()]
    return texts


def soups(count, seed):
    """Texts made of the families' own entries: whole or cut short, with endings added,
    glued to each other or spaced, in one language or mixed, with punctuation between."""
    rng = random.Random(seed)
    entries = []
    for code in door_data.LANGUAGES:
        for family in door_engine.family_names(code):
            entries += [e.lstrip("=") for e in door_data.load(f"{code}.toml")["families"][family]]
    joins = [" ", " ", " ", "", ". ", ", ", "\n", "-", " de ", " the "]
    out = []
    for _ in range(count):
        words = []
        for _ in range(rng.randint(1, 9)):
            word = rng.choice(entries)
            cut = rng.random()
            if cut < 0.2 and len(word) > 2:
                word = word[: rng.randint(1, len(word) - 1)]
            elif cut < 0.4:
                word += rng.choice(["s", "en", "ado", "ung", "er", "ing", "을", "を", "了"])
            if rng.random() < 0.1:
                word = word.upper()
            words.append(word)
        text = words[0]
        for word in words[1:]:
            text += rng.choice(joins) + word
        out.append(text + rng.choice(["", "?", " ?", "!"]))
    return out


def folded_forms(text):
    folded = door_engine.fold(text)
    return {code: folded for code in door_data.LANGUAGES if code != "ko"} | {
        "ko": unicodedata.normalize("NFD", folded)
    }


def same_spans(texts):
    for text in texts:
        for code, folded in folded_forms(text).items():
            one = door_engine.family_spans(code, folded, indexed=False)
            assert door_engine.family_spans(code, folded, indexed=True) == one, (text, code)


def test_the_index_finds_what_each_entry_finds_in_the_corpora():
    texts = corpus_texts()
    assert len(texts) > 4000
    same_spans(texts)


def test_the_index_finds_what_each_entry_finds_in_soups_of_entries():
    same_spans(soups(3000, seed=28))


@pytest.mark.parametrize("seed", [3])
def test_every_verdict_is_the_same_with_the_index_and_without(monkeypatch, seed):
    texts = corpus_texts() + soups(1500, seed)

    def verdicts(after):
        monkeypatch.setattr(door_engine, "INDEX_AFTER", after)
        return [doors.explain(t) for t in texts]

    without = verdicts(10**9)
    assert verdicts(0) == without
