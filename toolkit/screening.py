"""Injection screening and text sanitising for free text that agents write.

Hot path: stdlib only, every pattern compiled once at import.

The pattern texts are gstack's, verbatim (``pattern.pattern`` is the JS source).
They are compiled with ``re.IGNORECASE | re.ASCII`` so ``\\b``, ``\\w`` and case
folding behave like a JS regex without the ``u`` flag.  JS ``\\s`` also matches a
few non-ASCII spaces (NBSP, U+2028, the BOM, ...); rather than spell that class
out in every pattern (slow to compile: ~10 ms per process), ``js_space_fold``
maps those characters to ``\\x0b`` before matching.  ``\\x0b`` is in ASCII ``\\s``
but is not a literal space (so ``api key`` and ``force[- ]push`` still need a
real space, as in JS) and, like them, is not a word character for ``\\b``.
"""

from __future__ import annotations

import re

__all__ = [
    "JS_WHITESPACE",
    "SHARED_PATTERNS",
    "SHARED_PATTERN_SOURCES",
    "PREFERENCE_FREE_TEXT_PATTERNS",
    "PREFERENCE_FREE_TEXT_PATTERN_SOURCES",
    "js_regex",
    "js_space_fold",
    "js_trim",
    "utf16_len",
    "has_injection",
    "first_injection_match",
    "truncate",
    "flatten_newlines",
]

# ECMAScript WhiteSpace + LineTerminator: what JS `\s` and String.prototype.trim use.
# (Python's str.isspace differs: it includes \x1c-\x1f and \x85 but not \ufeff.)
JS_WHITESPACE = (
    "\t\n\x0b\x0c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_WS_CLASS_BODY = r"\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_FOLD_SPACES = {ord(ch): "\x0b" for ch in JS_WHITESPACE if not ch.isascii()}

FLAGS = re.IGNORECASE | re.ASCII


def js_space_fold(text: str) -> str:
    """Map JS-only (non-ASCII) whitespace to ``\\x0b`` so ASCII ``\\s`` sees it as JS would.

    Only for yes/no matching: the folded text is never stored.
    """
    return text if text.isascii() else text.translate(_FOLD_SPACES)


def js_regex(source: str, flags: int = FLAGS) -> re.Pattern:
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
    return re.compile("".join(out), flags)


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
SHARED_PATTERNS = tuple(re.compile(s, FLAGS) for s in SHARED_PATTERN_SOURCES)

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
PREFERENCE_FREE_TEXT_PATTERNS = tuple(
    re.compile(s, FLAGS) for s in PREFERENCE_FREE_TEXT_PATTERN_SOURCES
)

def has_injection(text: str, patterns=SHARED_PATTERNS) -> bool:
    """True when any pattern finds instruction-like content in ``text``."""
    text = js_space_fold(text)
    return any(p.search(text) for p in patterns)


def first_injection_match(text: str, patterns=SHARED_PATTERNS):
    """The JS source of the first matching pattern, or None (for actionable errors)."""
    text = js_space_fold(text)
    for p in patterns:
        if p.search(text):
            return p.pattern
    return None


def js_trim(s: str) -> str:
    """``String.prototype.trim``: strips JS whitespace, not Python's."""
    return s.strip(JS_WHITESPACE)


def utf16_len(s: str) -> int:
    """``s.length`` as JS counts it (astral characters are two code units)."""
    if s.isascii():
        return len(s)
    return len(s) + sum(1 for ch in s if ord(ch) > 0xFFFF)


def truncate(s: str, n: int) -> str:
    """Keep at most ``n`` UTF-16 code units, like JS ``s.slice(0, n)``.

    JS counts code units, so an emoji costs two.  Where JS would cut an astral
    character in half and keep a lone high surrogate, we drop the whole
    character instead (the result is then one unit shorter than ``n``): a lone
    surrogate cannot be stored as UTF-8.
    """
    if s.isascii():
        return s[:n]
    units = 0
    for i, ch in enumerate(s):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > n:
            return s[:i]
    return s


_NEWLINE_RUNS = re.compile("\n+")


def flatten_newlines(s: str) -> str:
    """Replace every run of ``\\n`` with one space (``\\r`` is left alone, as upstream)."""
    return _NEWLINE_RUNS.sub(" ", s) if "\n" in s else s
