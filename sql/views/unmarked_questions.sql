-- unmarked_questions: questions the hooks saw without a <gstack-qid:...> marker, so they
-- were logged under a hook-<hash> id and no preference can ever apply to them. Most
-- frequent first: these are the candidates for promotion into the registry (the
-- /plan-tune "audit unmarked" listing shows the first ten). One row per project and id,
-- with the last summary and answer seen; simulated events (synthetic = 1) apart.
CREATE VIEW unmarked_questions AS
SELECT
    q.project,
    q.question_id,
    q.synthetic,
    q.events,
    last_event.question_summary AS last_summary,
    last_event.user_choice AS last_choice,
    q.first_ts,
    q.last_ts
FROM rollup_question AS q
LEFT JOIN question_log AS last_event ON last_event.id = q.last_event_id
WHERE q.question_id GLOB 'hook-*'
ORDER BY q.events DESC, q.project, q.question_id;
