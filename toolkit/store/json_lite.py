"""``loads`` and ``dumps`` for the hot path, straight from the ``_json`` accelerator.

Importing the ``json`` package (and ``re`` with it: it compiles its regexes and builds its
default encoder and decoder) costs every hot call that reads or writes JSON, ``gstack-question-log`` and both hooks
most (``benchmarks/hot_path.py``; measured: see docs/performance.md, section "What the hot path leaves out"). The C scanner and encoder underneath are
what ``json`` itself runs, so results are identical (tests compare them on random input). Only the options the hot path uses are handled here; anything else, or a Python
without ``_json``, goes to the real ``json`` module.
"""

try:
    import _json
except ImportError:  # pragma: no cover - every CPython build has it
    _json = None

_WHITESPACE = " \t\n\r"


class _Context:
    # The attributes the C scanner reads, as on json.JSONDecoder.
    __slots__ = (
        "memo",
        "object_hook",
        "object_pairs_hook",
        "parse_constant",
        "parse_float",
        "parse_int",
        "strict",
    )

    def __init__(self, object_pairs_hook, parse_constant, parse_float=float, parse_int=int):
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = object_pairs_hook
        self.parse_float = parse_float
        self.parse_int = parse_int
        self.parse_constant = parse_constant or _CONSTANTS.__getitem__
        self.memo = {}


_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
_scanners = {}


def _error(message, doc, pos):
    from json import JSONDecodeError

    return JSONDecodeError(message, doc, pos)


def loads(s, *, object_pairs_hook=None, parse_constant=None):
    """``json.loads(s, object_pairs_hook=..., parse_constant=...)`` for a ``str``."""
    return _loads_with(s, object_pairs_hook, float, int, parse_constant)


def _loads_with(s, object_pairs_hook, parse_float, parse_int, parse_constant):
    if _json is None or not isinstance(s, str):
        import json

        return json.loads(
            s,
            object_pairs_hook=object_pairs_hook,
            parse_float=parse_float,
            parse_int=parse_int,
            parse_constant=parse_constant,
        )
    key = (object_pairs_hook, parse_constant, parse_float, parse_int)
    scan = _scanners.get(key)
    if scan is None:
        scan = _scanners[key] = _json.make_scanner(
            _Context(object_pairs_hook, parse_constant, parse_float, parse_int)
        )
    if s.startswith("\ufeff"):
        raise _error("Unexpected UTF-8 BOM (decode using utf-8-sig)", s, 0)
    start = len(s) - len(s.lstrip(_WHITESPACE))
    try:
        obj, end = scan(s, start)
    except StopIteration as err:
        raise _error("Expecting value", s, err.value) from None
    except SystemError:
        # The C scanner raises its errors as json.decoder.JSONDecodeError, looked up in
        # sys.modules only: before json is imported it fails this way. Bad input is not
        # the hot path, so let json itself parse it and raise.
        import json

        return json.loads(
            s,
            object_pairs_hook=object_pairs_hook,
            parse_float=parse_float,
            parse_int=parse_int,
            parse_constant=parse_constant,
        )
    if s[end:].strip(_WHITESPACE):
        raise _error("Extra data", s, end)
    return obj


def _default(o):
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def load(fp, **kw):
    """``json.load``: ``loads`` of the file's whole text."""
    return loads(fp.read(), **kw)


def dumps(obj, *, ensure_ascii=True, separators=None, sort_keys=False, indent=None):
    """``json.dumps`` with these options only (no default; ``indent`` a number of spaces,
    without ``sort_keys``)."""
    if indent is not None:
        if separators is not None or sort_keys or _json is None:
            import json

            return json.dumps(
                obj,
                ensure_ascii=ensure_ascii,
                separators=separators,
                sort_keys=sort_keys,
                indent=indent,
            )
        string = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
        out = []
        _indented(obj, string, " " * indent, 0, out, {})
        return "".join(out)
    item_sep, key_sep = separators if separators is not None else (", ", ": ")
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(
            obj, ensure_ascii=ensure_ascii, separators=(item_sep, key_sep), sort_keys=sort_keys
        )
    string = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    if isinstance(obj, str):
        return string(obj)
    # A fresh markers dict per call, as json does: circular references raise ValueError.
    encode = _json.make_encoder(
        {}, _default, string, None, key_sep, item_sep, sort_keys, False, True
    )
    return "".join(encode(obj, 0))


def _float(o):
    # json's float format: repr, and the JavaScript names of the non-finite values.
    if o != o:
        return "NaN"
    if o == _INF:
        return "Infinity"
    if o == _NEG_INF:
        return "-Infinity"
    return float.__repr__(o)


