"""Helpers for the hot-path tests: run the installed scripts as hooks do, look at the results."""

import json
import os
import sqlite3
import subprocess

from tests.helpers import script

SLUG = "test-project"


def env(**extra):
    """The test's environment (already isolated by conftest) plus a fixed project slug.

    ``None`` removes a variable. Byte-code writing is allowed so repeated script runs do
    not recompile the package every time.
    """
    e = dict(os.environ)
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    e.setdefault("GSTACK_PROJECT_SLUG", SLUG)
    for k, v in extra.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return e


def run(name, *args, input=None, cwd=None, **env_extra):
    """Run an installed console script; returns the CompletedProcess (text, unless bytes in)."""
    binary = isinstance(input, bytes) or any(isinstance(a, bytes) for a in args)
    argv = [script(name).encode() if binary else script(name)] + list(args)
    return subprocess.run(
        argv,
        input=input,
        capture_output=True,
        text=not binary,
        cwd=cwd,
        env=env(**env_extra),
        timeout=60,
    )


def log(record, **kw):
    text = record if isinstance(record, (str, bytes)) else json.dumps(record)
    return run("gstack-question-log", text, **kw)


def pref(*args, **kw):
    return run("gstack-question-preference", *args, **kw)


def project_dir(root, slug=SLUG):
    return os.path.join(str(root), "projects", slug)


def log_lines(root, slug=SLUG):
    path = os.path.join(project_dir(root, slug), "question-log.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def raw_log(root, slug=SLUG):
    with open(os.path.join(project_dir(root, slug), "question-log.jsonl"), encoding="utf-8") as f:
        return f.read()


def prefs_text(root, slug=SLUG):
    with open(
        os.path.join(project_dir(root, slug), "question-preferences.json"), encoding="utf-8"
    ) as f:
        return f.read()


def prefs_file(root, slug=SLUG):
    return json.loads(prefs_text(root, slug))


def events(root, slug=SLUG):
    path = os.path.join(project_dir(root, slug), "question-events.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def db_rows(sql, params=()):
    """Rows from the test database (empty when it was never created)."""
    path = os.environ["PLANTUNE_DB"]
    if not os.path.exists(path):
        return []
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql, params)]
    except sqlite3.OperationalError:
        return []  # created but never migrated
    finally:
        conn.close()


def count(table):
    rows = db_rows(f"SELECT count(*) AS n FROM {table}")
    return rows[0]["n"] if rows else 0


def plant(root, prefs, slug=SLUG):
    """Plant preferences as an upgrade or a hand edit would leave them: in the database and
    in gstack's file (so an importer that syncs the file agrees with the database)."""
    from toolkit.core import seeded_db
    from toolkit.gstack import mirror
    from toolkit.store import db

    conn = seeded_db.connect(os.environ["PLANTUNE_DB"])
    with db.transaction(conn):
        for qid, value in prefs.items():
            known = value in ("always-ask", "never-ask", "ask-only-for-one-way")
            conn.execute(
                "INSERT OR REPLACE INTO preferences (scope, question_id, preference, raw_value,"
                " source, updated_at) VALUES (?, ?, ?, ?, 'planted', ?)",
                (slug, qid, value if known else "unknown", None if known else value, db.utc_now()),
            )
    conn.close()
    if slug != db.GLOBAL_SCOPE:
        path = os.path.join(project_dir(root, slug), "question-preferences.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(prefs, indent=2))
    else:
        mirror.write_atomic(
            os.path.join(str(root), mirror.GLOBAL_PREFERENCES), json.dumps(prefs, indent=2)
        )


def one_line_error(proc):
    """stderr is exactly one line and no traceback reached the user."""
    err = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)
    return err.rstrip("\n")
