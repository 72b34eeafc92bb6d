"""`plantune hook install [--settings PATH]`: print or merge Claude Code settings entries."""

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.helpers import script
from tests.helpers.hooks import started
from toolkit.cli.app import cli

MATCHER = "(AskUserQuestion|mcp__.*__AskUserQuestion)"
# In-process (CliRunner) the running plantune is the one beside this interpreter.
RUNNING = os.path.join(os.path.dirname(sys.executable), "plantune")
MINIMAL_PATH = "/usr/bin:/bin"


START = started(RUNNING)


def install(*args):
    return CliRunner().invoke(cli, ["hook", "install", *args])


def ours(settings, event):
    return [
        h
        for g in settings["hooks"][event]
        for h in g["hooks"]
        if "plantune" in h.get("command", "")
    ]


# Every event plantune handles, with its subcommand (all with the AskUserQuestion matcher).
SUBCOMMANDS = {
    "PreToolUse": "pre-tool-use",
    "PostToolUse": "post-tool-use",
    "PostToolUseFailure": "post-tool-use-failure",
    "PermissionRequest": "permission-request",
}


# ... and SessionStart, for every session (no matcher), which re-links gstack installs.
EVERY = {**SUBCOMMANDS, "SessionStart": "session-start"}


def test_prints_the_entries_for_every_event():
    r = install()
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data == {
        "hooks": {
            event: [
                {
                    "matcher": MATCHER,
                    "hooks": [{"type": "command", "command": f"{START} hook {sub}", "timeout": 5}],
                }
            ]
            for event, sub in SUBCOMMANDS.items()
        }
        | {
            "SessionStart": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": f"{START} hook session-start",
                            "timeout": 5,
                        }
                    ],
                }
            ],
        }
    }


def test_creates_a_missing_settings_file_and_is_idempotent(tmp_path):
    path = tmp_path / ".claude" / "settings.json"
    r = install("--settings", str(path))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [
        f"{event}: added ({START} hook {sub})" for event, sub in EVERY.items()
    ]
    first = path.read_bytes()
    assert json.loads(first) == json.loads(install().stdout)
    r = install("--settings", str(path))
    assert r.stdout.splitlines() == [
        f"{event}: already installed ({START} hook {sub})" for event, sub in EVERY.items()
    ]
    assert path.read_bytes() == first


def test_merge_keeps_other_keys_and_hooks(tmp_path):
    path = tmp_path / "settings.json"
    before = {
        "permissions": {"allow": ["Bash(npm test)"]},
        "model": "opus",
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}],
        },
    }
    path.write_text(json.dumps(before))
    os.chmod(path, 0o600)
    assert install("--settings", str(path)).exit_code == 0
    after = json.loads(path.read_text())
    assert after["permissions"] == before["permissions"] and after["model"] == "opus"
    assert after["hooks"]["Stop"] == before["hooks"]["Stop"]
    assert after["hooks"]["PreToolUse"][0] == before["hooks"]["PreToolUse"][0]
    assert after["hooks"]["PreToolUse"][1]["matcher"] == MATCHER
    assert len(ours(after, "PreToolUse")) == 1 and len(ours(after, "PostToolUse")) == 1
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert not [p for p in os.listdir(tmp_path) if ".tmp." in p]  # no temp file left


def test_stale_plantune_path_is_repointed_not_duplicated(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "hooks": {
                    "PostToolUse": [
                        {
                            "matcher": MATCHER,
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": "/old/venv/bin/plantune hook post-tool-use",
                                    "timeout": 5,
                                }
                            ],
                        }
                    ]
                }
            }
        )
    )
    r = install("--settings", str(path), "--executable", "/opt/plantune/bin/plantune")
    assert r.exit_code == 0
    assert (
        "PostToolUse: command updated (/opt/plantune/bin/plantune hook post-tool-use)" in r.stdout
    )
    after = json.loads(path.read_text())
    assert [h["command"] for h in ours(after, "PostToolUse")] == [
        "/opt/plantune/bin/plantune hook post-tool-use"
    ]
    assert [h["command"] for h in ours(after, "PreToolUse")] == [
        "/opt/plantune/bin/plantune hook pre-tool-use"
    ]


def test_invalid_json_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"hooks": {,}}')
    r = install("--settings", str(path))
    assert r.exit_code == 1
    assert r.stderr.startswith(f"Error: {path} is not valid JSON (")
    assert r.stderr.strip().endswith("fix or move it, nothing was changed")
    assert path.read_text() == '{"hooks": {,}}'


