"""How a command refuses, and the one boundary every console script runs through.

``Refused`` stops a command with a one-line message and an exit code (1 for bad input, 2
for a refused source, ...). ``run_script`` is the top-level error boundary of every console
command (``plantune``, the gstack compat scripts, ``gstack-pacing-rank``, the hooks): it
turns a refusal into its line and exit code, an interrupt into 130, a reader that went away
(broken pipe) into a quiet exit, and anything unexpected into one line, never a traceback
(``PLANTUNE_DEBUG=1`` shows the traceback instead).

Hot path: standard library only, nothing done at import.
"""

import os
import sys

DEBUG_ENV = "PLANTUNE_DEBUG"


class Refused(Exception):
    """Refuse a command: ``message`` is its one line (None when already printed), exit N."""

    def __init__(self, message=None, exit_code=1):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def print_error_line(prog, error):
    """The default last line of defence: one line on stderr, exit 1 (the traceback under
    ``PLANTUNE_DEBUG``)."""
    if os.environ.get(DEBUG_ENV):
        raise error
    from toolkit.store.safe_io import error_line

    sys.stderr.write(f"{prog}: {error_line(error)}\n")
    return 1


def _quiet_stdout():
    # The reader is gone: point stdout at /dev/null so the final flush cannot fail again.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _fill_closed_streams():
    """Put /dev/null in place of a closed stdin, stdout or stderr (``cmd >&-``).

    Python leaves such a stream None, so the first print would crash; worse, a file the
    command opens next would take the free descriptor number and receive its output. The
    command runs as it would with its output discarded, and exits with its own code.
    """
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        try:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            stream = open(  # noqa: SIM115 - the process's own stream, open until it ends
                fd, "r" if fd == 0 else "w", encoding="utf-8", errors="replace", closefd=False
            )
        except OSError:
            continue
        setattr(sys, name, stream)


def run_script(
    prog, run, argv=None, *, refusal="{prog}: {message}", crash=print_error_line, teardown=False
):
    """Run ``run(args)`` (which returns an exit code) inside the error boundary.

    With ``argv`` None this is the process's own command: the arguments are
    ``sys.argv[1:]`` and the process exits here, once stdout and stderr are flushed
    (``safe_io.exit_now``: everything is committed, so interpreter teardown would only cost
    an agent's hook time; ``teardown=True`` keeps the normal exit). Otherwise the exit code
    is returned. ``refusal`` formats a ``Refused`` message; ``crash(prog, error)`` reports
    an unexpected exception and returns the exit code.
    """
    standalone = argv is None
    if standalone:
        if not teardown:
            from toolkit.store import safe_io

            safe_io.one_shot = True  # what the command opens may stay open to its end
        _fill_closed_streams()
    args = sys.argv[1:] if standalone else list(argv)
    try:
        code = run(args)
    except Refused as e:
        if e.message is not None:
            sys.stderr.write(refusal.format(prog=prog, message=e.message) + "\n")
        code = e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write(f"{prog}: interrupted\n")
        code = 130
    except BrokenPipeError:
        _quiet_stdout()
        code = 0
    except Exception as e:  # noqa: BLE001 - the last line of defence: no traceback
        code = crash(prog, e)
    if not standalone:
        return code
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    except (OSError, ValueError):
        pass
    # Fold the WAL back into the database and leave it empty before leaving: a -wal with
    # frames left behind is replayed into whatever file is at the database's path next,
    # a backup copied over it included.
    store = sys.modules.get("toolkit.store.db")
    if store is not None:
        store.fold_wal()
    if teardown:
        sys.exit(code)
    from toolkit.store.safe_io import exit_now

    exit_now(code)
