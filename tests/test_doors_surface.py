"""What the door checks read, and the ids they compare: the whole question (header, every
option, the recommendation) through the hooks, --check, pacing and the audit; every
spelling of an id; the user's own corrections of a false alarm."""

import json

import pytest

from tests.helpers.hooks import make_repo, payload, question, run_hook
from tests.helpers.hotpath import plant, pref, run
from toolkit.core import database, doors, whole_question
from toolkit.pacing import rank as pacing
from toolkit.store import db

CLEANUP = "Which cleanup should I run now?"
DROP = "Drop the users table in production (Recommended)"
HARMLESS = "Keep the cache as it is (Recommended)"
ONE_WAY_NOTE = "NOTE: one-way door overrides your never-ask preference for safety."


# --- one place builds the text -------------------------------------------------------


def test_the_whole_question_is_one_text_a_part_a_line():
    q = {
        "question": CLEANUP,
        "header": "Cleanup",
        "options": [{"label": "A", "description": "drops it"}, "B", {"label": ""}, 3],
        "recommendation": "A",
    }
    assert whole_question.of_question(q) == "\n".join(
        [CLEANUP, "Cleanup", "A", "drops it", "B", "A"]
    )
    assert whole_question.of_question(q, text="Other?").startswith("Other?\nCleanup\n")
    assert whole_question.door_text("Only this?") == "Only this?"


@pytest.mark.parametrize(
    "options",
    [
        [{"label": DROP, "description": ""}, {"label": "Skip", "description": ""}],
        [{"label": "Plan A (Recommended)", "description": "Drops the users table in production"}],
    ],
    ids=["label", "description"],
)
def test_a_destructive_option_makes_the_question_one_way(options):
    text = whole_question.of_question({"question": CLEANUP, "options": options})
    assert doors.classify(CLEANUP).door == "two-way"
    assert doors.classify(text).door == "one-way"


# --- the pre-tool-use hook -----------------------------------------------------------


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path)


def _never_ask(db_file, qid, scope="acme-web"):
    conn = database.connect(db_file)
    with db.transaction(conn):
        conn.execute(
            "INSERT OR REPLACE INTO preferences (scope, question_id, preference, source,"
            " updated_at) VALUES (?, ?, 'never-ask', 'plan-tune', ?)",
            (scope, qid, db.utc_now()),
        )
    conn.close()


def _pre(repo, q):
    r = run_hook("pre-tool-use", payload([q], cwd=repo, event="PreToolUse"))
    assert r.returncode == 0 and r.stderr == b""
    return r.stdout.decode()


@pytest.mark.parametrize(
    "danger",
    [
        {"options": [{"label": DROP, "description": ""}, {"label": "Skip", "description": ""}]},
        {
            "options": [
                {"label": "Plan A (Recommended)", "description": "Drops the users table in prod"},
                {"label": "Skip", "description": ""},
            ]
        },
        {
            "header": "Drop the users table",
            "options": [{"label": "Go (Recommended)", "description": ""}, {"label": "Skip"}],
        },
    ],
    ids=["option-label", "option-description", "header"],
)
def test_the_hook_never_auto_decides_a_question_whose_danger_is_only_in_its_parts(
    repo, db_file, danger
):
    _never_ask(db_file, "adhoc-cleanup-choice")
    q = question(f"{CLEANUP} <gstack-qid:adhoc-cleanup-choice>", [])
    q.update(danger)
    assert _pre(repo, q) == ""
    # The same question with harmless options is auto-decided: the options made the door.
    calm = question(f"{CLEANUP} <gstack-qid:adhoc-cleanup-choice>", [HARMLESS, "Skip"])
    assert "auto-decide" in _pre(repo, calm)


def test_the_post_hook_records_the_door_of_the_whole_question(repo, db_file):
    q = question(f"{CLEANUP} <gstack-qid:adhoc-cleanup-choice>", [DROP, "Skip"])
    response = {"answers": {q["question"]: "Skip"}}
    r = run_hook("post-tool-use", payload([q], response, cwd=repo))
    assert r.returncode == 0 and r.stdout == b""
    conn = database.connect(db_file)
    row = conn.execute("SELECT question_summary, door_class FROM question_log").fetchone()
    assert tuple(row) == (CLEANUP, "one-way")
    # ... so the question stays one-way for every later check of its id.
    assert doors.door_for(conn, "adhoc-cleanup-choice").one_way


# --- --check reads the whole question ------------------------------------------------


def _question_json(options, text=CLEANUP):
    return json.dumps({"question": text, "options": [{"label": o} for o in options]})