def test_wrong_shapes_are_refused(tmp_path):
    path = tmp_path / "settings.json"
    for text, why in (
        ("[]", "the settings file must hold a JSON object"),
        ('{"hooks": []}', '"hooks" must be a JSON object'),
        ('{"hooks": {"PreToolUse": {}}}', '"hooks.PreToolUse" must be a JSON array'),
    ):
        path.write_text(text)
        r = install("--settings", str(path))
        assert r.exit_code == 1
        assert r.stderr.strip() == f"Error: {path}: {why}; nothing was changed"
        assert path.read_text() == text


def test_empty_file_counts_as_empty_settings(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text("\n")
    assert install("--settings", str(path)).exit_code == 0
    assert len(ours(json.loads(path.read_text()), "PreToolUse")) == 1


def test_gstack_hooks_are_replaced_or_kept_with_a_note(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "hooks": {
                    "PostToolUse": [
                        {
                            "matcher": MATCHER,
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": "~/.claude/skills/gstack/hosts/claude/hooks/question-log-hook",
                                }
                            ],
                        }
                    ]
                }
            }
        )
    )
    original = path.read_text()
    r = install("--settings", str(path), "--keep-gstack-hooks")
    assert r.exit_code == 0
    assert "still runs gstack's own question hooks" in r.stderr
    path.write_text(original)
    r = install("--settings", str(path))
    assert r.exit_code == 0 and "still runs" not in r.stderr
    assert (
        "PostToolUse: replaced gstack's ~/.claude/skills/gstack/hosts/claude/hooks/question-log-hook"
        in r.stdout
    )


