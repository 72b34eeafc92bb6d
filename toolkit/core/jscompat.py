"""JavaScript-compatible text and numbers: gstack's scripts are JavaScript, and what plantune
writes into gstack's files or prints in its place must read exactly as theirs.

Each function is named for the one JS behaviour it reproduces. Two number formatters live
here because their callers need different exactness: ``number_string`` is ECMAScript's own
``Number::toString`` (the question log, the hooks), while ``number_string_exact_ints`` keeps
Python integers whole (the profile's figures, which are never that large).

Hot path: standard library only (json through ``json_lite``); ``re`` and ``decimal`` are
imported only where a rare value needs them.
"""

# json's own C scanner and encoder without the json package's import cost (hot path).
from toolkit.store import json_lite as json

# Infinity and NaN without the math module (an extension module loaded from disk: one more
# file for every logged question).
_INF = float("inf")
_NAN = float("nan")

# ECMAScript WhiteSpace + LineTerminator: what JS `\s` and String.prototype.trim use.
# (Python's str.isspace differs: it includes \x1c-\x1f and \x85 but not \ufeff.)
JS_WHITESPACE = (
    "\t\n\x0b\x0c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


# --- strings ----------------------------------------------------------------------------


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


def value_string(v, number=None) -> str:
    """``String(v)`` for a JSON value, as a template literal prints it (``null``,
    ``[object Object]``, arrays joined by commas with null as empty). ``number`` formats
    numbers (default :func:`number_string`)."""
    if isinstance(v, str):
        return v
    if v is None:
        return "null"
    if isinstance(v, (bool, int, float)):
        return (number or number_string)(v)
    if isinstance(v, list):
        return ",".join("" if x is None else value_string(x, number) for x in v)
    return "[object Object]"


# --- truthiness and numbers ---------------------------------------------------------------


def is_finite(x) -> bool:
    """``Number.isFinite`` for a float: neither NaN nor an infinity."""
    return x == x and x not in (_INF, -_INF)


def is_falsy(v) -> bool:
    """``!v`` for a JSON value: null, false, "", 0 and NaN (unlike Python, [] and {} are
    truthy in JS)."""
    if v is None or v is False:
        return True
    if isinstance(v, str):
        return v == ""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v == 0 or v != v
    return False


# Sources, not compiled patterns: only a string options_count needs them (re caches).
_JS_DECIMAL = r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
_JS_RADIX = r"0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)"
_RADIX_BASE = {"x": 16, "o": 8, "b": 2}


def _int_to_float(n: int) -> float:
    try:
        return float(n)
    except OverflowError:
        return _INF if n > 0 else -_INF


def to_number(value) -> float:
    """JS ``Number(value)`` for JSON values; NaN where JS gives NaN.

    ``true`` -> 1, ``null`` -> 0, ``""``/whitespace -> 0, ``" 3 "`` -> 3,
    ``"0x1A"`` -> 26, ``[3]`` -> 3 (arrays go through their string form),
    objects -> NaN.
    """
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int):
        return _int_to_float(value)
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        s = value.strip(JS_WHITESPACE)
        if not s:
            return 0.0
        import re  # rare (a string where a number belongs); costly to import per call

        if re.fullmatch(_JS_DECIMAL, s):
            return float(s.replace("Infinity", "inf"))
        if re.fullmatch(_JS_RADIX, s):
            return _int_to_float(int(s[2:], _RADIX_BASE[s[1].lower()]))
        return _NAN
    if isinstance(value, (list, tuple)):
        # String([x]) is String(x); more than one element always has a comma.
        if not value:
            return 0.0
        if len(value) > 1:
            return _NAN
        item = value[0]
        if item is None:
            return 0.0
        if isinstance(item, (bool, dict)):
            return _NAN  # "true" / "[object Object]"
        return to_number(item)
    return _NAN


def number_string(x) -> str:
    """``String(x)`` of a number, exactly as JS prints it: ``1`` not ``1.0``, ``1e+21``,
    ``1e-7``, ``0.00001``; integers past 2**53 as the double JS holds."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        if -(2**53) <= x <= 2**53:
            return str(x)
        x = _int_to_float(x)  # JS holds only a double
    if x != x:
        return "NaN"
    if x in (_INF, -_INF):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp = repr(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    point = len(whole) + (int(exp) if exp else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point
    # ECMAScript Number::toString, from the shortest round-trip digits.
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        fraction = "." + digits[1:] if k > 1 else ""
        body = f"{digits[0]}{fraction}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def round3(x):
    """Round half-up to 3 decimals on the exact binary value (JavaScript ``toFixed(3)``).

    What ``float(Decimal(x).quantize(Decimal("0.001"), ROUND_HALF_UP))`` gives, in integer
    arithmetic on the value's exact ratio (int division rounds correctly to a float).
    """
    if is_finite(x):
        n, d = abs(x).as_integer_ratio()
        q = (2000 * n + d) // (2 * d)
        if q < 10**28:  # decimal's default precision; beyond it quantize refuses
            return -(q / 1000) if str(float(x)).startswith("-") else q / 1000
    from decimal import ROUND_HALF_UP, Decimal

    return float(Decimal(x).quantize(Decimal("0.001"), ROUND_HALF_UP))


def number_string_exact_ints(x):
    """``String(x)`` for the profile's figures (``1`` not ``1.0``, ``1e-7``); Python ints, and
    integral floats below 1e21, are printed whole."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if x != x:
        return "NaN"
    if x in (_INF, -_INF):
        return "Infinity" if x > 0 else "-Infinity"
    if x == int(x) and abs(x) < 1e21:
        return str(int(x))
    text = repr(x)
    if "e" in text:
        mantissa, exp = text.split("e")
        exp = int(exp)
        if -7 < exp < 21:
            from decimal import Decimal

            # JS writes these positionally; Python switches to exponents earlier.
            return format(Decimal(text), "f")
        return f"{mantissa}e{'+' if exp > 0 else '-'}{abs(exp)}"
    return text


