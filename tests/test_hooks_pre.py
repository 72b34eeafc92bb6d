"""`plantune hook pre-tool-use` run as a subprocess, as Claude Code runs it.

The behaviours gstack's own test/question-preference-hook.test.ts pins (pass-through =
exit 0 and stdout exactly empty), plus fixes of gstack's hook bugs: the CLI's project slug
(gstack issue #2901), the split-chain carve-out and unknown preference values (gstack's
hook has no carve-out and auto-decides on any unknown value, unlike its --check), every
question of a multi-question call logged.
"""

import json
import os

import pytest

from tests.helpers.hooks import error_log, events, make_repo, payload, question, run_hook

PRE = "pre-tool-use"
FIX_TEXT = "Null check missing in cart.ts. <gstack-qid:ship-pre-landing-review-fix>"
FIX_LABELS = ["A) Fix now (recommended)", "B) Skip"]


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path)


@pytest.fixture
def prefs(db_file):
    """Store preferences as `plantune pref set` would; scope defaults to the repo's slug."""
    from toolkit.core import seeded_db
    from toolkit.store import db

    def set_pref(qid, value, scope="acme-web", raw=None):
        conn = seeded_db.connect(db_file)
        with db.transaction(conn):
            conn.execute(
                "INSERT OR REPLACE INTO preferences (scope, question_id, preference, raw_value,"
                " source, updated_at) VALUES (?, ?, ?, ?, 'plan-tune', ?)",
                (scope, qid, value, raw, db.utc_now()),
            )
        conn.close()

    set_pref("zz-unused-seed", "always-ask")  # the database exists from here on
    return set_pref


def pre(data, env=None):
    r = run_hook(PRE, data, env)
    assert r.returncode == 0, r.stderr
    assert r.stderr == b""
    return r.stdout.decode()


def decision(out):
    data = json.loads(out)
    return data["hookSpecificOutput"]


def fix_payload(repo, text=FIX_TEXT, labels=FIX_LABELS, **kw):
    return payload([question(text, labels)], cwd=repo, event="PreToolUse", **kw)


def auto_decided():
    return events("WHERE source = 'auto-decided'")


# --- gstack's question-preference-hook.test.ts ------------------------------


def test_168_marked_question_without_preference_passes_through(repo, prefs):
    assert pre(fix_payload(repo)) == ""
    assert auto_decided() == []


def test_169_never_ask_without_marker_passes_through(repo, prefs):
    prefs("ship-pre-landing-review-fix", "never-ask")
    assert pre(fix_payload(repo, text="Null check missing in cart.ts.")) == ""


def test_170_always_ask_passes_through(repo, prefs):
    prefs("ship-pre-landing-review-fix", "always-ask")
    assert pre(fix_payload(repo)) == ""


def test_171_empty_stdin_and_other_tools_pass_through(repo, prefs, state_root):
    assert pre("") == ""
    prefs("ship-pre-landing-review-fix", "never-ask")
    assert pre(fix_payload(repo, tool="Bash")) == ""
    assert error_log(state_root) == ""


def test_172_no_pass_through_ever_prints_a_permission_decision(repo, prefs):
    outs = [
        pre(fix_payload(repo)),
        pre(fix_payload(repo, tool="Bash")),
        pre(payload([], cwd=repo, event="PreToolUse")),
    ]
    assert all("permissionDecision" not in o for o in outs)
    assert outs == ["", "", ""]


def test_173_never_ask_auto_decides_with_the_recommended_label(repo, prefs):
    prefs("ship-pre-landing-review-fix", "never-ask")
    out = pre(fix_payload(repo))
    d = decision(out)
    assert d["hookEventName"] == "PreToolUse" and d["permissionDecision"] == "deny"
    assert (
        "plan-tune auto-decide" in d["permissionDecisionReason"]
        and "Fix now" in d["permissionDecisionReason"]
    )
    assert d["permissionDecisionReason"] == (
        "[plan-tune auto-decide] ship-pre-landing-review-fix → A) Fix now (your never-ask "
        "preference). Proceed with that option without re-prompting. Change with /plan-tune."
    )
    assert out.endswith("\n") and out.count("\n") == 1


def test_174_one_way_door_is_never_auto_decided(repo, prefs):
    prefs("ship-test-failure-triage", "never-ask")
    text = "Tests failed. <gstack-qid:ship-test-failure-triage>"
    assert pre(fix_payload(repo, text=text, labels=["Fix now (recommended)", "Ship anyway"])) == ""
    assert auto_decided() == []


