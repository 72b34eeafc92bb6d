"""The door classifier's rules: verb families crossed with object families, over words.

Imported by ``toolkit.core.doors`` only when a text has to be read, so checks without a summary
never load it. ``match(normalised)`` names the first rule that fires on text already
normalised by ``doors.normalise``; ``RULE_NAMES`` lists them in order.

Families are plain sets of words and phrases (every inflection), indexed into flat maps of
strings to bit masks on first use; the index is cached next to this module's byte-code
(``__pycache__/door-words.*.marshal``) so a new process loads it instead of building it.
"""

import os

__all__ = ["RULE_NAMES", "match", "words"]


# Rules: verb families x object families, over words.
#
# The normalised text is split into words (flags such as ``-rf`` and versions such as
# ``2.0.0`` stay whole; ``?``, ``!``, ``;`` and a sentence-ending ``.`` are breaks). A pair
# rule fires when a verb-family word has an object-family word within a few words after it,
# in the same sentence (or, for the passive voice, the object first). Families hold every
# inflection and multi-word phrases, and are plain sets: nothing to compile, so the rules
# cost nothing to import.


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


_FAMILIES = []


class _Family:
    """A set of words and phrases. Entries are indexed on first use (``_build``), so
    importing this module costs nothing; ``#version`` matches any version word."""

    __slots__ = ("groups", "id")
    count = 0

    def __init__(self, *groups):
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
    st = os.stat(__file__)
    import sys

    tag = f"{st.st_mtime_ns:x}-{st.st_size:x}-{sys.implementation.cache_tag}"
    return os.path.join(os.path.dirname(__file__), "__pycache__", f"door-words.{tag}.marshal")


