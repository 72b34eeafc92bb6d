"""Regenerate the word lists of ``toolkit/core/door_readable.py``: the most frequent words of
every language with door rules written in an alphabet (Latin or Cyrillic), folded as the
door engine folds text, one word a line, in code-point order (the reader looks words up
by bisection in the file's text, so it never builds a set of them); and ``en-head.txt``,
the most frequent English words, read first.

The lists are facts taken from the word-frequency data of ``wordfreq`` (PyPI), which is
not a plantune dependency: run this from a throw-away virtual environment that has it and
can import this checkout, for example::

    python3 -m venv /tmp/wordfreq-venv
    /tmp/wordfreq-venv/bin/pip install wordfreq
    PYTHONPATH=. /tmp/wordfreq-venv/bin/python tools/readable_words.py [--top N]

Words of one or two letters and words with anything but letters are left out: the reader
treats them as neutral. Words of three letters are kept only from each language's 3,000
most frequent: most strings of three letters are an abbreviation or a rare word in some
list, so only common ones are evidence that a text is in that language. ``--top N`` reads N of every
language's most frequent words from ``wordfreq`` before that filtering (``TOP`` by
default); ``benchmarks/RESULTS.md`` says how the numbers were chosen.
"""

import argparse
import os
import sys

from toolkit.core.door_data import DATA_DIR
from toolkit.core.door_engine import fold

LANGUAGES = ("en", "es", "fr", "de", "pt", "it", "ru")
# How many of each language's most frequent words are read (benchmarks/RESULTS.md says
# why): more for the Latin languages, whose verbs have many forms; Russian stops at
# 40,000, past which Bulgarian reads as Russian.
TOP = {"en": 40000, "es": 80000, "fr": 80000, "de": 80000, "pt": 80000, "it": 80000, "ru": 40000}
OUT_DIR = os.path.join(DATA_DIR, "words")
HEAD = 1000  # English words in en-head.txt
SHORT_TOP = 3000  # words of three letters only from the most frequent ones


def words_of(lang, top):
    from wordfreq import top_n_list

    seen, out = set(), []
    for rank, word in enumerate(top_n_list(lang, top)):
        folded = fold(word).strip()
        if len(folded) < 3 or not folded.isalpha() or folded in seen:
            continue
        if len(folded) == 3 and rank >= SHORT_TOP:
            continue  # most strings of three letters are a rare word somewhere
        seen.add(folded)
        out.append(folded)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, help="one number for every language (default: TOP)")
    parser.add_argument("--out", default=OUT_DIR)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for lang in LANGUAGES:
        words = words_of(lang, args.top or TOP[lang])
        with open(os.path.join(args.out, f"{lang}.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(sorted(words)) + "\n")
        if lang == "en":
            with open(os.path.join(args.out, "en-head.txt"), "w", encoding="utf-8") as f:
                f.write("\n".join(sorted(words[:HEAD])) + "\n")
        print(f"{lang}: {len(words)} words", file=sys.stderr)


if __name__ == "__main__":
    main()
