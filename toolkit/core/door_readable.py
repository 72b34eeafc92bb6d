"""Whether the door rules can read a text: an allow-list of the words of the languages
that have rules (``toolkit/data/doors/words/<lang>.txt``).

``unknown_language(text)`` is ``"words"`` when most of the prose words of ``text``
(or of any one of its lines) are in none of the word lists of the languages with door
rules written in an alphabet (English, Spanish, French, German, Portuguese, Italian,
Russian), and None when the text is readable. The rules can only see a danger in words
they know, so a text in another language (Indonesian, Romanian, Welsh ...) is one-way
on first sight, whatever function words it uses; the user can still allow it.

What counts: words of three letters or more made of letters, folded as the door engine
folds text. Neutral (left out): shorter words; anything that looks like code (digits,
``_``, ``.``, ``/``, ``@``, ``=`` ..., camelCase, a flag and the command before it, text in
backticks, URLs, paths, file names, globs); ASCII words without a vowel (``npm``); a unit
after its number (``1,5 rem``); words
in all capitals in a line that also has other words (``AWS``, ``README``); lines with
Chinese, Japanese or Korean letters (their script rule reads them). A hyphenated word
counts by its parts.

A text is readable when, for English or for English with one other language, at least
``KNOWN_SHARE`` of its counted words are in the lists: the most frequent words of each
language (40,000 for English and Russian, 80,000 for the others; ``tools/readable_words.py``
regenerates them from ``wordfreq``). Each list is read only when needed: English first,
and only when a counted word is not among the thousand most common English words
(``en-head.txt``); the other languages only when English does not reach the share, Russian
only for Cyrillic words and the Latin languages only for the others.
"""

import os

from toolkit.core.door_data import DATA_DIR, record_source
from toolkit.core.door_engine import fold_word, scripts

record_source(__file__)

__all__ = ["KNOWN_SHARE", "WORDS_DIR", "is_word", "unknown_language"]

WORDS_DIR = os.path.join(DATA_DIR, "words")
# Readable when at least this share of the counted words is known.
KNOWN_SHARE = 0.5
_LATIN = ("es", "fr", "de", "pt", "it")
# Russian words are inflected more than a list can hold: in a text with a letter Russian
# has and Bulgarian (whose words are mostly Russian ones, inflected otherwise) lacks, or a
# word with an ending Bulgarian lacks, a Russian word is known but for its last RU_ENDING
# letters, keeping STEM letters.
RU_ENDING = 3
STEM = 5
_RUSSIAN_ONLY = frozenset("ыэёЫЭЁ")
# Russian's 33 letters: a Cyrillic letter outside them (Ukrainian і ї є ґ, Serbian ј љ њ,
# Kazakh ә ө ү, ...) says the text is another language.
_RUSSIAN_ALPHABET = frozenset("абвгдеёжзийклмнопрстуфхцчшщъыьэюя")
_RUSSIAN_ENDINGS = ("ую", "юю", "ть", "ться", "тся")  # nor these (Bulgarian has no infinitive)
# A verb made again or anew ("reinstall", "redéployer", "переустановить") is a listed verb
# behind one of these prefixes: the rest is looked up too (at least STEM letters of it).
_AGAIN = {
    "en": ("re",),
    "es": ("re",),
    "fr": ("re", "ré"),
    "de": ("neu", "wieder"),
    "pt": ("re",),
    "it": ("ri", "re"),
    "ru": ("пере", "за", "по", "вы", "пе"),
}
_CODE_MARKS = frozenset("0123456789_./\\@:=<>#$%&+~|^*{}[]()")
_STRIP = ".,;:!?¿¡()[]{}\"'«»“”„‘’…—–*"
_OPENING = "¿¡([{\"'«“„‘—–"
# Units written after a number apart from it (the ones with a vowel: others are not counted).
_UNITS = frozenset(("rem", "dpi", "ppi", "sec", "secs", "min", "mins"))
_CJK = frozenset(("han", "kana", "hangul"))
_VOWELS = frozenset("aeiouy")
_lists = {}
_LISTED = frozenset(("en", "ru") + _LATIN)


def _read(name):
    """A word list's bytes: bisected as they are, never decoded whole (UTF-8 keeps the
    order of the sorted lines; decoding a list cost more than the rest of a text's check)."""
    data = _lists.get(name)
    if data is None:
        with open(os.path.join(WORDS_DIR, name + ".txt"), "rb") as f:
            data = _lists[name] = f.read()
    return data


def _head():
    """The most frequent English words, as a set (a few kB)."""
    words = _lists.get("head")
    if words is None:
        words = _lists["head"] = frozenset(_read("en-head").decode("utf-8").split())
    return words


def _first_from(data, word):
    """Where the first line not before ``word`` starts in a list's sorted bytes."""
    lo, hi = 0, len(data)  # both always at a line's start
    while lo < hi:
        mid = (lo + hi) // 2
        start = data.rfind(b"\n", 0, mid) + 1
        end = data.find(b"\n", start)
        if data[start:end] < word:
            lo = end + 1
        else:
            hi = start
    return lo


def _utf8(word):
    return word.encode("utf-8", "surrogatepass")


