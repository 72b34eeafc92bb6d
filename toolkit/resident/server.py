"""The resident server's process: the serving loop, one call's exchange and context.

See the package's docstring (``toolkit.resident``) for what it does and why.
"""

import os
import sys

from toolkit.core import source_stat
from toolkit.resident import (
    CONTEXT_VAR,
    GO_WAIT,
    MAX_REQUEST,
    MAX_SERVERS,
    PROTOCOL,
    SERVE_VAR,
    WARM_MODULES,
    clear_old_locks,
    idle_seconds,
    pid_namespace,
    private_dir_ok,
    servers,
)


class _Stop(Exception):
    """Leave the serving loop."""


class Server:
    def __init__(self, path, context):
        self.path = path
        self.context = os.fsencode(context)
        self.idle = idle_seconds(os.environ.get("PLANTUNE_SERVER_IDLE"))
        self.stopping = False
        self.running = None  # the caller's connection while its command runs
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
        # The pid, for `plantune resident`; the write also dates the lock file, which tells
        # launchers a server is starting (they do not start another meanwhile).
        self._note()
        clear_old_locks(directory)
        if len(servers(executable=sys.executable, folder=directory)) > MAX_SERVERS:
            os.close(self.lock_fd)  # enough contexts served: these callers run alone
            self.lock_fd = None
            return False
        return True

    def _note(self):
        """``<pid> <calls served> <pid namespace> <python>`` in the lock file, for
        ``plantune resident``."""
        text = b"%d %d %s %s\n" % (
            os.getpid(),
            self.served,
            os.fsencode(pid_namespace()),
            os.fsencode(sys.executable),
        )
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
            # plantune's modules, and the compiled ones it runs on (an upgraded Python or
            # SQLite module is a changed install too), with the interpreter itself.
            if name in ("toolkit", "_sqlite3", "_socket") or name.startswith("toolkit."):
                path = getattr(module, "__file__", None)
                if path:
                    files[path] = source_stat(path)
        files[os.path.realpath(sys.executable)] = source_stat(os.path.realpath(sys.executable))
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

        def caller_gone(_signum, _frame):
            # SIGIO: the socket of the caller whose command runs changed state. Closed
            # means the caller is gone (killed, timed out): interrupt the command as
            # Ctrl-C would interrupt its own process.
            conn = self.running
            if conn is not None and _closed_by_peer(conn):
                self.running = None
                raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGIO, caller_gone)
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
                except (Exception, KeyboardInterrupt):  # noqa: BLE001 - one bad exchange
                    pass  # (or a caller gone at the last moment) must not end the server
                finally:
                    self.running = None
                    conn.close()
                    _reap()
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
        from toolkit.store import kept

        if (
            call is None
            or call["context"] != self.context
            or call["python"] != os.fsencode(sys.executable)
        ):
            _send_quietly(conn, b"D")  # another install's or another context's caller
            return
        if self.stale() or kept.replaced_files():
            # A changed install, or a database file replaced under a kept connection:
            # leave; the launcher runs this call and the next one starts a new server.
            _send_quietly(conn, b"D")
            raise _Stop
        ctx = _Context(call)
        try:
            ctx.enter()
            entry = _entry(call["argv"])  # in the caller's folder: --db may be relative
        except OSError:  # the caller's folder is gone or closed to this user
            entry = None
        if entry is None:
            ctx.leave()
            _send_quietly(conn, b"D")
            return
        try:
            conn.sendall(b"A")
            # The caller's stdin, stdout and stderr come with its go-ahead: a launcher
            # that stopped waiting leaves no descriptor of its own here.
            conn.settimeout(GO_WAIT)
            go, fds = _receive_go(conn)
            if go != b"G":
                # The launcher stopped waiting (it runs the command itself), or is so slow
                # that this server gives up: a "D" tells a late one that nothing ran here.
                _send_quietly(conn, b"D")
                return
            if not ctx.attach(fds):
                _send_quietly(conn, b"D")  # nothing ran: the launcher runs it
                return
            conn.settimeout(None)
            _signal_when_closed(conn)
            if _closed_by_peer(conn):
                return  # gone before the command started: as if killed before it ran
            code = ctx.run(entry, call["argv"][1:], self, conn)
        finally:
            ctx.leave()
        self.served += 1
        self._note()
        _send_quietly(conn, b"X" + (code & 0xFF).to_bytes(1, "little"))
        if kept.replaced_files():
            raise _Stop


