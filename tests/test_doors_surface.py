"""What the door checks read, and the ids they compare: the whole question (header, every
option, the recommendation) through the hooks, --check, pacing and the audit; every
spelling of an id; the user's own corrections of a false alarm."""

import json

import pytest

from tests.helpers.hooks import make_repo, payload, question, run_hook
from tests.helpers.hotpath import plant, pref, run
from toolkit.core import door_checks, doors, seeded_db, whole_question
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


@pytest.mark.parametrize(
    "options",
    [
        {DROP: {"description": "fast"}, "Skip": {"description": ""}},
        [{"label": "Plan A", DROP: True}],
    ],
    ids=["options-keyed-by-label", "unknown-key"],
)
def test_a_danger_in_a_key_makes_the_question_one_way(options):
    q = {"question": CLEANUP, "options": options, "multiSelect": False}
    assert doors.classify(whole_question.of_question(q)).door == "one-way"
    data = json.dumps(q)
    assert doors.classify(whole_question.from_json(data)).door == "one-way"


def test_field_names_are_not_read_as_text():
    q = {"question": CLEANUP, "header": "Cleanup", "multiSelect": False,
         "options": [{"label": "A", "description": "keeps it", "preview": "x"}]}  # fmt: skip
    assert whole_question.from_json(json.dumps(q)).split("\n") == [
        CLEANUP, "Cleanup", "A", "keeps it", "x"
    ]  # fmt: skip


# --- the pre-tool-use hook -----------------------------------------------------------


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path)


def _never_ask(db_file, qid, scope="acme-web"):
    conn = seeded_db.connect(db_file)
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
        {
            "options": [
                {"label": "Go (Recommended)", "description": "", DROP: True},
                {"label": "Skip", "description": ""},
            ]
        },
    ],
    ids=["option-label", "option-description", "header", "option-key"],
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
    conn = seeded_db.connect(db_file)
    row = conn.execute("SELECT question_summary, door_class FROM question_log").fetchone()
    assert tuple(row) == (CLEANUP, "one-way")
    # ... so the question stays one-way for every later check of its id.
    assert door_checks.door_for(conn, "adhoc-cleanup-choice").one_way


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

    def sql(text):
        return conn.execute(f"SELECT {expr}", (text,)).fetchone()[0]

    for spelling in SPELLINGS + ["fixNow2Apply", "a-B", "aB_c", "ABC", "x..", "-a-"]:
        key = doors.canonical_id(spelling)
        assert sql(key) == key  # a canonical id is its own key in SQL
        assert sql(doors.split_words(spelling)) == key  # SQL splits no code names
        assert sql(spelling) == doors.sql_key(spelling)
        if doors.split_words(spelling) == spelling:
            assert sql(spelling) == key


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


# --- the user corrects a false alarm ---------------------------------------------------

# A false alarm of the current rules: harmless, yet read as one-way.
TODOS = "Wipe the local build cache and the node_modules folder of this checkout?"


def invoke(*args, input=None):
    from click.testing import CliRunner

    from toolkit.cli.app import cli

    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def _log(qid, summary, **extra):
    from tests.helpers.hotpath import log

    record = {"skill": "ship", "question_id": qid, "question_summary": summary}
    record.update({"user_choice": "accept"}, **extra)
    p = log(record)
    assert p.returncode == 0, p.stderr


def _allow_events():
    from tests.helpers.hotpath import db_rows

    return db_rows("SELECT action, question_id, source, reason FROM door_allow_events ORDER BY id")


def _conn():
    import os

    return seeded_db.connect(os.environ["PLANTUNE_DB"])


