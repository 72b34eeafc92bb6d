"""Installing plantune's hooks into a Claude Code settings file.

The hook commands (the ``plantune`` executable and its ``hook`` subcommands), merged beside
the user's own hooks and gstack's, a check that each installed command really runs, and
the write itself (atomic, through a symlinked settings file to where it leads).
"""

import os
import sys

from toolkit.claude.hooks import ERROR_LOG, HOOK_EVENTS, HOOK_TIMEOUT, MATCHER
from toolkit.store import paths, safe_io

# --------------------------------------------------------------------------
# Settings (`plantune hook install`)


class SettingsError(ValueError):
    """A settings file we refuse to touch; ``str()`` is the one-line reason."""


def running_executable() -> str:
    """Absolute path of the ``plantune`` command that is running now.

    Hooks run with whatever PATH Claude Code has, which seldom includes a venv's bin
    folder, so installed hook commands name the executable by its absolute path.
    """
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0).startswith("plantune") and os.access(argv0, os.X_OK):
        return os.path.abspath(argv0)
    beside = os.path.join(os.path.dirname(sys.executable), "plantune")
    if os.access(beside, os.X_OK):
        return beside
    raise SettingsError(
        "cannot tell where the plantune command is; pass --executable /path/to/plantune"
    )


def resolve_executable(executable=None) -> str:
    """``--executable`` as an absolute path (a bare name is looked up on PATH), else the running one."""
    import shutil

    if not executable:
        return running_executable()
    if os.sep not in executable:
        found = shutil.which(executable)
        if not found:
            raise SettingsError(
                f"{executable} is not on PATH; pass its absolute path to --executable"
            )
        return os.path.abspath(found)
    return os.path.abspath(os.path.expanduser(executable))


def _subcommand(event: str) -> str:
    return "pre-tool-use" if event == "PreToolUse" else "post-tool-use"


def hook_command(event: str, executable: str, db_path=None) -> str:
    """The hook's shell command line: the quoted executable; ``db_path`` pins the database."""
    import shlex

    command = f"{shlex.quote(executable)} hook {_subcommand(event)}"
    if db_path:
        command += " --db " + shlex.quote(os.path.abspath(db_path))
    return command


def settings_entries(executable: str, db_path=None) -> dict:
    """The ``hooks`` block Claude Code needs for both events."""
    return {
        event: [
            {
                "matcher": MATCHER,
                "hooks": [
                    {
                        "type": "command",
                        "command": hook_command(event, executable, db_path),
                        "timeout": HOOK_TIMEOUT,
                    }
                ],
            }
        ]
        for event in HOOK_EVENTS
    }


def _hook_executable(command, event):
    """The executable a ``… hook <event> [--db PATH]`` command line runs, else None.

    Earlier versions wrote the executable unquoted, so words before ``hook`` are joined
    back into one path (``/path with space/plantune``).
    """
    import shlex

    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    tail = ["hook", _subcommand(event)]
    for k in range(1, len(words) - 1):
        rest = words[k + 2 :]
        if words[k : k + 2] == tail and (not rest or (len(rest) == 2 and rest[0] == "--db")):
            return " ".join(words[:k])
    return None


def _is_ours(command, event, executable=None) -> bool:
    """A hook entry that runs plantune for ``event``: ours to replace, whatever its path."""
    found = _hook_executable(command, event)
    if found is None:
        return False
    return found == executable or os.path.basename(found).startswith("plantune")


def merge_settings(settings: dict, executable: str, db_path=None) -> dict:
    """Add (or repoint) our two hook entries in a settings object in place.

    Returns ``{event: "added" | "present" | "updated"}``. The first plantune entry of an
    event is kept (its command repointed), further ones are removed, so installing again
    never duplicates; every other key and every other tool's hook is kept as it was.
    """
    if not isinstance(settings, dict):
        raise SettingsError("the settings file must hold a JSON object")
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError('"hooks" must be a JSON object')
    outcome = {}
    for event, groups in settings_entries(executable, db_path).items():
        existing = hooks.setdefault(event, [])
        if not isinstance(existing, list):
            raise SettingsError(f'"hooks.{event}" must be a JSON array')
        wanted = groups[0]["hooks"][0]["command"]
        status = None
        for group in list(existing):
            items = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(items, list):
                continue
            for item in list(items):
                if not (
                    isinstance(item, dict) and _is_ours(item.get("command"), event, executable)
                ):
                    continue
                if status is None:
                    status = "present"
                    if item.get("command") != wanted:
                        item["command"] = wanted
                        status = "updated"
                else:
                    items.remove(item)
                    status = "updated"
            if not items:
                existing.remove(group)
        if status is None:
            existing.append(groups[0])
            status = "added"
        outcome[event] = status
    return outcome


def installed_commands(settings: dict) -> list:
    """``(event, command)`` for every plantune hook entry in a settings object."""
    found = []
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    for event in HOOK_EVENTS:
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        for group in groups if isinstance(groups, list) else []:
            items = group.get("hooks") if isinstance(group, dict) else None
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and _is_ours(item.get("command"), event):
                    found.append((event, item["command"]))
    return found


