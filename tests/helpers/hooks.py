"""Shared helpers for the hook tests: payloads, a pinned project, running the hook."""

import json
import os
import subprocess

from tests.helpers import script
from tests.helpers.hotpath import db_rows


def make_repo(parent, owner_repo="acme/web", name="web"):
    """A folder with a git origin, so its slug is ``owner-repo`` (not its basename)."""
    repo = parent / name
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(
        f'[remote "origin"]\n\turl = git@github.com:{owner_repo}.git\n'
    )
    return repo


def question(text, labels, **extra):
    q = {
        "question": text,
        "header": "H",
        "multiSelect": False,
        "options": [{"label": lab, "description": ""} for lab in labels],
    }
    q.update(extra)
    return q


def payload(
    questions,
    response=None,
    *,
    cwd,
    tool="AskUserQuestion",
    tool_use_id="tu-1",
    session_id="sess1",
    event="PostToolUse",
):
    p = {
        "session_id": session_id,
        "transcript_path": "/dev/null",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_use_id": tool_use_id,
        "tool_input": {"questions": questions},
    }
    if response is not None:
        p["tool_response"] = response
    return p


def run_hook(which, data, env=None):
    """Run ``plantune hook <which>`` as Claude Code does; ``data`` is a dict or raw text."""
    text = data if isinstance(data, str) else json.dumps(data)
    return subprocess.run(
        [script("plantune"), "hook", which],
        input=text.encode(),
        capture_output=True,
        timeout=30,
        env=env,
        check=False,
    )


def events(where=""):
    """Every question_log row of the test database (``where``: an SQL WHERE clause)."""
    return db_rows(f"SELECT * FROM question_log {where} ORDER BY id")


def error_log(state_root):
    path = state_root / "hook-errors.log"
    return path.read_text() if path.exists() else ""


def started(executable):
    """How an installed hook command starts plantune's launcher ``executable``: by the
    Python beside its real path, as the launcher itself would, sparing its /bin/sh."""
    import shlex

    python = os.path.join(os.path.dirname(os.path.realpath(executable)), "python")
    exe = shlex.quote(executable)
    return f"test -x {exe} && exec {shlex.quote(python)} -I -S {exe}"
