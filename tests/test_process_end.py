"""How a command's process ends: its database closed, no process left behind, closed or
broken output streams survived, and argv taken as the caller's locale gives it.

Every call runs in a process of its own. These tests run the installed commands as an
agent does and look at what is left once they exited.
"""

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from tests.helpers import query, script
from tests.helpers.hotpath import env, log_lines

QID = "ship-changelog-voice-polish"
QUESTION = f"Polish the changelog voice before shipping? <gstack-qid:{QID}>"


def event(summary="Polish the changelog voice?", **extra):
    record = {
        "skill": "ship",
        "question_id": QID,
        "question_summary": summary,
        "user_choice": "accept",
        "recommended": "accept",
        "session_id": "s1",
    }
    record.update(extra)
    return json.dumps(record)


def hook_payload(name, n=1):
    payload = {
        "session_id": "s1",
        "cwd": "/",
        "hook_event_name": name,
        "tool_name": "AskUserQuestion",
        "tool_use_id": f"tu-{n}",
        "tool_input": {"questions": [{"question": QUESTION, "options": ["A) Yes", "B) No"]}]},
    }
    if name == "PostToolUse":
        payload["tool_response"] = {"answers": {QUESTION: "A) Yes"}}
    return json.dumps(payload)


# Every compat command and the hot plantune ones: (argv, stdin text or None).
COMMANDS = {
    "log": (["gstack-question-log", event()], None),
    "check": (["gstack-question-preference", "--check", QID], None),
    "check summary": (
        ["gstack-question-preference", "--check", QID, "--summary-stdin"],
        "Reword the heading?",
    ),
    "write": (
        [
            "gstack-question-preference",
            "--write",
            json.dumps({"question_id": QID, "preference": "never-ask", "source": "plan-tune"}),
        ],  # noqa: E501
        None,
    ),
    "read": (["gstack-question-preference", "--read"], None),
    "stats": (["gstack-question-preference", "--stats"], None),
    "clear": (["gstack-question-preference", "--clear", QID], None),
    "profile": (["gstack-developer-profile", "--profile"], None),
    "derive": (["gstack-developer-profile", "--derive"], None),
    "builder": (["gstack-builder-profile"], None),
    "rank": (
        ["gstack-pacing-rank"],
        json.dumps({"session_id": "s1", "phase": "eng", "findings": []}),
    ),
    "pre hook": (["plantune", "hook", "pre-tool-use"], hook_payload("PreToolUse")),
    "post hook": (["plantune", "hook", "post-tool-use"], hook_payload("PostToolUse")),
    "plantune check": (["plantune", "check", QID], None),
    "plantune status": (["plantune", "status"], None),
}


def sh(shell_tail, argv, stdin=None, **env_extra):
    """Run ``argv`` through sh with ``shell_tail`` appended (``>&-``, ``| head -c0`` ...);
    the exit code is the command's own (sh's ``$?`` of the first command)."""
    line = '"$@" ' + shell_tail
    if "|" in shell_tail:
        # The pipeline's status is its last command's: report the first one's instead.
        line = 'exec 3>&1; { "$@"; echo "$?" >&3; } ' + shell_tail
    return subprocess.run(
        ["sh", "-c", line, "sh", script(argv[0]), *argv[1:]],
        input=stdin,
        capture_output=True,
        text=True,
        env=env(**env_extra),
        timeout=60,
    )


def db_path(state_root):
    return str(state_root / "plantune.db")


def wal_frames(state_root):
    """Bytes in the database's -wal file (0 when there is none)."""
    path = db_path(state_root) + "-wal"
    return os.path.getsize(path) if os.path.exists(path) else 0


# The processes a call may leave to finish on their own: gstack's profile derive after a
# log, and the import of a large backlog of gstack lines.
BACKGROUND = ("--derive", "toolkit.gstack.backlog")


def left_behind(state_root):
    """(pid, command line) of live processes started for this test's state root."""
    marker = f"GSTACK_STATE_ROOT={state_root}".encode() + b"\0"
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker not in f.read() + b"\0":
                    continue
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rpartition(")")[2].split()[0] == "Z":
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                found.append((int(pid), f.read().replace(b"\0", b" ").decode(errors="replace")))
        except OSError:
            continue
    return found


