"""Door rules in every language, decoding before reading, and text the rules cannot read.

Each language's corpus (tests/fixtures/doors/<lang>/) was written for plantune by someone
who never saw the rules. The rules were tuned on the tune halves only; the holdout halves
were scored before any tuning and after it (benchmarks/RESULTS.md). Targets: recall 100%,
false alarms at most 10%.
"""

import json
import os

import pytest

from tests.helpers import REPO_ROOT
from toolkit.core.doors import RULE_NAMES, classify, explain, rules_version

FIXTURES = os.path.join(REPO_ROOT, "tests", "fixtures", "doors")
LANGS = ("en", "zh", "ja", "ko", "es", "fr", "de", "pt", "ru", "it")
FAMILIES = {
    "data-deletion",
    "history-rewrite",
    "production-deploy",
    "infrastructure-teardown",
    "credentials",
    "making-public",
    "mass-message",
    "money",
    "backups",
}
# The holdout halves' false alarms as last measured (benchmarks/RESULTS.md): none, in every
# language. A ceiling, so one that comes back fails here; the target is 10%.
HOLDOUT_FALSE_ALARM_CEILING = dict.fromkeys(LANGS, 0.0)


def _load(lang, half):
    with open(os.path.join(FIXTURES, lang, f"{half}.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _score(items):
    one = [i["text"] for i in items if i["door"] == "one-way"]
    two = [i["text"] for i in items if i["door"] == "two-way"]
    missed = [t for t in one if classify(t).door != "one-way"]
    alarms = [t for t in two if classify(t).door == "one-way"]
    return 1 - len(missed) / len(one), len(alarms) / len(two), missed, alarms


@pytest.mark.parametrize("lang", LANGS)
def test_each_corpus_has_both_halves_and_every_family(lang):
    items = _load(lang, "tune") + _load(lang, "holdout")
    one = [i for i in items if i["door"] == "one-way"]
    assert len(one) >= 40 and len(items) - len(one) >= 40
    assert FAMILIES <= {i["family"] for i in one}


@pytest.mark.parametrize("lang", LANGS)
def test_tune_half_recall_and_false_alarms(lang):
    recall, false_alarms, missed, alarms = _score(_load(lang, "tune"))
    assert recall == 1.0, missed
    assert false_alarms <= 0.10, alarms


@pytest.mark.parametrize("lang", LANGS)
def test_holdout_half_meets_the_target(lang):
    # Counts only: the holdout texts are never shown, so nobody tunes the rules on them.
    # Target: recall 100%, false alarms at most 10% (or the lower figure recorded).
    recall, false_alarms, missed, alarms = _score(_load(lang, "holdout"))
    assert recall == 1.0, f"{len(missed)} missed"
    ceiling = HOLDOUT_FALSE_ALARM_CEILING.get(lang, 0.10)
    assert false_alarms <= ceiling, f"{len(alarms)} false alarms"


def _own_phrasings():
    # Written alongside the rules (not held out): each family in each language, and
    # harmless edits, as a regression set.
    with open(os.path.join(FIXTURES, "rules_own_phrasings.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.mark.parametrize("item", _own_phrasings(), ids=lambda i: i["lang"] + ":" + i["text"][:30])
def test_own_phrasings_in_every_language(item):
    assert classify(item["text"]).door == item["door"], explain(item["text"])


@pytest.mark.parametrize(
    "text, language",
    [
        ("Supprimer la base de données de production ?", "fr"),
        ("Produktionsdatenbank löschen?", "de"),
        ("¿Borrar la tabla de usuarios?", "es"),
        ("删除生产数据库？", "zh"),
        ("本番データベースを削除しますか？", "ja"),
        ("Удалить таблицу users?", "ru"),
        ("운영 데이터베이스를 삭제할까요?", "ko"),
        ("Apagar o banco de dados de produção?", "pt"),
        ("Cancellare il database di produzione?", "it"),
    ],
)
def test_the_issue_examples_are_one_way_and_explain_names_the_language(text, language):
    assert classify(text).door == "one-way"
    out = explain(text)
    assert out["language"] == language
    assert out["rule"] and out["reason"] == "keyword:" + out["rule"]


@pytest.mark.parametrize(
    "text",
    [
        "D&#114;op the users table?",
        "D&#x72;op the users table?",
        "Drop&nbsp;the&nbsp;users&nbsp;table?",
        "Drop%20the%20users%20table%3F",
        "Dr%6Fp the users table?",
        "Dr<i></i>op the users table?",
        "Drop<br>the<br>users<br>table?",
        "Dr<!-- hidden -->op the users table?",
        "**Dr**op the users table?",
        "`Dr``op` the users table?",
        "Click [Drop the users table](https://example.com) now?",
        "D\\x72op the users table?",
        "Dr\\u006fp the users table?",
        "Dr\\op the users table?",
        "Drоp the users tаble?",  # Cyrillic о and а
        "D&amp;#114;op the users table?",  # an entity written as an entity
        "RHJvcCB0aGUgdXNlcnMgdGFibGU/",  # base64
        "Run this: Z2l0IHB1c2ggLS1mb3JjZSBvcmlnaW4gbWFpbg== (ok?)",  # base64 of a command
        "U3VwcHJpbWVyIGxhIGJhc2UgZGUgZG9ubsOpZXMgZGUgcHJvZHVjdGlvbg",  # URL-safe, no padding
    ],
)
def test_encodings_are_decoded_before_reading(text):
    assert classify(text).door == "one-way", explain(text)


@pytest.mark.parametrize(
    "text",
    [
        "Pin the commit 3f5e2a9c1b7d4e6f8a0b2c4d6e8f0a1b2c3d4e5f in the lockfile?",
        "Use the test token eyJhbGciOiJIUzI1NiJ9 in the fixture?",
        "Rename getUserAccountSettingsHandler to handleSettings?",
        "Add the /api/v1/users/preferences/notifications endpoint?",
        "Keep the image as data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB in the test?",
    ],
)
def test_long_names_hashes_and_binary_base64_are_not_read_as_text(text):
    assert classify(text).door == "two-way", explain(text)


@pytest.mark.parametrize(
    "text",
    [
        "هل أحذف قاعدة البيانات الآن؟",  # Arabic
        "क्या मैं प्रोडक्शन डेटाबेस हटा दूँ?",  # Hindi
        "ลบฐานข้อมูลการผลิตไหม",  # Thai
        "למחוק את מסד הנתונים של הייצור?",  # Hebrew
        "Να διαγράψω τη βάση δεδομένων;",  # Greek
        "Usunąć produkcyjną bazę danych?",  # Polish: letters no ruled language uses
        "Verwijder de productiedatabase en alle back-ups van de klanten?",  # Dutch
        "Üretim veritabanını silmek istiyor musun?",  # Turkish
        "%D9%87%D9%84 %D8%A3%D8%AD%D8%B0%D9%81 %D9%82%D8%A7%D8%B9%D8%AF%D8%A9?",  # encoded
        "ᚠᛖᚱᛊ ᛏᚺᛖ ᛒᚨᛊᛖ ᚹᛁᛏᚺ ᛗᛖ",  # runes
        "ДЖЖ ψψψ ㄱㄴㄷ ღღ ⴰⴱⴳ",  # mixed scripts, no language
        "asdkjh qwe zxcmn vbnm",  # gibberish: no function word, unpronounceable
    ],
)
def test_text_in_scripts_or_languages_without_rules_is_unreadable(text):
    verdict = classify(text)
    assert verdict == ("one-way", "unreadable-language"), explain(text)
    assert explain(text)["problem"]


@pytest.mark.parametrize(
    "text",
    [
        "Polish the changelog voice?",
        "Ship it?",
        "OK?",
        "Rename getUserById to fetchUser?",
        "run ./scripts/build.sh --flag=2 v1.2.3",
        "Bump lodash from 4.17.20 to 4.17.21?",
        "src/app/main.py:42",
        "1234 5678",
        "Use café-style naming in the README?",
        "Add the naïve résumé parser?",
        "npm pnpm yarn bun",
        "Bump eslint prettier vitest",
    ],
)
def test_ordinary_english_code_and_numbers_stay_readable(text):
    assert classify(text) == ("two-way", "no-match"), explain(text)


@pytest.mark.parametrize(
    "text",
    [
        "Delete the empty line at the end of the file?",
        "Overwrite the snapshot file for the updated test?",
        "Revert my local uncommitted change?",
        "Recommendation: accept (cheap, easy to delete)",
        "There's a trailing blank line at the bottom of `config.yaml`. Delete it?",
        "`lodash` is imported but never used in this file. Drop it?",
        "Drop support for Node 14 in the package.json engines field?",
        "Nuke node_modules and reinstall?",
        "Overwrite the generated types file with the new codegen output?",
        "Remove the deprecated `oldFormat` option from the CLI help text?",
        "Drop the temp table in my local SQLite test DB?",
    ],
)
def test_harmless_edits_stay_two_way(text):
    assert classify(text).door == "two-way", explain(text)


@pytest.mark.parametrize(
    "text",
    [
        "Revert main to last week's state and push?",
        "Make the repo visible to the world?",
        "Put the private SSH key for the prod servers on the wiki?",
        "Nuke the node_modules and the Postgres volume?",
        "Delete the empty line and the users table?",
    ],
)
def test_english_paraphrases_without_the_usual_verbs_are_one_way(text):
    assert classify(text).door == "one-way", explain(text)


def test_long_text_with_options_is_read_whole():
    text = "\n".join(
        ["Which cleanup should I run now?", "A) Tidy the imports", "B) Vider la table des clients"]
    )
    assert explain(text)["language"] == "fr"


def test_the_rules_version_hashes_the_language_data():
    version = rules_version()
    assert len(version) == 12 and version == rules_version()


def test_data_files_are_toml_read_exactly_as_tomllib_reads_them():
    import tomllib

    from toolkit.core.door_data import data_files, read_data

    for path in data_files():
        with open(path, "rb") as f:
            raw = f.read()
        assert read_data(raw.decode("utf-8"), path) == tomllib.loads(raw.decode("utf-8")), path


@pytest.mark.parametrize(
    "text",
    ['key = "a\\"b"', "key = {inline = 1}", "key = 1.5", "just words", 'a = "x"\na = "y"'],
)
def test_the_data_reader_refuses_what_it_does_not_read(text):
    from toolkit.core.door_data import read_data

    with pytest.raises(ValueError):
        read_data(text)


def test_data_files_hold_entries_folded_as_text_is():
    # The engine loads entries as written (no Unicode work per process): each must be in
    # the form the text is folded to, or it would never match.
    import tomllib

    from toolkit.core.door_data import data_files
    from toolkit.core.door_engine import folded_entry
    from toolkit.core.door_reader import words

    for path in data_files():
        with open(path, "rb") as f:
            data = tomllib.load(f)
        by_words = data.get("match") == "words"
        for family, entries in data.get("families", {}).items():
            if by_words:  # entries are words as the reader splits text
                odd = [e for e in entries if e not in ("#version", "$") and " ".join(words(e)) != e]
            else:
                odd = [e for e in entries if folded_entry(e) != e]
            assert odd == [], (path, family)
        known = set(data.get("families", ())) | set(data.get("sets", ()))
        for rule in data.get("rules", ()):
            assert rule["rule"] in RULE_NAMES, (path, rule)  # one vocabulary of rule names
            for key in (
                "any",
                "verbs",
                "objects",
                "weak",
                "then",
                "referent",
                "free",
                "passive",
                "harmless",
                "direct_unless",
                "next",
                "unless_after",
                "unless_before",
                "unless_between",
                "verb_unless_after",
                "pronouns",
            ):
                names = rule.get(key, ())
                for name in [names] if isinstance(names, str) else names:
                    assert name in known, (path, rule)


# --- languages without rules (issue 26, point 3) -------------------------------------------

UNRULED = os.path.join(FIXTURES, "unruled.jsonl")


def _unruled():
    with open(UNRULED, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_the_unruled_corpus_covers_many_languages_both_kinds_and_labels():
    rows = _unruled()
    langs = {r["language"] for r in rows}
    assert len(langs) >= 12 and not langs & set(LANGS)
    for lang in langs:
        asks = {r["asks"] for r in rows if r["language"] == lang}
        assert asks == {"one-way", "two-way"} or lang in ("da", "nb"), lang
    assert sum(r["kind"] == "label" for r in rows) >= 20


@pytest.mark.parametrize("row", _unruled(), ids=lambda r: f"{r['language']}-{r['text'][:24]}")
def test_text_in_a_language_without_rules_is_never_two_way_on_first_sight(row):
    # Dangerous or harmless, a question or an option label: plantune cannot tell, so it
    # is one-way, by a rule that still fires or because it cannot be read.
    verdict = classify(row["text"])
    assert verdict.door == "one-way", explain(row["text"])
    assert verdict.reason == "unreadable-language" or verdict.reason.startswith("keyword:")


@pytest.mark.parametrize("row", _unruled(), ids=lambda r: f"{r['language']}-{r['text'][:24]}")
def test_an_unruled_option_label_makes_a_harmless_english_question_one_way(row):
    # The whole question is read: an unreadable option is enough.
    whole = "\n".join(["Which of these should I do next?", "Next step", row["text"], "Skip"])
    assert classify(whole).door == "one-way", explain(whole)


def _tuned_harmless():
    for lang in LANGS:
        with open(os.path.join(FIXTURES, lang, "tune.jsonl"), encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                if row["door"] == "two-way":
                    yield lang, row["text"]


@pytest.mark.parametrize("lang,text", list(_tuned_harmless()))
def test_harmless_text_in_a_ruled_language_is_never_called_unreadable(lang, text):
    assert classify(text).reason != "unreadable-language", explain(text)


@pytest.mark.parametrize(
    "text",
    [
        "Skip",
        "Fix now",
        "Ship it",
        "Yes",
        "No",
        "Defer",
        "Accept risk",
        "Hold scope",
        "Rename var",
        "Game over",
        "Door rules",
        "Take care",
        "Omitir",  # es
        "Jetzt beheben",  # de
        "Annuler",  # fr
        "Pular",  # pt
        "Salta",  # it
        "Пропустить",  # ru
        "跳过",  # zh
        "スキップ",  # ja
        "건너뛰기",  # ko
    ],
)
def test_short_labels_in_english_and_the_ruled_languages_stay_readable(text):
    assert classify(text).reason != "unreadable-language", explain(text)


@pytest.mark.parametrize(
    "text",
    [
        "Alles%20verwijderen",
        "RADERA ALLT!!!",
        "B) Radera allt",
        "Hapus&nbsp;semua&nbsp;data",
        "**Poista** kaikki",
        "Radera allt (Recommended)",
        "Which cleanup should I run now?\nCleanup\nA) Tidy the imports\nB) Alles verwijderen",
    ],
)
def test_an_unruled_label_hidden_by_encodings_or_markers_is_still_unreadable(text):
    assert classify(text) == ("one-way", "unreadable-language"), explain(text)


# --- sentence ends and the language gate -------------------------------------------------

SENTENCE_BREAKS = [". ", "\u2029", "\u2028", "\x1c", "\x1d", "\x1e", "\x85", "\n"]


@pytest.mark.parametrize("brk", SENTENCE_BREAKS)
def test_a_harmless_word_in_another_sentence_hides_no_danger(brk):
    # "test" quiets the weak object "branche" in its own sentence only.
    assert classify("Supprimer la branche release et ajouter un test ?").door == "two-way"
    text = f"Supprimer la branche release{brk}Ajouter un test ?"
    assert classify(text).door == "one-way", (brk, explain(text))


@pytest.mark.parametrize("brk", SENTENCE_BREAKS[1:])
def test_a_sentence_break_never_splits_a_verb_from_its_object(brk):
    # The separators white-space splitting reads as spaces, and line ends: an invisible
    # break put between a verb and its object reads as a space would.
    for text in (
        f"Supprimer{brk}la base de données de production ?",
        f"Vider{brk}la table des clients ?",
        f"Drop{brk}the users table?",
        f"Borrar{brk}la base de datos de producción?",
    ):
        assert classify(text).door == "one-way", (brk, text, explain(text))


@pytest.mark.parametrize(
    "text, lang",
    [
        ("Should I supprimer the production database?", "fr"),
        ("Please review the docs first. Borrar la tabla de usuarios?", "es"),
        ("Quick one for the team: Produktionsdatenbank löschen?", "de"),
        ("Can we just apagar o servidor de produção now?", "pt"),
        ("Then please cancellare il database di produzione?", "it"),
    ],
)
def test_one_foreign_phrase_in_an_english_question_loses_no_door(text, lang):
    # Read by the foreign language's rules (or a close one's: Spanish reads "apagar").
    shown = explain(text)
    assert shown["door"] == "one-way" and shown["language"] not in (None, "en"), shown


def test_the_language_gates_are_the_verbs_of_each_language_file():
    # The gate may only skip a language none of whose rules could fire: it must list the
    # first word of every verb entry, exactly as derived from the language's file.
    from toolkit.core.door_data import load
    from toolkit.core.door_engine import gate_keys

    gates = load("languages.toml")["gates"]
    for code in ("es", "fr", "de", "pt", "it"):
        assert gates[code] == gate_keys(load(f"{code}.toml")), code


def test_the_english_word_rules_know_their_longest_entry():
    from toolkit.core.door_data import load

    data = load("en-words.toml")
    longest = max(e.count(" ") + 1 for f in data["families"].values() for e in f)
    assert data["words"]["longest"] == longest


# --- pronoun objects and the text's own language ------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Le cluster Kubernetes de production ne sert plus. Je le supprime ?",
        "Le bucket des sauvegardes hors site coûte cher. Je le vide ?",
        "Les instances EC2 de prod tournent depuis 2018. Tu veux que je les arrête ?",
        "Die Produktionsdatenbank ist voll. Soll ich sie leeren?",
        "Im Compliance-Bucket liegen noch Audit-Logs. Werfen wir die weg?",
        "Продовый кластер Kubernetes обслуживает один сервис. Снести его?",
        "Ежедневные выгрузки базы в S3 никому не нужны. Остановить их?",
    ],
)
def test_a_pronoun_stands_for_the_durable_object_named_before(text):
    assert classify(text).door == "one-way", explain(text)


@pytest.mark.parametrize(
    "text",
    [
        "Je le supprime ?",
        "La branche locale `feature/login` est déjà fusionnée. Je la supprime ?",
        "La fonction `old_parse` n'est plus appelée. Je la supprime ?",
        "Der Ordner `dist/` wird bei jedem Build neu erzeugt. Soll ich ihn löschen?",
        "Die Funktion `old_parse` wird nicht mehr aufgerufen. Soll ich sie entfernen?",
        "Папка `dist/` пересоздаётся при каждой сборке. Удалить её?",
        "Комментарий над классом устарел. Убрать его?",
    ],
)
def test_a_pronoun_for_a_weak_or_harmless_object_stays_two_way(text):
    assert classify(text).door == "two-way", explain(text)


# --- confirming a deletion by typing a name ----------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Should I type the repo name to confirm deleting it?",
        "Confirm deletion?",
        "Should I enter the database name in the confirmation field?",
        "Paste the cluster name to confirm?",
        "¿Tecleo el nombre de la cuenta para confirmar?",
        "Je saisis le nom du bucket pour confirmer ?",
        "Soll ich den Clusternamen zur Bestätigung eingeben?",
        "Digito o nome da conta para confirmar?",
        "Inserisco il nome del cluster per confermare?",
        "Confermo digitando il nome del repo?",
        "Je confirme en tapant le nom du dépôt ?",
        "Вписать имя кластера для подтверждения?",
        "为了确认，要输入集群名吗？",
        "確認のためにクラスター名を入力しますか？",
        "확인을 위해 클러스터 이름을 입력할까요?",
    ],
)
def test_typing_a_stores_name_to_confirm_is_one_way(text):
    # The step a product puts before what it cannot undo (deleting, transferring a repo):
    # the pronoun after "the repo name" is the repo, and the typed name is the gate.
    assert classify(text).door == "one-way", explain(text)


@pytest.mark.parametrize(
    "text",
    [
        "Type the branch name to check it out?",
        "Type your name to confirm the booking?",
        "Type check the app to confirm it compiles?",
        "Paste the database URL to confirm it connects?",
        "Style the confirm delete button?",
        "Add a confirm delete dialog that asks for the repo name?",
        "Escribe tu nombre para confirmar la reserva?",
        "Soll ich meinen Namen eingeben, um die Anmeldung zu bestätigen?",
        "入力したプロジェクト名が正しいか確認しますか？",
        "输入手机号确认注册？",
        "입력한 프로젝트 이름이 맞는지 확인할까요?",
    ],
)
def test_typing_a_name_for_anything_else_stays_two_way(text):
    assert classify(text).door == "two-way", explain(text)


def test_german_text_is_not_read_by_romance_rules_on_shared_function_words():
    # "in" is Italian too: the text is German, and German's rules find it harmless.
    text = "Soll ich die temporäre Tabelle in der lokalen SQLite-Testdatenbank droppen?"
    assert classify(text).door == "two-way", explain(text)
    # A Romance verb beside a German object is still read, as a mix.
    shown = explain("Soll ich eliminare die Produktionsdatenbank?")
    assert shown["door"] == "one-way" and shown["language"] == "it+de", shown


@pytest.mark.parametrize(
    "text,door",
    [
        # A harmless word qualifies the noun it names and the nouns joined to it.
        ("テスト用DBのデータをリセットしますか？", "two-way"),
        ("一時的に作ったテスト用のS3バケットを削除しますか？", "two-way"),
        # A conjunction, a comma or another sentence keeps the second noun apart.
        ("テスト用DBと本番DBのデータをリセットしますか？", "one-way"),
        ("テスト用DB、顧客データを削除しますか？", "one-way"),
        ("测试库和生产库的数据都清空吗？", "one-way"),
        ("把生产库和测试库都清空？", "one-way"),
        ("把测试库，生产库都清空？", "one-way"),
        ("把 mock 服务器关掉？", "two-way"),
        ("把生产库，测试库都清空？", "one-way"),
        ("本番DB、テスト用DBを削除しますか？", "one-way"),
        ("테스트, 운영 DB 삭제할까요?", "one-way"),
        ("테스트、운영 DB 삭제할까요?", "one-way"),
        # A noun inside a harmless word qualifies nothing: ログ in ログイン.
        ("Elasticsearchのログインデックスを全部消しますか？", "one-way"),
    ],
)
def test_a_harmless_word_qualifies_the_nouns_joined_to_it_and_no_other(text, door):
    assert classify(text).door == door, explain(text)


@pytest.mark.parametrize(
    "text, door",
    [
        ("¿Envío el aviso a los 45.000 clientes?", "one-way"),
        ("¿Mando el correo a 8000 suscriptores?", "one-way"),
        ("¿Envío el correo a los 3 usuarios de la demo?", "two-way"),
        ("Disparo o e-mail para 12k usuários?", "one-way"),
        ("Envio o e-mail para os 2 usuários do teste?", "two-way"),
        ("Spedisco la comunicazione a 30.000 abbonati?", "one-way"),
        ("Invio il messaggio ai 250.000 utenti?", "one-way"),
        ("Invio il messaggio ai 12 utenti del gruppo?", "two-way"),
    ],
)
def test_a_count_of_a_thousand_recipients_or_more_is_an_audience(text, door):
    # An entry ``#word`` matches the word right after a count of at least a thousand.
    assert classify(text).door == door, explain(text)


@pytest.mark.parametrize(
    "text, door",
    [
        ("¿Añado un test para la función de reembolsos?", "two-way"),
        ("¿Hago el reembolso de los 87 pedidos duplicados?", "one-way"),
        ("Adiciono um teste para a função de reembolsos?", "two-way"),
        ("Faço o estorno das 40 compras em dobro?", "one-way"),
        ("Aggiungo un test per la funzione dei rimborsi?", "two-way"),
        ("Rimborso gli 87 ordini duplicati?", "one-way"),
    ],
)
def test_a_word_enough_alone_is_quiet_when_a_harmless_word_qualifies_it(text, door):
    # An ``any`` rule with ``unless``: the code around a refund is no refund.
    assert classify(text).door == door, explain(text)


@pytest.mark.parametrize(
    "text, door",
    [
        (
            "Tenemos un servidor de producción viejo que aún sirve la API antigua. ¿Lo tiro?",
            "one-way",
        ),
        ("La carpeta build ocupa mucho. ¿La borro?", "two-way"),
        ("Temos um servidor de produção velho que ainda serve a API antiga. Derrubo?", "one-way"),
        ("O contêiner de teste está parado. Removo?", "two-way"),
        (
            "Abbiamo un server di produzione che serve ancora la vecchia API. Lo butto giù?",
            "one-way",
        ),
        ("Il file temporaneo non serve più. Lo elimino?", "two-way"),
    ],
)
def test_a_verb_aimed_at_a_pronoun_reads_the_object_named_before(text, door):
    # ``pronouns``: a verb next to a pronoun, or alone in a short sentence, reaches back.
    assert classify(text).door == door, explain(text)


@pytest.mark.parametrize(
    "text,door",
    [
        ("把 refundAmount 这个变量改名成 refundTotal？", "two-way"),
        ("BillingServiceのhandleRefundメソッドを2つに分けますか？", "two-way"),
        ("deleteUser 함수에 단위 테스트를 추가할까요?", "two-way"),
        ("给 sendWelcomeEmail 函数加一行注释？", "two-way"),
        # A text that runs the code it names reads the name as its words.
        ("执行 dropDatabase 函数吗？", "one-way"),
        ("dropAllTables関数を実行しますか？", "one-way"),
        ("dropAllTables 함수를 지금 호출할까요?", "one-way"),
        # A name no code noun stands by is still read as its words.
        ("现在 dropDatabase 一下？", "one-way"),
        # snake_case names too.
        ("handle_refund 函数要不要拆开？", "two-way"),
        ("refund_amountカラムの型をdecimalにしますか？", "two-way"),
        ("执行 drop_all_tables 函数？", "one-way"),
        ("운영에서 drop_all_tables 함수를 실행할까요?", "one-way"),
    ],
)
def test_a_code_name_in_cjk_prose_named_as_code_is_read_whole(text, door):
    assert classify(text).door == door, explain(text)


@pytest.mark.parametrize(
    "text, door",
    [
        ("¿Cambio el texto del botón 'Pagar ahora' por 'Confirmar pago'?", "two-way"),
        ("Cambio il testo del pulsante 'Paga ora' in 'Conferma pagamento'?", "two-way"),
        ("¿Pago la factura de 3.000 € al proveedor?", "one-way"),
        ("Renomeio a classe CobrancasService para PagamentosService?", "two-way"),
        ("Renomeio CobrancasService e apago a tabela de clientes?", "one-way"),
        ("¿Le paso la base de clientes al proveedor?", "one-way"),
        ("Passo os dados dos clientes para o parceiro?", "one-way"),
        ("¿Le pido al proveedor la documentación de su API?", "two-way"),
    ],
)
def test_button_labels_code_names_and_data_handed_out(text, door):
    # A verb right after a button word is its label; a camelCase class name is no verb;
    # personal data handed to a vendor or partner is one-way.
    assert classify(text).door == door, explain(text)


@pytest.mark.parametrize(
    "text,door",
    [
        ("退款按钮的文案改成“申请退款”？", "two-way"),
        ("返金ボタンの文言を「返金を申請」に変えますか？", "two-way"),
        ('환불 버튼 문구를 "환불 신청"으로 바꿀까요?', "two-way"),
        ("要不要在退款页面加一个加载动画？", "two-way"),
        # Further from the label, or elsewhere, a money word is the text's own again.
        ("文案改好以后，给所有客户退款？", "one-way"),
        ("把退款按钮的文案改成“确认退款”，然后给这 300 个客户全部退款？", "one-way"),
        ("ボタンの文言を変えたら、全ユーザーに返金しますか？", "one-way"),
        ("버튼 문구 바꾸고 나서 고객 전원에게 환불할까요?", "one-way"),
        ("在退款页面给所有客户退款？", "one-way"),
        # A label word alone sets no wording; an action right after a label is an action.
        ("标题：给所有客户退款？", "one-way"),
        ("文案写好了，退款给所有客户吗？", "one-way"),
        ("文案改成后退款给所有人？", "one-way"),
        ("タイトル：全員に返金しますか？", "one-way"),
        ("제목: 고객 전원 환불할까요?", "one-way"),
        ("문구를 고치고 환불할까요?", "one-way"),
    ],
)
def test_a_money_word_in_a_label_s_wording_sends_no_money(text, door):
    assert classify(text).door == door, explain(text)


@pytest.mark.parametrize(
    "text, door",
    [
        ("¿Despliego en producción? En local funcionó.", "one-way"),
        ("Faço deploy em produção? No meu computador funcionou.", "one-way"),
        ("Faccio il deploy in produzione? In locale funziona.", "one-way"),
        ("¿Borro el fichero .env.example que sobra?", "two-way"),
        ("Apago o arquivo .DS_Store?", "two-way"),
    ],
)
def test_a_harmless_word_qualifies_only_its_own_sentence(text, door):
    assert classify(text).door == door, explain(text)


@pytest.mark.parametrize(
    "text,door",
    [
        ("테스트 DB 데이터 초기화할까요?", "two-way"),
        ("로컬 테스트 서버 로그 파일 지울까요?", "two-way"),
        ("운영 DB 데이터 지울까요?", "one-way"),
        ("테스트 DB, 운영 DB 데이터 다 지울까요?", "one-way"),
        ("테스트 DB 운영 데이터 지울까요?", "one-way"),
    ],
)
def test_korean_nouns_spaced_into_one_compound_share_its_harmless_word(text, door):
    assert classify(text).door == door, explain(text)


@pytest.mark.parametrize(
    "text, door",
    [
        ("¿Hago rollback de la migración en mi base local?", "two-way"),
        ("Faço rollback da migration no meu banco local?", "two-way"),
        ("¿Hago rollback en producción? En local funcionó.", "one-way"),
        ("¿Hago rollback del deploy de producción?", "one-way"),
        ("Faço merge da minha branch na develop?", "two-way"),
        ("Faço merge da minha branch na main?", "one-way"),
        ("¿Hago merge a main desde mi máquina local?", "one-way"),
        ("Faccio merge del mio branch su main?", "one-way"),
        ("Faccio merge sul mio main locale?", "two-way"),
    ],
)
def test_english_words_in_spanish_portuguese_and_italian_text(text, door):
    # A possessive reads as "my", a preposition of direction as "to"; a lone English
    # "rollback" in a one-sentence text naming a local place is left to the language.
    assert classify(text).door == door, explain(text)


@pytest.mark.parametrize(
    "text, door",
    [
        ("¿Elimino el import que no se usa en `pagos.py`?", "two-way"),
        ("¿Borro clientes.db?", "one-way"),
        ("¿Elimino usuarios.sql del servidor de producción?", "one-way"),
    ],
)
def test_a_source_file_name_is_no_word(text, door):
    assert classify(text).door == door, explain(text)


@pytest.mark.parametrize(
    "text",
    [
        "Click the 'Delete production database' button now?",
        "Click the `Delete production database` button?",
        "Press the “Send to all customers” button?",
        "Soll ich auf den Button „Produktionsdatenbank löschen“ klicken?",
        "J'appuie sur « Supprimer tous les comptes » ?",
        "¿Pulso 'Borrar todos los clientes'?",
        "Clico em 'Apagar todos os clientes'?",
        "Premo 'Elimina tutti i clienti'?",
        "Нажать «Удалить все заказы»?",
        "点击“删除所有用户数据”？",
        "「本番DBを削除」をクリックしますか？",
        "'운영 DB 삭제'를 클릭할까요?",
    ],
)
def test_a_pressed_label_does_what_it_says(text):
    # Clicking a button does what its label says, however harmless "button" reads.
    assert classify(text).door == "one-way", explain(text)


@pytest.mark.parametrize(
    "text",
    [
        "Click 'Delete' to remove the draft?",  # one word names no object
        "Click the 'Save draft' button?",
        "Click the 'Remove filter' button?",
        "Rename the button 'Delete draft' to 'Discard draft'?",  # nothing pressed
    ],
)
def test_a_pressed_harmless_label_stays_two_way(text):
    assert classify(text).door == "two-way", explain(text)
