-- question_events: the question log as analysts read it. One row per question asked or
-- auto-decided, with its day, the door type plantune classified it as (falling back to the
-- caller's, then the registry's), whether a person answered it (not the auto-decider) and
-- whether that answer overrode the recommendation (NULL when unknown). Notebook 01 reads it
-- for events per day, phase and skill, override rates, door types and the diversity gate.
CREATE VIEW question_events AS
SELECT
    q.id,
    q.project,
    q.ts,
    substr(q.ts, 1, 10) AS day,
    q.skill,
    q.question_id,
    q.category,
    coalesce(q.door_class, q.door_type, r.door_type) AS door,
    q.door_reason,
    q.phase,
    q.source,
    q.session_id,
    q.user_choice,
    q.recommended,
    q.followed_recommendation,
    CASE WHEN q.source != 'auto-decided' THEN 1 ELSE 0 END AS answered,
    CASE q.followed_recommendation WHEN 0 THEN 1 WHEN 1 THEN 0 END AS overridden,
    CASE WHEN r.id IS NULL THEN 0 ELSE 1 END AS registered,
    q.synthetic
FROM question_log q
LEFT JOIN registry_questions r ON r.id = q.question_id;