def _listed(word, lang, ending=0):
    """Whether ``word`` (or, behind a prefix of ``_AGAIN``, the rest of it) is listed; see
    ``_in_list``."""
    if _in_list(word, lang, ending):
        return True
    for prefix in _AGAIN.get(lang, ()):
        rest = word[len(prefix) :]
        if word.startswith(prefix) and len(rest) >= STEM and _in_list(rest, lang, ending):
            return True
    return False


def _in_list(word, lang, ending=0):
    """Whether ``word`` is in ``lang``'s list (bisection over the file's sorted lines: a
    list costs one read, no set of tens of thousands of words); with ``ending``, also a
    listed word that is the same but for its last ``ending`` letters (on both sides,
    keeping ``STEM`` letters): an inflection the list does not hold."""
    data = _read(lang)
    key = _utf8(word)
    if data.startswith(key + b"\n", _first_from(data, key)):
        return True
    for k in range(ending + 1):
        stem = word[: len(word) - k]
        if len(stem) < STEM:
            break
        key = _utf8(stem)
        pos = _first_from(data, key)
        while data.startswith(key, pos):
            end = data.find(b"\n", pos)
            # letters, not bytes: a Cyrillic letter is two
            if len(data[pos:end].decode("utf-8")) - len(stem) <= ending:
                return True
            pos = end + 1
    return False


def _no_backticks(line):
    if "`" not in line:
        return line
    return " ".join(line.split("`")[::2])  # what is inside backticks is code


def _flag(chunks, i):
    """Whether chunk ``i`` is a command-line flag (``-a``, ``--staged``)."""
    return i < len(chunks) and len(chunks[i].lstrip("-")) > 0 and chunks[i][0] == "-"


def _counted(line):
    """The folded prose words of one line (see the module's docstring)."""
    if not line.isascii() and _CJK.intersection(scripts(line)):
        return []  # Chinese, Japanese, Korean: their script rule reads the line
    line = _no_backticks(line)
    has_lower = any(c.isalpha() and not c.isupper() for c in line)
    out = []
    chunks = line.split()
    for i, chunk in enumerate(chunks):
        # Sentence marks around a word are not code; a leading "." or "*" is ("*.pyc").
        chunk = chunk.rstrip(_STRIP).lstrip(_OPENING)
        if not chunk or chunk[0] == "-" or "://" in chunk or any(c in _CODE_MARKS for c in chunk):
            continue
        if _flag(chunks, i + 1) or (i == 0 and _flag(chunks, 2)):
            continue  # a command before its flags: "rsync -a", "git restore --staged"
        if (
            chunk.lower() in _UNITS
            and i
            and chunks[i - 1].replace(",", ".").replace(".", "").isdigit()
        ):
            continue  # a unit after its number: "1,5 rem", "300 dpi"
        for part in chunk.replace("’", "-").replace("'", "-").split("-"):
            if len(part) < 3 or not part.isalpha():
                continue
            rest = part[1:]
            if rest != rest.lower() and part != part.upper():
                continue  # camelCase: a name in code
            if has_lower and part == part.upper():
                continue  # an acronym beside ordinary words
            if part.isascii() and _VOWELS.isdisjoint(part.lower()):
                continue  # no vowel: a command or an abbreviation ("npm", "pnpm", "ssh")
            word = fold_word(part)
            if word:
                out.append(word)
    return out


def _readable(words, russian=False):
    if not words:
        return True
    total = len(words)
    need = KNOWN_SHARE * total
    head = _head()
    rest = [w for w in words if w not in head]
    if total - len(rest) >= need:
        return True
    rest = [w for w in rest if not _listed(w, "en")]
    if total - len(rest) >= need:
        return True
    cyrillic = [w for w in rest if not w.isascii() and "cyrillic" in scripts(w)]
    if russian and cyrillic:
        # Written in Russian's alphabet and only Russian's (see unknown_language): its
        # words are Russian ones the list lacks (slang, "задеплоить"), the rules' to read.
        rest = [w for w in rest if w not in cyrillic]
        if total - len(rest) >= need:
            return True
        cyrillic = []
    langs = (("ru",) if cyrillic else ()) + (_LATIN if len(cyrillic) < len(rest) else ())
    for lang in langs:
        ending = RU_ENDING if lang == "ru" and russian else 0
        if total - sum(1 for w in rest if not _listed(w, lang, ending)) >= need:
            return True
    return False


def is_word(word, lang):
    """Whether a folded word is in ``lang``'s list of words (False for a language
    without one: Chinese, Japanese, Korean)."""
    if lang not in _LISTED:
        return False
    return _in_list(word, lang)


def unknown_language(text):
    """``"words"`` when ``text``, or one of its lines with two counted words or more,
    is mostly words of no language the door rules read; None otherwise."""
    lines = [_counted(line) for line in text.split("\n")]
    every = [w for words in lines for w in words]
    russian = (
        not text.isascii()
        and (not _RUSSIAN_ONLY.isdisjoint(text) or any(w.endswith(_RUSSIAN_ENDINGS) for w in every))
        and _RUSSIAN_ALPHABET.issuperset(c for c in text.lower() if "\u0400" <= c <= "\u04ff")
    )
    if len(lines) > 1:
        for words in lines:
            if len(words) >= 2 and not _readable(words, russian):
                return "words"
    return None if _readable(every, russian) else "words"
