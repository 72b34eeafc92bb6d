"""`plantune hook install [--settings PATH]`: print or merge Claude Code settings entries."""

import json
import os
import stat

from click.testing import CliRunner

from toolkit.cli import cli

MATCHER = "(AskUserQuestion|mcp__.*__AskUserQuestion)"


def install(*args):
    return CliRunner().invoke(cli, ["hook", "install", *args])


def ours(settings, event):
    return [h for g in settings["hooks"][event] for h in g["hooks"]
            if "plantune" in h.get("command", "")]


def test_prints_the_entries_for_both_events():
    r = install()
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data == {"hooks": {
        "PreToolUse": [{"matcher": MATCHER, "hooks": [
            {"type": "command", "command": "plantune hook pre-tool-use", "timeout": 5}]}],
        "PostToolUse": [{"matcher": MATCHER, "hooks": [
            {"type": "command", "command": "plantune hook post-tool-use", "timeout": 5}]}],
    }}


def test_creates_a_missing_settings_file_and_is_idempotent(tmp_path):
    path = tmp_path / ".claude" / "settings.json"
    r = install("--settings", str(path))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == ["PreToolUse: added (plantune hook pre-tool-use)",
                                     "PostToolUse: added (plantune hook post-tool-use)"]
    first = path.read_bytes()
    assert json.loads(first) == json.loads(install().stdout)
    r = install("--settings", str(path))
    assert r.stdout.splitlines() == ["PreToolUse: already installed (plantune hook pre-tool-use)",
                                     "PostToolUse: already installed (plantune hook post-tool-use)"]
    assert path.read_bytes() == first


def test_merge_keeps_other_keys_and_hooks(tmp_path):
    path = tmp_path / "settings.json"
    before = {
        "permissions": {"allow": ["Bash(npm test)"]},
        "model": "opus",
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
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
    path.write_text(json.dumps({"hooks": {"PostToolUse": [{"matcher": MATCHER, "hooks": [
        {"type": "command", "command": "/old/venv/bin/plantune hook post-tool-use", "timeout": 5}]}]}}))
    r = install("--settings", str(path), "--executable", "/opt/plantune/bin/plantune")
    assert r.exit_code == 0
    assert "PostToolUse: command updated (/opt/plantune/bin/plantune hook post-tool-use)" in r.stdout
    after = json.loads(path.read_text())
    assert [h["command"] for h in ours(after, "PostToolUse")] == [
        "/opt/plantune/bin/plantune hook post-tool-use"]
    assert [h["command"] for h in ours(after, "PreToolUse")] == [
        "/opt/plantune/bin/plantune hook pre-tool-use"]


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
    for text, why in (("[]", "the settings file must hold a JSON object"),
                      ('{"hooks": []}', '"hooks" must be a JSON object'),
                      ('{"hooks": {"PreToolUse": {}}}', '"hooks.PreToolUse" must be a JSON array')):
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


def test_gstack_hooks_still_present_get_a_note(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"hooks": {"PostToolUse": [{"matcher": MATCHER, "hooks": [
        {"type": "command", "command": "~/.claude/skills/gstack/hosts/claude/hooks/question-log-hook"}]}]}}))
    r = install("--settings", str(path))
    assert r.exit_code == 0
    assert "still runs gstack's own question hooks" in r.stderr


def test_db_option_pins_the_database_and_the_installed_command_works(tmp_path):
    """The installed command line, run by a shell as Claude Code runs it, writes to --db."""
    import subprocess
    import sqlite3

    from tests.conftest import BIN_DIR

    target = tmp_path / "my dir" / "pinned.db"  # a space: the path must be quoted
    path = tmp_path / "settings.json"
    r = install("--settings", str(path), "--executable", os.path.join(BIN_DIR, "plantune"),
                "--db", str(target))
    assert r.exit_code == 0, r.output
    settings = json.loads(path.read_text())
    post = ours(settings, "PostToolUse")
    assert len(post) == 1 and post[0]["command"].endswith("hook post-tool-use --db '%s'" % target)
    # Reinstalling without --db repoints the same entry instead of adding a second one.
    r = install("--settings", str(path), "--executable", os.path.join(BIN_DIR, "plantune"))
    assert "PostToolUse: command updated" in r.stdout
    assert len(ours(json.loads(path.read_text()), "PostToolUse")) == 1
    install("--settings", str(path), "--executable", os.path.join(BIN_DIR, "plantune"),
            "--db", str(target))
    command = ours(json.loads(path.read_text()), "PostToolUse")[0]["command"]
    target.parent.mkdir()
    subprocess.run([os.path.join(BIN_DIR, "plantune"), "init", "--db", str(target)],
                   check=True, capture_output=True)
    question = "Create the TODOs? <gstack-qid:ship-todos-create>"
    payload = json.dumps({
        "session_id": "s-pin", "cwd": str(tmp_path), "hook_event_name": "PostToolUse",
        "tool_name": "AskUserQuestion", "tool_use_id": "tu-pin",
        "tool_input": {"questions": [{"question": question,
                                      "options": ["A) Accept (recommended)", "B) Skip"]}]},
        "tool_response": {"answers": {question: "A) Accept"}},
    })
    p = subprocess.run(command, shell=True, input=payload, capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == ""
    rows = sqlite3.connect(target).execute("SELECT question_id, user_choice FROM question_log").fetchall()
    assert rows == [("ship-todos-create", "accept")]
