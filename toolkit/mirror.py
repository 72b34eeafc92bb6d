"""Keep gstack's own files current beside the database.

gstack's skill scripts read ``projects/<slug>/question-log.jsonl`` and friends directly, so
every write that lands in the database is also appended to (or rewritten in) the file
gstack would have written. The database is the record: a mirror failure never fails the
command, it is reported on stderr by the caller. ``PLANTUNE_MIRROR=0`` turns mirroring off.
"""

import os

from toolkit import paths

QUESTION_LOG = "question-log.jsonl"
PREFERENCES = "question-preferences.json"
EVENTS = "question-events.jsonl"


def enabled(env=None):
    env = os.environ if env is None else env
    return env.get("PLANTUNE_MIRROR", "1") not in ("0", "false", "no", "off")


def project_file(slug, name, env=None):
    return os.path.join(paths.project_dir(slug, env), name)


def append_line(path, line):
    """Append one JSON line with a single O_APPEND write (atomic for concurrent appenders).

    New files get mode 0600, as gstack's store creates them.
    """
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = (line + "\n").encode("utf-8", "surrogatepass")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return len(data)


def write_atomic(path, text):
    """Replace a whole file atomically (temp file in the same folder, then rename)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(tmp, path)
