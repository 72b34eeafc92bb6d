"""Rules read word by word: the shapes of a language file with ``match = "words"``.

English is read this way (``toolkit/data/doors/en-words.toml``): its text is split into
words (flags such as ``-rf`` and versions such as ``2.0.0`` stay whole; ``?``, ``!``,
``;`` and a sentence-ending ``.`` are breaks) and every family entry (a word, or a phrase
of words) is looked up in an index of the file's families, built when the file is first
read. A rule takes one of these shapes (the first that fires names the decision):

* ``verbs`` + ``objects``: a verb, then its object within ``window`` words, across a
  sentence break too (a full stop typed between them must not hide the pair: "Drop. the
  users table?"); with ``passive``, the object then a passive verb (``passive_window``).
  ``unless_after`` / ``unless_before`` (the word after or before the object),
  ``unless_between``, ``verb_unless_after`` (the word after the verb names a thing:
  "delete button"), ``verb_unless_before`` (the word before makes the verb a state:
  "already merged"), ``located`` (an object after "from"/"in" is where, not what) and
  ``direct_unless`` (a verb whose direct object is of that family aims at it) keep
  harmless uses two-way; ``between_any``: a word of that set must stand between verb
  and object (and one of ``between_also`` too: "type the repo name to confirm"). A verb
  right after an article is a noun ("the post"). A qualifier before the object
  (``unless_before``: "the local database") softens nothing in a text holding a
  ``pointing`` word ("shared", "prod", "backup", ...), and the things a text shows safe
  to lose (``settled``: "the local branch ... is merged") are no object.
* ``any``: any entry of the family, unless a word of ``unless_near`` is within a few
  words or the next word is of ``unless_next``.
* ``then``: an entry, then within ``window`` words a word in ``next``, a flag of
  ``flags`` (``--size`` or ``--size=...``), a short flag holding one of
  ``flag_letters``, a word starting with one of ``prefixes``, or one passing ``test``
  (``chmod-mode``: a mode that opens writing to others).
* ``referent`` + ``objects``: a verb aimed at "it"/"them" in a text naming an object;
  an object qualified by ``unless_before`` / ``unless_after`` ("the Jest snapshot") or
  inside a phrase of ``harmless`` ("the golden file") is not one, unless the text is
  pointing.
* ``free``: a strong verb not aimed at a harmless thing ("delete it?", not "delete the
  unused import").

``[rename]`` describes a text that only renames names; ``[shell]`` the shell command
lines read from the text itself. When the words fire no rule, shell lines, method calls
(``db.users.drop()``) and disguised spellings (``dr0p``, ``d r o p``) are read too.
"""

from toolkit.core.door_data import WordIndex, record_source

record_source(__file__)  # the file as read: ``doors.rules_version`` names it

__all__ = ["WordRules", "words", "tokens", "token_pattern"]

# ---- the words of a text ----------------------------------------------------------

_ENDS = frozenset("?!;.,")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_FLAG_CHARS = _WORD_CHARS | frozenset("=+-")
_MARKS = frozenset("?!;#%")


def token_pattern():
    """The token pattern ``tokens`` follows, for reference (a test keeps them equal)."""
    import re

    return re.compile(
        r"(?<!\S)--?[a-z0-9][a-z0-9=+-]*|(?<!\S)--(?=\s|$)|(?<!\S)[ugoa]*[+=][rwx]+|"
        r"v?\d+(?:\.\d+)+(?:/\d+)?|::/0|[a-z0-9]+|\$(?=\s?\d)|[?!;#%]|\.(?=\s|$)"
    )


def _digits_end(text, i, n):
    while i < n and text[i].isdecimal():
        i += 1
    return i


def tokens(text):
    r"""``token_pattern().findall(text)``, read with string methods (importing ``re``
    and compiling the pattern would cost a hook process more than reading a question).
    At each position the pattern's alternatives are tried in its order."""
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


def words(normalised):
    """The words of normalised text: flags, versions, ``$``, breaks; ``-`` splits words.
    Plain prose is split with string methods; a chunk with other punctuation goes
    through ``tokens``, giving exactly what the pattern gives on the whole text."""
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
            out.extend(tokens(chunk))
            # "$ 5": a "$" whose digits come after the space (the pattern looks ahead)
            if end == "$" and k + 1 < len(chunks) and chunks[k + 1][:1].isdigit():
                out.append("$")
    return out


