"""The door classifier's word-index cache can be damaged on disk without changing a verdict.

The index is cached next to the byte-code so a new process loads it instead of building it.
A flipped byte or a write cut short must either be refused as a whole or be caught when a
shard is read; in both cases the rules themselves decide, never a damaged copy of them.
"""

import json
import os
import random
import shutil
import subprocess
import sys

import pytest

import toolkit.core.door_rules  # noqa: F401  (makes every word family: the index can be built)
from toolkit.core import door_words

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "fixtures", "doors")


@pytest.fixture(scope="module")
def fresh():
    return door_words._index_now()


@pytest.fixture(scope="module")
def cache_bytes(fresh):
    return door_words._Index.of(fresh).dump()


def _damaged(data, rng):
    """A few kinds of damage: flipped bytes anywhere, a cut, trailing bytes, a lost byte."""
    kind = rng.randrange(4)
    if kind == 0:
        out = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(out))
            out[i] ^= rng.randint(1, 255)
        return bytes(out)
    if kind == 1:
        return data[: rng.randrange(len(data))]
    if kind == 2:
        return data + bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    i = rng.randrange(len(data))
    return data[:i] + data[i + 1 :]


def test_round_trip_equals_the_rules(fresh, cache_bytes):
    assert door_words._Index.load(cache_bytes) == fresh


def test_damaged_cache_is_refused_or_read_as_the_rules(fresh, cache_bytes):
    rng = random.Random(20261201)
    refused = 0
    for _ in range(120):
        data = _damaged(cache_bytes, rng)
        if data == cache_bytes:
            continue
        try:
            index = door_words._Index.load(data)
        except ValueError:
            refused += 1
            continue
        # Reading every shard either finds it intact or falls back to the rules.
        assert index == fresh
    assert refused > 0


def test_every_byte_of_the_shards_is_guarded(fresh, cache_bytes):
    """A flip in any shard (not only the header) never changes what the index holds."""
    for i in range(len(cache_bytes) - 1, 0, -997):
        data = bytearray(cache_bytes)
        data[i] ^= 0x5A
        try:
            index = door_words._Index.load(bytes(data))
        except ValueError:
            continue
        assert index == fresh, f"byte {i}"


