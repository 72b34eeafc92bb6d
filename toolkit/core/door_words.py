"""How the door rules read a text: its words, the word families, and their cached index.

Words: normalised text is split into words (flags such as ``-rf`` and versions such as
``2.0.0`` stay whole; ``?``, ``!``, ``;`` and a sentence-ending ``.`` are breaks) by string
methods, following a token pattern that is never compiled on the hot path.

Families are plain sets of words and phrases (every inflection), made in a fixed order by
``door_families`` and then ``door_rules``; a family's id is its place in that order. They
are indexed into flat maps of strings to bit masks on first use, cached next to this
module's byte-code (``__pycache__/door-words.*.marshal``) keyed on every module that makes
words or families (``INDEX_SOURCES``) as this process read it (``as_read``): a new process
loads it, an edit builds it again, a process holding older rules leaves the cache alone.

The shapes a rule takes (a verb then its object, any word of a family, a word then a
flag) are here too; the rules themselves are in ``door_rules``.
"""

import os

from toolkit.core import DOOR_RULE_SOURCES, DOOR_SOURCES_BEFORE, source_stat

# The modules whose text decides what the rules find: the words and their index, the
# families, the rules, the other readings. Recorded summaries are read again when any of
# them changes (``doors.rules_version``).
RULE_SOURCES = DOOR_RULE_SOURCES
# The ones that make words and families: the word-index cache is keyed on them (the other
# readings only look words up).
INDEX_SOURCES = ("door_words.py", "door_families.py", "door_rules.py")

# Each rules module's file as the module started: ``record_source(__file__)`` is among the
# first things each of them does.
_AS_READ = {}


def record_source(path):
    _AS_READ[os.path.basename(path)] = source_stat(path)


record_source(__file__)


def rule_files(names=RULE_SOURCES):
    """The paths of the named rules modules (all of ``RULE_SOURCES``), in order."""
    here = os.path.dirname(__file__)
    return [os.path.join(here, name) for name in names]


def as_read(names):
    """The stats of the named modules' files as this process read them, or None when that
    is not known: a module not imported yet, or a file replaced between the package's
    import and the module's start (Python may have read either version). The same files
    never changed since have the same stats; a process that holds older rules than the
    files now hold is told by comparing these with ``source_stat`` now."""
    key = []
    for name in names:
        stat = _AS_READ.get(name)
        if stat is None or stat != DOOR_SOURCES_BEFORE.get(name):
            return None
        key.append(stat)
    return key


def still_as_read(names, key):
    """Whether the named modules' files are still the ones read (``key``, from ``as_read``)."""
    return key is not None and [source_stat(p) for p in rule_files(names)] == key


def _entries(groups):
    """The comma-separated entries of some strings, stripped, empty ones left out."""
    for group in groups:
        for entry in group.split(","):
            entry = entry.strip()
            if entry:
                yield entry


def _forms_now(*bases):
    """Each base verb with its regular inflections (irregular ones are listed by hand)."""
    out = set()
    for base in _entries(bases):
        out.add(base)
        if " " in base:  # phrasal verb: inflect the first word
            head, _, rest = base.partition(" ")
            out.update(f"{f} {rest}" for f in _forms_now(head))
        elif base.endswith("e"):
            out.update(
                (base + "s", base + "d", base[:-1] + "ing", base[:-1] + "ion", base[:-1] + "ions")
            )
        elif base.endswith("y") and base[-2:-1] not in "aeiou":
            out.update((base[:-1] + "ies", base[:-1] + "ied", base + "ing"))
        elif base.endswith(("s", "x", "z", "ch", "sh")):
            out.update((base + "es", base + "ed", base + "ing"))
        else:
            out.update((base + "s", base + "ed", base + "ing"))
            if (
                len(base) >= 3
                and base[-1] not in "aeiouwxy"
                and base[-2] in "aeiou"
                and base[-3] not in "aeiou"
            ):
                out.update((base + base[-1] + "ed", base + base[-1] + "ing"))
    return out


def _nouns_now(*words):
    """Each noun with its plural (phrases: the last word)."""
    out = set()
    for w in _entries(words):
        out.add(w)
        if w.endswith(("s", "x", "ch", "sh")):
            out.add(w + "es")
        elif w.endswith("y") and w[-2:-1] not in "aeiou":
            out.add(w[:-1] + "ies")
        else:
            out.add(w + "s")
    return out


