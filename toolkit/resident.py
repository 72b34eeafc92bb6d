"""The resident server: one warm process per user and install that runs the hot commands.

Agents run ``--check``, ``gstack-question-log`` and the two AskUserQuestion hooks around
every question. Started afresh, each pays for Python's start-up, for importing plantune
and for SQLite reading the database schema (about 2 ms for 180 tables, indexes, triggers
and views) before it does a millisecond of work. The launcher (``launchers/plantune``)
hands such a call to this server instead, when one runs: the server keeps the modules
imported and the database open with its schema read, and runs the command exactly as the
process would have, in the caller's working directory, environment and umask, reading
and writing the caller's own stdin, stdout and stderr (passed over the socket).

The exchange, over a UNIX socket only the user can reach:

1. the launcher connects and sends its request (argv, cwd, umask, environment) with its
   descriptors 0, 1 and 2;
2. the server answers ``A`` (it will run the command) or ``D`` (it will not: a command
   it does not serve, a changed install, a caller it cannot serve): the launcher then
   starts normally;
3. after ``A`` the launcher sends ``G`` and waits; without ``G`` (the launcher gave up
   waiting for the answer) the server runs nothing. So a command runs once, either here
   or in the launcher's own process, never in both;
4. the server runs the command and sends ``X`` and the exit code.

A write is acknowledged only by the exit code, which the server sends after the command
has committed, as a process would exit after committing. A server that dies after ``G``
leaves the launcher with no exit code: it reports that the outcome is unknown and exits 1
(a hook exits 0, as hooks always do), and does not run the command a second time.

The server serves one call at a time (SQLite takes one writer at a time anyway); a
launcher that finds it busy for longer than ``ACCEPT_WAIT`` runs the command itself.
It leaves after ``IDLE_SECONDS`` without a call (``PLANTUNE_SERVER_IDLE``), on SIGTERM
(after the call in progress), and before serving a call once any of its loaded module
files changed on disk (an upgrade or an edit: a server never runs old code). Before
each call it checks that each database it holds open is still the file at its path.

``PLANTUNE_SERVER=off`` keeps every call in its own process. ``plantune server status``
and ``plantune server stop`` show and stop the servers of this install.
"""

import os
import sys

from toolkit.core import source_stat

# Bumped when the exchange changes: a launcher and a server of different versions never
# talk (the socket's name carries it).
PROTOCOL = 1
# Seconds a launcher waits for the server's answer before it runs the command itself.
ACCEPT_WAIT = 0.25
IDLE_SECONDS = 600.0
# The environment variable that starts this module's server in a launcher process.
SERVE_VAR = "PLANTUNE_RESIDENT_SERVE"
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
    "toolkit.store.json_lite",
    "toolkit.store.paths",
    "toolkit.store.safe_io",
)


# --------------------------------------------------------------------------
# Where the socket is (the launcher computes the same name without importing this module;
# a test holds the two together)


def fnv1a(data):
    """64-bit FNV-1a of ``data`` (bytes), as 16 hex digits."""
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def runtime_dir(env=None):
    """The user's private folder for server sockets."""
    env = os.environ if env is None else env
    given = env.get("PLANTUNE_RUNTIME_DIR")
    if given:
        return given
    xdg = env.get("XDG_RUNTIME_DIR")
    if xdg and xdg.startswith("/"):
        return xdg + "/plantune"
    return "/tmp/plantune-%d" % os.getuid()


def socket_path(executable=None, env=None):
    """The socket of the server for the Python at ``executable`` (this install's)."""
    executable = sys.executable if executable is None else executable
    name = fnv1a(os.fsencode(executable))
    return "%s/%s-%d.sock" % (runtime_dir(env), name, PROTOCOL)


