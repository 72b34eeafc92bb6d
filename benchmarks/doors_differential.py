"""Differential check of the door classifier: this checkout against another revision.

Generates many varied texts (the door corpora's sentences recombined, shell command lines,
code identifiers in camel, snake and kebab case, method calls, look-alike letters, digits
for letters, letters held down or spaced apart, random words of the rules' own families)
and reads each one with both versions, each in a process of its own: the verdict of
``classify`` (door and reason), the rule of every reading ``match`` gets, and what
``explain`` shows. Also compares the two sets of word families (every family's words). Any difference is printed and the exit status is 1: a refactoring of the rules must
change no verdict, or a one-way door could be decided automatically.

The other revision is taken from git (``git archive REV toolkit``) into a temporary folder.

Usage: python benchmarks/doors_differential.py [--rev 05cf753] [--count 150000] [--seed 17]
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")

# Run in each version's process: read the texts, print one JSON result per text, then the
# word index. Works with the rules in one module or split over several.
READER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from toolkit.core import doors
try:
    from toolkit.core import door_rules
except ImportError:  # the rules as data, read by the engine
    door_rules = None
    from toolkit.core import door_engine, door_reader
    rules = door_engine.word_rules()
    match, match_words, split = door_engine.word_match, rules.match_words, door_reader.words
    names, where = rules.rule_names, door_engine.__file__
    families = [sorted(entries) for entries in rules.families().values()]
else:
    match, match_words, split = door_rules.match, door_rules._match_words, door_rules._words
    names, where = door_rules.RULE_NAMES, door_rules.__file__
    index_home = sys.modules.get("toolkit.core.door_words", door_rules)
    singles, phrases, firsts, versions = index_home._index_now()
    by_bit = {}
    for table in (singles, phrases):
        for entry, mask in table.items():
            for bit in range(mask.bit_length()):
                if mask >> bit & 1:
                    by_bit.setdefault(bit, set()).add(entry)
    for bit in range(versions.bit_length()):
        if versions >> bit & 1:
            by_bit.setdefault(bit, set()).add("#version")
    families = [sorted(entries) for entries in by_bit.values()]
with open(sys.argv[2], encoding="utf-8") as f:
    texts = json.load(f)
out = []
for text in texts:
    verdict = list(doors.classify(text))
    try:
        readings = doors._readings(text)
    except ValueError:
        readings = []
    shown = doors.explain(text)
    found = [match(r) for r in readings]
    # Readings whose words as written fire nothing: shell lines, calls, disguises decide.
    other = [bool(rule) and not match_words(split(r) or ["."])
             for r, rule in zip(readings, found)]
    out.append([verdict, found, shown["rule"], shown["normalised"], other])
# Every family's words, compared as sets (a family's place in the order may differ).
json.dump({"results": out, "rules": list(names), "file": where,
           "index": sorted(families)}, sys.stdout)
"""

FILL = (
    "the a an our your to from on in into all every each old new prod production staging "
    "please should i we can ok now then before after it this that them everything of for "
    "with without and or not never just quickly first"
).split()
ENDS = ["", "?", ".", "!", " now?", ". OK?", ";", " please.", "?!", " -- ok?"]
SHELL = [
    "rm -rf {p}",
    "rm {p}",
    "find {d} -name '*.{e}' -delete",
    "rsync -a --delete {d} {h}:{d}",
    "cat /dev/null > {p}",
    "echo '' > {p}",
    ": > {p}",
    "> {p}",
    "mv {p} /dev/null",
    "cp /dev/null {p}",
    "git push origin +{b}",
    "git push origin :{b}",
    "git push --force origin {b}",
    "git push -f",
    "git reset --hard HEAD~{n}",
    "git checkout {b} -- {p}",
    "git restore --source=HEAD~{n} .",
    "git clean -fdx",
    "git branch -D {b}",
    "git tag -d v{n}.0.0",
    "kubectl delete ns {w}",
    "terraform destroy -auto-approve",
    "aws s3 rb s3://{w} --force",
    "docker system prune -a --volumes",
    "psql -c 'DROP TABLE {w}'",
    "sqlite3 {p} 'delete from {w}'",
    "chmod {m} {p}",
    "chown root {p}",
    "crontab -r",
    "truncate -s 0 {p}",
    "dd if=/dev/zero of=/dev/sda",
    "gh repo edit --visibility {v}",
    "npm publish --access public",
    "ls -la {d}",
    "grep -r {w} {d}",
    "cat {p} | head -n {n}",
    "python -m pytest -q {d}",
    "rsync -a --dry-run --delete {d} {h}:{d}",
    "echo {w} >> {p}",
    "make test 2>&1 | tee {p}",
]
PATHS = [
    "prod.db",
    "data.sqlite",
    "~/notes.txt",
    "/var/lib/app/db.sqlite3",
    "build/",
    "./tmp",
    "/etc/hosts",
    "src/app.py",
    "dump.sql",
    "out.log",
    "/data/orders.parquet",
    "x.bak",
]
DIRS = ["src/", "/srv/app/", "build/", ".", "~/backups/", "/tmp/x/"]
MODES = ["777", "0644", "o+w", "a+rwx", "755", "u+x", "g+w", "0666"]
CONFUSABLE = {
    "a": "\u0430",
    "e": "\u0435",
    "o": "\u043e",
    "p": "\u0440",
    "c": "\u0441",
    "i": "\u0456",
    "x": "\u0445",
    "y": "\u0443",
    "s": "\u0455",
    "l": "\u04cf",
}
DIGITS = {"o": "0", "e": "3", "a": "4", "s": "5", "t": "7", "l": "1", "i": "1", "b": "8"}


