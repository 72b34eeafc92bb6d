-- profile: the inferred profile and its diversity as running totals (read by
-- inferred_profile and profile_diversity), per (project, synthetic). File layout: see
-- rollup_day.sql.
--
-- Counted events: a non-empty question_id and user_choice. An auto-decided event counts
-- (sample size, diversity) but never moves a dimension: it is not the user's answer, and
-- it stores the option key where gstack's line has the label, which gstack's --derive
-- never finds in the signal map. Its answers are kept apart (moves = 0).
--   profile_totals   sample size, the three distinct counts and the first and last day
--   profile_sums     per dimension: the sum of the moves in integer millionths (exact, so
--                    independent of row order) and how many events moved it
--   profile_skills, profile_days, profile_answers
--                    events per skill, per UTC day (first 10 characters of a non-empty
--                    ts) and per question id and answer: a distinct count changes when a
--                    skill, day or question appears or goes, the first and last day are
--                    the ends of the day index, and a registry or signal-map change moves
--                    the sums of the answers it concerns without reading the question log
--
-- Every change goes through one of two feed tables whose trigger applies it and then
-- discards the row (RAISE(IGNORE) in a BEFORE trigger keeps the work, stores nothing):
--   profile_feed       n events of one (project, synthetic, skill, question, answer, day);
--                      n is signed and may be any count, so the adding statement feeds
--                      grouped counts instead of one row per event
--   profile_move_feed  one signal-map move of one question counted n more times (+1 when
--                      it appears, -1 when it goes)
-- question_log, registry_questions and signal_map only write into these feeds.
CREATE TABLE profile_totals (
    project TEXT NOT NULL,
    synthetic INTEGER NOT NULL,
    sample_size INTEGER NOT NULL,
    skills_covered INTEGER NOT NULL,
    question_ids_covered INTEGER NOT NULL,
    distinct_days INTEGER NOT NULL,
    first_day TEXT,
    last_day TEXT,
    PRIMARY KEY (project, synthetic)
) STRICT, WITHOUT ROWID;

CREATE TABLE profile_sums (
    project TEXT NOT NULL,
    synthetic INTEGER NOT NULL,
    dimension TEXT NOT NULL,
    micros INTEGER NOT NULL,
    events INTEGER NOT NULL,
    PRIMARY KEY (project, synthetic, dimension)
) STRICT, WITHOUT ROWID;

CREATE TABLE profile_skills (
    project TEXT NOT NULL,
    synthetic INTEGER NOT NULL,
    skill TEXT NOT NULL,
    events INTEGER NOT NULL,
    PRIMARY KEY (project, synthetic, skill)
) STRICT, WITHOUT ROWID;

CREATE TABLE profile_days (
    project TEXT NOT NULL,
    synthetic INTEGER NOT NULL,
    day TEXT NOT NULL,
    events INTEGER NOT NULL,
    PRIMARY KEY (project, synthetic, day)
) STRICT, WITHOUT ROWID;

CREATE TABLE profile_answers (
    project TEXT NOT NULL,
    synthetic INTEGER NOT NULL,
    question_id TEXT NOT NULL,
    user_choice TEXT NOT NULL,
    moves INTEGER NOT NULL,
    events INTEGER NOT NULL,
    PRIMARY KEY (project, synthetic, question_id, user_choice, moves)
) STRICT, WITHOUT ROWID;
-- A registry or signal-map change looks up the answers of one question.
CREATE INDEX profile_answers_question ON profile_answers (question_id, user_choice, moves);

CREATE TABLE profile_feed (
    project TEXT NOT NULL,
    synthetic INTEGER NOT NULL,
    skill TEXT NOT NULL,
    question_id TEXT NOT NULL,
    user_choice TEXT NOT NULL,
    moves INTEGER NOT NULL,
    day TEXT,
    n INTEGER NOT NULL
) STRICT;

CREATE TABLE profile_move_feed (
    question_id TEXT NOT NULL,
    user_choice TEXT NOT NULL,
    dimension TEXT NOT NULL,
    delta REAL NOT NULL,
    n INTEGER NOT NULL
) STRICT;

