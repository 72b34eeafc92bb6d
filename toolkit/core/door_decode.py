r"""Encodings that hide a text's words, undone before any door rule reads it.

``decoded(text)`` gives the other spellings of a text a reader would see: HTML character
references (``D&#114;op``, ``&nbsp;``), tags and comments (``Dr<i></i>op``), markdown
emphasis, code spans and links, URL escapes, backslash escapes (``Dr\x6fp``,
``\u0064rop``, ``\*\*``), base64 (a long word of its alphabet that decodes to
printable UTF-8 text: ``RHJvcCB0aGUgdXNlcnMgdGFibGU=``). Look-alike letters from other scripts are folded later, by
``doors.normalise``. Each step runs only when its mark is in the text, so plain prose
costs a few ``in`` tests; ``html`` is imported only for text with an "&".
"""

from toolkit.core.door_data import record_source

record_source(__file__)  # the file as read: ``doors.rules_version`` names it

__all__ = ["decoded"]

_HEX = frozenset("0123456789abcdefABCDEF")


def _entities(text):
    if "&" not in text:
        return text
    import html  # only for text with an "&": its entity table is large

    # Twice: "&amp;#114;" is an entity written as an entity.
    return html.unescape(html.unescape(text)).replace("\u00a0", " ")


def _tags(text, gap):
    """Comments and tags dropped (``gap`` in their place), when the text has any."""
    if "<" not in text:
        return text
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "<":
            if text.startswith("<!--", i):
                end = text.find("-->", i + 4)
                if end >= 0:
                    out.append(gap)
                    i = end + 3
                    continue
            nxt = text[i + 1 : i + 2]
            if nxt.isalpha() or nxt in ("/", "!", "?"):
                end = text.find(">", i + 1)
                if end >= 0 and "<" not in text[i + 1 : end]:
                    out.append(gap)
                    i = end + 1
                    continue
        out.append(c)
        i += 1
    return "".join(out)


def _percent(text):
    """``%HH`` escapes decoded as UTF-8 bytes (``+`` left alone: it is a plus in prose)."""
    if "%" not in text:
        return text
    raw, i, n, changed = bytearray(), 0, len(text), False
    while i < n:
        c = text[i]
        if c == "%" and i + 2 < n + 0 and text[i + 1] in _HEX and text[i + 2] in _HEX:
            raw.append(int(text[i + 1 : i + 3], 16))
            i += 3
            changed = True
            continue
        raw.extend(c.encode("utf-8", "surrogatepass"))
        i += 1
    if not changed:
        return text
    return raw.decode("utf-8", "replace")


_SIMPLE_ESCAPES = {"n": " ", "t": " ", "r": " ", "0": ""}


def _backslashes(text):
    r"""``\xHH``, ``\uHHHH``, ``\UHHHHHHHH`` read as their characters; ``\n``, ``\t``
    as spaces; a backslash before anything else dropped (``\*\*drop\*\*``)."""
    if "\\" not in text:
        return text
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        k = text[i + 1]
        size = {"x": 2, "u": 4, "U": 8}.get(k)
        if size:
            digits = text[i + 2 : i + 2 + size]
            if len(digits) == size and all(d in _HEX for d in digits):
                code = int(digits, 16)
                if code < 0x110000 and not 0xD800 <= code < 0xE000:
                    out.append(chr(code))
                    i += 2 + size
                    continue
        if k in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[k])
        elif k != "\\":
            out.append(k)
        i += 2
    return "".join(out)


_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=")
_BASE64_MIN = 16  # shorter words of the alphabet are ordinary words and names
_WRAPPERS = "\"'`()[]{}<>,.;:!?"


def _base64_word(word):
    """The text ``word`` encodes in base64 (standard or URL-safe), or None."""
    import binascii  # built in: only for a long word of the alphabet

    body = word.rstrip("=")
    if "=" in body or body.isalpha() and (body.islower() or body.isupper()):
        return None  # padding inside, or a plain long word ("internationalization")
    body = body.replace("-", "+").replace("_", "/")
    try:
        raw = binascii.a2b_base64(body + "=" * (-len(body) % 4))
        text = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    visible = "".join(text.split())
    if len(visible) < 3 or not visible.isprintable() or not any(c.isalpha() for c in text):
        return None
    return text


def _base64(text):
    """Each long word of the base64 alphabet that decodes to printable text, read as it."""
    if len(text) < _BASE64_MIN:
        return text
    out, changed = [], False
    for word in text.split(" "):
        core = word.strip(_WRAPPERS + "\n\t")
        if len(core) >= _BASE64_MIN and _BASE64.issuperset(core):
            plain = _base64_word(core)
            if plain is not None:
                word, changed = word.replace(core, " " + plain + " "), True
        out.append(word)
    return " ".join(out) if changed else text


def _markdown(text):
    """Emphasis marks and code ticks dropped, ``[label](target)`` read as both."""
    if "](" in text:
        out, i = [], 0
        while True:
            j = text.find("](", i)
            if j < 0:
                out.append(text[i:])
                break
            start = text.rfind("[", i, j)
            end = text.find(")", j)
            if start < 0 or end < 0:
                out.append(text[i : j + 2])
                i = j + 2
                continue
            out.append(text[i:start])
            out.append(text[start + 1 : j] + " " + text[j + 2 : end])
            i = end + 1
        text = "".join(out)
    for mark in ("**", "__", "~~", "`", "*"):
        if mark in text:
            text = text.replace(mark, "")
    return text


def decoded(text):
    """The decoded spellings of ``text`` that differ from it (an empty list for plain
    prose). Tags and comments are read both as nothing (``Dr<i></i>op``) and as a
    space (``Drop<br>the<br>table``)."""
    plain = _base64(text)
    if plain != text:  # then the rest as for any text
        return [plain] + [s for s in decoded(plain) if s != text]
    if not any(m in text for m in "&<%\\*_`~]"):
        return []
    out = []
    for gap in ("", " "):
        step = text
        for _ in range(3):  # an encoding inside another: "%26%23114%3B", "&lt;i&gt;"
            before = step
            step = _percent(step)
            step = _entities(step)
            step = _tags(step, gap)
            step = _backslashes(step)
            step = _markdown(step)
            if step == before:
                break
        if step != text and step not in out:
            out.append(step)
        if "<" not in text and "&lt;" not in text and "%3c" not in text.lower():
            break
    return out