@pytest.mark.parametrize("command", ["compat", "plantune"])
def test_check_reads_the_options_from_a_json_question(state_root, command):
    plant(state_root, {"adhoc-cleanup-choice": "never-ask"})
    if command == "compat":
        check = lambda data: pref("--check", "adhoc-cleanup-choice", "--question-stdin", input=data)  # noqa: E731
    else:
        check = lambda data: run(  # noqa: E731
            "plantune", "check", "adhoc-cleanup-choice", "--project", "test-project",
            "--question-stdin", input=data,
        )  # fmt: skip
    danger = check(_question_json([DROP, "Skip"]))
    assert danger.returncode == 0, danger.stderr
    assert danger.stdout.splitlines() == ["ASK_NORMALLY", ONE_WAY_NOTE]
    calm = check(_question_json([HARMLESS, "Skip"]))
    assert calm.stdout.splitlines() == ["AUTO_DECIDE"]


@pytest.mark.parametrize("data", ["not json", "[1, 2]", "{}", '{"question": 3}'])
def test_check_refuses_a_question_that_is_not_one(state_root, data):
    plant(state_root, {"adhoc-cleanup-choice": "never-ask"})
    p = pref("--check", "adhoc-cleanup-choice", "--question-stdin", input=data)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.startswith("gstack-question-preference: stdin must be a JSON object")
    assert len(p.stderr.splitlines()) == 1


def test_check_takes_one_stdin_form(state_root):
    p = pref("--check", "x-y", "--question-stdin", "--summary-stdin", input="{}")
    assert p.returncode == 1 and p.stdout == ""
    assert "use one" in p.stderr


# --- pacing ---------------------------------------------------------------------------


def test_pacing_never_silences_a_finding_whose_danger_is_only_in_an_option(conn):
    finding = {
        "id": "eng-cleanup-choice",
        "summary": CLEANUP,
        "severity": 0,
        "irreversibility": 0,
        "decision_matters": 0,
        "options": ["Drop the users table in production", "Skip"],
        "recommended": "Drop the users table in production",
    }
    req = {"session_id": "s1", "phase": "eng", "findings": [finding]}
    out = pacing.rank(conn, req, "proj").output
    assert [s["id"] for s in out["surface"]] == ["eng-cleanup-choice"]
    assert out["surface"][0]["reason"] == "one-way"
    assert out["silent_decisions"] == []


# --- id spellings ---------------------------------------------------------------------

SPELLINGS = [
    "investigate--fix-apply",
    "investigateFixApply",
    "investigate fix apply",
    "investigate-fix-apply.",
    "investigate__fix__apply",
    "InvestigateFixApply!",
    " investigate_-_fix  apply ",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_of_an_id_is_the_id(spelling):
    assert doors.canonical_id(spelling) == "investigate-fix-apply"


def test_the_sql_twin_agrees_on_every_spelling(conn):
    expr = doors.canonical_id_sql("?1")
    for spelling in SPELLINGS + ["fixNow2Apply", "a-B", "aB_c", "ABC", "x..", "-a-"]:
        assert conn.execute(f"SELECT {expr}", (spelling,)).fetchone()[0] == doors.canonical_id(
            spelling
        )


def test_a_fact_logged_under_a_spelling_is_known_under_every_other(conn):
    from toolkit.core import questions

    record = questions.validate_event(
        {
            "skill": "acme",
            "question_id": "acme--rotate-keys",
            "question_summary": "Apply the fix?",
            "user_choice": "yes",
            "door_type": "one-way",
        }
    )
    questions.record_event(conn, record, "proj")
    for spelling in (
        "acmeRotateKeys",
        "acme rotate keys",
        "acme__rotate__keys",
        "acme-rotate-keys.",
    ):
        assert doors.known_one_way(conn, spelling) == "logged"


@pytest.mark.parametrize("spelling", ["investigate--fix-apply", "investigate-fix-apply-"])
def test_write_refuses_a_never_ask_on_a_spelling_of_a_one_way_id(state_root, spelling):
    p = pref(
        "--write",
        json.dumps({"question_id": spelling, "preference": "never-ask", "source": "plan-tune"}),
    )
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.startswith(
        f'gstack-question-preference: cannot set never-ask on one-way question "{spelling}"'
    )


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_check_never_auto_decides_a_hand_edited_spelling(state_root, spelling):
    plant(state_root, {spelling: "never-ask"})
    p = pref("--check", spelling)
    assert p.stdout.splitlines() == ["ASK_NORMALLY", ONE_WAY_NOTE]
