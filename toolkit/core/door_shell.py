"""The other readings of a text read word by word (``door_reader``), tried only when its
words as written fire no rule: shell command lines (read from the text itself), method
calls read verb first (``db.users.drop()``), and disguised spellings read back (digits
for letters, letters held down, spaced or hyphenated apart).

What they look for is data: the ``[shell]`` table of the language file (marks that say a
text may hold a command line, command breaks, the sources that empty a file, data file
extensions and system folders, delete flags, dry-run flags, and the rule each finding
names).
"""

from toolkit.core.door_data import record_source

record_source(__file__)  # the file as read: ``doors.rules_version`` names it

__all__ = ["Readers"]

_DIGIT_LETTERS = {"0": "o", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "9": "g"}


def _commands(text, breaks):
    """The text split into simple commands (word lists), at ``;``, ``&&``, ``|`` ..."""
    for mark in breaks:
        if mark in text:
            text = text.replace(mark, "\n")
    return [line.split() for line in text.split("\n") if line.strip()]


class Readers:
    """The shell, method-call and disguise readings over one language's data."""

    def __init__(self, shell, short_words, loggers, known, verbs, tokens):
        self.marks = tuple(shell.get("marks", ()))
        self.breaks = tuple(shell.get("breaks", ()))
        self.empty = frozenset(shell.get("empty_sources", ()))
        self.durable_ext = tuple(shell.get("durable_ext", ()))
        self.durable_dirs = tuple(shell.get("durable_dirs", ()))
        self.delete_flags = tuple(shell.get("delete_flags", ()))
        self.dry_run = frozenset(shell.get("dry_run", ()))
        self.files_rule = shell.get("files_rule", "filesystem-destructive")
        self.history_rule = shell.get("history_rule", "history-rewrite")
        self.short_words, self.loggers = short_words, loggers
        self.known, self.verbs, self.tokens = known, verbs, tokens

    # ---- shell command lines ------------------------------------------------------

    def _redirect_truncates(self, cmd_text):
        """``> file`` (not ``>>``, not ``2>&1``, not into /dev/...) that empties or
        overwrites a file holding data: the source is empty, or the target is a data file
        or system path."""
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
            # An empty source is written with either quote: 'echo ""' is "echo ''".
            if source.replace('""', "''") in self.empty or source.startswith("cat /dev/null"):
                return True
            if (
                target.endswith(self.durable_ext)
                or target.startswith(self.durable_dirs)
                or "prod" in target
            ):
                return True

    def shell(self, text):
        """The rule a shell command line in ``text`` breaks, or None."""
        if not any(m in text for m in self.marks):
            return None
        for cmd in _commands(text, self.breaks):
            if ">" in " ".join(cmd) and self._redirect_truncates(" ".join(cmd)):
                return self.files_rule
            args = [a.strip("'\"") for a in cmd]
            if self.dry_run.intersection(args):
                continue
            names = args[:3]
            if "mv" in names and args[-1].rstrip("/") in ("/dev/null",):
                return self.files_rule
            if ("cp" in names or "install" in names) and "/dev/null" in args[1:3]:
                return self.files_rule
            if any(
                a.startswith(self.delete_flags) and not a.startswith("--delete-branch")
                for a in args[1:]
            ):
                return self.files_rule
            if "git" in names or "push" in names:
                rule = self._git(args)
                if rule:
                    return rule
        return None

    def _git(self, args):
        sub = args[args.index("git") + 1 :] if "git" in args else args
        verb = sub[0] if sub else ""
        rest = sub[1:]
        if verb == "push" and any(a[:1] in "+:" and a[1:2].isalnum() for a in rest):
            return self.history_rule  # a forced refspec, or one that deletes a branch
        if verb == "restore" and any(
            a == "-s" or a.startswith(("--source", "-s")) and a[:3] != "-st" for a in rest
        ):
            return self.history_rule  # files overwritten from another revision
        if verb == "checkout" and "--" in rest:
            before = rest[: rest.index("--")]
            if any(a[:1] != "-" for a in before):
                return self.history_rule
        return None

    # ---- method calls -------------------------------------------------------------

    def code_calls(self, text):
        """``db.users.drop()`` → ``drop db users``: a method call read verb first, so the
        rules see what it is called on. None when the text has no such call."""
        if "." not in text and "::" not in text:
            return None
        tokens = self.tokens
        changed, out = False, []
        for chunk in text.split(" "):
            flat = chunk.replace("::", ".")
            if "." in flat.strip(".?!,;") and any(c.isalpha() for c in flat):
                parts = [p for p in flat.split(".") if p]
                if len(parts) >= 2 and parts[0] not in self.loggers:
                    last = tokens(parts[-1])
                    if last and last[0].isalpha() and self.known(last[0], self.verbs):
                        receiver = " ".join(w for p in parts[:-1] for w in tokens(p))
                        out.append(" ".join([last[0], receiver] + last[1:]))
                        changed = True
                        continue
            out.append(chunk)
        return " ".join(out) if changed else None

    # ---- disguised spellings ------------------------------------------------------

    def _undigit(self, word):
        """``dr0p`` → ``drop``, ``w1pe`` → ``wipe``: digits standing for letters inside a
        word, read back when the result is a rule word."""
        if not word[:1].isalpha() and not word[-1:].isalpha():
            return None
        if sum(c.isalpha() for c in word) < 2:
            return None
        base = "".join(_DIGIT_LETTERS.get(c, c) for c in word)
        for one in ("l", "i"):
            guess = base.replace("1", one)
            if guess.isalpha() and self.known(guess):
                return guess
        return None

    def _unstretch(self, word):
        """``drooop`` → ``drop``: letters held down (a run of three or more), read back
        kept single or double when the result is a rule word."""
        runs, k = [], 0
        while k < len(word):
            j = k
            while j < len(word) and word[j] == word[k]:
                j += 1
            runs.append((word[k], j - k))
            k = j
        for double in (False, True):
            guess = "".join(c * (min(n, 2) if double else 1) for c, n in runs)
            if self.known(guess):
                return guess
        return None

    def repair(self, found, text=""):
        """The words with disguises undone: digits for letters, letters spaced or
        hyphenated apart ("d r o p", "dr-op", "del ete"), joined back when they make a
        rule verb. The same list when nothing changed."""
        known, short = self.known, self.short_words
        stretched = any(c * 3 in text for c in set(text) if c.isalpha())
        out, i, n, changed = [], 0, len(found), False
        while i < n:
            w = found[i]
            if (
                len(w) > 3
                and w.isalpha()
                and not stretched
                and (i + 1 == n or len(found[i + 1]) > 3 or found[i + 1] in short)
            ):
                out.append(w)  # the common case: an ordinary word
                i += 1
                continue
            fixed = None
            if w.isalnum() and not w.isalpha() and not w.isdigit():
                fixed = self._undigit(w)
            if not fixed and stretched and len(w) >= 5 and w.isalpha() and not known(w):
                fixed = self._unstretch(w)
            if fixed:
                out.append(fixed)
                changed = True
                i += 1
                continue
            if len(w) == 1 and w.isalpha():
                j = i
                while j < n and len(found[j]) == 1 and found[j].isalpha():
                    j += 1
                if j - i >= 3 and known("".join(found[i:j])):
                    out.append("".join(found[i:j]))
                    changed = True
                    i = j
                    continue
            if (
                i + 1 < n
                and w.isalpha()
                and found[i + 1].isalpha()
                and min(len(w), len(found[i + 1])) <= 3
                and w not in short
                and found[i + 1] not in short
            ):
                joined = w + found[i + 1]
                if known(joined, self.verbs) and not (known(w) and known(found[i + 1])):
                    out.append(joined)
                    changed = True
                    i += 2
                    continue
            out.append(w)
            i += 1
        return out if changed else found
