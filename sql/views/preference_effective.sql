-- preference_effective: the preference actually in force for each project and question.
-- A project's own preference beats the global one ('__global__' scope); came_from says
-- which one applies and shadowed_global shows a global value the project overrides. Rows
-- with project '__global__' are the defaults for projects without their own row. effect
-- is what happens when the agent is about to ask: AUTO_DECIDE for never-ask and
-- ask-only-for-one-way, except that one-way doors (registry) and split-chain ids
-- (containing '-split-') are always asked (ASK_NORMALLY); inert marks a preference that a
-- one-way door makes do nothing. Projects are those with logged questions or preferences.
-- Like `plantune check`, it ignores simulated preferences (synthetic = 1) unless the
-- database is a demo database; synthetic says whether the preference in force is one.
CREATE VIEW preference_effective AS
WITH prefs AS (
    SELECT * FROM preferences
    WHERE synthetic = 0
       OR EXISTS (SELECT 1 FROM plantune_meta WHERE key = 'demo-database' AND value = '1')
),
projects AS (
    SELECT project FROM rollup_day
    UNION
    SELECT scope FROM prefs WHERE scope != '__global__'
),
pairs AS (
    SELECT scope AS project, question_id FROM prefs
    UNION
    SELECT p.project, g.question_id
    FROM projects AS p CROSS JOIN prefs AS g
    WHERE g.scope = '__global__'
),
chosen AS (
    SELECT
        pairs.project,
        pairs.question_id,
        own.scope IS NOT NULL AS has_own,
        coalesce(own.preference, g.preference) AS preference,
        coalesce(own.raw_value, g.raw_value) AS raw_value,
        coalesce(own.source, g.source) AS source,
        coalesce(own.updated_at, g.updated_at) AS updated_at,
        iif(own.scope IS NOT NULL AND pairs.project != '__global__', g.preference, NULL) AS shadowed_global,
        CAST(coalesce(own.synthetic, g.synthetic) AS INTEGER) AS synthetic
    FROM pairs
    LEFT JOIN prefs AS own ON own.scope = pairs.project AND own.question_id = pairs.question_id
    LEFT JOIN prefs AS g ON g.scope = '__global__' AND g.question_id = pairs.question_id
)
SELECT
    c.project,
    c.question_id,
    c.preference,
    c.raw_value,
    iif(c.has_own AND c.project != '__global__', 'project', 'global') AS came_from,
    c.shadowed_global,
    c.source,
    c.updated_at,
    r.door_type,
    CASE
        WHEN r.door_type = 'one-way' THEN 'ASK_NORMALLY'
        WHEN instr(c.question_id, '-split-') > 0 THEN 'ASK_NORMALLY'
        WHEN c.preference IN ('never-ask', 'ask-only-for-one-way') THEN 'AUTO_DECIDE'
        ELSE 'ASK_NORMALLY'
    END AS effect,
    (r.door_type IS 'one-way' AND c.preference IN ('never-ask', 'ask-only-for-one-way')) AS inert,
    c.synthetic
FROM chosen AS c
LEFT JOIN registry_questions AS r ON r.id = c.question_id;