def test_175_two_recommended_labels_pass_through(repo, prefs):
    prefs("ship-pre-landing-review-fix", "never-ask")
    assert (
        pre(fix_payload(repo, labels=["A) Fix now (recommended)", "B) Skip (recommended)"])) == ""
    )


def test_176_no_recommendation_passes_through(repo, prefs):
    prefs("ship-pre-landing-review-fix", "never-ask")
    assert pre(fix_payload(repo, labels=["A) Fix now", "B) Skip"])) == ""


def test_176_prose_recommendation_must_match_exactly_one_label(repo, prefs):
    prefs("ship-pre-landing-review-fix", "never-ask")
    # The first 12 characters of the recommendation line must start exactly one label.
    one = FIX_TEXT + "\nRecommendation: B) Skip the guard, it is cosmetic."
    labels = ["A) Fix now", "B) Skip the guard for now"]
    assert (
        "→ B) Skip the guard for now"
        in decision(pre(fix_payload(repo, text=one, labels=labels)))["permissionDecisionReason"]
    )
    two = FIX_TEXT + "\nRecommendation: Fix"
    assert pre(fix_payload(repo, text=two, labels=["Fix now", "Fix later"])) == ""


def test_177_unregistered_id_uses_the_keyword_net(repo, prefs):
    prefs("adhoc-credential-cleanup", "never-ask")
    risky = "Reset my secret and proceed? <gstack-qid:adhoc-credential-cleanup>"
    assert pre(fix_payload(repo, text=risky, labels=["Yes (recommended)", "No"])) == ""
    safe = "Reorganize the TODOs file? <gstack-qid:adhoc-credential-cleanup>"
    d = decision(pre(fix_payload(repo, text=safe, labels=["Yes (recommended)", "No"])))
    assert "plan-tune auto-decide" in d["permissionDecisionReason"]


def test_178_project_beats_global(repo, prefs):
    qid = "ship-pre-landing-review-fix"
    prefs(qid, "never-ask")
    prefs(qid, "always-ask", scope="__global__")
    assert decision(pre(fix_payload(repo)))["permissionDecision"] == "deny"


def test_178_global_never_ask_alone_auto_decides(repo, prefs):
    prefs("ship-pre-landing-review-fix", "never-ask", scope="__global__")
    assert decision(pre(fix_payload(repo)))["permissionDecision"] == "deny"


def test_178_project_always_ask_beats_global_never_ask(repo, prefs):
    prefs("ship-pre-landing-review-fix", "always-ask")
    prefs("ship-pre-landing-review-fix", "never-ask", scope="__global__")
    assert pre(fix_payload(repo)) == ""


def test_179_mcp_tool_is_enforced_too(repo, prefs):
    prefs("ship-pre-landing-review-fix", "never-ask")
    assert (
        decision(pre(fix_payload(repo, tool="mcp__conductor__AskUserQuestion")))[
            "permissionDecision"
        ]
        == "deny"
    )


@pytest.mark.parametrize(
    "var,value", [("CONDUCTOR_PORT", "4123"), ("CONDUCTOR_WORKSPACE_PATH", "/w")]
)
def test_180_conductor_denies_with_a_prose_brief(repo, prefs, monkeypatch, var, value):
    monkeypatch.setenv(var, value)
    reason = decision(pre(fix_payload(repo)))["permissionDecisionReason"]
    assert reason.startswith("[conductor]")
    assert "do not call askuserquestion" in reason.lower()
    assert "reply with a letter" in reason.lower()
    assert "typed confirmation" not in reason.lower()
    unmarked = decision(pre(fix_payload(repo, text="Ship it?")))["permissionDecisionReason"]
    assert unmarked.startswith("[conductor]")
    one_way = decision(
        pre(fix_payload(repo, text="Tests failed. <gstack-qid:ship-test-failure-triage>"))
    )
    assert "typed confirmation" in one_way["permissionDecisionReason"].lower()
    assert pre(fix_payload(repo, tool="Bash")) == ""


def test_180_full_auto_decide_wins_over_conductor(repo, prefs, monkeypatch):
    monkeypatch.setenv("CONDUCTOR_PORT", "4123")
    prefs("ship-pre-landing-review-fix", "never-ask")
    reason = decision(pre(fix_payload(repo)))["permissionDecisionReason"]
    assert "plan-tune auto-decide" in reason and "[conductor]" not in reason


