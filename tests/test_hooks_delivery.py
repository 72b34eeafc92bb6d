"""Every way Claude Code delivers an AskUserQuestion: a cancelled call (PostToolUseFailure)
and a call delivered as a permission request (PermissionRequest), run as subprocesses.

Payloads are shaped as Claude Code documents them: PostToolUseFailure carries ``error`` and
``is_interrupt`` (and no ``tool_response``); PermissionRequest carries
``permission_suggestions`` and no ``tool_use_id``.
"""

import json
import sqlite3
import subprocess

import pytest

from tests.helpers import script
from tests.helpers.hooks import error_log, events, make_repo, payload, question, run_hook
from tests.helpers.hotpath import db_rows

MARKED = "Ship it? <gstack-qid:ship-release-notes>"


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path)


def failure(questions, *, cwd, is_interrupt=True, error="The user doesn't want to proceed"):
    p = payload(questions, cwd=cwd, event="PostToolUseFailure")
    p["error"] = error
    p["is_interrupt"] = is_interrupt
    return p


def permission(questions, *, cwd, answers=None):
    p = payload(questions, cwd=cwd, event="PermissionRequest")
    del p["tool_use_id"]
    p["permission_suggestions"] = []
    if answers is not None:
        p["tool_input"]["answers"] = answers
    return p


def run(which, data):
    r = run_hook(which, data)
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"", f"{which} must print nothing"
    return r


def test_an_escaped_question_is_recorded_once_as_cancelled(repo, state_root):
    q = question("Which cache? Recommendation: A", ["A) Redis (recommended)", "B) Memcached"])
    data = failure([q], cwd=repo)
    run("post-tool-use-failure", data)
    run("post-tool-use-failure", data)  # Claude Code delivers the same call again
    [ev] = events()
    assert ev["user_choice"] == "__cancelled__"
    assert ev["source"] == "hook" and ev["tool_use_id"] == "tu-1"
    assert ev["recommended"] and ev["followed_recommendation"] is None
    assert error_log(state_root) == ""


def test_a_cancelled_question_is_an_answer_nowhere(repo, state_root):
    q = question(MARKED, ["Yes (recommended)", "No"])
    run("post-tool-use-failure", failure([q], cwd=repo))
    [row] = db_rows("SELECT answered, overridden FROM question_events")
    assert (row["answered"], row["overridden"]) == (0, None)
    assert db_rows("SELECT * FROM profile_sums") == []
    # gstack has no cancelled answer: its question log does not get the line.
    assert not list(state_root.glob("projects/*/question-log.jsonl"))


@pytest.mark.parametrize(
    "error",
    [
        "The user doesn't want to proceed with this tool use. The tool use was rejected.",
        "[Request interrupted by user for tool use]",
    ],
)
def test_a_rejection_without_is_interrupt_is_a_cancel_too(repo, error):
    q = question("Which cache?", ["Redis", "Memcached"])
    data = failure([q], cwd=repo, error=error)
    del data["is_interrupt"]  # an optional field
    run("post-tool-use-failure", data)
    assert [e["user_choice"] for e in events()] == ["__cancelled__"]


def test_every_question_of_a_cancelled_call_is_recorded(repo):
    qs = [question("First?", ["A", "B"]), question("Second?", ["C", "D"])]
    run("post-tool-use-failure", failure(qs, cwd=repo))
    assert [(e["question_index"], e["user_choice"]) for e in events()] == [
        (0, "__cancelled__"),
        (1, "__cancelled__"),
    ]


def test_a_failure_that_is_not_the_users_records_nothing(repo, state_root):
    q = question("Which cache?", ["Redis", "Memcached"])
    run(
        "post-tool-use-failure",
        failure([q], cwd=repo, is_interrupt=False, error="AskUserQuestion is unavailable here"),
    )
    run("post-tool-use-failure", failure([q], cwd=repo, is_interrupt=None, error=None))
    assert events() == []
    assert error_log(state_root) == ""


def test_an_answer_then_a_late_failure_for_the_same_call_counts_once(repo):
    q = question("Which cache?", ["Redis", "Memcached"])
    run("post-tool-use", payload([q], {"answers": {q["question"]: "Redis"}}, cwd=repo))
    run("post-tool-use-failure", failure([q], cwd=repo))
    assert [e["user_choice"] for e in events()] == ["Redis"]


def test_other_tools_failing_are_ignored(repo):
    data = failure([question("Which cache?", ["A", "B"])], cwd=repo)
    data["tool_name"] = "Bash"
    run("post-tool-use-failure", data)
    assert events() == []


def test_a_permission_request_is_never_answered_nor_blocked(repo, state_root):
    q = question(MARKED, ["Yes (recommended)", "No"])
    # Even with a never-ask preference, which would auto-decide a PreToolUse call.
    pref = ["pref", "set", "ship-release-notes", "never-ask", "--source", "plan-tune"]
    subprocess.run([script("plantune"), *pref, "--global"], check=True, capture_output=True)
    run("permission-request", permission([q], cwd=repo))
    assert events() == []  # the answer arrives with PostToolUse
    assert error_log(state_root) == ""


def test_answers_in_a_permission_request_are_recorded_once(repo):
    q = question("Which cache?", ["Redis", "Memcached"])
    data = permission([q], cwd=repo, answers={q["question"]: "Redis"})
    run("permission-request", data)
    run("permission-request", data)  # re-delivered
    # The PostToolUse that follows carries the same input and the answers again.
    post = payload([q], {"answers": {q["question"]: "Redis"}}, cwd=repo)
    post["tool_input"]["answers"] = {q["question"]: "Redis"}
    run("post-tool-use", post)
    [ev] = events()
    assert ev["user_choice"] == "Redis" and ev["source"] == "hook"
    assert ev["tool_use_id"].startswith("answers-")