def test_a_false_alarm_is_allowed_by_the_user_and_undone(state_root):
    _log("ship-todos-create", TODOS)  # its summary made the question one-way for good
    never = {"question_id": "ship-todos-create", "preference": "never-ask", "source": "plan-tune"}
    refused = pref("--write", json.dumps(never))
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'gstack-question-preference: cannot set never-ask on one-way question "ship-todos-create"'
        " (door_type: one-way): plantune read a recorded question as one-way (question_log:1);"
        " if that is a false alarm, say so with:"
        " plantune doors allow ship-todos-create --source plan-tune"
    )

    r = invoke("doors", "allow", "ship-todos-create", "--source", "plan-tune", "--reason", "a file")
    assert (
        r.exit_code == 0
        and r.output == "OK: ship-todos-create is two-way for you (source: plan-tune)\n"
    )
    assert pref("--write", json.dumps(never)).returncode == 0
    assert pref("--check", "ship-todos-create").stdout == "AUTO_DECIDE\n"
    # The live text that fired the false alarm is allowed too, under any spelling of the id.
    p = pref("--check", "ship-todos-create", "--summary-stdin", input=TODOS)
    assert p.stdout == "AUTO_DECIDE\n"
    assert door_checks.door_for(_conn(), "ship_todos__create").reason == "allowed"

    r = invoke("doors", "allow", "--undo", "ship-todos-create")
    assert r.exit_code == 0 and "read as the classifier reads it again" in r.output
    assert pref("--check", "ship-todos-create").stdout.splitlines() == [
        "ASK_NORMALLY",
        ONE_WAY_NOTE,
    ]
    assert invoke("doors", "allow", "--undo", "ship-todos-create").output == (
        "NOOP: ship-todos-create was not allowed\n"
    )

    listed = json.loads(invoke("doors", "audit", "--allowed", "--json").output)
    assert [(e["action"], e["in_force"], e["reason"]) for e in listed["events"]] == [
        ("allow", False, "a file"),
        ("undo", False, None),
    ]
    assert listed["events"][0]["readings"] == [
        "plantune read a recorded question as one-way (question_log:1)"
    ]
    text = invoke("doors", "audit", "--allowed").output
    assert "allow  ship-todos-create  by plan-tune  not in force  (a file)" in text


@pytest.mark.parametrize(
    "qid, extra, fact",
    [
        ("ship-test-failure-triage", None, 'the registry marks "ship-test-failure-triage" one-way'),
        (
            "adhoc-rotate",
            {"door_type": "one-way"},
            "a logged event says door_type: one-way (question_log:1)",
        ),
    ],
    ids=["registry", "logged"],
)
def test_a_stated_one_way_fact_can_never_be_allowed(state_root, qid, extra, fact):
    if extra:
        _log(qid, "Rotate the keys?", **extra)
    r = invoke("doors", "allow", qid, "--source", "plan-tune")
    assert r.exit_code == 1
    assert r.output.strip() == f'Error: cannot allow "{qid}": {fact}; it is always asked'
    assert _allow_events() == []


@pytest.mark.parametrize("source, code", [("agent", 2), ("tool-output", 2), (None, 1)])
def test_only_the_user_may_allow(state_root, source, code):
    args = ["doors", "allow", "adhoc-snapshot"] + (["--source", source] if source else [])
    r = invoke(*args)
    assert r.exit_code == code and len(r.output.strip().splitlines()) == 1
    assert _allow_events() == []


def test_an_allowed_question_stays_one_way_for_a_stated_fact_learned_later(state_root):
    assert invoke("doors", "allow", "adhoc-rotate", "--source", "inline-user").exit_code == 0
    _log("adhoc-rotate", "Rotate the keys?", door_type="one-way")
    conn = _conn()
    assert door_checks.door_for(conn, "adhoc-rotate").one_way
    from toolkit.core import allows

    assert allows.stated_fact(conn, "adhoc-rotate") == "logged"


def test_the_audit_leaves_out_auto_decisions_the_user_allows(state_root):
    _log("adhoc-snapshot", TODOS, source="auto-decided")
    _log("ship-test-failure-triage", "Triage?", source="auto-decided")
    before = json.loads(invoke("doors", "audit", "--json").output)
    assert [r["question_id"] for r in before["rows"]] == [
        "adhoc-snapshot",
        "ship-test-failure-triage",
    ]
    invoke("doors", "allow", "adhoc-snapshot", "--source", "plan-tune")
    r = invoke("doors", "audit", "--json")
    assert r.exit_code == 1
    assert [x["question_id"] for x in json.loads(r.output)["rows"]] == ["ship-test-failure-triage"]


