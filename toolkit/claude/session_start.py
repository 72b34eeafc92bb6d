"""The SessionStart hook: keep plantune in gstack's loop across gstack's upgrades.

gstack upgrades itself with ``git pull --autostash`` or ``git reset --hard``, which can put
its own bins back, and its setup can register its own question hooks again. At each session
start this re-links, silently, the installs the user linked (never another), at the cost of
a stat per bin when nothing changed, and, when a settings file ``plantune hook install``
wrote has changed since, looks for gstack's question hooks in it. It prints nothing unless
an install could not be linked again or gstack's hooks are back; then one line of context
tells the agent (and so the user).
"""

import os
import sys

from toolkit.claude.hook_entries import HOOK_SESSION_START, installs_path, log_error
from toolkit.store import json_lite


def gstack_hooks_back(env=None) -> list:
    """One line per settings file where gstack's question hooks are registered again."""
    from toolkit.gstack.link import stamp

    try:
        with open(installs_path(env), "rb") as f:
            record = json_lite.loads(f.read().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return []
    notes, changed = [], False
    for path, entry in record.items() if isinstance(record, dict) else []:
        if not isinstance(entry, dict) or entry.get("keep_gstack_hooks"):
            continue
        now = stamp(path)
        if now is None or now == entry.get("stamp"):
            continue
        from toolkit.claude import settings

        if settings.gstack_hooks_in(settings.read_settings_quietly(path)):
            notes.append(
                f"plantune: gstack's own question hooks are registered again in {path} "
                "(gstack's setup adds them back when its plan_tune_hooks setting is yes), so "
                f"questions are judged and logged twice; `plantune hook install --settings "
                f"{path}` replaces them"
            )
        else:
            entry["stamp"], changed = now, True  # read once per change
    if changed:
        from toolkit.store import safe_io

        safe_io.write_atomic(
            installs_path(env), json_lite.dumps(record, indent=2) + "\n", mode=0o600
        )
    return notes


def _plantune_bin():

    from toolkit.claude import settings

    return os.path.dirname(settings.running_executable())


def session_start(payload, env=None) -> str:
    """Re-link what gstack overwrote, look for gstack's hooks come back; the hook's JSON
    output, or "" when all is well."""
    from toolkit.gstack import link

    problems = link.relink_recorded(_plantune_bin, env=env) + gstack_hooks_back(env)
    if not problems:
        return ""
    return json_lite.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": "; ".join(problems),
            }
        },
        ensure_ascii=False,
    )


def run(env=None):
    """The hook's process: read (and ignore) Claude Code's payload, re-link, print what
    ``session_start`` returns. Never raises, always exits 0; a crash goes to
    hook-errors.log. Imports only what re-linking needs (not the question hooks)."""
    from toolkit.claude.hook_input import read_stdin
    from toolkit.core.errors import run_script

    def hook(_args):
        # Nothing in the payload changes what to re-link; read it as every hook does, so
        # a host that leaves stdin open does not hang the session's start.
        read_stdin()
        out = session_start(None, env)
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        return 0

    def report(_prog, error):
        log_error(HOOK_SESSION_START, f"main crash: {type(error).__name__}: {error}", env)
        return 0

    run_script(HOOK_SESSION_START, hook, [], crash=report)