def test_181_auto_decide_logs_exactly_one_event(repo, prefs, state_root):
    prefs("ship-pre-landing-review-fix", "never-ask")
    pre(fix_payload(repo, tool_use_id="tu-13", session_id="s13"))
    [ev] = auto_decided()
    assert ev["question_id"] == "ship-pre-landing-review-fix"
    assert ev["tool_use_id"] == "tu-13" and ev["project"] == "acme-web"
    # The row stores the option key, as an answered row does; the label goes beside it.
    assert ev["user_choice"] == ev["recommended"] == "fix-now"
    assert ev["followed_recommendation"] == 1 and ev["skill"] == "ship"
    extra = json.loads(ev["extra_json"])
    assert (extra["user_choice_label"], extra["recommended_label"]) == ("A) Fix now",) * 2
    assert "user_choice_key" not in extra and "recommended_key" not in extra
    # gstack's line keeps the label gstack's own hook logs, the key beside it.
    mirror = (state_root / "projects" / "acme-web" / "question-log.jsonl").read_text().splitlines()
    assert [json.loads(l)["source"] for l in mirror] == ["auto-decided"]
    line = json.loads(mirror[0])
    assert line["user_choice"] == line["recommended"] == "A) Fix now"
    assert (line["user_choice_key"], line["recommended_key"]) == ("fix-now", "fix-now")


SCOPE_TEXT = "How big should this plan be? <gstack-qid:plan-ceo-review-mode>"
SCOPE_LABELS = ["A) Expand", "B) Selective", "C) Hold scope", "D) Reduce (recommended)"]


def _profile(db_file, project="acme-web"):
    from toolkit.core import profile as prof
    from toolkit.core import seeded_db

    conn = seeded_db.connect(db_file)
    try:
        inferred = prof.inferred(conn, project)
        return prof.diversity(conn, project)["sample_size"], inferred["values"]["scope_appetite"]
    finally:
        conn.close()


def test_an_auto_decided_row_stores_the_key_and_never_moves_the_profile(
    repo, prefs, db_file, state_root
):
    from tests.helpers.hotpath import db_rows

    prefs("plan-ceo-review-mode", "never-ask")
    data = payload([question(SCOPE_TEXT, SCOPE_LABELS)], cwd=repo, event="PreToolUse")
    assert (
        "plan-tune auto-decide"
        in decision(pre(dict(data, tool_use_id="tu-a1")))["permissionDecisionReason"]
    )
    [ev] = auto_decided()
    assert ev["user_choice"] == "reduce"  # the key, as an answered row stores it
    assert json.loads(ev["extra_json"])["user_choice_label"] == "D) Reduce"
    # Counted as gstack counts it (one more event), but no dimension moves: the same
    # answer given by the user would.
    assert _profile(db_file) == (1, 0.5)
    assert db_rows("SELECT count(*) AS n FROM dimension_trace")[0]["n"] == 0

    # The user answers the same question: the key is stored and the profile moves.
    answered = payload(
        [question(SCOPE_TEXT, SCOPE_LABELS)],
        {"answers": {SCOPE_TEXT.split(" <")[0]: "D) Reduce (recommended)"}},
        cwd=repo,
        tool_use_id="tu-a2",
    )
    assert run_hook("post-tool-use", answered).returncode == 0
    sample, value = _profile(db_file)
    assert sample == 2 and value < 0.5
    # Both rows name the same option key where analysts read them.
    keys = db_rows("SELECT source, choice_key FROM question_events ORDER BY id")
    assert [(r["source"], r["choice_key"]) for r in keys] == [
        ("auto-decided", "reduce"),
        ("hook", "reduce"),
    ]


def test_an_auto_decided_choice_that_names_no_option_gets_no_key(repo, prefs):
    prefs("plan-ceo-review-mode", "never-ask")
    labels = ["A) Something else entirely (recommended)", "B) Hold scope"]
    pre(payload([question(SCOPE_TEXT, labels)], cwd=repo, event="PreToolUse"))
    [ev] = auto_decided()
    assert ev["user_choice"] == "A) Something else entirely"
    extra = json.loads(ev["extra_json"])
    assert "user_choice_key" not in extra and "user_choice_label" not in extra
    assert events()[0]["user_choice"] == "A) Something else entirely"


