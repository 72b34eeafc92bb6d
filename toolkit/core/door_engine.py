"""The door rules of every language, read from data files: ``toolkit/data/doors/<lang>.toml``.

Each language file holds word families (lists of stems or words) and rules over them;
``languages.toml`` holds the function words of every language, with rules and without
(they say which language a text is in, and tell apart text no rules read). English's
rules are read word by word too, from ``en-words.toml`` (``door_reader``: verb families
crossed with object families, a word then a flag, shell lines, disguises). The files are
read by ``door_data`` (a small TOML reader; ``tomllib`` and ``re`` would cost a hook
process more than the rules a text needs), each when a text first needs it. The engine:

* folds the text (NFKC, case-folded, accents dropped, punctuation read as spaces, sentence
  ends kept) and finds every family entry in it. An entry matches, by the language's
  ``match``: ``prefix`` at the start of a word (Spanish ``borr`` in ``borrar``,
  ``borrado``); ``substring`` anywhere (German compounds, ``datenbank`` in
  ``produktionsdatenbank``; Chinese, Japanese, Korean, written without spaces); an
  entry starting ``=`` only as a whole word; one starting ``#`` only right after a
  count of a thousand or more ("120.000 usuarios": ``#usuari``, a language matched at
  word starts). Entries are folded as the text is.
* fires a rule when its families meet: ``any`` (one entry is enough; with ``unless``,
  one no word of that family qualifies, as a pair's objects: "función de reembolsos";
  with ``labels``, one that is no wording of a text shown to users, quoted right after
  the words setting it: "退款按钮的文案改成「申请退款」", ``_unlabelled``; a pair's verbs
  and objects so too),
  ``pair`` (a verb and an object within ``window`` words, or characters for a language
  written without spaces, in either order: verbs come last in German subordinate clauses,
  Japanese and Korean); with ``also``, only when a word of that family is in the text too
  (German "bauen … ab"). A pair's ``weak`` objects (a file, a branch) fire only when no
  ``unless`` word (an empty line, a test, a comment) is in the sentences the pair spans;
  one right after a word of the language's ``without`` family qualifies nothing ("на
  прод без тестов": to production without tests), and a verb that is a word of a
  harmless phrase is none ("méthodes publiques": public methods). A
  sentence end (punctuation, a line end, a paragraph or record separator) never splits
  a verb from its object within the window: put between them, it would hide a danger.
  A harmless word qualifies only an object of its own sentence ("¿Despliego en
  producción? En local funcionó." is one-way); a dot file's leading dot (".env") is no
  sentence end.
  With ``pronouns`` or ``clitics``, a pronoun by the verb stands for an object named
  in an earlier sentence ("… le cluster de production. Je le supprime ?"); with
  ``refers``, a verb aimed at a pronoun or alone in a short sentence ("¿Lo tiro?",
  "Derrubo?") takes the object named before it, a weak one too (``_referred``). With
  ``labels``, a verb right after a word of that family is a button's text, no verb
  ("el botón 'Pagar ahora'"). A camelCase name ending in a code word ("CobrancasService")
  and a source file's name ("pagos.py") are no word of any language read at word
  starts (``_mark_names``).
* says when a text cannot be read (``unreadable``): mostly letters of scripts or
  alphabets no rules cover, or function words of a language without rules.
* reads English word by word first (``word_match``); ``en.toml`` adds English rules in
  the folded form. Encodings that hide words are undone before (``door_decode``).
* pairs a verb of one language with an object of another (``match`` with ``known``,
  ``_mixed``): "borrar the users table" reads as language ``es+en``.

The data files' hash is ``doors.rules_version`` (with the modules that apply them).
"""

from toolkit.core.door_data import load, record_source, word_data
from toolkit.core.door_reader import WordRules

record_source(__file__)  # the file as read: ``doors.rules_version`` names it

__all__ = [
    "INDEX_AFTER",
    "family_names",
    "family_spans",
    "fold",
    "fold_word",
    "folded_entry",
    "gate_keys",
    "foreign_words",
    "ascii_runs",
    "code_names",
    "quiets_english",
    "match",
    "rule_names",
    "unreadable",
    "written_without_spaces",
    "scripts",
    "word_match",
    "word_rules",
]

_SPACELESS = frozenset(("zh", "ja", "ko"))
_LATIN = ["en", "es", "fr", "de", "pt", "it"]
_ROMANCE = frozenset(("es", "fr", "pt", "it"))
# Korean is read letter by letter (jamo, Unicode's canonical decomposition of each
# syllable), both the text and the entries: a verb stem then matches every ending that
# adds a final consonant to its last syllable (지우 in 지울, 두 in 둘까요). Windows are
# counted in syllables, about three letters each.
_JAMO = "ko"
_BREAK = "\u2029"  # marks a sentence end while folding (never in folded words)
# Sentence ends: punctuation, line ends, and the separators ``str.split`` reads as spaces
# (line and paragraph separators, the file/group/record separators, NEL).
_BREAKS = frozenset(
    ".?!;:\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\u3002\uff1f\uff01\uff1b\uff1a\u061f\u0964"
)

# A code name written in camelCase that ends in a code word ("CobrancasService",
# "borrarUsuariosHelper") names a class, not an action: marked, no entry matches it at
# a word start.
_NAME = "\ue000"
_CODE_ENDS = frozenset(
    "service services controller controllers repository repo manager handler helper "
    "helpers model models view views component factory provider module utils util spec "
    "test tests dto dao impl job worker client api page screen form button modal".split()
)
_ENGLISH_KEYS = ("possessive", "toward", "quiet_english", "quiet_by", "quiet_unless")
_SOURCE_FILES = frozenset(
    "py js mjs ts tsx jsx go rb java kt swift rs c h cpp hpp cs php vue svelte css scss "
    "html md".split()
)
_COMMAS = frozenset(",\u3001\uff0c\uff64")  # , 、 ， ､ (NFKC makes ， a ,)
_MONEY_SIGNS = frozenset("$€£¥₽₩")  # words of their own: "40.000 €", "$5k"
_unicodedata = None
_loaded = {}


def _ud():
    global _unicodedata
    if _unicodedata is None:
        import unicodedata

        _unicodedata = unicodedata
    return _unicodedata


def fold(text):
    """The text the data rules read: NFKC, case-folded, accents dropped, letters and digits
    kept, everything else a space; words separated by one space, with a space at both
    ends (so ``" borr"`` finds a word start)."""
    return _folded(text)[0]


_WORDS_KEPT = 50_000  # words a process keeps folded (``fold_word``)
_folded_words = {}


def fold_word(word):
    """``fold(word).strip()``, kept for the words folded so far (an import folds the same
    words again and again); forgotten when more than ``_WORDS_KEPT`` are kept."""
    folded = _folded_words.get(word)
    if folded is None:
        if len(_folded_words) >= _WORDS_KEPT:
            _folded_words.clear()
        folded = _folded_words[word] = fold(word).strip()
    return folded


