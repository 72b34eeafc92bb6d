"""One-way doors: is this question too hard to undo to be decided without the user?

Two layers, both on the hot path (stdlib only, nothing compiled at import):

* ``classify(text) -> Verdict(door, reason)`` reads a question's text (a question, its
  header and options joined by newlines are one text). Encodings that hide words are
  undone first (``door_decode.decoded``: HTML, URL escapes, markdown, backslashes); each spelling
  is then normalised (``normalise``: NFKC, combining marks, zero-width and control characters
  dropped, case-folded, look-alike letters folded to ASCII (a small table, Unicode's
  confusables data, any decimal digit, Latin letters by name), ``_`` read as a space,
  whitespace collapsed) and read whole by English's word-by-word rules
  (``toolkit/data/doors/en-words.toml``, read by ``door_reader``: verb families crossed
  with object families, loaded only when a text is read). Mixed-case
  text is read a second time with code names split (``dropTable`` → ``drop table``),
  except a name Chinese, Japanese or Korean prose names as code, in a text that runs
  none (``door_engine.code_names``: "handleRefund 方法", "deleteUser 함수").
  What the English rules do not find, every other language's rules look for
  (``door_engine``, over the data files in ``toolkit/data/doors``; ``explain`` names the
  language). ``reason`` is ``keyword:<rule>`` for a one-way verdict, ``unreadable`` for
  text that cannot be read (lone surrogates, NUL, invalid UTF-8, not text: fail safe),
  ``unreadable-language`` for text mostly in a script or language no rules read,
  ``no-match`` for two-way.
* ``decide(question_id, skill, category, summary, registry)`` and ``door_for(conn, ...)``
  decide for a question: one-way if the registry, the skill:category pairs, the text, or
  (with a database) any recorded fact says so. Stricter than gstack, which lets a
  registered two-way id decide alone against a destructive summary: here the text is
  always read too.

Ids are compared in their canonical form (``canonical_id``): code names split
(``investigateFixApply``), surrounding whitespace, zero-width characters and trailing
punctuation dropped, ASCII letters lower-cased, ``_`` and spaces read as ``-``, runs of
``-`` folded; beyond ASCII, Unicode dashes read ``-`` and look-alike letters their ASCII
letter. All but the code-name split exists in SQL (``canonical_id_sql``) for the
triggers, index and audit view. An allow of the user's sets aside one-way readings of the
classifier (``toolkit.core.allows``). A question about to be auto-decided gets a second
look (``before_auto_decide``): its id's own words, and facts stored under look-alike or
code-name spellings.

Stable API: ``classify``, ``normalise``, ``explain``, ``canonical_id``, ``decide``,
``door_for``, ``RULE_NAMES``, ``ONE_WAY``/``TWO_WAY``.
"""

import os

from toolkit.core.vocabulary import DOOR_TYPES

__all__ = [
    "ONE_WAY",
    "TWO_WAY",
    "UNREADABLE",
    "UNREADABLE_LANGUAGE",
    "NO_MATCH",
    "RULE_NAMES",  # noqa: F822 - provided by the module __getattr__ below
    "Verdict",
    "Classification",
    "SKILL_CATEGORY_ONE_WAY",
    "REGISTRY_PATH",
    "canonical_id",
    "canonical_id_sql",
    "sql_key",
    "normalise",
    "classify",
    "explain",
    "decide",
    "is_one_way",
    "known_one_way",
    "id_text",
    "load_bundled_registry",
    "bundled_door_types",
    "bundled_one_way_ids",
]

ONE_WAY, TWO_WAY = DOOR_TYPES
UNREADABLE = "unreadable"
UNREADABLE_LANGUAGE = "unreadable-language"
NO_MATCH = "no-match"
# The longest text the rules read. Reading time grows with the text (docs/performance.md,
# "One-way doors"), so a longer one (a megabyte pasted into a question) would hold a hook
# past its host's time limit and lose the answer: it is one-way ("unreadable") unread,
# never auto-decided.
READ_LIMIT = 65_536


class _Record(tuple):
    """A named tuple written out by hand: ``collections.namedtuple`` costs every hot call
    more (measured: docs/performance.md, "What the hot path leaves out"). Compares,
    unpacks and prints like the named tuple it replaces."""

    __slots__ = ()
    _fields = ()

    def __getnewargs__(self):
        return tuple(self)

    def __repr__(self):
        inner = ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self))
        return f"{type(self).__name__}({inner})"


