"""The SessionStart hook: link gstack again where its upgrade undid ``plantune gstack link``.

gstack upgrades itself with ``git pull --autostash`` or ``git reset --hard``, which can put
its own bins back. At each session start this re-links, silently, the installs the user
linked (never another), at the cost of a stat per bin when nothing changed. It prints
nothing unless an install could not be linked again; then one line of context tells the
agent (and so the user) that gstack's own bins answer for now.
"""

import sys

from toolkit.store import json_lite

HOOK_SESSION_START = "session-start"


def _plantune_bin():
    import os

    from toolkit.claude import settings

    return os.path.dirname(settings.running_executable())


def session_start(payload, env=None) -> str:
    """Re-link what gstack overwrote; the hook's JSON output, or "" when all is well."""
    from toolkit.gstack import link

    problems = link.relink_recorded(_plantune_bin, env=env)
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
    from toolkit.core.errors import run_script
    from toolkit.store import safe_io

    def hook(_args):
        safe_io.stdin_bytes()  # nothing in the payload changes what to re-link
        out = session_start(None, env)
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        return 0

    def report(_prog, error):
        from toolkit.claude.hooks import log_error

        log_error(HOOK_SESSION_START, f"main crash: {type(error).__name__}: {error}", env)
        return 0

    run_script(HOOK_SESSION_START, hook, [], crash=report)