def _build():
    """Load the word index from its cache next to the byte-code, else build (and cache) it."""
    global _INDEX
    try:
        path = _cache_path()
        with open(path, "rb") as f:
            data = f.read()  # marshal.load(f) reads in small pieces: ~8x slower
        index = _Index.load(data)
    except (OSError, ValueError):
        index = _Index.of(_index_now())
        try:
            from toolkit.store.safe_io import write_atomic

            folder = os.path.dirname(path)
            write_atomic(path, index.dump(), mode=0o644)
            for name in os.listdir(folder):  # copies made for earlier versions of this file
                if name.startswith("door-words.") and name != os.path.basename(path):
                    try:
                        os.remove(os.path.join(folder, name))
                    except OSError:
                        pass
        except (OSError, NameError):
            pass  # a read-only install builds it in each process instead
    _INDEX = index


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
    ):
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
        for i, n in t.at(self.verbs):
            start = i + n
            if (
                self.verb_unless_after
                and start < len(words)
                and words[start] in self.verb_unless_after
            ):
                continue
            for j, m in objects:
                if (
                    start <= j < start + self.window
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


def _F(*groups):
    return _Family(*groups)


_W = frozenset

# ---- verb families -------------------------------------------------------------
_STRONG = _F(
    _forms(
        "delete, erase, wipe, purge, destroy, nuke, obliterate, shred, expunge, "
        "annihilate, zap, blow away, wipe out"
    ),
    "deletion, deletions, erasure, destruction, del",
)
_REMOVE = _F(
    _STRONG,
    _forms(
        "drop, remove, truncate, discard, overwrite, lose, get rid of, tear down, "
        "decommission, deprovision, terminate, deactivate, kill, unlink, replace, "
        "empty, clear, reset, flush, clean up, restore, reinitialise, reinitialize, "
        "format, revert, throw away, trash, scrap, delete all, remove all, "
        "clean out, dump, evict, expire, bin, ditch, axe, junk, chuck, toss, "
        "toss out, nix, kill off, throw out, do away with, dispose of, "
        "deep-six, shitcan, blow up, zero out, eradicate, eliminate, demolish, "
        "cull, prune, rip out, excise, liquidate, dispose, void"
    ),
    "rm, removal, teardown, tore down, torn down, overwrote, overwritten, lost, "
    "got rid of, emptied, emptying, empties, threw away, thrown away, reinit",
)
_PASSIVE_GONE = _F(
    "dropped, deleted, removed, truncated, wiped, purged, erased, destroyed, "
    "discarded, overwritten, emptied, cleared, flushed, lost, gone, torn down, "
    "decommissioned, terminated, deactivated, reset, nuked, shredded, reverted, "
    "replaced, restored, reinitialised, reinitialized, formatted, trashed, "
    "scrapped, expired, evicted, binned, ditched, axed, junked, chucked, "
    "tossed, nixed, killed off, thrown out, disposed of"
)
# ---- object families ------------------------------------------------------------
_DURABLE = _F(
    _nouns(
        "table, column, database, db, schema, index, indice, collection, keyspace, bucket, "
        "namespace, cluster, volume, disk, drive, partition, record, row, entry, account, user, "
        "customer, tenant, member, subscriber, data, dataset, datastore, data store, document, "
        "blob, object, upload, attachment, message, email, order, invoice, transaction, payment, "
        "secret, credential, certificate, cert, log file, audit log, audit trail, history, backup, "
        "snapshot, archive, dump, replica, shard, repo, repository, branch, commit, environment, "
        "env, server, instance, vm, node, pod, deployment, statefulset, pvc, persistent volume, "
        "queue, kafka topic, pubsub topic, sns topic, message topic, stream, dns record, "
        "dns zone, zone, domain, workspace, organisation, "
        "organization, org, project, stack, state file, tfstate, migration, file, folder, "
        "directory, dir, home directory, filesystem, file system, warehouse, lake, ledger, "
        "subscription, registry, image, container, mailbox, inbox, channel, wiki, volume claim, "
        "profile, photo, video, asset, recording, conversation, chat history, key, table row, "
        "distribution, cdn distribution, hosted zone, load balancer, vpc, subnet, nat gateway, "
        "user pool, identity pool, secret, kms key, vault, keystore, cron job, scheduled job, "
        "webhook, integration, app registration, oauth app, github app, service account, "
        "spreadsheet, sheet, crm, contact, lead, ticket, calendar, shared drive, drive folder, "
        "google drive, notion page, confluence space, slack workspace, metric, analytics, "
        "telemetry, catalog, release, artifact registry, package version, published version"
    ),
    "keys, logs, tokens, production, prod, storage, everything, inventory, indices, "
    "user data, customer data, personal data, client data, production data, prod data, "
    "patient data, payment data, billing data, all of it, all of them, the lot, pii",
)
_DURABLE_UNLESS_AFTER = _W(
    "variable variables var vars test tests spec specs mock mocks fixture "
    "fixtures stub stubs placeholder placeholders prop props type types "
    "name names label labels field in_ui style styles tag tags list "
    "component components element elements class classes method "
    "methods function functions helper helpers import imports "
    "comment comments docstring docstrings link links icon icons "
    "button buttons header headers row_ column_ width widths "
    "heading headings layout padding margin border borders color "
    "colors template templates hint hints tooltip tooltips "
    "animation animations note notes picker selector selectors "
    "dropdown dropdowns filter filters sort sorting preview "
    "previews cache caches model models view views".split()
)
_DURABLE_UNLESS_BEFORE = _W(
    "unused dead stale obsolete redundant debug temp tmp generated "
    "temporary scratch dummy fake mock sample example test local "
    "empty blank trailing extra stray dev development build dist "
    "output cache throwaway preview demo css js ts tsx jsx scss "
    "less html md markdown txt svg png snapshot spec stories "
    "storybook lint readme changelog".split()
)

_HARMLESS = _F(
    _nouns(
        "import, comment, comma, semicolon, whitespace, space, tab, blank line, empty line, "
        "line, typo, todo, fixme, print, print statement, console log, debug log, debug line, "
        "debug statement, debug output, debug print, log line, log statement, log call, "
        "logging statement, logging call, dead code, cache, cdn cache, build cache, browser cache, "
        "npm cache, pip cache, cookie, lint error, lint warning, warning, placeholder, emoji, "
        "variable, var, helper, wrapper, stub, mock, fixture, breakpoint, character, char, word, "
        "sentence, paragraph, highlight, selection, style, class, classname, tag, element, div, "
        "span, button, icon, label, tooltip, border, margin, padding, draft, feature flag, flag, "
        "test, test case, example, deprecation warning, note, lockfile, lock file, node module, "
        "venv, pyc file, pycache, build artifact, artifact, prompt, suggestion, dependency, "
        "parameter, param, argument, arg, field, property, prop, attribute, method, function, "
        "docstring, annotation, decorator, header comment, banner, badge, link, tooltip, "
        "duplicate, duplicate line, extra newline, newline, trailing newline, bracket, brace, "
        "parenthesis, quote, alias, shortcut, keybinding, hint, animation, screenshot, "
        "thumbnail, image cache, query cache, page cache, asset cache, layer cache, "
        "compiled file, stale comment, temp variable, cell output, notebook output, output, "
        "code, commented out code, pencil mark, mark, tempfile, temp file, tmp file, tmpfile, "
        "temporary file, scratch file"
    ),
    "unused, dead, trailing, redundant, extra, stray, commented, obsolete comment, "
    "node_modules, __pycache__, dist, build",
)
_DETERMINERS = _SKIP | _W(
    "unused dead stale redundant extra stray trailing temporary temp "
    "tmp old obsolete leftover orphaned debug local duplicate".split()
)
# Words that make a strong verb a column or feature name rather than an act.
_NAMING_NEXT = _W(
    "at by flag flags column columns field fields timestamp timestamps marker "
    "markers button buttons icon icons key keys event events endpoint "
    "handler handlers hook hooks permission permissions confirmation "
    "dialog modal click clicked callback callbacks listener listeners "
    "action actions".split()
)
_NAMING_PREV = _W("soft un undo is_ has_ confirm the_".split())
# Places where deleting is editing: "erase the marks in the mockup".
_SANDBOX = _W(
    "mockup mockups wireframe wireframes figma sketch design designs draft drafts "
    "readme docs doc notebook editor whiteboard slide slides screenshot test tests "
    "fixture fixtures example examples storybook prototype snippet snippets notes "
    "comment comments template templates css stylesheet markdown story copy "
    "text diff patch scratchpad playground ui frontend dialog modal button page "
    "form screen menu view".split()
)

_CRED_OBJ = _F(
    _nouns(
        "api key, access key, secret key, private key, signing key, ssh key, gpg key, pgp key, "
        "deploy key, encryption key, master key, root key, kms key, jwt secret, tls key, ssl key, "
        "aws key, stripe key, oauth token, oauth secret, client secret, license key, webhook "
        "secret, github token, npm token, pypi token, personal access token, app secret, "
        "admin token, key pair, keypair, token, secret, credential, password, passwd, "
        "passphrase, certificate, cert, env file, kubeconfig, pem, session token, refresh token, "
        "access token, bearer token, service account key, service account, root account, "
        "public key, host key, tls certificate, ssl certificate, api token, auth token, "
        "signing secret, salt, pepper, encryption secret, vault token, root password, "
        "admin password, database password, db password"
    ),
    "keys, creds, dotenv, pats, sessions, all sessions, env",
)
_CRED_UI = _W(
    "field fields form forms input inputs label labels placeholder validation strength "
    "hint hints page pages screen screens ui component components modal prompt rule "
    "rules length regex meter toggle visibility icon email emails template templates "
    "link links flow flows button buttons reset_link policy text copy docs "
    "documentation input_type type tests test mock mocks fixture fixtures "
    "example examples manager".split()
)
_CRED_VERB = _F(
    _forms(
        "rotate, revoke, reset, regenerate, reissue, re-issue, invalidate, expire, roll, change, "
        "replace, leak, expose, share, print, log, commit, push, paste, post, send, echo, disclose, "
        "publish, upload, hardcode, hard-code, check in, cycle, renew, swap, delete, remove, "
        "disable, deactivate, kill, transfer, rekey, re-key, dump, export, email, tweet, store, "
        "write, reveal, hand out, give out, copy"
    ),
    "revocation, rotation, sent, wrote, shown, show, display, displays, displayed",
)
_CRED_PASSIVE = _F(
    "rotated, revoked, regenerated, leaked, exposed, committed, invalidated, "
    "compromised, reset, expired, published, shared, printed, logged, pasted, "
    "pushed, reissued, deleted, removed, disabled, changed, replaced, renewed, "
    "rolled, dumped, exported, revealed, stolen"
)

_WEAKEN = _F(
    _forms(
        "disable, turn off, switch off, remove, bypass, skip, relax, weaken, loosen, drop, "
        "deactivate, circumvent, ignore, opt out of, kill, strip, rip out, suspend, downgrade, "
        "unenforce, unprotect, lift, reduce, lower, shorten, stop requiring, stop enforcing, "
        "stop checking, stop verifying, no longer require, no longer enforce, get rid of, "
        "comment out, allow login without, allow access without, override, overrule, neuter, "
        "defeat, break, pause, exempt, whitelist, allowlist, open up"
    ),
    "without, off",
)
_SECURITY = _F(
    _nouns(
        "2fa, two factor, two factor auth, two factor authentication, two-factor, mfa, "
        "multi factor, multi factor auth, multi factor authentication, otp, totp, sso, saml, "
        "auth, authentication, authorisation, authorization, authn, authz, login requirement, "
        "login check, password requirement, password policy, password rule, firewall, "
        "firewall rule, waf, security group, network policy, acl, iam policy, iam check, rbac, "
        "permission check, access control, access check, csrf, csrf protection, csrf token, "
        "csrf check, cors, cors check, cors restriction, csp, content security policy, ssl, "
        "ssl verification, ssl check, tls, tls verification, https, hsts, certificate "
        "verification, cert verification, certificate validation, cert validation, "
        "certificate pinning, cert pinning, signature verification, signature check, "
        "verification, encryption, encryption at rest, rate limit, rate limiting, rate limiter, "
        "ratelimit, throttling, captcha, audit log, audit logging, audit trail, security logging, "
        "security check, security scan, security scanning, security feature, security header, "
        "security review, security control, security policy, branch protection, protected "
        "branch, required review, review requirement, code review requirement, status check, "
        "sandbox, sandboxing, selinux, apparmor, seccomp, antivirus, endpoint protection, "
        "secret scanning, vulnerability scan, vulnerability scanning, vulnerability alert, "
        "account lockout, lockout, session timeout, session expiry, password expiry, "
        "permission, access restriction, ip allowlist, ip whitelist, allowlist, whitelist, "
        "vpn, intrusion detection, guardrail, safety check, safeguard, protection, "
        "login protection, brute force protection, email verification, "
        "identity verification, approval requirement, required approval, approval gate, "
        "signed commit, commit signing, dmarc, dkim, spf, password hashing, hashing, "
        "private network, private networking, private endpoint, private access, security, "
        "tls certificate check, token check, token validation, jwt validation, "
        "jwt verification, webhook signature, hmac check, hmac verification, backup, "
        "automated backup, nightly backup, snapshot, replication, point in time recovery, "
        "pitr, versioning, bucket versioning, object lock, retention, log retention, "
        "data retention, soft delete, deletion protection, termination protection, "
        "delete protection, recycle bin, trash retention, audit, monitoring, alerting"
    )
)
_WEAK_SEC_PASSIVE = _F(
    "disabled, turned off, switched off, removed, bypassed, skipped, relaxed, "
    "weakened, loosened, dropped, off, optional, not required, deactivated, "
    "ignored, suspended, lifted, commented out, no longer required, "
    "no longer enforced, opened up"
)

_GRANT = _F(
    _forms(
        "grant, give, assign, promote, elevate, escalate, upgrade, make, add, set, "
        "transfer, hand over, hand, invite"
    ),
    "gave, given, made",
)
_PRIV = _F(
    _nouns(
        "owner, ownership, admin, administrator, admin right, admin access, "
        "admin role, superuser, super user, super admin, superadmin, root access, "
        "sudo access, sudo right, full access, full control, full permission, "
        "write access, push access, org owner, owner role, billing admin, "
        "maintainer, admin privilege, elevated privilege, elevated permission, "
        "global admin, domain admin, cluster admin, cluster-admin, "
        "organization owner, organisation owner, repo admin"
    ),
    "root, sudo, sudoers, wheel, god mode, all privileges, all permissions, "
    "all scopes, admins group, owners group, administrators, admins, owners",
)
_PRIV_UI = _W(
    "page pages panel panels dashboard dashboards ui view views route routes screen "
    "screens tab tabs menu menus link links button buttons section sections form "
    "forms endpoint endpoints doc docs guide template templates layout layouts "
    "component components sidebar nav theme style styles css test tests fixture "
    "fixtures mock mocks check checks badge badges label labels column field "
    "fields filter filters flag flags tool tools area portal console mode "
    "interface api login role_badge icon icons avatar list table toggle toggles "
    "switch setting settings option options feature features widget widgets "
    "report reports command commands cli script scripts tab".split()
)
_MAKE = _F(
    _forms("make, set, turn, flip, switch, change, mark, open, expose, configure, convert"), "made"
)
_PUBLIC = _F(
    "public, publicly, world readable, world writable, world-readable, "
    "world-writable, public read, public-read, anyone with the link, open to all, "
    "open to everyone, open to the world, readable by anyone, writable by anyone"
)
_PUBLIC_CODE = _W(
    "method methods function functions api class classes field fields member "
    "members property properties getter getters setter setters interface "
    "interfaces constructor static variable variables helper helpers type "
    "types constant constants export exports attribute attributes modifier "
    "key key_ fn accessor accessors struct enum trait module modules".split()
)
_OPEN = _F(
    _forms(
        "open, expose, bind, listen, allow, unblock, forward, whitelist, allowlist, permit, accept"
    )
)
_WORLD = _F(
    "internet, the internet, world, the world, public, everyone, anyone, all ips, "
    "all traffic, all origins, all hosts, any ip, any host, any origin, 0.0.0.0, "
    "all inbound, all ingress, every ip, all ports, wildcard origin, wildcard"
)

_DEPLOY = _F(
    _forms(
        "deploy, ship, release, roll out, promote, push, go live, launch, cut over, "
        "apply, migrate, run, upgrade, switch over, enable, turn on, flip, "
        "roll, activate, execute, trigger, publish, cut"
    ),
    "rollout, rollouts, cutover, went live, ran, deployment, deployments, shipped, go-live, golive",
)
_PROD = _F(
    "prod, production, prd, prod-1, live, live site, the live site, live environment, "
    "live traffic, live database, live db, live cluster, live server, live servers, "
    "live users, to live, customers, all users, all customers, everyone, the public, "
    "100%, all regions, every region, all tenants, every tenant, general availability, "
    "ga, main site, real users, real customers, paying customers, production traffic, "
    "prod traffic, the fleet, entire fleet"
)
# Words that make "deploy" or "rollback" a noun modifier: work on the tooling, not the act.
_ABOUT_IT = _W(
    "script scripts config configuration docs doc documentation guide guides readme "
    "workflow workflows job jobs step steps pipeline pipelines file files yaml yml "
    "template templates tool tools tooling command commands target targets hook "
    "hooks button buttons notes checklist process instructions helper helpers "
    "function functions test tests plan plans logic code handler handlers "
    "mechanism procedure runbook runbooks strategy option options flag flags "
    "support status dashboard page log logs history sh py js ts json toml md cfg "
    "ini ps1 bat".split()
)
# Destinations that stay inside the team: publishing there is an ordinary edit.
_INTERNAL = _W(
    "pr description comment comments wiki internal team slack thread notebook "
    "draft drafts readme locally local staging preview sandbox intranet "
    "confluence notion jira ticket channel".split()
)
_NOT_PROD_AFTER = _W(
    "reload reloading preview previews server demo chat updates update share "
    "sharing coding edit editing mode view views stream streams region "
    "regions example examples".split()
)
_NONPROD = _W(
    "staging stage stg dev development preview previews test testing qa sandbox "
    "local localhost canary branch feature ephemeral review scratch demo".split()
)

_ROLLBACK_VERB = _F(
    _forms("revert, downgrade, undo, back out, roll back, unship, unrelease, pull back"), "undid"
)
_ROLLBACK_OBJ = _F(
    _nouns(
        "deploy, deployment, release, migration, version, rollout, "
        "schema, database, db, upgrade, cutover, production, prod, "
        "launch, ship, push, hotfix, infrastructure change, infra change"
    )
)

_RELEASE_VERB = _F(
    _forms(
        "release, ship, push, upload, submit, distribute, announce, post, "
        "tweet, deprecate, launch, tag, cut, promote, publish, unpublish, "
        "yank, list"
    ),
    "unpublish",
)
_RELEASE_OBJ = _F(
    "#version, npm, pypi, crates, crates.io, crate, rubygems, maven, "
    "maven central, nuget, packagist, cocoapods, the registry, package registry, "
    "the package registry, app store, the app store, play store, "
    "the play store, google play, docker hub, dockerhub, ghcr, ecr, gcr, "
    "testflight, homebrew, marketplace, the marketplace, publicly, the public, "
    "press release, status page, blog, twitter, linkedin, social media, "
    "customers, everyone, all users, new version, major version, "
    "minor version, patch version, release candidate, stable channel, "
    "stable release, new release, the release, a release, release branch, "
    "general availability, ga, chrome web store, app stores, "
    "extension store, vs code marketplace, helm repo, artifactory, "
    "package, packages, sdk, library, the library, our library, the package, "
    "our package, the sdk, our sdk, the gem, the crate, the module, "
    "the image, the chart, the app, the binary, the cli, the plugin, "
    "the extension"
)
_RELEASE_UNLESS_AFTER = _W(
    "notes note lock locks mutex semaphore handle handles memory "
    "resources resource connection connections cursor cursors "
    "pressure button key keys focus date dates".split()
)

_DBS = _F(
    "postgres, postgresql, pg, mysql, mariadb, sqlite, sqlite3, mongo, mongodb, "
    "dynamo, dynamodb, cassandra, oracle, sql server, sqlserver, mssql, redis, "
    "cockroach, cockroachdb, spanner, bigquery, snowflake, aurora, firestore, "
    "firebase, supabase, planetscale, elasticsearch, elastic search, opensearch, "
    "clickhouse, couchdb, couchbase, neo4j, db2, redshift, timescale, timescaledb, "
    "influx, influxdb, duckdb, scylla, scylladb, fauna, faunadb, vitess, tidb, "
    "yugabyte, yugabytedb, cosmos db, cosmosdb, memcached, kafka, rabbitmq, "
    "another database, a different database, a new database, another db, "
    "a different db, a new db, nosql, a document store, a document database, "
    "a key value store, a key-value store, a graph database, another datastore, "
    "a different datastore, a new datastore, a different storage engine, "
    "another storage engine, a new storage engine, d1, turso, neon, "
    "mysql 8, postgres 16, a managed database, managed postgres, rds"
)
_SWITCH = _F(
    _forms(
        "switch, migrate, move, port, convert, replace, swap, transition, change, "
        "go, rewrite, rebuild, re-platform, replatform, standardise, standardize, "
        "consolidate"
    ),
    "moving off, move off",
)
_REWRITE_VALUES = _F(
    _forms(
        "update, modify, change, overwrite, rewrite, normalise, normalize, convert, transform, "
        "mutate, migrate, reformat, recompute, recalculate, scrub, sanitise, sanitize, trim, "
        "lowercase, uppercase, merge, dedupe, deduplicate, de-duplicate, collapse, consolidate, "
        "reassign, renumber, remap, re-map, correct, patch, fix, rehash, re-hash, reencode, "
        "re-encode, reencrypt, re-encrypt, encrypt, decrypt, hash, anonymise, anonymize, "
        "pseudonymise, pseudonymize, redact, rekey, re-key, backfill, populate, set, reset, "
        "touch, round, truncate, strip, replace, mask, obfuscate, recode, re-id, reindex, "
        "re-index, repair, adjust, rescale, reprice, re-price, reclassify"
    ),
    "rewrote",
)
_ALL_QUALIFIER = _W(
    "all every each existing stored historical old legacy past production "
    "prod live millions thousands hundreds entire whole".split()
)
_DATA_NOUN = _F(
    _nouns(
        "row, record, value, entry, document, user, account, data, customer, "
        "order, password, email, id, field, column, table, invoice, "
        "transaction, price, balance, timestamp, address, profile, event, "
        "object, item, product, sku, payment, message, hash, phone number, "
        "username, slug, url, file, upload, key, amount, date, score, tag, "
        "rating, review, comment, post"
    )
)
_SCHEMA_VERB = _F(
    _forms(
        "rename, split, merge, drop, change, retype, narrow, widen, shrink, "
        "alter, restructure, reshape, repartition, re-partition, "
        "denormalise, denormalize, normalise, normalize, reorganise, "
        "reorganize, re-key, rekey"
    )
)
_SCHEMA_OBJ = _F(
    _nouns(
        "table, column, collection, schema, bucket, kafka topic, keyspace, index, "
        "database, db, data model, datamodel, field in the database, "
        "database field, db field, database column, db column, "
        "partition key, sort key, shard key, primary index"
    )
)
_MIGRATION = _F(
    _nouns(
        "migration, data migration, schema migration, db migration, "
        "database migration, pending migration, alembic migration, "
        "django migration, rails migration, flyway migration, "
        "liquibase changeset, prisma migration"
    ),
    "migrations, migrate",
)
_RUN = _F(
    _forms(
        "run, apply, execute, trigger, kick off, start, perform, ship, deploy, "
        "squash, edit, rewrite, delete, remove, drop, revert, roll back, "
        "fake"
    ),
    "ran",
)
_MIGRATE = _F(_forms("migrate"), "migration, migrations")
# "a migration test", "the migration guide": writing about migrations changes no data.
_MIGRATION_TOOLING = _W(
    "test tests testing guide guides docs doc documentation tool tools "
    "tooling framework helper helpers script scripts template templates "
    "linter lint plan plans checklist example examples".split()
)
_MIGRATE_OBJ = _F(
    _nouns(
        "prod, production, database, db, schema, data, table, record, row, "
        "user, account, customer, storage, datastore, cluster, tenant, "
        "region, order, payment, document"
    ),
    _DBS,
)
_ID_WORD = _F(
    "id, ids, key, keys, identifier, identifiers, primary key, primary keys, "
    "user id, user ids, order id, order ids, account id, account ids"
)
_ID_TYPE = _W(
    "uuid uuids ulid ulids bigint bigints snowflake autoincrement auto_increment "
    "serial integer integers int int32 int64 uuidv4 uuidv7 guid guids".split()
)

_SEND = _F(
    _forms(
        "send, email, e-mail, mail, text, sms, notify, message, blast, announce, "
        "broadcast, push, alert, contact, ping, invite, remind, dispatch, "
        "bulk email, bulk send, mass email, mass mail, mass send, spam, "
        "reach out to, write to, inform, warn, tell, post to, reply all, "
        "reply to all, cc, bcc, unsubscribe, opt out, resubscribe, subscribe"
    ),
    "sent, e-mails, emailed, mailed",
)
_AUDIENCE = _F(
    _nouns(
        "user, customer, subscriber, client, member, contact, recipient, "
        "mailing list, list, audience, userbase, user base, tenant, lead, "
        "employee, vendor, buyer, seller, partner, merchant, donor, patient, "
        "student, account holder, signup, sign up, follower, person, people, "
        "team, company, staff, developer, owner, admin, investor, "
        "shareholder, parent, teacher"
    ),
    "everyone, everybody",
)
_QUANT = _W(
    "all every each entire whole our the_full everyone everybody thousands millions "
    "hundreds".split()
)
_BROAD_AUDIENCE = _F(
    _nouns(
        "customer, subscriber, client, mailing list, newsletter, "
        "investor, regulator, journalist, shareholder, press, "
        "entire company, whole company, all hands, board, "
        "user base, userbase, audience, follower, every user, "
        "all user, every customer, all customer, our user, "
        "paying user, paying customer, waitlist, wait list, "
        "beta user, beta tester, end user"
    ),
    "everyone, everybody, the list, the press",
)
_MONEY_VERB = _F(
    _forms(
        "charge, bill, invoice, debit, pay, wire, remit, transfer, send, "
        "disburse, refund, credit, comp, pay out, reimburse, compensate, "
        "withdraw, deposit, fund, donate, spend, top up, settle"
    ),
    "paid, sent, payout, payouts, paying",
)
_MONEY_OBJ = _F(
    _nouns(
        "customer, card, credit card, account, client, money, fund, payment, "
        "payout, balance, invoice, salary, payroll, vendor, contractor, "
        "dollar, euro, pound, usd, eur, gbp, bitcoin, btc, eth, crypto, "
        "commission, affiliate, reward, royalty, dividend, bounty, rebate, "
        "credit, refund, compensation, settlement, reimbursement, invoice, "
        "bonus, stipend, deposit, fee, cash, wage, bank account, "
        "stripe balance, treasury"
    ),
    "salaries, $, everyone, all",
)
_CANCEL = _F(
    _forms(
        "cancel, terminate, void, end, downgrade, close, suspend, revoke, "
        "discontinue, stop, expire, unsubscribe"
    ),
    "cancellation, cancellations, cancelled, canceled, termination",
)
_CANCELLABLE = _F(
    _nouns(
        "subscription, order, account, plan, contract, reservation, booking, "
        "membership, payment, invoice, license, licence, domain, "
        "agreement, policy, lease, trial, shipment, delivery, transfer, "
        "wire, employee, contractor, vendor, partnership, customer, "
        "enterprise plan, support plan, seat, service agreement, "
        "insurance, mandate, standing order, direct debit, pledge, "
        "sponsorship, offer"
    )
)
_DOMAIN_VERB = _F(
    _forms(
        "transfer, move, point, repoint, re-point, let, allow, release, sell, "
        "buy, purchase, renew, register, expire, change, switch, update, "
        "drop, delete, park, give up, hand over, migrate, delegate, "
        "redirect, abandon"
    ),
    "sold, bought, let lapse, lapse",
)
_DOMAIN = _F(
    _nouns(
        "domain, domain name, nameserver, registrar, dns provider, mx record, "
        "apex record, apex domain, root domain, custom domain, tld"
    )
)
_DOMAIN_CODE = _W(
    "model models logic layer layers object objects driven event events expert "
    "experts service services entity entities type types knowledge language "
    "specific class classes module modules boundary boundaries folder "
    "folders package packages design".split()
)
_DEAL_VERB = _F(
    _forms(
        "buy, purchase, sell, sign, accept, decline, commit to, order, lease, "
        "renew, reserve, countersign, execute, agree to, approve, consent to, "
        "e-sign, sign up for, click accept on, click through, sign off on, agree"
    ),
    "bought, sold",
)
_DEAL = _F(
    _nouns(
        "contract, agreement, nda, lease, offer, license, licence, seat, "
        "terms, terms of service, terms of use, terms and conditions, tos, eula, "
        "license terms, licence terms, user agreement, addendum, dpa, baa, "
        "data processing addendum, data processing agreement, subscription terms, "
        "reserved instance, savings plan, enterprise plan, annual plan, "
        "hardware, purchase order, quote, term sheet, sow, msa, dpa, "
        "statement of work, settlement, acquisition, merger, invoice"
    )
)
_POST_VERB = _F(
    _forms(
        "post, tweet, announce, publish, share, submit, file, report, "
        "disclose, leak, publicize, publicise, broadcast, send"
    )
)
_PUBLIC_PLACE = _F(
    "twitter, x.com, linkedin, publicly, the blog, our blog, company blog, "
    "social media, press release, status page, the status page, hacker news, "
    "reddit, the app store, app store, play store, regulator, regulators, "
    "the sec, the irs, authorities, the authorities, the police, the media, "
    "journalists, the press, the public, mastodon, bluesky, facebook, "
    "instagram, youtube, product hunt, the forum, public forum, "
    "public channel, public slack, public repo, public issue, public issues, "
    "github issue, public github issue, gist, public gist, pastebin"
)

# Sending data out of the company: a sensitive object is enough ("forward the customer
# list to the vendor"); the destination is rarely named in a way a rule could trust.
_SHARE_VERB = _F(
    _forms(
        "share, forward, send, email, e-mail, mail, upload, post, export, "
        "give, hand over, hand, leak, attach, paste, sync, transfer, "
        "reply all, reply to all, cc, bcc, dm, message, text, publish, "
        "sell, expose, provide, disclose, submit, copy"
    ),
    "sent, gave, given",
)
_SENSITIVE = _F(
    _nouns(
        "customer list, customer data, customer record, customer database, customer export, "
        "customer spreadsheet, customer email, customer detail, customer info, client list, "
        "client data, client record, user list, user data, user record, user database, "
        "user export, user email, email list, contact list, mailing list, subscriber list, "
        "lead list, salary, salary sheet, salary list, salary data, salary spreadsheet, payroll, "
        "payroll data, payroll spreadsheet, payslip, employee list, employee data, "
        "employee record, employee salary, personnel file, hr file, hr record, patient data, "
        "patient record, medical record, health record, health data, pii, personal data, "
        "personal information, personal detail, social security number, ssn, passport, "
        "credit card number, card number, card data, bank detail, bank account detail, "
        "tax record, tax return, financial statement, financials, cap table, board deck, "
        "database dump, db dump, data dump, production data, prod data, production database, "
        "prod database, full export, data export, password list, password file, "
        "confidential document, confidential file, trade secret, source code, private key, "
        "internal document, customer pii, user pii, address list, phone list"
    ),
    "salaries, customers, users, patients, employees",
)
_OUTSIDE = _F(
    "anyone, anybody, anyone who has the link, anyone with the link, "
    "anyone with a link, anybody with the link, the public, the internet, "
    "the world, everyone on the internet, externally, outside the company, "
    "outside the org, outside the organisation, outside the organization, "
    "third party, third parties, third-party, strangers, public link, publicly"
)
# Mass changes to who hears from us.
_MASS_VERB = _F(
    _forms(
        "unsubscribe, opt out, resubscribe, subscribe, enrol, enroll, sign up, "
        "mute, remove from the list, remove from the mailing list"
    )
)

_TEARDOWN = _F(
    _forms(
        "terminate, decommission, deprovision, sunset, retire, shut down, "
        "take down, tear down, dismantle, uninstall, deregister, spin down, "
        "scale down to zero, scale to zero, stop and delete, wind down, "
        "turn down, switch off, power off, pull the plug on, kill off, "
        "release, deactivate, destroy, delete, remove, nuke, wipe"
    ),
    "shutdown, teardown, took down, torn down, tore down, spun down",
)
_INFRA = _F(
    _nouns(
        "instance, ec2 instance, server, vm, node, cluster, droplet, machine, host, "
        "service, api, product, endpoint, region, datacenter, data center, "
        "environment, infrastructure, infra, stack, vpc, network, load balancer, "
        "cdn, site, website, app, application, platform, database, db, "
        "elastic ip, static ip, ip address, phone number, fleet, account, "
        "subnet, gateway, nat gateway, dns, kubernetes cluster, k8s cluster, "
        "eks cluster, gke cluster, aks cluster, rds instance, redis cluster, "
        "kafka cluster, worker, worker pool, node pool, autoscaling group, "
        "asg, lambda, function app, backend, storage account, project, tenant, "
        "org, organisation, organization, subscription, resource group, "
        "namespace, deployment, pod, statefulset, daemonset, ingress, volume, "
        "container registry, registry, queue, topic, mailbox, repo, "
        "repository"
    ),
    "production, prod, live, permanently, forever, for good, everything",
)
_INFRA_UNLESS_BEFORE = _W(
    "local dev development test testing preview scratch temporary temp "
    "tmp sandbox my your ephemeral throwaway demo mock fake "
    "watch".split()
)
_INFRA_TOOL = _F(
    "pulumi, cdk, cdktf, sls, serverless, eksctl, terragrunt, copilot, amplify, "
    "vercel, netlify, fly, flyctl, heroku, doctl, railway, render, aws, gcloud, "
    "gsutil, az, oci, ibmcloud, s3, ec2, rds, eks, gke, aks, lambda, cloudformation, "
    "azure, gcp, digitalocean, linode, hetzner, openstack, ansible, nomad, "
    "consul, vault, kubectl, k8s, kubernetes, helm, docker, podman, compose, "
    "docker compose, docker-compose, terraform, tf, crossplane, argocd, flux"
)
_INFRA_TOOL_VERB = _W(
    "destroy delete delete-stack delete-bucket delete-cluster "
    "delete-db-instance delete-table rm rb remove teardown down destroy-all "
    "apps:destroy terminate terminate-instances purge prune rmi drain "
    "uninstall deregister kill -destroy --destroy nuke wipe "
    "delete-function delete-service delete-repository delete-secret "
    "delete-user delete-key deletion".split()
)


# (rule name, test over the word list); the first rule that fires names the decision.
RULES = (
    (
        "irreversible-wording",
        _or(
            _Any(
                _F(
                    "irreversible, irreversibly, irrevocable, irrevocably, unrecoverable, "
                    "nonrecoverable, non-recoverable, unrecoverably, permanent, permanently, "
                    "cannot be undone, can not be undone, can t be undone, cannot be reversed, "
                    "can t be reversed, cannot be recovered, can t be recovered, no way back, "
                    "no way to undo, no undo, point of no return, one way door, one-way door, "
                    "data loss, lose data, lose all data, losing data, lost data, destructive, "
                    "destructively, unrecoverable data, not reversible, non-reversible, "
                    "nonreversible, can never be undone, for good, once and for all, "
                    "never come back, no going back"
                )
            ),
            _Pair(
                _F(_forms("lose"), "lost"),
                _F("data, work, changes, history, everything, records, customers, users"),
                3,
            ),
        ),
    ),
    (
        "sql-destructive",
        _or(
            _Then(_F("drop, truncate"), lambda w: w in _SQL_OBJECTS, 2),
            _Any(
                _F(
                    "delete from, alter table, alter column, alter type, dropdb, flushall, flushdb, "
                    "dropdatabase, drop database, deletemany, delete many, dropcollection, "
                    "drop collection, replace into, merge into, vacuum full, drop owned, "
                    "deleteall, delete all rows, destroyall, removeall, truncate cascade, "
                    "on delete cascade, cascade delete, cascading delete"
                )
            ),
            _Then(_F("update"), lambda w: w == "set", 3),
        ),
    ),
    (
        "filesystem-destructive",
        _or(
            _Any(
                _F(
                    "rm, rmdir, shred, mkfs, wipefs, fdisk, parted, srm, rmtree, rimraf, "
                    "secure delete, secure-delete, remove-item, del /s, rd /s, dd, "
                    "shutil rmtree, rm rf, rm -rf, rm -r, rm -fr, unlink"
                )
            ),
            _Then(_F("find"), _is_flag("-delete"), 12),
            _Then(_F("truncate"), _is_flag("-s", "--size"), 2),
            _Then(_F("crontab"), _is_flag("-r", "-ir", "-ri"), 2),
            _Any(
                _F(
                    "db drop, db reset, db purge, db wipe, db flush, database drop, "
                    "database reset, migrate fresh, migrate reset, migrate refresh, "
                    "force reset, --force-reset, accept data loss, --accept-data-loss, pg reset, "
                    "sqlflush, schema load, db schema load, drop all, dropall, drop_all, "
                    "reset --force, wipe data, factory reset"
                )
            ),
            _Pair(_F(_forms("move"), "mv"), _F("dev null"), 8),
            _Then(
                _F("format, formatting, reformat, reformatting, wipe, partition, repartition"),
                lambda w: (
                    w
                    in _W(
                        "disk disks drive drives volume volumes partition partitions "
                        "ssd hdd sd card c usb".split()
                    )
                ),
                3,
            ),
        ),
    ),
    (
        "history-rewrite",
        _or(
            _Any(
                _F(
                    "force push, force pushed, force pushing, force pushes, forcepush, "
                    "force-push, --force-with-lease, force with lease, hard reset, "
                    "filter branch, filter-branch, filter repo, filter-repo, bfg, "
                    "reflog expire, reflog delete, stash drop, stash clear, update-ref -d, "
                    "force the push, force a push, push --force, push -f, push --delete, "
                    "push --mirror, --force-push, forced push, git push --force, git clean, "
                    "checkout --, checkout ., restore ., restore --staged ., "
                    "rewrite history, rewriting history, rewrote history, history rewrite, "
                    "reset --hard, --hard"
                )
            ),
            _Then(
                _F("push, pushes, pushed, pushing, git"),
                _is_flag(
                    "--force",
                    "-f",
                    "--force-with-lease",
                    "--force-if-includes",
                    "--mirror",
                    "--delete",
                    "-d",
                    "--prune",
                    "-fu",
                    "-uf",
                    "+main",
                    "+master",
                ),
                6,
            ),
            _Then(_F("reset"), _is_flag("--hard", "--merge", "--keep"), 3),
            _Then(_F("push"), lambda w: w == "force", 3),
            _Then(_F("tag"), _is_flag("-d", "--delete"), 2),
            _Then(_F("clean"), _flag_with("fdx"), 2),
            _Then(_F("branch"), _is_flag("-d", "--delete", "-dr", "--force"), 2),
            _Then(_F("gc"), _is_flag("--prune", "--aggressive"), 2),
            _Pair(
                _F(
                    _forms(
                        "rewrite, overwrite, clobber, force, scrub, purge, alter, edit, change, "
                        "rebase, squash, amend, reorder, drop, discard, reset, revert, "
                        "filter, rewind, truncate, prune, mess with, tamper with, "
                        "fix up, fixup, delete, remove, wipe"
                    ),
                    "rewrote, overwrote",
                ),
                _F(
                    "history, git history, commit history, branch history, repo history, "
                    "repository history, project history, published commit, published commits, "
                    "pushed commit, pushed commits, public commit, public commits, shared "
                    "branch, shared history, shared commits, remote branch, remote history, "
                    "remote commits, upstream, the remote, remote, origin, origin main, "
                    "origin master, published history, public history, published branch, "
                    "merged commits, released commits, tags, release tag, release tags, "
                    "the tag, a tag, published tag, main history, master history, "
                    "commits on main, commits on master, main branch history"
                ),
                6,
                passive=_F(
                    "rewritten, rewrote, overwritten, overwrote, rebased, squashed, "
                    "amended, altered, changed, reordered, dropped, reset, force pushed, "
                    "force-pushed, clobbered, truncated, pruned, deleted, removed"
                ),
            ),
            _Pair(
                _F(
                    _forms(
                        "overwrite, clobber, force, rewrite, reset, rebase, squash, amend, "
                        "force push, replace, wipe, nuke, delete, remove"
                    ),
                    "rewrote, overwrote",
                ),
                _F(
                    "main, master, trunk, the main branch, the master branch, the default "
                    "branch, default branch, release branch, production branch, prod branch, "
                    "develop, develop branch, origin/main, origin/master"
                ),
                5,
            ),
            _Pair(
                _F(
                    _forms(
                        "discard, drop, lose, throw away, wipe, revert, reset, nuke, blow away, "
                        "delete, remove, clear, trash, erase, overwrite, clobber, stash drop"
                    ),
                    "lost, threw away, thrown away",
                ),
                _F(
                    _nouns(
                        "uncommitted change, unstaged change, local change, unsaved change, "
                        "unpushed commit, working tree, working copy, working directory "
                        "change, local commit, uncommitted work, local work, unsaved work, "
                        "unpushed work, stash, my change, your change, their change, "
                        "pending change, staged change, in-progress work, work in progress, "
                        "wip, changes, edits, local edit, unsaved edit, uncommitted edit, "
                        "local branch, dirty tree, dirty working tree"
                    )
                ),
                5,
            ),
        ),
    ),
    (
        "infra-teardown",
        _or(
            _Any(
                _F(
                    "terraform destroy, tofu destroy, terraform state rm, terraform apply -destroy, "
                    "terraform apply --destroy, pulumi destroy, cdk destroy, sls remove, "
                    "serverless remove, kubectl delete, kubectl drain, helm uninstall, helm delete, "
                    "docker system prune, docker volume prune, docker volume rm, docker rm, "
                    "docker rmi, compose down -v, down -v, down --volumes, --volumes, "
                    "prune --volumes, prune -a, prune --all, delete-stack, s3 rb, aws s3 rm, "
                    "terminate-instances, delete-db-instance, delete-cluster, delete-bucket, "
                    "nuke, cloud-nuke, aws-nuke, permanent shutdown, permanently shut down, "
                    "shut down permanently, shut it down permanently, shut down for good, "
                    "decommission, decommissioned, decommissioning, deprovision, "
                    "deprovisioned, deprovisioning, teardown, tear down, tore down, torn down, "
                    "tearing down, tears down"
                )
            ),
            _Then(
                _INFRA_TOOL,
                lambda w: (
                    w in _INFRA_TOOL_VERB
                    or w.startswith(
                        (
                            "delete-",
                            "remove-",
                            "terminate-",
                            "destroy-",
                            "deregister-",
                            "purge-",
                            "disable-",
                            "detach-",
                            "revoke-",
                        )
                    )
                ),
                6,
            ),
            _Pair(
                _TEARDOWN,
                _INFRA,
                6,
                passive=_F(
                    "terminated, decommissioned, deprovisioned, sunset, sunsetted, retired, shut down, "
                    "taken down, torn down, dismantled, uninstalled, deregistered, spun down, "
                    "destroyed, deleted, removed, nuked, wiped, released, deactivated, wound down, "
                    "turned down, switched off, powered off, scaled to zero"
                ),
                unless_before=_INFRA_UNLESS_BEFORE,
            ),
        ),
    ),
    (
        "rollback",
        _or(
            _Any(
                _F(
                    "rollback, rollbacks, roll back, rolls back, rolled back, rolling back, "
                    "roll-back, rollback of, rolled-back, roll it back, roll this back, "
                    "roll that back, roll everything back"
                ),
                unless_next=_ABOUT_IT,
            ),
            _Pair(
                _ROLLBACK_VERB,
                _ROLLBACK_OBJ,
                5,
                passive=_F("reverted, downgraded, undone, backed out, rolled back"),
            ),
        ),
    ),
    (
        "production-deploy",
        _or(
            _Pair(
                _DEPLOY,
                _PROD,
                7,
                unless_after=_NOT_PROD_AFTER,
                passive=_F(
                    "deploy, deploys, deployed, deployment, release, "
                    "released, rollout, rolled out, push, pushed, "
                    "launch, launched, cutover, shipped, migration, "
                    "upgrade, upgraded, enabled, flipped, change, "
                    "changes, ship, ships, go-live, promotion"
                ),
            ),
            _Pair(
                _F(
                    _forms(
                        "merge, land, push, commit, fast-forward, fast forward, cherry-pick, "
                        "cherry pick, squash-merge, squash merge, rebase-merge, auto-merge, "
                        "automerge, ship, release, deploy"
                    ),
                    "merged, landed",
                ),
                _F(
                    "into main, into master, to main, to master, onto main, onto master, "
                    "on main, on master, into trunk, to trunk, into the main branch, "
                    "into the master branch, into the default branch, to the main branch, "
                    "to the default branch, into release, into production, to production, "
                    "to prod, into prod, origin main, origin master, it into main, "
                    "it to main, it to master, the branch into main"
                ),
                6,
            ),
            _Pair(
                _F(
                    _forms(
                        "merge, land, squash-merge, squash merge, rebase-merge, auto-merge, "
                        "automerge"
                    ),
                    "merged, landed",
                ),
                _F(
                    "the pr, this pr, that pr, the pull request, this pull request, "
                    "the merge request, this merge request, the mr, this mr, pr #, "
                    "pull request #, the prs, these prs, it, the change, the branch"
                ),
                3,
            ),
            _Any(
                _F(
                    "go live, goes live, going live, went live, go-live, golive, land and deploy, "
                    "land & deploy, land-and-deploy, terraform apply, tofu apply, pulumi up, "
                    "cdk deploy, sls deploy, serverless deploy, fly deploy, vercel --prod, "
                    "netlify deploy --prod, git push heroku, eb deploy, kubectl apply, "
                    "helm upgrade, helm install, kubectl rollout, kubectl set image, "
                    "ansible-playbook, push origin main, push origin master, push to main, "
                    "push to master, merge to main, merge to master, "
                    "deploy, deploys, deploying, deployed, redeploy, redeploys, redeploying, "
                    "redeployed, cut over, cutover, cutting over, switch traffic, shift traffic, "
                    "flip traffic, dns cutover, dns switch, blue green switch, promote to"
                ),
                unless_near=_NONPROD,
                unless_next=_ABOUT_IT,
            ),
        ),
    ),
    (
        "publish-release",
        _or(
            _Any(_F(_forms("publish, unpublish, yank, republish")), unless_near=_INTERNAL),
            _Any(
                _F(
                    "unpublish, yank, yanked, yanking, republish, unpublished, "
                    "npm publish, twine upload, cargo publish, cargo yank, gem push, gem yank, "
                    "poetry publish, flit publish, hatch publish, uv publish, docker push, "
                    "gh release create, gh release upload, gh release delete, npm deprecate, "
                    "npm unpublish, npm dist-tag, cut a release, cut the release, cut a new release, "
                    "cut release, cutting a release, tag a release, tag the release, "
                    "release it, ship it to customers, app store submission, "
                    "submit to the app store, submit for review, submit to apple, "
                    "submit to google play, publicly release, public release, public launch, "
                    "general availability, make it generally available, press release"
                )
            ),
            _Pair(
                _RELEASE_VERB,
                _RELEASE_OBJ,
                7,
                passive=_F(
                    "released, shipped, pushed, uploaded, submitted, published, announced, tagged, "
                    "launched, posted, out"
                ),
                unless_after=_RELEASE_UNLESS_AFTER,
            ),
        ),
    ),
    (
        "credentials",
        _or(
            _Pair(_CRED_VERB, _CRED_OBJ, 6, passive=_CRED_PASSIVE, unless_after=_CRED_UI),
            _Any(
                _F(
                    "compromise, compromised, compromising, credential stuffing, secret leak, "
                    "key leak, leaked key, leaked token, leaked secret, leaked credentials"
                )
            ),
        ),
    ),
    (
        "security-posture",
        _or(
            _Pair(_WEAKEN, _SECURITY, 6, passive=_WEAK_SEC_PASSIVE),
            _Pair(_MAKE, _PUBLIC, 8, unless_after=_PUBLIC_CODE, unless_between=_PUBLIC_CODE),
            _Any(
                _F(
                    "public read, public-read, public write, public-write, publicly readable, "
                    "publicly writable, publicly accessible, public access, public acl, "
                    "public url, public link, public bucket, public repo, public repository, "
                    "public ip, public endpoint, public listing, public sharing, "
                    "anonymous access, anonymous read, anonymous write, anonymous user, "
                    "anonymous users, allusers, allauthenticatedusers, world readable, "
                    "world writable, world-readable, world-writable, world writeable, "
                    "0.0.0.0, ::/0, allow all, allow-all, grant all, sudoers, nopasswd, "
                    "setuid, suid, 777, 0777, 666, 0666, verify false, verify=false, "
                    "ssl verify false, sslverify false, insecure skip verify, "
                    "insecureskipverify, --insecure, --no-verify-ssl, "
                    "rejectunauthorized false, reject unauthorized false, "
                    "strict host key checking no, stricthostkeychecking no, "
                    "privileged true, --privileged, run as root, as root, "
                    "disable_auth, no auth, noauth, auth none, without authentication, "
                    "without auth, unauthenticated access, open to the internet, "
                    "anyone with the link, anyone on the internet, anyone can edit, "
                    "anyone can write, anyone can read, everyone can edit, publicly editable, "
                    "open to the world, internet-facing, internet facing"
                )
            ),
            _Pair(_OPEN, _WORLD, 6),
            _Pair(
                _F(_forms("let, allow, permit, invite")),
                _F(
                    "anyone, everybody, the public, "
                    "the internet, the world, strangers, "
                    "anonymous users, unauthenticated "
                    "users"
                ),
                2,
            ),
            _Then(_F("chmod"), _chmod_mode, 4),
            _Then(_F("--visibility"), lambda w: w in _W("public internal".split()), 2),
            _Any(
                _F(
                    "--visibility=public, --visibility=internal, --public, --access=public, "
                    "--acl=public-read, --acl=public-read-write"
                )
            ),
            _Then(_F("chown"), lambda w: w.startswith("root"), 4),
            _Pair(_GRANT, _PRIV, 6, unless_after=_PRIV_UI),
            _Pair(
                _F(_forms("remove, revoke, strip, drop, take away, downgrade, demote")),
                _PRIV,
                5,
                unless_after=_PRIV_UI,
            ),
        ),
    ),
    (
        "data-model",
        _or(
            _Any(
                _F(
                    "primary key, primary keys, pk type, backfill, backfills, backfilled, "
                    "backfilling, back fill, back-fill, data migration, data migrations, "
                    "schema migration, schema migrations, schema change, schema changes, "
                    "data model change, data model changes, data-model change, "
                    "datamodel change, breaking change, breaking changes, architecture change, "
                    "architectural change, architecture fork, architectural fork, "
                    "architecture shift, architectural shift, architecture decision, "
                    "architectural decision, architecture rewrite, database engine, "
                    "db engine, storage engine, database backend, database vendor, "
                    "database provider, column type, column types, data type change, "
                    "denormalise, denormalize, denormalising, denormalizing, reshard, "
                    "resharding, re-shard, re-sharding, sharding, shard key, partition key, "
                    "alter table, change the schema, schema rewrite, rewrite the schema, "
                    "id type, id format, key format, one-way migration, irreversible migration, "
                    "destructive migration, split the database, split the monolith, "
                    "merge the databases, database split, db split, database merge, "
                    "foreign key, foreign keys, cascade, cascading"
                )
            ),
            _Pair(
                _SWITCH,
                _DBS,
                8,
                passive=_F("to, with, for, replaced, swapped"),
                verb_unless_after=_MIGRATION_TOOLING,
            ),
            _Pair(
                _F(_nouns("id, identifier, key, primary key, user id, account id, order id")),
                _F(_ID_TYPE),
                6,
                passive=_F(_ID_TYPE),
            ),
            _Pair(_REWRITE_VALUES, _F(_ALL_QUALIFIER), 6),
            _Pair(_SCHEMA_VERB, _SCHEMA_OBJ, 6, unless_after=_DURABLE_UNLESS_AFTER),
            _Pair(
                _RUN,
                _MIGRATION,
                5,
                unless_after=_MIGRATION_TOOLING,
                passive=_F(
                    "run, ran, applied, executed, deployed, shipped, "
                    "squashed, edited, rewritten, reverted"
                ),
            ),
            _Pair(
                _MIGRATE, _MIGRATE_OBJ, 6, passive=_MIGRATE, verb_unless_after=_MIGRATION_TOOLING
            ),
        ),
    ),
    (
        "outbound-action",
        _or(
            _Any(
                _F(
                    _forms("refund"),
                    "mass email, mass emails, mass mail, mass mailing, "
                    "bulk email, bulk emails, bulk mail, bulk sms, bulk message, bulk messages, "
                    "mass sms, mass message, mass notification, blast email, email blast, "
                    "sms blast, push blast, newsletter, newsletters, email campaign, "
                    "marketing campaign, drip campaign, sms campaign, push campaign, "
                    "marketing email, marketing emails, announcement email, chargeback, "
                    "chargebacks, bulk refund, bulk cancel, bulk cancellation, mass cancel, "
                    "mass cancellation, bulk delete, mass delete, bulk deletion, mass deletion, "
                    "bulk payout, mass payout, bulk charge, bulk invite, mass invite, "
                    "bulk update, mass update, wire transfer, bank transfer, payout, payouts, "
                    "pay out, pays out, paying out, paid out, "
                    "domain transfer, transfer the domain, transfer our domain, "
                    "let the domain expire, let the domain lapse",
                )
            ),
            _Then(_SEND, lambda w: w in _QUANT, 6),
            _Pair(_SEND, _BROAD_AUDIENCE, 8),
            _Pair(_MONEY_VERB, _MONEY_OBJ, 6),
            _Pair(
                _CANCEL,
                _CANCELLABLE,
                6,
                passive=_F(
                    "cancelled, canceled, terminated, voided, ended, closed, suspended, revoked"
                ),
            ),
            _Pair(_DOMAIN_VERB, _DOMAIN, 6, passive=_DOMAIN_VERB, unless_after=_DOMAIN_CODE),
            _Pair(_DEAL_VERB, _DEAL, 6),
            _Pair(
                _SHARE_VERB,
                _SENSITIVE,
                6,
                unless_after=_CRED_UI
                | _DURABLE_UNLESS_AFTER
                | _W("calculator calculators page pages screen widget".split()),
            ),
            _Pair(_SHARE_VERB, _OUTSIDE, 8),
            _Then(_MASS_VERB, lambda w: w in _QUANT, 4),
            _Pair(_MASS_VERB, _BROAD_AUDIENCE, 6),
            _Any(_F("mass unsubscribe, bulk unsubscribe, unsubscribe everyone, unsubscribe all")),
            _Pair(_POST_VERB, _PUBLIC_PLACE, 7),
        ),
    ),
    ("destructive-verb", None),  # strong verbs: see _strong_free
    (
        "remove-durable",
        _or(
            _Pair(
                _REMOVE,
                _DURABLE,
                7,
                passive=_PASSIVE_GONE,
                unless_after=_DURABLE_UNLESS_AFTER,
                unless_before=_DURABLE_UNLESS_BEFORE,
                located=True,
                verb_unless_after=_NAMING_NEXT,
            ),
            _Referent(_REMOVE, _DURABLE),
        ),
    ),
)
RULE_NAMES = tuple(name for name, _ in RULES)

_SQL_OBJECTS = _W(
    "table tables database databases schema schemas index indexes column columns "
    "view views user users role roles owned collection collections keyspace "
    "materialized materialised constraint constraints trigger triggers function "
    "functions procedure procedures extension extensions sequence sequences type "
    "types tablespace partition partitions if".split()
)


def _strong_free(t):
    """A strong verb (delete, wipe, purge, ...) not aimed at a harmless object fires.

    Ambiguity decides one-way: "delete it?" or "wipe everything" fire; "delete the unused
    import" or "purge the CDN cache" do not. The object is in the first words after the
    verb (determiners skipped) or, when nothing follows, the words before it (passive:
    "can the stale comment be deleted?").
    """
    strong = t.at(_STRONG)
    if not strong:
        return False
    words, size = t.words, len(t.words)
    harmless = {i for i, _ in t.at(_HARMLESS)}
    for i, n in strong:
        j = i + n
        if (j < size and words[j] in _NAMING_NEXT) or (i and words[i - 1] in _NAMING_PREV):
            continue  # a name, not an act: "the deleted_at column", "soft delete"
        while j < size and words[j] in _DETERMINERS:
            j += 1
        if j < size and words[j] not in _BREAKS:
            ahead = range(j, min(size, j + 3))
        else:
            ahead = range(max(0, i - 5), i)
        if any(k in harmless for k in ahead):
            continue
        if any(w in _SANDBOX for w in words[i + n : i + n + 7]):
            continue
        return True
    return False


_strong_free.needs = _STRONG.id
RULES = tuple((name, _strong_free if test is None else test) for name, test in RULES)
# (rule name, test, family id the test cannot fire without), in rule order.
_CHECKS = tuple(
    (name, test, test.needs)
    for name, tests in RULES
    for test in (tests if isinstance(tests, tuple) else (tests,))
)

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


def _match_words(found):
    t = _Text(found)
    hits = t.hits
    if not hits:
        return None
    for name, test, needs in _CHECKS:
        if needs in hits and test(t):
            return name
    return None


# ---- shell command lines --------------------------------------------------------
# Read from the text itself: redirections, refspecs and paths lose their punctuation in
# the word list. Each check names the rule family it belongs to.

_SHELL_MARKS = (">", "/dev/null", "--", "+", " -delete", " -s", " :")
_CMD_BREAKS = ("&&", "||", ";", "|", "\n", "$(", "`")
_EMPTY_SOURCES = frozenset(
    (
        "",
        ":",
        "true",
        "echo",
        "echo -n",
        "echo ''",
        'echo ""',
        "echo -n ''",
        'echo -n ""',
        "printf ''",
        'printf ""',
        "printf",
        "cat /dev/null",
        "> ",
        "echo -e ''",
    )
)
_DURABLE_EXT = (
    ".db",
    ".sqlite",
    ".sqlite3",
    ".ibd",
    ".mdb",
    ".wal",
    ".parquet",
    ".sql",
    ".dump",
    ".bak",
)
_DURABLE_DIRS = ("/var/", "/etc/", "/srv/", "/opt/", "/data/", "/mnt/", "/home/", "~/")
_DELETE_FLAGS = ("--delete", "-delete", "--remove-source-files", "--del")
_DRY_RUN = frozenset(("--dry-run", "-n", "--list-only", "--dryrun", "-whatif", "--check"))


def _commands(text):
    """The text split into simple commands (word lists), at ``;``, ``&&``, ``|`` ..."""
    for mark in _CMD_BREAKS:
        if mark in text:
            text = text.replace(mark, "\n")
    return [line.split() for line in text.split("\n") if line.strip()]


def _redirect_truncates(cmd_text):
    """``> file`` (not ``>>``, not ``2>&1``, not into /dev/...) that empties or overwrites a
    file holding data: the source is empty, or the target is a data file or system path."""
    at = 0
    while True:
        i = cmd_text.find(">", at)
        if i < 0:
            return False
        at = i + 1
        if cmd_text[i + 1 : i + 2] in (">", "&", "=") or cmd_text[i - 1 : i] in (
            ">",
            "-",
            "=",
            "<",
        ):
            at = i + 2
            continue
        source = cmd_text[:i].strip()
        if source[-1:].isdigit() and source[-2:-1] in (" ", ""):
            source = source[:-1].strip()  # "1> file"
        target = cmd_text[i + 1 :].split()
        if not target:
            continue
        target = target[0].strip("'\"")
        if target.startswith("/dev/") or not any(c in target for c in "./~"):
            continue
        if target.rstrip("?.!,") != target and "/" not in target and target.count(".") < 2:
            continue  # the end of a sentence, not a path
        if source in _EMPTY_SOURCES or source.startswith("cat /dev/null"):
            return True
        if target.endswith(_DURABLE_EXT) or target.startswith(_DURABLE_DIRS) or "prod" in target:
            return True


def _shell(text):
    """The rule a shell command line in ``text`` breaks, or None."""
    if not any(m in text for m in _SHELL_MARKS):
        return None
    for cmd in _commands(text):
        if ">" in " ".join(cmd) and _redirect_truncates(" ".join(cmd)):
            return "filesystem-destructive"
        args = [a.strip("'\"") for a in cmd]
        if _DRY_RUN.intersection(args):
            continue
        names = args[:3]
        if "mv" in names and args[-1].rstrip("/") in ("/dev/null",):
            return "filesystem-destructive"
        if ("cp" in names or "install" in names) and "/dev/null" in args[1:3]:
            return "filesystem-destructive"
        if any(
            a.startswith(_DELETE_FLAGS) and not a.startswith("--delete-branch") for a in args[1:]
        ):
            return "filesystem-destructive"
        if "git" in names or "push" in names:
            sub = args[args.index("git") + 1 :] if "git" in args else args
            verb = sub[0] if sub else ""
            rest = sub[1:]
            if verb == "push" and any(a[:1] in "+:" and a[1:2].isalnum() for a in rest):
                return "history-rewrite"  # a forced refspec, or one that deletes a branch
            if verb == "restore" and any(
                a == "-s" or a.startswith(("--source", "-s")) and a[:3] != "-st" for a in rest
            ):
                return "history-rewrite"  # files overwritten from another revision
            if verb == "checkout" and "--" in rest:
                before = rest[: rest.index("--")]
                if any(a[:1] != "-" for a in before):
                    return "history-rewrite"
    return None


# ---- repaired spellings ----------------------------------------------------------
# Short words of ordinary prose: never half of a word split in two.
_SHORT_WORDS = _SKIP | _W(
    "to of in on at is it be we i you or and for with as by if so do no "
    "not can up out off now new old was are has had but our us me my "
    "he she they them one two all any get set put use run add fix see "
    "let may how why who what when yes ok its per via via vs etc "
    "s t d ll re ve m".split()
)
_DIGIT_LETTERS = {"0": "o", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "9": "g"}


def _known(word, mask=None):
    """Whether ``word`` is a single word of any family (or of the families in ``mask``)."""
    if _INDEX is None:
        _build()
    bits = _INDEX.shard(word)[0].get(word, 0)
    return bool(bits if mask is None else bits & mask)


def _verb_mask():
    return sum(
        1 << f.id
        for f in (_REMOVE, _STRONG, _TEARDOWN, _PASSIVE_GONE, _CRED_VERB, _WEAKEN, _SCHEMA_VERB)
    )


def _undigit(word):
    """``dr0p`` → ``drop``, ``w1pe`` → ``wipe``, ``de1ete`` → ``delete``: digits standing for
    letters inside a word, read back when the result is a rule word."""
    if not word[:1].isalpha() and not word[-1:].isalpha():
        return None
    if sum(c.isalpha() for c in word) < 2:
        return None
    base = "".join(_DIGIT_LETTERS.get(c, c) for c in word)
    for one in ("l", "i"):
        guess = base.replace("1", one)
        if guess.isalpha() and _known(guess):
            return guess
    return None


def _unstretch(word):
    """``drooop`` → ``drop``, ``deeeleete`` → ``delete``: letters held down, read back when
    the result is a rule word (a run of three or more; kept single or double)."""
    runs, k = [], 0
    while k < len(word):
        j = k
        while j < len(word) and word[j] == word[k]:
            j += 1
        runs.append((word[k], j - k))
        k = j
    for double in (False, True):
        guess = "".join(c * (min(n, 2) if double else 1) for c, n in runs)
        if _known(guess):
            return guess
    return None


def _repair(found, text=""):
    """The words with disguises undone: digits for letters, letters spaced or hyphenated
    apart ("d r o p", "dr-op", "del ete"), joined back when they make a rule verb.
    The same list when nothing changed."""
    verbs = None
    stretched = any(c * 3 in text for c in set(text) if c.isalpha())
    out, i, n, changed = [], 0, len(found), False
    while i < n:
        w = found[i]
        if (
            len(w) > 3
            and w.isalpha()
            and not stretched
            and (i + 1 == n or len(found[i + 1]) > 3 or found[i + 1] in _SHORT_WORDS)
        ):
            out.append(w)  # the common case: an ordinary word
            i += 1
            continue
        if w.isalnum() and not w.isalpha() and not w.isdigit():
            fixed = _undigit(w)
            if fixed:
                out.append(fixed)
                changed = True
                i += 1
                continue
        if stretched and len(w) >= 5 and w.isalpha() and not _known(w):
            fixed = _unstretch(w)
            if fixed:
                out.append(fixed)
                changed = True
                i += 1
                continue
        if len(w) == 1 and w.isalpha():
            j = i
            while j < n and len(found[j]) == 1 and found[j].isalpha():
                j += 1
            if j - i >= 3:
                joined = "".join(found[i:j])
                if _known(joined):
                    out.append(joined)
                    changed = True
                    i = j
                    continue
        if (
            i + 1 < n
            and w.isalpha()
            and found[i + 1].isalpha()
            and min(len(w), len(found[i + 1])) <= 3
            and w not in _SHORT_WORDS
            and found[i + 1] not in _SHORT_WORDS
        ):
            joined = w + found[i + 1]
            if verbs is None:
                verbs = _verb_mask()
            if _known(joined, verbs) and not (_known(w) and _known(found[i + 1])):
                out.append(joined)
                changed = True
                i += 2
                continue
        out.append(w)
        i += 1
    return out if changed else found


_CALL_VERBS = None


def _code_calls(text):
    """``db.users.drop()`` → ``drop db users``: a method call read verb first, so the rules
    see what it is called on. None when the text has no such call."""
    if "." not in text and "::" not in text:
        return None
    changed, out = False, []
    for chunk in text.split(" "):
        flat = chunk.replace("::", ".")
        if "." in flat.strip(".?!,;") and any(c.isalpha() for c in flat):
            parts = [p for p in flat.split(".") if p]
            if len(parts) >= 2:
                last = _tokens(parts[-1])
                if last and last[0].isalpha() and _known(last[0], _verb_mask()):
                    receiver = " ".join(w for p in parts[:-1] for w in _tokens(p))
                    out.append(" ".join([last[0], receiver] + last[1:]))
                    changed = True
                    continue
        out.append(chunk)
    return " ".join(out) if changed else None


def match(normalised):
    """The name of the first rule that fires on already normalised text, or None.

    The words are read as written; then, only if nothing fired, shell command lines,
    method calls and disguised spellings are read too.
    """
    found = _words(normalised)
    if not found:
        return None
    rule = _match_words(found)
    if rule:
        return rule
    rule = _shell(normalised)
    if rule:
        return rule
    calls = _code_calls(normalised)
    if calls:
        rule = _match_words(_words(calls))
        if rule:
            return rule
    fixed = _repair(found, normalised)
    if fixed is not found:
        return _match_words(fixed)
    return None


words = _words
