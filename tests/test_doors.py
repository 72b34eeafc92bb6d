"""The door classifier: normalisation, rule families, hostile input, question-level decisions.

The corpus (recall / false alarms) is in test_doors_corpus.py; sticky facts, the audit and
every caller (check, hooks, pacing, guidance, registry sync) are in test_doors_sticky.py.
"""

import itertools
import subprocess
import sys

import pytest

from toolkit.core import doors
from toolkit.core.doors import (
    SKILL_CATEGORY_ONE_WAY,
    Classification,
    Verdict,
    bundled_door_types,
    canonical_id,
    classify,
    decide,
    explain,
    is_one_way,
    load_bundled_registry,
    normalise,
)

VERBS = ["revoke", "reset", "rotate"]
NOUNS = ["api key", "token", "secret", "credential", "access key", "password"]


def one_way(text):
    return classify(text).door == "one-way"


# --- the API --------------------------------------------------------------------


def test_classify_returns_door_and_reason():
    door, reason = classify("Drop the users table?")
    assert (door, reason) == ("one-way", "keyword:sql-destructive")
    assert classify("Rename the helper?") == Verdict("two-way", "no-match")
    assert all(
        reason.startswith("keyword:") and reason[8:] in doors.RULE_NAMES
        for _, reason in [classify(t) for t in ("wipe it", "rollback", "publish")]
    )


def test_rule_names_are_stable_and_kebab():
    assert doors.RULE_NAMES == (
        "irreversible-wording",
        "sql-destructive",
        "filesystem-destructive",
        "history-rewrite",
        "infra-teardown",
        "rollback",
        "production-deploy",
        "publish-release",
        "credentials",
        "security-posture",
        "data-model",
        "outbound-action",
        "destructive-verb",
        "remove-durable",
    )


def test_explain_shows_decision_rule_and_normalised_text():
    out = explain("  Dr\u200bop   the ＵＳＥＲＳ\ttable?  ")
    assert out == {
        "door": "one-way",
        "reason": "keyword:sql-destructive",
        "rule": "sql-destructive",
        "language": "en",
        "normalised": "drop the users table?",
    }
    assert explain("Rename it")["reason"] == "no-match"


# --- the examples ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Drop the users table?",
        "git push -f to overwrite the remote history?",
        "Remove the email column from the users table?",
        "Make the S3 bucket public?",
        "Disable two-factor authentication for the admin accounts?",
        "chmod -R 777 /var/www on the web server?",
        "Publish version 2.0.0 to npm?",
        "Roll back the deploy?",
    ],
)
def test_readme_examples_are_one_way(text):
    assert one_way(text)


@pytest.mark.parametrize(
    "text",
    [
        "drop the trailing comma",
        "delete the unused import",
        "reset the form fields",
        "truncate long titles",
        "force the dark theme",
        "purge the CDN cache",
    ],
)
def test_harmless_uses_of_dangerous_verbs_stay_two_way(text):
    assert classify(text) == Verdict("two-way", "no-match")


def test_whole_text_is_read():
    assert one_way("x" * 1200 + " drop table users")
    assert one_way("Some padding. " * 300 + "Then force push to main?")
    assert not one_way("Some padding. " * 300 + "Then rename the helper?")


# --- normalisation and look-alikes ----------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "dr\u200bop table users",  # zero-width space inside a word
        "drop\u200btable users",  # ...or standing for the space
        "dro\u200dp ta\u200cble users",  # joiners
        "dr\u00adop table users",  # soft hyphen
        "dr\u043ep t\u0430ble users",  # Cyrillic o and a
        "\u0440ush --force to main",  # Cyrillic er
        "DR\u039fP TABLE users",  # Greek capital omicron
        "ｄｒｏｐ ｔａｂｌｅ users",  # full-width (NFKC)
        "𝐝𝐫𝐨𝐩 𝐭𝐚𝐛𝐥𝐞 users",  # mathematical bold (NFKC)
        "dróp tàble users",  # accents
        "d\u0336r\u0336o\u0336p table",  # combining strike-through
        "ᴅʀᴏᴘ ᴛᴀʙʟᴇ users",  # small capitals
        "drop\u00a0table\u2028users",  # odd spaces
        "DROP\tTABLE\nusers",
        "drop_table users",  # underscores read as spaces
        "drop\x07table users",  # control character
    ],
)
def test_hidden_and_look_alike_letters_are_read(text):
    assert one_way(text), normalise(text)