def _corpus():
    """The texts of ``tests/fixtures/doors`` (the held-out halves left out: nobody reads
    them)."""
    texts = []
    for folder, dirs, names in os.walk(os.path.join(FIXTURES, "doors")):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(".jsonl") and "holdout" not in name:
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    rows = [json.loads(line) for line in f if line.strip()]
                texts += [r["text"] for r in rows if isinstance(r.get("text"), str)]
    return texts


def _family_words():
    """Every word and phrase the rules know, from this checkout's word index."""
    sys.path.insert(0, ROOT)
    from toolkit.core.door_engine import word_rules

    words = set().union(*word_rules().families().values()) - {"#version"}
    return sorted(w for w in words if " " not in w) + sorted(w for w in words if " " in w)


def _disguise(word, rng):
    kind = rng.randrange(7)
    if kind == 0:
        return "".join(CONFUSABLE.get(c, c) if rng.random() < 0.5 else c for c in word)
    if kind == 1:
        return "".join(DIGITS.get(c, c) if rng.random() < 0.4 else c for c in word)
    if kind == 2 and word:
        i = rng.randrange(len(word))
        return word[:i] + word[i] * rng.randint(2, 5) + word[i + 1 :]
    if kind == 3:
        return " ".join(word)
    if kind == 4 and len(word) > 2:
        i = rng.randrange(1, len(word) - 1)
        return word[:i] + rng.choice(["-", " ", "\u200b", "_", "."]) + word[i:]
    if kind == 5:
        return word.upper()
    return word.capitalize()


def _identifier(parts, rng):
    parts = [p for w in parts for p in w.split()]
    style = rng.randrange(6)
    if style == 0:
        return parts[0] + "".join(p.capitalize() for p in parts[1:])
    if style == 1:
        return "_".join(parts)
    if style == 2:
        return "-".join(parts)
    if style == 3:
        return "_".join(parts).upper()
    if style == 4:
        return ".".join(parts[:-1] or ["db"]) + f".{parts[-1]}()"
    return "::".join(p.capitalize() for p in parts[:-1]) + f"::{parts[-1]}()"


