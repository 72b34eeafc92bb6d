"""Bulk upkeep of the analysis rollups (migration 0005) for large imports.

The rollup tables behind the analysis views are kept exact by triggers, one row at a
time. For a bulk import that per-row work is most of the cost (about 100 µs a line at a
million lines), so a large batch runs without the question-log insert trigger and adds
the whole batch's contribution in a few set-based statements instead. Both happen inside
the caller's write transaction, so no other writer can ever see the trigger missing, and
a killed import rolls the trigger back with its rows.

The statements mirror ``question_log_rollup_insert`` exactly; a test compares the
tables after a bulk import with the tables the trigger builds from the same rows.
"""

from contextlib import contextmanager

INSERT_TRIGGER = "question_log_rollup_insert"
# Below this many rows a batch keeps the trigger: dropping and re-creating it changes the
# schema, which makes every other connection re-read it once.
BULK_MIN_ROWS = 2000

# Every statement adds the contribution of the question_log rows with id > :lo.
_ADD_BATCH = (
    """
    INSERT INTO rollup_phase (project, session_key, phase, questions, auto_decided, one_way,
                              followed, overridden, q_first_ts, q_last_ts)
    SELECT project, coalesce(session_id, ''), phase, count(*), sum(source = 'auto-decided'),
           sum(door_class IS 'one-way' OR door_type IS 'one-way'),
           sum(followed_recommendation IS 1), sum(followed_recommendation IS 0), min(ts), max(ts)
    FROM question_log WHERE id > :lo
    GROUP BY project, coalesce(session_id, ''), phase
    ON CONFLICT (project, session_key, phase) DO UPDATE SET
        questions = questions + excluded.questions,
        auto_decided = auto_decided + excluded.auto_decided,
        one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        q_first_ts = min(coalesce(q_first_ts, excluded.q_first_ts), excluded.q_first_ts),
        q_last_ts = max(coalesce(q_last_ts, excluded.q_last_ts), excluded.q_last_ts)
    """,
    """
    INSERT INTO rollup_day (project, day, source, events, one_way, followed, overridden, unmarked)
    SELECT project, substr(ts, 1, 10), source, count(*),
           sum(door_class IS 'one-way' OR door_type IS 'one-way'),
           sum(followed_recommendation IS 1), sum(followed_recommendation IS 0),
           sum(question_id GLOB 'hook-*')
    FROM question_log WHERE id > :lo
    GROUP BY project, substr(ts, 1, 10), source
    ON CONFLICT (project, day, source) DO UPDATE SET
        events = events + excluded.events,
        one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        unmarked = unmarked + excluded.unmarked
    """,
    # First and last event of each question within the batch, ordered by (ts, id) as the
    # trigger orders them; then merged with what the table already holds.
    """
    INSERT INTO rollup_question (project, question_id, events, auto_decided, one_way, followed,
                                 overridden, first_event_id, first_ts, last_event_id, last_ts)
    SELECT g.project, g.question_id, g.events, g.auto_decided, g.one_way, g.followed, g.overridden,
           f.id, f.ts, l.id, l.ts
    FROM (
        SELECT project, question_id, count(*) AS events,
               sum(source = 'auto-decided') AS auto_decided,
               sum(door_class IS 'one-way' OR door_type IS 'one-way') AS one_way,
               sum(followed_recommendation IS 1) AS followed,
               sum(followed_recommendation IS 0) AS overridden
        FROM question_log WHERE id > :lo
        GROUP BY project, question_id
    ) AS g
    JOIN (
        SELECT project, question_id, id, ts,
               row_number() OVER (PARTITION BY project, question_id ORDER BY ts, id) AS n
        FROM question_log WHERE id > :lo
    ) AS f ON f.project = g.project AND f.question_id = g.question_id AND f.n = 1
    JOIN (
        SELECT project, question_id, id, ts,
               row_number() OVER (PARTITION BY project, question_id ORDER BY ts DESC, id DESC) AS n
        FROM question_log WHERE id > :lo
    ) AS l ON l.project = g.project AND l.question_id = g.question_id AND l.n = 1
    WHERE true
    ON CONFLICT (project, question_id) DO UPDATE SET
        events = events + excluded.events,
        auto_decided = auto_decided + excluded.auto_decided,
        one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        first_event_id = iif(excluded.first_ts < first_ts
            OR (excluded.first_ts = first_ts AND excluded.first_event_id < first_event_id),
            excluded.first_event_id, first_event_id),
        first_ts = iif(excluded.first_ts < first_ts
            OR (excluded.first_ts = first_ts AND excluded.first_event_id < first_event_id),
            excluded.first_ts, first_ts),
        last_event_id = iif(excluded.last_ts > last_ts
            OR (excluded.last_ts = last_ts AND excluded.last_event_id > last_event_id),
            excluded.last_event_id, last_event_id),
        last_ts = iif(excluded.last_ts > last_ts
            OR (excluded.last_ts = last_ts AND excluded.last_event_id > last_event_id),
            excluded.last_ts, last_ts)
    """,
    """
    INSERT INTO rollup_choice (project, question_id, user_choice, answers)
    SELECT project, question_id, user_choice, count(*)
    FROM question_log WHERE id > :lo AND source != 'auto-decided'
    GROUP BY project, question_id, user_choice
    ON CONFLICT (project, question_id, user_choice) DO UPDATE SET
        answers = answers + excluded.answers
    """,
)


@contextmanager
def bulk_question_rows(conn, expected_rows):
    """Insert many question_log rows inside the ``with`` block, rollups added in bulk.

    Must run inside the caller's write transaction. Falls back to the per-row trigger
    for small batches or when the trigger is not there (an older schema).
    """
    if expected_rows < BULK_MIN_ROWS or not conn.in_transaction:
        yield
        return
    row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (INSERT_TRIGGER,)
    ).fetchone()
    if row is None:
        yield
        return
    lo = conn.execute("SELECT coalesce(max(id), 0) FROM question_log").fetchone()[0]
    conn.execute(f"DROP TRIGGER {INSERT_TRIGGER}")
    try:
        yield
        for statement in _ADD_BATCH:
            conn.execute(statement, {"lo": lo})
    finally:
        # Re-created even when the block failed: the caller's rollback would restore it
        # anyway, but a caller that commits must never commit without it.
        conn.execute(row[0])