def test_bad_input_to_the_new_hooks_exits_0_and_records_nothing(repo, state_root):
    for which in ("post-tool-use-failure", "permission-request"):
        for text in ("", "not json", "[1]", '{"tool_name": "AskUserQuestion"}'):
            run(which, text)
    assert events() == []


def test_a_hook_pinned_with_db_writes_no_state_root_gstack_files(repo, state_root, tmp_path):
    pinned = tmp_path / "pinned.db"
    q = question(MARKED, ["Yes (recommended)", "No"])
    answered = payload([q], {"answers": {q["question"]: "Yes"}}, cwd=repo)
    for which, data in (
        ("post-tool-use", answered),
        ("post-tool-use-failure", dict(failure([q], cwd=repo), tool_use_id="tu-2")),
    ):
        r = subprocess.run(
            [script("plantune"), "hook", which, "--db", str(pinned)],
            input=json.dumps(data).encode(),
            capture_output=True,
            check=False,
        )
        assert (r.returncode, r.stdout) == (0, b""), r.stderr
    pref = ["pref", "set", "ship-release-notes", "never-ask", "--source", "plan-tune"]
    subprocess.run(
        [script("plantune"), *pref, "--global", "--db", str(pinned)],
        check=True,
        capture_output=True,
    )
    r = subprocess.run(
        [script("plantune"), "hook", "pre-tool-use", "--db", str(pinned)],
        input=json.dumps(dict(payload([q], cwd=repo, event="PreToolUse"), tool_use_id="tu-3")),
        capture_output=True,
        text=True,
        check=False,
    )
    assert '"permissionDecision":"deny"' in r.stdout  # auto-decided, in the pinned database
    with sqlite3.connect(pinned) as conn:
        rows = conn.execute("SELECT source FROM question_log ORDER BY id").fetchall()
    assert rows == [("hook",), ("hook",), ("auto-decided",)]
    # Nothing of gstack's under the state root: no question log, no auto-decided marker.
    assert not list(state_root.glob("projects/*/question-log.jsonl"))
    assert not list(state_root.glob("sessions/**/.auto-decided-*"))
    # So ingesting the state root later brings nothing into its own database.
    subprocess.run([script("plantune"), "ingest"], check=True, capture_output=True)
    assert events() == []


def test_concurrent_hooks_for_one_session_record_each_call_once(repo, state_root):
    """Four copies of one call and four other calls of the same session, all at once."""
    q = question("Which cache?", ["Redis", "Memcached"])
    same = json.dumps(payload([q], {"answers": {q["question"]: "Redis"}}, cwd=repo)).encode()
    others = [
        json.dumps(
            payload([q], {"answers": {q["question"]: "Redis"}}, cwd=repo, tool_use_id=f"tu-{i}")
        ).encode()
        for i in range(2, 6)
    ]
    procs = [
        subprocess.Popen(
            [script("plantune"), "hook", "post-tool-use"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(8)
    ]
    for proc, data in zip(procs, [same] * 4 + others):
        proc.stdin.write(data)
        proc.stdin.close()
    for proc in procs:
        assert proc.wait(timeout=60) == 0
        assert proc.stdout.read() == b"" and proc.stderr.read() == b""
        proc.stdout.close()
        proc.stderr.close()
    assert sorted(e["tool_use_id"] for e in events()) == ["tu-1", "tu-2", "tu-3", "tu-4", "tu-5"]
    lines = [p for p in state_root.glob("projects/*/question-log.jsonl")]
    assert lines and len(lines[0].read_text().splitlines()) == 5
    assert error_log(state_root) == ""


@pytest.mark.parametrize("which", ["pre-tool-use", "post-tool-use", "permission-request"])
def test_a_closed_stdin_exits_0_silently(which, state_root):
    r = subprocess.run(
        ["sh", "-c", f'"$0" hook {which} <&-', script("plantune")],
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def test_a_payload_of_megabytes_through_the_pipe_is_recorded(repo, state_root):
    q = question("Which cache? " + "context " * 400_000, ["Redis", "Memcached"])  # 3 MB
    data = payload([q], {"answers": {q["question"]: "Redis"}}, cwd=repo)
    data["tool_input"]["padding"] = ["x" * 1000] * 2000  # and 2 MB of fields nobody reads
    run("post-tool-use", data)
    [ev] = events()
    assert ev["user_choice"] == "Redis"
    assert error_log(state_root) == ""


@pytest.mark.parametrize("which", ["session-start", "post-tool-use"])
def test_a_stdin_the_host_never_closes_does_not_hang_the_hook(repo, which):
    q = question("Which cache?", ["Redis", "Memcached"])
    data = payload([q], {"answers": {q["question"]: "Redis"}}, cwd=repo)
    proc = subprocess.Popen(
        [script("plantune"), "hook", which],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdin.write(json.dumps(data).encode())
    proc.stdin.flush()  # and left open, as a host that forgets to close it
    try:
        code = proc.wait(timeout=60)
    finally:
        proc.kill()
        proc.stdin.close()
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
    assert (code, err) == (0, b"")
    if which == "post-tool-use":
        assert out == b"" and [e["user_choice"] for e in events()] == ["Redis"]