# --- JSON.stringify -------------------------------------------------------------------------

_LONE_SURROGATE = "[\ud800-\udfff]"


def json_string(s: str) -> str:
    """``JSON.stringify`` of a string: quoted, escaped, lone surrogates as ``\\uXXXX``."""
    out = json.dumps(s, ensure_ascii=False)
    if not out.isascii() and any("\ud800" <= c <= "\udfff" for c in out):
        import re

        # Well-formed JSON.stringify escapes lone surrogates instead of emitting them.
        out = re.sub(_LONE_SURROGATE, lambda m: "\\u%04x" % ord(m.group()), out)
    return out


def is_array_index(k: str) -> bool:
    """True for a key JS objects list first, in ascending order (``"0"``, ``"7"``, not ``"07"``)."""
    return k.isascii() and k.isdigit() and (k == "0" or k[0] != "0") and int(k) < 2**32 - 1


def _key_text(k) -> str:
    # Keys from JSON are always strings; Python callers may use numbers.
    if isinstance(k, str):
        return k
    if isinstance(k, (int, float)) and not isinstance(k, bool):
        return number_string(k)
    raise TypeError(f"keys must be str, not {type(k).__name__}")


def _encode(v, out: list):
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, str):
        out.append(json_string(v))
    elif isinstance(v, (int, float)):
        text = number_string(v)
        # JSON has no NaN/Infinity; JSON.stringify writes null for them.
        out.append("null" if text in ("NaN", "Infinity", "-Infinity") else text)
    elif isinstance(v, dict):
        items = [(_key_text(k), val) for k, val in v.items()]
        # JS objects list integer-like keys first, ascending, whatever the insertion order.
        if any(is_array_index(k) for k, _ in items):
            index_keys = [kv for kv in items if is_array_index(kv[0])]
            index_keys.sort(key=lambda kv: int(kv[0]))
            items = index_keys + [kv for kv in items if not is_array_index(kv[0])]
        out.append("{")
        for i, (k, val) in enumerate(items):
            if i:
                out.append(",")
            out.append(json_string(k))
            out.append(":")
            _encode(val, out)
        out.append("}")
    elif isinstance(v, (list, tuple)):
        out.append("[")
        for i, item in enumerate(v):
            if i:
                out.append(",")
            _encode(item, out)
        out.append("]")
    else:
        raise TypeError(f"{type(v).__name__} is not JSON serializable")


def stringify(record) -> str:
    """One compact JSON line, byte-identical to JS ``JSON.stringify(record)``."""
    out: list = []
    _encode(record, out)
    return "".join(out)


def numbers_after_round_trip(v):
    """``v`` with every number as it reads back after a JS round trip, or ``v`` itself.

    The mirror line is written with JS number formatting (``2.0`` -> ``2``, integers past
    2**53 rounded to a double), so the record keyed live and the line parsed back must
    agree on numbers for their keys to match.
    """
    t = type(v)
    if t is float:
        if v.is_integer():
            return int(v)
        return v
    if t is int:
        if -(2**53) <= v <= 2**53:
            return v
        try:
            return int(float(v))
        except OverflowError:
            return v
    if t is dict or isinstance(v, dict):  # an Event is a dict too
        out = None
        for k, item in v.items():
            new = numbers_after_round_trip(item)
            if new is not item or type(new) is not type(item):
                out = out if out is not None else dict(v)
                out[k] = new
        return v if out is None else out
    if t is list:
        new = [numbers_after_round_trip(item) for item in v]
        return v if all(a is b for a, b in zip(new, v)) else new
    return v


def integral_floats_as_ints(obj):
    """Deep copy with integral floats as ints (NaN and infinities as None), so that
    ``json.dumps`` prints numbers as ``JSON.stringify`` does."""
    if isinstance(obj, float):
        if not is_finite(obj):
            return None
        if obj == int(obj) and abs(obj) < 1e21:
            return int(obj)
        return obj
    if isinstance(obj, dict):
        return {k: integral_floats_as_ints(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [integral_floats_as_ints(v) for v in obj]
    return obj


def stringify_indented(obj):
    """``JSON.stringify(obj, null, 2)`` of plain values (the profile documents)."""
    return json.dumps(integral_floats_as_ints(obj), indent=2, ensure_ascii=False)


def stringify_plain(obj):
    """``JSON.stringify(obj)`` of plain values whose keys are never integer-like."""
    return json.dumps(integral_floats_as_ints(obj), separators=(",", ":"), ensure_ascii=False)


def in_property_order(d):
    """A dict in JavaScript's property order: integer-like keys ascending, then insertion."""
    ints = sorted((k for k in d if is_array_index(k)), key=int)
    return {**{k: d[k] for k in ints}, **{k: v for k, v in d.items() if not is_array_index(k)}}
