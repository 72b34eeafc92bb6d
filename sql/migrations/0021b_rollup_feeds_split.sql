-- 0021b_rollup_feeds_split: one feed table to add rows, another to take them away.
--
-- 0021 put the rollup statements behind one feed per base table, whose two BEFORE INSERT
-- triggers chose by the sign of the row. SQLite compiles every trigger a statement can
-- reach when it prepares the statement, whatever their WHEN clause will say: an INSERT into
-- question_log compiled the statements that take an event away too, which made preparing
-- it (once per hook or compat call) about a quarter of a millisecond dearer than before
-- 0021. With a feed to add and a feed to take away, an INSERT reaches only the adding
-- statements, a DELETE only the removing ones, and an UPDATE both, as before 0021; the
-- statements themselves are still written once. They are 0021's, unchanged.

DROP TRIGGER question_log_rollup_insert;
DROP TRIGGER question_log_rollup_delete;
DROP TRIGGER question_log_rollup_update;
DROP TRIGGER rollup_question_log_feed_add;
DROP TRIGGER rollup_question_log_feed_remove;
DROP TABLE rollup_question_log_feed;
DROP TRIGGER findings_rollup_insert;
DROP TRIGGER findings_rollup_delete;
DROP TRIGGER findings_rollup_update;
DROP TRIGGER rollup_findings_feed_add;
DROP TRIGGER rollup_findings_feed_remove;
DROP TABLE rollup_findings_feed;

-- The feeds' columns have no declared type, so every value reaches the triggers exactly
-- as the base table holds it (no affinity conversion).
CREATE TABLE rollup_question_log_add_feed (
    id, project, session_id, phase, synthetic, source, door_class, door_type,
    followed_recommendation, question_id, user_choice, ts
);
CREATE TABLE rollup_question_log_remove_feed (
    id, project, session_id, phase, synthetic, source, door_class, door_type,
    followed_recommendation, question_id, user_choice, ts
);
CREATE TABLE rollup_findings_add_feed (
    project, session_id, chain_id, phase, synthetic, disposition, surface_reason, flipped_at,
    created_at
);
CREATE TABLE rollup_findings_remove_feed (
    project, session_id, chain_id, phase, synthetic, disposition, surface_reason, flipped_at,
    created_at
);

CREATE TRIGGER rollup_question_log_add BEFORE INSERT ON rollup_question_log_add_feed
BEGIN
    INSERT INTO rollup_phase (project, session_key, phase, synthetic, questions, auto_decided, one_way,
                              followed, overridden, q_first_ts, q_last_ts)
    VALUES (NEW.project, coalesce(NEW.session_id, ''), NEW.phase, NEW.synthetic, 1,
            NEW.source = 'auto-decided', NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way',
            NEW.followed_recommendation IS 1, NEW.followed_recommendation IS 0, NEW.ts, NEW.ts)
    ON CONFLICT (project, session_key, phase, synthetic) DO UPDATE SET
        questions = questions + 1,
        auto_decided = auto_decided + excluded.auto_decided,
        one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        q_first_ts = min(coalesce(q_first_ts, excluded.q_first_ts), excluded.q_first_ts),
        q_last_ts = max(coalesce(q_last_ts, excluded.q_last_ts), excluded.q_last_ts);

    INSERT INTO rollup_day (project, day, source, synthetic, events, one_way, followed, overridden,
                            unmarked)
    VALUES (NEW.project, substr(NEW.ts, 1, 10), NEW.source, NEW.synthetic, 1,
            NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way',
            NEW.followed_recommendation IS 1, NEW.followed_recommendation IS 0,
            NEW.question_id GLOB 'hook-*')
    ON CONFLICT (project, day, source, synthetic) DO UPDATE SET
        events = events + 1,
        one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        unmarked = unmarked + excluded.unmarked;

    INSERT INTO rollup_question (project, question_id, synthetic, events, auto_decided, one_way,
                                 followed, overridden, first_event_id, first_ts, last_event_id, last_ts)
    VALUES (NEW.project, NEW.question_id, NEW.synthetic, 1, NEW.source = 'auto-decided',
            NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way',
            NEW.followed_recommendation IS 1, NEW.followed_recommendation IS 0,
            NEW.id, NEW.ts, NEW.id, NEW.ts)
    ON CONFLICT (project, question_id, synthetic) DO UPDATE SET
        events = events + 1,
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
            excluded.last_ts, last_ts);

    INSERT INTO rollup_choice (project, question_id, user_choice, synthetic, answers)
    SELECT NEW.project, NEW.question_id, NEW.user_choice, NEW.synthetic, 1
    WHERE NEW.source != 'auto-decided'
    ON CONFLICT (project, question_id, synthetic, user_choice) DO UPDATE SET answers = answers + 1;

    SELECT RAISE(IGNORE);
