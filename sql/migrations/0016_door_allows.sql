-- 0016_door_allows: ids compared in a wider canonical form, and the user's corrections of
-- the classifier's false alarms.
--
-- Canonical id (toolkit/core/doors.py canonical_id_sql, a test keeps the texts equal):
-- zero-width characters dropped, ASCII letters lower-cased, '_', spaces and tabs read as
-- '-', surrounding whitespace, trailing punctuation and '-' trimmed, runs of '-' folded to
-- one. So investigate--fix-apply, investigate fix apply, investigate-fix-apply. and
-- investigate__fix__apply are all investigate-fix-apply (Python also splits code names,
-- investigateFixApply, which logged ids, kebab-case, never are). The triggers of 0009 are
-- re-created with it, every fact already learned is recorded under its new key too (rows
-- are only ever added), and the canonical indexes follow the new expression.

-- door_allows: the questions the user said are two-way although the classifier read them
-- as one-way (`plantune doors allow ID --source plan-tune|inline-user`), one row per
-- canonical id while the allow stands; `plantune doors allow --undo ID` removes it. Only
-- the classifier's readings can be allowed (its keyword rules, an unreadable language,
-- the id's own words, a recorded question read again): a registry one-way id, a logged
-- door_type one-way and a pacing finding the agent called one-way never can. An allow
-- covers what was recorded up to it (question_log rows up to up_to_event): the same text
-- asked again is two-way, a new text the classifier reads as one-way is asked.
CREATE TABLE door_allows (
    canonical_id TEXT PRIMARY KEY,
    question_id TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('plan-tune', 'inline-user')),
    reason TEXT,
    allowed_at TEXT NOT NULL,
    up_to_event INTEGER NOT NULL DEFAULT 0,
    developer TEXT NOT NULL DEFAULT ''
) STRICT;

-- door_allow_events: every allow and every undo, append-only: the audit trail of
-- door_allows. readings: what the classifier had read as one-way when it was allowed.
CREATE TABLE door_allow_events (
    id INTEGER PRIMARY KEY,
    ts TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('allow', 'undo')),
    canonical_id TEXT NOT NULL,
    question_id TEXT NOT NULL,
    source TEXT NOT NULL,
    reason TEXT,
    readings TEXT,
    developer TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX door_allow_events_id ON door_allow_events (canonical_id, id);

DROP TRIGGER door_knowledge_logged;
CREATE TRIGGER door_knowledge_logged AFTER INSERT ON question_log
WHEN NEW.synthetic = 0 AND (NEW.door_type IS 'one-way' OR NEW.door_class IS 'one-way')
BEGIN
    INSERT OR IGNORE INTO door_knowledge (canonical_id, source, question_id, evidence, learned_at)
    SELECT replace(replace(replace(replace(replace(replace(ltrim(rtrim(replace(replace(replace(lower(replace(replace(replace(replace(replace(replace(NEW.question_id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), '')), char(95), '-'), char(32), '-'), char(9), '-'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-.,;:!?'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), s.source, NEW.question_id, 'question_log:' || NEW.id,
           NEW.recorded_at
    FROM (SELECT 'logged' AS source WHERE NEW.door_type IS 'one-way'
          UNION ALL SELECT 'classified' WHERE NEW.door_class IS 'one-way') AS s;
END;

DROP TRIGGER door_knowledge_logged_update;
CREATE TRIGGER door_knowledge_logged_update AFTER UPDATE OF door_type, door_class, question_id
ON question_log
WHEN NEW.synthetic = 0 AND (NEW.door_type IS 'one-way' OR NEW.door_class IS 'one-way')
BEGIN
    INSERT OR IGNORE INTO door_knowledge (canonical_id, source, question_id, evidence, learned_at)
    SELECT replace(replace(replace(replace(replace(replace(ltrim(rtrim(replace(replace(replace(lower(replace(replace(replace(replace(replace(replace(NEW.question_id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), '')), char(95), '-'), char(32), '-'), char(9), '-'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-.,;:!?'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), s.source, NEW.question_id, 'question_log:' || NEW.id,
           NEW.recorded_at
    FROM (SELECT 'logged' AS source WHERE NEW.door_type IS 'one-way'
          UNION ALL SELECT 'classified' WHERE NEW.door_class IS 'one-way') AS s;
END;

DROP TRIGGER door_knowledge_finding;
CREATE TRIGGER door_knowledge_finding AFTER INSERT ON findings
WHEN NEW.synthetic = 0 AND NEW.door_type = 'one-way'
BEGIN
    INSERT OR IGNORE INTO door_knowledge (canonical_id, source, question_id, evidence, learned_at)
    SELECT DISTINCT replace(replace(replace(replace(replace(replace(ltrim(rtrim(replace(replace(replace(lower(replace(replace(replace(replace(replace(replace(ids.qid, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), '')), char(95), '-'), char(32), '-'), char(9), '-'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-.,;:!?'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), 'finding', ids.qid, 'findings:' || NEW.id, NEW.created_at
    FROM (SELECT NEW.finding_id AS qid UNION ALL SELECT NEW.question_id) AS ids
    WHERE ids.qid IS NOT NULL AND ids.qid <> '';
END;

DROP TRIGGER door_knowledge_finding_update;
CREATE TRIGGER door_knowledge_finding_update AFTER UPDATE OF door_type ON findings
WHEN NEW.synthetic = 0 AND NEW.door_type = 'one-way'
BEGIN
    INSERT OR IGNORE INTO door_knowledge (canonical_id, source, question_id, evidence, learned_at)
    SELECT DISTINCT replace(replace(replace(replace(replace(replace(ltrim(rtrim(replace(replace(replace(lower(replace(replace(replace(replace(replace(replace(ids.qid, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), '')), char(95), '-'), char(32), '-'), char(9), '-'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-.,;:!?'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), 'finding', ids.qid, 'findings:' || NEW.id, NEW.updated_at
    FROM (SELECT NEW.finding_id AS qid UNION ALL SELECT NEW.question_id) AS ids
    WHERE ids.qid IS NOT NULL AND ids.qid <> '';
END;

-- Facts learned under the earlier canonical form, recorded under the new key as well.
INSERT OR IGNORE INTO door_knowledge (canonical_id, source, question_id, evidence, learned_at)
SELECT replace(replace(replace(replace(replace(replace(ltrim(rtrim(replace(replace(replace(lower(replace(replace(replace(replace(replace(replace(question_id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), '')), char(95), '-'), char(32), '-'), char(9), '-'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-.,;:!?'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), source, question_id, evidence, learned_at
FROM door_knowledge;

DROP INDEX registry_questions_canonical;
CREATE INDEX registry_questions_canonical ON registry_questions (replace(replace(replace(replace(replace(replace(ltrim(rtrim(replace(replace(replace(lower(replace(replace(replace(replace(replace(replace(id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), '')), char(95), '-'), char(32), '-'), char(9), '-'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-.,;:!?'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'));
DROP INDEX question_log_auto_canonical;
CREATE INDEX question_log_auto_canonical ON question_log (replace(replace(replace(replace(replace(replace(ltrim(rtrim(replace(replace(replace(lower(replace(replace(replace(replace(replace(replace(question_id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), '')), char(95), '-'), char(32), '-'), char(9), '-'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-.,;:!?'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'))
    WHERE source = 'auto-decided';
