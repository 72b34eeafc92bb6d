"""`plantune pacing rank|show|silent`, `plantune flip` and the gstack-pacing-rank script."""

import json
import sqlite3
import subprocess

import pytest
from click.testing import CliRunner

from tests.helpers import script
from toolkit.cli.app import cli
from toolkit.core import questions

PROJECT = "pacing-proj"


@pytest.fixture(autouse=True)
def project_slug(monkeypatch):
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", PROJECT)


def fnd(fid, s=1, i=1, d=1, **kw):
    base = {
        "id": fid,
        "summary": f"Summary of {fid}",
        "severity": s,
        "irreversibility": i,
        "decision_matters": d,
        "recommended": "fix-now",
        "options": ["fix-now", "defer"],
    }
    base.update(kw)
    return base


REQUEST = {
    "session_id": "s1",
    "chain_id": "c1",
    "phase": "eng",
    "budget": 6,
    "findings": [
        fnd(
            "eng-drop-legacy",
            1,
            2,
            1,
            summary="Drop table legacy_orders after the move",
            recommended="keep",
            options=["keep", "drop"],
        ),
        fnd("eng-missing-index", 2, 0, 2, summary="Add an index on orders.user_id"),
        fnd(
            "test-coverage-bookclub-form",
            1,
            1,
            0,
            summary="Bookclub form has no tests",
            recommended="defer",
            options=["add-tests", "defer"],
        ),
        fnd("eng-cache-ttl", 0, 1, 1, summary="Cache TTL is short", recommended="defer"),
        fnd(
            "eng-approve",
            0,
            0,
            0,
            kind="approval",
            summary="Approve the eng plan",
            recommended="approve",
            options=["approve", "revise"],
        ),
    ],
}


def invoke(args, input=None):
    return CliRunner().invoke(cli, args, input=input)


def rows(db_file, sql, params=()):
    conn = sqlite3.connect(db_file)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def counts(db_file):
    return {
        t: rows(db_file, f"SELECT count(*) AS n FROM {t}")[0]["n"]
        for t in ("findings", "question_log", "pacing_runs", "pacing_chains")
    }


def test_rank_prints_the_contract(db_file):
    r = invoke(["pacing", "rank"], json.dumps(REQUEST))
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert list(out) == [
        "session_id",
        "chain_id",
        "phase",
        "threshold",
        "calibration_id",
        "calibration",
        "surface",
        "silent_decisions",
        "budget",
    ]
    assert out["calibration"] is None  # the default rule: no calibration stored yet
    assert [(s["id"], s["reason"]) for s in out["surface"]] == [
        ("eng-drop-legacy", "one-way"),
        ("eng-missing-index", "rank"),
        ("eng-approve", "gate"),
    ]
    assert out["silent_decisions"] == [
        {
            "id": "test-coverage-bookclub-form",
            "choice": "defer",
            "score": 2,
            "flip": "flip test-coverage-bookclub-form",
        },
        {"id": "eng-cache-ttl", "choice": "defer", "score": 2, "flip": "flip eng-cache-ttl"},
    ]
    assert out["budget"] == {
        "chain_budget": 6,
        "spent_before": 0,
        "spent_this_phase": 1,
        "remaining": 5,
        "phase_cap": 3,
    }
    assert {r["project"] for r in rows(db_file, "SELECT project FROM findings")} == {PROJECT}