def _version(word):
    return "." in word and (word[:1].isdigit() or word[:1] == "v" and word[1:2].isdigit())


def _entry_words(entry):
    """Split a family entry exactly the way ``_words`` splits text."""
    entry = entry.strip()
    if entry == "$":
        return ("$",)
    return tuple(_words(entry))


class _Expand:
    """A family group expanded only when the index is built."""

    __slots__ = ("fn", "args")

    def __init__(self, fn, args):
        self.fn, self.args = fn, args


def _forms(*bases):
    return _Expand(_forms_now, bases)


def _nouns(*words):
    return _Expand(_nouns_now, words)


# Every family, in the order made. ``door_rules`` closes the list once it has made its last
# family: the index is only built from a closed list, so no partial import can build, or
# cache, an index that lacks some family's words.
_FAMILIES = []
_closed = False


def _close_families():
    global _closed
    _closed = True


class _Family:
    """A set of words and phrases. Entries are indexed on first use (``_build``), so
    importing this module costs nothing; ``#version`` matches any version word."""

    __slots__ = ("groups", "id")
    count = 0

    def __init__(self, *groups):
        if _closed:
            raise RuntimeError("the word families are closed: add a family before the rules")
        self.groups = groups
        self.id = _Family.count
        _Family.count += 1
        _FAMILIES.append(self)

    def entries(self):
        for group in self.groups:
            if isinstance(group, _Family):
                yield from group.entries()
            elif isinstance(group, _Expand):
                yield from group.fn(*group.args)
            elif isinstance(group, str):
                yield from group.split(",")
            else:
                yield from group


# The word index (an ``_Index``): see _index_now; loaded on the first classification.
_INDEX = None
# The first bytes of a word-index cache file; a new layout takes a new number.
_CACHE_MAGIC = b"plantune door-words 4\n"


class _Index:
    """The word index, in shards keyed by a word's first three characters (a phrase: its
    first word's).

    Loading all of it (some 5,000 strings) cost a classification 0.7 ms, most of reading
    a question; a question's words need a few dozen shards, each loaded (``marshal``) on
    first use. Equal to the ``(singles, phrases, firsts, versions)`` it was made from.
    """

    __slots__ = ("versions", "_spans", "_blob", "_shards")

    def __init__(self, versions, spans, blob, shards=None):
        self.versions, self._spans, self._blob = versions, spans, blob
        self._shards = {} if shards is None else shards

    @classmethod
    def of(cls, index):
        """The shards of ``(singles, phrases, firsts, versions)``, all loaded."""
        singles, phrases, firsts, versions = index
        shards = {}
        for part, table in enumerate((singles, phrases, firsts)):
            for key, value in table.items():
                # A phrase goes with its first word: the scan looks it up from there.
                shards.setdefault(key.partition(" ")[0][:3], ({}, {}, {}))[part][key] = value
        return cls(versions, None, None, shards)

    def dump(self):
        """The cache file's bytes: a checksummed header (the versions and where each shard
        lies, with its own checksum), then the shards, each ``marshal`` data of its own."""
        import marshal
        import zlib

        spans, pieces, at = {}, [], 0
        for key in sorted(self._shards):
            piece = marshal.dumps(self._shards[key])
            spans[key] = (at, len(piece), zlib.crc32(piece))
            pieces.append(piece)
            at += len(piece)
        head = marshal.dumps((self.versions, spans))
        sizes = len(head).to_bytes(4, "big") + zlib.crc32(head).to_bytes(4, "big")
        return b"".join((_CACHE_MAGIC, sizes, head, *pieces))

    @classmethod
    def load(cls, data):
        """The index from ``dump()`` data; raises ValueError for anything else.

        A cache damaged on disk (a flipped byte, a write cut short) must never change a
        verdict: the header is checked here, each shard when it is first read.
        """
        import marshal
        import zlib

        start = len(_CACHE_MAGIC) + 8
        if len(data) < start or data[: len(_CACHE_MAGIC)] != _CACHE_MAGIC:
            raise ValueError("not a word index")
        size = int.from_bytes(data[start - 8 : start - 4], "big")
        head = data[start : start + size]
        if len(head) != size or zlib.crc32(head) != int.from_bytes(data[start - 4 : start], "big"):
            raise ValueError("word index damaged")
        try:
            versions, spans = marshal.loads(head)
        except (TypeError, ValueError, EOFError):
            raise ValueError("not a word index") from None
        if not isinstance(versions, int) or not isinstance(spans, dict):
            raise ValueError("not a word index")
        return cls(versions, spans, memoryview(data)[start + size :])

    def shard(self, word):
        """``(singles, phrases, firsts)`` for ``word`` and the phrases it starts."""
        head = word[:3]
        shard = self._shards.get(head)
        if shard is None:
            span = self._spans.get(head) if self._spans else None
            shard = ({}, {}, {}) if span is None else self._read_shard(head, span)
            self._shards[head] = shard
        return shard

    def _read_shard(self, head, span):
        import marshal
        import zlib

        try:
            start, size, crc = span
            piece = self._blob[start : start + size]
            if len(piece) == size and zlib.crc32(piece) == crc:
                shard = marshal.loads(piece)
                if (
                    type(shard) is tuple
                    and len(shard) == 3
                    and all(type(part) is dict for part in shard)
                ):
                    return shard
        except (TypeError, ValueError, EOFError):
            pass
        # The cache is damaged: read the rules themselves, for this shard and every other.
        fresh = _Index.of(_index_now())
        self.versions, self._spans, self._blob = fresh.versions, None, None
        self._shards = fresh._shards
        return self._shards.get(head, ({}, {}, {}))

    def as_tuple(self):
        singles, phrases, firsts = {}, {}, {}
        for head in self._spans or ():
            self.shard(head)
        for head in sorted(self._shards):
            for table, part in zip((singles, phrases, firsts), self._shards[head]):
                table.update(part)
        return singles, phrases, firsts, self.versions

    def __eq__(self, other):
        if isinstance(other, _Index):
            other = other.as_tuple()
        return self.as_tuple() == other

    __hash__ = None


