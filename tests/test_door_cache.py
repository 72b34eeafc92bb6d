"""The door classifier's word-index cache can be damaged on disk without changing a verdict.

The index is cached next to the byte-code so a new process loads it instead of building it.
A flipped byte or a write cut short must either be refused as a whole or be caught when a
shard is read; in both cases the rules themselves decide, never a damaged copy of them.
"""

import json
import os
import random
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