def test_rank_notes_an_ignored_budget_on_stderr(db_file):
    invoke(["pacing", "rank"], json.dumps(REQUEST))
    second = dict(REQUEST, phase="dx", budget=9, findings=[fnd("dx-a")])
    r = CliRunner().invoke(cli, ["pacing", "rank"], input=json.dumps(second))
    assert r.exit_code == 0
    assert r.stderr == "note: chain c1 keeps its first budget 6 (ignored 9)\n"
    assert json.loads(r.stdout)["budget"]["chain_budget"] == 6


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "Error: no input: expected a JSON object"),
        ("{not json", "Error: invalid JSON"),
        (json.dumps(dict(REQUEST, phase="qa")), 'Error: unknown phase "qa"'),
        (
            json.dumps(dict(REQUEST, findings=[fnd("eng-a", s=5)])),
            "Error: finding eng-a: severity must be an integer 0-2 (got 5)",
        ),
        (
            json.dumps(dict(REQUEST, findings=[fnd("eng-a"), fnd("eng-a")])),
            "Error: duplicate finding id eng-a",
        ),
    ],
)
def test_rank_bad_input_is_one_line_exit_1_nothing_stored(db_file, text, message):
    invoke(["init"])
    before = counts(db_file)
    r = invoke(["pacing", "rank"], text)
    assert r.exit_code == 1
    assert r.output.startswith(message) and r.output.count("\n") == 1
    assert counts(db_file) == before


def test_rerank_with_other_findings_is_refused(db_file):
    assert invoke(["pacing", "rank"], json.dumps(REQUEST)).exit_code == 0
    before = counts(db_file)
    r = invoke(["pacing", "rank"], json.dumps(dict(REQUEST, findings=[fnd("eng-new")])))
    assert r.exit_code == 1 and "phase eng of session s1 is already ranked" in r.output
    assert counts(db_file) == before
    again = invoke(["pacing", "rank"], json.dumps(REQUEST))
    assert again.exit_code == 0 and counts(db_file) == before


def test_flip_round_trip(db_file):
    """rank → flip (question) → flip --choice → block shows it → --surface removes it."""
    assert invoke(["pacing", "rank"], json.dumps(REQUEST)).exit_code == 0
    block = invoke(["pacing", "silent", "s1"]).output
    assert "### Silent Decisions (2)" in block
    assert (
        "- **eng** Bookclub form has no tests → `defer` · `flip test-coverage-bookclub-form`"
        in block
    )

    # 1. flip prints the re-opened question, ready for AskUserQuestion, and changes nothing
    before = counts(db_file)
    r = invoke(["flip", "test-coverage-bookclub-form"])
    assert r.exit_code == 0, r.output
    q = json.loads(r.output)
    assert (q["question"], q["options"], q["recommended"], q["auto_chosen"]) == (
        "Bookclub form has no tests",
        ["add-tests", "defer"],
        "defer",
        "defer",
    )
    auq = q["ask_user_question"]["questions"][0]
    assert auq["options"] == [
        {"label": "add-tests", "description": ""},
        {"label": "defer", "description": "recommended, auto-chosen"},
    ]
    assert counts(db_file) == before

    # 2. the user's new choice is recorded as a flip event and the block shows it
    r = invoke(["flip", "test-coverage-bookclub-form", "--session", "s1", "--choice", "add-tests"])
    assert r.exit_code == 0, r.output
    assert "test-coverage-bookclub-form → add-tests" in r.output
    flip_ev = rows(db_file, "SELECT * FROM question_log WHERE source = 'flip'")
    assert len(flip_ev) == 1
    assert (
        flip_ev[0]["user_choice"],
        flip_ev[0]["recommended"],
        flip_ev[0]["phase"],
        flip_ev[0]["session_id"],
        flip_ev[0]["followed_recommendation"],
    ) == ("add-tests", "defer", "eng", "s1", 0)
    block = invoke(["pacing", "silent", "s1"]).output
    assert (
        "Bookclub form has no tests → `add-tests` (flipped from `defer`)"
        " · `flip test-coverage-bookclub-form`"
    ) in block
    d = rows(
        db_file,
        "SELECT * FROM pacing_decisions WHERE finding_id = ?",
        ("test-coverage-bookclub-form",),
    )[0]
    assert (d["disposition"], d["flipped"], d["choice_in_force"], d["answer_source"]) == (
        "silent",
        1,
        "add-tests",
        "flip",
    )
    silent_json = json.loads(invoke(["pacing", "silent", "s1", "--json"]).output)
    assert [(x["finding_id"], x["choice"], x["flipped"]) for x in silent_json] == [
        ("test-coverage-bookclub-form", "add-tests", True),
        ("eng-cache-ttl", "defer", False),
    ]

    # 3. --surface takes it out of the block; it counts as surfaced, not against the budget
    r = invoke(["flip", "eng-cache-ttl", "--surface"])
    assert r.exit_code == 0 and json.loads(r.output)["disposition"] == "surfaced"
    block = invoke(["pacing", "silent", "s1"]).output
    assert "eng-cache-ttl" not in block and "### Silent Decisions (1)" in block
    pc = rows(db_file, "SELECT * FROM pacing_phase_counts WHERE session_id = 's1'")[0]
    assert (pc["surfaced"], pc["surfaced_flip"], pc["silent"], pc["flipped"], pc["answered"]) == (
        4,
        1,
        1,
        2,
        0,
    )
    assert rows(db_file, "SELECT spent FROM pacing_chain_budgets")[0]["spent"] == 1

    # 4. the user answers the surfaced question; the agent logs it and it links back
    conn = sqlite3.connect(db_file)
    rec = questions.validate_event(
        {
            "skill": "plan-eng-review",
            "question_id": "eng-cache-ttl",
            "question_summary": "TTL?",
            "user_choice": "fix-now",
            "session_id": "s1",
            "phase": "eng",
        },
        allow_phase=True,
    )
    ev = questions.record_event(conn, rec, PROJECT).id
    conn.close()
    show = json.loads(invoke(["pacing", "show", "s1", "--json"]).output)
    eng = show["phases"][0]
    assert (eng["surfaced"], eng["silent"], eng["answered"]) == (4, 1, 1)
    f = rows(
        db_file, "SELECT answer_event_id, choice FROM findings WHERE finding_id = 'eng-cache-ttl'"
    )
    assert f == [{"answer_event_id": ev, "choice": "fix-now"}]


