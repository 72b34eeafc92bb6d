-- rollup_day: question events per project, day (the first ten characters of ts), source
-- and synthetic, with the one-way doors, the followed and overridden recommendations and
-- the unmarked (hook-*) questions among them. Read by daily_activity.
--
-- A rollup file holds the rollup's table, the triggers that keep it exact on each write,
-- and, after a "-- adds: TABLE" line, the statement that adds the rows of TABLE with
-- id > :lo (toolkit.store.rollups: a refill runs it with :lo = 0 on an empty table, a bulk
-- import over the rows it inserted).
CREATE TABLE rollup_day (
    project TEXT NOT NULL,
    day TEXT NOT NULL,
    source TEXT NOT NULL,
    synthetic INTEGER NOT NULL,
    events INTEGER NOT NULL DEFAULT 0,
    one_way INTEGER NOT NULL DEFAULT 0,
    followed INTEGER NOT NULL DEFAULT 0,
    overridden INTEGER NOT NULL DEFAULT 0,
    unmarked INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project, day, source, synthetic)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER rollup_day_insert AFTER INSERT ON question_log
BEGIN
    INSERT INTO rollup_day VALUES (NEW.project, substr(NEW.ts, 1, 10), NEW.source, NEW.synthetic, 1,
        NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way', NEW.followed_recommendation IS 1,
        NEW.followed_recommendation IS 0, NEW.question_id GLOB 'hook-*')
    ON CONFLICT DO UPDATE SET events = events + 1, one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed, overridden = overridden + excluded.overridden,
        unmarked = unmarked + excluded.unmarked;
END;

CREATE TRIGGER rollup_day_delete AFTER DELETE ON question_log
BEGIN
    UPDATE rollup_day SET events = events - 1,
        one_way = one_way - (OLD.door_class IS 'one-way' OR OLD.door_type IS 'one-way'),
        followed = followed - (OLD.followed_recommendation IS 1),
        overridden = overridden - (OLD.followed_recommendation IS 0),
        unmarked = unmarked - (OLD.question_id GLOB 'hook-*')
    WHERE project = OLD.project AND day = substr(OLD.ts, 1, 10) AND source = OLD.source
      AND synthetic = OLD.synthetic;
    DELETE FROM rollup_day WHERE project = OLD.project AND day = substr(OLD.ts, 1, 10)
      AND source = OLD.source AND synthetic = OLD.synthetic AND events = 0;
END;

-- An update moves the event from its old group to its new one (the same group when no key
-- column changed): one upsert of the new values less the old, then the empty group goes.
CREATE TRIGGER rollup_day_update
AFTER UPDATE OF project, ts, source, synthetic, door_class, door_type, followed_recommendation,
    question_id ON question_log
BEGIN
    UPDATE rollup_day SET events = events - 1,
        one_way = one_way - (OLD.door_class IS 'one-way' OR OLD.door_type IS 'one-way'),
        followed = followed - (OLD.followed_recommendation IS 1),
        overridden = overridden - (OLD.followed_recommendation IS 0),
        unmarked = unmarked - (OLD.question_id GLOB 'hook-*')
    WHERE project = OLD.project AND day = substr(OLD.ts, 1, 10) AND source = OLD.source
      AND synthetic = OLD.synthetic;
    INSERT INTO rollup_day VALUES (NEW.project, substr(NEW.ts, 1, 10), NEW.source, NEW.synthetic, 1,
        NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way', NEW.followed_recommendation IS 1,
        NEW.followed_recommendation IS 0, NEW.question_id GLOB 'hook-*')
    ON CONFLICT DO UPDATE SET events = events + 1, one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed, overridden = overridden + excluded.overridden,
        unmarked = unmarked + excluded.unmarked;
    DELETE FROM rollup_day WHERE project = OLD.project AND day = substr(OLD.ts, 1, 10)
      AND source = OLD.source AND synthetic = OLD.synthetic AND events = 0;
END;

-- adds: question_log
INSERT INTO rollup_day
SELECT project, substr(ts, 1, 10), source, synthetic, count(*),
       sum(door_class IS 'one-way' OR door_type IS 'one-way'),
       sum(followed_recommendation IS 1), sum(followed_recommendation IS 0),
       sum(question_id GLOB 'hook-*')
FROM question_log NOT INDEXED WHERE id > :lo
GROUP BY project, substr(ts, 1, 10), source, synthetic
ON CONFLICT DO UPDATE SET events = events + excluded.events, one_way = one_way + excluded.one_way,
    followed = followed + excluded.followed, overridden = overridden + excluded.overridden,
    unmarked = unmarked + excluded.unmarked;