# What `hook install --check` feeds each command: a question call that the hooks read
# through (database, registry, preferences) without recording anything, since a question
# without text is skipped and an unmarked one is never auto-decided.
CHECK_PAYLOADS = {
    "PreToolUse": {
        "hook_event_name": "PreToolUse",
        "tool_name": "AskUserQuestion",
        "session_id": "plantune-hook-check",
        "cwd": os.sep,
        "tool_input": {"questions": [{"question": "plantune hook check", "options": ["A", "B"]}]},
    },
    "PostToolUse": {
        "hook_event_name": "PostToolUse",
        "tool_name": "AskUserQuestion",
        "session_id": "plantune-hook-check",
        "cwd": os.sep,
        "tool_input": {"questions": [{"question": "", "options": []}]},
        "tool_response": {"answers": {}},
    },
}
CHECK_PATH = "/usr/bin:/bin"
# Variables a hook inherits from the user's environment that decide where plantune writes.
CHECK_PASSED_VARS = (
    "HOME",
    "GSTACK_STATE_ROOT",
    "GSTACK_HOME",
    "PLANTUNE_DB",
    "PLANTUNE_MIRROR",
)


def check_command(event: str, command: str, env=None) -> str:
    """Run one installed hook command as Claude Code would; "" when OK, else why it failed.

    ``sh -c`` with a minimal environment (PATH=/usr/bin:/bin plus HOME and plantune's own
    variables), the sample payload on stdin. Failed: a non-zero exit (127 is "not found"),
    a time-out, unexpected output, or a new line in hook-errors.log.
    """
    import json
    import subprocess

    source = os.environ if env is None else env
    check_env = {k: source[k] for k in CHECK_PASSED_VARS if source.get(k)}
    check_env["PATH"] = CHECK_PATH
    errors_log = os.path.join(paths.state_root(check_env), ERROR_LOG)

    def log_size():
        try:
            return os.path.getsize(errors_log)
        except OSError:
            return 0

    before = log_size()
    try:
        p = subprocess.run(
            ["/bin/sh", "-c", command],
            input=json.dumps(CHECK_PAYLOADS[event]),
            capture_output=True,
            text=True,
            env=check_env,
            timeout=max(15, 3 * HOOK_TIMEOUT),
        )
    except subprocess.TimeoutExpired:
        return f"no answer within {max(15, 3 * HOOK_TIMEOUT)} s"
    said = " ".join((p.stderr.strip().splitlines() or [""])[-1:]).strip()
    if p.returncode != 0:
        return f"exit {p.returncode}" + (f": {said}" if said else "")
    if p.stdout.strip():
        return f"unexpected output: {p.stdout.strip().splitlines()[0]}"
    if log_size() > before:
        with open(errors_log, encoding="utf-8", errors="replace") as f:
            f.seek(before)
            logged = f.read().strip().splitlines()
        return f"logged an error: {logged[-1] if logged else '?'}"
    return ""


def gstack_hooks_in(settings: dict) -> list:
    """gstack's own question hooks still registered (they would record answers twice)."""
    found = []
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    for groups in hooks.values() if isinstance(hooks, dict) else []:
        for group in groups if isinstance(groups, list) else []:
            items = group.get("hooks") if isinstance(group, dict) else None
            for item in items if isinstance(items, list) else []:
                cmd = item.get("command") if isinstance(item, dict) else None
                if isinstance(cmd, str) and (
                    "question-log-hook" in cmd or "question-preference-hook" in cmd
                ):
                    found.append(cmd)
    return found


def install_settings(path: str, executable: str, db_path=None) -> tuple:
    """Merge our hooks into the settings file at ``path`` (created if missing).

    Atomic (temp file + rename, mode kept). Raises SettingsError for a file that is
    not a JSON object; nothing is written then. Returns ``(outcome, gstack_hooks)``.
    """
    import json

    text = ""
    try:
        text = safe_io.read_text(path)
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError) as e:
        raise SettingsError(f"cannot read {path}: {safe_io.describe(e)}") from None
    if text.strip():
        try:
            settings = json.loads(text)
        except ValueError as e:
            raise SettingsError(
                f"{path} is not valid JSON ({e}); fix or move it, nothing was changed"
            ) from None
    else:
        settings = {}
    try:
        outcome = merge_settings(settings, executable, db_path)
    except SettingsError as e:
        raise SettingsError(f"{path}: {e}; nothing was changed") from None
    if all(v == "present" for v in outcome.values()):
        return outcome, gstack_hooks_in(settings)
    # A settings file kept as a symlink (dotfiles) is written where it leads.
    safe_io.write_atomic(
        os.path.realpath(path),
        json.dumps(settings, indent=2, ensure_ascii=False) + "\n",
        mode=0o644,
    )
    return outcome, gstack_hooks_in(settings)