def generate(count, seed):
    """``count`` texts, the same for the same seed."""
    rng = random.Random(seed)
    corpus = _corpus()
    words = _family_words()
    pool = [w for t in corpus for w in t.split()]
    out = list(corpus)
    for t in corpus:
        out += [t.lower(), t.upper(), t.replace(" ", "_"), t.replace("e", "\u0435"), "Re: " + t]
    kinds = 7
    while len(out) < count:
        kind = len(out) % kinds
        if kind == 0:  # two corpus sentences cut and joined
            a, b = rng.choice(corpus).split(), rng.choice(corpus).split()
            text = " ".join(a[: rng.randint(1, len(a))] + b[rng.randrange(len(b)) :])
        elif kind == 1:  # shell command lines, sometimes chained
            cmds = []
            for _ in range(rng.choice([1, 1, 1, 2, 3])):
                cmds.append(
                    rng.choice(SHELL).format(
                        p=rng.choice(PATHS),
                        d=rng.choice(DIRS),
                        e=rng.choice(["db", "log", "tmp", "sqlite"]),
                        h=rng.choice(["prod", "staging", "backup"]),
                        b=rng.choice(["main", "master", "feature/x", "HEAD:main"]),
                        n=rng.randint(1, 9),
                        w=rng.choice(words).replace(" ", "_"),
                        m=rng.choice(MODES),
                        v=rng.choice(["public", "private", "internal"]),
                    )
                )
            text = rng.choice([" && ", "; ", " | ", " || ", "\n"]).join(cmds)
            if rng.random() < 0.3:
                text = rng.choice(["Should I run ", "Run `", "OK to run: "]) + text
        elif kind == 2:  # identifiers and method calls
            text = _identifier([rng.choice(words) for _ in range(rng.randint(2, 4))], rng)
            if rng.random() < 0.5:
                text = rng.choice(["Should we call ", "Rename ", "Run ", "Keep "]) + text + "?"
        elif kind == 3:  # family words with filler
            text = " ".join(
                rng.choice(words) if rng.random() < 0.55 else rng.choice(FILL)
                for _ in range(rng.randint(2, 10))
            )
        elif kind == 4:  # disguised family words in a sentence
            text = " ".join(
                _disguise(rng.choice(words), rng) if rng.random() < 0.5 else rng.choice(FILL)
                for _ in range(rng.randint(2, 8))
            )
        elif kind == 5:  # corpus words shuffled
            text = " ".join(rng.choice(pool) for _ in range(rng.randint(3, 14)))
        else:  # a corpus sentence with one word disguised or swapped for a family word
            t = rng.choice(corpus).split()
            i = rng.randrange(len(t))
            t[i] = _disguise(t[i], rng) if rng.random() < 0.5 else rng.choice(words)
            text = " ".join(t)
        casing = rng.random()
        if casing < 0.08:
            text = text.upper()
        elif casing < 0.16:
            text = text.title()
        out.append(text + rng.choice(ENDS))
    return out[:count] if len(out) > count else out


def read_with(code_root, texts_path):
    out = subprocess.run(
        [sys.executable, "-c", READER, code_root, texts_path],
        capture_output=True,
        text=True,
        check=True,
        cwd=code_root,
    )
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="05cf753", help="the revision to compare with")
    ap.add_argument("--count", type=int, default=150000, help="texts to generate")
    ap.add_argument("--seed", type=int, default=17)
    args = ap.parse_args()

    started = time.time()
    texts = generate(args.count, args.seed)
    print(f"{len(texts)} texts generated ({len(set(texts))} distinct)", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        texts_path = os.path.join(tmp, "texts.json")
        with open(texts_path, "w", encoding="utf-8") as f:
            json.dump(texts, f)
        old_root = os.path.join(tmp, "old")
        os.mkdir(old_root)
        archive = subprocess.run(
            ["git", "archive", args.rev, "toolkit"], cwd=ROOT, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", old_root], input=archive, check=True)
        print(f"reading with {args.rev} ...", flush=True)
        old = read_with(old_root, texts_path)
        print("reading with this checkout ...", flush=True)
        new = read_with(ROOT, texts_path)

    print(f"read by {old['file']} and {new['file']}")
    problems = []
    if old["rules"] != new["rules"]:
        problems.append(f"rule names differ: {old['rules']} vs {new['rules']}")
    if old["index"] != new["index"]:
        problems.append("the word families differ")
    diffs = [i for i, (a, b) in enumerate(zip(old["results"], new["results"])) if a != b]
    for i in diffs[:20]:
        problems.append(f"{texts[i]!r}: {old['results'][i]} vs {new['results'][i]}")
    one_way = sum(r[0][0] == "one-way" for r in new["results"])
    by_other = sum(any(r[4]) for r in new["results"])
    fired = {}
    for r in new["results"]:
        for rule in r[1]:
            if rule:
                fired[rule] = fired.get(rule, 0) + 1
    print(
        f"{len(texts)} texts compared ({one_way} one-way, {len(texts) - one_way} two-way; "
        f"{by_other} found by shell, call or disguise readings), "
        f"{sum(len(r[1]) for r in new['results'])} readings; "
        f"{len(diffs)} differences; word families equal: {old['index'] == new['index']}; "
        f"{time.time() - started:.0f} s"
    )
    print("readings per rule: " + ", ".join(f"{k} {v}" for k, v in sorted(fired.items())))
    for p in problems:
        print("DIFFERENCE " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