def settle(state_root):
    """Wait for the background jobs of the calls so far to end by themselves (generous:
    the machine may be loaded); fails if anything else was left running."""
    deadline = time.monotonic() + 120
    while True:
        left = left_behind(state_root)
        assert all(any(job in cmd for job in BACKGROUND) for _pid, cmd in left), left
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert left == []


def run(*argv, stdin=None):
    """Run an installed command as an agent does; the CompletedProcess, as text."""
    return subprocess.run(
        [script(argv[0]), *argv[1:]], input=stdin, capture_output=True, text=True, env=env()
    )


def call(name):
    argv, stdin = COMMANDS[name]
    return run(*argv, stdin=stdin)


def test_no_wal_with_frames_is_left_after_any_command(state_root):
    for name in COMMANDS:
        r = call(name)
        assert r.returncode == 0, (name, r.stderr)
        settle(state_root)
        assert wal_frames(state_root) == 0, name


def test_the_wal_files_stay_and_are_empty_after_every_hot_command(state_root):
    """A hot command folds the WAL back and leaves its -wal (empty) and -shm files in
    place rather than having its close delete them: on a full disk the next command
    could not create them again, and could not even read. (The click commands end with
    the interpreter's own teardown, which closes what is open.)"""
    for name in [name for name in COMMANDS if name != "plantune status"]:
        r = call(name)
        assert r.returncode == 0, (name, r.stderr)
        settle(state_root)
        wal = db_path(state_root) + "-wal"
        assert os.path.exists(wal) and os.path.getsize(wal) == 0, name
        assert os.path.exists(db_path(state_root) + "-shm"), name


