"""Injection screening and text sanitising for free text that agents write.

Hot path: stdlib only, every pattern compiled once at import.

The pattern texts are gstack's, verbatim (``pattern.pattern`` is the JS source).
They are compiled with ``re.IGNORECASE | re.ASCII`` so ``\\b``, ``\\w`` and case
folding behave like a JS regex without the ``u`` flag.  JS ``\\s`` also matches a
few non-ASCII spaces (NBSP, U+2028, the BOM, ...); rather than spell that class
out in every pattern (slow to compile in every process: see docs/performance.md), ``js_space_fold``
maps those characters to ``\\x0b`` before matching.  ``\\x0b`` is in ASCII ``\\s``
but is not a literal space (so ``api key`` and ``force[- ]push`` still need a
real space, as in JS) and, like them, is not a word character for ``\\b``.
"""

from toolkit.core.jscompat import JS_WHITESPACE

__all__ = [
    "LazyPatterns",
    "SHARED_PATTERNS",
    "SHARED_PATTERN_SOURCES",
    "PREFERENCE_FREE_TEXT_PATTERNS",
    "PREFERENCE_FREE_TEXT_PATTERN_SOURCES",
    "js_regex",
    "js_space_fold",
    "has_injection",
    "first_injection_match",
    "flatten_newlines",
]

_WS_CLASS_BODY = r"\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_FOLD_SPACES = {ord(ch): "\x0b" for ch in JS_WHITESPACE if not ch.isascii()}

# re.IGNORECASE | re.ASCII, spelled as numbers: ``re`` itself is imported only when a
# pattern is compiled (most texts need none), as importing it costs every hook several ms.
FLAGS = 2 | 256


def js_space_fold(text: str) -> str:
    """Map JS-only (non-ASCII) whitespace to ``\\x0b`` so ASCII ``\\s`` sees it as JS would.

    Only for yes/no matching: the folded text is never stored.
    """
    return text if text.isascii() else text.translate(_FOLD_SPACES)


def js_regex(source: str, flags: int = FLAGS):
    """Compile a JS regex source with JS's exact ``\\s`` spelled out.

    For the few patterns whose match result (not just yes/no) must keep the
    original characters; the screening lists use ``js_space_fold`` instead.
    """
    out = []
    in_class = False
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\" and i + 1 < len(source):
            pair = source[i : i + 2]
            if pair == r"\s":
                out.append(_WS_CLASS_BODY if in_class else "[" + _WS_CLASS_BODY + "]")
            else:
                out.append(pair)
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        out.append(ch)
        i += 1
    import re

    return re.compile("".join(out), flags)


class LazyPatterns:
    """An ordered list of regexes, each compiled the first time it could match.

    Every pattern here starts with a literal word (``ignore``, ``\\bdelete``, ...), and a
    text that does not contain that word (ASCII case-insensitively) cannot match the
    pattern, so :meth:`first_index` skips it without compiling it. Compiling all the
    lists up front costs a few milliseconds in every hook process; most texts need none
    of them. Indexing and iterating give compiled patterns, like a tuple of them.
    """

    __slots__ = ("sources", "flags", "keys", "_compiled")

    def __init__(self, sources, flags=FLAGS):
        self.sources = tuple(sources)
        self.flags = flags
        self.keys = tuple(_leading_word(s) for s in self.sources)
        self._compiled = [None] * len(self.sources)

    def compiled(self, i):
        p = self._compiled[i]
        if p is None:
            import re

            p = self._compiled[i] = re.compile(self.sources[i], self.flags)
        return p

    def first_index(self, text):
        """Index of the first pattern that matches ``text`` (already space-folded), or None."""
        lowered = text.lower()
        for i, key in enumerate(self.keys):
            if key in lowered and self.compiled(i).search(text):
                return i
        return None

    def __len__(self):
        return len(self.sources)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self.compiled(k) for k in range(len(self.sources))[i])
        return self.compiled(range(len(self.sources))[i])

    def __iter__(self):
        return (self.compiled(i) for i in range(len(self.sources)))

    def __add__(self, other):
        return tuple(self) + tuple(other)

    def __radd__(self, other):
        return tuple(other) + tuple(self)

    def __repr__(self):
        return f"LazyPatterns({self.sources!r})"


def _leading_word(source):
    """The literal word every match of ``source`` must contain, lower-cased."""
    body = source[2:] if source.startswith("\\b") else source
    n = 0
    while n < len(body) and body[n].isascii() and body[n].isalpha():
        n += 1
    if n < len(body) and body[n] in "?*{":
        n -= 1  # the last letter is optional
    if n <= 0:
        raise ValueError(f"pattern has no leading literal word: {source!r}")
    return body[:n].lower()


# The single shared list (gstack lib/jsonl-store.ts).  Question log, learnings and
# decisions all screen with this one; never re-declare a private copy (#1934).
SHARED_PATTERN_SOURCES = (
    r"ignore\s+(all\s+)?previous\s+(instructions|context|rules)",
    r"you\s+are\s+now\s+",
    r"always\s+output\s+no\s+findings",
    r"skip\s+(all\s+)?(security|review|checks)",
    r"\boverride\s+(all\s+)?(previous|prior|above|the\s+(rules|instructions|system\s+prompt))",
    r"\bsystem\s*:",
    r"\bassistant\s*:",
    r"\buser\s*:",
    r"\bhuman\s*:",
    r"disregard\s+(all\s+)?(previous|above|prior)",
    r"from\s+now\s+on\b",
    r"do\s+not\s+(report|flag|mention)",
    r"approve\s+(all|every|this)",
)
SHARED_PATTERNS = LazyPatterns(SHARED_PATTERN_SOURCES)

# The older local list that gstack-question-preference --write still applies to
# free_text.  It keeps the broad `override[:\s]`, so "I want to override this" is
# refused there while the shared list lets it through.
PREFERENCE_FREE_TEXT_PATTERN_SOURCES = (
    r"ignore\s+(all\s+)?previous\s+(instructions|context|rules)",
    r"you\s+are\s+now\s+",
    r"override[:\s]",
    r"\bsystem\s*:",
    r"\bassistant\s*:",
    r"do\s+not\s+(report|flag|mention)",
)
PREFERENCE_FREE_TEXT_PATTERNS = LazyPatterns(PREFERENCE_FREE_TEXT_PATTERN_SOURCES)


def _first(text, patterns):
    text = js_space_fold(text)
    if isinstance(patterns, LazyPatterns):
        i = patterns.first_index(text)
        return None if i is None else patterns[i]
    for p in patterns:
        if p.search(text):
            return p
    return None


def has_injection(text: str, patterns=SHARED_PATTERNS) -> bool:
    """True when any pattern finds instruction-like content in ``text``."""
    return _first(text, patterns) is not None


def first_injection_match(text: str, patterns=SHARED_PATTERNS):
    """The JS source of the first matching pattern, or None (for actionable errors)."""
    p = _first(text, patterns)
    return None if p is None else p.pattern


def flatten_newlines(s: str) -> str:
    """Replace every run of ``\\n`` with one space (``\\r`` is left alone, as upstream)."""
    if "\n" not in s:
        return s
    parts = s.split("\n")
    out, gap = [parts[0]], False
    for part in parts[1:]:
        gap = True
        if part:
            out.append(" ")
            out.append(part)
            gap = False
    if gap:
        out.append(" ")
    return "".join(out)
