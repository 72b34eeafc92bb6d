"""The ``plantune`` console entry point: the click-free fast path (``toolkit.cli.fast``)
for the plain forms of the hot commands, the click application (``toolkit.cli.app``) for
every other command line. Both sit below this module; neither imports it."""

import sys

from toolkit.cli import fast
from toolkit.core.errors import run_script


def _write(stream, lines):
    if lines:
        stream.write("\n".join(lines) + "\n")


def main(argv=None):
    """Console entry point: the fast path when it applies, else the click application."""
    args = sys.argv[1:] if argv is None else list(argv)
    parsed = fast.parse(args)
    if parsed is None:
        from toolkit.cli.app import main as click_main

        return click_main(args)
    run, kwargs = parsed

    def command(_args):
        result = run(**kwargs)
        _write(sys.stderr, result.err)
        _write(sys.stdout, result.out)
        return 0

    # Refusals read as click's do ("Error: ..."): the same command may take either path.
    return run_script("plantune", command, argv, refusal="Error: {message}")
