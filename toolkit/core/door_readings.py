"""Other readings of a text, tried by ``door_rules.match`` only when its words as written
fire no rule: shell command lines (read from the text itself), method calls read verb first
(``db.users.drop()``), and disguised spellings read back (digits for letters, letters held
down, spaced or hyphenated apart).
"""

from toolkit.core.door_families import (
    _CRED_VERB,
    _PASSIVE_GONE,
    _REMOVE,
    _SCHEMA_VERB,
    _STRONG,
    _TEARDOWN,
    _WEAKEN,
)
from toolkit.core.door_words import _SKIP, _W, _known, _tokens, record_source

record_source(__file__)  # the file as read: ``doors.rules_version`` names it

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


# Receivers whose calls only print: ``console.log`` is a debug line, not "log the console".
_LOGGERS = frozenset(("console", "logger", "logging", "log", "print"))


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
            if len(parts) >= 2 and parts[0] not in _LOGGERS:
                last = _tokens(parts[-1])
                if last and last[0].isalpha() and _known(last[0], _verb_mask()):
                    receiver = " ".join(w for p in parts[:-1] for w in _tokens(p))
                    out.append(" ".join([last[0], receiver] + last[1:]))
                    changed = True
                    continue
        out.append(chunk)
    return " ".join(out) if changed else None