CREATE TRIGGER profile_feed_apply BEFORE INSERT ON profile_feed
BEGIN
    INSERT INTO profile_skills (project, synthetic, skill, events)
    VALUES (NEW.project, NEW.synthetic, NEW.skill, NEW.n)
    ON CONFLICT (project, synthetic, skill) DO UPDATE SET events = events + excluded.events;

    INSERT INTO profile_days (project, synthetic, day, events)
    SELECT NEW.project, NEW.synthetic, NEW.day, NEW.n WHERE NEW.day IS NOT NULL
    ON CONFLICT (project, synthetic, day) DO UPDATE SET events = events + excluded.events;

    INSERT INTO profile_answers (project, synthetic, question_id, user_choice, moves, events)
    VALUES (NEW.project, NEW.synthetic, NEW.question_id, NEW.user_choice, NEW.moves, NEW.n)
    ON CONFLICT (project, synthetic, question_id, user_choice, moves)
    DO UPDATE SET events = events + excluded.events;

    -- A distinct count moves when a skill, day or question crosses zero events:
    -- (now > 0) - (before > 0). A new event can only widen the day range.
    INSERT INTO profile_totals (project, synthetic, sample_size, skills_covered,
                                question_ids_covered, distinct_days, first_day, last_day)
    VALUES (NEW.project, NEW.synthetic, NEW.n,
        (SELECT (s.events > 0) - (s.events - NEW.n > 0) FROM profile_skills AS s
         WHERE s.project = NEW.project AND s.synthetic = NEW.synthetic AND s.skill = NEW.skill),
        (SELECT (sum(a.events) > 0) - (sum(a.events) - NEW.n > 0) FROM profile_answers AS a
         WHERE a.project = NEW.project AND a.synthetic = NEW.synthetic
           AND a.question_id = NEW.question_id),
        coalesce((SELECT (d.events > 0) - (d.events - NEW.n > 0) FROM profile_days AS d
                  WHERE d.project = NEW.project AND d.synthetic = NEW.synthetic
                    AND d.day = NEW.day), 0),
        iif(NEW.n > 0, NEW.day, NULL), iif(NEW.n > 0, NEW.day, NULL))
    ON CONFLICT (project, synthetic) DO UPDATE SET
        sample_size = sample_size + excluded.sample_size,
        skills_covered = skills_covered + excluded.skills_covered,
        question_ids_covered = question_ids_covered + excluded.question_ids_covered,
        distinct_days = distinct_days + excluded.distinct_days,
        first_day = coalesce(min(first_day, excluded.first_day), first_day, excluded.first_day),
        last_day = coalesce(max(last_day, excluded.last_day), last_day, excluded.last_day);

    -- The signal-map moves of this answer.
    INSERT INTO profile_sums (project, synthetic, dimension, micros, events)
    SELECT NEW.project, NEW.synthetic, m.dimension,
           NEW.n * CAST(round(m.delta * 1000000) AS INTEGER), NEW.n
    FROM registry_questions AS r
    JOIN signal_map AS m ON m.signal_key = r.signal_key AND m.user_choice = NEW.user_choice
    WHERE r.id = NEW.question_id AND NEW.moves
    ON CONFLICT (project, synthetic, dimension) DO UPDATE SET
        micros = micros + excluded.micros, events = events + excluded.events;

    -- Taking events away: rows that fell to zero go, and a day range whose end day went
    -- is read again from the ends of the day index (two index seeks).
    DELETE FROM profile_skills WHERE NEW.n < 0 AND project = NEW.project
        AND synthetic = NEW.synthetic AND skill = NEW.skill AND events = 0;
    DELETE FROM profile_days WHERE NEW.n < 0 AND project = NEW.project
        AND synthetic = NEW.synthetic AND day = NEW.day AND events = 0;
    DELETE FROM profile_answers WHERE NEW.n < 0 AND project = NEW.project
        AND synthetic = NEW.synthetic AND question_id = NEW.question_id
        AND user_choice = NEW.user_choice AND moves = NEW.moves AND events = 0;
    DELETE FROM profile_sums WHERE NEW.n < 0 AND project = NEW.project
        AND synthetic = NEW.synthetic AND events = 0;
    DELETE FROM profile_totals WHERE NEW.n < 0 AND project = NEW.project
        AND synthetic = NEW.synthetic AND sample_size = 0;
    UPDATE profile_totals SET
        first_day = (SELECT min(day) FROM profile_days AS d
                     WHERE d.project = NEW.project AND d.synthetic = NEW.synthetic),
        last_day = (SELECT max(day) FROM profile_days AS d
                    WHERE d.project = NEW.project AND d.synthetic = NEW.synthetic)
    WHERE NEW.n < 0 AND project = NEW.project AND synthetic = NEW.synthetic
      AND NEW.day IN (first_day, last_day);

    SELECT RAISE(IGNORE);
END;

CREATE TRIGGER profile_move_feed_apply BEFORE INSERT ON profile_move_feed
BEGIN
    INSERT INTO profile_sums (project, synthetic, dimension, micros, events)
    SELECT a.project, a.synthetic, NEW.dimension,
           NEW.n * sum(a.events) * CAST(round(NEW.delta * 1000000) AS INTEGER),
           NEW.n * sum(a.events)
    FROM profile_answers AS a
    WHERE a.question_id = NEW.question_id AND a.user_choice = NEW.user_choice AND a.moves
    GROUP BY a.project, a.synthetic
    ON CONFLICT (project, synthetic, dimension) DO UPDATE SET
        micros = micros + excluded.micros, events = events + excluded.events;
    DELETE FROM profile_sums WHERE NEW.n < 0 AND dimension = NEW.dimension AND events = 0;
    SELECT RAISE(IGNORE);
