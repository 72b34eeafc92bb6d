-- one_way_audit: the safety audit. Every auto-decision (a `check` the agent then logged,
-- the pre-tool-use hook, a pacing Silent Decision, a never-ask set by guidance) on a
-- question that is one-way by any source: the live registry, any recorded fact in
-- door_knowledge (a logged door_type, plantune's classification of any event of the
-- question, a one-way pacing finding, a summary read again with newer rules), or the row's
-- own door_class / door_type. Ids match in their canonical form (case, surrounding
-- whitespace, '_' vs '-', runs of '-', trailing punctuation). A fact learned after the decision still flags it. One-way doors
-- must always be asked, so this view must be empty: any row is a safety bug to report
-- (`plantune doors audit` exits 1). flagged_by names the sources (registry, classifier
-- and logged for the row itself, recorded-<source> for facts from other records, e.g.
-- recorded-finding for a one-way pacing finding of the same question); decided_by says which
-- path decided (pacing: a finding links the event; hook: the event has a tool_use_id;
-- check: the rest). Each half reads a small partial index of auto-decided rows (the
-- canonical half looks up only the one-way ids in it). synthetic marks simulated events.
CREATE VIEW one_way_audit AS
WITH flagged AS (
    SELECT q.id
    FROM question_log AS q INDEXED BY question_log_auto_one_way
    WHERE q.source = 'auto-decided' AND (q.door_class IS 'one-way' OR q.door_type IS 'one-way')
    UNION
    SELECT q.id
    FROM question_log AS q INDEXED BY question_log_auto_canonical
    WHERE q.source = 'auto-decided' AND replace(replace(replace(replace(replace(replace(ltrim(rtrim(replace(replace(replace(lower(replace(replace(replace(replace(replace(replace(q.question_id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), '')), char(95), '-'), char(32), '-'), char(9), '-'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-.,;:!?'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-') IN (
        SELECT canonical_id FROM door_knowledge
        UNION
        SELECT replace(replace(replace(replace(replace(replace(ltrim(rtrim(replace(replace(replace(lower(replace(replace(replace(replace(replace(replace(id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), '')), char(95), '-'), char(32), '-'), char(9), '-'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-.,;:!?'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-') FROM registry_questions WHERE door_type = 'one-way')
)
SELECT
    q.id,
    q.ts,
    q.project,
    q.session_id,
    q.phase,
    q.question_id,
    q.question_summary,
    q.user_choice,
    r.door_type AS registry_door_type,
    q.door_class,
    q.door_reason,
    q.door_type AS logged_door_type,
    CASE
        WHEN EXISTS (SELECT 1 FROM findings AS f WHERE f.answer_event_id = q.id) THEN 'pacing'
        WHEN q.tool_use_id IS NOT NULL THEN 'hook'
        ELSE 'check'
    END AS decided_by,
    substr(
        iif(r.door_type IS 'one-way', ',registry', '')
        || iif(q.door_class IS 'one-way', ',classifier', '')
        || iif(q.door_type IS 'one-way', ',logged', '')
        || coalesce((SELECT ',' || group_concat(DISTINCT 'recorded-' || k.source)
                     FROM door_knowledge AS k
                     WHERE k.canonical_id = replace(replace(replace(replace(replace(replace(ltrim(rtrim(replace(replace(replace(lower(replace(replace(replace(replace(replace(replace(q.question_id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), '')), char(95), '-'), char(32), '-'), char(9), '-'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-.,;:!?'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-')
                       AND NOT (k.evidence IS 'question_log:' || q.id
                                AND k.source IN ('logged', 'classified'))), ''),
        2) AS flagged_by,
    q.synthetic
FROM flagged
JOIN question_log AS q ON q.id = flagged.id
LEFT JOIN registry_questions AS r ON r.id = (
    SELECT r2.id FROM registry_questions AS r2
    WHERE replace(replace(replace(replace(replace(replace(ltrim(rtrim(replace(replace(replace(lower(replace(replace(replace(replace(replace(replace(r2.id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), '')), char(95), '-'), char(32), '-'), char(9), '-'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-.,;:!?'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-') = replace(replace(replace(replace(replace(replace(ltrim(rtrim(replace(replace(replace(lower(replace(replace(replace(replace(replace(replace(q.question_id, char(8203), ''), char(8204), ''), char(8205), ''), char(8288), ''), char(65279), ''), char(173), '')), char(95), '-'), char(32), '-'), char(9), '-'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-.,;:!?'), char(32, 9, 10, 13, 11, 12, 160, 8199, 8239, 12288) || '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-'), '--', '-')
    ORDER BY r2.door_type = 'two-way' LIMIT 1);