def _folded(text, nfd=False):
    """``(fold(text), ends)``: ``ends`` the positions in it where a sentence starts after
    a sentence end (``_BREAKS``). With ``nfd``, the folded text in canonical
    decomposition (Korean is read letter by letter), a comma kept as a word of its own:
    Korean spaces its words, so only the comma tells "테스트, 운영 DB" (two things) from
    "테스트 DB" (one)."""
    text = _mark_names(text)
    if text.isascii():
        low = text.lower()
    else:
        ud = _ud()
        low = ud.normalize("NFD", ud.normalize("NFKC", text).casefold())
        low = ud.normalize("NFC", "".join(c for c in low if ud.category(c) != "Mn"))
    out = []
    for i, c in enumerate(low):
        if c.isalnum():
            out.append(c)
        elif c in _MONEY_SIGNS:
            out.append(" " + c + " ")
        elif c == _NAME:
            out.append(c)
        elif c == "." and 0 < i < len(low) - 1 and low[i - 1].isalnum() and low[i + 1].isalnum():
            out.append(c)  # inside a name: "main.go", "v1.2", "credentials.json"
        elif c == "." and i < len(low) - 1 and low[i + 1].isalnum():
            out.append(" ")  # a dot file's name (".env", ".DS_Store"): no sentence end
        elif c in _BREAKS:
            out.append(" " + _BREAK + " ")
        elif nfd and c in _COMMAS:
            out.append(" , ")
        else:
            out.append(" ")
    marked = "".join(out)
    if nfd:
        marked = _ud().normalize("NFD", marked)
    # Split at spaces only: ``str.split()`` would drop the breaks as white space.
    words, ends, at = [], [], 1
    for word in marked.split(" "):
        if not word:
            continue
        if word == _BREAK:
            if not ends or ends[-1] != at:
                ends.append(at)
            continue
        words.append(word)
        at += len(word) + 1
    return " " + " ".join(words) + " ", ends


def _mark_names(text):
    """``text`` with ``_NAME`` before each camelCase code name (``_CODE_ENDS``) and each
    source file's name (``_SOURCE_FILES``: "pagos.py", not "clientes.db")."""
    if "." not in text and (text.islower() or text.isupper()):
        return text
    parts = text.split(" ")
    for k, part in enumerate(parts):
        if "." not in part and (part.islower() or part[1:].islower() or part.isupper()):
            continue  # a plain word: nothing to mark (most words)
        parts[k] = _marked_part(part)
    return " ".join(parts)


def _marked_part(part):
    out, word = [], []
    for c in part + " ":
        if c.isalnum() or (c == "." and word):
            word.append(c)
            continue
        if word:
            name = "".join(word).rstrip(".")  # a sentence's full stop is no part of it
            humps = [i for i in range(1, len(name)) if name[i].isupper() and name[i - 1].islower()]
            if (humps and name[humps[-1] :].lower() in _CODE_ENDS) or (
                "." in name and name.rpartition(".")[2].lower() in _SOURCE_FILES
            ):
                out.append(_NAME)
            out.extend(word)
            word = []
        out.append(c)
    return "".join(out[:-1])


def folded_entry(entry):
    """A family entry as the data files hold it: folded as text is (``fold``), with a
    leading ``=`` (a whole word) or ``#`` (a word after a count) kept. Entries are stored
    folded, so loading a language costs no Unicode work (a test keeps every file so)."""
    mark = entry[:1] if entry[:1] in ("=", "#") else ""
    return mark + fold(entry[len(mark) :]).strip()


def _entry(entry):
    return (" " + entry[1:] + " ") if entry[:1] == "=" else entry


# A process that reads many texts (an import) finds the families' entries through an
# index of each language's entries by their first letters (``_Language.index``), built
# once the language has read this many texts; a hook, which reads a few, never pays for
# building it. Both ways find the same spans in the same order.
INDEX_AFTER = 24
_GRAM = 5  # letters of an entry's start the index holds (all of a shorter entry)


class _Language:
    """One language's families (folded entries) and rules, as read from its file."""

    __slots__ = (
        "code",
        "spaceless",
        "prefix",
        "families",
        "rules",
        "english",
        "reads",
        "_seen",
        "_keys",
        "_index",
    )

    def __init__(self, code, data):
        self.code = code
        self.spaceless = code in _SPACELESS
        self.prefix = data.get("match", "prefix") == "prefix"
        self.families = data.get("families", {})  # lists, made tuples on first use
        self.rules = data.get("rules", [])
        # How the English rules read text in this language (``foreign_words``,
        # ``quiets_english``).
        self.english = {k: data[k] for k in _ENGLISH_KEYS if k in data}
        self.reads = 0  # texts read so far (``INDEX_AFTER``)
        self._seen = (None, {}, None)  # the last text read, what was found, its candidates
        self._keys = {}  # family -> its entries as find_all looks for them
        self._index = None

    def entries(self, family):
        entries = self.families.get(family, ())
        if type(entries) is list:
            if self.code == _JAMO:  # read letter by letter
                entries = [_ud().normalize("NFD", e) for e in entries]
            # In file order, deduplicated: ``_verbs_of`` takes a family's first verb.
            entries = self.families[family] = tuple(dict.fromkeys(_entry(e) for e in entries if e))
        return entries

    def find(self, text, family):
        """``[(start, end)]`` of the family's entries in folded ``text`` (remembered for
        the last text: rules share families)."""
        seen_text, seen, candidates = self._seen
        if seen_text is not text:
            seen, candidates = {}, None
            self.reads += 1
            if self.reads > INDEX_AFTER:
                candidates = self.candidates(text)
            self._seen = (text, seen, candidates)
        found = seen.get(family)
        if found is None:
            if candidates is None:
                found = self.find_all(text, self.keys(family))
            else:
                found = self.find_some(text, family, candidates.get(family))
            seen[family] = found
        return found

    def keys(self, family):
        """The family's entries as ``(what to find, where the match starts in it, the
        entry's further words)``, worked out once."""
        keys = self._keys.get(family)
        if keys is None:
            keys = []
            for entry in self.entries(family):
                if entry[0] == "#" and self.prefix and not self.spaceless:
                    keys.append((" " + entry[1:], 1, _COUNTED))
                elif entry[0] == " ":  # a whole word (or words)
                    keys.append((entry, 1, ()))
                elif self.prefix and not self.spaceless:
                    # each word of the entry starts a word of the text, in order
                    first, *rest = entry.split(" ")
                    keys.append((" " + first, 1, tuple(rest)))
                else:
                    keys.append((entry, 0, ()))
            keys = self._keys[family] = tuple(keys)
        return keys

    def index(self):
        """``({start: ((family, key number), ...)}, lengths at a word start, lengths
        anywhere)``: every key of every family by its first ``_GRAM`` letters
        (``keys``). A key that starts with a space (a word start) can
        only be found where the text has a space, so its start is looked up there only."""
        index = self._index
        if index is None:
            starts, anchored, anywhere = {}, set(), set()
            for family in sorted(self.families):
                for number, (key, _lead, _rest) in enumerate(self.keys(family)):
                    start = key[:_GRAM]
                    starts.setdefault(start, []).append((family, number))
                    (anchored if start[:1] == " " else anywhere).add(len(start))
            index = self._index = (
                {start: tuple(found) for start, found in starts.items()},
                tuple(sorted(anchored)),
                tuple(sorted(anywhere)),
            )
        return index

    def candidates(self, text):
        """``{family: [numbers of the keys whose start is in folded text]}``: the keys
        that may be found in it (``index``); the others are not there."""
        starts, anchored, anywhere = self.index()
        held = set()
        if anchored:
            at = text.find(" ")
            while at >= 0:
                for n in anchored:
                    held.add(text[at : at + n])
                at = text.find(" ", at + 1)
        for n in anywhere:
            held.update(text[i : i + n] for i in range(len(text) - n + 1))
        out = {}
        for start in held.intersection(starts):
            for family, number in starts[start]:
                numbers = out.get(family)
                if numbers is None:
                    out[family] = [number]
                else:
                    numbers.append(number)
        return out

    def find_some(self, text, family, numbers):
        """``find_all`` over the family's keys numbered ``numbers`` only, in key order."""
        if not numbers:
            return []
        keys = self.keys(family)
        if len(numbers) > 1:
            numbers.sort()
        return self.find_all(text, [keys[n] for n in numbers])

    @staticmethod
    def find_all(text, keys):
        """``[(start, end)]`` of the ``keys`` (``keys``) in folded ``text``, key by key."""
        found = []
        for key, lead, rest in keys:
            if rest is _COUNTED:
                found += _after_count(text, key)
                continue
            at = text.find(key)
            while at >= 0:
                end = at + len(key)
                for stem in rest:
                    end = text.find(" ", end)  # the end of the word matched so far
                    if not text.startswith(stem, end + 1):
                        end = -1
                        break
                    end += 1 + len(stem)
                if end >= 0:
                    found.append((at + lead, end))
                at = text.find(key, at + 1)
        return found


