"""The resident server: one warm process per user and install that runs the hot commands.

Agents run ``--check``, ``gstack-question-log`` and the two AskUserQuestion hooks around
every question. Started afresh, each pays for Python's start-up, for importing plantune
and for SQLite reading the database schema (about 2 ms for 180 tables, indexes, triggers
and views) before it does a millisecond of work. The launcher (``launchers/plantune``)
hands such a call to this server instead, when one runs: the server keeps the modules
imported and the database open with its schema read, and runs the command exactly as the
process would have, in the caller's working directory, environment and umask, reading
and writing the caller's own stdin, stdout and stderr (passed over the socket).

Each server serves one install (its Python) in one process context: the launcher names
the socket after both (namespaces, root, limits, cgroup, credentials, sandboxing: what a
command's effects depend on besides its arguments), so a caller in a sandbox or with
other limits never has its call run with another's. The exchange, over a UNIX socket in
a folder only the user can enter:

1. the launcher connects and sends its request (argv, cwd, umask, environment, context);
2. the server answers ``A`` (it will run the command) or ``D`` (it will not: a command
   it does not serve, a changed install, a caller it cannot serve): the launcher then
   starts normally;
3. after ``A`` the launcher sends ``G`` with its descriptors 0, 1 and 2, and waits;
   without ``G`` (the launcher gave up waiting for the answer) the server runs nothing.
   So a command runs once, either here or in the launcher's own process, never in both;
4. the server runs the command and sends ``X`` and the exit code. A launcher killed
   meanwhile closes the socket, and the server interrupts the command (as Ctrl-C would
   interrupt its own process: an open transaction rolls back).

A write is acknowledged only by the exit code, which the server sends after the command
has committed, as a process would exit after committing. A server that dies after ``G``
leaves the launcher with no exit code: it reports that the outcome is unknown and exits 1
(a hook exits 0, as hooks always do), and does not run the command a second time.

The server serves one call at a time (SQLite takes one writer at a time anyway); a
launcher that finds it busy for longer than ``ACCEPT_WAIT`` runs the command itself.
It leaves after ``IDLE_SECONDS`` without a call (``PLANTUNE_SERVER_IDLE``), on SIGTERM
(after the call in progress), and before serving a call once any of its loaded module
files changed on disk (an upgrade or an edit: a server never runs old code) or a
database it holds open is no longer the file at its path (see ``toolkit.store.db``).

``PLANTUNE_SERVER=off`` keeps every call in its own process. ``plantune resident status``
and ``plantune resident stop`` show and stop the servers of this install.
"""

import os
import sys

# Bumped when the exchange changes: a launcher and a server of different versions never
# talk (the socket's name carries it).
PROTOCOL = 3
# Seconds a launcher waits for the server's answer before it runs the command itself.
ACCEPT_WAIT = 0.25
# Seconds the server waits for the go-ahead after its answer before it gives the call up.
GO_WAIT = 30.0
# Servers of one install running at once (one per caller context); callers of a further
# context run their calls in their own processes.
MAX_SERVERS = 4
IDLE_SECONDS = 600.0
# The environment variables that start this module's server in a launcher process: the
# socket's path, and the digest of the starting caller's context (the launcher's
# ``_context``), which every request it serves must carry.
SERVE_VAR = "PLANTUNE_RESIDENT_SERVE"
CONTEXT_VAR = "PLANTUNE_RESIDENT_CONTEXT"
# The longest request (argv and environment) a server reads.
MAX_REQUEST = 1 << 20

# The modules the served commands use, imported when the server starts so that no call
# loads a module from disk (which, after an upgrade, could be newer than the rest).
WARM_MODULES = (
    "toolkit.launch",
    "toolkit.cli.fast",
    "toolkit.claude.hooks",
    "toolkit.claude.payload",
    "toolkit.core.database",
    "toolkit.core.doors",
    "toolkit.core.identity",
    "toolkit.core.preferences",
    "toolkit.core.profile",
    "toolkit.core.questions",
    "toolkit.core.registry",
    "toolkit.gstack.backlog",
    "toolkit.gstack.compat",
    "toolkit.gstack.compat_profile",
    "toolkit.gstack.ingest",
    "toolkit.gstack.mirror",
    "toolkit.gstack.spool",
    "toolkit.pacing.rank",
    "toolkit.store.db",
    "toolkit.store.kept",
    "toolkit.store.json_lite",
    "toolkit.store.paths",
    "toolkit.store.safe_io",
)