def _version(word):
    return "." in word and (word[:1].isdigit() or word[:1] == "v" and word[1:2].isdigit())


# ---- the shapes of rules ----------------------------------------------------------


class _Text:
    """One text's words, family hits and sentence breaks, shared by every rule.

    ``pointing``: whether a word of the text points at shared, remote or production
    things (a qualifier such as "local" or "test" then softens nothing). ``settled``: the
    positions of the things the text itself shows to be safe to lose ("the local branch
    ... it is merged"), read as harmless unless the text is pointing."""

    __slots__ = ("words", "hits", "breaks", "pointing", "settled")

    def __init__(self, found, hits, breaks, pointing=False, settled=frozenset()):
        self.words, self.hits, self.breaks = found, hits, breaks
        self.pointing, self.settled = pointing, settled

    def at(self, family):
        return self.hits.get(family, ())


def _qualified(t, j, qualifiers):
    """Whether one of the two words before the object at ``j`` is a qualifier ("the local
    database", "the local Postgres database") in a text pointing at nothing shared. After
    a possessive "s", the words before its owner ("the local Redis container's data")."""
    words = t.words
    lo = j - 4 if j and words[j - 1] == "s" else j - 2
    return not t.pointing and any(w in qualifiers for w in words[max(0, lo) : j])


class _Pair:
    __slots__ = (
        "verbs", "objects", "window", "passive", "passive_window", "unless_after",
        "unless_before", "unless_between", "between_any", "between_also", "located", "verb_unless_after",
        "verb_unless_before", "direct", "skip", "locating", "articles", "needs",
    )  # fmt: skip

    def __init__(self, rule, fam, sets, common):
        self.verbs, self.objects = fam(rule["verbs"]), fam(rule["objects"])
        self.window = rule.get("window", 6)
        self.passive = fam(rule["passive"]) if "passive" in rule else None
        self.passive_window = rule.get("passive_window", 5)
        self.unless_after = sets(rule.get("unless_after"))
        self.unless_before = sets(rule.get("unless_before"))
        self.unless_between = sets(rule.get("unless_between"))
        self.between_any = sets(rule.get("between_any"))
        self.between_also = sets(rule.get("between_also"))
        self.verb_unless_after = sets(rule.get("verb_unless_after"))
        self.verb_unless_before = sets(rule.get("verb_unless_before"))
        self.located = rule.get("located", False)
        self.direct = fam(rule["direct_unless"]) if "direct_unless" in rule else None
        self.skip, self.locating, self.articles = common[:3]
        self.needs = self.objects

    def _object_ok(self, t, j, n):
        words = t.words
        if j in t.settled:
            return False
        if self.unless_after and j + n < len(words) and words[j + n] in self.unless_after:
            return False
        if self.unless_before and _qualified(t, j, self.unless_before):
            return False
        if self.located and any(w in self.locating for w in words[max(0, j - 3) : j]):
            return False
        return True

    def __call__(self, t):
        objects = t.at(self.objects)
        if not objects:
            return False
        words = t.words
        direct = {i for i, _ in t.at(self.direct)} if self.direct is not None else ()
        for i, n in t.at(self.verbs):
            start = i + n
            if n == 1 and i and words[i - 1] in self.articles:
                continue  # a noun or adjective: "the deprecated option", "the post"
            if i and words[i - 1] in self.verb_unless_before:
                continue  # a state, not an act: "it is already merged"
            first = start  # where the verb's objects may start
            if direct and not t.pointing:
                k = start
                while k < len(words) and words[k] in self.skip:
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
                    and self._object_ok(t, j, m)
                    and not (
                        self.unless_between
                        and any(w in self.unless_between for w in words[start:j])
                    )
                    and not (
                        self.between_any and not any(w in self.between_any for w in words[start:j])
                    )
                    and not (
                        self.between_also
                        and not any(w in self.between_also for w in words[start:j])
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
                        and self._object_ok(t, i, n)
                        and not (
                            self.verb_unless_after
                            and j + k < len(words)
                            and words[j + k] in self.verb_unless_after
                        )
                    ):
                        return True
        return False