# An entry ``#word``: the word (a prefix, as entries are) right after a count of at least
# ``_MANY``, digits grouped by dots or not, or a ``k``: "120.000 usuarios", "5000
# clientes", "12k utenti" (counts grouped by commas or spaces fold to words ending
# ``000``, which entries name as they are: "000 usuarios").
_COUNTED = ("#",)
_MANY = 1000


def _after_count(text, key):
    """``[(start, end)]`` of ``key`` (" word") in folded ``text`` where the word before it
    is a count of at least ``_MANY``."""
    found = []
    at = text.find(key)
    while at >= 0:
        count = text[text.rfind(" ", 0, at) + 1 : at].replace(".", "")
        if count.endswith("k") and count[:-1].isdigit() and count[:-1] != "0":
            found.append((at + 1, at + len(key)))
        elif count.isdigit() and int(count) >= _MANY:
            found.append((at + 1, at + len(key)))
        at = text.find(key, at + 1)
    return found


def _language(code):
    lang = _loaded.get(code)
    if lang is None:
        lang = _loaded[code] = _Language(code, load(f"{code}.toml"))
    return lang


def family_names(code):
    """The names of ``code``'s word families."""
    return sorted(_language(code).families)


def family_spans(code, folded, indexed):
    """``{family: [(start, end)]}``: where each of ``code``'s families is in folded text
    (``fold``; Korean's in canonical decomposition), found through the language's index
    (``indexed``) or entry by entry. Both ways find the same spans in the same order (a
    test compares them)."""
    lang = _language(code)
    if not indexed:
        return {f: lang.find_all(folded, lang.keys(f)) for f in sorted(lang.families)}
    some = lang.candidates(folded)
    return {f: lang.find_some(folded, f, some.get(f)) for f in sorted(lang.families)}


def word_rules(code="en"):
    """``code``'s word-by-word rules (``door_reader.WordRules``), read on first use."""
    rules = _loaded.get(code + "-words")
    if rules is None:
        rules = _loaded[code + "-words"] = WordRules(*word_data(f"{code}-words.toml"))
    return rules


def word_match(normalised, code="en"):
    """The rule of ``code``'s word-by-word rules (``door_reader``) that fires first on
    text normalised by ``doors.normalise``, or None."""
    return word_rules(code).match(normalised)


def rule_names(code="en"):
    """The names of ``code``'s word-by-word rules, in order."""
    return word_rules(code).rule_names


def _stopwords():
    """``(ruled, other, gates)`` from ``languages.toml``: ``{language: frozenset of
    function words}`` for the languages with rules and for the others, and each gated
    language's gate keys (``gate_keys``)."""
    data = _loaded.get("*")
    if data is None:
        raw = load("languages.toml")
        data = _loaded["*"] = tuple(
            {code: frozenset(words) for code, words in raw[part].items()}
            for part in ("ruled", "other")
        ) + (raw.get("gates", {}),)
    return data


# ---- scripts ----------------------------------------------------------------------

# Letters beyond ASCII in the alphabets of the Latin languages with rules.
_LATIN_RULED = frozenset("áéíóúñüàâçèêëîïôùûÿœæäößãõìòºª")
_RUSSIAN = frozenset("абвгдеёжзийклмнопрстуфхцчшщъыьэюя")


def _script(c):
    """ "latin", "cyrillic", "han", "kana", "hangul" for a letter of a script with rules,
    "other" for any other letter (including a Latin or Cyrillic letter no ruled language
    uses: Polish ł, Turkish ı, Ukrainian ї)."""
    o = ord(c)
    if o < 128:
        return "latin"
    low = c.lower()
    if low in _LATIN_RULED:
        return "latin"
    if low in _RUSSIAN:
        return "cyrillic"
    if 0x3040 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF or 0xFF66 <= o <= 0xFF9F:
        return "kana"
    if 0xAC00 <= o <= 0xD7AF or 0x1100 <= o <= 0x11FF or 0x3130 <= o <= 0x318F:
        return "hangul"
    if 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0xF900 <= o <= 0xFAFF or o >= 0x20000:
        return "han"
    return "other"


def scripts(text):
    """``{script: letters}`` over the letters of ``text`` (NFC, so an accent written apart
    counts with its letter)."""
    if not text.isascii():
        text = _ud().normalize("NFC", text)
    counts = {}
    for c in text:
        if c.isalpha():
            s = "latin" if c.isascii() else _script(c)
            counts[s] = counts.get(s, 0) + 1
    return counts


def _candidates(counts):
    """The languages worth reading for text with these scripts."""
    out = []
    if counts.get("latin"):
        out += _LATIN
    if counts.get("cyrillic"):
        out.append("ru")
    if counts.get("han") or counts.get("kana"):
        out += ["zh", "ja"] if counts.get("han", 0) > counts.get("kana", 0) else ["ja", "zh"]
    if counts.get("hangul"):
        out.append("ko")
    return out


# ---- rules ------------------------------------------------------------------------


def _sentence_of(ends):
    """A function giving the sentence number of a position in folded text whose
    sentences start at ``ends`` (``_folded``)."""
    if not ends:
        return _one_sentence

    def sentence(pos):
        n = 0
        for end in ends:
            if end <= pos:
                n += 1
            else:
                break
        return n

    return sentence


