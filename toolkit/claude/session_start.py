"""The SessionStart hook: link gstack again where its upgrade undid ``plantune gstack link``.

gstack upgrades itself with ``git pull --autostash`` or ``git reset --hard``, which can put
its own bins back. At each session start this re-links, silently, the installs the user
linked (never another), at the cost of a stat per bin when nothing changed. It prints
nothing unless an install could not be linked again; then one line of context tells the
agent (and so the user) that gstack's own bins answer for now.
"""

from toolkit.store import json_lite


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