def test_db_option_pins_the_database_and_the_installed_command_works(tmp_path):
    """The installed command line, run by a shell as Claude Code runs it, writes to --db."""
    import sqlite3
    import subprocess

    from tests.helpers import BIN_DIR

    target = tmp_path / "my dir" / "pinned.db"  # a space: the path must be quoted
    path = tmp_path / "settings.json"
    r = install(
        "--settings",
        str(path),
        "--executable",
        os.path.join(BIN_DIR, "plantune"),
        "--db",
        str(target),
    )
    assert r.exit_code == 0, r.output
    settings = json.loads(path.read_text())
    post = ours(settings, "PostToolUse")
    assert len(post) == 1 and post[0]["command"].endswith("hook post-tool-use --db '%s'" % target)
    # Reinstalling without --db repoints the same entry instead of adding a second one.
    r = install("--settings", str(path), "--executable", os.path.join(BIN_DIR, "plantune"))
    assert "PostToolUse: command updated" in r.stdout
    assert len(ours(json.loads(path.read_text()), "PostToolUse")) == 1
    install(
        "--settings",
        str(path),
        "--executable",
        os.path.join(BIN_DIR, "plantune"),
        "--db",
        str(target),
    )
    command = ours(json.loads(path.read_text()), "PostToolUse")[0]["command"]
    target.parent.mkdir()
    subprocess.run(
        [os.path.join(BIN_DIR, "plantune"), "init", "--db", str(target)],
        check=True,
        capture_output=True,
    )
    question = "Create the TODOs? <gstack-qid:ship-todos-create>"
    payload = json.dumps(
        {
            "session_id": "s-pin",
            "cwd": str(tmp_path),
            "hook_event_name": "PostToolUse",
            "tool_name": "AskUserQuestion",
            "tool_use_id": "tu-pin",
            "tool_input": {
                "questions": [
                    {"question": question, "options": ["A) Accept (recommended)", "B) Skip"]}
                ]
            },
            "tool_response": {"answers": {question: "A) Accept"}},
        }
    )
    p = subprocess.run(command, shell=True, input=payload, capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == ""
    rows = (
        sqlite3.connect(target)
        .execute("SELECT question_id, user_choice FROM question_log")
        .fetchall()
    )
    assert rows == [("ship-todos-create", "accept")]


# --- commands that run from any PATH ------------------------------------------------------

ANSWER_QUESTION = "Create the TODOs? <gstack-qid:ship-todos-create>"


def answer_payload(cwd):
    return json.dumps(
        {
            "session_id": "s-any-path",
            "cwd": str(cwd),
            "hook_event_name": "PostToolUse",
            "tool_name": "AskUserQuestion",
            "tool_use_id": "tu-any-path",
            "tool_input": {
                "questions": [
                    {"question": ANSWER_QUESTION, "options": ["A) Accept (recommended)", "B) Skip"]}
                ]
            },
            "tool_response": {"answers": {ANSWER_QUESTION: "A) Accept"}},
        }
    )


def minimal_env(state_root):
    return {
        "PATH": MINIMAL_PATH,
        "HOME": os.environ["HOME"],
        "GSTACK_STATE_ROOT": str(state_root),
        "PLANTUNE_DB": str(state_root / "plantune.db"),
        "GSTACK_PROJECT_SLUG": "any-path",
    }


@pytest.fixture
def spaced_plantune(tmp_path):
    """The plantune under test, reachable only through a folder whose name has spaces."""
    folder = tmp_path / "my tools (v2)"
    folder.mkdir()
    link = folder / "plantune"
    link.symlink_to(script("plantune"))
    return str(link)


def test_installed_command_runs_from_a_minimal_path_and_records_the_answer(tmp_path, state_root):
    """Installed by the console script itself: the entry names it absolutely, so a shell
    whose PATH lacks the venv still runs it (the bare name used to fail with exit 127)."""
    settings = tmp_path / "settings.json"
    r = subprocess.run(
        [script("plantune"), "hook", "install", "--settings", str(settings)],
        capture_output=True,
        text=True,
        env=minimal_env(state_root),
    )
    assert r.returncode == 0, r.stderr
    command = ours(json.loads(settings.read_text()), "PostToolUse")[0]["command"]
    assert shlex.split(command)[-4:-2] == ["-S", script("plantune")]
    assert (
        subprocess.run(
            ["sh", "-c", "command -v plantune"], env=minimal_env(state_root), capture_output=True
        ).returncode
        != 0
    )  # really not on this PATH
    p = subprocess.run(
        ["sh", "-c", command],
        input=answer_payload(tmp_path),
        text=True,
        capture_output=True,
        env=minimal_env(state_root),
    )
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")
    import sqlite3

    rows = (
        sqlite3.connect(state_root / "plantune.db")
        .execute("SELECT question_id, user_choice FROM question_log")
        .fetchall()
    )
    assert rows == [("ship-todos-create", "accept")]


def test_a_plantune_gone_from_its_venv_never_blocks_a_question(tmp_path, state_root):
    """The installed command starts the launcher's Python only while the launcher is
    there: Python exits with 2 for a script it cannot open, and a PreToolUse hook that
    exits with 2 blocks the tool call."""
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    launcher = bin_dir / "plantune"
    shutil.copy(os.path.realpath(script("plantune")), launcher)
    (bin_dir / "python").symlink_to(sys.executable)
    data = json.loads(install("--executable", str(launcher)).stdout)
    command = data["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command == f"{started(str(launcher))} hook pre-tool-use"
    launcher.unlink()  # pip uninstall plantune: the venv and its Python stay
    p = subprocess.run(
        ["sh", "-c", command],
        input="{}",
        capture_output=True,
        text=True,
        env=minimal_env(state_root),
    )
    assert p.returncode == 1


def test_path_with_spaces_is_quoted_idempotent_and_checks_ok(tmp_path, state_root, spaced_plantune):
    settings = tmp_path / "settings.json"
    args = [
        "hook",
        "install",
        "--settings",
        str(settings),
        "--executable",
        spaced_plantune,
        "--check",
    ]
    for _ in range(2):
        r = subprocess.run(
            [script("plantune"), *args], capture_output=True, text=True, env=minimal_env(state_root)
        )
        assert r.returncode == 0, r.stdout + r.stderr
        quoted = started(spaced_plantune)
        after = json.loads(settings.read_text())
        for event, sub in SUBCOMMANDS.items():
            assert f"check {event}: OK ({quoted} hook {sub})" in r.stdout
            assert [h["command"] for h in ours(after, event)] == [f"{quoted} hook {sub}"]
            assert len(after["hooks"][event]) == 1
    assert "already installed" in r.stdout
    # The check recorded nothing and logged nothing.
    import sqlite3

    conn = sqlite3.connect(state_root / "plantune.db")
    assert conn.execute("SELECT count(*) FROM question_log").fetchone()[0] == 0
    assert not (state_root / "hook-errors.log").exists()


def test_old_unquoted_spaced_entries_and_duplicates_collapse_into_one(tmp_path, spaced_plantune):
    path = tmp_path / "settings.json"
    other = {"type": "command", "command": "othertool hook post-tool-use"}
    guard = {"type": "command", "command": "guard.sh --strict"}
    path.write_text(
        json.dumps(
            {
                "hooks": {
                    "PostToolUse": [
                        {
                            "matcher": MATCHER,
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": f"{spaced_plantune} hook post-tool-use",
                                    "timeout": 5,
                                },
                                guard,
                            ],
                        },
                        {
                            "matcher": MATCHER,
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": "plantune hook post-tool-use",
                                    "timeout": 5,
                                }
                            ],
                        },
                        {"matcher": "Bash", "hooks": [other]},
                        {
                            "matcher": MATCHER,
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": "/old/venv/bin/plantune hook post-tool-use --db /x.db",
                                }
                            ],
                        },
                    ]
                }
            }
        )
    )
    r = install("--settings", str(path), "--executable", spaced_plantune)
    assert r.exit_code == 0, r.output
    assert "PostToolUse: command updated" in r.stdout
    after = json.loads(path.read_text())["hooks"]["PostToolUse"]
    commands = [h["command"] for g in after for h in g["hooks"]]
    assert commands == [
        f"{started(spaced_plantune)} hook post-tool-use",
        "guard.sh --strict",
        "othertool hook post-tool-use",
    ]
    assert after[0]["hooks"][1] == guard and after[1] == {"matcher": "Bash", "hooks": [other]}


