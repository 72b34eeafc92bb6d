"""What several test modules share: paths, installed scripts, data builders, small runners.

Test modules import from here (and use conftest fixtures), never from one another, so each
can be read, run and changed on its own. One module per area: ``hotpath`` (compat scripts),
``hooks`` (hook payloads), ``profile``, ``team``, ``views``, ``guidance``, ``ingest``,
``server`` (a live ``plantune serve``), ``door_corpus`` and ``gstack_history`` (generated
gstack stores).
"""

import os
import sqlite3
import sys

# The console scripts the subprocess tests run. PLANTUNE_TEST_BIN points them at another
# installation: CI installs the built wheel (not editable) into a clean venv and runs the
# compat tests against its bin folder, so what users install is what gets tested.
BIN_DIR = os.environ.get("PLANTUNE_TEST_BIN") or os.path.dirname(sys.executable)
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def script(name):
    """Path of an installed console script of this venv (compat tests run them as hooks do)."""
    return os.path.join(BIN_DIR, name)


def query(path, sql, params=()):
    """Rows of ``sql`` read from the database file at ``path`` with plain sqlite3 (no
    migration, no views re-created: the file is seen exactly as it is)."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()