# --------------------------------------------------------------------------
# Where the servers are


def runtime_dir(env=None):
    """The user's private folder for server sockets (as the launcher finds it)."""
    env = os.environ if env is None else env
    given = env.get("PLANTUNE_RUNTIME_DIR") or ""
    if given.startswith("/"):
        return given
    xdg = env.get("XDG_RUNTIME_DIR") or ""
    if xdg.startswith("/"):
        return xdg + "/plantune"
    return "/tmp/plantune-%d" % os.getuid()


def private_dir_ok(path):
    """True when ``path`` is a real folder of this user that no one else can enter."""
    import stat

    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def pid_namespace():
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return "-"


def server_info(path):
    """``(pid, calls served, its pid namespace, its Python)`` of the server listening at
    ``path``, or None."""
    import fcntl

    try:
        fd = os.open(path + ".lock", os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:  # held: a server runs
            fields = os.pread(fd, 4096, 0).rstrip(b"\n").split(b" ", 3)
            try:
                return (
                    int(fields[0]),
                    int(fields[1]),
                    os.fsdecode(fields[2]),
                    os.fsdecode(fields[3]),
                )
            except (IndexError, ValueError):
                return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def servers(env=None, executable=None, folder=None):
    """``[(socket path, pid, calls served)]`` of the running servers of the install whose
    Python is ``executable`` (this one's by default), one per caller context, whose pids
    this process can see (the same pid namespace: a pid means the same process)."""
    executable = sys.executable if executable is None else executable
    folder = runtime_dir(env) if folder is None else folder
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    here = pid_namespace()
    out = []
    for name in names:
        if name.endswith(".sock.lock"):
            path = os.path.join(folder, name[: -len(".lock")])
            info = server_info(path)
            if info is not None and info[3] == executable and info[2] == here:
                out.append((path, info[0], info[1]))
    return out


def wait_for_server(env=None, executable=None, timeout=10.0):
    """The socket of this install's server once one runs, or None after ``timeout`` s."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        found = servers(env, executable)
        if found:
            return found[0][0]
        if time.monotonic() > deadline:
            return None
        time.sleep(0.01)


def stop(path, wait=None):
    """Stop the server at ``path`` after its call in progress; one still in a call after
    ``wait`` seconds (by default longer than a write waits for the database's lock) is
    killed. Returns "stopped", "killed" or None (none was running)."""
    import signal
    import time

    from toolkit.store import db

    wait = db.BUSY_TIMEOUT_SECONDS + 5.0 if wait is None else wait
    info = server_info(path)
    if info is None:
        return None
    outcome = "stopped"
    for sig, seconds in ((signal.SIGTERM, wait), (signal.SIGKILL, 2.0)):
        try:
            os.kill(info[0], sig)
        except ProcessLookupError:
            return outcome
        deadline = time.monotonic() + seconds
        while server_info(path) is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        if server_info(path) is None:
            return outcome
        outcome = "killed"
    return None


def idle_seconds(text):
    """``PLANTUNE_SERVER_IDLE`` as seconds: the default unless a positive finite number,
    kept between 0.1 s and a day."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return IDLE_SECONDS
    if not 0 < value < float("inf"):
        return IDLE_SECONDS
    return min(max(value, 0.1), 86400.0)


def clear_old_locks(folder):
    """Remove the lock files (and sockets) of servers that left more than a day ago: each
    caller context leaves one behind."""
    import fcntl
    import time

    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not name.endswith(".sock.lock"):
            continue
        path = os.path.join(folder, name)
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if time.time() - os.fstat(fd).st_mtime > 86400:
                for stale in (path, path[: -len(".lock")]):
                    try:
                        os.unlink(stale)
                    except OSError:
                        pass
        except OSError:
            pass  # held: a server runs
        finally:
            os.close(fd)