def _near(lang, text, a, b, window):
    """Whether spans ``a`` and ``b`` are within ``window`` words (characters, for a
    language written without spaces) of each other."""
    lo, hi = (a[1], b[0]) if a[0] <= b[0] else (b[1], a[0])
    if hi <= lo:
        return True
    if lang.spaceless:
        return hi - lo <= window
    return text.count(" ", lo, hi) <= window


def _adjacent(lang, text, obj, marks, verbs=()):
    """Whether a harmless word qualifies the object: right before it, or just after
    ("test data", "tabla temporal", "base de datos de prueba", "テストデータ"). Verb words
    between them do not count, nor an article after such a verb: a label names a UI
    element ("кнопка «Удалить аккаунт»", "bouton « Supprimer le compte »",
    "「アカウント削除」ボタン")."""
    for m in marks:
        if m[0] <= obj[0] and obj[1] <= m[1] and m != obj:
            return True  # the harmless words hold the object: "message d'erreur"
        if m[1] <= obj[0]:
            skip = verbs
            if any(m[1] <= v[0] and v[1] <= obj[0] for v in verbs):
                skip = [*verbs, *lang.find(text, "clitic")]  # "bouton « Supprimer le compte »"
            near = _gap(lang, text, m[1], obj[0], skip) <= 1
            if near and not _enumerated(lang, text, m[1], obj[0], False):
                return True
        elif m[0] >= obj[1]:
            gap = _gap(lang, text, obj[1], m[0], verbs)
            # A verb right by the object, then one mark of punctuation: a label.
            label = gap <= 1 and any(
                0 <= obj[0] - v[1] <= 1 or 0 <= v[0] - obj[1] <= 1 for v in verbs
            )
            near = gap <= (2 if lang.spaceless else 3)
            if near and not _enumerated(lang, text, obj[1], m[0], label):
                return True
    return False


# Chinese and Japanese words that list nouns: "测试库和生产库", "テスト用DBと本番DB".
_AND = frozenset("和与與及跟同或并並兼とや")


def _enumerated(lang, text, lo, hi, label):
    """Whether, in Chinese or Japanese, what lies between a harmless word and an object
    lists them rather than joins them: a conjunction ("测试库和生产库"), or punctuation
    (read as a space) between two letters of the script ("生产库，测试库"), unless it
    closes a ``label`` ("「删除账号」按钮"). A space next to a Latin word is only a space
    ("mock 数据"). Korean writes its conjunctions on the noun and spaces its words
    (``_folded`` keeps its commas)."""
    if not lang.spaceless or lang.code == _JAMO:
        return False
    for at in range(lo, hi):
        c = text[at]
        if c in _AND:
            return True
        if c == " " and not (label or text[at - 1].isascii() or text[at + 1].isascii()):
            return True
    return False


# What joins two nouns into one, written without spaces: nothing, or a possessive
# ("テスト用DBのデータ", "测试库的数据", "테스트 DB의 데이터"; Korean read letter by letter).
_JOINS = frozenset(("", "の", "的", "\u110b\u1174"))


def _chained(text, objects, quiet, marks, spaced=False, live=()):
    """``quiet`` with every object a quiet one qualifies: right after it, joined by
    ``_JOINS`` ("テスト用のS3バケット": the test bucket, not a second object). A
    conjunction, a comma or a space between two nouns keeps the second one apart
    ("テスト用DBと本番DB"); an object inside a harmless word qualifies nothing (ログ in
    ログイン is no noun before インデックス), and a shorter object inside a quiet one is
    read on its own (本番 in "本番DB、テスト用DB"). With ``spaced`` (Korean, which spaces
    the nouns of a compound and lists with a comma or a particle), one space joins too
    ("테스트 DB 데이터"), except before a ``live`` object (production: "테스트 DB 운영
    데이터" names the production data)."""
    joins = _JOINS | {" "} if spaced else _JOINS
    inside = {o for o in quiet if any(m[0] <= o[0] and o[1] <= m[1] for m in marks)}
    quiet = set(quiet)
    grew = True
    while grew:
        grew = False
        for o in objects:
            if o in quiet:
                continue
            for q in quiet - inside:
                if q[1] <= o[0] and text[q[1] : o[0]] in joins:
                    if text[q[1] : o[0]] == " " and any(o[0] <= p[0] < o[1] for p in live):
                        continue
                    quiet.add(o)
                    grew = True
                    break
    return quiet


def _unlabelled(lang, text, rule, verbs):
    """The verbs that are not a label's text: a verb right after a word of ``labels``
    names a button ("el botón 'Pagar ahora'", "il pulsante Paga")."""
    names = [s for fam in _names(rule["labels"]) for s in lang.find(text, fam)]
    return [
        v
        for v in verbs
        if not any(n[1] <= v[0] and _gap(lang, text, n[1], v[0], ()) <= 1 for n in names)
    ]


def _gap(lang, text, lo, hi, verbs):
    """Characters (written without spaces) or words between ``lo`` and ``hi``, verbs
    left out."""
    inside = [v for v in verbs if lo <= v[0] and v[1] <= hi]
    if lang.spaceless:
        return hi - lo - sum(v[1] - v[0] for v in inside)
    return text.count(" ", lo, hi) - len(inside)


def _marks(lang, text, unless):
    """Where the ``unless`` families' words are in folded ``text``, but for one right
    after a word of the language's ``without`` family: "на прод без тестов" (to
    production without tests) names no test to quiet the object."""
    marks = [s for fam in _names(unless) for s in lang.find(text, fam)]
    negations = lang.find(text, "without")
    if negations:
        marks = [m for m in marks if not any(0 <= m[0] - n[1] <= 1 for n in negations)]
    return marks


