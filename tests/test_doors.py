import itertools
import re

import pytest

from toolkit.doors import (
    DESTRUCTIVE_PATTERNS,
    SKILL_CATEGORY_ONE_WAY,
    Classification,
    bundled_door_types,
    classify,
    is_one_way,
    load_bundled_registry,
)

VERBS = ["revoke", "reset", "rotate"]
NOUNS = ["api key", "token", "secret", "credential", "access key", "password"]
ROTATE = r"\brotate\s+[\w\s]*\b(api key|token|secret|credential|access key|password)s?\b"


def js(src):
    return "/" + src + "/i"


# --- pattern list --------------------------------------------------------

def test_pattern_list_shape():
    # SPEC 11 #145: more than 15 destructive patterns; the port carries all 25
    assert len(DESTRUCTIVE_PATTERNS) == 25 > 15
    for compiled, form in DESTRUCTIVE_PATTERNS:
        assert compiled.flags & re.IGNORECASE and compiled.flags & re.ASCII
        assert form.startswith("/") and form.endswith("/i")
    assert DESTRUCTIVE_PATTERNS[0][1] == "/\\brm\\s+-rf\\b/i"
    assert DESTRUCTIVE_PATTERNS[1][1] == "/\\bdelete\\b/i"
    assert DESTRUCTIVE_PATTERNS[-1][1] == "/\\bbreaking\\s+change\\b/i"
    assert DESTRUCTIVE_PATTERNS[18][1] == (
        "/\\brevoke\\s+[\\w\\s]*\\b(api key|token|secret|credential|access key|password)s?\\b/i"
    )


def test_skill_category_set():
    # SPEC 11 #145
    assert SKILL_CATEGORY_ONE_WAY == {"cso:approval", "land-and-deploy:approval"}


# --- credentials (SPEC 11 #132-139) ----------------------------------------

def test_rotate_database_password():
    c = classify(summary="rotate the database password")
    assert c.one_way and c.reason == "keyword"
    assert c.matched == js(ROTATE)


@pytest.mark.parametrize("verb", VERBS)
def test_verb_production_password(verb):
    assert is_one_way(summary=f"{verb} the production password")


@pytest.mark.parametrize("noun", ["api key", "token", "secret", "credential", "access key"])
def test_rotate_my_noun(noun):
    assert is_one_way(summary=f"rotate my {noun}")


@pytest.mark.parametrize("verb,noun", list(itertools.product(VERBS, NOUNS)))
def test_every_verb_my_noun(verb, noun):
    c = classify(summary=f"{verb} my {noun}")
    assert c.one_way and c.reason == "keyword"


@pytest.mark.parametrize("text", ["reset my secret", "reset my access key", "revoke my secret"])
def test_credential_keyword_reason(text):
    c = classify(summary=text)
    assert c == Classification(True, "keyword", c.matched)
    assert c.matched is not None


@pytest.mark.parametrize(
    "verb,noun,plural", list(itertools.product(VERBS, NOUNS, [False, True]))
)
def test_every_verb_production_noun_plural(verb, noun, plural):
    text = f"{verb} the production {noun}{'s' if plural else ''}"
    c = classify(summary=text)
    assert c.one_way and c.reason == "keyword"
    assert verb in c.matched


@pytest.mark.parametrize(
    "text", ["rotate the credentials", "revoke all tokens", "reset the passwords"]
)
def test_plurals(text):
    assert is_one_way(summary=text)


@pytest.mark.parametrize(
    "text",
    ["reset the flaky test runner", "rotate the log files nightly", "revoke the meeting invite"],
)
def test_credential_verbs_without_credential_nouns(text):
    assert classify(summary=text) == Classification(False, "default-two-way", None)


# --- registry (SPEC 11 #140, #141) -----------------------------------------

def test_registry_one_way_and_two_way():
    assert classify(question_id="ship-test-failure-triage") == Classification(True, "registry")
    assert classify(question_id="ship-changelog-voice-polish") == Classification(False, "registry")


