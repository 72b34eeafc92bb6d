"""gstack store files written for the importer tests, and the database compared after a run."""

import os

from toolkit.core import jscompat

DATA_TABLES = (
    "question_log",
    "preferences",
    "preference_events",
    "declared_profile",
    "office_hours_sessions",
)


def line(rec):
    return jscompat.stringify(rec) + "\n"


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode, encoding="utf-8") as fh:
        fh.write(text)


def dump(conn):
    """Every data table, rows in key order: what 'identical contents' means."""
    out = {}
    for table in DATA_TABLES:
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        out[table] = [
            tuple(r)
            for r in conn.execute(
                f"SELECT {', '.join(cols)} FROM {table} ORDER BY {cols[0]}, {cols[1]}"
            )
        ]
    return out


def count(conn, table="question_log", where="1"):
    return conn.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()[0]