def test_an_auto_decided_label_that_is_another_options_key_still_moves_nothing(
    repo, prefs, db_file, state_root
):
    """Hostile labels: the recommended label is literally the key of an option that moves
    scope_appetite ('expand'), another shown label spells a second key. The row stores
    the key the recommended label names, and an auto-decision moves no dimension."""
    from tests.helpers.hotpath import db_rows

    prefs("plan-ceo-review-mode", "never-ask")
    labels = ["expand (recommended)", "reduce"]
    assert "auto-decide" in pre(
        payload([question(SCOPE_TEXT, labels)], cwd=repo, event="PreToolUse")
    )
    [ev] = auto_decided()
    assert ev["user_choice"] == ev["recommended"] == "expand"
    assert json.loads(ev["extra_json"])["user_choice_label"] == "expand"
    assert _profile(db_file) == (1, 0.5)
    assert db_rows("SELECT count(*) AS n FROM dimension_trace")[0]["n"] == 0
    line = json.loads(
        (state_root / "projects" / "acme-web" / "question-log.jsonl").read_text().splitlines()[0]
    )
    assert line["user_choice"] == "expand" and line["source"] == "auto-decided"


def test_a_multi_question_auto_decision_stores_each_questions_key(repo, prefs, db_file, state_root):
    prefs("plan-ceo-review-mode", "never-ask")
    prefs("ship-pre-landing-review-fix", "never-ask")
    qs = [question(SCOPE_TEXT, SCOPE_LABELS), question(FIX_TEXT, FIX_LABELS)]
    assert "auto-decide" in pre(payload(qs, cwd=repo, event="PreToolUse", tool_use_id="tu-m"))
    rows = auto_decided()
    assert [(r["question_index"], r["user_choice"], r["recommended"]) for r in rows] == [
        (0, "reduce", "reduce"),
        (1, "fix-now", "fix-now"),
    ]
    assert [json.loads(r["extra_json"])["user_choice_label"] for r in rows] == [
        "D) Reduce",
        "A) Fix now",
    ]
    mirror = (state_root / "projects" / "acme-web" / "question-log.jsonl").read_text()
    lines = [json.loads(l) for l in mirror.splitlines()]
    assert [l["user_choice"] for l in lines] == ["D) Reduce", "A) Fix now"]
    assert _profile(db_file) == (2, 0.5)


def test_182_auto_decide_writes_the_session_marker(repo, prefs, state_root):
    prefs("ship-pre-landing-review-fix", "never-ask")
    pre(fix_payload(repo, tool_use_id="tu-14", session_id="s14"))
    assert (state_root / "sessions" / "s14" / ".auto-decided-tu-14").is_file()


# --- gstack's hook bugs, and plantune's safety rules ------------------------


def test_preference_under_the_cli_slug_is_found(repo, prefs):
    """#2901: the checkout folder is 'web'; gstack's hook looked under projects/web."""
    prefs("ship-pre-landing-review-fix", "never-ask", scope="web")
    assert pre(fix_payload(repo)) == ""
    prefs("ship-pre-landing-review-fix", "never-ask", scope="acme-web")
    assert decision(pre(fix_payload(repo)))["permissionDecision"] == "deny"


def test_split_chain_option_is_never_auto_decided(repo, prefs):
    prefs("ship-split-fix-now", "never-ask")
    text = "Apply option 1? <gstack-qid:ship-split-fix-now>"
    assert pre(fix_payload(repo, text=text, labels=["Yes (recommended)", "No"])) == ""
    prefs("qa-splitscreen-test", "never-ask")  # not a split chain: "-split-" is required
    text = "Splitscreen test? <gstack-qid:qa-splitscreen-test>"
    assert decision(pre(fix_payload(repo, text=text, labels=["Yes (recommended)", "No"])))


def test_unknown_preference_value_is_never_auto_decided(repo, prefs):
    prefs("ship-pre-landing-review-fix", "unknown", raw="sometimes")
    assert pre(fix_payload(repo)) == ""


def test_ask_only_for_one_way_auto_decides_a_two_way_question(repo, prefs):
    prefs("ship-pre-landing-review-fix", "ask-only-for-one-way")
    reason = decision(pre(fix_payload(repo)))["permissionDecisionReason"]
    assert "(your ask-only-for-one-way preference)" in reason


def test_ask_only_for_one_way_still_asks_a_one_way_question(repo, prefs):
    prefs("land-and-deploy-merge-confirm", "ask-only-for-one-way")
    text = "Merge now? <gstack-qid:land-and-deploy-merge-confirm>"
    assert pre(fix_payload(repo, text=text, labels=["Merge (recommended)", "Wait"])) == ""