def _index_now():
    """``(singles, phrases, firsts, versions)`` built from the families' entries (~20 ms).

    Family membership is a bit mask (bit = family id): ``singles[word]``,
    ``phrases["w1 w2 ..."]``; ``firsts[w1]`` is the longest phrase starting with w1;
    ``versions`` the mask of families that take any version word. Flat maps of strings to
    ints; ``_Index`` keeps them in shards for the cache.
    """
    if not _closed:
        raise RuntimeError("the word families are not all made: import door_rules first")
    singles, phrases, firsts, versions = {}, {}, {}, 0
    for family in _FAMILIES:
        bit = 1 << family.id
        for entry in family.entries():
            entry = entry.strip()
            if entry.isalnum():
                parts = (entry,)
            elif entry == "#version":
                versions |= bit
                continue
            else:
                parts = _entry_words(entry)
                if not parts:
                    continue
            if len(parts) == 1:
                singles[parts[0]] = singles.get(parts[0], 0) | bit
            else:
                key = " ".join(parts)
                phrases[key] = phrases.get(key, 0) | bit
                firsts[parts[0]] = max(firsts.get(parts[0], 0), len(parts))
    return singles, phrases, firsts, versions


def _cache_path():
    """The cache file for the rules this process holds, named for every module in
    ``INDEX_SOURCES`` as it was read (an edit to any of them names a new file) and the
    Python; None when what was read is not known (``as_read``)."""
    key = as_read(INDEX_SOURCES)
    if key is None:
        return None
    import sys

    tag = "-".join(f"{ino:x}-{size:x}-{mtime:x}-{ctime:x}" for ino, size, mtime, ctime in key)
    tag += "-" + sys.implementation.cache_tag
    return os.path.join(os.path.dirname(__file__), "__pycache__", f"door-words.{tag}.marshal")


def _build():
    """Load the word index from its cache next to the byte-code, else build (and cache) it.

    The cache is named for the rules as this process read them, so it never loads an index
    made from other rules; it is written only while the files are still the ones read, so a
    process that holds older rules than the files now hold leaves the cache alone (it
    builds its own index in memory).
    """
    global _INDEX
    try:
        path = _cache_path()
    except OSError:
        path = None
    index = None
    if path is not None:
        try:
            with open(path, "rb") as f:
                data = f.read()  # marshal.load(f) reads in small pieces: ~8x slower
            index = _Index.load(data)
        except (OSError, ValueError):
            pass
    if index is None:
        index = _Index.of(_index_now())
        if path is not None and still_as_read(INDEX_SOURCES, as_read(INDEX_SOURCES)):
            _write_cache(path, index)
    _INDEX = index