class Verdict(_Record):
    """door: "one-way" | "two-way"; reason: "keyword:<rule>" | "unreadable" | "no-match"."""

    __slots__ = ()
    _fields = ("door", "reason")

    def __new__(cls, door, reason):
        return tuple.__new__(cls, (door, reason))

    door = property(lambda self: self[0])
    reason = property(lambda self: self[1])


class Classification(_Record):
    """The question-level answer. reason: "registry" | "skill-category" |
    "keyword:<rule>" | "unreadable" | "recorded:<source>" | "default-two-way";
    matched: the rule name, if any."""

    __slots__ = ()
    _fields = ("one_way", "reason", "matched")

    def __new__(cls, one_way, reason, matched=None):
        return tuple.__new__(cls, (one_way, reason, matched))

    one_way = property(lambda self: self[0])
    reason = property(lambda self: self[1])
    matched = property(lambda self: self[2])


SKILL_CATEGORY_ONE_WAY = frozenset({"cso:approval", "land-and-deploy:approval"})

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGISTRY_PATH = os.path.join(_PACKAGE_DIR, "data", "registry.json")

# --------------------------------------------------------------------------
# Canonical question ids

# Dropped anywhere in an id: zero-width space/joiners, word joiner, BOM, soft hyphen.
_ID_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
# Trimmed from both ends: ASCII whitespace and the common Unicode spaces.
_ID_SPACE = " \t\n\r\x0b\x0c\u00a0\u2007\u202f\u3000"
# Read as "-" inside an id.
_ID_DASHES = "_ \t"
# Trimmed from the end: punctuation a hand-edited id picks up ("investigate-fix-apply.").
_ID_TRAILING = "-.,;:!?"
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
# "--" folded to "-" this many times: runs of up to 64 separators become one.
_RUN_FOLDS = 6
_ID_LOWER = {ord(c): ord(c) + 32 for c in _UPPER}
_ID_DROP = {ord(c): None for c in _ID_INVISIBLE}


def canonical_id(question_id):
    """The form ids are compared in for door decisions (storage keeps what was given).

    ``" LAND_AND_DEPLOY-Rollback "``, ``investigateFixApply``, ``investigate__fix  apply.``
    → ``land-and-deploy-rollback``, ``investigate-fix-apply``: a small letter followed by
    a capital split there (``split_words``), then ``sql_key``: ASCII letters lower-cased,
    invisible characters dropped, ``_`` and spaces read as ``-``, surrounding whitespace,
    trailing punctuation and ``-`` trimmed, runs of ``-`` folded to one. An id with
    characters outside ASCII is folded further (``_fold_id``), so a look-alike spelling is
    the id it imitates. Non-strings give ``None``.
    """
    if not isinstance(question_id, str):
        return None
    key = sql_key(split_words(question_id))
    if key.isascii():
        return key
    return sql_key(_fold_id(key))


def split_words(question_id):
    """``investigateFixApply`` → ``investigate-Fix-Apply``: a code name's word boundaries
    (an ASCII small letter, then a capital) marked with ``-``. The one step of
    ``canonical_id`` SQL does not take (the ids SQL keys, logged ones, are kebab-case)."""
    if question_id == question_id.lower():
        return question_id
    out = [question_id[:1]]
    for i in range(1, len(question_id)):
        if question_id[i] in _UPPER and question_id[i - 1] in _LOWER:
            out.append("-")
        out.append(question_id[i])
    return "".join(out)


def sql_key(question_id):
    """``canonical_id_sql`` in Python, step for step: the key the database's triggers store
    (``canonical_id`` without ``split_words`` and the Unicode fold)."""
    if not isinstance(question_id, str):
        return None
    key = question_id.translate(_ID_LOWER).translate(_ID_DROP)
    for c in _ID_DASHES:
        key = key.replace(c, "-")
    key = key.rstrip(_ID_SPACE + _ID_TRAILING).lstrip(_ID_SPACE + "-")
    for _ in range(_RUN_FOLDS):
        key = key.replace("--", "-")
    return key