def test_a_reading_call_folds_what_a_killed_writer_left_in_the_wal(state_root):
    """A call that only reads skips the checkpoint of an empty WAL, never of one holding
    frames: a writer killed before its own end leaves them, and the next call folds them."""
    assert run("gstack-question-log", event("first")).returncode == 0
    settle(state_root)
    writer = (
        "import os, sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "conn.execute(\"UPDATE question_log SET question_summary = 'changed'\")\n"
        "os._exit(0)  # killed: no close, no checkpoint\n"
    )
    subprocess.run([sys.executable, "-c", writer, db_path(state_root)], check=True)
    assert wal_frames(state_root) > 0
    r = call("check")
    assert r.returncode == 0, r.stderr
    assert wal_frames(state_root) == 0
    rows = query(db_path(state_root), "SELECT question_summary FROM question_log")
    assert rows == [("changed",)]


def test_a_backup_copied_over_the_database_then_any_call_works(state_root, tmp_path):
    """`plantune backup`, more calls, then `cp backup plantune.db`: what anyone does with a
    SQLite file. Nothing of the old WAL is replayed into the copy."""
    assert run("gstack-question-log", event("first")).returncode == 0
    backup = str(tmp_path / "b.db")
    assert run("plantune", "backup", backup).returncode == 0
    for n in range(3):
        assert run("gstack-question-log", event(f"later {n}")).returncode == 0
    settle(state_root)  # what anyone copying a database waits for: nothing has it open
    shutil.copyfile(backup, db_path(state_root))
    for name in COMMANDS:
        r = call(name)
        assert r.returncode == 0 and "malformed" not in r.stderr, (name, r.stderr)
    assert query(db_path(state_root), "PRAGMA integrity_check") == [("ok",)]
    # the later events are in gstack's file, so the next call picked them up again
    summaries = {
        s for (s,) in query(db_path(state_root), "SELECT question_summary FROM question_log")
    }
    assert {"first", "later 0", "later 1", "later 2"} <= summaries


def test_no_process_of_the_install_is_left_after_hot_calls(state_root):
    for name in ("log", "check", "check summary", "pre hook", "post hook", "plantune check"):
        r = call(name)
        assert r.returncode == 0, (name, r.stderr)
        settle(state_root)


def test_the_background_derive_of_a_log_ends_by_itself(state_root):
    """gstack-question-log starts the profile derive in the background, as gstack does;
    it may outlive the call, and it ends on its own, the database closed."""
    r = subprocess.run(
        [script("gstack-question-log"), event()],
        capture_output=True,
        text=True,
        env=env(GSTACK_QUESTION_LOG_NO_DERIVE=None),
    )
    assert r.returncode == 0, r.stderr
    settle(state_root)
    assert wal_frames(state_root) == 0


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_closed_or_broken_streams_keep_the_command_s_own_exit_code(state_root, name):
    argv, stdin = COMMANDS[name]
    own = call(name).returncode
    no_input = run(*argv, stdin="").returncode
    for tail in (">&-", "2>&-", ">&- 2>&-", "<&-", "| head -c0"):
        r = sh(tail, argv, None if tail == "<&-" else stdin)
        code = int(r.stdout.strip().splitlines()[-1]) if "|" in tail else r.returncode
        assert code == (no_input if tail == "<&-" else own), (tail, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr, (tail, r.stderr)


def test_a_closed_stdout_loses_only_the_output(state_root):
    """The event is recorded, and no output lands in a file the command opened (the
    descriptor a closed stdout leaves free is never handed to one)."""
    r = sh(">&-", ["gstack-question-log", event("recorded anyway")])
    assert r.returncode == 0 and r.stderr == ""
    r = sh(">&-", ["gstack-question-preference", "--check", QID])
    assert r.returncode == 0 and r.stderr == ""
    lines = log_lines(state_root)
    assert [line["question_summary"] for line in lines] == ["recorded anyway"]
    assert query(db_path(state_root), "PRAGMA integrity_check") == [("ok",)]


def test_bad_input_with_closed_stdout_still_says_why(state_root):
    r = sh(">&-", ["gstack-question-log", "{"])
    assert r.returncode == 1
    assert r.stderr == "gstack-question-log: invalid JSON\n"


@pytest.fixture(scope="module")
def latin1_locale(tmp_path_factory):
    """An ISO-8859-1 locale (LOCPATH, LC_ALL), generated with localedef when none exists."""
    out = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.split()
    for name in out:
        if name.lower().replace("-", "").endswith(("iso88591", "latin1")):
            return {"LC_ALL": name}
    if shutil.which("localedef") is None:
        pytest.skip("no ISO-8859-1 locale and no localedef to make one")
    folder = tmp_path_factory.mktemp("locales")
    r = subprocess.run(
        ["localedef", "-i", "en_US", "-f", "ISO-8859-1", str(folder / "en_US.ISO-8859-1")],
        capture_output=True,
    )
    if not (folder / "en_US.ISO-8859-1").exists():
        pytest.skip(f"localedef could not make an ISO-8859-1 locale: {r.stderr[-200:]!r}")
    return {"LOCPATH": str(folder), "LC_ALL": "en_US.ISO-8859-1"}


def test_latin1_argv_is_stored_as_the_caller_wrote_it(state_root, latin1_locale):
    """A latin-1 terminal sends é as one byte: the command decodes it as its locale says."""
    record = event("Café au lait?").encode("latin-1")
    r = subprocess.run(
        [script("gstack-question-log").encode(), record],
        capture_output=True,
        env=env(**latin1_locale),
    )
    assert r.returncode == 0, r.stderr
    rows = query(db_path(state_root), "SELECT question_summary FROM question_log")
    assert rows == [("Café au lait?",)]
    assert [line["question_summary"] for line in log_lines(state_root)] == ["Café au lait?"]


def test_a_server_start_from_an_older_launcher_runs_nothing(state_root):
    """A launcher of a version that had the resident server (an editable install not
    reinstalled) starts one with this variable: nothing runs, nothing is written."""
    r = subprocess.run(
        [script("gstack-developer-profile")],
        capture_output=True,
        text=True,
        env=env(PLANTUNE_RESIDENT_SERVE=str(state_root / "old.sock")),
    )
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert os.listdir(state_root) == []
