"""What the console commands run: one table from command name to entry function.

The installed commands (``plantune``, ``gstack-question-log``, ...) are copies of one
launcher (``launchers/plantune`` in the source tree, installed as scripts), which starts
Python isolated and without ``site`` (``python -I -S``) and puts only the folder holding
this package on ``sys.path``. Agents run these commands before and after every question,
and in a plain start most of the time goes to ``site`` (processing site-packages and
its .pth files), not to the command. The launcher falls back to the normal start when it
cannot find the package itself, when ``PYTHONPATH`` is set, and (here) for any
``plantune`` command line the click-free fast path does not handle: the click
application and the analysis stack are started exactly as an ordinary install starts
them.

Only the standard library is imported here: this module is on the hot path.
"""

import gc
import os
import sys

# command name -> (module, function); the functions parse sys.argv themselves.
COMMANDS = {
    "plantune": ("toolkit.cli.main", "main"),
    "gstack-question-log": ("toolkit.gstack.compat", "question_log_main"),
    "gstack-question-preference": ("toolkit.gstack.compat", "question_preference_main"),
    "gstack-developer-profile": ("toolkit.gstack.compat_profile", "developer_profile_main"),
    "gstack-builder-profile": ("toolkit.gstack.compat_profile", "builder_profile_main"),
    "gstack-pacing-rank": ("toolkit.pacing.rank", "rank_main"),
}

# Commands that handle one call and exit: they run without the cyclic garbage collector,
# whose passes over the freshly imported modules are pure start-up cost here (what it
# saves: benchmarks/RESULTS.md, "Issue 27 point 3, round 2"). Reference counting still
# frees everything else; the plantune fast path (check, log, the hooks) is one too.
SHORT_LIVED = ("gstack-question-log", "gstack-question-preference")


def normal_start():
    """Run this command again with Python's normal start (site and all)."""
    os.execv(sys.executable, [sys.executable] + sys.argv)


def main():
    if "PLANTUNE_RESIDENT_SERVE" in os.environ:
        # A launcher of an older version (an editable install not reinstalled) starting
        # its resident server: there is none any more, and no command to run.
        sys.exit(0)
    name = os.path.basename(sys.argv[0])
    entry = COMMANDS.get(name)
    if entry is None:
        sys.stderr.write(
            f"plantune: unknown command name {name!r} (expected one of: {', '.join(COMMANDS)})\n"
        )
        sys.exit(2)
    module, function = entry
    if name == "plantune" and sys.flags.no_site:
        from toolkit.cli import fast as cli_fast

        if cli_fast.parse(sys.argv[1:]) is None:
            normal_start()
        gc.disable()
    elif name in SHORT_LIVED:
        gc.disable()
    __import__(module)
    sys.exit(getattr(sys.modules[module], function)())