def _fires(lang, text, rule, sentence):
    """The rule's verdict on folded text: True when it fires."""
    if "any" in rule:
        if "unless" not in rule:
            return any(lang.find(text, fam) for fam in _names(rule["any"]))
        # With ``unless``, an entry those words qualify does not count ("a test of refunds").
        found = [s for fam in _names(rule["any"]) for s in lang.find(text, fam)]
        marks = _marks(lang, text, rule["unless"])
        if "labels" in rule:  # words shown to users: "退款按钮的文案改成「申请退款」"
            found = _unlabelled(lang, text, rule, found)
        return any(not _adjacent(lang, text, s, marks) for s in found)
    if "also" in rule and not any(lang.find(text, fam) for fam in _names(rule["also"])):
        return False  # German separable verbs: "bauen … ab" needs its "ab"
    verbs = [s for fam in _names(rule["verbs"]) for s in lang.find(text, fam)]
    if verbs and "labels" in rule:
        verbs = _unlabelled(lang, text, rule, verbs)
    if not verbs:
        return False
    strong = [s for fam in _names(rule.get("objects", ())) for s in lang.find(text, fam)]
    weak = [s for fam in _names(rule.get("weak", ())) for s in lang.find(text, fam)]
    if "labels" in rule:
        strong = _unlabelled(lang, text, rule, strong)
    if not strong and not weak:
        return False
    marks = _marks(lang, text, rule.get("unless", "harmless"))
    # A word read as the verb qualifies no object (Italian "avviso": warn, a warning).
    marks = [m for m in marks if not any(v[0] <= m[0] and m[1] <= v[1] for v in verbs)]
    # A verb that is a word of a harmless phrase is none ("méthodes publiques": public
    # methods). Not in a language written without spaces, where a phrase's words are
    # not its letters (Korean 한 줄, a line, holds 주, give).
    phrases = [] if lang.spaceless else [m for m in marks if " " in text[m[0] : m[1]].strip()]
    verbs = [v for v in verbs if not any(m[0] <= v[0] < m[1] for m in phrases)]
    if not verbs:
        return False
    if marks:
        # A harmless word in another sentence qualifies no object: "¿Despliego en
        # producción? En local funcionó."
        quiet = {
            o
            for o in strong + weak
            if _adjacent(
                lang, text, o, [m for m in marks if sentence(m[0]) == sentence(o[0])], verbs
            )
        }
        if quiet and lang.spaceless:
            jamo = lang.code == _JAMO
            live = lang.find(text, "prod") if jamo else ()
            quiet = _chained(text, strong + weak, quiet, marks, jamo, live)
        strong = [o for o in strong if o not in quiet]
        weak = [o for o in weak if o not in quiet]
    window = rule.get("window", 30 if lang.spaceless else 8)
    if lang.code == _JAMO:
        window *= 3
    # A harmless word quiets a weak object only in the sentences from the verb's to the
    # object's: one elsewhere hides nothing.
    quiet = {sentence(m[0]) for m in marks}
    if rule.get("across"):  # anywhere in the text: "Buy it? It is $90,000."
        window = len(text)
    # One word is not both verb and object ("pagamento": Italian ``paga``); written
    # without spaces, one compound may be both ("退款", refund). A verb and its object
    # within the window fire across a sentence end: a break put between them (a full
    # stop, a paragraph separator) must not split them.
    apart = _differ if lang.spaceless else _apart
    for v in verbs:
        for o in strong:
            if apart(o, v) and _near(lang, text, v, o, window):
                return True
        sv = sentence(v[0])
        for o in weak:
            so = sentence(o[0])
            if any(min(sv, so) <= q <= max(sv, so) for q in quiet):
                continue  # a harmless word in the sentences the pair spans
            if apart(o, v) and _near(lang, text, v, o, window):
                return True
    if "refers" in rule and _referred(lang, text, rule, verbs, strong, weak, sentence, quiet):
        return True
    if strong and ("pronouns" in rule or "clitics" in rule):
        return _pronoun_object(lang, text, rule, verbs, strong, sentence)
    return False


# How far into the wording after words setting a text shown to users (``labels``:
# "文案改成", "文言を", "문구를") a word of it starts, in characters: "文案改成 申请退款" (the
# quote mark read as a space, then the wording).
_LABEL_REACH = 4


def _unlabelled(lang, text, rule, spans):
    """``spans`` less those the words of the rule's ``labels`` family (a label's wording
    set to: "文案改成", "文言を", "문구를") name as wording shown to users: in the word right
    after them, at most ``_LABEL_REACH`` characters into it ("把按钮的文案改成“申请退款”",
    "ボタンの文言を「返金を申請」に", "버튼 문구를 "환불 신청"으로"). Only the quote mark (a
    space, folded) may start it: "文案改成后退款给所有人" is an action after the label, and
    so is any word further on; a label word alone ("标题：给所有客户退款", "文案写好了，
    退款给所有客户") sets no wording."""
    labels = [s for fam in _names(rule["labels"]) for s in lang.find(text, fam)]
    if not labels:
        return spans

    def wording(m, s):
        gap = text[m[1] : s[0]]
        if lang.code == _JAMO:
            return gap == " "  # the next word: Korean spaces its words
        return 0 < len(gap) <= 1 + _LABEL_REACH and gap[0] == " " and " " not in gap[1:]

    return [s for s in spans if not any(wording(m, s) for m in labels)]


def _pronoun_object(lang, text, rule, verbs, strong, sentence):
    """Whether a pronoun by a verb stands for a durable object named in an earlier
    sentence: "Le cluster de production ne sert plus. Je le supprime ?", "Der
    Backup-Bucket kostet viel. Soll ich ihn leeren?", "Кластер на проде не нужен. Снести
    его?". ``pronouns``: words read within ``pronoun_window`` words (3 unless told) of
    the verb, on either side, in its sentence; ``clitics``: words that are articles too
    (French "le", "la", "les"), read only right before the verb or as the first word of
    a verb entry ("la vide"). A pronoun after sentences naming no such object, or only a
    weak or harmless one ("La branche locale est fusionnée. Je la supprime ?"), stands
    for nothing."""
    first = min(sentence(o[0]) for o in strong)
    near = rule.get("pronoun_window", 3)
    for kind in ("pronouns", "clitics"):
        for p in (s for fam in _names(rule.get(kind, ())) for s in lang.find(text, fam)):
            sp = sentence(p[0])
            if sp <= first:
                continue
            for v in verbs:
                if sentence(v[0]) != sp:
                    continue
                if kind == "pronouns":
                    if _apart(p, v) and _near(lang, text, v, p, near):
                        return True
                elif p[0] == v[0] or (p[1] <= v[0] and not text[p[1] : v[0]].strip()):
                    return True
    return False


def _referred(lang, text, rule, verbs, strong, weak, sentence, quiet):
    """Whether a verb aimed at a pronoun ("¿Lo tiro?", "Desligo ele?", "Lo spengo?"), or
    standing in a sentence of at most three words ("Derrubo?"), has its object named
    before it, however far back: the object of the verb is the one already named.
    Harmless words still quiet the object as in a pair."""
    pronouns = [s for fam in _names(rule["refers"]) for s in lang.find(text, fam)]
    for v in verbs:
        sv = sentence(v[0])
        aimed = any(_apart(p, v) and _near(lang, text, p, v, 1) for p in pronouns)
        if not aimed and _sentence_words(text, sentence, sv, v[0]) > 3:
            continue
        if any(o[1] <= v[0] for o in strong):
            return True
        for o in weak:
            so = sentence(o[0])
            if o[1] <= v[0] and not any(so <= q <= sv for q in quiet):
                return True
    return False


def _sentence_words(text, sentence, n, at, most=3):
    """How many words of folded ``text`` around position ``at`` are in sentence ``n``,
    counted up to ``most + 1``."""
    count, lo, hi = 0, at, at
    for _ in range(most + 1):  # the word at ``at`` and the ones before it
        if lo <= 0 or sentence(lo) != n:
            break
        count += 1
        lo = text.rfind(" ", 0, lo - 1) + 1
    for _ in range(most + 1 - count):  # the ones after it
        hi = text.find(" ", hi) + 1
        if hi <= 0 or hi >= len(text) or sentence(hi) != n:
            break
        count += 1
    return count


def _apart(a, b):
    """Whether two spans share no letter."""
    return a[1] <= b[0] or b[1] <= a[0]


def _differ(a, b):
    return a != b


def _one_sentence(pos):
    return 0


def _names(value):
    return (value,) if isinstance(value, str) else value


