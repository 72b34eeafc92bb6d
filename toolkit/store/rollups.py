"""Bulk upkeep of the analysis rollups (rollup_phase, _day, _question, _choice) for imports.

The rollup tables behind the analysis views are kept exact by triggers, one event at a
time (migrations 0005 and 0011a; since 0015 ``question_log_rollup_insert`` writes the event
into ``rollup_question_log_add_feed``, whose ``rollup_question_log_add`` trigger adds it).
For a bulk import that per-row work is most of the cost, so a large part of an import
inserts its rows with the feed left out and then adds the whole part's contribution in
four set-based statements, in the same transaction: no other connection ever sees the rows
without their totals.

How the trigger is left out: an authorizer answers SQLITE_IGNORE for the INSERT into the
feed inside that one trigger while the bulk statement is prepared, so SQLite compiles the
statement without it. Nothing in the schema changes (dropping and re-creating the trigger would
make every other connection re-read the schema), and every other trigger still runs. The
bulk statement has its own SQL text, so no other writer can ever reuse its compiled form.

The set-based statements mirror the triggers; :data:`TRIGGER_SHA1` is the triggers they
mirror. When a migration redefines either (new columns, a new key), their SQL no longer
matches, bulk upkeep switches itself off and imports fall back to the trigger (exact,
slower) until these statements are brought in line: tests compare the two paths table by
table.
"""

from toolkit.store.digest import sha1 as _sha1

INSERT_TRIGGER = "question_log_rollup_insert"
FEED_ADD_TRIGGER = "rollup_question_log_add"
# sha1 of the two triggers' SQL in sqlite_master, joined by a NUL, as migration 0015 creates
# them (every total keyed by synthetic as well, so simulated and real rows are never added
# together).
TRIGGER_SHA1 = "73412c25d84da77e78649f6a6b77bcb18955b339"
# Below this many bytes to read (about 1,000 lines), an import keeps the per-row trigger.
BULK_MIN_BYTES = 256 << 10

# Every statement adds the contribution of the question_log rows with id > :lo (the rows
# of this part: INTEGER PRIMARY KEY gives new rows ids above every existing one).
ADD_ROWS = (
    """
    INSERT INTO rollup_phase (project, session_key, phase, synthetic, questions, auto_decided,
                              one_way, followed, overridden, q_first_ts, q_last_ts)
    SELECT project, coalesce(session_id, ''), phase, synthetic, count(*), sum(source = 'auto-decided'),
           sum(door_class IS 'one-way' OR door_type IS 'one-way'),
           sum(followed_recommendation IS 1), sum(followed_recommendation IS 0), min(ts), max(ts)
    FROM question_log NOT INDEXED WHERE id > :lo
    GROUP BY project, coalesce(session_id, ''), phase, synthetic
    ON CONFLICT (project, session_key, phase, synthetic) DO UPDATE SET
        questions = questions + excluded.questions,
        auto_decided = auto_decided + excluded.auto_decided,
        one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        q_first_ts = min(coalesce(q_first_ts, excluded.q_first_ts), excluded.q_first_ts),
        q_last_ts = max(coalesce(q_last_ts, excluded.q_last_ts), excluded.q_last_ts)
    """,
    """
    INSERT INTO rollup_day (project, day, source, synthetic, events, one_way, followed, overridden,
                            unmarked)
    SELECT project, substr(ts, 1, 10), source, synthetic, count(*),
           sum(door_class IS 'one-way' OR door_type IS 'one-way'),
           sum(followed_recommendation IS 1), sum(followed_recommendation IS 0),
           sum(question_id GLOB 'hook-*')
    FROM question_log NOT INDEXED WHERE id > :lo
    GROUP BY project, substr(ts, 1, 10), source, synthetic
    ON CONFLICT (project, day, source, synthetic) DO UPDATE SET
        events = events + excluded.events,
        one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        unmarked = unmarked + excluded.unmarked
    """,
    # First and last event of each question within the part, ordered by (ts, id) as the
    # trigger orders them; then merged with what the table already holds.
    """
    INSERT INTO rollup_question (project, question_id, synthetic, events, auto_decided, one_way,
                                 followed, overridden, first_event_id, first_ts, last_event_id, last_ts)
    SELECT project, question_id, synthetic, count(*), sum(source = 'auto-decided'),
           sum(door_class IS 'one-way' OR door_type IS 'one-way'),
           sum(followed_recommendation IS 1), sum(followed_recommendation IS 0),
           max(first_id), max(first_ts), max(last_id), max(last_ts)
    FROM (
        SELECT project, question_id, synthetic, source, door_class, door_type, followed_recommendation,
               iif(row_number() OVER w_first = 1, id, NULL) AS first_id,
               iif(row_number() OVER w_first = 1, ts, NULL) AS first_ts,
               iif(row_number() OVER w_last = 1, id, NULL) AS last_id,
               iif(row_number() OVER w_last = 1, ts, NULL) AS last_ts
        FROM question_log NOT INDEXED WHERE id > :lo
        WINDOW w_first AS (PARTITION BY project, question_id, synthetic ORDER BY ts, id),
               w_last AS (PARTITION BY project, question_id, synthetic ORDER BY ts DESC, id DESC)
    )
    GROUP BY project, question_id, synthetic
    ON CONFLICT (project, question_id, synthetic) DO UPDATE SET
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
    INSERT INTO rollup_choice (project, question_id, user_choice, synthetic, answers)
    SELECT project, question_id, user_choice, synthetic, count(*)
    FROM question_log NOT INDEXED WHERE id > :lo AND source != 'auto-decided'
    GROUP BY project, question_id, user_choice, synthetic
    ON CONFLICT (project, question_id, synthetic, user_choice) DO UPDATE SET
        answers = answers + excluded.answers
    """,
)