def test_upper_case_marker_is_understood(repo, prefs):
    prefs("ship-test-failure-triage", "never-ask")
    text = "Tests failed. <GSTACK-QID:SHIP-TEST-FAILURE-TRIAGE>"
    assert pre(fix_payload(repo, text=text, labels=["Fix (recommended)", "Ship"])) == ""
    prefs("ship-pre-landing-review-fix", "never-ask")
    text = "Guard? <GSTACK-QID:Ship-Pre-Landing-Review-Fix>"
    assert decision(pre(fix_payload(repo, text=text)))["permissionDecision"] == "deny"


def test_multi_question_call_logs_every_question(repo, prefs):
    prefs("ship-pre-landing-review-fix", "never-ask")
    prefs("qa-tier", "never-ask")
    qs = [
        question(FIX_TEXT, FIX_LABELS),
        question("QA depth? <gstack-qid:qa-tier>", ["Quick", "Standard (recommended)", "Deep"]),
    ]
    reason = decision(pre(payload(qs, cwd=repo, event="PreToolUse")))["permissionDecisionReason"]
    assert reason.splitlines()[0].startswith(
        "[plan-tune auto-decide] ship-pre-landing-review-fix → A) Fix now"
    )
    assert reason.splitlines()[1].startswith("[plan-tune auto-decide] qa-tier → Standard")
    evs = auto_decided()
    assert [(e["question_id"], e["question_index"]) for e in evs] == [
        ("ship-pre-landing-review-fix", 0),
        ("qa-tier", 1),
    ]


def test_multi_question_call_is_all_or_nothing(repo, prefs):
    prefs("ship-pre-landing-review-fix", "never-ask")
    qs = [
        question(FIX_TEXT, FIX_LABELS),
        question("QA depth? <gstack-qid:qa-tier>", ["Quick", "Standard (recommended)", "Deep"]),
    ]
    assert pre(payload(qs, cwd=repo, event="PreToolUse")) == ""
    assert auto_decided() == []


def test_memory_context_on_pass_through_has_no_decision(repo, prefs, state_root):
    (state_root / "free-text-memory.json").write_text(
        json.dumps(
            {
                "nuggets": [
                    {
                        "nugget": "prefers small guards",
                        "applies_to_signal_keys": ["code-quality-care"],
                        "applied_at": "2026-01-02T00:00:00Z",
                    },
                    {
                        "nugget": "older note",
                        "applies_to_signal_keys": ["code-quality-care"],
                        "applied_at": "2025-01-01T00:00:00Z",
                    },
                    {"nugget": "unrelated", "applies_to_signal_keys": ["scope-appetite"]},
                ]
            }
        )
    )
    d = decision(pre(fix_payload(repo)))
    assert "permissionDecision" not in d
    assert (
        d["additionalContext"]
        == "[plan-tune memory] Past answers suggest: prefers small guards | older note"
    )


def test_without_a_database_it_passes_through_and_creates_nothing(repo, db_file):
    assert pre(fix_payload(repo)) == ""
    assert not os.path.exists(db_file)


def test_unsafe_session_id_writes_no_marker_outside_sessions(repo, prefs, state_root):
    prefs("ship-pre-landing-review-fix", "never-ask")
    out = pre(fix_payload(repo, session_id="../../escape", tool_use_id="tu-9"))
    assert decision(out)["permissionDecision"] == "deny"
    assert not list(state_root.parent.rglob(".auto-decided-*"))
    assert len(auto_decided()) == 1


def test_malformed_stdin_is_logged_and_passes_through(state_root):
    assert pre("{oops") == ""
    assert "pre-tool-use: stdin parse failed" in error_log(state_root)


def test_corrupt_database_is_logged_and_passes_through(repo, state_root, db_file):
    with open(db_file, "w") as f:
        f.write("garbage" * 500)
    assert pre(fix_payload(repo)) == ""
    assert "pre-tool-use: main crash:" in error_log(state_root)


@pytest.mark.parametrize("key", [5, None, ["reduce"], {"k": "reduce"}])
def test_a_hand_written_key_that_is_not_text_is_never_shown_as_the_choice(conn, key):
    from toolkit.core import questions

    rec = questions.validate_event(
        {
            "skill": "plan-ceo-review",
            "question_id": "plan-ceo-review-mode",
            "question_summary": "How big should this plan be?",
            "user_choice": "D) Reduce",
            "source": "auto-decided",
            "user_choice_key": key,
        }
    )
    questions.record_event(conn, rec, "p")
    row = conn.execute("SELECT choice_key FROM question_events").fetchone()
    assert row[0] == "D) Reduce"