# --- text plantune cannot read ------------------------------------------------------

ARABIC = "هل تريد حذف قاعدة البيانات؟"


def test_text_it_cannot_read_counts_as_seen_only_after_the_user_answered_it(conn):
    from toolkit.core import allows, questions

    unreadable = doors.Classification(True, allows.UNREADABLE_LANGUAGE)

    def answered(summary, source="agent"):
        record = questions.validate_event(
            {
                "skill": "adhoc",
                "question_id": "adhoc-db-question",
                "question_summary": summary,
                "user_choice": "no",
                "source": source,
            }
        )
        questions.record_event(conn, record, "proj")

    assert not allows.overruled(conn, "adhoc-db-question", unreadable, ARABIC)
    answered(ARABIC, source="auto-decided")  # an auto-decision is not the user's answer
    assert not allows.overruled(conn, "adhoc-db-question", unreadable, ARABIC)
    answered("هل تريد حذف الملف؟")  # another text of the same question
    assert not allows.overruled(conn, "adhoc-db-question", unreadable, ARABIC)
    answered(ARABIC)
    assert allows.overruled(conn, "adhoc-db-question", unreadable, f"  {ARABIC} ")
    assert allows.overruled(conn, "adhoc-db-question", unreadable, ARABIC.encode())
    assert not allows.overruled(conn, "adhoc-other-question", unreadable, ARABIC)
    # Only that verdict: a keyword rule's one-way is not undone by an answer.
    rule = doors.Classification(True, "keyword:drop-data", "drop-data")
    assert not allows.overruled(conn, "adhoc-db-question", rule, ARABIC)


def _check_arabic(state_root):
    return pref("--check", "adhoc-db-question", "--summary-stdin", input=ARABIC).stdout


def test_check_asks_text_it_cannot_read_until_the_user_allows_it(state_root):
    plant(state_root, {"adhoc-db-question": "never-ask"})
    assert _check_arabic(state_root).splitlines() == ["ASK_NORMALLY", ONE_WAY_NOTE]
    # Answering it once is not enough: the logged reading (one-way) is sticky, as every
    # recorded one-way fact is; the safe side until the user says it is harmless.
    _log("adhoc-db-question", ARABIC, user_choice="no")
    assert _check_arabic(state_root).splitlines() == ["ASK_NORMALLY", ONE_WAY_NOTE]
    assert invoke("doors", "allow", "adhoc-db-question", "--source", "plan-tune").exit_code == 0
    assert _check_arabic(state_root) == "AUTO_DECIDE\n"


# --- the audit re-reads everything ------------------------------------------------------


def test_the_audit_reads_the_options_of_a_logged_auto_decision(state_root):
    options = ["Drop the users table in production", "Skip"]
    _log("adhoc-cleanup-choice", CLEANUP, source="auto-decided", options=options)
    r = invoke("doors", "audit", "--json")
    assert r.exit_code == 1
    (row,) = json.loads(r.output)["rows"]
    # The options are read when the event is written, so the logged door is one-way
    # already (no later reading is needed to catch it).
    assert (row["question_id"], row["flagged_by"]) == ("adhoc-cleanup-choice", "classifier")


def test_the_audit_catches_an_old_french_auto_decision(state_root):
    _log(
        "adhoc-prod-cleanup", "Supprimer la base de données de production ?", source="auto-decided"
    )
    r = invoke("doors", "audit", "--json")
    assert r.exit_code == 1
    assert [x["question_id"] for x in json.loads(r.output)["rows"]] == ["adhoc-prod-cleanup"]