class _Any:
    __slots__ = ("family", "unless_near", "unless_next", "needs")

    def __init__(self, rule, fam, sets, common):
        self.family = self.needs = fam(rule["any"])
        self.unless_near = sets(rule.get("unless_near"))
        self.unless_next = sets(rule.get("unless_next"))

    def __call__(self, t):
        for i, n in t.at(self.family):
            near = t.words[max(0, i - 3) : i] + t.words[i + n : i + n + 4]
            if self.unless_near and any(w in self.unless_near for w in near):
                continue
            if self.unless_next and i + n < len(t.words) and t.words[i + n] in self.unless_next:
                continue  # a noun modifier: "the deploy script", "the rollback helper"
            return True
        return False


def _chmod_mode(word):
    """A mode that lets others write (``777``, ``o+w``, ``a+rwx``)."""
    if word.isdigit() and 3 <= len(word) <= 4:
        return word[-1] in "2367" or word[-2] in "2367"
    return "+" in word and "w" in word.partition("+")[2] and word[0] in "oa+"


_TESTS = {"chmod-mode": _chmod_mode}


class _Then:
    __slots__ = ("first", "window", "next", "flags", "letters", "prefixes", "test", "needs")

    def __init__(self, rule, fam, sets, common):
        self.first = self.needs = fam(rule["then"])
        self.window = rule.get("window", 3)
        self.next = sets(rule.get("next"))
        self.flags = frozenset(rule.get("flags", ()))
        self.letters = rule.get("flag_letters", "")
        self.prefixes = tuple(rule.get("prefixes", ()))
        self.test = _TESTS[rule["test"]] if "test" in rule else None

    def _ok(self, word):
        if word in self.next or word in self.flags:
            return True
        if self.flags and any(word.startswith(f + "=") for f in self.flags):
            return True
        if self.letters and word[:1] == "-" and word[1:2] != "-":
            if any(c in word for c in self.letters):
                return True
        if self.prefixes and word.startswith(self.prefixes):
            return True
        return self.test is not None and self.test(word)

    def __call__(self, t):
        words = t.words
        size = len(words)
        for i, n in t.at(self.first):
            for j in range(i + n, min(size, i + n + self.window)):
                if words[j] in t.breaks:
                    break
                if self._ok(words[j]):
                    return True
        return False


class _Referent:
    """A verb aimed at "it"/"them" in a text that names an object anywhere ("The old topic
    is unused; drop it?"), unless every object named is where ("in this file")."""

    __slots__ = (
        "verbs", "objects", "harmless", "pronouns", "locating", "before", "after", "needs",
    )  # fmt: skip

    def __init__(self, rule, fam, sets, common):
        self.verbs, self.objects = fam(rule["referent"]), fam(rule["objects"])
        self.harmless = fam(rule["harmless"]) if "harmless" in rule else None
        self.pronouns = common[3]
        self.locating = common[1]
        self.before = sets(rule.get("unless_before"))
        self.after = sets(rule.get("unless_after"))
        self.needs = self.objects

    def _named(self, t, j, n, harmless):
        """Whether the object at ``j`` is a thing the pronoun may aim at: not where ("in
        this file"), not shown safe, not qualified as a test or scratch thing ("the Jest
        snapshot", "the sample data", "the golden file") unless the text points at shared
        things."""
        words = t.words
        if any(w in self.locating for w in words[max(0, j - 3) : j]) or j in t.settled:
            return False
        if t.pointing:
            return True
        if j in harmless:
            return False
        if _qualified(t, j, self.before):
            return False
        return not (j + n < len(words) and words[j + n] in self.after)

    def __call__(self, t):
        words = t.words
        harmless = {k for i, m in t.at(self.harmless) if m > 1 for k in range(i, i + m)}
        if not any(self._named(t, j, n, harmless) for j, n in t.at(self.objects)):
            return False
        for i, n in t.at(self.verbs):
            if i + n < len(words) and words[i + n] in self.pronouns:
                return True
        return False


