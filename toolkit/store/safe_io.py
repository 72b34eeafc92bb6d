"""Safe reads and writes of the files plantune keeps beside its database.

Every file plantune reads from or writes into the state root (gstack's JSONL and JSON
stores, hook-errors.log, guidance files, the spool) goes through these functions, so the
same rules hold everywhere:

- **Only regular files.** A FIFO, socket, device or directory where a file is expected is
  refused with :class:`UnsafeFile` (one line, the reason), never opened in a way that can
  block: the path is checked with ``lstat`` first, opened with ``O_NONBLOCK`` and checked
  again with ``fstat`` on the open descriptor (a swap between the two checks is caught).
- **Nothing leaves the state root.** With ``root`` given, a path whose real location is
  outside it (a symlink, or a symlinked folder, pointing elsewhere) is refused. A write
  never follows a symlink in the last path component (``O_NOFOLLOW``); one that stays
  inside the root is resolved first and the real file written.
- **Appends never glue lines.** :func:`append_line` completes a partial last line (left by
  a writer that ran out of disk) with a newline before its own line, and a failed append
  takes its own partial bytes back when nobody appended after them.
- **Rewrites are atomic.** :func:`write_atomic` writes a private temp file in the same
  folder (the target's mode, 0600 for a new file), fsyncs it and renames it over the
  target; the temp file is removed on every failure path.

Standard library only: the hot path (hooks, compat scripts) imports this module.
"""

import os
import stat

# Open flags every open here uses: never block on a FIFO, never leak into children.
# True in a process that leaves as soon as its command is done, without the interpreter's
# teardown: set by the error boundary of such a console command (``toolkit.core.errors.
# run_script``), read by ``toolkit.store.db.finish``. A long-running command (the click
# application's, ``plantune serve``) never sets it.
one_shot = False

_BASE_FLAGS = os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISLNK, "a symlink"),
)


class UnsafeFile(OSError):
    """A path plantune refuses to read or write; ``str()`` is the one-line reason."""

    def __init__(self, path, reason):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason

    def __str__(self):
        return self.args[0]


def describe(err):
    """One line for an OSError (or anything else): the reason, never a traceback."""
    if isinstance(err, UnsafeFile):
        return str(err)
    if isinstance(err, OSError) and err.strerror:
        where = f"{err.filename}: " if err.filename else ""
        return f"{where}{err.strerror}"
    return str(err).splitlines()[0] if str(err) else type(err).__name__