def match(text, counts=None, known=None):
    """``(language, rule)`` of the first data rule that fires on ``text``, or None.

    ``text`` is as written (decoded, not yet folded); ``counts`` its ``scripts``. With
    ``known`` (``_mixed``), a verb of one language with an object of another too:
    ``("es+en", rule)``.
    """
    if counts is None:
        counts = scripts(text)
    folded, ends = _folded(text)
    sentence = _sentence_of(ends)
    words = folded.split()
    stop = _stopwords()[0]
    codes = _candidates(counts)
    hits = {code: sum(1 for w in words if w in stop.get(code, ())) for code in codes}
    if "en" in hits and text.isascii():
        codes = [c for c in codes if c not in _LATIN[1:] or _worth_reading(c, words, stop)]
    # The language whose function words the text uses most is read first (it is named).
    # A Latin language of another branch none of whose function words there is its own
    # is not read on its own ("Soll ich die temporäre Tabelle in der lokalen
    # Testdatenbank droppen?" is German, not Italian with "in"): a verb of it beside an
    # object of the text's language is still read as a mix (``_mixed``).
    own = sorted(codes, key=lambda code: -hits[code])
    if own and own[0] in _LATIN[1:] and hits[own[0]] >= 3:
        own = [c for c in own if c == own[0] or not _borrowed(c, own[0], words, stop)]
    for code in own:
        lang = _language(code)
        read, where = folded, sentence
        if code == _JAMO:
            read, jamo_ends = _folded(text, nfd=True)
            where = _sentence_of(jamo_ends)
        for rule in lang.rules:
            if _fires(lang, read, rule, where):
                return code, rule["rule"]
    if known is not None:
        mixed = _mixed(text, counts, folded, words, stop, [c for c in codes if c != "en"], known)
        if mixed:
            return mixed[0] + "+" + mixed[1], mixed[2]
    return None


def _borrowed(code, top, words, stop):
    """Whether ``code`` is a Latin language with rules, of another branch than ``top``
    (German beside the Romance languages, which read each other's words: Spanish text
    fires Portuguese rules), whose function words in ``words`` are all ``top``'s too."""
    if code not in _LATIN[1:] or (code in _ROMANCE) == (top in _ROMANCE):
        return False
    mine, theirs = stop.get(code, ()), stop.get(top, ())
    return all(w in theirs for w in words if w in mine)


def _mixed(text, counts, folded, words, stop, codes, known):
    """``(verb's language, object's language, rule)`` when a verb of one language and an
    object of another make a pair ("borrar the users table", "supprimer die
    Produktionsdatenbank", "本番 database を drop"), or None. ``codes``: the languages
    other than English worth reading (``match``).

    Each verb of a language's pair rules (English: its word rules' pairs) is put, as a
    verb of the rule of the same name of another language whose objects of that rule
    are in the text, in the verb's place, and that rule reads the text, when each of
    the two languages is evident beside the other (``_evident``) and no third language
    has more function words of its own: its harmless words and windows still count
    ("我drop掉测试库里的临时表" stays two-way), and a rule's ``also`` words must be in the
    text as written, not in the verb put there. A verb that is a word of the other
    language too ("pause" is French) stays that language's. ``known(word, language)``:
    whether a folded word is a word of that language's list (``door_readable.is_word``)."""
    if not codes:
        return None
    # Words in capitals are names, not prose: "TODO" is no Spanish "todo".
    caps = {fold_word(w) for w in text.split() if w.isupper() and len(w) > 1}
    prose = [w for w in words if w not in caps] if caps else words
    english = word_rules("en")
    verbs = []  # (language, start, end, rule) in ``folded``
    starts = [k for k, c in enumerate(folded) if c == " "]
    found, objects = english.pair_words(words)
    objects = {"en": objects}  # {language: names of the rules whose objects are there}
    for i, rule in found.items():
        verbs.append(("en", starts[i] + 1, starts[i + 1], rule))
    for code in codes:
        lang = _language(code)
        read = folded if code != _JAMO else _ud().normalize("NFD", folded)
        named = objects[code] = set()
        for rule in lang.rules:
            if "verbs" not in rule:
                continue
            for fam in _names(rule["verbs"]):
                for a, b in lang.find(read, fam):
                    if code == _JAMO:  # back to the composed text's positions
                        a, b = (len(_ud().normalize("NFC", read[:k])) for k in (a, b))
                    verbs.append((code, a, b, rule["rule"]))
            kinds = (*_names(rule.get("objects", ())), *_names(rule.get("weak", ())))
            if any(lang.find(read, fam) for fam in kinds):
                named.add(rule["rule"])
    if not verbs:
        return None
    langs = [code for code in ["en"] + codes if objects[code]]
    # Text of a third language is that language's ("Cambio il testo del pulsante
    # «Elimina account»?" is Italian, not a Spanish verb with a German object).
    share = {c: _exclusive(c, prose, stop) for c in _LATIN}
    for a, lo, hi, rule in verbs:
        word = folded[folded.rfind(" ", 0, lo) + 1 : folded.find(" ", hi)]
        for b in langs:
            if b == a or rule not in objects[b]:
                continue
            if not _evident(b, a, counts, prose, stop, known):
                continue
            most = max((n for c, n in share.items() if c != a and c != b), default=0)
            if most > share.get(a, 0) and most > share.get(b, 0):
                continue
            if not _evident(a, b, counts, prose, stop, known, word):
                continue
            if _group(a) == _group(b) and known(word, b):
                continue  # a word of both: "pause" in French text is French
            for verb in _verbs_of(b, rule, english):
                read = folded[:lo] + " " + verb + " " + folded[hi:]
                if b == "en":
                    if english.match_words(read.split(), pairs_only=True):
                        return a, b, rule
                    continue
                lang = _language(b)
                written = folded
                if b == _JAMO:
                    read = _ud().normalize("NFD", read)
                    written = _ud().normalize("NFD", folded)
                for own in lang.rules:
                    if own["rule"] == rule and "verbs" in own:
                        also = _names(own.get("also", ()))
                        if also and not any(lang.find(written, fam) for fam in also):
                            continue  # its ``also`` words are the text's, not the verb's
                        if _fires(lang, read, own, _one_sentence):
                            return a, b, rule
    return None


def _verbs_of(code, rule, english):
    """A verb of each of ``code``'s pair rules named ``rule`` (its first one-word
    entry), as a word of folded text."""
    if code == "en":
        verb = english.verb_for(rule)
        return (verb,) if verb else ()
    lang = _language(code)
    out = []
    for own in lang.rules:
        if own["rule"] == rule and "verbs" in own:
            entries = lang.families.get(_names(own["verbs"])[0], ())
            verb = next((e for e in entries if " " not in e.strip()), None)
            if verb:
                out.append(verb.strip().lstrip("="))
    return tuple(dict.fromkeys(out))


_GROUPS = {"zh": "han", "ja": "kana", "ko": "hangul", "ru": "cyrillic"}


def _group(code):
    """The script a language's words are written in ("latin" for the Latin languages)."""
    return _GROUPS.get(code, "latin")