def test_normalise():
    assert normalise("  A\u200bB  \t C\u0301 ") == "ab c"
    assert normalise("ＰＵＳＨ") == "push"
    assert normalise("\u0440\u0430ss_word") == "pass word"


# --- bad input fails safe -----------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "delete\udc80 nothing",
        "\ud800",
        "rename\x00 the helper",
        b"\xff\xfe rename",
        b"rename \xc3(",
        None,
        42,
        ["drop"],
        object(),
    ],
)
def test_unreadable_input_is_one_way(bad):
    assert classify(bad) == Verdict("one-way", "unreadable")


def test_bytes_are_decoded():
    assert classify("Drop the users table?".encode()) == classify("Drop the users table?")
    assert classify("rename it".encode()) == Verdict("two-way", "no-match")
    assert explain(b"\xff")["problem"] == "invalid UTF-8"


def test_huge_input_does_not_crash():
    # Longer than the rules read in time (doors.READ_LIMIT): one-way unread, at once.
    assert classify("word " * 200_000) == ("one-way", "unreadable")
    assert classify("word " * 200_000 + "rm -rf /").door == "one-way"
    assert classify("word " * 10_000).door == "two-way"


# --- rule families generalise (phrasings not in the corpus) -------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # destructive verbs x durable objects, both voices, inflections
        "we're dropping the invoices table",
        "the audit logs will be purged tonight",
        "truncated rows cannot come back",
        "erasing user data for closed accounts",
        "remove the backups bucket",
        "getting rid of the old namespace",
        # history rewriting, every spelling
        "force-pushed to release",
        "forcepush main",
        "git push origin +main",
        "git push -uf",
        "reset --hard to yesterday",
        "git clean -fd",
        "rewrite the published commits",
        # infrastructure
        "terraform apply -destroy",
        "kubectl -n prod delete deploy api",
        "docker system prune",
        "decommissioning the EU cluster",
        "shut down the service for good",
        # deploys, rollbacks, releases
        "deploy to production",
        "release v4.0.0",
        "rolled back the release",
        "npm publish",
        # credentials and security posture
        "revoke the tokens",
        "rotating credentials",
        "turn off the WAF",
        "make it public",
        "grant alice admin access",
        "chmod o+w /srv",
        "world-writable upload dir",
        # data-model forks and outbound actions
        "change the primary key",
        "switching from Postgres to DynamoDB",
        "backfill created_at",
        "email all customers",
        "refund the order",
        "cancel their subscription",
        "transfer the domain",
    ],
)
def test_rule_families(text):
    assert one_way(text), text


@pytest.mark.parametrize(
    "text",
    [
        "rename the variable",
        "add a unit test",
        "drop support for a deprecated flag",
        "remove the debug print",
        "reset the counter on reload",
        "clear the search box",
        "rotate the log files nightly",
        "revoke the meeting invite",
        "reset the flaky test runner",
        "Want to update the changelog voice?",
        "Which mode should plan review use?",
        "Open the essay in your browser?",
        "add an index on the deleted_at column",
        "make the helper method public",
        "deploy the preview to staging",
    ],
)
def test_ordinary_work_is_two_way(text):
    assert not one_way(text), classify(text)


# --- gstack's credential cases still hold (upstream tests 132-139) --------------------------


@pytest.mark.parametrize("verb,noun,plural", list(itertools.product(VERBS, NOUNS, [0, 1])))
def test_every_verb_noun_plural(verb, noun, plural):
    assert one_way(f"{verb} the production {noun}{'s' if plural else ''}")
    assert one_way(f"{verb} my {noun}")


@pytest.mark.parametrize(
    "text",
    [
        "rotate the database password",
        "rotate the credentials",
        "revoke all tokens",
        "reset the passwords",
        "Should I reset my secrets now?",
    ],
)
def test_credential_phrases(text):
    assert classify(text) == Verdict("one-way", "keyword:credentials")


@pytest.mark.parametrize(
    "text",
    [
        "Delete this directory and all its contents?",
        "Run rm -rf /tmp/scratch — proceed?",
        "Force-push main?",
        "git reset --hard origin/main — ok?",
        "DROP TABLE users — confirm?",
        "kubectl delete namespace prod",
        "terraform destroy the staging cluster",
        "rotate the API key",
        "breaking change to the public API — ship anyway?",
    ],
)
def test_gstack_keyword_cases(text):
    assert one_way(text)


# --- question-level decisions ---------------------------------------------------------------