def _write_cache(path, index):
    """Write the index's cache and remove the copies made for other versions of the rules."""
    try:
        from toolkit.store.safe_io import write_atomic

        folder = os.path.dirname(path)
        write_atomic(path, index.dump(), mode=0o644)
        for name in os.listdir(folder):
            if name.startswith("door-words.") and name != os.path.basename(path):
                try:
                    os.remove(os.path.join(folder, name))
                except OSError:
                    pass
    except OSError:
        pass  # a read-only install builds it in each process instead


def _scan(words):
    """``{family id: [(position, length), ...]}`` for every family found in ``words``."""
    if _INDEX is None:
        _build()
    shard, versions = _INDEX.shard, _INDEX.versions
    hits = {}
    size = len(words)
    for i, w in enumerate(words):
        found = []
        singles, phrases, firsts = shard(w)  # a phrase's shard is its first word's
        longest = firsts.get(w)
        if longest:
            for n in range(2, min(longest, size - i) + 1):
                mask = phrases.get(" ".join(words[i : i + n]))
                if mask:
                    found.append((mask, n))
        mask = singles.get(w)
        if mask:
            found.append((mask, 1))
        elif versions and "." in w and _version(w):
            found.append((versions, 1))
        for mask, n in found:
            while mask:
                low = mask & -mask
                fid = low.bit_length() - 1
                mask ^= low
                if fid in hits:
                    hits[fid].append((i, n))
                else:
                    hits[fid] = [(i, n)]
    return hits


class _Text:
    """One text's words, family hits and sentence breaks, shared by every rule."""

    __slots__ = ("words", "hits", "_breaks")

    def __init__(self, words):
        self.words = words
        self.hits = _scan(words)
        self._breaks = None

    def at(self, family):
        return self.hits.get(family.id, ())

    def same_sentence(self, a, b):
        """No break among words[a:b]."""
        breaks = self._breaks
        if breaks is None:
            breaks, n = [0], 0
            for w in self.words:
                n += w in _BREAKS
                breaks.append(n)
            self._breaks = breaks
        return breaks[b] == breaks[a]


_BREAKS = frozenset("?!;.")
_LOCATING = frozenset("from in inside within".split())
_SKIP = frozenset(
    "the a an this that these those all any some every each my our your "
    "their its his her of old existing current entire whole".split()
)


# ---- the words of a text ----------------------------------------------------------

_TOKEN = None
_ENDS = frozenset("?!;.,")


def _token_pattern():
    """The token pattern ``_tokens`` follows, for reference (a test keeps them equal)."""
    global _TOKEN
    if _TOKEN is None:
        import re

        _TOKEN = re.compile(
            r"(?<!\S)--?[a-z0-9][a-z0-9=+-]*|(?<!\S)--(?=\s|$)|(?<!\S)[ugoa]*[+=][rwx]+|"
            r"v?\d+(?:\.\d+)+(?:/\d+)?|::/0|[a-z0-9]+|\$(?=\s?\d)|[?!;#%]|\.(?=\s|$)"
        )
    return _TOKEN


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_FLAG_CHARS = _WORD_CHARS | frozenset("=+-")
_MARKS = frozenset("?!;#%")


def _digits_end(text, i, n):
    """The end of the run of decimal digits starting at ``i`` (``i`` when there is none)."""
    while i < n and text[i].isdecimal():
        i += 1
    return i


