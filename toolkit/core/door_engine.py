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
  one no word of that family qualifies, as a pair's objects: "función de reembolsos"),
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
  With ``pronouns`` or ``clitics``, a pronoun by the verb stands for an object named
  in an earlier sentence ("… le cluster de production. Je le supprime ?"); with
  ``refers``, a verb aimed at a pronoun or alone in a short sentence ("¿Lo tiro?",
  "Derrubo?") takes the object named before it, a weak one too (``_referred``).
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
    "fold",
    "folded_entry",
    "gate_keys",
    "foreign_words",
    "match",
    "rule_names",
    "unreadable",
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


def _folded(text, nfd=False):
    """``(fold(text), ends)``: ``ends`` the positions in it where a sentence starts after
    a sentence end (``_BREAKS``). With ``nfd``, the folded text in canonical
    decomposition (Korean is read letter by letter), a comma kept as a word of its own:
    Korean spaces its words, so only the comma tells "테스트, 운영 DB" (two things) from
    "테스트 DB" (one)."""
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
        elif c == "." and 0 < i < len(low) - 1 and low[i - 1].isalnum() and low[i + 1].isalnum():
            out.append(c)  # inside a name: "main.go", "v1.2", "credentials.json"
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


def folded_entry(entry):
    """A family entry as the data files hold it: folded as text is (``fold``), with a
    leading ``=`` (a whole word) or ``#`` (a word after a count) kept. Entries are stored
    folded, so loading a language costs no Unicode work (a test keeps every file so)."""
    mark = entry[:1] if entry[:1] in ("=", "#") else ""
    return mark + fold(entry[len(mark) :]).strip()


def _entry(entry):
    return (" " + entry[1:] + " ") if entry[:1] == "=" else entry


class _Language:
    """One language's families (folded entries) and rules, as read from its file."""

    __slots__ = ("code", "spaceless", "prefix", "families", "rules", "_seen", "_keys")

    def __init__(self, code, data):
        self.code = code
        self.spaceless = code in _SPACELESS
        self.prefix = data.get("match", "prefix") == "prefix"
        self.families = data.get("families", {})  # lists, made tuples on first use
        self.rules = data.get("rules", [])
        self._seen = (None, {})  # the last text read and what was found in it
        self._keys = {}  # family -> its entries as _find looks for them

    def entries(self, family):
        entries = self.families.get(family, ())
        if type(entries) is list:
            if self.code == _JAMO:  # read letter by letter
                entries = [_ud().normalize("NFD", e) for e in entries]
            entries = self.families[family] = tuple({_entry(e) for e in entries if e})
        return entries

    def find(self, text, family):
        """``[(start, end)]`` of the family's entries in folded ``text`` (remembered for
        the last text: rules share families)."""
        seen_text, seen = self._seen
        if seen_text is not text:
            seen = {}
            self._seen = (text, seen)
        found = seen.get(family)
        if found is None:
            found = seen[family] = self._find(text, family)
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

    def _find(self, text, family):
        found = []
        for key, lead, rest in self.keys(family):
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


def _chained(text, objects, quiet, marks):
    """``quiet`` with every object a quiet one qualifies: right after it, joined by
    ``_JOINS`` ("テスト用のS3バケット": the test bucket, not a second object). A
    conjunction, a comma or a space between two nouns keeps the second one apart
    ("テスト用DBと本番DB"); an object inside a harmless word qualifies nothing (ログ in
    ログイン is no noun before インデックス), and a shorter object inside a quiet one is
    read on its own (本番 in "本番DB、テスト用DB")."""
    inside = {o for o in quiet if any(m[0] <= o[0] and o[1] <= m[1] for m in marks)}
    quiet = set(quiet)
    grew = True
    while grew:
        grew = False
        for o in objects:
            if o in quiet:
                continue
            for q in quiet - inside:
                if q[1] <= o[0] and text[q[1] : o[0]] in _JOINS:
                    quiet.add(o)
                    grew = True
                    break
    return quiet


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
        return any(not _adjacent(lang, text, s, marks) for s in found)
    if "also" in rule and not any(lang.find(text, fam) for fam in _names(rule["also"])):
        return False  # German separable verbs: "bauen … ab" needs its "ab"
    verbs = [s for fam in _names(rule["verbs"]) for s in lang.find(text, fam)]
    if not verbs:
        return False
    strong = [s for fam in _names(rule.get("objects", ())) for s in lang.find(text, fam)]
    weak = [s for fam in _names(rule.get("weak", ())) for s in lang.find(text, fam)]
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
        quiet = {o for o in strong + weak if _adjacent(lang, text, o, marks, verbs)}
        if quiet and lang.spaceless:
            quiet = _chained(text, strong + weak, quiet, marks)
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
    caps = {fold(w).strip() for w in text.split() if w.isupper() and len(w) > 1}
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
    start, within, start_sizes, within_sizes = keys
    for w in words:
        if w in function or english.known(w):
            continue
        if any(w[:n] in start for n in start_sizes):
            return True
        # a key as long as the rest of the word from i on is found at i with its own length
        if any(w[i : i + n] in within for n in within_sizes for i in range(len(w) - n + 1)):
            return True
    return False


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
    """The function words of the language ``text`` is written in, when that is a
    language with rules other than English (None otherwise): the English rules read the
    text without them, so Spanish "del" is not the shell's ``del``."""
    if counts is None:
        counts = scripts(text)
    if not counts.get("latin"):
        return None
    words = [w for w in fold(text).split() if len(w) > 1]  # "d e l e t e" is no French
    ruled = _stopwords()[0]
    english = ruled["en"]
    best, mask = sum(1 for w in words if w in english), None
    for code in _LATIN[1:]:
        stop = ruled[code]
        hits = sum(1 for w in words if w in stop)
        if hits >= 2 and hits > best:
            best, mask = hits, stop - english
    return mask


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
    folded = [fold(w).strip() for w in words]
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