def test_registry_by_canonical_id():
    for qid in (
        "ship-test-failure-triage",
        "SHIP-TEST-FAILURE-TRIAGE",
        " ship_test_failure_triage ",
        "ship\u200b-test-failure-triage",
    ):
        assert decide(qid) == Classification(True, "registry")
    assert decide("ship-changelog-voice-polish") == Classification(False, "registry")


def test_registered_two_way_id_with_destructive_summary_is_one_way():
    # gstack lets the registered two-way id decide alone; plantune reads the text too.
    c = decide("ship-changelog-voice-polish", summary="delete everything, rm -rf /")
    assert c.one_way and c.reason.startswith("keyword:")


def test_unreadable_summary_makes_the_question_one_way():
    assert decide("ship-changelog-voice-polish", summary=b"\xff") == Classification(
        True, "unreadable", None
    )


@pytest.mark.parametrize("skill", ["cso", "land-and-deploy"])
def test_skill_category(skill):
    assert decide(skill=skill, category="approval") == Classification(True, "skill-category")
    assert SKILL_CATEGORY_ONE_WAY == {"cso:approval", "land-and-deploy:approval"}


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"summary": ""},
        {"question_id": ""},
        {"summary": None},
        {"skill": "cso", "category": "routing"},
    ],
)
def test_nothing_one_way_given(kwargs):
    assert decide(**kwargs) == Classification(False, "default-two-way")


def test_custom_registry_mapping():
    reg = {"x-one": "one-way", "x-two": "two-way", "X_Entry": {"door_type": "one-way"}}
    assert decide("x-one", registry=reg).one_way
    assert decide("X_ONE", registry=reg).one_way
    assert decide("x-entry", registry=reg).one_way
    assert decide("x-two", registry=reg) == Classification(False, "registry")
    assert decide("ship-test-failure-triage", registry={}).reason == "default-two-way"


def test_a_registry_changed_in_place_is_read_again():
    reg = {"Y_Entry": "two-way", "y-entry": "one-way"}
    assert decide("Y-ENTRY.", registry=reg).one_way  # "y-entry" itself, as canonical id
    reg = {"Y_Entry": "two-way", "Y__ENTRY": "one-way"}
    assert decide("y entry", registry=reg) == Classification(False, "registry")  # first key wins
    reg["Y_Entry"] = "one-way"
    assert decide("y entry", registry=reg).one_way
    del reg["Y_Entry"], reg["Y__ENTRY"]
    assert decide("y entry", registry=reg).reason == "default-two-way"
    reg["yEntry"] = {"door_type": "one-way"}
    assert decide("Y_ENTRY", registry=reg).one_way


def test_bundled_registry():
    entries = load_bundled_registry()
    assert len(entries) == 53 and load_bundled_registry() is entries
    assert sum(v == "one-way" for v in bundled_door_types().values()) == 12
    assert doors.bundled_one_way_ids() >= {"ship-test-failure-triage", "land-and-deploy-rollback"}
    for entry in entries:
        assert is_one_way(entry["id"]) is (entry["door_type"] == "one-way")


# --- canonical ids ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given,canonical",
    [
        ("land-and-deploy-rollback", "land-and-deploy-rollback"),
        ("LAND-AND-DEPLOY-ROLLBACK", "land-and-deploy-rollback"),
        (" land-and-deploy-rollback ", "land-and-deploy-rollback"),
        ("land_and_deploy_rollback", "land-and-deploy-rollback"),
        ("\tLand_And-Deploy_Rollback\u00a0\n", "land-and-deploy-rollback"),
        ("\ufeffland-and\u200d-deploy-rollback", "land-and-deploy-rollback"),
        ("ÀB", "ab"),  # beyond ASCII, letters read as the ASCII letter they show
        ("", ""),
    ],
)
def test_canonical_id(given, canonical):
    assert canonical_id(given) == canonical
    assert canonical_id(None) is None


