"""Installing plantune's hooks into a Claude Code settings file.

The hook commands (the ``plantune`` executable and its ``hook`` subcommands), merged beside
the user's own hooks and gstack's, a check that each installed command really runs, and
the write itself (atomic, through a symlinked settings file to where it leads).
"""

import os
import sys

from toolkit.claude.hook_entries import (
    ERROR_LOG,
    HOOK_ENTRIES,
    HOOK_EVENTS,
    HOOK_SESSION_START,
    HOOK_TIMEOUT,
    installs_path,
)
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
    return next(sub for e, _, sub in HOOK_ENTRIES if e == event)


# How ``hook_command`` starts the launcher's Python (as the launcher itself does).
PYTHON_START = ["-I", "-S"]


def hook_command(event: str, executable: str, db_path=None) -> str:
    """The hook's shell command line; ``db_path`` pins the database.

    When ``executable`` is plantune's launcher with its Python beside it, the line starts
    that Python the way the launcher does (``python -I -S <executable>``), as the gstack
    shims do (``toolkit.gstack.link``): Claude Code runs every hook through a shell
    already, and the launcher's own ``/bin/sh`` start is then a second one on every
    call. It does so only while the executable is there (``test -x``): Python exits
    with 2 for a script it cannot open, and a PreToolUse hook that exits with 2 blocks
    the tool call, so a plantune uninstalled from its venv would block every question;
    the test fails with 1, an error Claude Code reports and goes on. Any other
    executable is run as it is.
    """
    import shlex

    from toolkit.gstack.link import launcher_file, launcher_python

    sub = _subcommand(event)
    start = shlex.quote(executable)
    if launcher_file(executable):
        python = shlex.quote(launcher_python(executable))
        start = " ".join(["test -x", start, "&& exec", python, *PYTHON_START, start])
    command = f"{start} hook {sub}"
    if db_path and sub != HOOK_SESSION_START:  # re-linking gstack opens no database
        command += " --db " + shlex.quote(os.path.abspath(db_path))
    return command


def settings_entries(executable: str, db_path=None) -> dict:
    """The ``hooks`` block Claude Code needs for every event plantune handles."""
    entries = {}
    for event, matcher, _ in HOOK_ENTRIES:
        group = {"matcher": matcher} if matcher is not None else {}
        group["hooks"] = [
            {
                "type": "command",
                "command": hook_command(event, executable, db_path),
                "timeout": HOOK_TIMEOUT,
            }
        ]
        entries[event] = [group]
    return entries


def _hook_executable(command, event):
    """The executable a ``… hook <event> [--db PATH]`` command line runs (for
    ``… PYTHON -I -S EXECUTABLE hook …``, the executable), else None.

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
            if k >= 4 and words[k - 3 : k - 1] == PYTHON_START:
                return words[k - 1]  # the launcher, started by its Python (``hook_command``)
            return " ".join(words[:k])
    return None


def _is_ours(command, event, executable=None) -> bool:
    """A hook entry that runs plantune for ``event``: ours to replace, whatever its path."""
    found = _hook_executable(command, event)
    if found is None:
        return False
    return found == executable or os.path.basename(found).startswith("plantune")


def merge_settings(settings: dict, executable: str, db_path=None) -> dict:
    """Add (or repoint) our hook entries (``HOOK_ENTRIES``) in a settings object in place.

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
    "PostToolUseFailure": {
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "AskUserQuestion",
        "session_id": "plantune-hook-check",
        "tool_use_id": "plantune-hook-check",
        "cwd": os.sep,
        "tool_input": {"questions": [{"question": "", "options": []}]},
        "error": "plantune hook check",
        "is_interrupt": True,
    },
    # No tool_use_id: a PermissionRequest carries none. Answers in the request make the
    # hook open the database; a question without text is still skipped.
    "PermissionRequest": {
        "hook_event_name": "PermissionRequest",
        "tool_name": "AskUserQuestion",
        "session_id": "plantune-hook-check",
        "cwd": os.sep,
        "tool_input": {"questions": [{"question": "", "options": []}], "answers": {"": "A"}},
        "permission_suggestions": [],
    },
    "SessionStart": {
        "hook_event_name": "SessionStart",
        "session_id": "plantune-hook-check",
        "cwd": os.sep,
        "source": "startup",
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


# gstack's own AskUserQuestion hooks, which plantune's PreToolUse and PostToolUse replace
# (setup registers them by absolute path, with or without `bash ` or `.ts`).
GSTACK_HOOK_NAMES = ("question-log-hook", "question-preference-hook")


def _is_gstack_hook(item) -> bool:
    cmd = item.get("command") if isinstance(item, dict) else None
    return isinstance(cmd, str) and any(name in cmd for name in GSTACK_HOOK_NAMES)


def _hook_items(settings):
    """``(event, groups, group, items, item)`` for every hook entry of a settings object."""
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    for event, groups in list(hooks.items()) if isinstance(hooks, dict) else []:
        for group in list(groups) if isinstance(groups, list) else []:
            items = group.get("hooks") if isinstance(group, dict) else None
            for item in list(items) if isinstance(items, list) else []:
                yield event, groups, group, items, item


def gstack_hooks_in(settings: dict) -> list:
    """gstack's own question hooks still registered (they would record answers twice)."""
    return [item["command"] for *_, item in _hook_items(settings) if _is_gstack_hook(item)]


def take_gstack_hooks(settings: dict) -> list:
    """Remove gstack's question hooks from a settings object in place; returns what was
    taken, ``{"event", "group"}`` each (the group holding that one entry, as it was)."""
    taken = []
    for event, groups, group, items, item in _hook_items(settings):
        if not _is_gstack_hook(item):
            continue
        kept = {k: v for k, v in group.items() if k != "hooks"}
        kept["hooks"] = [item]
        taken.append({"event": event, "group": kept})
        items.remove(item)
        if not items and group in groups:
            groups.remove(group)
    return taken


def read_settings_quietly(path) -> dict:
    """A settings file's object, or {} when it is missing or unreadable (for reports)."""
    import json

    try:
        data = json.loads(safe_io.read_text(path))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _installs(env=None) -> dict:
    """The record of settings files install wrote (see toolkit.claude.hook_entries)."""
    record = read_settings_quietly(installs_path(env))
    return {k: v for k, v in record.items() if isinstance(v, dict)}


def _write_installs(record, env=None):
    import json

    safe_io.write_atomic(installs_path(env), json.dumps(record, indent=2) + "\n", mode=0o600)


def _remember_install(settings_path, taken, keep_gstack_hooks, written, env=None):
    """Keep what install took out of ``settings_path`` (so uninstall can put it back) and,
    once ``written``, the file's stamp: the SessionStart hook reads the file again only
    when that changed, to tell when gstack's setup has put its own hooks back."""
    from toolkit.gstack.link import stamp

    record = _installs(env)
    key = os.path.realpath(settings_path)
    entry = record.get(key, {})
    replaced = entry.get("replaced") if isinstance(entry.get("replaced"), list) else []
    for t in taken:
        if t not in replaced:
            replaced.append(t)
    entry.update(replaced=replaced, keep_gstack_hooks=bool(keep_gstack_hooks))
    entry["stamp"] = stamp(key) if written else None
    record[key] = entry
    _write_installs(record, env)


def _load_settings(path) -> dict:
    """The settings object at ``path`` ({} when missing or blank); SettingsError otherwise."""
    import json

    text = ""
    try:
        text = safe_io.read_text(path)
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError) as e:
        raise SettingsError(f"cannot read {path}: {safe_io.describe(e)}") from None
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError as e:
        raise SettingsError(
            f"{path} is not valid JSON ({e}); fix or move it, nothing was changed"
        ) from None