def test_unregistered_id_is_not_registry():
    c = classify(question_id="adhoc-unregistered-question")
    assert c.reason != "registry"
    assert c == Classification(False, "default-two-way")


def test_registry_is_final_over_keywords():
    # a registered two-way id stays two-way even with a destructive summary
    c = classify(question_id="ship-changelog-voice-polish", summary="delete everything, rm -rf /")
    assert c == Classification(False, "registry")
    # and beats the skill-category rule
    c = classify(question_id="ship-changelog-voice-polish", skill="cso", category="approval")
    assert c.reason == "registry" and not c.one_way


def test_unregistered_id_falls_through_to_keywords():
    c = classify(question_id="adhoc-cleanup-question", summary="Should I reset my secrets now?")
    assert c.one_way and c.reason == "keyword"


def test_custom_registry_mapping():
    reg = {"x-one": "one-way", "x-two": "two-way", "x-entry": {"door_type": "one-way"}}
    assert classify(question_id="x-one", registry=reg) == Classification(True, "registry")
    assert classify(question_id="x-two", registry=reg) == Classification(False, "registry")
    assert classify(question_id="x-entry", registry=reg) == Classification(True, "registry")
    # the bundled registry is not consulted when one is given
    assert classify(question_id="ship-test-failure-triage", registry={}).reason == "default-two-way"


def test_bundled_registry_loads_and_caches():
    entries = load_bundled_registry()
    assert len(entries) == 53
    assert load_bundled_registry() is entries
    doors_by_id = bundled_door_types()
    assert bundled_door_types() is doors_by_id
    assert len(doors_by_id) == 53
    assert set(doors_by_id.values()) == {"one-way", "two-way"}
    assert doors_by_id["ship-test-failure-triage"] == "one-way"
    assert sum(v == "one-way" for v in doors_by_id.values()) >= 10


def test_every_bundled_entry_classifies_by_registry():
    for entry in load_bundled_registry():
        c = classify(question_id=entry["id"])
        assert c.reason == "registry"
        assert c.one_way is (entry["door_type"] == "one-way")


# --- keyword net (SPEC 11 #142) ---------------------------------------------

@pytest.mark.parametrize(
    "text,src",
    [
        ("Delete this directory and all its contents?", r"\bdelete\b"),
        ("Run rm -rf /tmp/scratch — proceed?", r"\brm\s+-rf\b"),
        ("Force-push main?", r"\bforce[- ]push\b"),
        ("git reset --hard origin/main — ok?", r"\bgit\s+reset\s+--hard\b"),
        ("DROP TABLE users — confirm?", r"\bdrop\s+(table|database|schema|index|column)\b"),
        ("kubectl delete namespace prod", r"\bdelete\b"),
        ("terraform destroy the staging cluster", r"\bterraform\s+destroy\b"),
        ("rotate the API key", ROTATE),
        ("breaking change to the public API — ship anyway?", r"\bbreaking\s+change\b"),
    ],
)
def test_keyword_cases(text, src):
    assert classify(summary=text) == Classification(True, "keyword", js(src))


# --- skill-category (SPEC 11 #143) -------------------------------------------

@pytest.mark.parametrize("skill", ["cso", "land-and-deploy"])
def test_skill_category(skill):
    assert classify(skill=skill, category="approval") == Classification(True, "skill-category")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"skill": "cso", "category": "routing"},
        {"skill": "ship", "category": "approval"},
        {"skill": "cso"},
        {"category": "approval"},
    ],
)
def test_skill_category_needs_the_pair(kwargs):
    assert classify(**kwargs).reason == "default-two-way"


# --- defaults (SPEC 11 #144) --------------------------------------------------

@pytest.mark.parametrize(
    "text",
    [
        "Want to update the changelog voice?",
        "Which mode should plan review use?",
        "Open the essay in your browser?",
    ],
)
def test_default_two_way(text):
    assert classify(summary=text) == Classification(False, "default-two-way", None)