def _fold_id(key):
    """An id with characters outside ASCII, in the form a reader sees: every Unicode dash
    and minus reads ``-``, every space a space, look-alike and accented letters (and any
    decimal digit) their ASCII letter, other invisible characters nothing. So
    ``lаnd-and-deploy-rollback`` (Cyrillic а) and ``drop‐users‐table`` (U+2010 hyphens) are
    the ids they imitate. Characters that imitate nothing stay as they are."""
    import unicodedata as ud

    table = _fold_table_now()
    out = []
    for ch in ud.normalize("NFKC", key):
        if ch.isascii():
            out.append(ch)
            continue
        cat = ud.category(ch)
        if cat == "Pd" or ch in "\u2212\u2043\ufe63\uff0d\u02d7":
            out.append("-")
        elif cat == "Zs" or ch.isspace():
            out.append(" ")
        elif cat in ("Cf", "Mn", "Me"):
            continue
        else:
            base = ud.normalize("NFD", ch)[0]
            if base.isascii():
                out.append(base.lower())
                continue
            folded = table.get(ord(ch)) or table.get(ord(ch.casefold()[:1]))
            out.append(folded if folded else _fold_letter(ch, ud))
    return "".join(out)


def _sql_chars(chars):
    return "char(" + ", ".join(str(ord(c)) for c in chars) + ")"


def canonical_id_sql(column: str) -> str:
    """The SQL expression equal to ``sql_key(column)``: ``canonical_id`` for every ASCII id
    without a small letter followed by a capital (every kebab-case id, so every logged
    one), and for every canonical id itself.

    SQLite's ``lower()`` changes ASCII letters only, as the Python side does. Ids with
    other characters keep them in SQL (no Unicode folding there), and code-name spellings
    are not split; checks compare such stored keys through ``canonical_id``
    (``known_one_way`` looks up both keys, ``before_auto_decide`` every stored spelling).
    Migration 0016 and the views spell out the same text (a test keeps them equal); an
    expression index only serves queries that repeat it exactly.
    """
    expr = column
    for c in _ID_INVISIBLE:
        expr = f"replace({expr}, char({ord(c)}), '')"
    expr = f"lower({expr})"
    for c in _ID_DASHES:
        expr = f"replace({expr}, {_sql_chars(c)}, '-')"
    spaces = _sql_chars(_ID_SPACE)
    expr = f"ltrim(rtrim({expr}, {spaces} || '{_ID_TRAILING}'), {spaces} || '-')"
    for _ in range(_RUN_FOLDS):
        expr = f"replace({expr}, '--', '-')"
    return expr


# --------------------------------------------------------------------------
# Normalisation

_fold_table = None  # toolkit.core.confusables, built on first need
# Words in a Latin letter's name that say how it is drawn, not which letter it is.
_NAME_SKIP = frozenset("SMALL CAPITAL LETTER SCRIPT DOTLESS BARRED LONG".split())


def _fold_table_now():
    global _fold_table
    if _fold_table is None:
        from toolkit.core.confusables import PAIRS, TABLE

        table = {ord(PAIRS[i]): PAIRS[i + 1] for i in range(0, len(PAIRS), 2)}
        table.update(TABLE)
        _fold_table = table
    return _fold_table


def _fold_letter(ch, ud):
    """The ASCII letter or digit ``ch`` stands for, or ``ch`` itself.

    Any decimal digit reads as its ASCII digit; a Latin letter drawn with a hook, a
    stroke or as a small capital ("LATIN SMALL LETTER D WITH HOOK") reads as its letter.
    """
    cat = ud.category(ch)
    if cat == "Nd":
        return str(ud.digit(ch))
    if cat[0] == "L" or cat == "So":
        # "LATIN SMALL LETTER D WITH HOOK", "NEGATIVE SQUARED LATIN CAPITAL LETTER D",
        # "REGIONAL INDICATOR SYMBOL LETTER D"
        name = ud.name(ch, "")
        head, found, tail = name.partition(" LETTER ")
        if (
            found
            and ("LATIN" in head or "REGIONAL INDICATOR" in head)
            and "TURNED" not in name
            and "REVERSED" not in name
        ):
            for word in tail.partition(" WITH ")[0].split():
                if word not in _NAME_SKIP:
                    return word.lower() if len(word) == 1 and word.isalpha() else ch
    return ch