def _tokens(text):
    r"""``_token_pattern().findall(text)``, read with string methods.

    Importing ``re`` and compiling the pattern cost a hook process more than the rest of
    reading a question, and ordinary punctuation ("(", ":", quotes) sends a chunk here.
    At each position the pattern's alternatives are tried in its order; the first that
    matches gives a token and the scan goes on after it, else one character is skipped.
    ``\d`` and ``\s`` are Python's (any decimal digit, any white space).
    """
    out = []
    n = len(text)
    i = 0
    while i < n:
        c = text[i]
        end = 0
        if i == 0 or text[i - 1].isspace():  # (?<!\S): a flag, "--" or a chmod mode
            if c == "-":
                j = i + 2 if text[i + 1 : i + 2] == "-" else i + 1
                if j < n and text[j] in _WORD_CHARS:
                    j += 1
                    while j < n and text[j] in _FLAG_CHARS:
                        j += 1
                    end = j
                elif text[i + 1 : i + 2] == "-" and (i + 2 == n or text[i + 2].isspace()):
                    end = i + 2
            else:
                j = i
                while j < n and text[j] in "ugoa":
                    j += 1
                if j + 1 < n and text[j] in "+=" and text[j + 1] in "rwx":
                    j += 2
                    while j < n and text[j] in "rwx":
                        j += 1
                    end = j
        if not end:  # v?\d+(?:\.\d+)+(?:/\d+)?: a version
            j = i + 1 if c == "v" else i
            k = _digits_end(text, j, n)
            if k > j:
                groups = 0
                while k + 1 < n and text[k] == "." and text[k + 1].isdecimal():
                    k = _digits_end(text, k + 2, n)
                    groups += 1
                if groups:
                    if k + 1 < n and text[k] == "/" and text[k + 1].isdecimal():
                        k = _digits_end(text, k + 2, n)
                    end = k
        if not end:
            if c in _WORD_CHARS:
                j = i + 1
                while j < n and text[j] in _WORD_CHARS:
                    j += 1
                end = j
            elif c == ":" and text.startswith("::/0", i):
                end = i + 4
            elif c in _MARKS:
                end = i + 1
            elif c == "$":  # \$(?=\s?\d)
                nxt = text[i + 1 : i + 2]
                if nxt.isdecimal() or nxt.isspace() and text[i + 2 : i + 3].isdecimal():
                    end = i + 1
            elif c == "." and (i + 1 == n or text[i + 1].isspace()):
                end = i + 1
        if end:
            out.append(text[i:end])
            i = end
        else:
            i += 1
    return out


def _plain(chunk):
    """An ASCII word, or words joined by single hyphens ("force-push"), not starting with "-"."""
    return chunk[:1] != "-" and chunk.isascii() and chunk.replace("-", "").isalnum()


def _words(normalised):
    """The words of normalised text: flags, versions, ``$``, breaks; ``-`` splits words.

    Plain prose is split with string methods; only a chunk with other punctuation goes
    through ``_tokens`` (the token pattern, followed by hand), giving exactly what the
    pattern gives on the whole text.
    """
    out = []
    chunks = normalised.split(" ")
    for k, chunk in enumerate(chunks):
        if not chunk:
            continue
        end = chunk[-1]
        body = chunk[:-1] if end in _ENDS and len(chunk) > 1 else chunk
        if _plain(body) and (body is chunk or body[-1:] != "-"):
            out.extend(p for p in body.split("-") if p) if "-" in body else out.append(body)
            if body is not chunk and end != ",":
                out.append(end)
        else:
            out.extend(_tokens(chunk))
            # "$ 5": a "$" whose digits come after the space (the pattern looks ahead)
            if end == "$" and k + 1 < len(chunks) and chunks[k + 1][:1].isdigit():
                out.append("$")
    return out


def _known(word, mask=None):
    """Whether ``word`` is a single word of any family (or of the families in ``mask``)."""
    if _INDEX is None:
        _build()
    bits = _INDEX.shard(word)[0].get(word, 0)
    return bool(bits if mask is None else bits & mask)


# ---- the shapes of rules -----------------------------------------------------------


