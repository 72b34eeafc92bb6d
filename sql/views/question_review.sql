-- question_review: every question id seen in a project, most asked first (the /plan-tune
-- "review" listing). One row per project and question id: how many events, how many the
-- user answered and how many were auto-decided, the skill (the registry's, else the skill
-- of the first event), the last summary and answer, how often the recommendation was
-- followed or overridden and the override rate among those, how many different answers the
-- user gave, the door type (the live registry's, else one-way when any event was
-- classified one-way when recorded), and whether the id is registered, ad-hoc
-- ({skill}-{slug}) or unmarked (hook-<hash>, the hooks' id for questions without a marker). Simulated events
-- (synthetic = 1) are reviewed in rows of their own.
CREATE VIEW question_review AS
SELECT
    q.project,
    q.question_id,
    q.synthetic,
    coalesce(r.skill, first_event.skill) AS skill,
    q.events,
    q.events - q.auto_decided AS answered,
    q.auto_decided,
    last_event.question_summary AS last_summary,
    last_event.user_choice AS last_choice,
    q.followed,
    q.overridden,
    round(1.0 * q.overridden / nullif(q.followed + q.overridden, 0), 3) AS override_rate,
    (SELECT count(*) FROM rollup_choice c
     WHERE c.project = q.project AND c.question_id = q.question_id AND c.synthetic = q.synthetic) AS distinct_choices,
    coalesce(r.door_type, iif(q.one_way > 0, 'one-way', 'two-way')) AS door_type,
    CASE
        WHEN r.id IS NOT NULL THEN 'registered'
        WHEN q.question_id GLOB 'hook-*' THEN 'unmarked'
        ELSE 'ad-hoc'
    END AS registration,
    q.first_ts,
    q.last_ts
FROM rollup_question AS q
LEFT JOIN registry_questions AS r ON r.id = q.question_id
LEFT JOIN question_log AS first_event ON first_event.id = q.first_event_id
LEFT JOIN question_log AS last_event ON last_event.id = q.last_event_id;