# ASCII fast path: control characters become spaces, "_" joins words like a space.
_ASCII_TABLE = {i: " " for i in range(32)}
_ASCII_TABLE[127] = " "
_ASCII_TABLE[ord("_")] = " "
_unicodedata = None


def _fold_unicode(text, invisible_as):
    """The non-ASCII path of ``normalise``; ``invisible_as`` replaces format characters."""
    global _unicodedata
    if _unicodedata is None:
        import unicodedata

        _unicodedata = unicodedata
    ud = _unicodedata
    text = ud.normalize("NFKC", text)
    out = []
    for ch in ud.normalize("NFD", text.casefold()):
        if ch.isascii():
            out.append(ch)
            continue
        cat = ud.category(ch)
        if cat == "Mn" or cat == "Me":
            continue  # accents, strike-through and other overlays
        if cat == "Cf":
            out.append(invisible_as)  # zero-width spaces/joiners, bidi marks, soft hyphen
        elif cat[0] in "CZ":
            out.append(" ")  # other controls and separators
        else:
            out.append(ch)
    text = "".join(out).translate(_fold_table_now())
    if not text.isascii():
        text = "".join(c if c.isascii() else _fold_letter(c, ud) for c in text)
    return text


def normalise(text: str, invisible_as: str = "") -> str:
    """The text the rules read (see the module docstring). Raises ValueError if unreadable."""
    if "\x00" in text:
        raise ValueError("NUL character")
    if text.isascii():
        text = text.lower()
    else:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("lone surrogate") from None
        text = _fold_unicode(text, invisible_as)
    return " ".join(text.translate(_ASCII_TABLE).split())  # whitespace runs -> one space


def _decamel(text, keep=()):
    """``dropTable`` → ``drop Table``: code names read as the words they are made of.
    The same text when no word has a capital after a small letter. A word whose folded
    form is in ``keep`` stays whole (``door_engine.code_names``)."""
    pieces = text.split(" ")
    changed = False
    for k, word in enumerate(pieces):
        rest = word[1:]
        if rest == rest.lower() or word == word.upper():
            continue  # no capital inside, or an all-capitals word ("SQL", "README")
        out, prev, whole = [], "", False
        for i, ch in enumerate(word):
            if keep and not (prev.isascii() and prev.isalnum()):  # an ASCII name starts
                whole = _ascii_run(word, i).lower() in keep
            if ch.isupper() and prev.islower() and not whole:
                out.append(" ")
            out.append(ch)
            prev = ch
        split = "".join(out)
        if split != word:
            pieces[k] = split
            changed = True
    return " ".join(pieces) if changed else text


def _joined(text, names):
    """``text`` with the ``_`` of each snake_case name in ``names`` (lower case) dropped."""
    from toolkit.core.door_engine import ascii_runs

    out, last = [], 0
    for start, end in ascii_runs(text):
        w = text[start:end]
        if w.strip("_").lower() in names:
            out += [text[last:start], w.replace("_", "")]
            last = end
    return "".join(out) + text[last:]


def _ascii_run(word, start):
    """The ASCII letters and digits of ``word`` from ``start`` on."""
    end = start
    while end < len(word) and word[end].isascii() and word[end].isalnum():
        end += 1
    return word[start:end]


def _readings(text):
    """Every form the rules read: the normalised text, with zero-width characters read as
    spaces, and with code names split into words. Raises ValueError when unreadable."""
    first, other = _read(text)
    if not isinstance(text, str):
        text = bytes(text).decode("utf-8")
    keep = ()
    if not text.isascii():  # a name Chinese, Japanese or Korean prose names as code
        from toolkit.core.door_engine import code_names

        keep = code_names(text)
        if any("_" in name for name in keep):  # "refund_amount 字段": one word, not two
            first, other = _read(_joined(text, keep))
    found = [first] if other is None else [first, other]
    if text != text.lower() and text != text.upper():  # mixed case: maybe camelCase names
        split = _decamel(text, keep)
        if split != text:
            split = normalise(split)
            if split not in found:
                found.append(split)
    return found