def test_any_executable_name_is_replaced_not_duplicated(tmp_path):
    """An executable not called plantune (a launcher, a renamed copy) is still recognised."""
    path = tmp_path / "settings.json"
    launcher = tmp_path / "bin" / "pt-launch"
    launcher.parent.mkdir()
    launcher.write_text("#!/bin/sh\nexit 0\n")
    launcher.chmod(0o755)
    for _ in range(3):
        assert install("--settings", str(path), "--executable", str(launcher)).exit_code == 0
    settings = json.loads(path.read_text())
    for event, sub in SUBCOMMANDS.items():
        assert [h["command"] for g in settings["hooks"][event] for h in g["hooks"]] == [
            f"{launcher} hook {sub}"
        ]


def test_bare_and_relative_executables_become_absolute(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "plantune").symlink_to(script("plantune"))
    monkeypatch.setenv("PATH", str(folder) + os.pathsep + MINIMAL_PATH)
    data = json.loads(install("--executable", "plantune").stdout)
    assert data["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == (
        f"{started(str(folder / 'plantune'))} hook pre-tool-use"
    )
    monkeypatch.chdir(tmp_path)
    data = json.loads(install("--executable", "bin/plantune").stdout)
    assert data["hooks"]["PostToolUse"][0]["hooks"][0]["command"] == (
        f"{started(str(folder / 'plantune'))} hook post-tool-use"
    )
    monkeypatch.setenv("PATH", MINIMAL_PATH)
    r = install("--executable", "no-such-plantune")
    assert r.exit_code == 1
    assert r.stderr.strip() == (
        "Error: no-such-plantune is not on PATH; pass its absolute path to --executable"
    )


def test_check_reports_a_command_that_cannot_run(tmp_path):
    path = tmp_path / "settings.json"
    missing = str(tmp_path / "gone" / "plantune")
    r = install("--settings", str(path), "--executable", missing, "--check")
    assert r.exit_code == 1
    assert f"note: {missing} is not an executable file" in r.stderr
    for event in EVERY:
        assert f"check {event}: failed: exit 127" in r.stdout
    assert r.stderr.strip().endswith("Error: 5 of 5 hook commands failed from a minimal PATH")
    # The entries are still installed (they start working once the executable is there).
    assert len(ours(json.loads(path.read_text()), "PostToolUse")) == 1


def test_check_reports_a_hook_that_runs_but_fails_inside(tmp_path, state_root, monkeypatch):
    """A hook always exits 0; the check still sees the line it wrote to hook-errors.log."""
    broken_db = tmp_path / "a-folder.db"
    broken_db.mkdir()
    monkeypatch.setenv("PLANTUNE_DB", str(broken_db))
    r = install("--settings", str(tmp_path / "settings.json"), "--check")
    assert r.exit_code == 1
    for event in SUBCOMMANDS:
        assert f"check {event}: failed: logged an error:" in r.stdout
    assert "4 of 5 hook commands failed" in r.stderr
    assert "check SessionStart: OK" in r.stdout  # re-linking gstack opens no database
