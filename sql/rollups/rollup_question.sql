-- rollup_question: events per project, question and synthetic, with the first and the
-- last event of each (ordered by ts, then id). File layout: see rollup_day.sql.
CREATE TABLE rollup_question (
    project TEXT NOT NULL,
    question_id TEXT NOT NULL,
    synthetic INTEGER NOT NULL,
    events INTEGER NOT NULL DEFAULT 0,
    auto_decided INTEGER NOT NULL DEFAULT 0,
    one_way INTEGER NOT NULL DEFAULT 0,
    followed INTEGER NOT NULL DEFAULT 0,
    overridden INTEGER NOT NULL DEFAULT 0,
    first_event_id INTEGER NOT NULL,
    first_ts TEXT NOT NULL,
    last_event_id INTEGER NOT NULL,
    last_ts TEXT NOT NULL,
    PRIMARY KEY (project, question_id, synthetic)
) STRICT, WITHOUT ROWID;
CREATE INDEX rollup_question_synthetic ON rollup_question (synthetic);

CREATE TRIGGER rollup_question_insert AFTER INSERT ON question_log
BEGIN
    INSERT INTO rollup_question VALUES (NEW.project, NEW.question_id, NEW.synthetic, 1,
        NEW.source = 'auto-decided', NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way',
        NEW.followed_recommendation IS 1, NEW.followed_recommendation IS 0,
        NEW.id, NEW.ts, NEW.id, NEW.ts)
    ON CONFLICT DO UPDATE SET events = events + 1, auto_decided = auto_decided + excluded.auto_decided,
        one_way = one_way + excluded.one_way, followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        first_event_id = iif(excluded.first_ts < first_ts
            OR (excluded.first_ts = first_ts AND excluded.first_event_id < first_event_id),
            excluded.first_event_id, first_event_id),
        first_ts = min(first_ts, excluded.first_ts),
        last_event_id = iif(excluded.last_ts > last_ts
            OR (excluded.last_ts = last_ts AND excluded.last_event_id > last_event_id),
            excluded.last_event_id, last_event_id),
        last_ts = max(last_ts, excluded.last_ts);
END;

-- Taking an event away: question_log no longer holds it, so the boundary look-ups find the
-- events that remain.
CREATE TRIGGER rollup_question_delete AFTER DELETE ON question_log
BEGIN
    UPDATE rollup_question SET events = events - 1,
        auto_decided = auto_decided - (OLD.source = 'auto-decided'),
        one_way = one_way - (OLD.door_class IS 'one-way' OR OLD.door_type IS 'one-way'),
        followed = followed - (OLD.followed_recommendation IS 1),
        overridden = overridden - (OLD.followed_recommendation IS 0)
    WHERE project = OLD.project AND question_id = OLD.question_id AND synthetic = OLD.synthetic;
    DELETE FROM rollup_question WHERE project = OLD.project AND question_id = OLD.question_id
      AND synthetic = OLD.synthetic AND events = 0;
    UPDATE rollup_question SET (first_event_id, first_ts) = (SELECT id, ts FROM question_log
            WHERE project = OLD.project AND question_id = OLD.question_id
              AND synthetic = OLD.synthetic ORDER BY ts, id LIMIT 1),
        (last_event_id, last_ts) = (SELECT id, ts FROM question_log
            WHERE project = OLD.project AND question_id = OLD.question_id
              AND synthetic = OLD.synthetic ORDER BY ts DESC, id DESC LIMIT 1)
    WHERE project = OLD.project AND question_id = OLD.question_id AND synthetic = OLD.synthetic
      AND OLD.id IN (first_event_id, last_event_id);
END;

-- An update takes the old values away and adds the new ones. The boundaries of the old
-- group are looked up again whenever the event was one of them, and those of the new group
-- whenever it is in it: question_log already holds the new values.
CREATE TRIGGER rollup_question_update
AFTER UPDATE OF id, project, ts, question_id, synthetic, source, door_class, door_type,
    followed_recommendation ON question_log
BEGIN
    UPDATE rollup_question SET events = events - 1,
        auto_decided = auto_decided - (OLD.source = 'auto-decided'),
        one_way = one_way - (OLD.door_class IS 'one-way' OR OLD.door_type IS 'one-way'),
        followed = followed - (OLD.followed_recommendation IS 1),
        overridden = overridden - (OLD.followed_recommendation IS 0)
    WHERE project = OLD.project AND question_id = OLD.question_id AND synthetic = OLD.synthetic;
    DELETE FROM rollup_question WHERE project = OLD.project AND question_id = OLD.question_id
      AND synthetic = OLD.synthetic AND events = 0;
    INSERT INTO rollup_question VALUES (NEW.project, NEW.question_id, NEW.synthetic, 1,
        NEW.source = 'auto-decided', NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way',
        NEW.followed_recommendation IS 1, NEW.followed_recommendation IS 0,
        NEW.id, NEW.ts, NEW.id, NEW.ts)
    ON CONFLICT DO UPDATE SET events = events + 1, auto_decided = auto_decided + excluded.auto_decided,
        one_way = one_way + excluded.one_way, followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden;
    UPDATE rollup_question SET (first_event_id, first_ts) = (SELECT id, ts FROM question_log
            WHERE project = rollup_question.project AND question_id = rollup_question.question_id
              AND synthetic = rollup_question.synthetic ORDER BY ts, id LIMIT 1),
        (last_event_id, last_ts) = (SELECT id, ts FROM question_log
            WHERE project = rollup_question.project AND question_id = rollup_question.question_id
              AND synthetic = rollup_question.synthetic ORDER BY ts DESC, id DESC LIMIT 1)
    WHERE (project = OLD.project AND question_id = OLD.question_id AND synthetic = OLD.synthetic
           AND OLD.id IN (first_event_id, last_event_id))
       OR (project = NEW.project AND question_id = NEW.question_id AND synthetic = NEW.synthetic);
END;

-- adds: question_log
-- First and last event of each question among the added rows, ordered by (ts, id), then
-- merged with what the table already holds.
INSERT INTO rollup_question
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
ON CONFLICT DO UPDATE SET
    events = events + excluded.events,
    auto_decided = auto_decided + excluded.auto_decided,
    one_way = one_way + excluded.one_way,
    followed = followed + excluded.followed,
    overridden = overridden + excluded.overridden,
    first_event_id = iif(excluded.first_ts < first_ts
        OR (excluded.first_ts = first_ts AND excluded.first_event_id < first_event_id),
        excluded.first_event_id, first_event_id),
    first_ts = min(first_ts, excluded.first_ts),
    last_event_id = iif(excluded.last_ts > last_ts
        OR (excluded.last_ts = last_ts AND excluded.last_event_id > last_event_id),
        excluded.last_event_id, last_event_id),
    last_ts = max(last_ts, excluded.last_ts);