def _save_settings(path, settings):
    import json

    # A settings file kept as a symlink (dotfiles) is written where it leads.
    safe_io.write_atomic(
        os.path.realpath(path),
        json.dumps(settings, indent=2, ensure_ascii=False) + "\n",
        mode=0o644,
    )


def install_settings(path: str, executable: str, db_path=None, keep_gstack_hooks=False) -> tuple:
    """Merge our hooks into the settings file at ``path`` (created if missing).

    gstack's own question hooks are taken out (one handler per event) and kept under the
    state root for ``uninstall_settings``, unless ``keep_gstack_hooks``. Atomic (temp
    file + rename, mode kept). Raises SettingsError for a file that is not a JSON object;
    nothing is written then. Returns ``(outcome, replaced, gstack_hooks_left)``.
    """
    settings = _load_settings(path)
    try:
        outcome = merge_settings(settings, executable, db_path)
    except SettingsError as e:
        raise SettingsError(f"{path}: {e}; nothing was changed") from None
    replaced = [] if keep_gstack_hooks else take_gstack_hooks(settings)
    if replaced or not all(v == "present" for v in outcome.values()):
        # What is taken out is kept first: a write cut short loses no entry.
        _remember_install(path, replaced, keep_gstack_hooks, written=False)
        _save_settings(path, settings)
    _remember_install(path, [], keep_gstack_hooks, written=True)
    return outcome, replaced, gstack_hooks_in(settings)


def uninstall_settings(path: str) -> tuple:
    """Remove plantune's hook entries from ``path`` and put back what install replaced.

    Returns ``(removed, restored)``: the commands taken out and the gstack entries put
    back (an entry already there again is not added twice). Other entries are untouched.
    """
    settings = _load_settings(path)
    if not isinstance(settings, dict) or not isinstance(settings.get("hooks", {}), dict):
        raise SettingsError(
            f"{path}: the settings file must hold a JSON object; nothing was changed"
        )
    removed = []
    for event, groups, group, items, item in _hook_items(settings):
        if event in HOOK_EVENTS and isinstance(item, dict) and _is_ours(item.get("command"), event):
            removed.append(item["command"])
            items.remove(item)
            if not items and group in groups:
                groups.remove(group)
    hooks = settings.setdefault("hooks", {})
    for event in HOOK_EVENTS:
        if hooks.get(event) == [] and removed:
            del hooks[event]
    record = _installs()
    key = os.path.realpath(path)
    restored = []
    replaced = record.get(key, {}).get("replaced")
    for entry in replaced if isinstance(replaced, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("group"), dict):
            continue
        event, group = entry.get("event"), entry["group"]
        present = [i for *_, i in _hook_items({"hooks": {event: hooks.get(event)}})]
        if all(i in present for i in group.get("hooks", [])):
            continue
        hooks.setdefault(event, []).append(group)
        restored.extend(i.get("command") for i in group.get("hooks", []))
    if removed or restored:
        _save_settings(path, settings)
    if key in record:
        del record[key]
        _write_installs(record)
    return removed, restored