def _as_text(text) -> str:
    """The text as a str (bytes read as UTF-8); raises ValueError when it is neither."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("invalid UTF-8") from None
    if not isinstance(text, str):
        raise ValueError("not text")
    return text


def _read(text):
    """``(normalised, alternative or None)``; raises ValueError when unreadable."""
    text = _as_text(text)
    first = normalise(text)
    # A zero-width character may hide inside a word ("dr\u200bop") or stand for the space
    # between two ("drop\u200btable"): read it both ways.
    other = None
    if not text.isascii():
        other = normalise(text, invisible_as=" ")
        if other == first:
            other = None
    return first, other


def _spellings(text):
    """The text as written, then its decoded spellings (``door_decode.decoded``): str only.
    Raises ValueError when the text cannot be read at all."""
    text = _as_text(text)
    from toolkit.core.door_decode import decoded

    return [text] + decoded(text)


# Quote marks around a label, opening -> closing.
_QUOTES = {
    "'": "'", '"': '"', "`": "`", "«": "»", "»": "«", "„": "“", "“": "”", "‘": "’",
    "‚": "‘", "‹": "›", "「": "」", "『": "』", "【": "】",
}  # fmt: skip
_LABEL_MAX = 200  # characters: a longer quote is prose, read with the rest


_PRESSES = None


def _presses(folded):
    """Whether folded text presses, clicks or taps something (``[presses]`` of
    ``languages.toml``: whole words; Chinese, Japanese and Korean entries anywhere)."""
    global _PRESSES
    if _PRESSES is None:
        from toolkit.core.door_data import load
        from toolkit.core.door_engine import written_without_spaces as spaceless

        entries = [e for words in load("languages.toml")["presses"].values() for e in words]
        _PRESSES = (
            frozenset(e for e in entries if not spaceless(e)),
            tuple(e for e in entries if spaceless(e)),
        )
    words, anywhere = _PRESSES
    return any(w in words for w in folded.split()) or any(e in folded for e in anywhere)


def _pressed_labels(text):
    """The quoted labels of two words or more in a text that presses something ("Click
    the 'Delete production database' button now?"): pressing a label does what it says, so
    each is read alone too. One word ("Click 'Delete'") names no object."""
    from toolkit.core.door_engine import fold, written_without_spaces

    if not any(q in text for q in _QUOTES):
        return []
    folded = fold("".join(c if c.isalnum() else " " for c in text))
    if not _presses(folded):
        return []
    labels, i = [], 0
    while i < len(text):
        close = _QUOTES.get(text[i])
        j = text.find(close, i + 1) if close else -1
        if j < 0:
            i += 1
            continue
        label = text[i + 1 : j]
        if 0 < len(label) <= _LABEL_MAX and (
            len(label.split()) >= 2 or written_without_spaces(label)
        ):
            labels.append(label)
        i = j + 1
    return labels


def _judge(text, prose=True, labels=True):
    """``{"rule", "language", "normalised", "unreadable"}`` for one text; raises
    ValueError when it cannot be read at all.

    English's word-by-word rules read every spelling first, then every language's rules
    (``door_engine``); then, in a text that presses something, each quoted label alone
    (``_pressed_labels``); with no rule fired, text the rules cannot read is named.
    """
    if isinstance(text, (str, bytes)) and len(text) > READ_LIMIT:
        raise ValueError(f"longer than {READ_LIMIT:,} characters: too long to read in time")
    spellings = _spellings(text)
    first = _readings(spellings[0])  # raises for NUL, lone surrogates
    from toolkit.core import door_engine
    from toolkit.core.door_readable import is_word, unknown_language

    match = door_engine.word_match

    for k, spelling in enumerate(spellings):
        try:
            readings = first if k == 0 else _readings(spelling)
        except ValueError:
            continue  # a decoded spelling with a NUL: the text as written is read
        foreign = door_engine.foreign_words(spelling) if not spelling.isascii() or k == 0 else None
        if foreign:
            # A function word of the other language reads as "the" (a possessive as
            # "my"): distances stay, and the word after it reads as a noun ("del post" is
            # no verb "post").
            mask = foreign[1]
            readings = [" ".join(mask.get(w, w) for w in r.split(" ")) for r in readings]
        for reading in readings:
            rule = match(reading)
            if rule and not (foreign and door_engine.quiets_english(foreign[0], rule, spelling)):
                return {"rule": rule, "language": "en", "normalised": reading, "unreadable": None}

    why = None
    for spelling in spellings:
        counts = door_engine.scripts(spelling)
        # ``is_word``: a verb of one language with an object of another too ("borrar
        # the users table" reads language "es+en").
        found = door_engine.match(spelling, counts, is_word)
        if found:
            norm = door_engine.fold(spelling).strip()
            return {"rule": found[1], "language": found[0], "normalised": norm, "unreadable": None}
        why = (
            why
            or door_engine.unreadable(spelling, counts)
            or (prose and unknown_language(spelling))
        )
    pressed = [lab for sp in spellings for lab in _pressed_labels(sp)] if labels else ()
    for label in dict.fromkeys(pressed):
        try:
            found = _judge(label, prose, labels=False)
        except ValueError:
            continue
        if found["rule"]:
            return found
    return {"rule": None, "language": None, "normalised": first[0], "unreadable": why}


def classify(text, prose=True) -> Verdict:
    """``Verdict(door, reason)`` for one question's text (str, or UTF-8 bytes); the text
    may be long (a question, its header and options joined by newlines).

    One-way: ``("one-way", "keyword:<rule>")``; text the rules cannot read (lone
    surrogates, NUL, invalid UTF-8, not text at all): ``("one-way", "unreadable")``;
    text mostly in a language or script without rules, or (``prose``, all but an id's
    words) mostly of words no language with rules has (``door_readable``): ``("one-way",
    "unreadable-language")``; otherwise ``("two-way", "no-match")``. Never raises.
    """
    try:
        found = _judge(text, prose)
    except ValueError:
        return Verdict(ONE_WAY, UNREADABLE)
    if found["rule"]:
        return Verdict(ONE_WAY, "keyword:" + found["rule"])
    if found["unreadable"]:
        return Verdict(ONE_WAY, UNREADABLE_LANGUAGE)
    return Verdict(TWO_WAY, NO_MATCH)


def explain(text) -> dict:
    """Decision, language, rule and normalised text, for ``plantune doors explain``."""
    try:
        found = _judge(text)
    except ValueError as e:
        return {
            "door": ONE_WAY,
            "reason": UNREADABLE,
            "rule": None,
            "language": None,
            "normalised": None,
            "problem": str(e),
        }
    rule = found["rule"]
    if rule:
        reason = "keyword:" + rule
    elif found["unreadable"]:
        reason = UNREADABLE_LANGUAGE
    else:
        reason = NO_MATCH
    out = {
        "door": ONE_WAY if rule or found["unreadable"] else TWO_WAY,
        "reason": reason,
        "rule": rule,
        "language": found["language"],
        "normalised": found["normalised"],
    }
    if found["unreadable"]:
        out["problem"] = {
            "script": "mostly letters of a script no rules read",
            "words": "mostly words no language with rules has (toolkit/data/doors/words)",
        }.get(found["unreadable"], "mostly words of a language without rules")
    return out


# --------------------------------------------------------------------------
# Question-level decisions

_bundled_entries: list | None = None
_bundled_doors: dict | None = None


def load_bundled_registry() -> list:
    """The 53 bundled question definitions (cached; treat as read-only)."""
    global _bundled_entries
    if _bundled_entries is None:
        import json

        with open(REGISTRY_PATH, encoding="utf-8") as fh:
            _bundled_entries = json.load(fh)
    return _bundled_entries


def bundled_door_types() -> dict:
    """``{question_id: door_type}`` for the bundled registry (cached; read-only)."""
    global _bundled_doors
    if _bundled_doors is None:
        _bundled_doors = {e["id"]: e["door_type"] for e in load_bundled_registry()}
    return _bundled_doors


def bundled_one_way_ids() -> frozenset:
    """Canonical ids of the bundled one-way questions: the floor a registry sync keeps."""
    return frozenset(canonical_id(k) for k, v in bundled_door_types().items() if v == ONE_WAY)


# The last registry looked up by canonical id: (the mapping, a copy of it, {canonical id:
# door of the first key with that id}). Used only while the mapping still equals the copy,
# so a registry changed in place is read again.
_canonical_doors = (None, None, None)


def _by_canonical_id(registry):
    global _canonical_doors
    seen, copy, doors = _canonical_doors
    if seen is not registry or copy != registry:
        doors = {}
        for k, v in registry.items():  # a mapping keyed by non-canonical spellings
            doors.setdefault(canonical_id(k), v)
        _canonical_doors = (registry, dict(registry), doors)
    return doors


def _door_of(registry, question_id):
    door = registry.get(question_id)
    if door is None:
        key = canonical_id(question_id)
        door = registry.get(key)
        if door is None and registry:
            door = _by_canonical_id(registry).get(key)
    if not isinstance(door, str) and hasattr(door, "get"):
        door = door.get("door_type")  # tolerate {id: entry} as well as {id: door_type}
    return door


def __getattr__(name):
    # RULE_NAMES lives with the rules, loaded only when asked for.
    if name == "RULE_NAMES":
        from toolkit.core.door_engine import rule_names

        return rule_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def decide(
    question_id=None,
    skill=None,
    category=None,
    summary=None,
    registry=None,
) -> Classification:
    """Classify a question without a database; ``registry`` maps id -> door_type.

    One-way when the registry (canonical id), the skill:category pair or the summary says
    so; a registered two-way id is two-way only if its summary is harmless too.
    """
    registered = None
    if isinstance(question_id, str) and question_id:
        if registry is None:
            registry = bundled_door_types()
        registered = _door_of(registry, question_id)
        if registered == ONE_WAY:
            return Classification(True, "registry")
    if skill and category and f"{skill}:{category}" in SKILL_CATEGORY_ONE_WAY:
        return Classification(True, "skill-category")
    if summary is not None and summary != "":
        verdict = classify(summary)
        if verdict.door == ONE_WAY:
            rule = verdict.reason.partition(":")[2] or None
            return Classification(True, verdict.reason, rule)
    if registered is not None:
        return Classification(False, "registry")
    return Classification(False, "default-two-way")


def is_one_way(question_id=None, skill=None, category=None, summary=None, registry=None) -> bool:
    return decide(question_id, skill, category, summary, registry).one_way


_REGISTRY_SQL = None
_KNOWN_SQL = (
    "SELECT source FROM door_knowledge WHERE canonical_id IN (?, ?) ORDER BY source LIMIT 1"
)


def keys_of(question_id):
    """The id's canonical form and the key SQL stores for this very spelling (they differ
    for a code-name spelling, which SQL does not split)."""
    key = canonical_id(question_id)
    return key, sql_key(question_id)


def registry_door(conn, question_id):
    """``(id as registered, door_type, skill, category)`` for the id's canonical form (or
    the key of this spelling), or None."""
    global _REGISTRY_SQL
    if _REGISTRY_SQL is None:
        _REGISTRY_SQL = (
            "SELECT id, door_type, skill, category FROM registry_questions"
            f" WHERE {canonical_id_sql('id')} IN (?, ?) ORDER BY door_type = 'two-way' LIMIT 1"
        )
    return conn.execute(_REGISTRY_SQL, keys_of(question_id)).fetchone()


def known_one_way(conn, question_id):
    """The source of a recorded one-way fact about the id (``door_knowledge``), or None."""
    keys = keys_of(question_id)
    if not keys[0]:
        return None
    row = conn.execute(_KNOWN_SQL, keys).fetchone()
    return row[0] if row else None


def id_text(question_id) -> str:
    """An id read as words: ``drop-users-table`` and ``dropUsersTable`` → ``drop users table``."""
    key = canonical_id(_decamel(question_id)) or ""
    return key.replace("-", " ")


def rules_version() -> str:
    """A short hash of the rules' text (every module of them and every language's data
    file), as this process holds them:
    recorded summaries are re-read when it changes.

    When the files no longer are the ones this process read (the rules were upgraded while
    it ran), their text is not what it reads summaries with: the version is then one no
    other run has, so the next run reads every summary again.
    """
    import hashlib

    from toolkit.core import door_data, door_decode, door_engine, door_readable, door_shell  # noqa: F401  (every module read)

    read = door_data.as_read()
    digest = hashlib.sha1()
    settled = True
    for path in door_data.rule_files() + door_data.data_files():
        with open(path, "rb") as f:
            raw = f.read()
        digest.update(raw)
        held = door_data.held(os.path.basename(path))
        if held is not None and held != raw:
            settled = False  # a data file this process read has changed since
    if not settled or not door_data.still_as_read(read):  # the text read is theirs
        return "unsettled-" + os.urandom(6).hex()
    return digest.hexdigest()[:12]