def _scalar(o, string):
    """A scalar value's JSON text, or None for a container or an unknown type."""
    if isinstance(o, str):
        return string(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float(o)
    return None


def _key(k):
    # json turns a non-string key into the text it would write for it as a value.
    if isinstance(k, str):
        return k
    text = _scalar(k, None)
    if text is None:
        raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")
    return text


def _indented(o, string, indent, level, out, markers):
    """What json's pure-Python encoder writes for ``indent`` (the C encoder has no indent;
    the json package would cost this process its regexes)."""
    text = _scalar(o, string)
    if text is not None:
        out.append(text)
        return
    if isinstance(o, (list, tuple)):
        items = o
    elif isinstance(o, dict):
        items = o.items()
    else:
        _default(o)
    if not o:
        out.append("[]" if isinstance(o, (list, tuple)) else "{}")
        return
    if id(o) in markers:
        raise ValueError("Circular reference detected")
    markers[id(o)] = o
    inner = "\n" + indent * (level + 1)
    is_list = isinstance(o, (list, tuple))
    out.append("[" if is_list else "{")
    first = True
    for item in items:
        out.append(inner if first else "," + inner)
        first = False
        if is_list:
            _indented(item, string, indent, level + 1, out, markers)
        else:
            out.append(string(_key(item[0])))
            out.append(": ")
            _indented(item[1], string, indent, level + 1, out, markers)
    out.append("\n" + indent * level + ("]" if is_list else "}"))
    del markers[id(o)]


# --------------------------------------------------------------------------
# Values no JSON line of gstack's can carry safely.
#
# Python's decoder turns 1e999 into inf and a 400-digit integer into an int no SQLite
# column holds; "\ud800" escapes decode to a lone surrogate no UTF-8 text holds; a value
# nested a thousand levels deep recurses through every later encode. Any of them in one
# record used to fail a whole import or a command with an internal error, so they are
# refused where the record is parsed, with the reason.

MAX_DEPTH = 64
# Outside a double's range (what JS reads a long integer as): Infinity in JS.
_INT_LIMIT = 1 << 1024
_ESCAPED_SURROGATE = None


class BadValue(ValueError):
    """A decoded value plantune refuses to store; ``str()`` is the reason."""


def _finite_float(text):
    v = float(text)
    if v in (_INF, _NEG_INF):
        raise BadValue("number out of range")
    return v


def _bounded_int(text):
    v = int(text)
    if not -_INT_LIMIT < v < _INT_LIMIT:
        raise BadValue("number out of range")
    return v


def _reject_constant(name):
    # JSON (and JS's JSON.parse) has no NaN or Infinity literals: plain invalid JSON.
    raise ValueError(f"invalid constant {name}")


_INF, _NEG_INF = float("inf"), float("-inf")


def loads_checked(s, *, object_pairs_hook=None, surrogates=False):
    """``loads`` that refuses what no stored record may hold, raising :class:`BadValue`
    with the reason: numbers out of a double's range (1e999), nesting deeper than
    ``MAX_DEPTH``, and (unless ``surrogates``) lone surrogates from ``\\udXXX`` escapes.
    Other bad JSON, the NaN and Infinity literals included, raises ValueError as ``loads``
    does.
    """
    global _ESCAPED_SURROGATE
    if isinstance(s, str) and s.count("{") + s.count("[") > MAX_DEPTH:
        # The decoder itself recurses: stop absurd depths before they reach it.
        depth = _max_depth(s)
        if depth > MAX_DEPTH:
            raise BadValue(f"nested deeper than {MAX_DEPTH} levels")
    obj = _loads_with(s, object_pairs_hook, _finite_float, _bounded_int, _reject_constant)
    if not surrogates and isinstance(s, str) and "\\u" in s:
        if _ESCAPED_SURROGATE is None:
            import re

            _ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
        if _ESCAPED_SURROGATE.search(s):
            _no_lone_surrogates(obj)
    return obj


def _max_depth(s):
    """The deepest bracket nesting of JSON text, brackets inside strings left out."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in s:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _no_lone_surrogates(v):
    t = type(v)
    if t is str:
        if not v.isascii():
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                raise BadValue("lone surrogate in a string") from None
    elif isinstance(v, dict):  # a dict subclass (questions.Event) too
        for k, item in v.items():
            _no_lone_surrogates(k)
            _no_lone_surrogates(item)
    elif t is list:
        for item in v:
            _no_lone_surrogates(item)