class _Free:
    """A strong verb not aimed at a harmless object: ambiguity is one-way ("delete it?",
    "wipe everything"). The object is in the first words after the verb (determiners
    skipped) or, when nothing follows, the words before it (passive)."""

    __slots__ = (
        "strong", "harmless", "durable", "naming_next", "naming_prev", "easy",
        "determiners", "pronouns", "sandbox", "qualifiers", "needs",
    )  # fmt: skip

    def __init__(self, rule, fam, sets, common):
        self.strong = self.needs = fam(rule["free"])
        self.harmless, self.durable = fam(rule["harmless"]), fam(rule["objects"])
        for key in (
            "naming_next", "naming_prev", "easy", "determiners", "pronouns", "sandbox",
            "qualifiers",
        ):  # fmt: skip
            setattr(self, key, sets(rule.get(key)))

    def __call__(self, t):
        strong = t.at(self.strong)
        words, size = t.words, len(t.words)
        # every word of a harmless entry: one may start on a skipped determiner ("the
        # debug logs", "the dead code")
        harmless = {k for i, n in t.at(self.harmless) for k in range(i, i + n)} | t.settled
        for i, n in strong:
            j = i + n
            if (j < size and words[j] in self.naming_next) or (
                i and words[i - 1] in self.naming_prev
            ):
                continue  # a name, not an act: "the deleted_at column", "soft delete"
            if i >= 2 and words[i - 1] == "to" and words[i - 2] in self.easy:
                continue  # a property, not an act: "cheap, easy to delete"
            while j < size and words[j] in self.determiners:
                j += 1
            if j < size and words[j] not in t.breaks:
                ahead = range(j, min(size, j + 3))
            else:
                ahead = range(max(0, i - 5), i)
            durable = {k for k, _ in t.at(self.durable)} - t.settled
            if any(k in harmless for k in ahead) and not (
                t.pointing and any(k in durable for k in ahead)
            ):
                continue  # "the unused import", not "the shared test database"
            first = next((k for k in ahead if k in durable), None)
            if first is not None and _qualified(t, first, self.qualifiers):
                continue  # "the local Redis container", "the throwaway SQLite database"
            if j < size and words[j] in self.pronouns and i:
                # "There's a trailing blank line at the bottom. Delete it?": "it" is the
                # harmless thing named before, when nothing durable is named there too.
                before = range(max(0, i - 15), i)
                if any(k in harmless for k in before) and not any(k in durable for k in before):
                    continue
            if any(w in self.sandbox for w in words[i + n : i + n + 7]):
                continue
            return True
        return False


_SHAPES = (
    ("verbs", _Pair),
    ("any", _Any),
    ("then", _Then),
    ("referent", _Referent),
    ("free", _Free),
)


# ---- one language's word rules ----------------------------------------------------


