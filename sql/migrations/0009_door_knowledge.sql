-- 0009_door_knowledge: one-way is sticky, ids are compared in one canonical form.
--
-- Canonical id: zero-width characters dropped, surrounding whitespace trimmed, ASCII
-- letters lower-cased, '_' read as '-' (" LAND_AND_DEPLOY-Rollback " is
-- land-and-deploy-rollback). toolkit/doors.py canonical_id() is the same function in
-- Python; a test keeps the two equal. Stored ids keep what was given.

-- door_knowledge: every one-way fact plantune has learned about a question, keyed by its
-- canonical id: a logged event's own door_type ('logged'), plantune's classification of a
-- recorded event ('classified'), a one-way pacing finding ('finding'), a recorded summary
-- found one-way when it was read again with newer rules ('classifier'). Rows are only
-- ever added: one source saying one-way is enough, and later facts never undo it. Checks
-- (check, the hooks, pacing, guidance) and the one_way_audit view read it. Simulated rows
-- teach it nothing.
CREATE TABLE door_knowledge (
    canonical_id TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('logged', 'classified', 'finding', 'classifier')),
    question_id TEXT NOT NULL,
    evidence TEXT NOT NULL,
    learned_at TEXT NOT NULL,
    PRIMARY KEY (canonical_id, source)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER door_knowledge_logged AFTER INSERT ON question_log
WHEN NEW.synthetic = 0 AND (NEW.door_type IS 'one-way' OR NEW.door_class IS 'one-way')
BEGIN
    INSERT OR IGNORE INTO door_knowledge (canonical_id, source, question_id, evidence, learned_at)
    SELECT replace(lower(trim(replace(replace(replace(replace(replace(replace(NEW.question_id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), ''), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288))), '_', '-'), s.source, NEW.question_id, 'question_log:' || NEW.id,
           NEW.recorded_at
    FROM (SELECT 'logged' AS source WHERE NEW.door_type IS 'one-way'
          UNION ALL SELECT 'classified' WHERE NEW.door_class IS 'one-way') AS s;
END;

CREATE TRIGGER door_knowledge_logged_update AFTER UPDATE OF door_type, door_class, question_id
ON question_log
WHEN NEW.synthetic = 0 AND (NEW.door_type IS 'one-way' OR NEW.door_class IS 'one-way')
BEGIN
    INSERT OR IGNORE INTO door_knowledge (canonical_id, source, question_id, evidence, learned_at)
    SELECT replace(lower(trim(replace(replace(replace(replace(replace(replace(NEW.question_id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), ''), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288))), '_', '-'), s.source, NEW.question_id, 'question_log:' || NEW.id,
           NEW.recorded_at
    FROM (SELECT 'logged' AS source WHERE NEW.door_type IS 'one-way'
          UNION ALL SELECT 'classified' WHERE NEW.door_class IS 'one-way') AS s;
END;

-- A finding knows its own id and the question it stands for; both become one-way.
CREATE TRIGGER door_knowledge_finding AFTER INSERT ON findings
WHEN NEW.synthetic = 0 AND NEW.door_type = 'one-way'
BEGIN
    INSERT OR IGNORE INTO door_knowledge (canonical_id, source, question_id, evidence, learned_at)
    SELECT DISTINCT replace(lower(trim(replace(replace(replace(replace(replace(replace(ids.qid, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), ''), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288))), '_', '-'), 'finding', ids.qid, 'findings:' || NEW.id, NEW.created_at
    FROM (SELECT NEW.finding_id AS qid UNION ALL SELECT NEW.question_id) AS ids
    WHERE ids.qid IS NOT NULL AND ids.qid <> '';
END;

CREATE TRIGGER door_knowledge_finding_update AFTER UPDATE OF door_type ON findings
WHEN NEW.synthetic = 0 AND NEW.door_type = 'one-way'
BEGIN
    INSERT OR IGNORE INTO door_knowledge (canonical_id, source, question_id, evidence, learned_at)
    SELECT DISTINCT replace(lower(trim(replace(replace(replace(replace(replace(replace(ids.qid, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), ''), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288))), '_', '-'), 'finding', ids.qid, 'findings:' || NEW.id, NEW.updated_at
    FROM (SELECT NEW.finding_id AS qid UNION ALL SELECT NEW.question_id) AS ids
    WHERE ids.qid IS NOT NULL AND ids.qid <> '';
END;

-- What was already recorded before this migration.
INSERT OR IGNORE INTO door_knowledge (canonical_id, source, question_id, evidence, learned_at)
SELECT replace(lower(trim(replace(replace(replace(replace(replace(replace(question_id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), ''), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288))), '_', '-'), 'logged', question_id, 'question_log:' || id, recorded_at
FROM question_log WHERE synthetic = 0 AND door_type IS 'one-way';
INSERT OR IGNORE INTO door_knowledge (canonical_id, source, question_id, evidence, learned_at)
SELECT replace(lower(trim(replace(replace(replace(replace(replace(replace(question_id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), ''), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288))), '_', '-'), 'classified', question_id, 'question_log:' || id, recorded_at
FROM question_log WHERE synthetic = 0 AND door_class IS 'one-way';
INSERT OR IGNORE INTO door_knowledge (canonical_id, source, question_id, evidence, learned_at)
SELECT replace(lower(trim(replace(replace(replace(replace(replace(replace(ids.qid, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), ''), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288))), '_', '-'), 'finding', ids.qid, 'findings:' || ids.id, ids.created_at
FROM (SELECT id, finding_id AS qid, created_at FROM findings
      WHERE synthetic = 0 AND door_type = 'one-way'
      UNION ALL
      SELECT id, question_id, created_at FROM findings
      WHERE synthetic = 0 AND door_type = 'one-way' AND question_id <> '') AS ids;

-- Canonical look-ups: the registry by any spelling of an id (the hot path's check), and
-- the auto-decided events of a one-way id (the audit walks the few one-way ids first).
CREATE INDEX registry_questions_canonical ON registry_questions (replace(lower(trim(replace(replace(replace(replace(replace(replace(id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), ''), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288))), '_', '-'));
CREATE INDEX question_log_auto_canonical ON question_log (replace(lower(trim(replace(replace(replace(replace(replace(replace(question_id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), ''), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288))), '_', '-'))
    WHERE source = 'auto-decided';

-- registry_downgrades: every one-way registry entry a `registry sync` was explicitly
-- allowed to drop or make two-way (`--allow-downgrade ID`). Without that flag a sync that
-- would do it is refused and nothing changes. to_door NULL: the entry was removed.
CREATE TABLE registry_downgrades (
    id INTEGER PRIMARY KEY,
    question_id TEXT NOT NULL,
    from_door TEXT NOT NULL,
    to_door TEXT,
    registry_file TEXT NOT NULL,
    allowed_at TEXT NOT NULL
) STRICT;
