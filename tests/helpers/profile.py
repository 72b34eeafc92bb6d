"""Helpers for the profile tests: plant question events, run the compat scripts.

Events go straight into question_log (the hot write path is tested elsewhere), with the
compact JSON record in raw_json as gstack would have written it.
"""

import itertools
import json
import os
import subprocess

from tests.helpers import script
from toolkit.store import db

PROJECT = "proj-a"
_counter = itertools.count()


def skill_of(conn, question_id):
    row = conn.execute(
        "SELECT skill FROM registry_questions WHERE id = ?", (question_id,)
    ).fetchone()
    return row[0] if row else question_id.split("-")[0]


def add_event(
    conn,
    question_id,
    user_choice,
    project=PROJECT,
    ts="2026-04-01T10:00:00.000Z",
    skill=None,
    source="agent",
    synthetic=0,
    summary="a question",
):
    skill = skill if skill is not None else skill_of(conn, question_id)
    record = {
        "skill": skill,
        "question_id": question_id,
        "question_summary": summary,
        "user_choice": user_choice,
        "source": source,
        "ts": ts,
    }
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO question_log (event_key, project, ts, skill, question_id, question_summary,"
            " user_choice, source, raw_json, synthetic, recorded_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                f"test-{next(_counter)}-{os.getpid()}",
                project,
                ts,
                skill,
                question_id,
                summary,
                user_choice,
                source,
                json.dumps(record, separators=(",", ":")),
                synthetic,
                db.utc_now(),
            ),
        )


def add_events(conn, pairs, **kw):
    for i, (qid, choice) in enumerate(pairs):
        add_event(conn, qid, choice, **({"ts": f"2026-04-{i % 28 + 1:02d}T10:00:00.000Z"} | kw))


def run(name, *args, env=None, input=None):
    """Run an installed console script; returns CompletedProcess (text)."""
    full_env = dict(os.environ)
    full_env.setdefault("GSTACK_PROJECT_SLUG", PROJECT)
    if env:
        full_env.update(env)
    return subprocess.run(
        [script(name), *args], capture_output=True, text=True, env=full_env, input=input, timeout=60
    )


def dev(*args, **kw):
    return run("gstack-developer-profile", *args, **kw)


def read_lines(stdout):
    """``KEY: VALUE`` lines into a dict (value after exactly one space)."""
    out = {}
    for line in stdout.splitlines():
        key, _, value = line.partition(": ")
        if not _:
            key, value = line.rstrip(":"), ""
        out[key] = value
    return out