END;

-- question_log: a counted event adds 1, a removed one takes 1 away, an update does both.
CREATE TRIGGER question_log_profile_insert AFTER INSERT ON question_log
WHEN NEW.question_id != '' AND NEW.user_choice != ''
BEGIN
    INSERT INTO profile_feed VALUES (NEW.project, NEW.synthetic, NEW.skill, NEW.question_id,
        NEW.user_choice, NEW.source IS NOT 'auto-decided', nullif(substr(NEW.ts, 1, 10), ''), 1);
END;

CREATE TRIGGER question_log_profile_delete AFTER DELETE ON question_log
WHEN OLD.question_id != '' AND OLD.user_choice != ''
BEGIN
    INSERT INTO profile_feed VALUES (OLD.project, OLD.synthetic, OLD.skill, OLD.question_id,
        OLD.user_choice, OLD.source IS NOT 'auto-decided', nullif(substr(OLD.ts, 1, 10), ''), -1);
END;

CREATE TRIGGER question_log_profile_update
AFTER UPDATE OF project, synthetic, skill, question_id, user_choice, source, ts ON question_log
BEGIN
    INSERT INTO profile_feed SELECT OLD.project, OLD.synthetic, OLD.skill, OLD.question_id,
        OLD.user_choice, OLD.source IS NOT 'auto-decided', nullif(substr(OLD.ts, 1, 10), ''), -1
    WHERE OLD.question_id != '' AND OLD.user_choice != '';
    INSERT INTO profile_feed SELECT NEW.project, NEW.synthetic, NEW.skill, NEW.question_id,
        NEW.user_choice, NEW.source IS NOT 'auto-decided', nullif(substr(NEW.ts, 1, 10), ''), 1
    WHERE NEW.question_id != '' AND NEW.user_choice != '';
END;

-- The registry and the signal map decide which answers move which dimension: when either
-- changes, the moves that appear or go are applied to the answers counted so far.
CREATE TRIGGER registry_questions_profile_insert AFTER INSERT ON registry_questions
BEGIN
    INSERT INTO profile_move_feed SELECT NEW.id, m.user_choice, m.dimension, m.delta, 1
    FROM signal_map AS m WHERE m.signal_key = NEW.signal_key;
END;

CREATE TRIGGER registry_questions_profile_delete AFTER DELETE ON registry_questions
BEGIN
    INSERT INTO profile_move_feed SELECT OLD.id, m.user_choice, m.dimension, m.delta, -1
    FROM signal_map AS m WHERE m.signal_key = OLD.signal_key;
END;

CREATE TRIGGER registry_questions_profile_update
AFTER UPDATE OF id, signal_key ON registry_questions
BEGIN
    INSERT INTO profile_move_feed SELECT OLD.id, m.user_choice, m.dimension, m.delta, -1
    FROM signal_map AS m WHERE m.signal_key = OLD.signal_key;
    INSERT INTO profile_move_feed SELECT NEW.id, m.user_choice, m.dimension, m.delta, 1
    FROM signal_map AS m WHERE m.signal_key = NEW.signal_key;
END;

CREATE TRIGGER signal_map_profile_insert AFTER INSERT ON signal_map
BEGIN
    INSERT INTO profile_move_feed SELECT r.id, NEW.user_choice, NEW.dimension, NEW.delta, 1
    FROM registry_questions AS r WHERE r.signal_key = NEW.signal_key;
END;

CREATE TRIGGER signal_map_profile_delete AFTER DELETE ON signal_map
BEGIN
    INSERT INTO profile_move_feed SELECT r.id, OLD.user_choice, OLD.dimension, OLD.delta, -1
    FROM registry_questions AS r WHERE r.signal_key = OLD.signal_key;
END;

CREATE TRIGGER signal_map_profile_update AFTER UPDATE ON signal_map
BEGIN
    INSERT INTO profile_move_feed SELECT r.id, OLD.user_choice, OLD.dimension, OLD.delta, -1
    FROM registry_questions AS r WHERE r.signal_key = OLD.signal_key;
    INSERT INTO profile_move_feed SELECT r.id, NEW.user_choice, NEW.dimension, NEW.delta, 1
    FROM registry_questions AS r WHERE r.signal_key = NEW.signal_key;
END;

-- adds: question_log
-- One feed row per group of the added events.
INSERT INTO profile_feed
SELECT project, synthetic, skill, question_id, user_choice, source IS NOT 'auto-decided',
       nullif(substr(ts, 1, 10), ''), count(*)
FROM question_log NOT INDEXED
WHERE id > :lo AND question_id != '' AND user_choice != ''
GROUP BY project, synthetic, skill, question_id, user_choice, source IS NOT 'auto-decided',
         nullif(substr(ts, 1, 10), '');
