-- 0019_merge_trust: a source database speaks only for its own developer.
--
-- A team database used to keep every tombstone a merged source carried in `tombstones`,
-- which refuses that key from anyone: one developer's database could keep another's
-- events out for good. A merged source's tombstones now live here, with the developer
-- they speak for ('' only when a team database trusted as a source said so for everyone):
-- a merge removes that developer's copies and adds none of theirs again, and every other
-- developer's rows are untouched. `tombstones` keeps this database's own deletes.
CREATE TABLE developer_tombstones (
    event_key TEXT NOT NULL,
    developer TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('question-log', 'question-events')),
    deleted_at TEXT NOT NULL,
    PRIMARY KEY (event_key, developer)
) STRICT, WITHOUT ROWID;

-- Deleting a merged copy records whose copy it was (its developer), so the record keeps
-- out only that developer's rows with the key; a row written here still records '' (this
-- database's own delete covers every copy). A record that already covers the row, for
-- everyone or for its developer, keeps its time.
DROP TRIGGER findings_deleted;
CREATE TRIGGER findings_deleted AFTER DELETE ON findings
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'finding' AND d.developer IN ('', iif(OLD.merged_from IS NULL, '', OLD.developer)) AND d.k1 = OLD.session_id AND d.k2 = OLD.finding_id
                 AND coalesce(julianday(OLD.updated_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('finding', iif(OLD.merged_from IS NULL, '', OLD.developer), OLD.session_id, OLD.finding_id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

DROP TRIGGER office_hours_sessions_deleted;
CREATE TRIGGER office_hours_sessions_deleted AFTER DELETE ON office_hours_sessions
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'office-hours' AND d.developer IN ('', iif(OLD.merged_from IS NULL, '', OLD.developer)) AND d.k1 = OLD.session_key AND d.k2 = ''
                 AND coalesce(julianday(OLD.recorded_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('office-hours', iif(OLD.merged_from IS NULL, '', OLD.developer), OLD.session_key, '', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

DROP TRIGGER trace_runs_deleted;
CREATE TRIGGER trace_runs_deleted AFTER DELETE ON trace_runs
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'trace-run' AND d.developer IN ('', iif(OLD.merged_from IS NULL, '', OLD.developer)) AND d.k1 = OLD.run_id AND d.k2 = ''
                 AND coalesce(julianday(OLD.created_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('trace-run', iif(OLD.merged_from IS NULL, '', OLD.developer), OLD.run_id, '', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

DROP TRIGGER guidance_proposals_deleted;
CREATE TRIGGER guidance_proposals_deleted AFTER DELETE ON guidance_proposals
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'guidance-proposal' AND d.developer IN ('', iif(OLD.merged_from IS NULL, '', OLD.developer)) AND d.k1 = OLD.id AND d.k2 = ''
                 AND coalesce(julianday(OLD.created_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('guidance-proposal', iif(OLD.merged_from IS NULL, '', OLD.developer), OLD.id, '', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;

DROP TRIGGER calibrations_deleted;
CREATE TRIGGER calibrations_deleted AFTER DELETE ON calibrations
WHEN NOT EXISTS (SELECT 1 FROM deletions d WHERE d.kind = 'calibration' AND d.developer IN ('', iif(OLD.merged_from IS NULL, '', OLD.developer)) AND d.k1 = coalesce(OLD.merge_key, (SELECT value FROM plantune_meta WHERE key = 'database_id') || ':' || OLD.id) AND d.k2 = ''
                 AND coalesce(julianday(OLD.created_at) > julianday(d.deleted_at), 0) = 0)
BEGIN
    INSERT INTO deletions (kind, developer, k1, k2, deleted_at)
    VALUES ('calibration', iif(OLD.merged_from IS NULL, '', OLD.developer), coalesce(OLD.merge_key, (SELECT value FROM plantune_meta WHERE key = 'database_id') || ':' || OLD.id), '', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT DO UPDATE SET deleted_at = excluded.deleted_at;
END;