def test_the_hook_auto_decides_a_false_alarm_only_once_the_user_allowed_it(repo, db_file):
    _never_ask(db_file, "adhoc-snapshot")
    q = question(
        "Nuke the local Docker container I spun up for tests? <gstack-qid:adhoc-snapshot>",
        ["Nuke it (Recommended)", "Keep it"],
    )
    assert _pre(repo, q) == ""
    # The user answers it (the post hook records what they were shown), then allows it.
    answered = run_hook(
        "post-tool-use", payload([q], {"answers": {q["question"]: "Keep it"}}, cwd=repo)
    )
    assert answered.returncode == 0
    r = invoke("doors", "allow", "adhoc-snapshot", "--source", "plan-tune", "--db", str(db_file))
    assert r.exit_code == 0, r.output
    assert "auto-decide" in _pre(repo, q)
    # The allow covers what the user saw, not a new text the classifier reads as one-way.
    worse = question(q["question"], [DROP, "Keep it"])
    assert _pre(repo, worse) == ""


def test_a_finding_under_a_code_name_is_known_under_the_kebab_id(conn):
    from toolkit.core import preferences

    finding = {
        "id": "acmeTidyNotes",
        "summary": "Tidy the notes?",
        "severity": 0,
        "irreversibility": 0,
        "decision_matters": 0,
        "door_type": "one-way",
        "recommended": "go",
    }
    pacing.rank(conn, {"session_id": "s1", "phase": "eng", "findings": [finding]}, "proj")
    assert doors.known_one_way(conn, "acmeTidyNotes") == "finding"
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
            " VALUES ('proj', 'acme-tidy-notes', 'never-ask', 'plan-tune', 'now')"
        )
    decision = preferences.check(conn, "proj", "acme-tidy-notes")
    assert (decision.decision, decision.door.reason) == ("ASK_NORMALLY", "recorded:finding")


def test_a_finding_plantune_read_as_one_way_can_be_allowed_one_the_agent_called_so_cannot(conn):
    from toolkit.core import allows

    def finding(fid, **kw):
        base = {"id": fid, "summary": "Tidy the notes?", "severity": 0, "irreversibility": 0}
        base.update({"decision_matters": 0, "recommended": "go"}, **kw)
        return base

    read = finding("acme-snapshot", summary=TODOS)
    said = finding("acme-notes", door_type="one-way")
    pacing.rank(conn, {"session_id": "s1", "phase": "eng", "findings": [read, said]}, "proj")
    with db.transaction(conn):
        allows.allow(conn, "acme-snapshot", "plan-tune")
        with pytest.raises(allows.AllowError, match="a pacing finding is one-way"):
            allows.allow(conn, "acme-notes", "plan-tune")
    assert door_checks.door_for(conn, "acme-snapshot").reason == "allowed"
    assert door_checks.door_for(conn, "acme-notes").reason == "recorded:finding"


def test_an_event_one_way_by_an_approval_gate_cannot_be_allowed(state_root):
    _log("adhoc-cso-signoff", "Sign off?", skill="cso", category="approval")
    r = invoke("doors", "allow", "adhoc-cso-signoff", "--source", "plan-tune")
    assert r.exit_code == 1
    assert "by the registry or an approval gate (question_log:1)" in r.output


def test_an_allow_covers_the_texts_recorded_up_to_it_not_a_new_one(state_root):
    _log("ship-todos-create", TODOS)
    plant(state_root, {"ship-todos-create": "never-ask"})
    assert invoke("doors", "allow", "ship-todos-create", "--source", "plan-tune").exit_code == 0
    for form in (TODOS, f"  {TODOS.upper()} "):  # the same text, normalised
        assert pref("--check", "ship-todos-create", "--summary-stdin", input=form).stdout == (
            "AUTO_DECIDE\n"
        )
    danger = pref("--check", "ship-todos-create", "--question-stdin", input=_question_json([DROP]))
    assert danger.stdout.splitlines() == ["ASK_NORMALLY", ONE_WAY_NOTE]
    # A new event read as one-way after the allow makes the question one-way again.
    _log("ship-todos-create", "Delete every todo in the production database?")
    assert pref("--check", "ship-todos-create").stdout.splitlines() == [
        "ASK_NORMALLY",
        ONE_WAY_NOTE,
    ]
