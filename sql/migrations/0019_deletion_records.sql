-- 0019_deletion_records: what was deleted stays deleted, in every database it reaches.
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