def _send_quietly(conn, data):
    try:
        conn.sendall(data)
    except OSError:
        pass


def _signal_when_closed(conn):
    """Have the kernel send this process SIGIO when ``conn`` changes state."""
    import fcntl

    fd = conn.fileno()
    fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)


def _closed_by_peer(conn):
    """True when the other end of ``conn`` is closed (the caller sends nothing after G)."""
    import select
    import socket

    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN | select.POLLHUP | getattr(select, "POLLRDHUP", 0))
    events = poller.poll(0)
    if not events:
        return False
    try:
        return conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _reap():
    """Collect the exit status of children that ended (a detached derive a call started):
    between calls, so a command never loses one it waits for itself."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


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
        python = fields[3]
        context = fields[4]
        argc = int(fields[5])
        argv = [os.fsdecode(a) for a in fields[6 : 6 + argc]]
        env = {}
        for item in fields[6 + argc :]:
            key, eq, value = item.partition(b"=")
            if eq and key:
                env[key] = value
    except (IndexError, ValueError):
        return None
    if argc < 1 or len(argv) != argc or not 0 <= umask <= 0o777:
        return None
    return {
        "umask": umask,
        "cwd": cwd,
        "python": python,
        "context": context,
        "argv": argv,
        "env": env,
    }


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
        # Text layers as Python gives a process: the server started in its callers'
        # locale (part of their shared context), so its own streams say which.
        sys.stdin = io.TextIOWrapper(
            io.BufferedReader(streams[0]),
            encoding=sys.__stdin__.encoding,
            errors=sys.__stdin__.errors,
        )
        sys.stdout = io.TextIOWrapper(
            streams[1],
            encoding=sys.__stdout__.encoding,
            errors=sys.__stdout__.errors,
            line_buffering=streams[1].raw.isatty(),
        )
        sys.stderr = io.TextIOWrapper(
            streams[2],
            encoding=sys.__stderr__.encoding,
            errors=sys.__stderr__.errors,
            line_buffering=True,
        )
        return True

    def run(self, entry, args, server, conn):
        """The command's exit code, as its own process would end: an exception that
        escaped its error boundary prints its traceback (exit 1), an interruption because
        the caller is gone exits 130."""
        try:
            server.running = conn
            code = entry(args)
        except KeyboardInterrupt:
            code = 130
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # noqa: BLE001 - what Python prints for a process
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            server.running = None
        return 0 if code is None else int(code)

    def leave(self):
        from toolkit.store import kept

        kept.end_of_call()
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
    tempfile = sys.modules.get("tempfile")
    if tempfile is not None:
        tempfile.tempdir = None  # found again from this call's TMPDIR


def _close_inherited():
    """Close what the starting caller's process passed on besides stdin, stdout and stderr
    (a test runner's or make's pipes): a reader waiting for end-of-file on one of them must
    not wait for this server. Python opens its own descriptors non-inheritable."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:  # pragma: no cover - Linux has /proc
        return
    for name in names:
        fd = int(name)
        if fd > 2:
            try:
                if os.get_inheritable(fd):
                    os.close(fd)
            except OSError:
                pass


def serve(path):
    """Run the server for ``path`` until it is idle, stopped or out of date."""
    context = os.environ.pop(CONTEXT_VAR, None)
    os.environ.pop(SERVE_VAR, None)
    if not context:
        return 2  # started by hand, not by a launcher: it could not check its callers
    _close_inherited()
    try:
        os.chdir("/")
    except OSError:
        pass
    server = Server(path, context)
    if not server.lock():
        return 0
    from toolkit.store import kept

    kept.keep_connections(True)
    try:
        server.warm()
        server.listen()
    except Exception:  # noqa: BLE001 - a broken install: every call runs in its own process
        server.close(failed=True)
        return 1
    try:
        server.serve_forever()
    finally:
        # As every hot command ends: committed work stays committed, and no connection
        # is closed (a close checkpoints and deletes the WAL file by name; see store.kept).
        os._exit(0)