def test_canonical_id_sql_matches_python(tmp_path):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from toolkit.store.db import sqlite3

    conn = sqlite3.connect(":memory:")
    expr = doors.canonical_id_sql("?1")
    alphabet = st.sampled_from(list("aAzZ_- \t\n\u00a0\u3000\u200b\u200d\ufeff\u00adÀé1.,;:!?\x01"))

    @settings(max_examples=500, deadline=None)
    @given(
        st.one_of(st.text(alphabet=alphabet, max_size=12), st.text(alphabet=alphabet, max_size=80))
    )
    def check(text):
        stored = conn.execute(f"SELECT {expr}", (text,)).fetchone()[0]
        assert stored == doors.sql_key(text)
        # SQL does not split code names (logged ids are kebab-case): Python does, first.
        via_sql = conn.execute(f"SELECT {expr}", (doors.split_words(text),)).fetchone()[0]
        if via_sql.isascii():
            assert via_sql == canonical_id(text)
        else:  # SQL keeps other characters; Python folds them further, and agrees on that
            assert canonical_id(via_sql) == canonical_id(text)
        # A canonical id is its own key in SQL: what Python stores, SQL finds.
        key = canonical_id(text)
        if key.isascii():
            assert conn.execute(f"SELECT {expr}", (key,)).fetchone()[0] == key

    check()


def test_migration_and_view_spell_the_canonical_expression_as_python_does():
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1] / "sql"
    migration = (root / "migrations" / "0016_door_allows.sql").read_text()
    view = (root / "views" / "one_way_audit.sql").read_text()
    assert doors.canonical_id_sql("NEW.question_id") in migration
    assert doors.canonical_id_sql("id") in migration
    assert doors.canonical_id_sql("q.question_id") in view


# --- cost ------------------------------------------------------------------------------------


def test_checks_without_text_never_load_the_rules():
    code = (
        "import sys\n"
        "import toolkit.core.doors as d\n"
        "d.decide('ship-test-failure-triage')\n"
        "d.canonical_id('X_Y')\n"
        "heavy = [m for m in ('sqlite3', 'click', 'numpy', 'pandas', 'unicodedata',"
        " 'hashlib', 'toolkit.core.door_reader') if m in sys.modules]\n"
        "print(','.join(heavy) or 'none')\n"
        "d.classify('rename it')\n"
        "print('toolkit.core.door_reader' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["none", "True"]


def test_english_questions_read_no_other_language_when_nothing_could_fire():
    code = (
        "import sys\n"
        "from toolkit.core import door_data, doors\n"
        "print(doors.classify('Should I rename the helper now?').door)\n"
        "print(sorted(n for n in ('es.toml', 'fr.toml', 'de.toml', 'pt.toml', 'it.toml')"
        " if door_data.held(n) is not None))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["two-way", "[]"], out.stdout


def test_a_text_whose_words_fire_a_rule_never_loads_the_other_readings():
    # Shell lines, method calls and disguised spellings are read only when the words as
    # written fire nothing: a plainly one-way question spares its process that module.
    code = (
        "import sys\n"
        "import toolkit.core.doors as d\n"
        "print(d.classify('Drop the users table?').door)\n"
        "print('toolkit.core.door_shell' in sys.modules)\n"
        "print(d.classify('cat /dev/null > app.sqlite').door)\n"
        "print('toolkit.core.door_shell' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["one-way", "False", "one-way", "True"]


def test_word_splitting_matches_the_token_pattern():
    # Plain prose is split with string methods; the result must be what the pattern gives.
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from toolkit.core import door_reader

    pattern = door_reader.token_pattern()
    pieces = st.sampled_from(
        list("abz09 -.?!;,$%#+=/:()'\"é")
        + ["--", "o+w", "-rf", "v1.2.3", "::/0", "a-b", "x.", "$ 5", "rm", "2.0"]
    )

    @settings(max_examples=500, deadline=None)
    @given(st.lists(pieces, max_size=14))
    def check(parts):
        text = normalise("".join(parts))
        assert door_reader.words(text) == pattern.findall(text)

    check()


def test_a_process_holding_older_rules_gives_a_rules_version_no_run_has(tmp_path):
    # Rules upgraded while a process runs: the data it read are not the files' now, so
    # the version it gives is one no run has (the next run reads every summary again).
    import pathlib
    import shutil

    root = pathlib.Path(__file__).resolve().parents[1]
    shutil.copytree(
        root / "toolkit", tmp_path / "toolkit", ignore=shutil.ignore_patterns("__pycache__")
    )
    data = tmp_path / "toolkit" / "data" / "doors" / "en-words.toml"
    code = (
        "import pathlib, sys\n"
        "from toolkit.core import doors\n"
        "doors.classify('Drop the users table?')\n"
        "print(doors.rules_version())\n"
        f"path = pathlib.Path({str(data)!r})\n"
        "path.write_text(path.read_text() + '# upgraded\\n')\n"
        "print(doors.rules_version())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    before, after = out.stdout.split()
    assert len(before) == 12 and after.startswith("unsettled-"), out.stdout
