"""The hooks as Claude Code sees them: their command names, the events and matcher
``plantune hook install`` registers them for, their timeout, and the one error log (and
record of installs) they share. Everything else of ``toolkit.claude`` imports from here;
this module imports nothing of it.
"""

import os

from toolkit.store import paths, safe_io

HOOK_SESSION_START = "session-start"
HOOK_POST = "post-tool-use"
HOOK_PRE = "pre-tool-use"
HOOK_FAILURE = "post-tool-use-failure"
HOOK_PERMISSION = "permission-request"
ERROR_LOG = "hook-errors.log"
MATCHER = "(AskUserQuestion|mcp__.*__AskUserQuestion)"
HOOK_TIMEOUT = 5
# What `plantune hook install` registers: (event, matcher or None for every one, the
# `plantune hook` subcommand that handles it). One handler per event; install, check and
# the fast path read it.
HOOK_ENTRIES = (
    ("PreToolUse", MATCHER, HOOK_PRE),
    ("PostToolUse", MATCHER, HOOK_POST),
    ("PostToolUseFailure", MATCHER, HOOK_FAILURE),
    ("PermissionRequest", MATCHER, HOOK_PERMISSION),
    ("SessionStart", None, HOOK_SESSION_START),
)
HOOK_EVENTS = tuple(event for event, _, _ in HOOK_ENTRIES)


def log_error(hook: str, message: str, env=None) -> None:
    """Append ``<ISO ts> <hook>: <message>`` to the state root's hook-errors.log; never raises."""
    from toolkit.store.db import utc_now

    try:
        root = paths.state_root(env)
        os.makedirs(root, exist_ok=True)
        line = f"{utc_now()} {hook}: {' '.join(str(message).split())}"
        # Lone surrogates (undecodable bytes in a payload) are written as U+FFFD.
        line = line.encode("utf-8", "replace").decode("utf-8")
        safe_io.append_line(os.path.join(root, ERROR_LOG), line, root=root, make_dirs=False)
    except Exception:  # noqa: BLE001 - logging must never break the hook
        pass


def scrub_error_log(texts, everything=False, env=None):
    """Remove hook-errors.log lines that mention any of ``texts`` (every line when
    ``everything``), atomically and keeping the file's mode; returns lines removed.
    Texts shorter than 4 characters are too common to mean the deleted data."""
    root = paths.state_root(env)
    path = os.path.join(root, ERROR_LOG)
    try:
        data = safe_io.read_bytes(path, root=root)
    except FileNotFoundError:
        return 0
    # Lines are written with whitespace runs collapsed (see log_error): match them so.
    needles = [" ".join(t.split()).encode("utf-8", "replace") for t in texts if len(t.strip()) >= 4]
    lines = data.splitlines(keepends=True)
    keep = [] if everything else [line for line in lines if not any(n in line for n in needles)]
    if len(keep) == len(lines):
        return 0
    safe_io.write_atomic(path, b"".join(keep), root=root)
    return len(lines) - len(keep)


INSTALLS = "hook-installs.json"  # under the state root: the settings files install wrote


def installs_path(env=None):
    return os.path.join(paths.state_root(env), INSTALLS)
