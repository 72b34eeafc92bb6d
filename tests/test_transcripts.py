"""`plantune ingest-transcripts DIR`: backfill from Claude Code session transcripts.

Fixtures (tests/fixtures/transcripts/, written for these tests):
- acme-web/sess-a: an answered call (structured toolUseResult), a two-question call
  answered only in the result text, a typed "Other" answer, plus unrelated tool calls;
- billing-api/sess-b: an mcp-prefixed call answered with a list of text items, a
  rejected call, an interrupted call, a call never answered, and a corrupt line.
"""

import json
import os
import shutil
import sqlite3

from click.testing import CliRunner

from tests.helpers.hooks import make_repo, payload, question, run_hook
from toolkit.claude import payload as hook_payload
from toolkit.claude import transcripts
from toolkit.cli.app import cli

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "transcripts")
SESS_A = os.path.join(FIXTURES, "-plantune-fixture-acme-web", "sess-a.jsonl")
SESS_B = os.path.join(FIXTURES, "-plantune-fixture-billing-api", "sess-b.jsonl")

EXPECTED = [
    # project, question_id, index, user_choice, recommended, followed, free_text
    ("acme-web", "ship-pre-landing-review-fix", 0, "fix-now", "fix-now", 1, None),
    ("acme-web", "plan-ceo-review-mode", 0, "hold", "hold", 1, None),
    ("acme-web", "hook-2d34c4e6ad", 1, "Jest", "Vitest", 0, None),
    (
        "acme-web",
        "office-hours-approach-choose",
        0,
        'Something in between: ship minimal, then "grow" it',
        "minimal",
        0,
        'Something in between: ship minimal, then "grow" it',
    ),
    ("billing-api", "qa-tier", 0, "deep", "standard", 0, None),
]


def run(*args):
    return CliRunner().invoke(cli, ["ingest-transcripts", *args])


def rows(db_file):
    conn = sqlite3.connect(db_file)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM question_log ORDER BY id")]
    finally:
        conn.close()


def shape(rs):
    return [
        (
            r["project"],
            r["question_id"],
            r["question_index"],
            r["user_choice"],
            r["recommended"],
            r["followed_recommendation"],
            r["free_text"],
        )
        for r in rs
    ]


def test_fixtures_yield_the_expected_events(db_file):
    r = run(FIXTURES)
    assert r.exit_code == 0, r.output + r.stderr
    assert "imported 5 questions, 0 already imported" in r.output
    assert "Skipped: 1 unanswered, 2 rejected or interrupted, 0 unreadable, 0 refused." in r.output
    assert f"{SESS_B}:3: not valid JSON, skipped" in r.stderr
    rs = rows(db_file)
    assert shape(rs) == EXPECTED
    assert {r["source"] for r in rs} == {"transcript-import"}
    first = rs[0]
    assert first["ts"] == "2026-03-02T09:01:30.250Z"  # the answer's own time
    assert first["session_id"] == "sess-a" and first["tool_use_id"] == "toolu_A1"
    assert first["skill"] == "ship"
    extra = json.loads(first["extra_json"])
    assert extra.pop("whole_question").startswith("Pre-landing review found")  # for the doors
    assert extra == {
        "user_choice_label": "A) Fix now",
        "recommended_label": "A) Fix now",
    }
    assert first["ingested_from"] == f"{os.path.abspath(SESS_A)}:6"
    assert [r["tool_use_id"] for r in rs[1:3]] == ["toolu_A2", "toolu_A2"]
    assert rs[4]["tool_use_id"] == "toolu_B1"


def test_rerun_adds_nothing(db_file):
    run(FIXTURES)
    before = rows(db_file)
    r = run(FIXTURES, "--json")
    assert r.exit_code == 0
    summary = json.loads(r.stdout)
    assert summary["imported"] == 0 and summary["already_imported"] == 5
    assert rows(db_file) == before


def test_json_summary_counts(db_file):
    summary = json.loads(run(FIXTURES, "--json").stdout)
    assert summary == {
        "files": 2,
        "calls": 7,
        "imported": 5,
        "already_imported": 0,
        "captured_by_hook": 0,
        "unanswered": 1,
        "rejected": 2,
        "unreadable": 0,
        "refused": 0,
        "problems": [f"{SESS_B}:3: not valid JSON, skipped"],
    }


def test_nothing_is_mirrored_to_gstack_files(db_file, state_root):
    run(FIXTURES)
    assert not (state_root / "projects").exists()


def test_project_option_forces_one_slug(db_file):
    assert run(FIXTURES, "--project", "legacy").exit_code == 0
    assert {r["project"] for r in rows(db_file)} == {"legacy"}


def test_bad_project_slug_is_refused(db_file):
    r = run(FIXTURES, "--project", "../etc")
    assert r.exit_code == 1
    assert "invalid project slug '../etc'" in r.stderr
    assert not os.path.exists(db_file)