def _evident(code, other, counts, words, stop, known, verb=None):
    """Whether the text is written in ``code`` beside ``other``, not only in ``other``.
    Scripts apart: letters of ``code``'s script (Chinese: and no kana, which make it
    Japanese; a Latin language giving the objects: and a function word only it has,
    two for a language but English, as code names are English or look Spanish:
    "TODO", "node_modules"). One script: the verb's side, its word is a word of
    ``code``'s list and not of ``other``'s; the objects' side, more function words
    only ``code`` has than ones only ``other`` has ("Bauen wir das Dashboard ab Montag
    um?" is German, though "um" is Portuguese), or, neither having one, a word of
    ``code``'s list ``other``'s lacks."""
    group = _group(code)
    if group != _group(other):
        if code == "zh" and counts.get("kana"):
            return False
        if group == "latin" and verb is None:
            if not counts.get(group):
                return False
            return _exclusive(code, words, stop) >= 1 or _listed(code, words, known)
        return bool(counts.get(group))
    if verb is not None:
        return known(verb, code) and not known(verb, other)
    mine, theirs = _exclusive(code, words, stop), _exclusive(other, words, stop)
    return mine > theirs or not theirs and _listed(code, words, known)


def _listed(code, words, known):
    """Whether a word of four letters or more is a word of ``code``'s list and of no
    other Latin language's ("datos", "donnees"; not "todo", "bucket", "testo", which
    more lists hold). Never for English, whose words every language borrows."""
    if code == "en":
        return False
    others = [c for c in _LATIN if c != code]
    return any(
        len(w) >= 4 and known(w, code) and not any(known(w, c) for c in others) for w in words
    )


def _exclusive(code, words, stop):
    """How many of ``words`` are function words of ``code`` that no other language
    with rules of its script has."""
    mine = stop.get(code, frozenset())
    if _group(code) == "latin":
        for c in _LATIN:
            if c != code:
                mine = mine - stop.get(c, frozenset())
    return sum(1 for w in words if w in mine)


def _worth_reading(code, words, stop):
    """Whether ASCII text should be read by ``code``'s rules besides English's (text with
    letters beyond ASCII is read by every language its scripts allow): it has no function
    word only English has, or a function word of ``code``'s own, or a word English's rules do not
    know that holds a word of ``code``'s verbs (its gate, ``gate_keys``): "Should I
    supprimer the production database?". Without one of those its words are English's to
    judge ("Rebase my branch onto main?" is no Spanish ``rebas`` + ``main``); a language
    none of whose verbs is in the text fires nothing anyway."""
    english, function = word_rules("en"), stop["en"]
    english_only, own = _own_function_words(stop)
    if english_only.isdisjoint(words):
        return True  # no function word only English has ("a", "no" are Spanish too)
    if not own.get(code, frozenset()).isdisjoint(words):
        return True
    keys = _gates().get(code)
    if keys is None:
        return True  # no gate listed: read it
    seen = _gate_seen(code)
    for w in words:
        opens = seen.get(w)
        if opens is None:
            opens = seen[w] = _opens_gate(w, keys, function, english)
        if opens:
            return True
    return False


def _opens_gate(w, keys, function, english):
    """Whether the folded word holds a key of a language's gate (``_gates``), and is no
    English word."""
    if w in function or english.known(w):
        return False
    start, within, start_sizes, within_sizes = keys
    if any(w[:n] in start for n in start_sizes):
        return True
    # a key as long as the rest of the word from i on is found at i with its own length
    return any(w[i : i + n] in within for n in within_sizes for i in range(len(w) - n + 1))


_GATE_WORDS = 50_000  # words whose gate verdict a process keeps, per language


def _gate_seen(code):
    """``{word: whether it opens code's gate}`` for the words read so far (an import reads
    the same words again and again); emptied when it grows past ``_GATE_WORDS``."""
    seen = _loaded.setdefault("gate words", {}).setdefault(code, {})
    if len(seen) > _GATE_WORDS:
        seen.clear()
    return seen


def gate_keys(data):
    """The gate of a language file (``languages.toml``'s ``[gates]``, which a test keeps
    equal to this): for every entry of the verbs of its rules (or of a rule of one
    family), a word a text must hold for the entry to be found. An entry matched at word
    starts gives its first word, found at a word's start; a phrase starting with a word of
    one or two letters ("n importe qui"), or an entry of a language matched anywhere in a
    word, its longest word, marked ``~``: found anywhere in a word. A text holding none
    of them fires no rule of that language."""
    families = data.get("families", {})
    anywhere = data.get("match") == "substring"
    keys = set()
    for rule in data.get("rules", ()):
        for family in _names(rule.get("verbs", rule.get("any", ()))):
            for entry in families.get(family, ()):
                parts = entry.lstrip("=").split(" ")
                if not anywhere and (len(parts) == 1 or len(parts[0]) >= 3):
                    keys.add(parts[0])
                else:
                    keys.add("~" + max(parts, key=len))
    return sorted(keys)


def _own_function_words(stop):
    """``stop``'s function words only English has among the Latin languages with rules,
    and ``{language: its function words English does not have}`` (worked out once)."""
    seen = _loaded.get("own words")
    if seen is None or seen[0] is not stop:
        function = stop["en"]
        shared = frozenset().union(*(stop[c] for c in _LATIN[1:]))
        own = {code: words - function for code, words in stop.items()}
        seen = _loaded["own words"] = (stop, (function - shared, own))
    return seen[1]


def _gates():
    """``{language: (keys found at a word's start, keys found anywhere in a word, and
    the lengths of each)}``."""
    gates = _loaded.get("gates")
    if gates is None:
        gates = _loaded["gates"] = {}
        for code, keys in _stopwords()[2].items():
            start = frozenset(k for k in keys if k[:1] != "~")
            within = frozenset(k[1:] for k in keys if k[:1] == "~")
            gates[code] = (start, within, _lengths(start), _lengths(within))
    return gates


def _lengths(keys):
    return tuple(sorted({len(k) for k in keys}))


def foreign_words(text, counts=None):
    """``(language, mask)`` when ``text`` is written in a language with rules other than
    English (None otherwise): ``mask`` maps that language's function words to the
    English word the English rules read in their place, ``the`` (so Spanish "del" is not
    the shell's ``del``), ``my`` for a possessive of the language file's ``possessive``
    list ("mi rama" is no "the branch"), ``to`` for a preposition of its ``toward`` list
    ("merge a main" reads "merge to main")."""
    if counts is None:
        counts = scripts(text)
    if not counts.get("latin"):
        return None
    words = [w for w in fold(text).split() if len(w) > 1]  # "d e l e t e" is no French
    ruled = _stopwords()[0]
    english = ruled["en"]
    best, found = sum(1 for w in words if w in english), None
    for code in _LATIN[1:]:
        stop = ruled[code]
        hits = sum(1 for w in words if w in stop)
        if hits >= 2 and hits > best:
            best, found = hits, code
    if found is None:
        return None
    own = _language(found).english
    mask = {w: "the" for w in ruled[found] - english}
    mask.update((w, "my") for w in own.get("possessive", ()))
    mask.update((w, "to") for w in own.get("toward", ()))
    return found, mask


