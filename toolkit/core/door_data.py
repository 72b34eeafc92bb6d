"""The door rules' data files (``toolkit/data/doors``) and the files that read them.

The files are TOML, read by a small reader of the subset they use (``read_data``; a test
keeps it equal to ``tomllib``): importing ``tomllib`` (and ``re``) would cost every hook
process more than reading the rules a text needs does (measured: docs/performance.md,
"What the hot path leaves out"). Each file is read once per process, when a text first needs it (``load``); the digest of the bytes read is kept, so
``doors.rules_version`` can tell rules this process holds from rules upgraded since.

The modules that read them record their own files as they start (``record_source``), so
the version also names the code that applies the rules.
"""

import marshal
import os
import sys

from toolkit.core import DOOR_RULE_SOURCES, DOOR_SOURCES_BEFORE, source_stat

__all__ = [
    "DATA_DIR",
    "LANGUAGES",
    "WORD_FILES",
    "Families",
    "WordIndex",
    "as_read",
    "compile_all",
    "data_files",
    "load",
    "held",
    "read_data",
    "record_source",
    "rule_files",
    "still_as_read",
    "word_data",
]

DATA_DIR = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "doors"
)
# The languages with rules, in the order they are read.
LANGUAGES = ("en", "es", "fr", "de", "pt", "it", "ru", "zh", "ja", "ko")
# The languages whose rules are also read word by word (``door_reader``): ``<code>-words.toml``.
WORD_FILES = ("en",)
# The shape of a parsed file's cache (``load``): raise it when that shape changes.
_CACHE_FORMAT = 3

_AS_READ = {}
_HELD = {}  # data file name -> the bytes this process read
_CODE = None  # this file's text, once read (``_reader_text``)


def record_source(path):
    """A rules module's file as the module started (``doors.rules_version`` names it)."""
    _AS_READ[os.path.basename(path)] = source_stat(path)


record_source(__file__)


def rule_files(names=DOOR_RULE_SOURCES):
    """The paths of the modules that apply the rules, in order."""
    here = os.path.dirname(__file__)
    return [os.path.join(here, name) for name in names]


def as_read(names=DOOR_RULE_SOURCES):
    """The stats of the named modules' files as this process read them, or None when that
    is not known (a module not imported yet, or a file replaced while Python read it)."""
    key = []
    for name in names:
        stat = _AS_READ.get(name)
        if stat is None or stat != DOOR_SOURCES_BEFORE.get(name):
            return None
        key.append(stat)
    return key


def still_as_read(key, names=DOOR_RULE_SOURCES):
    """Whether the named modules' files are still the ones read (``key``, from ``as_read``)."""
    return key is not None and [source_stat(p) for p in rule_files(names)] == key


def data_files():
    """Every rules data file, in a fixed order (``doors.rules_version`` hashes them)."""
    return (
        [os.path.join(DATA_DIR, f"{lang}.toml") for lang in LANGUAGES]
        + [os.path.join(DATA_DIR, f"{lang}-words.toml") for lang in WORD_FILES]
        + [os.path.join(DATA_DIR, "languages.toml")]
    )


def _value(text, where):
    if text[:1] == '"' and text[-1:] == '"' and len(text) >= 2 and '"' not in text[1:-1]:
        return text[1:-1]
    if text[:1] == "[" and text[-1:] == "]":
        inner = text[1:-1].strip()
        if not inner:
            return []
        if inner[0] == '"' and inner[-1] == '"':  # strings only: one split, then checked
            items = inner[1:-1].split('", "')
            if inner.count('"') == 2 * len(items):  # no quote inside an item
                return items
        return [_value(part.strip(), where) for part in inner.split(", ")]
    if text in ("true", "false"):
        return text == "true"
    if text.isdigit():
        return int(text)
    raise ValueError(f"{where}: not a value the door rules use: {text[:40]}")


def read_data(text, where="data"):
    """The dict a door rules file holds: TOML limited to comments, ``[table]``,
    ``[[array of tables]]`` and ``key = value`` lines whose value is a string without
    escapes, an integer, a boolean or a one-line list of those. ValueError otherwise."""
    data = {}
    table = data
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line[0] == "#":
            continue
        if line[:2] == "[[" and line[-2:] == "]]":
            table = {}
            data.setdefault(line[2:-2].strip(), []).append(table)
        elif line[0] == "[" and line[-1] == "]":
            table = data.setdefault(line[1:-1].strip(), {})
        else:
            key, eq, value = line.partition(" = ")
            if not eq or not key or key in table:
                raise ValueError(f"{where}:{n}: not a key = value line")
            table[key] = _value(value.strip(), f"{where}:{n}")
    return data


def _cache_path(name):
    return os.path.join(DATA_DIR, "__pycache__", f"{name}.{sys.implementation.cache_tag}.marshal")


def _reader_text():
    """This file's text as the running reader was read from, or None when that is not
    known (the file replaced since Python read it): then no cache is used or written."""
    global _CODE
    if _CODE is None:
        _CODE = False
        name = os.path.basename(__file__)
        try:
            with open(__file__, "rb") as f:
                text = f.read()
        except OSError:
            return None
        stat = source_stat(__file__)
        if stat is not None and stat == _AS_READ.get(name) == DOOR_SOURCES_BEFORE.get(name):
            _CODE = text
    return _CODE or None