END;

-- Taking an event away: question_log no longer holds it in that group (deleted, or
-- updated to its new values), so the boundary look-ups find the events that remain.
CREATE TRIGGER rollup_question_log_remove BEFORE INSERT ON rollup_question_log_remove_feed
BEGIN
    UPDATE rollup_phase SET
        questions = questions - 1,
        auto_decided = auto_decided - (NEW.source = 'auto-decided'),
        one_way = one_way - (NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way'),
        followed = followed - (NEW.followed_recommendation IS 1),
        overridden = overridden - (NEW.followed_recommendation IS 0)
    WHERE project = NEW.project AND session_key = coalesce(NEW.session_id, '') AND phase = NEW.phase
      AND synthetic = NEW.synthetic;
    DELETE FROM rollup_phase
    WHERE project = NEW.project AND session_key = coalesce(NEW.session_id, '') AND phase = NEW.phase
      AND synthetic = NEW.synthetic AND questions = 0 AND findings = 0;
    UPDATE rollup_phase SET
        q_first_ts = (SELECT min(ts) FROM question_log WHERE project = NEW.project
                      AND coalesce(session_id, '') = coalesce(NEW.session_id, '') AND phase = NEW.phase
                      AND synthetic = NEW.synthetic),
        q_last_ts = (SELECT max(ts) FROM question_log WHERE project = NEW.project
                     AND coalesce(session_id, '') = coalesce(NEW.session_id, '') AND phase = NEW.phase
                     AND synthetic = NEW.synthetic)
    WHERE project = NEW.project AND session_key = coalesce(NEW.session_id, '') AND phase = NEW.phase
      AND synthetic = NEW.synthetic AND (q_first_ts = NEW.ts OR q_last_ts = NEW.ts);

    UPDATE rollup_day SET
        events = events - 1,
        one_way = one_way - (NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way'),
        followed = followed - (NEW.followed_recommendation IS 1),
        overridden = overridden - (NEW.followed_recommendation IS 0),
        unmarked = unmarked - (NEW.question_id GLOB 'hook-*')
    WHERE project = NEW.project AND day = substr(NEW.ts, 1, 10) AND source = NEW.source
      AND synthetic = NEW.synthetic;
    DELETE FROM rollup_day
    WHERE project = NEW.project AND day = substr(NEW.ts, 1, 10) AND source = NEW.source
      AND synthetic = NEW.synthetic AND events = 0;

    UPDATE rollup_question SET
        events = events - 1,
        auto_decided = auto_decided - (NEW.source = 'auto-decided'),
        one_way = one_way - (NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way'),
        followed = followed - (NEW.followed_recommendation IS 1),
        overridden = overridden - (NEW.followed_recommendation IS 0)
    WHERE project = NEW.project AND question_id = NEW.question_id AND synthetic = NEW.synthetic;
    DELETE FROM rollup_question
    WHERE project = NEW.project AND question_id = NEW.question_id AND synthetic = NEW.synthetic
      AND events = 0;
    UPDATE rollup_question SET
        first_event_id = (SELECT id FROM question_log WHERE project = NEW.project
                          AND question_id = NEW.question_id AND synthetic = NEW.synthetic
                          ORDER BY ts, id LIMIT 1),
        first_ts = (SELECT ts FROM question_log WHERE project = NEW.project
                    AND question_id = NEW.question_id AND synthetic = NEW.synthetic
                    ORDER BY ts, id LIMIT 1),
        last_event_id = (SELECT id FROM question_log WHERE project = NEW.project
                         AND question_id = NEW.question_id AND synthetic = NEW.synthetic
                         ORDER BY ts DESC, id DESC LIMIT 1),
        last_ts = (SELECT ts FROM question_log WHERE project = NEW.project
                   AND question_id = NEW.question_id AND synthetic = NEW.synthetic
                   ORDER BY ts DESC, id DESC LIMIT 1)
    WHERE project = NEW.project AND question_id = NEW.question_id AND synthetic = NEW.synthetic
      AND NEW.id IN (first_event_id, last_event_id);

    UPDATE rollup_choice SET answers = answers - 1
    WHERE project = NEW.project AND question_id = NEW.question_id AND user_choice = NEW.user_choice
      AND synthetic = NEW.synthetic AND NEW.source != 'auto-decided';
    DELETE FROM rollup_choice
    WHERE project = NEW.project AND question_id = NEW.question_id AND user_choice = NEW.user_choice
      AND synthetic = NEW.synthetic AND answers = 0;

    SELECT RAISE(IGNORE);
END;

CREATE TRIGGER question_log_rollup_insert AFTER INSERT ON question_log
BEGIN
    INSERT INTO rollup_question_log_add_feed VALUES (NEW.id, NEW.project, NEW.session_id, NEW.phase, NEW.synthetic,
        NEW.source, NEW.door_class, NEW.door_type, NEW.followed_recommendation,
        NEW.question_id, NEW.user_choice, NEW.ts);
END;

CREATE TRIGGER question_log_rollup_delete AFTER DELETE ON question_log
BEGIN
    INSERT INTO rollup_question_log_remove_feed VALUES (OLD.id, OLD.project, OLD.session_id, OLD.phase, OLD.synthetic,
        OLD.source, OLD.door_class, OLD.door_type, OLD.followed_recommendation,
        OLD.question_id, OLD.user_choice, OLD.ts);
END;

CREATE TRIGGER question_log_rollup_update
AFTER UPDATE OF id, project, ts, question_id, user_choice, followed_recommendation, session_id, source,
                phase, door_class, door_type, synthetic ON question_log
BEGIN
    INSERT INTO rollup_question_log_remove_feed VALUES (OLD.id, OLD.project, OLD.session_id, OLD.phase, OLD.synthetic,
        OLD.source, OLD.door_class, OLD.door_type, OLD.followed_recommendation,
        OLD.question_id, OLD.user_choice, OLD.ts);
    INSERT INTO rollup_question_log_add_feed VALUES (NEW.id, NEW.project, NEW.session_id, NEW.phase, NEW.synthetic,
        NEW.source, NEW.door_class, NEW.door_type, NEW.followed_recommendation,
        NEW.question_id, NEW.user_choice, NEW.ts);
END;

CREATE TRIGGER rollup_findings_add BEFORE INSERT ON rollup_findings_add_feed
BEGIN
    INSERT INTO rollup_phase (project, session_key, phase, synthetic, findings, surfaced, silent, ranked,
                              f_first_ts, f_last_ts)
    VALUES (NEW.project, NEW.session_id, NEW.phase, NEW.synthetic, 1, NEW.disposition = 'surfaced',
            NEW.disposition = 'silent', NEW.disposition = 'surfaced' AND NEW.surface_reason IS 'rank',
            NEW.created_at, NEW.created_at)
    ON CONFLICT (project, session_key, phase, synthetic) DO UPDATE SET
        findings = findings + 1,
        surfaced = surfaced + excluded.surfaced,
        silent = silent + excluded.silent,
        ranked = ranked + excluded.ranked,
        f_first_ts = min(coalesce(f_first_ts, excluded.f_first_ts), excluded.f_first_ts),
        f_last_ts = max(coalesce(f_last_ts, excluded.f_last_ts), excluded.f_last_ts);

    INSERT INTO rollup_pacing (project, session_id, chain_id, phase, synthetic, findings, surfaced,
                               reasons, surfaced_one_way, surfaced_gate, surfaced_rank,
                               surfaced_flip, silent, flipped, ranked_at)
    VALUES (NEW.project, NEW.session_id, NEW.chain_id, NEW.phase, NEW.synthetic, 1,
            NEW.disposition = 'surfaced', NEW.surface_reason IS NOT NULL,
            NEW.surface_reason IS 'one-way', NEW.surface_reason IS 'gate',
            NEW.surface_reason IS 'rank', NEW.surface_reason IS 'flip',
            NEW.disposition = 'silent', NEW.flipped_at IS NOT NULL, NEW.created_at)
    ON CONFLICT (project, session_id, chain_id, phase, synthetic) DO UPDATE SET
        findings = findings + 1,
        surfaced = surfaced + excluded.surfaced,
        reasons = reasons + excluded.reasons,
        surfaced_one_way = surfaced_one_way + excluded.surfaced_one_way,
        surfaced_gate = surfaced_gate + excluded.surfaced_gate,
        surfaced_rank = surfaced_rank + excluded.surfaced_rank,
        surfaced_flip = surfaced_flip + excluded.surfaced_flip,
        silent = silent + excluded.silent,
        flipped = flipped + excluded.flipped,
        ranked_at = min(ranked_at, excluded.ranked_at);

    SELECT RAISE(IGNORE);
END;

-- Taking a finding away: findings no longer holds it in that group (deleted, or updated to
-- its new values), so the boundary look-ups find the findings that remain.
CREATE TRIGGER rollup_findings_remove BEFORE INSERT ON rollup_findings_remove_feed
BEGIN
    UPDATE rollup_phase SET
        findings = findings - 1,
        surfaced = surfaced - (NEW.disposition = 'surfaced'),
        silent = silent - (NEW.disposition = 'silent'),
        ranked = ranked - (NEW.disposition = 'surfaced' AND NEW.surface_reason IS 'rank')
    WHERE project = NEW.project AND session_key = NEW.session_id AND phase = NEW.phase
      AND synthetic = NEW.synthetic;
    DELETE FROM rollup_phase
    WHERE project = NEW.project AND session_key = NEW.session_id AND phase = NEW.phase
      AND synthetic = NEW.synthetic AND questions = 0 AND findings = 0;
    UPDATE rollup_phase SET
        f_first_ts = (SELECT min(created_at) FROM findings WHERE session_id = NEW.session_id
                      AND phase = NEW.phase AND project = NEW.project AND synthetic = NEW.synthetic),
        f_last_ts = (SELECT max(created_at) FROM findings WHERE session_id = NEW.session_id
                     AND phase = NEW.phase AND project = NEW.project AND synthetic = NEW.synthetic)
    WHERE project = NEW.project AND session_key = NEW.session_id AND phase = NEW.phase
      AND synthetic = NEW.synthetic AND (f_first_ts = NEW.created_at OR f_last_ts = NEW.created_at);

    UPDATE rollup_pacing SET
        findings = findings - 1,
        surfaced = surfaced - (NEW.disposition = 'surfaced'),
        reasons = reasons - (NEW.surface_reason IS NOT NULL),
        surfaced_one_way = surfaced_one_way - (NEW.surface_reason IS 'one-way'),
        surfaced_gate = surfaced_gate - (NEW.surface_reason IS 'gate'),
        surfaced_rank = surfaced_rank - (NEW.surface_reason IS 'rank'),
        surfaced_flip = surfaced_flip - (NEW.surface_reason IS 'flip'),
        silent = silent - (NEW.disposition = 'silent'),
        flipped = flipped - (NEW.flipped_at IS NOT NULL)
    WHERE project = NEW.project AND session_id = NEW.session_id AND chain_id = NEW.chain_id
      AND phase = NEW.phase AND synthetic = NEW.synthetic;
    DELETE FROM rollup_pacing
    WHERE project = NEW.project AND session_id = NEW.session_id AND chain_id = NEW.chain_id
      AND phase = NEW.phase AND synthetic = NEW.synthetic AND findings = 0;
    UPDATE rollup_pacing SET
        ranked_at = (SELECT min(created_at) FROM findings
                     WHERE session_id = NEW.session_id AND phase = NEW.phase
                       AND project = NEW.project AND synthetic = NEW.synthetic
                       AND chain_id = NEW.chain_id)
    WHERE project = NEW.project AND session_id = NEW.session_id AND chain_id = NEW.chain_id
      AND phase = NEW.phase AND synthetic = NEW.synthetic AND ranked_at = NEW.created_at;

    SELECT RAISE(IGNORE);
END;

CREATE TRIGGER findings_rollup_insert AFTER INSERT ON findings
BEGIN
    INSERT INTO rollup_findings_add_feed VALUES (NEW.project, NEW.session_id, NEW.chain_id, NEW.phase, NEW.synthetic,
        NEW.disposition, NEW.surface_reason, NEW.flipped_at, NEW.created_at);
END;

CREATE TRIGGER findings_rollup_delete AFTER DELETE ON findings
BEGIN
    INSERT INTO rollup_findings_remove_feed VALUES (OLD.project, OLD.session_id, OLD.chain_id, OLD.phase, OLD.synthetic,
        OLD.disposition, OLD.surface_reason, OLD.flipped_at, OLD.created_at);
END;

-- Every column either rollup reads (rollup_phase's are a subset of rollup_pacing's).
CREATE TRIGGER findings_rollup_update
AFTER UPDATE OF project, session_id, chain_id, phase, synthetic, disposition, surface_reason,
    flipped_at, created_at ON findings
BEGIN
    INSERT INTO rollup_findings_remove_feed VALUES (OLD.project, OLD.session_id, OLD.chain_id, OLD.phase, OLD.synthetic,
        OLD.disposition, OLD.surface_reason, OLD.flipped_at, OLD.created_at);
    INSERT INTO rollup_findings_add_feed VALUES (NEW.project, NEW.session_id, NEW.chain_id, NEW.phase, NEW.synthetic,
        NEW.disposition, NEW.surface_reason, NEW.flipped_at, NEW.created_at);
END;
