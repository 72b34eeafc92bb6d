"""The rules: vocabulary, question events, preferences, one-way doors, screening, registry,
scoring, profile, JS-compatible formatting, and the one error boundary of every command.

Imports only ``toolkit.store``; the hot path (hooks and compat scripts) runs on these two."""

import os as _os

# The modules that apply the door rules: the data reader, the decoding, the word-by-word
# reader and its other readings, every language's engine (``door_data`` keeps the details;
# the languages' data files are hashed by ``doors.rules_version`` too).
DOOR_RULE_SOURCES = (
    "door_data.py",
    "door_decode.py",
    "door_shell.py",
    "door_reader.py",
    "door_engine.py",
    "door_readable.py",
)


def source_stat(path):
    """What tells one file's content from another's without reading it: inode, size,
    modification and change times (ns). None when it cannot be stat'ed."""
    try:
        st = _os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


# Each door rules module's file as it was before Python read any of them: this package is
# imported before any of its modules. Each module records its file again as it starts;
# when the two agree the file was not replaced while Python read it, so the record names
# the rules this process holds (``door_data.as_read``). Five stats per process.
_DIR = _os.path.dirname(__file__)
DOOR_SOURCES_BEFORE = {name: source_stat(_os.path.join(_DIR, name)) for name in DOOR_RULE_SOURCES}