@pytest.mark.parametrize("kwargs", [{}, {"summary": ""}, {"question_id": ""}, {"summary": None}])
def test_nothing_given(kwargs):
    assert classify(**kwargs) == Classification(False, "default-two-way")


# --- quirks of the JS patterns (SPEC 4) ----------------------------------------

@pytest.mark.parametrize(
    "text,one_way,src",
    [
        ("git checkout -- file", False, None),
        ("git checkout --theirs", True, r"\bcheckout\s+--\b"),
        ("restore .", False, None),
        ("restore .env", True, r"\brestore\s+\.\b"),
        ("git clean -fd", False, None),
        ("git clean -f", True, r"\bclean\s+-f\b"),
        ("git branch -d old", True, r"\bbranch\s+-D\b"),
        ("git branch -D old", True, r"\bbranch\s+-D\b"),
        ("git push --force-with-lease", True, r"\bpush\s+--force\b"),
        ("run the schema migrations", False, None),
        ("run the schema migration", True, r"\bschema\s+migration\b"),
        ("Roll back the release?", False, None),
        ("rollback the release?", True, r"\brollback\b"),
        ("kubectl delete pod x", True, r"\bdelete\b"),
        ("DELETE FROM users", True, r"\bdelete\b"),
        ("remove files", True, r"\bremove\s+(directory|folder|files?)\b"),
        ("remove the files", False, None),
        ("force push", True, r"\bforce[- ]push\b"),
        ("forcepush", False, None),
        ("wipe the cache", True, r"\bwipe\b"),
        ("purge old rows", True, r"\bpurge\b"),
        ("truncate the table", True, r"\btruncate\b"),
        ("undelete it", False, None),
        ("deleted_at column", False, None),
        ("architectural shift", True, r"\barchitectur(e|al)\s+(change|fork|shift|decision)\b"),
        ("architecture decision", True, r"\barchitectur(e|al)\s+(change|fork|shift|decision)\b"),
        ("data model change", True, r"\bdata\s+model\s+change\b"),
        ("push --force", True, r"\bpush\s+--force\b"),
        ("drop column email", True, r"\bdrop\s+(table|database|schema|index|column)\b"),
        ("rotate tokens_v2", False, None),
    ],
)
def test_quirks(text, one_way, src):
    c = classify(summary=text)
    assert c.one_way is one_way
    assert c.matched == (js(src) if src else None)


@pytest.mark.parametrize(
    "text,one_way",
    [
        ("terraform\u00a0destroy", True),  # JS \s matches a no-break space
        ("rotate\u2028the token", True),
        ("drop\ufefftable x", True),
        ("rotate my api\u00a0key", False),  # ...but a literal space in the pattern does not
        ("force\u00a0push", False),
        ("terraform\x1cdestroy", False),  # Python-only whitespace is not JS \s
    ],
)
def test_js_whitespace_in_keyword_net(text, one_way):
    assert is_one_way(summary=text) is one_way


def test_is_one_way_matches_classify():
    assert is_one_way(question_id="ship-test-failure-triage") is True
    assert is_one_way(summary="nothing here") is False


@pytest.mark.parametrize(
    "module,heavy",
    [
        ("toolkit.screening", "sqlite3 click numpy pandas sqlite_utils datasette"),
        ("toolkit.doors", "sqlite3 click numpy pandas sqlite_utils datasette"),
        # questions.py also records to the database, so sqlite3 is allowed there
        ("toolkit.questions", "click numpy pandas datasette"),
    ],
)
def test_hot_path_modules_import_nothing_heavy(module, heavy):
    import pathlib
    import subprocess
    import sys

    code = (
        f"import sys, {module}\n"
        f"print(','.join(m for m in {heavy.split()!r} if m in sys.modules))"
    )
    root = pathlib.Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.strip() == ""