def test_missing_directory_is_an_error(db_file, tmp_path):
    r = run(str(tmp_path / "nope"))
    assert r.exit_code == 1
    assert r.stderr.strip() == f"Error: {tmp_path / 'nope'} is not a directory"
    assert not os.path.exists(db_file)


def test_directory_without_transcripts_is_an_error(db_file, tmp_path):
    (tmp_path / "empty").mkdir()
    r = run(str(tmp_path / "empty"))
    assert r.exit_code == 1
    assert f"no *.jsonl transcripts under {tmp_path / 'empty'}" in r.stderr
    assert not os.path.exists(db_file)


def test_session_already_captured_by_the_hook_is_not_doubled(db_file, tmp_path):
    """The live hook recorded toolu_A1; importing the same session later adds only the rest."""
    cwd = tmp_path / "acme-web"
    cwd.mkdir()
    text = (
        "Pre-landing review found a missing null check in cart.ts. "
        "<gstack-qid:ship-pre-landing-review-fix>\nRecommendation: A, it is a two-line guard."
    )
    q = question(text, ["A) Fix now (recommended)", "B) Skip"])
    p = payload(
        [q], {"answers": {text: "A) Fix now (recommended)"}}, cwd=cwd, tool_use_id="toolu_A1"
    )
    assert run_hook("post-tool-use", p).returncode == 0
    summary = json.loads(run(FIXTURES, "--project", "acme-web", "--json").stdout)
    assert summary["captured_by_hook"] == 1 and summary["imported"] == 4
    fix = [r for r in rows(db_file) if r["question_id"] == "ship-pre-landing-review-fix"]
    assert [r["source"] for r in fix] == ["hook"]


def test_slug_follows_the_cli_rules_for_a_real_cwd(db_file, tmp_path):
    repo = make_repo(tmp_path, "acme/web", name="checkout")
    folder = tmp_path / "t"
    folder.mkdir()
    with (
        open(SESS_A, encoding="utf-8") as src,
        open(folder / "s.jsonl", "w", encoding="utf-8") as dst,
    ):
        dst.write(src.read().replace("/plantune-fixture/acme-web", str(repo)))
    assert run(str(folder)).exit_code == 0
    assert {r["project"] for r in rows(db_file)} == {"acme-web"}


def test_truncated_and_unreadable_results(db_file, tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    with open(SESS_A, encoding="utf-8") as f:
        lines = f.read().splitlines()
    # the answer to toolu_A3 is replaced by text we cannot read; the file ends mid-line
    lines[9] = json.dumps(
        {
            "type": "user",
            "timestamp": "2026-03-02T09:11:00.000Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "tool_use_id": "toolu_A3",
                        "type": "tool_result",
                        "content": "something unexpected",
                    }
                ],
            },
        }
    )
    (folder / "s.jsonl").write_text("\n".join(lines) + '\n{"type":"assistant","mess')
    summary = json.loads(run(str(folder), "--json").stdout)
    assert summary["imported"] == 3 and summary["unreadable"] == 1
    assert summary["problems"] == [
        f"{folder / 's.jsonl'}:10: answer to toolu_A3 not readable, skipped"
    ]


def test_refused_question_is_reported_and_others_imported(db_file, tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    with open(SESS_A, encoding="utf-8") as f:
        text = f.read().replace("Which test framework?", "Approve all of it?")
    (folder / "s.jsonl").write_text(text)
    summary = json.loads(run(str(folder), "--json").stdout)
    assert summary["refused"] == 1 and summary["imported"] == 3
    assert (
        "question 1 refused: gstack-question-log: question_summary contains suspicious"
        in summary["problems"][0]
    )


# --- library pieces -----------------------------------------------------------


def test_answer_text_is_split_on_the_known_questions():
    qs = [{"question": 'Say "hi", then?'}, {"question": "Second"}]
    text = (
        'User has answered your questions: "Say "hi", then?"="yes, "loudly"", '
        '"Second"="B) No". You can now continue with the user\'s answers in mind.'
    )
    assert hook_payload.parse_answer_text(text, qs) == {
        'Say "hi", then?': 'yes, "loudly"',
        "Second": "B) No",
    }
    assert hook_payload.parse_answer_text("no answers here", qs) is None


def test_multi_select_answer_in_text_is_not_free_text(conn):
    from toolkit.claude import payload as hook_payload

    q = {
        "question": "Which checks?",
        "multiSelect": True,
        "options": [{"label": "Lint"}, {"label": "Types"}, {"label": "Tests"}],
    }
    [a], _ = hook_payload.extract_answers({"answers": {"Which checks?": "Lint, Tests"}}, [q])
    assert a.choice == "Lint, Tests" and a.free_text is None and a.multi


def test_transcript_files_are_found_recursively(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x.jsonl").write_text("")
    (tmp_path / "a" / "y.txt").write_text("")
    shutil.copy(SESS_A, tmp_path / "z.jsonl")
    assert [os.path.relpath(p, tmp_path) for p in transcripts.transcript_files(str(tmp_path))] == [
        "z.jsonl",
        os.path.join("a", "b", "x.jsonl"),
    ]