def kind_of(mode):
    """What a non-regular ``st_mode`` is, in words ("a FIFO"), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _inside(real, root):
    real_root = os.path.realpath(root)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def resolve(path, root=None):
    """The path to open: ``path`` itself, or where its symlinks lead when that stays in
    ``root``. Raises :class:`UnsafeFile` for a location outside ``root``."""
    if root is None:
        return path
    real = os.path.realpath(path)
    if not _inside(real, root):
        raise UnsafeFile(path, "leads outside the state root (symlink), refused")
    return real if real != os.path.abspath(path) else path


def _check_regular(path, st):
    kind = kind_of(st.st_mode)
    if kind is not None:
        raise UnsafeFile(path, f"is {kind}, not a regular file; refused")


def open_regular(path, flags=os.O_RDONLY, mode=0o600, *, root=None):
    """``os.open`` that only ever returns a descriptor of a regular file.

    Raises FileNotFoundError when the file is missing (and ``flags`` do not create it),
    :class:`UnsafeFile` for anything else than a regular file. The descriptor is left in
    blocking mode. Writes (``O_WRONLY``/``O_RDWR``) never follow a final symlink.
    """
    target = resolve(path, root)
    writing = flags & (os.O_WRONLY | os.O_RDWR)
    try:
        st = os.lstat(target) if writing else os.stat(target)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    else:
        _check_regular(path, st)
    try:
        fd = os.open(target, flags | _BASE_FLAGS | (_NOFOLLOW if writing else 0), mode)
    except OSError as e:
        if e.errno in (getattr(os, "ELOOP", -1), getattr(os, "ENXIO", -1)):
            # ELOOP: a symlink appeared; ENXIO: a FIFO with no reader (write side).
            raise UnsafeFile(path, "is not a regular file; refused") from None
        raise
    try:
        _check_regular(path, os.fstat(fd))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path, *, root=None, limit=None):
    """The whole content of a regular file (``limit`` bytes at most when given)."""
    fd = open_regular(path, root=root)
    try:
        chunks, total = [], 0
        while limit is None or total < limit:
            chunk = os.read(fd, (1 << 20) if limit is None else min(1 << 20, limit - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path, *, root=None, errors="strict"):
    """The file decoded as UTF-8 (``errors`` as for ``bytes.decode``)."""
    return read_bytes(path, root=root).decode("utf-8", errors)


def open_text(path, *, root=None, errors="strict"):
    """A text file object (UTF-8) over :func:`open_regular`, for reading line by line."""
    return os.fdopen(open_regular(path, root=root), "r", encoding="utf-8", errors=errors)


def open_binary(path, *, root=None):
    """A binary file object over :func:`open_regular`, for reading."""
    return os.fdopen(open_regular(path, root=root), "rb")


class Appended:
    """What :func:`append_line` did: the ``fstat`` just before and just after the write,
    and the bytes written (a completing newline included)."""

    __slots__ = ("after", "before", "completed", "written")

    def __init__(self, before, written, after, completed):
        self.before, self.written, self.after = before, written, after
        self.completed = completed  # a partial last line was ended with a newline first

    @property
    def alone(self):
        """True when nobody else appended between our look and our write."""
        return (
            self.after.st_ino == self.before.st_ino
            and self.after.st_size == self.before.st_size + self.written
        )


def append_line(path, line, *, root=None, make_dirs=True):
    """Append ``line`` and a newline in one ``O_APPEND`` write; new files get mode 0600.

    A file whose last byte is not a newline (a writer ran out of disk mid-line) is first
    completed with one, so the fragment stays a line of its own and ours is whole. If the
    write fails, our partial bytes are cut off again when nothing was appended after them,
    and the OSError is raised.
    """
    if make_dirs:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    data = (line + "\n").encode("utf-8", "surrogatepass")
    # Read-write, so the last byte can be looked at on the same descriptor.
    fd = open_regular(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600, root=root)
    try:
        # Another appender's line may be half copied into the file right now (a write
        # that straddles a page shows its first part first): plantune's appenders take
        # turns, so a missing newline seen under the lock is a real fragment.
        _lock_briefly(fd)
        before_st = os.fstat(fd)
        before = before_st.st_size
        completed = bool(before) and os.pread(fd, 1, before - 1) != b"\n"
        if completed:
            data = b"\n" + data
        done = 0
        try:
            while done < len(data):
                done += os.write(fd, data[done:])
        except OSError:
            if done and os.fstat(fd).st_size == before + done:
                try:
                    os.ftruncate(fd, before)
                except OSError:
                    pass
            raise
        return Appended(before_st, done, os.fstat(fd), completed)
    finally:
        os.close(fd)


# How long an append waits for another plantune appender of the same file; after that it
# goes ahead without the lock (a stuck holder must never block a hook).
_LOCK_WAIT_S = 2.0


def _lock_briefly(fd):
    import fcntl
    import time

    deadline = time.monotonic() + _LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.001)
        except OSError:
            return False  # no locks on this filesystem: append anyway


def _write_all(fd, data):
    done = 0
    while done < len(data):
        done += os.write(fd, data[done:])


def _temp_copy(target, data, mode):
    """Write ``data`` to a new private file beside ``target``, fsynced; returns its path.
    Nothing is left behind if that fails."""
    folder, name = os.path.split(target)
    tmp = os.path.join(folder, f".{name}.tmp.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BASE_FLAGS, 0o600)
    try:
        try:
            _write_all(fd, data)
            if mode != 0o600:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return tmp


def _unlink_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _encoded(data):
    return data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data


def write_atomic(path, data, *, root=None, mode=0o600, make_dirs=True):
    """Replace ``path`` with ``data`` (str or bytes) atomically; returns the new ``stat``.

    A private temp file in the same folder is written in full, fsynced and renamed over
    the target, so a reader sees the old or the new content, never a half. The target's
    own permission bits are kept (``mode`` for a new file). An existing target that is
    not a regular file is refused; a symlink inside ``root`` is followed to its file.
    The temp file is removed on every failure path.
    """
    target = resolve(path, root)
    if make_dirs:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        pass
    else:
        _check_regular(path, st)
        mode = stat.S_IMODE(st.st_mode)
    tmp = _temp_copy(target, _encoded(data), mode)
    try:
        os.replace(tmp, target)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return os.stat(target)


def create_exclusive(path, data, *, root=None, mode=0o600):
    """Create ``path`` with ``data`` unless it exists; True when created. Never a
    half-written file: the content is written to a temp file and linked into place."""
    target = resolve(path, root)
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    tmp = _temp_copy(target, _encoded(data), mode)
    try:
        os.link(tmp, target)
        return True
    except FileExistsError:
        return False
    finally:
        _unlink_quietly(tmp)


def stdin_bytes():
    """All of this process's stdin; empty when it has none (descriptor 0 closed, where
    Python sets ``sys.stdin`` to None)."""
    import sys

    stream = sys.stdin
    return b"" if stream is None else stream.buffer.read()


def stdin_text():
    """All of stdin as text (decoded as Python decodes it); empty when there is none."""
    import sys

    stream = sys.stdin
    return "" if stream is None else stream.read()


def exit_now(code):
    """End a one-shot command process: flush stdout and stderr, then leave at once.

    For commands whose work is committed, closed and flushed: interpreter teardown (every
    module's cleanup) would only add to the time an agent waits for the answer.
    """
    import sys

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


def error_line(err):
    """The one line a command prints for an exception nothing else handled.

    A full disk, an I/O error or a busy database is the environment, not a bug: it is
    named as such ("database or disk is full: nothing was recorded"). Anything else is
    an internal error, still on one line.
    """
    import sys

    # The C module is what plantune imports (see toolkit.store.db); its classes are sqlite3's.
    sqlite3 = sys.modules.get("_sqlite3") or sys.modules.get("sqlite3")
    text = " ".join(str(err).split())
    if sqlite3 is not None and isinstance(err, sqlite3.Error):
        return f"{text or 'database error'}: nothing was recorded"
    if isinstance(err, OSError):
        return describe(err)
    return f"internal error: {type(err).__name__}: {text}"