def test_flip_state_survives_a_new_process(db_file):
    invoke(["pacing", "rank"], json.dumps(REQUEST))
    invoke(["flip", "eng-cache-ttl", "--choice", "fix-now"])
    out = subprocess.run(
        [script("plantune"), "pacing", "silent", "s1"], capture_output=True, text=True
    )
    assert out.returncode == 0
    assert "Cache TTL is short → `fix-now` (flipped from `defer`)" in out.stdout


def test_flip_choice_is_checked_against_the_options(db_file):
    invoke(["pacing", "rank"], json.dumps(REQUEST))
    before = counts(db_file)
    r = invoke(["flip", "eng-cache-ttl", "--choice", "fix-nwo"])
    assert r.exit_code == 1 and r.output == "Error: choice must be one of: fix-now, defer\n"
    # a "(Recommended)" marker is tolerated
    assert invoke(["flip", "eng-cache-ttl", "--choice", "defer (Recommended)"]).exit_code == 0
    after = rows(db_file, "SELECT user_choice FROM question_log WHERE source = 'flip'")
    assert (
        after == [{"user_choice": "defer"}]
        and counts(db_file)["question_log"] == before["question_log"] + 1
    )
    block = invoke(["pacing", "silent", "s1"]).output
    assert "Cache TTL is short → `defer` (confirmed)" in block


@pytest.mark.parametrize(
    "args,message",
    [
        (["flip", "no-such-id"], "Error: no pacing decision with id no-such-id\n"),
        (
            ["flip", "eng-cache-ttl", "--session", "s9"],
            "Error: no pacing decision with id eng-cache-ttl in session s9\n",
        ),
        (
            ["flip", "eng-cache-ttl", "--choice", "defer", "--surface"],
            "Error: use either --choice or --surface, not both\n",
        ),
        (
            ["flip", "eng-missing-index", "--surface"],
            "Error: eng-missing-index is already surfaced (rank)\n",
        ),
        (["pacing", "show", "s9"], "Error: no pacing decisions for session s9\n"),
        (["pacing", "silent", "s9"], "Error: no pacing decisions for session s9\n"),
        (
            ["pacing", "silent", "s1", "--phase", "qa"],
            'Error: unknown phase "qa", must be one of: ceo, design, eng, dx, other\n',
        ),
    ],
)
def test_flip_and_report_errors(db_file, args, message):
    invoke(["pacing", "rank"], json.dumps(REQUEST))
    before = counts(db_file)
    r = invoke(args)
    assert r.exit_code == 1 and r.output == message
    assert counts(db_file) == before