class _Pair:
    """Verb then object within ``window`` words (and, with ``passive``, object then verb)."""

    def __init__(
        self,
        verbs,
        objects,
        window=6,
        passive=None,
        unless_after=None,
        unless_before=None,
        passive_window=5,
        unless_between=None,
        located=False,
        verb_unless_after=None,
        direct_unless=None,
    ):
        # direct_unless: a verb whose direct object is of this family aims at that; the
        # rest says where ("delete the empty line at the end of the file").
        self.direct_unless = direct_unless
        self.verb_unless_after = verb_unless_after or frozenset()
        self.verbs, self.objects, self.window = verbs, objects, window
        self.unless_between = unless_between or frozenset()
        # located: an object right after "from the" / "in" is where, not what ("drop the
        # newline from the file"); the verb must aim at something else.
        self.located = located
        self.passive, self.passive_window = passive, passive_window
        self.unless_after = unless_after or frozenset()
        self.unless_before = unless_before or frozenset()
        self.needs = objects.id

    def _object_ok(self, words, j, n):
        if self.unless_after and j + n < len(words) and words[j + n] in self.unless_after:
            return False
        if self.unless_before and j > 0 and words[j - 1] in self.unless_before:
            return False
        if self.located and any(w in _LOCATING for w in words[max(0, j - 3) : j]):
            return False
        return True

    def __call__(self, t):
        objects = t.at(self.objects)
        if not objects:
            return False
        words = t.words
        direct = {i for i, _ in t.at(self.direct_unless)} if self.direct_unless else ()
        for i, n in t.at(self.verbs):
            start = i + n
            if n == 1 and i and words[i - 1] in ("the", "a", "an"):
                continue  # a noun or adjective: "the deprecated option", "the post"
            first = start  # where the verb's objects may start
            if direct:
                k = start
                while k < len(words) and words[k] in _SKIP:
                    k += 1
                if k in direct:
                    # unless a second object is joined on ("... and the Postgres volume")
                    ahead = words[k : start + self.window]
                    if "and" not in ahead:
                        continue
                    first = k + ahead.index("and") + 1
            if (
                self.verb_unless_after
                and start < len(words)
                and words[start] in self.verb_unless_after
            ):
                continue
            for j, m in objects:
                if (
                    first <= j < start + self.window
                    and t.same_sentence(start, j)
                    and self._object_ok(words, j, m)
                    and not (
                        self.unless_between
                        and any(w in self.unless_between for w in words[start:j])
                    )
                ):
                    return True
        if self.passive is not None:
            passive = t.at(self.passive)
            for i, n in objects:
                start = i + n
                for j, k in passive:
                    if (
                        start <= j < start + self.passive_window
                        and t.same_sentence(start, j)
                        and self._object_ok(words, i, n)
                        and not (
                            self.verb_unless_after
                            and j + k < len(words)
                            and words[j + k] in self.verb_unless_after
                        )
                    ):
                        return True
        return False


class _Any:
    """Any word or phrase of the family, unless one of ``unless_near`` is within 3-4 words
    or the next word is one of ``unless_next``."""

    def __init__(self, family, unless_near=frozenset(), unless_next=frozenset()):
        self.family, self.unless_near, self.unless_next = family, unless_near, unless_next
        self.needs = family.id

    def __call__(self, t):
        for i, n in t.at(self.family):
            near = t.words[max(0, i - 3) : i] + t.words[i + n : i + n + 4]
            if self.unless_near and any(w in self.unless_near for w in near):
                continue
            if self.unless_next and i + n < len(t.words) and t.words[i + n] in self.unless_next:
                continue  # a noun modifier: "the deploy script", "the rollback helper"
            return True
        return False


class _Then:
    """A word, then (within ``window`` words, same sentence) a word satisfying ``test``."""

    def __init__(self, first, test, window=3):
        self.first, self.test, self.window = first, test, window
        self.needs = first.id

    def __call__(self, t):
        words = t.words
        size = len(words)
        for i, n in t.at(self.first):
            for j in range(i + n, min(size, i + n + self.window)):
                if words[j] in _BREAKS:
                    break
                if self.test(words[j]):
                    return True
        return False


class _Referent:
    """A destructive verb aimed at "it"/"them"/"all of it" in a text that names a durable
    thing anywhere ("The old topic is unused; drop it?"): the pronoun may mean that thing."""

    PRONOUNS = frozenset("it them this that these those everything all".split())

    def __init__(self, verbs, durable):
        self.verbs, self.durable = verbs, durable
        self.needs = durable.id

    def __call__(self, t):
        words = t.words
        # A durable thing named as where ("in this file") is not what "it" is.
        if all(
            any(w in _LOCATING for w in words[max(0, j - 3) : j]) for j, _ in t.at(self.durable)
        ):
            return False
        for i, n in t.at(self.verbs):
            if i + n < len(words) and words[i + n] in self.PRONOUNS:
                return True
        return False


def _flag_with(letters):
    def test(word):
        return word[:1] == "-" and word[1:2] != "-" and any(c in word for c in letters)

    return test


def _is_flag(*names):
    names = frozenset(names)

    def test(word):
        return word in names or any(word.startswith(n + "=") for n in names)

    return test


def _chmod_mode(word):
    if word.isdigit() and 3 <= len(word) <= 4:
        return word[-1] in "2367" or word[-2] in "2367"
    return "+" in word and "w" in word.partition("+")[2] and word[0] in "oa+"


def _or(*rules):
    return rules


# Shorthand for the families and rules modules: a family of words, a plain set of words.
def _F(*groups):
    return _Family(*groups)


_W = frozenset
