"""Promise 2 against dangers split up: punctuation typed between a verb and its object,
a verb of one language with an object of another, and negation. Each case is a text a
user could be asked; none may read two-way."""

import pytest

from toolkit.core.doors import classify, explain

# Every kind of break, typed between "Drop" and "the users table".
BREAKS = (". ", "! ", "? ", "; ", ": ", ", ", " — ", " – ", " -- ", "… ", "\n", "\n\n")
BREAKS += (" 🔥 ", "** ", "<br>", "<br/>", " | ", ".\u2029", "!!! ", "?! ", " ... ")


@pytest.mark.parametrize("brk", BREAKS)
def test_a_break_between_verb_and_object_hides_nothing(brk):
    assert classify("Drop" + brk + "the users table?").door == "one-way"
    assert classify("**Drop" + brk + "** the users table").door == "one-way"


@pytest.mark.parametrize(
    "text",
    [
        "Delete. the production database",
        "Truncate! the orders table",
        "Wipe; the customer records",
        "Force-push. to main",
        "Drop. Users table in production?",
        "Rotate. the API keys in production",
        "Tear down. the production cluster",
        "The users table: drop it? Yes.",
    ],
)
def test_other_verbs_across_a_break(text):
    assert classify(text).door == "one-way"


@pytest.mark.parametrize(
    "text",
    [
        "Drop the trailing comma. Then run the tests?",
        "Delete the unused import. Add a test?",
        "Rename the helper. Run the linter?",
    ],
)
def test_harmless_sentences_stay_two_way(text):
    assert classify(text).door == "two-way"


VERBS = {
    "en": "drop",
    "es": "borrar",
    "fr": "supprimer",
    "de": "löschen",
    "pt": "apagar",
    "it": "cancellare",
    "ru": "удалить",
    "zh": "删除",
    "ja": "削除して",
    "ko": "삭제",
}
OBJECTS = {
    "en": "the users table in production",
    "es": "la base de datos de producción",
    "fr": "la base de données de production",
    "de": "die Produktionsdatenbank",
    "pt": "o banco de dados de produção",
    "it": "il database di produzione",
    "ru": "производственную базу данных",
    "zh": "生产数据库",
    "ja": "本番データベース",
    "ko": "프로덕션 데이터베이스",
}
# Not paired: Chinese and Japanese (one script: a Chinese word in Japanese text is
# Japanese's to judge), and Spanish "borrar" in Portuguese text (a Portuguese word too).
APART = {("zh", "ja"), ("ja", "zh"), ("es", "pt")}
MIXED = [(v, o) for v in VERBS for o in OBJECTS if v != o and (v, o) not in APART]


@pytest.mark.parametrize(("verb", "obj"), MIXED)
def test_a_verb_of_one_language_pairs_with_an_object_of_another(verb, obj):
    for text in (VERBS[verb] + " " + OBJECTS[obj], OBJECTS[obj] + " " + VERBS[verb]):
        verdict = classify(text)
        assert verdict.door == "one-way", text
        assert verdict.reason.startswith("keyword:"), (text, verdict)


@pytest.mark.parametrize(
    "text",
    [
        "borrar the users table in production",
        "delete la base de données de production",
        "supprimer the prod database",
        "drop die Produktionsdatenbank",
        "删除 the production database",
        "本番 database を drop",
        "Should I borrar the users table?",
        "Quiero borrar. The production database, ok?",
    ],
)
def test_the_mixed_pairs_of_the_issue(text):
    assert classify(text).door == "one-way"


def test_explain_names_both_languages_of_a_mixed_pair():
    shown = explain("borrar the users table in production")
    assert shown["door"] == "one-way" and shown["language"] == "es+en", shown


@pytest.mark.parametrize(
    "text",
    [
        "我drop掉测试库里的临时表",
        "Cambio il testo del pulsante «Elimina account»?",
        "Should I pause the database migration tests?",
        "Quick question: ¿Borro el log viejo de mi máquina?",
    ],
)
def test_mixed_text_keeps_the_harmless_words_of_each_language(text):
    assert classify(text).door == "two-way"


@pytest.mark.parametrize(
    "text",
    [
        "don't forget to drop the prod table",
        "Do not skip this: drop the users table in production",
        "Never mind the tests, delete the production database",
        "不要忘记删除生产数据库",
        "ne pas oublier de supprimer la base de données de production",
    ],
)
def test_a_negation_nearby_never_quiets_a_danger(text):
    assert classify(text).door == "one-way"
