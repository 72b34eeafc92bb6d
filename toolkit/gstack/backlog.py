"""Import a large backlog of gstack lines in a detached background process.

A user switching from gstack may have a million lines in ``question-log.jsonl`` that the
database has not seen. Hooks and compat commands pick up other writers' changes on every
call, but they must answer within an agent's hook timeout: past a small budget they hand
the rest of the backlog to one background process and answer from what is imported.

One background ingest runs per database, under an exclusive ``flock`` on
``<database>-backlog.lock``. The caller takes the lock before it spawns the process and the
process inherits it, so two callers can never start two ingests, and the lock goes with
the process however it ends. The importer commits rows together with the offset that
covers them, in short transactions: a killed ingest loses nothing and the next one continues
where it stopped, and a line is never counted twice (rows also have deterministic keys).

Only the standard library is imported here: this module is on the hot path.
"""

import os
import sys

LOCK_SUFFIX = "-backlog.lock"
# The background process yields the CPU to the commands an agent is waiting for.
NICENESS = 10


def lock_path(db_path):
    return f"{db_path}{LOCK_SUFFIX}"


def _open_lock(db_path):
    return os.open(lock_path(db_path), os.O_RDWR | os.O_CREAT, 0o600)


def _try_lock(fd):
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def running(db_path):
    """True while a background ingest holds the lock for this database."""
    try:
        fd = _open_lock(db_path)
    except OSError:
        return False
    try:
        return not _try_lock(fd)
    finally:
        os.close(fd)  # closing the only descriptor of this open file releases our lock


def package_parent():
    """The folder that holds the ``toolkit`` package (what the child puts on sys.path)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from toolkit.gstack.backlog import main; main(sys.argv[2:])"
)


def start(db_path, state_root, slug, env=None):
    """Start the background ingest of ``slug`` unless one is running; True if started."""
    try:
        fd = _open_lock(db_path)
    except OSError:
        return False
    try:
        if not _try_lock(fd):
            return False
        os.set_inheritable(fd, True)
        argv = [
            sys.executable,
            "-I",
            "-S",
            "-c",
            _BOOT,
            package_parent(),
            str(fd),
            db_path,
            state_root,
            slug,
        ]
        devnull = [(os.POSIX_SPAWN_OPEN, n, os.devnull, os.O_RDWR, 0) for n in (0, 1, 2)]
        try:
            os.posix_spawn(
                sys.executable,
                argv,
                dict(os.environ if env is None else env),
                file_actions=devnull,
                setsid=True,
            )
        except OSError:
            return False
        return True
    finally:
        # The child holds the lock through its inherited descriptor from here on.
        os.close(fd)


def main(argv):
    """The background process: ``<lock fd> <database> <state root> <slug>``."""
    fd, db_path, state_root, slug = int(argv[0]), argv[1], argv[2], argv[3]
    try:
        os.nice(NICENESS)
    except OSError:
        pass
    code = 0
    try:
        from toolkit.core import seeded_db
        from toolkit.gstack import ingest

        conn = seeded_db.connect(db_path)
        # Lines appended while this runs are read too, until nothing is left.
        for _ in range(100):
            # The importer's write transactions are short and yield to waiting writers, so
            # hooks and compat calls meanwhile wait milliseconds for the lock, not seconds.
            summary = ingest.sync_project(conn, state_root, slug)
            if not summary["pending"] and not summary["imported"]:
                break
        conn.close()
    except Exception:  # noqa: BLE001 - nothing to tell; the next call starts a new run
        code = 1
    finally:
        os.close(fd)
    os._exit(code)
