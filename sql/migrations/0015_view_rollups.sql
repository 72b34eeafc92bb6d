-- 0015_view_rollups: every view page stays fast on millions of events.
--
-- A Datasette view page runs three kinds of query: the page itself (sorted as the
-- metadata says), a count of the whole view, and one count per facet. On the views that
-- read question_log or findings row by row, each of them used to group or sort the whole
-- table. This migration gives them what they need:
--
--   * pacing_phase_counts grouped every finding (and looked up each one's answer) on every
--     read. Its totals now live in rollup_pacing, one row per project, session, chain,
--     phase and synthetic, kept exact by triggers on findings in the same transaction as
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
-- synthetic has two values, but without statistics SQLite takes an equality on any one
-- column as equally selective, and would look up `synthetic = ?` in these indexes instead
-- of a session's or a question's rows (a scan of most of the table). One statistics row per
-- index tells the planner that each value matches about half the rows; the indexes then
-- serve only what they are for, an ordered scan that counts rows per value. ANALYZE
-- replaces these rows with measured ones.
ANALYZE sqlite_schema;
DELETE FROM sqlite_stat1 WHERE idx IN ('question_log_synthetic', 'findings_synthetic');
INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES
    ('question_log', 'question_log_synthetic', '1000000 500000'),
    ('findings', 'findings_synthetic', '1000000 500000');
-- Analysing the schema table (it has no indexes) reloads the statistics into this
-- connection too.
ANALYZE sqlite_schema;
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

-- A finding's group loses it on delete and on update (old values), gains it on insert and
-- on update (new values). ranked_at is the earliest created_at of the group: a new finding
-- can only lower it; when the earliest one goes, it is read again from the group's rows.
CREATE TRIGGER findings_pacing_insert AFTER INSERT ON findings
BEGIN
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
END;

CREATE TRIGGER findings_pacing_delete AFTER DELETE ON findings
BEGIN
    UPDATE rollup_pacing SET
        findings = findings - 1,
        surfaced = surfaced - (OLD.disposition = 'surfaced'),
        reasons = reasons - (OLD.surface_reason IS NOT NULL),
        surfaced_one_way = surfaced_one_way - (OLD.surface_reason IS 'one-way'),
        surfaced_gate = surfaced_gate - (OLD.surface_reason IS 'gate'),
        surfaced_rank = surfaced_rank - (OLD.surface_reason IS 'rank'),
        surfaced_flip = surfaced_flip - (OLD.surface_reason IS 'flip'),
        silent = silent - (OLD.disposition = 'silent'),
        flipped = flipped - (OLD.flipped_at IS NOT NULL)
    WHERE project = OLD.project AND session_id = OLD.session_id AND chain_id = OLD.chain_id
      AND phase = OLD.phase AND synthetic = OLD.synthetic;
    DELETE FROM rollup_pacing
    WHERE project = OLD.project AND session_id = OLD.session_id AND chain_id = OLD.chain_id
      AND phase = OLD.phase AND synthetic = OLD.synthetic AND findings = 0;
    UPDATE rollup_pacing SET
        ranked_at = (SELECT min(created_at) FROM findings
                     WHERE session_id = OLD.session_id AND phase = OLD.phase
                       AND project = OLD.project AND synthetic = OLD.synthetic
                       AND chain_id = OLD.chain_id)
    WHERE project = OLD.project AND session_id = OLD.session_id AND chain_id = OLD.chain_id
      AND phase = OLD.phase AND synthetic = OLD.synthetic AND ranked_at = OLD.created_at;
END;

CREATE TRIGGER findings_pacing_update
AFTER UPDATE OF project, session_id, chain_id, phase, synthetic, disposition, surface_reason,
    flipped_at, created_at ON findings
BEGIN
    UPDATE rollup_pacing SET
        findings = findings - 1,
        surfaced = surfaced - (OLD.disposition = 'surfaced'),
        reasons = reasons - (OLD.surface_reason IS NOT NULL),
        surfaced_one_way = surfaced_one_way - (OLD.surface_reason IS 'one-way'),
        surfaced_gate = surfaced_gate - (OLD.surface_reason IS 'gate'),
        surfaced_rank = surfaced_rank - (OLD.surface_reason IS 'rank'),
        surfaced_flip = surfaced_flip - (OLD.surface_reason IS 'flip'),
        silent = silent - (OLD.disposition = 'silent'),
        flipped = flipped - (OLD.flipped_at IS NOT NULL)
    WHERE project = OLD.project AND session_id = OLD.session_id AND chain_id = OLD.chain_id
      AND phase = OLD.phase AND synthetic = OLD.synthetic;
    DELETE FROM rollup_pacing
    WHERE project = OLD.project AND session_id = OLD.session_id AND chain_id = OLD.chain_id
      AND phase = OLD.phase AND synthetic = OLD.synthetic AND findings = 0;
    -- The row itself already holds its new values: the minimum over the old group's rows
    -- no longer sees it.
    UPDATE rollup_pacing SET
        ranked_at = (SELECT min(created_at) FROM findings
                     WHERE session_id = OLD.session_id AND phase = OLD.phase
                       AND project = OLD.project AND synthetic = OLD.synthetic
                       AND chain_id = OLD.chain_id)
    WHERE project = OLD.project AND session_id = OLD.session_id AND chain_id = OLD.chain_id
      AND phase = OLD.phase AND synthetic = OLD.synthetic AND ranked_at = OLD.created_at;

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
END;

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
