-- one_way_audit: the safety audit. Every auto-decided event whose question is a one-way
-- door: one-way in the live registry, classified one-way by plantune when it was recorded
-- (door_class), or logged as one-way by the caller (door_type). One-way doors must always
-- be asked, so this view must be empty: any row here is a safety bug to report.
-- flagged_by names the rules that caught it; synthetic marks simulated events. Each half reads a partial index holding only
-- auto-decided rows (the registry half walks the few one-way registry ids first: CROSS
-- JOIN fixes that order), so the audit stays instant on a clean log of any size.
CREATE VIEW one_way_audit AS
WITH flagged AS (
    SELECT q.id
    FROM question_log AS q INDEXED BY question_log_auto_one_way
    WHERE q.source = 'auto-decided' AND (q.door_class IS 'one-way' OR q.door_type IS 'one-way')
    UNION
    SELECT q.id
    FROM registry_questions AS r
    CROSS JOIN question_log AS q INDEXED BY question_log_auto_question
    WHERE r.door_type = 'one-way' AND q.question_id = r.id AND q.source = 'auto-decided'
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
    substr(
        iif(r.door_type IS 'one-way', ',registry', '')
        || iif(q.door_class IS 'one-way', ',classifier', '')
        || iif(q.door_type IS 'one-way', ',logged', ''),
        2) AS flagged_by,
    q.synthetic
FROM flagged
JOIN question_log AS q ON q.id = flagged.id
LEFT JOIN registry_questions AS r ON r.id = q.question_id;