def private_dir_ok(path):
    """True when ``path`` is a real folder of this user that no one else can enter."""
    import stat

    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def server_info(path):
    """``(pid, calls served)`` of the server listening at ``path``, or None."""
    import fcntl

    try:
        fd = os.open(path + ".lock", os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:  # held: a server runs
            fields = os.pread(fd, 64, 0).split()
            try:
                return int(fields[0]), int(fields[1])
            except (IndexError, ValueError):
                return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def stop(path, wait=5.0):
    """Stop the server at ``path`` (after its call in progress); True when one was stopped."""
    import signal
    import time

    info = server_info(path)
    if info is None:
        return False
    try:
        os.kill(info[0], signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + wait
    while server_info(path) is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    return server_info(path) is None


# --------------------------------------------------------------------------
# The server


class _Stop(Exception):
    """Leave the serving loop."""


class Server:
    def __init__(self, path, idle=None):
        self.path = path
        self.idle = (
            float(os.environ.get("PLANTUNE_SERVER_IDLE") or IDLE_SECONDS) if idle is None else idle
        )
        self.stopping = False
        self.files = {}
        self.loaded = 0
        self.served = 0
        self.busy = False
        self.lock_fd = None
        self.sock = None
        self.inode = None

    # -- start and stop --------------------------------------------------

    def lock(self):
        """Take the server lock of this socket; False when another server holds it or the
        folder is not private."""
        import fcntl

        directory = os.path.dirname(self.path)
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
        except OSError:
            return False
        if not private_dir_ok(directory):
            return False
        import time

        try:
            self.lock_fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return False
        # A server that is leaving holds the lock a moment longer: wait for it briefly.
        deadline = time.monotonic() + 1.0
        while True:
            try:
                fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > deadline:
                    os.close(self.lock_fd)
                    self.lock_fd = None
                    return False
                time.sleep(0.02)
        # The pid, for `plantune server`; the write also dates the lock file, which tells
        # launchers a server is starting (they do not start another meanwhile).
        self._note()
        return True

    def _note(self):
        """``<pid> <calls served>`` in the lock file, for ``plantune server status``."""
        text = b"%d %d\n" % (os.getpid(), self.served)
        os.ftruncate(self.lock_fd, len(text))
        os.pwrite(self.lock_fd, text, 0)

    def listen(self):
        import socket

        try:
            os.unlink(self.path)  # a socket left by a server that was killed
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(self.path)
        finally:
            os.umask(old)
        sock.listen(64)
        self.sock = sock
        self.inode = os.stat(self.path).st_ino

    def close(self, failed=False):
        if self.lock_fd is not None and not failed:
            # Dated long ago: the next launcher starts a server at once. A server that
            # failed to start leaves its date, so launchers try again only 10 s later.
            os.utime(self.lock_fd, (0, 0))
        if self.sock is not None:
            self.sock.close()
            try:
                if os.stat(self.path).st_ino == self.inode:
                    os.unlink(self.path)
            except OSError:
                pass
        if self.lock_fd is not None:
            os.close(self.lock_fd)

    def warm(self):
        """Import what the commands use and note the files they came from."""
        import importlib

        for name in WARM_MODULES:
            importlib.import_module(name)
        from toolkit.core import doors

        doors.classify("warm up the door rules")
        self.files = self._module_files()
        self.loaded = len(sys.modules)

    @staticmethod
    def _module_files():
        files = {}
        for name, module in list(sys.modules.items()):
            if name == "toolkit" or name.startswith("toolkit."):
                path = getattr(module, "__file__", None)
                if path:
                    files[path] = source_stat(path)
        # The schema's files too: a source checkout's stamp is computed from them once.
        from toolkit.store import db

        for folder, _dirs, names in os.walk(db.SQL_DIR):
            files[folder] = source_stat(folder)
            for name in names:
                files[os.path.join(folder, name)] = source_stat(os.path.join(folder, name))
        return files

    def stale(self):
        """True when a module file changed since it was loaded (or new ones were loaded:
        they are noted, as they came from the install as it is now)."""
        for path, before in self.files.items():
            if source_stat(path) != before:
                return True
        if self.loaded != len(sys.modules):
            self.files = self._module_files()
            self.loaded = len(sys.modules)
        return False

    # -- the loop --------------------------------------------------------

    def serve_forever(self):
        import select
        import signal

        def stop(_signum, _frame):
            self.stopping = True
            if not self.busy:
                raise _Stop  # waiting for a call: leave now; during one: after it

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        poller = select.poll()
        poller.register(self.sock.fileno(), select.POLLIN)
        try:
            while not self.stopping:
                if not poller.poll(self.idle * 1000):
                    break  # idle
                conn, _ = self.sock.accept()
                self.busy = True
                try:
                    self.handle(conn)
                except _Stop:
                    break
                except Exception:  # noqa: BLE001 - one bad exchange must not end the server
                    pass
                finally:
                    conn.close()
                    self.busy = False
        except _Stop:
            pass
        finally:
            self.close()

    def handle(self, conn):
        conn.settimeout(2.0)
        request = _receive(conn)
        if request is None or not _same_user(conn):
            return
        call = _parse(request)
        from toolkit.store import db

        if call is None or self.stale() or db.replaced_files():
            conn.sendall(b"D")
            if call is not None:
                # A changed install, or a database file replaced under a kept connection:
                # leave; the launcher runs this call and the next one starts a new server.
                raise _Stop
            return
        entry = _entry(call["argv"])
        if entry is None:
            conn.sendall(b"D")
            return
        ctx = _Context(call)
        try:
            ctx.enter()
        except OSError:  # the caller's folder is gone or closed to this user
            ctx.leave()
            conn.sendall(b"D")
            return
        try:
            conn.sendall(b"A")
            # The caller's stdin, stdout and stderr come with its go-ahead: a launcher
            # that stopped waiting leaves no descriptor of its own here.
            go, fds = _receive_go(conn)
            if go != b"G":
                return  # the launcher stopped waiting: it runs the command itself
            if not ctx.attach(fds):
                conn.sendall(b"D")  # nothing ran: the launcher runs it
                return
            conn.settimeout(None)
            code = ctx.run(entry, call["argv"][1:])
        finally:
            ctx.leave()
        self.served += 1
        self._note()
        conn.sendall(b"X" + (code & 0xFF).to_bytes(1, "little"))
        if db.replaced_files():
            raise _Stop


def _receive(conn):
    """The request's bytes; None when it is incomplete or too long."""
    data = b""
    need = None
    while need is None or len(data) < need:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
        if need is None and len(data) >= 4:
            need = 4 + int.from_bytes(data[:4], "little")
            if need > MAX_REQUEST:
                return None
    return data[4:need]


def _receive_go(conn):
    """``(the byte after "A", [descriptors that came with it])``."""
    import socket

    # Close-on-exec from the start: a process the command starts (a detached derive, a
    # background import) must not hold the caller's pipes open.
    try:
        data, ancillary, _flags, _addr = conn.recvmsg(
            1, socket.CMSG_SPACE(4 * 3), getattr(socket, "MSG_CMSG_CLOEXEC", 0)
        )
    except OSError:
        return b"", []
    fds = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            for i in range(0, usable, 4):
                fd = int.from_bytes(payload[i : i + 4], sys.byteorder)
                os.set_inheritable(fd, False)
                fds.append(fd)
    return data, fds


def _same_user(conn):
    import socket

    if not hasattr(socket, "SO_PEERCRED"):  # pragma: no cover - Linux has it
        return True
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return int.from_bytes(creds[4:8], sys.byteorder) == os.getuid()


def _parse(request):
    """The launcher's request as a dict, or None when it is not one this server reads."""
    fields = request.split(b"\0")
    try:
        if fields[0] != b"plantune-resident %d" % PROTOCOL:
            return None
        umask = int(fields[1])
        cwd = fields[2]
        argc = int(fields[3])
        argv = [os.fsdecode(a) for a in fields[4 : 4 + argc]]
        env = {}
        for item in fields[4 + argc :]:
            key, eq, value = item.partition(b"=")
            if eq and key:
                env[key] = value
    except (IndexError, ValueError):
        return None
    if argc < 1 or len(argv) != argc or not 0 <= umask <= 0o777:
        return None
    return {"umask": umask, "cwd": cwd, "argv": argv, "env": env}


def _entry(argv):
    """The function that runs ``argv`` here (it takes the arguments and returns the exit
    code), or None for a command line the server does not serve."""
    from toolkit import launch

    name = argv[0].rpartition("/")[2]
    target = launch.COMMANDS.get(name)
    if target is None:
        return None
    if name == "plantune":
        from toolkit.cli import fast

        if fast.parse(argv[1:]) is None:
            return None  # the click application: a process of its own
    module, function = target
    return getattr(sys.modules[module], function)


class _Context:
    """The caller's process state for one call: cwd, environment, umask, argv, stdio."""

    def __init__(self, call):
        self.call = call
        self.saved = None

    def enter(self):
        call = self.call
        self.saved = (sys.stdin, sys.stdout, sys.stderr, sys.argv)
        os.chdir(call["cwd"])
        environ = os.environb
        environ.clear()
        environ.update(call["env"])
        os.umask(call["umask"])
        sys.argv = list(call["argv"])
        _forget_process_state()

    def attach(self, fds):
        """Use the caller's descriptors 0, 1 and 2; False (all closed) unless there are
        exactly three that open."""
        import io

        streams = []
        try:
            if len(fds) != 3:
                raise OSError("expected three descriptors")
            for fd, mode in zip(fds, ("rb", "wb", "wb")):
                streams.append(io.open(fd, mode, buffering=0 if mode == "rb" else -1))
        except (OSError, ValueError):
            for fd in fds[len(streams) :]:
                os.close(fd)
            for stream in streams:
                stream.close()
            return False
        # Text layers as Python gives a process (the server started in a caller's locale).
        sys.stdin = io.TextIOWrapper(
            io.BufferedReader(streams[0]), encoding="utf-8", errors=sys.__stdin__.errors
        )
        sys.stdout = io.TextIOWrapper(
            streams[1],
            encoding="utf-8",
            errors=sys.__stdout__.errors,
            line_buffering=streams[1].raw.isatty(),
        )
        sys.stderr = io.TextIOWrapper(
            streams[2], encoding="utf-8", errors="backslashreplace", line_buffering=True
        )
        return True

    def run(self, entry, args):
        try:
            code = entry(args)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # noqa: BLE001 - the command's own boundary missed it
            code = 1
        return 0 if code is None else int(code)

    def leave(self):
        from toolkit.store import db

        db.end_of_call()
        if self.saved is None:
            return
        if sys.stdout is not self.saved[1]:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            for stream in (sys.stdin, sys.stdout, sys.stderr):
                try:
                    stream.close()
                except (OSError, ValueError):
                    pass
        sys.stdin, sys.stdout, sys.stderr, sys.argv = self.saved
        os.chdir("/")


def _forget_process_state():
    """What a command keeps for the rest of its process, reset for the next call."""
    from toolkit.core import identity
    from toolkit.gstack import mirror

    identity.reset()
    mirror.set_state_root(None)


def serve(path):
    """Run the server for ``path`` until it is idle, stopped or out of date."""
    os.environ.pop(SERVE_VAR, None)
    try:
        os.chdir("/")
    except OSError:
        pass
    server = Server(path)
    if not server.lock():
        return 0
    from toolkit.store import db

    db.keep_connections(True)
    try:
        server.warm()
        server.listen()
    except Exception:  # noqa: BLE001 - a broken install: every call runs in its own process
        server.close(failed=True)
        return 1
    server.serve_forever()
    # As every hot command ends: committed work stays committed, and no connection is
    # closed (a close checkpoints and deletes the WAL file by name; see db._kept).
    os._exit(0)