def triggers_sha1(conn):
    """sha1 of the SQL of the insert trigger and the feed trigger (None if one is missing)."""
    sqls = []
    for name in (INSERT_TRIGGER, FEED_ADD_TRIGGER):
        row = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (name,)
        ).fetchone()
        if row is None:
            return None
        sqls.append(row[0])
    return _sha1("\0".join(sqls).encode()).hexdigest()


def bulk_ready(conn):
    """True when the triggers are the ones :data:`ADD_ROWS` mirrors."""
    return triggers_sha1(conn) == TRIGGER_SHA1


def _authorizer(action, arg1, arg2, dbname, source):
    from toolkit.store.db import sqlite3

    if (
        action == sqlite3.SQLITE_INSERT
        and source == INSERT_TRIGGER
        and (arg1 or "").startswith("rollup_")
    ):
        return sqlite3.SQLITE_IGNORE
    return sqlite3.SQLITE_OK


def bulk_sql(sql):
    """The bulk variant of an INSERT into question_log: its own text, so its compiled form
    (without the rollup trigger) is never shared with a statement that needs the trigger."""
    return sql + " -- bulk: rollups added by toolkit.store.rollups"


class Window:
    """While open, ``conn`` compiles the insert trigger without its rollup INSERTs.

    Opened once for a whole import (installing an authorizer makes SQLite prepare every
    statement again, too costly per batch). Rule while it is open: every row inserted
    into question_log goes through :meth:`insert` (which adds its rollups); a plain
    INSERT prepared now would be cached without the trigger.
    """

    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        self.conn.set_authorizer(_authorizer)
        return self

    def __exit__(self, *exc):
        self.conn.set_authorizer(None)
        return False

    def insert(self, sql, rows):
        """Insert ``rows`` with ``bulk_sql(sql)`` and add their rollups set-based, in the
        caller's write transaction; returns how many rows were inserted."""
        conn = self.conn
        lo = conn.execute("SELECT coalesce(max(id), 0) FROM question_log").fetchone()[0]
        inserted = conn.executemany(bulk_sql(sql), rows).rowcount
        if inserted:
            for statement in ADD_ROWS:
                conn.execute(statement, {"lo": lo})
        return inserted
