"""Text the door rules cannot read is one-way on first sight: a text is readable only when
most of its prose words are words of a language with rules (``toolkit/core/door_readable.py``,
the word lists in ``toolkit/data/doors/words``)."""

import json
import os
import shutil

import pytest

from tests.helpers import REPO_ROOT
from toolkit.core import door_readable as readable
from toolkit.core.door_engine import fold
from toolkit.core.doors import classify, explain

FIXTURES = os.path.join(REPO_ROOT, "tests", "fixtures", "doors")
UNREADABLE = ("one-way", "unreadable-language")


def _rows(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _harmless(lang):
    return [r["text"] for r in _rows(os.path.join(lang, "tune.jsonl")) if r["door"] == "two-way"]


@pytest.mark.parametrize(
    "text",
    [r["text"] for r in _rows("unruled.jsonl") + _rows("unruled_fresh.jsonl")],
)
def test_every_text_in_a_language_without_rules_is_one_way(text):
    assert classify(text).door == "one-way", explain(text)


@pytest.mark.parametrize(
    "text",
    [
        "Jadikan repositori publik?",
        "Fac depozitul public?",
        "Șterg definitiv toate comenzile?",
        "Tegyem nyilvánossá a tárolót?",
        "Teenkö repositoriosta julkisen?",
    ],
)
def test_phrasings_no_word_list_of_other_languages_holds_are_unreadable(text):
    assert classify(text) == UNREADABLE, explain(text)
    assert "no language with rules" in explain(text)["problem"]


@pytest.mark.parametrize("text", [r["text"] for r in _rows("en_dev_questions.jsonl")])
def test_english_developer_questions_full_of_jargon_stay_readable(text):
    assert classify(text).reason != "unreadable-language", explain(text)


@pytest.mark.parametrize("lang", ["en", "es", "fr", "de", "pt", "it", "ru", "zh", "ja", "ko"])
def test_harmless_texts_of_the_languages_with_rules_stay_readable(lang):
    assert [t for t in _harmless(lang) if classify(t) == UNREADABLE] == []


def test_russian_developer_questions_full_of_jargon_stay_readable():
    # Transliterated jargon (снапшот, фикстуру, колбэки) is in no list: the inflections
    # of the listed words carry these.
    assert [t for t in _harmless("ru") if classify(t) == UNREADABLE] == []
    assert classify("Убрать дублирующуюся тестовую фикстуру?") != UNREADABLE


def test_harmless_rule_phrasings_and_the_english_corpus_stay_readable():
    own = [r["text"] for r in _rows("rules_own_phrasings.jsonl") if r["door"] == "two-way"]
    assert [t for t in own if classify(t) == UNREADABLE] == []
    for name in ("corpus_a.jsonl", "corpus_b.jsonl", "corpus_c.jsonl"):
        harmless = [r["text"] for r in _rows(name) if r["door"] == "two-way"]
        assert [t for t in harmless if classify(t) == UNREADABLE] == [], name


@pytest.mark.parametrize(
    "text",
    [
        "Rename `fetchData` to `loadItems` in src/api/client.ts?",
        "Bump pydantic-core to 2.18.1 in requirements-dev.txt?",
        "Run `pnpm dlx tsx scripts/gen.ts --watch` before the release build?",
        "See https://example.com/kubectl/xyzzy for the plugh fix?",
        "Skip",
        "OK",
        "Add the AWS SDK v3 client to README?",
        "rsync -a src/ build/",
        "修复 linter 的警告？",
        "npm pnpm yarn bun",
        "find . -name '*.pyc'",
    ],
)
def test_code_names_paths_flags_acronyms_and_short_words_are_neutral(text):
    assert classify(text).reason != "unreadable-language", explain(text)


def test_one_option_in_a_language_without_rules_is_enough():
    question = (
        "Which visibility should the repository have?\nKeep it private\nJadikan repositori publik"
    )
    # One-way: unreadable, or read by a rule that fires on its words anyway.
    verdict = classify(question)
    assert (
        verdict == UNREADABLE or verdict.door == "one-way" and verdict.reason.startswith("keyword:")
    )
    assert classify("Which visibility should the repository have?\nKeep it private") != UNREADABLE


@pytest.mark.parametrize(
    "text",
    [
        "Peruuta",
        "Hapus semua pesanan",
        "Dileu pob archeb am byth?",
        "Nifute maagizo yote kabisa?",
        "Да направя ли хранилището публично?",  # Bulgarian: Russian words, other forms
        "Zrabić repazitoryj publičnym?",
    ],
)
def test_labels_and_questions_of_unknown_words_are_unreadable(text):
    assert classify(text) == UNREADABLE, explain(text)


def test_word_lists_are_folded_sorted_and_unique():
    for name in sorted(os.listdir(readable.WORDS_DIR)):
        with open(os.path.join(readable.WORDS_DIR, name), encoding="utf-8") as f:
            words = f.read().split("\n")
        assert words[-1] == "", name  # one word a line, a newline after the last
        words = words[:-1]
        assert words == sorted(set(words)), name  # the reader bisects
        bad = [w for w in words if fold(w).strip() != w or len(w) < 3 or not w.isalpha()]
        assert bad == [], (name, bad[:5])


def _only(tmp_path, monkeypatch, names):
    for name in names:
        shutil.copy(os.path.join(readable.WORDS_DIR, name + ".txt"), tmp_path)
    monkeypatch.setattr(readable, "WORDS_DIR", str(tmp_path))
    monkeypatch.setattr(readable, "_lists", {})


def test_common_english_reads_only_the_head_of_the_english_list(tmp_path, monkeypatch):
    _only(tmp_path, monkeypatch, ["en-head"])  # any other list read would fail
    assert classify("Should I run the tests again before the next change?").door == "two-way"
    assert classify("Fix now") == ("two-way", "no-match")


def test_russian_text_reads_only_the_russian_and_english_lists(tmp_path, monkeypatch):
    _only(tmp_path, monkeypatch, ["en-head", "en", "ru"])
    assert classify("Переименовать переменную в тесте?").reason != "unreadable-language"
    assert classify("Да изтрия ли базата данни в продукция?") == UNREADABLE


def test_the_user_answering_or_allowing_such_a_text_is_still_what_lets_it_through(conn):
    # The sticky rules and `doors allow` treat this reading as every unreadable-language one.
    from toolkit.core import allows, doors, questions

    text = "Jadikan repositori publik?"
    assert classify(text) == UNREADABLE
    unreadable = doors.Classification(True, allows.UNREADABLE_LANGUAGE)
    assert not allows.overruled(conn, "adhoc-visibility", unreadable, text)
    record = questions.validate_event(
        {
            "skill": "adhoc",
            "question_id": "adhoc-visibility",
            "question_summary": text,
            "user_choice": "no",
            "source": "agent",
        }
    )
    questions.record_event(conn, record, "proj")
    assert allows.overruled(conn, "adhoc-visibility", unreadable, text)
    allows.allow(conn, "adhoc-visibility", "plan-tune")
    assert allows.allowed(conn, "adhoc-visibility")