def _cached(name, raw, code):
    """What the cache of ``name`` holds (``_store``) if it was made from exactly ``raw``
    by exactly this reader (``code``); else None (missing, unreadable, corrupted, stale)."""
    try:
        with open(_cache_path(name), "rb") as f:
            held = marshal.loads(f.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if (
        type(held) is tuple
        and len(held) == 6
        and held[0] == _CACHE_FORMAT
        and held[1] == code
        and held[2] == raw
        and all(type(part) is dict for part in held[3:])
    ):
        return held[3:]
    return None


def _store(name, raw, code, data):
    """Write the cache of ``name`` (whole or not at all): the file's tables but
    ``[families]``, each family's list, and the families' index (``WordIndex``). A
    folder that cannot be written leaves the file to be parsed on every read."""
    rest = {key: value for key, value in data.items() if key != "families"}
    lists = {key: marshal.dumps(entries) for key, entries in data.get("families", {}).items()}
    buckets = {key: marshal.dumps(part) for key, part in _invert(data).items()}
    path = _cache_path(name)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(marshal.dumps((_CACHE_FORMAT, code, raw, rest, lists, buckets)))
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _read(name):
    """``(data, None, None)`` parsed now, or ``(tables but [families], families' lists,
    index buckets)`` from the cache (``load``)."""
    path = os.path.join(DATA_DIR, name)
    with open(path, "rb") as f:
        raw = f.read()
    _HELD[name] = raw
    code = _reader_text()
    held = _cached(name, raw, code) if code else None
    if held is not None:
        return held
    data = read_data(raw.decode("utf-8"), path)
    if code:
        _store(name, raw, code, data)
    return data, None, None


def load(name):
    """The dict data file ``name`` holds (read now; the bytes read are kept: hashing them
    here would import ``hashlib``, which costs more than reading the file).

    The parse is kept beside the data (``__pycache__/<name>.<tag>.marshal``) with the very
    bytes it was parsed from and the text of this reader: it is used only when both equal
    the file and the reader read now, so an edited file is always parsed again (no size
    or time stamp is trusted). Loading it costs about a third of parsing."""
    data, lists, _ = _read(name)
    if lists is not None:
        data = dict(data, families=dict(Families(name, lists).items()))
    return data


def word_data(name):
    """Data file ``name`` (as ``load``) and the ``WordIndex`` of its families; from the
    cache, ``[families]`` is a ``Families`` (each family's list read when asked)."""
    data, lists, buckets = _read(name)
    if lists is None:
        return data, WordIndex(data)
    data = dict(data, families=Families(name, lists))
    return data, WordIndex(data, buckets)


class Families:
    """``[families]`` from the cache: the names at once, a family's list when asked (a
    damaged one read from the file's own bytes)."""

    __slots__ = ("_name", "_lists")

    def __init__(self, name, lists):
        self._name, self._lists = name, lists

    def __iter__(self):
        return iter(self._lists)

    def __len__(self):
        return len(self._lists)

    def __contains__(self, family):
        return family in self._lists

    def __getitem__(self, family):
        found = self._lists[family]
        if type(found) is bytes:
            try:
                found = marshal.loads(found)
            except (EOFError, ValueError, TypeError):
                found = None
            if type(found) is not list:
                found = read_data(_HELD[self._name].decode("utf-8"))["families"][family]
            self._lists[family] = found
        return found

    def get(self, family, default=None):
        return self[family] if family in self._lists else default

    def keys(self):
        return self._lists.keys()

    def values(self):
        return [self[family] for family in self._lists]

    def items(self):
        return [(family, self[family]) for family in self._lists]


def _invert(data):
    """``{bucket: {entry: (family position, ...)}}`` for the ``[families]`` table: each
    entry under its first three characters."""
    buckets = {}
    for k, entries in enumerate(data.get("families", {}).values()):
        for entry in entries:
            part = buckets.setdefault(entry[:3], {})
            found = part.get(entry, ())
            if k not in found:
                part[entry] = found + (k,)
    return buckets


class WordIndex:
    """Which families (by position in ``[families]``) hold an entry. From a cache, read a
    bucket (the entries sharing their first three characters) at a time, so a text loads
    the buckets of its own words only; else every family made a set (in C) at once."""

    __slots__ = ("_buckets", "_data", "_sets", "_all")

    def __init__(self, data, buckets=None):
        self._data, self._buckets = data, buckets
        if buckets is None:
            self._make_sets()

    def _make_sets(self):
        self._buckets = None
        self._sets = [frozenset(entries) for entries in self._data.get("families", {}).values()]
        self._all = frozenset().union(*self._sets)

    def get(self, entry):
        """The positions of the families holding ``entry`` (a tuple), or None."""
        if self._buckets is not None:
            part = self._buckets.get(entry[:3])
            if part is None:
                return None
            if type(part) is bytes:
                try:
                    part = marshal.loads(part)
                except (EOFError, ValueError, TypeError):
                    part = None
                self._buckets[entry[:3]] = part
            if type(part) is dict:
                return part.get(entry)
            self._make_sets()  # a damaged cache: the file's own families
        if entry not in self._all:
            return None
        return tuple(k for k, entries in enumerate(self._sets) if entry in entries)


def compile_all():
    """Parse every rules file (``*.toml``) and write its cache (``make venv`` runs this)."""
    for path in data_files():
        if os.path.dirname(path) == DATA_DIR and path.endswith(".toml"):
            load(os.path.basename(path))


def held(name):
    """The bytes of data file ``name`` as this process read them, or None if unread."""
    return _HELD.get(name)
