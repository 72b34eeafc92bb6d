-- rollup_pacing: the pacing decisions of the findings per project, session, chain, phase
-- and synthetic (read by pacing_phase_counts). reasons counts the findings with a
-- surface_reason, so the view can give NULL for the per-reason columns of a group without
-- any. File layout: see rollup_day.sql.
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
-- The project facet of pacing_phase_counts reads this narrow index, not the wide rows.
CREATE INDEX rollup_pacing_project ON rollup_pacing (project);

CREATE TRIGGER rollup_pacing_insert AFTER INSERT ON findings
BEGIN
    INSERT INTO rollup_pacing VALUES (NEW.project, NEW.session_id, NEW.chain_id, NEW.phase,
        NEW.synthetic, 1, NEW.disposition = 'surfaced', NEW.surface_reason IS NOT NULL,
        NEW.surface_reason IS 'one-way', NEW.surface_reason IS 'gate', NEW.surface_reason IS 'rank',
        NEW.surface_reason IS 'flip', NEW.disposition = 'silent', NEW.flipped_at IS NOT NULL,
        NEW.created_at)
    ON CONFLICT DO UPDATE SET findings = findings + 1, surfaced = surfaced + excluded.surfaced,
        reasons = reasons + excluded.reasons,
        surfaced_one_way = surfaced_one_way + excluded.surfaced_one_way,
        surfaced_gate = surfaced_gate + excluded.surfaced_gate,
        surfaced_rank = surfaced_rank + excluded.surfaced_rank,
        surfaced_flip = surfaced_flip + excluded.surfaced_flip, silent = silent + excluded.silent,
        flipped = flipped + excluded.flipped, ranked_at = min(ranked_at, excluded.ranked_at);
END;

-- Taking a finding away: findings no longer holds it, so the look-up of the earliest finds
-- the findings that remain.
CREATE TRIGGER rollup_pacing_delete AFTER DELETE ON findings
BEGIN
    UPDATE rollup_pacing SET findings = findings - 1,
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
    DELETE FROM rollup_pacing WHERE project = OLD.project AND session_id = OLD.session_id
      AND chain_id = OLD.chain_id AND phase = OLD.phase AND synthetic = OLD.synthetic
      AND findings = 0;
    UPDATE rollup_pacing SET ranked_at = (SELECT min(created_at) FROM findings
            WHERE session_id = OLD.session_id AND phase = OLD.phase AND project = OLD.project
              AND synthetic = OLD.synthetic AND chain_id = OLD.chain_id)
    WHERE project = OLD.project AND session_id = OLD.session_id AND chain_id = OLD.chain_id
      AND phase = OLD.phase AND synthetic = OLD.synthetic AND ranked_at = OLD.created_at;
END;

CREATE TRIGGER rollup_pacing_update
AFTER UPDATE OF project, session_id, chain_id, phase, synthetic, disposition, surface_reason,
    flipped_at, created_at ON findings
BEGIN
    UPDATE rollup_pacing SET findings = findings - 1,
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
    DELETE FROM rollup_pacing WHERE project = OLD.project AND session_id = OLD.session_id
      AND chain_id = OLD.chain_id AND phase = OLD.phase AND synthetic = OLD.synthetic
      AND findings = 0;
    UPDATE rollup_pacing SET ranked_at = (SELECT min(created_at) FROM findings
            WHERE session_id = OLD.session_id AND phase = OLD.phase AND project = OLD.project
              AND synthetic = OLD.synthetic AND chain_id = OLD.chain_id)
    WHERE project = OLD.project AND session_id = OLD.session_id AND chain_id = OLD.chain_id
      AND phase = OLD.phase AND synthetic = OLD.synthetic AND ranked_at = OLD.created_at;
    INSERT INTO rollup_pacing VALUES (NEW.project, NEW.session_id, NEW.chain_id, NEW.phase,
        NEW.synthetic, 1, NEW.disposition = 'surfaced', NEW.surface_reason IS NOT NULL,
        NEW.surface_reason IS 'one-way', NEW.surface_reason IS 'gate', NEW.surface_reason IS 'rank',
        NEW.surface_reason IS 'flip', NEW.disposition = 'silent', NEW.flipped_at IS NOT NULL,
        NEW.created_at)
    ON CONFLICT DO UPDATE SET findings = findings + 1, surfaced = surfaced + excluded.surfaced,
        reasons = reasons + excluded.reasons,
        surfaced_one_way = surfaced_one_way + excluded.surfaced_one_way,
        surfaced_gate = surfaced_gate + excluded.surfaced_gate,
        surfaced_rank = surfaced_rank + excluded.surfaced_rank,
        surfaced_flip = surfaced_flip + excluded.surfaced_flip, silent = silent + excluded.silent,
        flipped = flipped + excluded.flipped, ranked_at = min(ranked_at, excluded.ranked_at);
END;

-- adds: findings
INSERT INTO rollup_pacing
SELECT project, session_id, chain_id, phase, synthetic, count(*), sum(disposition = 'surfaced'),
       sum(surface_reason IS NOT NULL), sum(surface_reason IS 'one-way'),
       sum(surface_reason IS 'gate'), sum(surface_reason IS 'rank'),
       sum(surface_reason IS 'flip'), sum(disposition = 'silent'), sum(flipped_at IS NOT NULL),
       min(created_at)
FROM findings NOT INDEXED WHERE id > :lo
GROUP BY project, session_id, chain_id, phase, synthetic
ON CONFLICT DO UPDATE SET findings = findings + excluded.findings,
    surfaced = surfaced + excluded.surfaced, reasons = reasons + excluded.reasons,
    surfaced_one_way = surfaced_one_way + excluded.surfaced_one_way,
    surfaced_gate = surfaced_gate + excluded.surfaced_gate,
    surfaced_rank = surfaced_rank + excluded.surfaced_rank,
    surfaced_flip = surfaced_flip + excluded.surfaced_flip, silent = silent + excluded.silent,
    flipped = flipped + excluded.flipped, ranked_at = min(ranked_at, excluded.ranked_at);
