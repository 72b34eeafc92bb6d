"""``loads`` and ``dumps`` for the hot path, straight from the ``_json`` accelerator.

Importing the ``json`` package costs every hook process about 1.5 ms (it compiles its
regexes and builds its default encoder and decoder); the C scanner and encoder underneath
are what ``json`` itself runs, so results are identical (tests compare them on random
input). Only the options the hot path uses are handled here; anything else, or a Python
without ``_json``, goes to the real ``json`` module.
"""

try:
    import _json
except ImportError:  # pragma: no cover - every CPython build has it
    _json = None

_WHITESPACE = " \t\n\r"


class _Context:
    # The attributes the C scanner reads, as on json.JSONDecoder.
    __slots__ = ("strict", "object_hook", "object_pairs_hook", "parse_float", "parse_int",
                 "parse_constant", "memo")

    def __init__(self, object_pairs_hook, parse_constant):
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = object_pairs_hook
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = parse_constant or _CONSTANTS.__getitem__
        self.memo = {}


_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
_scanners = {}


def _error(message, pos):
    from json import JSONDecodeError

    return JSONDecodeError(message, "", pos)


def loads(s, *, object_pairs_hook=None, parse_constant=None):
    """``json.loads(s, object_pairs_hook=..., parse_constant=...)`` for a ``str``."""
    if _json is None or not isinstance(s, str):
        import json

        return json.loads(s, object_pairs_hook=object_pairs_hook, parse_constant=parse_constant)
    key = (object_pairs_hook, parse_constant)
    scan = _scanners.get(key)
    if scan is None:
        scan = _scanners[key] = _json.make_scanner(_Context(object_pairs_hook, parse_constant))
    if s.startswith("\ufeff"):
        raise _error("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
    start = len(s) - len(s.lstrip(_WHITESPACE))
    try:
        obj, end = scan(s, start)
    except StopIteration as err:
        raise _error("Expecting value", err.value) from None
    except SystemError:
        # The C scanner raises its errors as json.decoder.JSONDecodeError, looked up in
        # sys.modules only: before json is imported it fails this way. Bad input is not
        # the hot path, so let json itself parse it and raise.
        import json

        return json.loads(s, object_pairs_hook=object_pairs_hook, parse_constant=parse_constant)
    if s[end:].strip(_WHITESPACE):
        raise _error("Extra data", end)
    return obj


def _default(o):
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def dumps(obj, *, ensure_ascii=True, separators=None, sort_keys=False):
    """``json.dumps`` with these options only (no indent, no default)."""
    item_sep, key_sep = separators if separators is not None else (", ", ": ")
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(obj, ensure_ascii=ensure_ascii, separators=(item_sep, key_sep),
                          sort_keys=sort_keys)
    string = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    if isinstance(obj, str):
        return string(obj)
    # A fresh markers dict per call, as json does: circular references raise ValueError.
    encode = _json.make_encoder({}, _default, string, None, key_sep, item_sep, sort_keys,
                                False, True)
    return "".join(encode(obj, 0))
