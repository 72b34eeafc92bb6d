-- 0015_team_deletes_fast_views: everything after release 0.1.0, in one migration.
--
-- Release 0.1.0 shipped migrations 0001-0014. What came after it was never released and
-- is this one file: the view rollups of pacing decisions and the indexes every view page
-- reads, a team database's history per developer, deletion records that keep every kind of
-- deleted row out of every database it reaches, the indexes of dimension_trace, and the
-- rollup triggers written once each, through an add feed and a remove feed. A database
-- that recorded the unreleased migrations this replaces (0015_view_rollups ...
-- 0021b_rollup_feeds_split) has it applied already (toolkit.store.db.SQUASHED_MIGRATIONS).
--
-- The statistics planted for the query planner are in one place, at the end.

-- ------------------------------------------------------------------ view pages and pacing
--
-- A Datasette view page runs three kinds of query: the page itself (sorted as the
-- metadata says), a count of the whole view, and one count per facet. On the views that
-- read question_log or findings row by row, each of them used to group or sort the whole
-- table. They get what they need:
--
--   * pacing_phase_counts grouped every finding (and looked up each one's answer) on every
--     read. Its totals live in rollup_pacing, one row per project, session, chain, phase
--     and synthetic, kept exact by the findings triggers below in the same transaction as
--     each write (as rollup_phase is). Only `answered`, which depends on the question log,
--     is still looked up, and only for the rows a page shows.
--   * Facets on synthetic read an index that starts with it, and the views sorted by a
--     finding's or a run's creation time read an index in that order, so a page reads the
--     rows it shows instead of sorting the table.

CREATE INDEX question_log_synthetic ON question_log (synthetic);
-- question_events and dimension_trace show the newest events first (by when they were
-- asked: imported history is recorded later than it happened).
CREATE INDEX question_log_ts ON question_log (ts);
CREATE INDEX findings_synthetic ON findings (synthetic);
CREATE INDEX findings_created ON findings (created_at);
CREATE INDEX trace_runs_created ON trace_runs (created_at);

-- reasons counts the findings with a surface_reason, so the view can give NULL (as a sum
-- over no reason at all does) for the per-reason columns of a group without any.
CREATE TABLE rollup_pacing (
    project TEXT NOT NULL,
    session_id TEXT NOT NULL,
    chain_id TEXT NOT NULL,
    phase TEXT NOT NULL,
    synthetic INTEGER NOT NULL,
    findings INTEGER NOT NULL DEFAULT 0,
    surfaced INTEGER NOT NULL DEFAULT 0,
    reasons INTEGER NOT NULL DEFAULT 0,
    surfaced_one_way INTEGER NOT NULL DEFAULT 0,
    surfaced_gate INTEGER NOT NULL DEFAULT 0,
    surfaced_rank INTEGER NOT NULL DEFAULT 0,
    surfaced_flip INTEGER NOT NULL DEFAULT 0,
    silent INTEGER NOT NULL DEFAULT 0,
    flipped INTEGER NOT NULL DEFAULT 0,
    ranked_at TEXT NOT NULL,
    PRIMARY KEY (project, session_id, chain_id, phase, synthetic)
) STRICT, WITHOUT ROWID;
CREATE INDEX rollup_pacing_ranked_at ON rollup_pacing (ranked_at);
CREATE INDEX rollup_pacing_phase ON rollup_pacing (phase);
CREATE INDEX rollup_pacing_synthetic ON rollup_pacing (synthetic);

-- The findings recorded before this migration.
INSERT INTO rollup_pacing (project, session_id, chain_id, phase, synthetic, findings, surfaced,
                           reasons, surfaced_one_way, surfaced_gate, surfaced_rank, surfaced_flip,
                           silent, flipped, ranked_at)
SELECT project, session_id, chain_id, phase, synthetic, count(*), sum(disposition = 'surfaced'),
       sum(surface_reason IS NOT NULL), sum(surface_reason IS 'one-way'),
       sum(surface_reason IS 'gate'), sum(surface_reason IS 'rank'),
       sum(surface_reason IS 'flip'), sum(disposition = 'silent'), sum(flipped_at IS NOT NULL),
       min(created_at)
FROM findings
GROUP BY project, session_id, chain_id, phase, synthetic;

-- ------------------------------------------------------------------ pacing project facet
-- The project facet of pacing_phase_counts reads a narrow
-- index of rollup_pacing instead of its wide rows (its primary key starts with the project,
-- but a scan of the key is a scan of every total).
CREATE INDEX rollup_pacing_project ON rollup_pacing (project);

-- ------------------------------------------------------------------ team history
-- The rest of a developer's history in a team database, and team fits.
--
-- Office-hours sessions, trace runs and guidance proposals say whose they are and which
-- merge source they came from, as events and findings do (0013). Rows written here keep
-- developer '' (this database's own user) and merged_from NULL.
ALTER TABLE office_hours_sessions ADD COLUMN developer TEXT NOT NULL DEFAULT '';
ALTER TABLE office_hours_sessions ADD COLUMN merged_from INTEGER;
ALTER TABLE trace_runs ADD COLUMN developer TEXT NOT NULL DEFAULT '';
ALTER TABLE trace_runs ADD COLUMN merged_from INTEGER;
ALTER TABLE guidance_proposals ADD COLUMN developer TEXT NOT NULL DEFAULT '';
ALTER TABLE guidance_proposals ADD COLUMN merged_from INTEGER;

-- Declared profiles of merged developers, side by side: like developer_preferences, what
-- one developer says about themselves is never folded into anyone else's profile, nor
-- into this database's own declared_profile.
CREATE TABLE developer_declared_profile (
    developer TEXT NOT NULL,
    scope TEXT NOT NULL,
    dimension TEXT NOT NULL CHECK (dimension IN
        ('scope_appetite', 'risk_tolerance', 'detail_preference', 'autonomy', 'architecture_care')),
    value REAL NOT NULL CHECK (value BETWEEN 0 AND 1),
    source TEXT NOT NULL,
    synthetic INTEGER NOT NULL DEFAULT 0 CHECK (synthetic IN (0, 1)),
    declared_at TEXT NOT NULL,
    merged_from INTEGER NOT NULL REFERENCES merge_sources (id),
    PRIMARY KEY (developer, scope, dimension)
) STRICT;

-- fitted_on: 'team' for a threshold fitted on a team dataset (`plantune team calibrate`),
-- 'own' for one fitted on this database's history. A team fit, like a calibration merged
-- from another developer's database, is listed and can be pinned with `calibrations use`,
-- but never becomes the calibration in force by being the newest.
ALTER TABLE calibrations ADD COLUMN fitted_on TEXT NOT NULL DEFAULT 'own'
    CHECK (fitted_on IN ('own', 'team'));

-- ------------------------------------------------------------------ deletion records
-- What was deleted stays deleted, in every database it reaches.
--
-- Tombstones (0010) keep deleted question and preference events out by their event keys.
-- Every other kind of row a merge copies is keyed by its natural key instead: a deletion
-- record keeps that key (identifiers only, never a row's text), who the row belonged to
-- and when it was deleted. `plantune merge` copies a source's records (and tombstones)
-- into the team database, removes the team's copies of what they name, and adds no row
-- they cover; a row written after the delete (a preference set again, a session ranked
-- again) is newer than the record and is not covered.
--
-- The triggers record every delete, whoever makes it (profile delete, pref clear, a merge
-- carrying a source's delete). A delete already covered by a record keeps that record's
-- time, so carrying a delete from a source never moves it later. A row inserted again
-- removes its record: a record stands only while the key has no row.
--
-- Kinds and keys (k2 is '' when the key has one part):
--   finding (session id, finding id), office-hours (session key), trace-run (run id),
--   guidance-proposal (id), calibration (merge key, else "database id:row id"),
--   preference / developer-preference (scope, question id),
--   preference-text / developer-preference-text (scope, question id): typed free text
--   erased while the preference stays,
--   declared-profile / developer-declared-profile (scope, dimension).
CREATE TABLE deletions (
    kind TEXT NOT NULL CHECK (kind IN (
        'finding', 'office-hours', 'trace-run', 'guidance-proposal', 'calibration',
        'preference', 'developer-preference', 'preference-text', 'developer-preference-text',
        'declared-profile', 'developer-declared-profile')),
    developer TEXT NOT NULL DEFAULT '',
    k1 TEXT NOT NULL,
    k2 TEXT NOT NULL DEFAULT '',
    deleted_at TEXT NOT NULL,
    PRIMARY KEY (kind, developer, k1, k2)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER findings_deleted AFTER DELETE ON findings
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'finding' AND d.developer = '' AND d.k1 = OLD.session_id AND d.k2 = OLD.finding_id
                 AND coalesce(julianday(OLD.updated_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('finding', '', OLD.session_id, OLD.finding_id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

CREATE TRIGGER findings_undeleted AFTER INSERT ON findings
BEGIN
    DELETE FROM deletions WHERE kind = 'finding' AND developer = ''
        AND k1 = NEW.session_id AND k2 = NEW.finding_id;
END;

CREATE TRIGGER office_hours_sessions_deleted AFTER DELETE ON office_hours_sessions
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'office-hours' AND d.developer = '' AND d.k1 = OLD.session_key AND d.k2 = ''
                 AND coalesce(julianday(OLD.recorded_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('office-hours', '', OLD.session_key, '', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

CREATE TRIGGER office_hours_sessions_undeleted AFTER INSERT ON office_hours_sessions
BEGIN
    DELETE FROM deletions WHERE kind = 'office-hours' AND developer = ''
        AND k1 = NEW.session_key AND k2 = '';
END;

CREATE TRIGGER trace_runs_deleted AFTER DELETE ON trace_runs
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'trace-run' AND d.developer = '' AND d.k1 = OLD.run_id AND d.k2 = ''
                 AND coalesce(julianday(OLD.created_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('trace-run', '', OLD.run_id, '', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

CREATE TRIGGER trace_runs_undeleted AFTER INSERT ON trace_runs
BEGIN
    DELETE FROM deletions WHERE kind = 'trace-run' AND developer = ''
        AND k1 = NEW.run_id AND k2 = '';
END;

CREATE TRIGGER guidance_proposals_deleted AFTER DELETE ON guidance_proposals
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'guidance-proposal' AND d.developer = '' AND d.k1 = OLD.id AND d.k2 = ''
                 AND coalesce(julianday(OLD.created_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('guidance-proposal', '', OLD.id, '', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

CREATE TRIGGER guidance_proposals_undeleted AFTER INSERT ON guidance_proposals
BEGIN
    DELETE FROM deletions WHERE kind = 'guidance-proposal' AND developer = ''
        AND k1 = NEW.id AND k2 = '';
END;

CREATE TRIGGER calibrations_deleted AFTER DELETE ON calibrations
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'calibration' AND d.developer = '' AND d.k1 = coalesce(OLD.merge_key, (SELECT value FROM plantune_meta WHERE key = 'database_id') || ':' || OLD.id) AND d.k2 = ''
                 AND coalesce(julianday(OLD.created_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('calibration', '', coalesce(OLD.merge_key, (SELECT value FROM plantune_meta WHERE key = 'database_id') || ':' || OLD.id), '', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

CREATE TRIGGER calibrations_undeleted AFTER INSERT ON calibrations
BEGIN
    DELETE FROM deletions WHERE kind = 'calibration' AND developer = ''
        AND k1 = coalesce(NEW.merge_key, (SELECT value FROM plantune_meta WHERE key = 'database_id') || ':' || NEW.id) AND k2 = '';
END;

CREATE TRIGGER preferences_deleted AFTER DELETE ON preferences
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'preference' AND d.developer = OLD.developer AND d.k1 = OLD.scope AND d.k2 = OLD.question_id
                 AND coalesce(julianday(OLD.updated_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('preference', OLD.developer, OLD.scope, OLD.question_id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

CREATE TRIGGER preferences_undeleted AFTER INSERT ON preferences
BEGIN
    DELETE FROM deletions WHERE kind = 'preference'
        AND k1 = NEW.scope AND k2 = NEW.question_id;
END;

CREATE TRIGGER developer_preferences_deleted AFTER DELETE ON developer_preferences
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'developer-preference' AND d.developer = OLD.developer AND d.k1 = OLD.scope AND d.k2 = OLD.question_id
                 AND coalesce(julianday(OLD.updated_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('developer-preference', OLD.developer, OLD.scope, OLD.question_id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

CREATE TRIGGER developer_preferences_undeleted AFTER INSERT ON developer_preferences
BEGIN
    DELETE FROM deletions WHERE kind = 'developer-preference' AND developer = NEW.developer
        AND k1 = NEW.scope AND k2 = NEW.question_id;
END;

CREATE TRIGGER declared_profile_deleted AFTER DELETE ON declared_profile
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'declared-profile' AND d.developer = '' AND d.k1 = OLD.scope AND d.k2 = OLD.dimension
                 AND coalesce(julianday(OLD.declared_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('declared-profile', '', OLD.scope, OLD.dimension, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

CREATE TRIGGER declared_profile_undeleted AFTER INSERT ON declared_profile
BEGIN
    DELETE FROM deletions WHERE kind = 'declared-profile' AND developer = ''
        AND k1 = NEW.scope AND k2 = NEW.dimension;
END;

CREATE TRIGGER developer_declared_profile_deleted AFTER DELETE ON developer_declared_profile
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'developer-declared-profile' AND d.developer = OLD.developer AND d.k1 = OLD.scope AND d.k2 = OLD.dimension
                 AND coalesce(julianday(OLD.declared_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('developer-declared-profile', OLD.developer, OLD.scope, OLD.dimension, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

CREATE TRIGGER developer_declared_profile_undeleted AFTER INSERT ON developer_declared_profile
BEGIN
    DELETE FROM deletions WHERE kind = 'developer-declared-profile' AND developer = NEW.developer
        AND k1 = NEW.scope AND k2 = NEW.dimension;
END;

CREATE TRIGGER preferences_text_erased AFTER UPDATE OF free_text ON preferences
WHEN coalesce(OLD.free_text, '') != '' AND coalesce(NEW.free_text, '') = ''
    AND NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'preference-text' AND d.developer = OLD.developer AND d.k1 = OLD.scope AND d.k2 = OLD.question_id
                    AND coalesce(julianday(NEW.updated_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('preference-text', OLD.developer, OLD.scope, OLD.question_id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

CREATE TRIGGER developer_preferences_text_erased AFTER UPDATE OF free_text ON developer_preferences
WHEN coalesce(OLD.free_text, '') != '' AND coalesce(NEW.free_text, '') = ''
    AND NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'developer-preference-text' AND d.developer = OLD.developer AND d.k1 = OLD.scope AND d.k2 = OLD.question_id
                    AND coalesce(julianday(NEW.updated_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('developer-preference-text', OLD.developer, OLD.scope, OLD.question_id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

-- ------------------------------------------------------------------ dimension_trace
-- The dimension_trace page counts its moves without reading
-- the whole question log.
--
-- A Datasette view page runs its rows, its count and each facet as separate queries, and
-- SQLite plans each one on its own. dimension_trace (one row per event and dimension an
-- answer moved) needs two different plans:
--
--   * the page, newest first, walks question_log (ts) from the end and looks the registry
--     and the signal map up for each event, stopping after the rows it shows;
--   * the count and the synthetic facet walk the moving answers instead (each registered
--     question with a signal key, times its choices in the signal map: a few hundred
--     pairs) and count the events of each pair in one range of an index on (question_id,
--     user_choice, synthetic), never reading an event that moved nothing.
--
-- question_log_question (question_id) stays as it is beside the new index: within one
-- question it keeps the events in log order, which the newest-answer look-up of
-- pacing_decisions reads from the end and stops at the first match; a wider key would make
-- it sort every answer of the question instead.
CREATE INDEX question_log_choice ON question_log (question_id, user_choice, synthetic);

-- ------------------------------------------------------------------ rollup triggers
--
-- SQLite parses every trigger of the schema when a connection runs its first statement,
-- and every hook and compat command opens a new connection: the trigger text is paid on
-- each call. The rollups of question_log (rollup_phase, rollup_day, rollup_question,
-- rollup_choice) and of findings (rollup_phase, rollup_pacing) are written once each: the
-- insert, delete and update triggers only write the row into a feed, and the feed's
-- BEFORE INSERT trigger applies it and discards the row (RAISE(IGNORE) keeps the work and
-- stores nothing), as profile_feed does. One feed adds rows, another takes them away:
-- SQLite compiles every trigger a statement can reach when it prepares it, so an INSERT
-- reaches only the adding statements, a DELETE only the removing ones, and an UPDATE both.
-- The statements are those of 0011a and the view rollups above, in the same order per
-- table, so every total is what it was.
DROP TRIGGER question_log_rollup_insert;
DROP TRIGGER question_log_rollup_delete;
DROP TRIGGER question_log_rollup_update;
DROP TRIGGER findings_rollup_insert;
DROP TRIGGER findings_rollup_delete;
DROP TRIGGER findings_rollup_update;

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

-- ------------------------------------------------------------------ planner statistics
--
-- Without statistics SQLite takes an equality on any one column as equally selective and
-- every table for a million rows, the registry and the signal map included. These rows
-- tell the planner what a large plantune database looks like; ANALYZE replaces them with
-- measured ones.
--
--   * synthetic has two values: without a row, SQLite would look up `synthetic = ?` in
--     question_log_synthetic or findings_synthetic instead of a session's or a question's
--     rows (a scan of most of the table). Each value matching about half the rows, the
--     indexes serve only what they are for, an ordered scan that counts rows per value.
--   * dimension_trace: a registry of about a hundred questions, a signal map of a few rows
--     per signal key and two per answer, and a log where each question recurs thousands of
--     times and each of its answers hundreds (so a look-up of one answer reads
--     question_log_choice, not every event of the question through question_log_question).
--     Its page, its count and its facet then each get their own plan, whatever the size of
--     the database (with measured statistics SQLite does not weigh that a page stops after
--     its first rows, and may sort every move for it).
ANALYZE sqlite_schema;
DELETE FROM sqlite_stat1 WHERE idx IN (
    'question_log_synthetic', 'findings_synthetic', 'question_log_question',
    'question_log_choice', 'sqlite_autoindex_registry_questions_1',
    'sqlite_autoindex_signal_map_1');
INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES
    ('question_log', 'question_log_synthetic', '1000000 500000'),
    ('findings', 'findings_synthetic', '1000000 500000'),
    ('question_log', 'question_log_question', '1000000 3000'),
    ('question_log', 'question_log_choice', '1000000 3000 700 350'),
    ('registry_questions', 'sqlite_autoindex_registry_questions_1', '100 1'),
    ('signal_map', 'sqlite_autoindex_signal_map_1', '200 7 2 1');
-- Analysing the schema table (it has no indexes) reloads the statistics into this
-- connection too.
ANALYZE sqlite_schema;