def quiets_english(code, rule, text):
    """Whether an English rule that fired on ``text``, written in language ``code``,
    is left to that language's own rules: the rule is in the file's ``quiet_english``,
    the text is one sentence, and it names a place of the ``quiet_by`` family and none
    of the ``quiet_unless`` family ("¿Hago rollback de la migración en mi base
    local?": the English "rollback" alone is read in Spanish, where "producción" makes
    it one-way)."""
    lang = _language(code)
    data = lang.english
    if rule not in data.get("quiet_english", ()):
        return False
    folded, ends = _folded(text)
    if any(end < len(folded.rstrip()) for end in ends):
        return False
    if not lang.find(folded, data["quiet_by"]):
        return False
    return not any(lang.find(folded, fam) for fam in _names(data.get("quiet_unless", ())))


def code_names(text, counts=None):
    """The code names (camelCase, snake_case) that Chinese, Japanese or Korean ``text``
    names as code: a code noun (``codenouns``: a function, a variable, a button) right
    after or before the name ("handleRefund 方法", "refundAmountという変数", "delete_user
    함수"), in a text with no verb that runs code (``runverbs``: "执行 dropDatabase 函数",
    "実行"). The English rules read such a name whole, not as the words it is made of
    (``doors``): in prose of these languages, its verb is no verb of the sentence. In
    lower case, as a set."""
    if counts is None:
        counts = scripts(text)
    codes = [c for c in _candidates(counts) if c in _SPACELESS]
    names = set(_code_words(text))
    if not codes or not names:
        return set()
    folded = fold(text)
    found = {}  # language -> (folded text read, code noun spans)
    for code in codes:
        lang = _language(code)
        read = folded if code != _JAMO else _ud().normalize("NFD", folded)
        if lang.find(read, "runverbs"):
            return set()  # the text may run the code it names
        found[code] = (read, lang.find(read, "codenouns"))
    kept = set()
    for name in names:
        key = fold(name).strip()
        for code, (read, nouns) in found.items():
            near = 15 if code == _JAMO else 6  # letters: a Korean syllable is ~3
            at = read.find(key)
            while at >= 0 and name.lower() not in kept:
                end = at + len(key)
                if any(-1 <= n[0] - end <= near or -1 <= at - n[1] <= near for n in nouns):
                    kept.add(name.lower())
                at = read.find(key, at + 1)
    return kept


def ascii_runs(text):
    """``[(start, end)]`` of the runs of ASCII letters, digits and ``_`` in ``text``: the
    words a code name can be."""
    runs, start = [], None
    for i, c in enumerate(text):
        if c.isascii() and (c.isalnum() or c == "_"):
            if start is None:
                start = i
        elif start is not None:
            runs.append((start, i))
            start = None
    if start is not None:
        runs.append((start, len(text)))
    return runs


def written_without_spaces(text):
    """Whether ``text`` holds a letter of Chinese, Japanese or Korean."""
    return any(c.isalpha() and _script(c) in ("han", "kana", "hangul") for c in text)


def _code_words(text):
    """The code names of ``text`` (``ascii_runs``): words with a capital after a small
    letter ("refundAmount", "BillingService") or a ``_`` between letters
    ("refund_amount")."""
    out = []
    for start, end in ascii_runs(text):
        w = text[start:end].strip("_")
        if any(a.islower() and b.isupper() for a, b in zip(w, w[1:])) or (
            "_" in w and any(c.isalpha() for c in w)
        ):
            out.append(w)
    return out


# ---- what cannot be read ----------------------------------------------------------

# A text is unreadable when at least this share of its letters is in scripts or alphabets
# without rules, or this share of its words holds such a letter.
OTHER_LETTERS = 0.25
OTHER_WORDS = 0.30


def _plain_words(text):
    """The words of prose in ``text``: code, paths, ids, numbers and flags left out."""
    out = []
    for chunk in text.split():
        word = chunk.strip(".,;:!?¿¡()[]{}\"'«»“”„‘’…—–-")
        if len(word) < 2 or not word.isalpha():
            continue  # digits, "_", ".", "/", "-" inside: code, not prose
        rest = word[1:]
        if rest != rest.lower() and word != word.upper():
            continue  # camelCase
        out.append(word)
    return out


def unreadable(text, counts=None):
    """Why ``text`` cannot be read, or None when it can. Reasons: ``"script"`` (mostly
    letters no rules read), ``"language"`` (function words of a language without rules).

    Short text, code, ids, paths and numbers are readable: only prose counts. Each line
    of a whole question (the question, its header, every option) is read on its own too:
    one option the rules cannot read is enough.
    """
    why = _unreadable(text, counts)
    if why is None and "\n" in text:
        unruled, english = _unruled_words(), _stopwords()[0]["en"]
        for line in text.split("\n"):
            if line.isascii():
                # Only words of a language without rules, more of them than English ones,
                # can make an ASCII line unreadable: others are not read again.
                words = [w.strip(".,;:!?()[]\"'-").lower() for w in line.split()]
                hits = sum(1 for w in words if w in unruled)
                if hits < min(2, len(words)) or hits <= sum(1 for w in words if w in english):
                    continue
            why = _unreadable(line)
            if why:
                break
    return why


def _unruled_words():
    """Every function word of the languages without rules, in one set."""
    words = _loaded.get("unruled")
    if words is None:
        words = _loaded["unruled"] = frozenset().union(*_stopwords()[1].values())
    return words


def _unreadable(text, counts=None):
    if counts is None:
        counts = scripts(text)
    letters = sum(counts.values())
    if not letters:
        return None
    other = counts.get("other", 0)
    if other and other >= OTHER_LETTERS * letters:
        return "script"
    words = _plain_words(text)
    if not words:
        return None
    if other:
        foreign = sum(1 for w in words if any(_script(c) == "other" for c in w if not c.isascii()))
        if foreign >= OTHER_WORDS * len(words):
            return "script"
    folded = [fold_word(w) for w in words]
    if len(words) < 3 and not any(w in _unruled_words() for w in folded):
        return None
    known, others = _stopwords()[:2]
    ruled = 0
    for code in _candidates(counts):
        ruled = max(ruled, sum(1 for w in folded if w in known.get(code, ())))
    unruled = 0
    for words_of in others.values():
        hits = sum(1 for w in folded if w in words_of)
        if len(words) < 3 and hits == len(words) > ruled:
            return "language"  # an option label ("Radera allt"): every word of one language
        unruled = max(unruled, hits)
    if len(words) < 3:
        return None
    if unruled >= 2 and unruled > ruled:
        return "language"
    if len(words) >= 4 and not ruled and not unruled:
        # No function word of any language, and half the words unpronounceable: noise.
        odd = sum(1 for w in folded if _unpronounceable(w))
        if odd * 2 >= len(words):
            return "language"
    return None


_VOWELS = frozenset("aeiouy")


def _unpronounceable(word):
    """A Latin word with four consonants in a row ("zxcmn", "vbnm"; not "npm")."""
    if not word.isascii():
        return False
    run = 0
    for c in word:
        run = 0 if c in _VOWELS else run + 1
        if run >= 4:
            return True
    return False