def test_flip_without_session_takes_the_newest_decision(db_file):
    invoke(["pacing", "rank"], json.dumps(REQUEST))
    invoke(["pacing", "rank"], json.dumps(dict(REQUEST, session_id="s2")))
    q = json.loads(invoke(["flip", "eng-cache-ttl"]).output)
    assert q["session_id"] == "s2"
    assert "--session s2" in q["record_answer"]


def test_show_text(db_file):
    invoke(["pacing", "rank"], json.dumps(REQUEST))
    invoke(
        ["pacing", "rank"], json.dumps(dict(REQUEST, phase="dx", findings=[fnd("dx-a", 2, 2, 2)]))
    )
    r = invoke(["pacing", "show", "s1"])
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert lines[0] == "Session s1"
    assert lines[1] == "Chain c1: budget 6: 2 spent, 4 left"
    assert lines[4].split() == ["eng", "5", "3", "1", "1", "1", "0", "2", "0", "0", "1"]
    assert lines[5].split() == ["dx", "1", "1", "0", "0", "1", "0", "0", "0", "0", "1"]
    assert lines[-1] == "6 findings: 4 surfaced, 2 silent (0 flipped)."


def test_silent_block_for_one_phase_and_when_empty(db_file):
    invoke(["pacing", "rank"], json.dumps(REQUEST))
    invoke(
        ["pacing", "rank"], json.dumps(dict(REQUEST, phase="dx", findings=[fnd("dx-a", 2, 2, 2)]))
    )
    assert "None" in invoke(["pacing", "silent", "s1", "--phase", "dx"]).output
    assert "### Silent Decisions (2)" in invoke(["pacing", "silent", "s1", "--phase", "ENG"]).output


# --- the hook-side console script -------------------------------------------


def run_script(args, stdin):
    return subprocess.run(
        [script("gstack-pacing-rank"), *args], input=stdin, capture_output=True, text=True
    )


def test_console_script_ranks_like_the_cli(db_file):
    p = run_script([], json.dumps(REQUEST))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert [s["id"] for s in out["surface"]] == [
        "eng-drop-legacy",
        "eng-missing-index",
        "eng-approve",
    ]
    assert rows(db_file, "SELECT DISTINCT project FROM findings") == [{"project": PROJECT}]
    # the CLI replays the very same answer
    assert json.loads(invoke(["pacing", "rank"], json.dumps(REQUEST)).output) == out


@pytest.mark.parametrize(
    "stdin,message",
    [
        ("", "gstack-pacing-rank: no input: expected a JSON object"),
        ("[]", "gstack-pacing-rank: invalid input"),
        (
            json.dumps(dict(REQUEST, findings=[fnd("eng-a", i=3)])),
            "gstack-pacing-rank: finding eng-a: irreversibility must be an integer 0-2 (got 3)",
        ),
    ],
)
def test_console_script_errors(db_file, stdin, message):
    p = run_script([], stdin)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.startswith(message) and p.stderr.count("\n") == 1


def test_console_script_db_option_and_usage(tmp_path):
    other = str(tmp_path / "other.db")
    p = run_script(["--db", other], json.dumps(REQUEST))
    assert p.returncode == 0 and rows(other, "SELECT count(*) AS n FROM findings")[0]["n"] == 5
    p = run_script(["--bogus"], "")
    assert p.returncode == 1
    assert p.stderr == "gstack-pacing-rank: usage: gstack-pacing-rank [--db PATH] < request.json\n"


@pytest.mark.parametrize("argv", [["gstack-pacing-rank"], ["plantune", "pacing", "rank"]])
def test_rank_with_stdin_closed_says_there_is_no_input(db_file, argv):
    r = subprocess.run(
        ["sh", "-c", 'exec 0<&-; exec "$0" "$@"', script(argv[0]), *argv[1:]],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1
    assert len(r.stderr.splitlines()) == 1 and "no input" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
