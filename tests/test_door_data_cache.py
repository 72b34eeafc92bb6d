"""The parsed door rules kept beside their data files (``door_data.load``): used only for
the very bytes they were parsed from, by the very reader; anything else is parsed again."""

import os
import shutil

import pytest

from toolkit.core import door_data

NAME = "en-words.toml"


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    folder = tmp_path / "doors"
    folder.mkdir()
    shutil.copy(os.path.join(door_data.DATA_DIR, NAME), folder / NAME)
    monkeypatch.setattr(door_data, "DATA_DIR", str(folder))
    monkeypatch.setattr(door_data, "_HELD", {})
    return folder


def parsed(folder):
    return door_data.read_data((folder / NAME).read_text("utf-8"))


def no_parsing(monkeypatch):
    def refuse(text, where="data"):
        raise AssertionError("parsed, not loaded from the cache")

    monkeypatch.setattr(door_data, "read_data", refuse)


def test_a_missing_cache_is_written_and_then_used(data_dir, monkeypatch):
    assert not os.path.exists(door_data._cache_path(NAME))
    first = door_data.load(NAME)
    assert first == parsed(data_dir)
    assert os.path.exists(door_data._cache_path(NAME))
    no_parsing(monkeypatch)
    assert door_data.load(NAME) == first


def test_an_edited_file_is_read_as_edited_even_with_the_same_size_and_times(data_dir):
    door_data.load(NAME)
    path = data_dir / NAME
    before = os.stat(path)
    text = path.read_text("utf-8")
    assert '"irreversible", ' in text
    path.write_text(text.replace('"irreversible", ', '"irreversibla", ', 1), "utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size
    families = door_data.load(NAME)["families"]
    assert "irreversibla" in families["irreversible-wording-1"]
    assert "irreversible" not in families["irreversible-wording-1"]
    assert door_data.load(NAME) == parsed(data_dir)  # and the cache now holds the edit


@pytest.mark.parametrize("junk", [b"", b"\x00garbage", b"not marshal at all"])
def test_a_corrupted_cache_is_parsed_past_and_replaced(data_dir, monkeypatch, junk):
    door_data.load(NAME)
    with open(door_data._cache_path(NAME), "wb") as f:
        f.write(junk)
    expected = parsed(data_dir)
    assert door_data.load(NAME) == expected
    no_parsing(monkeypatch)
    assert door_data.load(NAME) == expected


def test_a_cache_of_another_shape_is_not_used(data_dir):
    import marshal

    os.makedirs(os.path.dirname(door_data._cache_path(NAME)))
    raw = (data_dir / NAME).read_bytes()
    lying = (door_data._CACHE_FORMAT, door_data._reader_text(), raw, {}, {}, {})
    for held in [
        lying[:5],
        ("old",) + lying[1:],
        lying[:2] + (b"other",) + lying[3:],
        lying[:5] + ([],),
    ]:
        with open(door_data._cache_path(NAME), "wb") as f:
            f.write(marshal.dumps(held))
        assert door_data.load(NAME) == parsed(data_dir)


def test_a_cache_made_by_another_reader_is_not_used(data_dir, monkeypatch):
    door_data.load(NAME)
    monkeypatch.setattr(door_data, "_CODE", b"# another reader")
    calls = []
    real = door_data.read_data
    monkeypatch.setattr(door_data, "read_data", lambda t, w="data": calls.append(w) or real(t, w))
    assert door_data.load(NAME) == parsed(data_dir)
    assert calls


def test_an_unwritable_folder_only_costs_the_parse(data_dir):
    (data_dir / "__pycache__").write_text("a file where the folder would be")
    assert door_data.load(NAME) == parsed(data_dir)
    assert door_data.load(NAME) == parsed(data_dir)
    assert sorted(os.listdir(data_dir)) == ["__pycache__", NAME]


def test_a_reader_replaced_since_it_was_read_neither_uses_nor_writes_a_cache(data_dir, monkeypatch):
    monkeypatch.setattr(door_data, "_CODE", None)
    monkeypatch.setitem(door_data._AS_READ, "door_data.py", ("another", "file"))
    assert door_data.load(NAME) == parsed(data_dir)
    assert not os.path.exists(door_data._cache_path(NAME))


def every_lookup(index, families):
    """What the index says of every entry of every family, and of words of none."""
    entries = sorted({e for es in families.values() for e in es}) + ["zzz-none", "dro", "d"]
    return {e: index.get(e) for e in entries}


def expected_lookup(families):
    out = {}
    for k, entries in enumerate(families.values()):
        for e in entries:
            out[e] = out.get(e, ()) + (() if k in out.get(e, ()) else (k,))
    return out


def test_the_cached_word_index_names_exactly_the_families_of_each_entry(data_dir):
    door_data.load(NAME)  # writes the cache
    lazy, cached = door_data.word_data(NAME)  # reads it
    assert isinstance(lazy["families"], door_data.Families)
    data = door_data.load(NAME)
    assert dict(lazy["families"].items()) == data["families"]
    assert {k: v for k, v in lazy.items() if k != "families"} == {
        k: v for k, v in data.items() if k != "families"
    }
    built = door_data.WordIndex(data)
    want = expected_lookup(data["families"])
    got = every_lookup(cached, data["families"])
    assert got == every_lookup(built, data["families"])
    assert {e: ids for e, ids in got.items() if ids} == want


def test_a_damaged_bucket_falls_back_to_the_files_own_families(data_dir):
    door_data.load(NAME)
    data, index = door_data.word_data(NAME)
    index._buckets["dro"] = b"\x00damaged"
    assert index.get("drop") == door_data.WordIndex(door_data.load(NAME)).get("drop") != None  # noqa: E711


def test_a_damaged_family_is_read_from_the_files_own_bytes(data_dir):
    door_data.load(NAME)
    data, _ = door_data.word_data(NAME)
    families = data["families"]
    families._lists["sql-destructive-2"] = b"\x00damaged"
    assert families["sql-destructive-2"] == parsed(data_dir)["families"]["sql-destructive-2"]


def test_a_one_way_word_added_by_hand_is_one_way_at_once(data_dir, monkeypatch):
    from toolkit.core.door_reader import WordRules

    door_data.load(NAME)
    rules = WordRules(*door_data.word_data(NAME))  # from the cache
    assert rules.match("will the migration be zorgify?") is None
    path = data_dir / NAME
    path.write_text(
        path.read_text("utf-8").replace('"destructive", ', '"destructive", "zorgify", ', 1),
        "utf-8",
    )
    rules = WordRules(*door_data.word_data(NAME))
    assert rules.match("will the migration be zorgify?") == "irreversible-wording"
    rules = WordRules(*door_data.word_data(NAME))  # and from the cache rewritten
    assert rules.match("will the migration be zorgify?") == "irreversible-wording"


def test_every_rules_file_is_compiled_and_nothing_else(data_dir, monkeypatch):
    (data_dir / "words").mkdir()
    (data_dir / "words" / "en.txt").write_text("word\n")
    monkeypatch.setattr(
        door_data,
        "data_files",
        lambda: [str(data_dir / NAME), str(data_dir / "words" / "en.txt")],
    )
    door_data.compile_all()
    assert os.listdir(data_dir / "__pycache__") == [os.path.basename(door_data._cache_path(NAME))]