class WordRules:
    """A ``match = "words"`` language file, ready to read texts (``match``)."""

    def __init__(self, data, index=None):
        """``index``: the families' ``door_data.WordIndex`` (built from ``data`` if None)."""
        families = data.get("families", {})
        self._ids = {name: k for k, name in enumerate(families)}
        named = data.get("sets", {})
        cache = {}

        def sets(name):
            if name is None:
                return frozenset()
            found = cache.get(name)
            if found is None:
                found = cache[name] = frozenset(named.get(name) or families[name])
            return found

        plain = data.get("words", {})
        self.breaks = frozenset(plain.get("breaks", ("?", "!", ";", ".")))
        common = (
            frozenset(plain.get("skip", ())),
            frozenset(plain.get("locating", ())),
            frozenset(plain.get("articles", ())),
            frozenset(plain.get("referent_pronouns", ())),
        )
        self.rules = []
        for rule in data.get("rules", []):
            shape = next(cls for key, cls in _SHAPES if key in rule)
            self.rules.append((rule["rule"], shape(rule, self._ids.__getitem__, sets, common)))
        self.rule_names = tuple(dict.fromkeys(name for name, _ in self.rules))
        self._families = families
        self._find = (index if index is not None else WordIndex(data)).get
        self._versions = self._find("#version") or ()  # the families taking any version
        self._longest = plain.get("longest", 1)  # the most words in an entry
        rename = data.get("rename", {})
        self._rename = (
            frozenset(rename.get("first", ())),
            frozenset(rename.get("ends", ())),
            frozenset(rename.get("more", ())) | frozenset(rename.get("stores", ())),
            frozenset(rename.get("determiners", ())),
        )
        self._pointing = self._ids.get(plain.get("pointing"))
        settled = plain.get("settled")
        self._settled = (
            self._ids.get(settled),
            frozenset(plain.get("settled_by", ())),
            frozenset(plain.get("negations", ())),
        )
        self._readers = None
        self._reading = (data.get("shell", {}), plain)

    @property
    def readers(self):
        """The other readings (``door_shell``), loaded on the first text whose words fire
        no rule: a plainly one-way question spares its process that module."""
        if self._readers is None:
            from toolkit.core.door_shell import Readers

            shell, plain = self._reading
            verbs = tuple(self._ids[name] for name in plain.get("repair_verbs", ()))
            short, loggers = plain.get("short", ()), plain.get("loggers", ())
            self._readers = Readers(
                shell, frozenset(short), frozenset(loggers), self.known, verbs, tokens
            )
        return self._readers

    def families(self):
        """``{family name: frozenset of entries}`` (a ``#version`` entry: any version)."""
        return {name: frozenset(entries) for name, entries in self._families.items()}

    def known(self, word, families=None):
        """Whether ``word`` is a single word of any family (or of the ids ``families``)."""
        found = self._find(word)
        if not found:
            return False
        return families is None or any(k in found for k in families)

    def _scan(self, found):
        """``{family id: [(position, length), ...]}`` for every family in ``found``: at
        each word the phrases starting there (longest last), then the word itself. The
        index is asked only for the entries the text holds (``door_data.WordIndex``)."""
        find, versions = self._find, self._versions
        hits = {}
        size = len(found)
        for i, w in enumerate(found):
            keys = []
            for n in range(2, min(self._longest, size - i) + 1):
                ids = find(" ".join(found[i : i + n]))
                if ids:
                    keys.append((ids, n))
            ids = find(w)
            if ids:
                keys.append((ids, 1))
            elif versions and "." in w and _version(w):
                keys.append((versions, 1))  # any version word: "v2.0.1"
            for ids, n in keys:
                for fid in ids:
                    if fid in hits:
                        hits[fid].append((i, n))
                    else:
                        hits[fid] = [(i, n)]
        return hits

    def pair_words(self, found):
        """``({verb position: rule name}, names of the rules whose objects are there)``
        over the words of ``found`` (a list of words), for the rules pairing a verb with
        an object (a verb right after an article is a noun and left out)."""
        hits = self._scan(found)
        verbs, objects = {}, set()
        for name, test in self.rules:
            if type(test) is _Pair:
                for i, _ in hits.get(test.verbs, ()):
                    if not i or found[i - 1] not in test.articles:
                        verbs.setdefault(i, name)
                if test.objects in hits:
                    objects.add(name)
        return verbs, objects

    def verb_for(self, rule):
        """A verb (the first entry of one word) of the first pair rule named ``rule``, or
        None."""
        for name, test in self.rules:
            if name == rule and type(test) is _Pair:
                for family, fid in self._ids.items():
                    if fid == test.verbs:
                        entries = self._families[family]
                        return next((e for e in entries if " " not in e), entries[0])
        return None

    def match_words(self, found, pairs_only=False):
        """The first rule that fires on a list of words (``words``), or None; with
        ``pairs_only``, of the rules pairing a verb with an object."""
        hits = self._scan(found)
        if not hits:
            return None
        pointing = self._pointing in hits
        t = _Text(found, hits, self.breaks, pointing, self._settled_at(found, hits, pointing))
        for name, test in self.rules:
            if pairs_only and type(test) is not _Pair:
                continue
            if test.needs in hits and test(t):
                return name
        return None

    def _settled_at(self, found, hits, pointing):
        """The positions of the words of the things the text shows safe to lose (a local
        branch it says is merged), when nothing in it points at shared things."""
        family, by, negations = self._settled
        shown = any(
            w in by and not any(v in negations for v in found[max(0, i - 3) : i])
            for i, w in enumerate(found)
        )  # "it is merged", not "it was never merged"
        if pointing or family not in hits or not shown:
            return frozenset()
        return frozenset(k for i, n in hits[family] for k in range(i, i + n))

    def _renames_only(self, found):
        """Whether the text only renames a name ("Rename deleteUser to removeUser in the
        store?"): its words are names, not acts. A second act or sentence reads as usual."""
        first, ends, more, determiners = self._rename
        if found[0] not in first or "to" not in found or found[1] in determiners:
            return False
        body = found[:-1] if found[-1] in ends else found
        return not any(w in ends or w in more or w == "," for w in body)

    def match(self, normalised):
        """The name of the first rule that fires on normalised text, or None: the words as
        written, then (nothing fired) shell lines, method calls and disguised spellings."""
        found = words(normalised)
        if not found or self._renames_only(found):
            return None
        rule = self.match_words(found)
        if rule:
            return rule
        readers = self.readers
        rule = readers.shell(normalised)
        if rule:
            return rule
        calls = readers.code_calls(normalised)
        if calls:
            rule = self.match_words(words(calls))
            if rule:
                return rule
        fixed = readers.repair(found, normalised)
        if fixed is not found:
            return self.match_words(fixed)
        return None