@pytest.mark.parametrize("damage", ["flip", "cut", "empty", "old-format"])
def test_a_new_process_with_a_damaged_cache_still_finds_every_one_way_door(tmp_path, damage):
    texts = []
    for name in sorted(os.listdir(CORPUS)):
        if not name.endswith(".jsonl"):
            continue  # the folders of the other languages' corpora
        with open(os.path.join(CORPUS, name), encoding="utf-8") as f:
            texts += [row["text"] for row in map(json.loads, f) if row["door"] == "one-way"]
    good = door_words._Index.of(door_words._index_now()).dump()
    data = {
        "flip": good[:-40] + bytes([good[-40] ^ 1]) + good[-39:],
        "cut": good[: len(good) * 2 // 3],
        "empty": b"",
        "old-format": b"\xa9\x05door-words/3" + good[30:],
    }[damage]
    cache = tmp_path / "door-words.marshal"
    cache.write_bytes(data)
    code = (
        "import json, sys\n"
        "from toolkit.core import door_words, doors\n"
        f"door_words._cache_path = lambda: {str(cache)!r}\n"
        "texts = json.load(sys.stdin)\n"
        "print(json.dumps([doors.classify(t).door for t in texts]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout
    assert json.loads(out) == ["one-way"] * len(texts)
    # The damaged file was replaced by an intact cache of the rules.
    assert door_words._Index.load(cache.read_bytes()) == door_words._index_now()


# --- the cache follows every module of the rules --------------------------------------------

# Run in a copy of the package: the verdict on a text, the rules version, and the cache files.
_READ_IN_COPY = (
    "import json, os, sys\n"
    "from toolkit.core import doors\n"
    "verdict = list(doors.classify(sys.argv[1]))\n"
    "folder = os.path.join(os.path.dirname(doors.__file__), '__pycache__')\n"
    "caches = sorted(n for n in os.listdir(folder) if n.startswith('door-words.'))\n"
    "print(json.dumps([verdict, doors.rules_version(), caches, doors.__file__]))\n"
)


def _read_in_copy(root, text):
    out = subprocess.run(
        [sys.executable, "-c", _READ_IN_COPY, text],
        capture_output=True,
        text=True,
        cwd=root,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    ).stdout
    return json.loads(out)


@pytest.mark.parametrize(
    "module, before, after, text",
    [
        # A word added to a named family: a new strong verb.
        (
            "door_families.py",
            '"deletion, deletions, erasure, destruction, del",',
            '"deletion, deletions, erasure, destruction, del, zorblify",',
            "Should we zorblify the users table?",
        ),
        # A word added to a family written inside a rule.
        (
            "door_rules.py",
            '"never come back, no going back"',
            '"never come back, no going back, zorblified"',
            "The settings move is zorblified, fine?",
        ),
        # A new inflection made for every verb.
        (
            "door_words.py",
            '        out.add(base)\n        if " " in base:',
            '        out.add(base)\n        out.add(base + "zz")\n        if " " in base:',
            "Should we wipezz the orders?",
        ),
    ],
)
def test_an_edit_to_any_rules_module_is_read_by_the_next_process_not_the_stale_cache(
    tmp_path, module, before, after, text
):
    root = tmp_path / "copy"
    shutil.copytree(
        os.path.join(ROOT, "toolkit"),
        root / "toolkit",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    verdict, version, caches, loaded = _read_in_copy(root, text)
    assert loaded.startswith(str(root)), loaded  # the copy, not the checkout, was read
    assert verdict == ["two-way", "no-match"]
    assert len(caches) == 1  # the word index was cached by that process
    assert _read_in_copy(root, text)[:3] == [verdict, version, caches]  # and read from it

    path = root / "toolkit" / "core" / module
    source = path.read_text(encoding="utf-8")
    assert source.count(before) == 1
    path.write_text(source.replace(before, after), encoding="utf-8")

    for _ in range(2):  # the first process builds and caches the index, the second loads it
        new_verdict, new_version, new_caches, _ = _read_in_copy(root, text)
        assert new_verdict[0] == "one-way", new_verdict
        assert new_version != version  # recorded summaries will be read again
        assert len(new_caches) == 1 and new_caches != caches  # the stale cache is gone


def test_the_cache_key_names_every_module_that_makes_words_or_families():
    from toolkit.core.door_words import INDEX_SOURCES, RULE_SOURCES

    core = os.path.join(ROOT, "toolkit", "core")
    modules = {n for n in os.listdir(core) if n.startswith("door_") and n.endswith(".py")}
    assert set(RULE_SOURCES) == modules
    assert set(INDEX_SOURCES) <= modules
    # Every module that makes a word family is one of them.
    for name in os.listdir(core):
        if name.endswith(".py"):
            with open(os.path.join(core, name), encoding="utf-8") as f:
                text = f.read()
            if "_F(" in text or "_Family(" in text:
                assert name in INDEX_SOURCES, name


def test_no_index_is_built_or_cached_before_every_family_is_made(tmp_path):
    cache = tmp_path / "door-words.partial.marshal"
    code = (
        "import sys\n"
        "from toolkit.core import door_words, door_families\n"
        f"door_words._cache_path = lambda: {str(cache)!r}\n"
        "try:\n"
        "    door_words._scan(['zap', 'the', 'orders'])\n"
        "except RuntimeError as e:\n"
        "    print('refused:', e)\n"
        "from toolkit.core import door_rules\n"
        "print(door_rules.match('zap the orders'))\n"
        "try:\n"
        "    door_words._F('late, family')\n"
        "except RuntimeError as e:\n"
        "    print('refused:', e)\n"
    )
    lines = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout.splitlines()
    assert lines[0].startswith("refused:")
    assert lines[1] == "destructive-verb"
    assert lines[2].startswith("refused:")
    assert door_words._Index.load(cache.read_bytes()) == door_words._index_now()


# --- the cache follows the rules in memory, not the files on disk ------------------------------

# A process that imports the rules, says so, waits for a line on stdin (the upgrade lands
# meanwhile), then reads each text and reports its verdicts, its rules version and the caches.
_HOLD_OLD_RULES = (
    "import json, os, sys\n"
    "from toolkit.core import doors\n"
    "if os.environ['READ_RULES'] == '1':\n"
    "    from toolkit.core import door_rules\n"
    "print('imported', flush=True)\n"
    "sys.stdin.readline()\n"
    "verdicts = [doors.classify(t).door for t in sys.argv[1:]]\n"
    "folder = os.path.join(os.path.dirname(doors.__file__), '__pycache__')\n"
    "caches = sorted(n for n in os.listdir(folder) if n.startswith('door-words.'))\n"
    "print(json.dumps([verdicts, doors.rules_version(), caches]), flush=True)\n"
)

# An upgrade that makes a new family first (every family id after it moves by one, so an
# index read with the other rules' ids puts every word in the wrong family) and adds a strong
# verb.
_NEW_FIRST_FAMILY = '_NEW_FAMILY = _F("frobnicate, frobnicated")\n'
_FAMILIES_START = "# ---- verb families"
_STRONG_NOUNS = '"deletion, deletions, erasure, destruction, del",'
_NEW_STRONG_NOUNS = '"deletion, deletions, erasure, destruction, del, zorblify",'
_ONE_WAY_TEXTS = ("Should we delete the users table?", "Drop the orders table on production?")
_NEW_WORD_TEXT = "Should we zorblify the users table?"


def _copy_package(tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(
        os.path.join(ROOT, "toolkit"),
        root / "toolkit",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return root


def _upgrade(root):
    """Replace door_families.py the way an installer does: a new file renamed into place."""
    path = root / "toolkit" / "core" / "door_families.py"
    source = path.read_text(encoding="utf-8")
    assert source.count(_FAMILIES_START) == 1 and source.count(_STRONG_NOUNS) == 1
    source = source.replace(_FAMILIES_START, _NEW_FIRST_FAMILY + _FAMILIES_START)
    new = root / "door_families.new"
    new.write_text(source.replace(_STRONG_NOUNS, _NEW_STRONG_NOUNS), encoding="utf-8")
    os.replace(new, path)


def _hold_old_rules(root, texts, read_rules=True):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD_OLD_RULES, *texts],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
        env=dict(env, READ_RULES="1" if read_rules else "0"),
    )
    assert proc.stdout.readline() == "imported\n"
    return proc


def _release(proc):
    out, _ = proc.communicate("go\n", timeout=60)
    assert proc.returncode == 0
    return json.loads(out)


def _verdicts_in_copy(root, texts):
    return [_read_in_copy(root, t)[0][0] for t in texts]


def test_a_process_holding_the_old_rules_caches_nothing_a_new_process_would_misread(tmp_path):
    root = _copy_package(tmp_path)
    texts = (*_ONE_WAY_TEXTS, _NEW_WORD_TEXT)
    old = _hold_old_rules(root, texts)
    _upgrade(root)
    verdicts, old_version, _ = _release(old)  # first classification after the upgrade
    assert verdicts == ["one-way", "one-way", "two-way"]  # its own (old) rules, read right

    # Every process started after the upgrade reads the new rules, old words and new.
    for _ in range(2):  # the first builds and caches the index, the second loads it
        assert _verdicts_in_copy(root, texts) == ["one-way"] * 3
    new_version = _read_in_copy(root, _NEW_WORD_TEXT)[1]
    assert old_version != new_version  # its scan is never taken for one by the new rules


def test_a_process_holding_the_old_rules_never_reads_the_new_rules_index(tmp_path):
    root = _copy_package(tmp_path)
    texts = (*_ONE_WAY_TEXTS, _NEW_WORD_TEXT)
    old = _hold_old_rules(root, texts)
    _upgrade(root)
    assert _verdicts_in_copy(root, texts) == ["one-way"] * 3  # the new rules' index is cached
    verdicts, _, caches = _release(old)
    assert verdicts == ["one-way", "one-way", "two-way"]
    assert len(caches) == 1  # the old process left the new rules' cache alone
    assert _verdicts_in_copy(root, texts) == ["one-way"] * 3


def test_rules_replaced_after_the_package_started_are_read_but_never_cached(tmp_path):
    """The package's import stats the rules modules before Python reads any of them; a file
    replaced after that may have been read in either version, so that process neither reads
    nor writes a cache, and names its rules version for no other run."""
    root = _copy_package(tmp_path)
    texts = (*_ONE_WAY_TEXTS, _NEW_WORD_TEXT)
    assert _verdicts_in_copy(root, texts) == ["one-way", "one-way", "two-way"]
    folder = root / "toolkit" / "core" / "__pycache__"
    old_caches = sorted(n for n in os.listdir(folder) if n.startswith("door-words."))
    late = _hold_old_rules(root, texts, read_rules=False)  # the package, not the rules
    _upgrade(root)
    verdicts, version, caches = _release(late)  # the rules are read after the upgrade
    assert verdicts == ["one-way"] * 3  # the new rules, its own index built in memory
    assert caches == old_caches  # nothing read, written or removed
    assert version.startswith("unsettled-")
    assert _read_in_copy(root, _NEW_WORD_TEXT)[1] not in (version, "")


def test_a_process_holding_the_old_rules_gives_a_rules_version_no_run_has(tmp_path):
    root = _copy_package(tmp_path)
    before = _read_in_copy(root, _NEW_WORD_TEXT)[1]
    old = _hold_old_rules(root, (_NEW_WORD_TEXT,))
    _upgrade(root)
    _, version, _ = _release(old)
    after = _read_in_copy(root, _NEW_WORD_TEXT)[1]
    assert len({before, version, after}) == 3
