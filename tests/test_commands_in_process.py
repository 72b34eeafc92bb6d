"""Every installed command, called in this process through its ``main(argv)``.

The compat and hook tests run the installed scripts as processes, as agents do, and so
belong to ``make test-full``; these calls keep each command's path covered by the fast
loop (``make test``): the same entry functions the launchers run, with stdin, stdout and
stderr captured, against the test's own state root.
"""

import json
import sys

import pytest

from tests.helpers import query
from tests.helpers.hooks import make_repo, payload, question
from toolkit import launch


@pytest.fixture
def call(monkeypatch, capfd, isolated_home, tmp_path):
    """``call(name, *argv, stdin=b"")`` runs installed command ``name`` in process and
    returns ``(exit code, stdout, stderr)``."""
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", "acme-web")
    stdin_file = tmp_path / "stdin"
    opened = []

    def run(name, *argv, stdin=b""):
        module, function = launch.COMMANDS[name]
        __import__(module)
        entry = getattr(sys.modules[module], function)
        # A file, not a BytesIO: the hooks read their descriptor, as from Claude Code's pipe.
        stdin_file.write_bytes(stdin)
        opened.append(open(stdin_file, encoding="utf-8"))
        monkeypatch.setattr(sys, "stdin", opened[-1])
        try:
            code = entry(list(argv))
        except SystemExit as e:  # click's standalone mode ends with sys.exit
            code = e.code
        sys.stdout.flush()
        sys.stderr.flush()
        out, err = capfd.readouterr()
        return code, out, err

    yield run
    for f in opened:
        f.close()


EVENT = {
    "skill": "ship",
    "question_id": "ship-todos-create",
    "question_summary": "Create TODOS.md?",
    "user_choice": "accept",
    "source": "agent",
}


def test_question_log_and_preference_answer_as_gstack_does(call, db_file):
    assert call("gstack-question-log", json.dumps(EVENT))[0] == 0
    assert query(db_file, "SELECT question_id FROM question_log") == [("ship-todos-create",)]
    code, out, _ = call("gstack-question-preference", "--check", "ship-todos-create")
    assert (code, out.splitlines()[0]) == (0, "ASK_NORMALLY")
    write = {"question_id": "ship-todos-create", "preference": "never-ask", "source": "plan-tune"}
    assert call("gstack-question-preference", "--write", json.dumps(write))[0] == 0
    code, out, _ = call("gstack-question-preference", "--check", "ship-todos-create")
    assert (code, out.splitlines()[0]) == (0, "AUTO_DECIDE")


def test_a_refused_source_and_bad_json_exit_with_one_line(call, db_file):
    write = {"question_id": "ship-todos-create", "preference": "never-ask", "source": "agent"}
    code, out, err = call("gstack-question-preference", "--write", json.dumps(write))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    code, out, err = call("gstack-question-log", "{not json")
    assert code == 1 and err == "gstack-question-log: invalid JSON\n"
    assert query(db_file, "SELECT count(*) FROM question_log") == [(0,)]


def test_a_one_way_summary_is_always_asked(call):
    write = {"question_id": "adhoc-db", "preference": "never-ask", "source": "plan-tune"}
    call("gstack-question-preference", "--write", json.dumps(write))
    code, out, _ = call(
        "gstack-question-preference",
        "--check",
        "adhoc-db",
        "--summary-stdin",
        stdin=b"Drop the users table?",
    )
    assert code == 0 and out.splitlines()[0] == "ASK_NORMALLY"


def test_plantune_fast_path_and_click_path(call):
    code, out, _ = call("plantune", "log", json.dumps(EVENT | {"phase": "eng"}))
    assert code == 0
    code, out, _ = call("plantune", "check", "ship-todos-create", "--json")
    assert code == 0 and json.loads(out)["decision"] == "ASK_NORMALLY"
    code, out, _ = call("plantune", "status", "--json")  # not a fast-path command: click
    assert code == 0 and json.loads(out)["projects"] == ["acme-web"]


def test_developer_and_builder_profile(call):
    call("gstack-question-log", json.dumps(EVENT))
    code, out, _ = call("gstack-developer-profile", "--derive")
    assert code == 0
    code, out, _ = call("gstack-developer-profile", "--profile")
    assert code == 0 and "autonomy" in out
    code, _, _ = call("gstack-builder-profile", "--read")
    assert code == 0


def test_pacing_rank_reads_findings_on_stdin(call):
    request = {
        "session_id": "s1",
        "phase": "eng",
        "budget": 6,
        "findings": [
            {
                "id": "eng-drop-legacy",
                "summary": "Drop the legacy orders table",
                "severity": 2,
                "irreversibility": 2,
                "decision_matters": 2,
                "kind": "finding",
                "recommended": "keep",
                "options": ["keep", "drop"],
            }
        ],
    }
    code, out, _ = call("gstack-pacing-rank", stdin=json.dumps(request).encode())
    assert code == 0
    [surfaced] = json.loads(out)["surface"]
    assert (surfaced["id"], surfaced["reason"]) == ("eng-drop-legacy", "one-way")


def test_hooks_record_an_answer_and_always_exit_0(call, tmp_path, db_file):
    repo = make_repo(tmp_path)
    q = question("Ship it now? <gstack-qid:ship-todos-create>", ["Yes", "No"])
    data = payload([q], {"answers": {q["question"]: "Yes"}}, cwd=repo)
    code, out, _ = call("plantune", "hook", "post-tool-use", stdin=json.dumps(data).encode())
    assert (code, out) == (0, "")
    assert query(db_file, "SELECT question_id, source FROM question_log") == [
        ("ship-todos-create", "hook")
    ]
    pre = payload([q], cwd=repo, event="PreToolUse")
    code, out, _ = call("plantune", "hook", "pre-tool-use", stdin=json.dumps(pre).encode())
    assert (code, out) == (0, "")  # no never-ask preference: nothing to say
    code, out, _ = call("plantune", "hook", "post-tool-use", stdin=b"not json")
    assert (code, out) == (0, "")


def test_hook_install_merges_its_entries_and_keeps_other_tools_hooks(call, tmp_path):
    settings = tmp_path / "settings.json"
    other = {"type": "command", "command": "other-tool --log"}
    settings.write_text(json.dumps({"hooks": {"PostToolUse": [{"hooks": [other]}]}}))
    for _ in range(2):  # installing again repoints plantune's entries, never duplicates them
        code, _, err = call("plantune", "hook", "install", "--settings", str(settings))
        assert code == 0, err
    hooks = json.loads(settings.read_text())["hooks"]
    post = [h["command"] for entry in hooks["PostToolUse"] for h in entry["hooks"]]
    assert post.count("other-tool --log") == 1
    assert len([c for c in post if c.endswith("hook post-tool-use")]) == 1
