-- question_events: the question log as analysts read it. One row per question asked or
-- auto-decided, with its day, the door type plantune classified it as (falling back to the
-- caller's, then the registry's), whether a person answered it (not the auto-decider, not a
-- question cancelled with Esc) and whether that answer overrode the recommendation (NULL when unknown). Notebook 01 reads it
-- for events per day, phase and skill, override rates, door types and the diversity gate.
-- The registry is looked up per row shown rather than joined, so counting the view or
-- faceting it on the log's own columns reads only the log (or one of its indexes).
-- choice_key is the registry option key of the choice for every row that has one: hook
-- rows, answered or auto-decided, store it as user_choice (the label in extra_json);
-- auto-decided rows recorded before that kept gstack's label there and the key in
-- extra_json (user_choice_key).
CREATE VIEW question_events AS
SELECT
    q.id,
    q.project,
    q.ts,
    substr(q.ts, 1, 10) AS day,
    q.skill,
    q.question_id,
    q.category,
    coalesce(q.door_class, q.door_type,
             (SELECT r.door_type FROM registry_questions AS r WHERE r.id = q.question_id)) AS door,
    q.door_reason,
    q.phase,
    q.source,
    q.session_id,
    q.user_choice,
    CASE WHEN q.source = 'auto-decided' AND json_type(q.extra_json, '$.user_choice_key') = 'text'
         THEN json_extract(q.extra_json, '$.user_choice_key')
         ELSE q.user_choice END AS choice_key,
    q.recommended,
    q.followed_recommendation,
    CASE WHEN q.source != 'auto-decided' AND q.user_choice != '__cancelled__' THEN 1 ELSE 0 END
        AS answered,
    CASE q.followed_recommendation WHEN 0 THEN 1 WHEN 1 THEN 0 END AS overridden,
    EXISTS (SELECT 1 FROM registry_questions AS r WHERE r.id = q.question_id) AS registered,
    q.synthetic
FROM question_log AS q;
