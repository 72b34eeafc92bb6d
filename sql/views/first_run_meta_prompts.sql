-- first_run_meta_prompts: the pacing design's first-run figure. Per project and developer
-- (simulated rows apart), the one-time prompts of the registry (every preamble-* question,
-- gstack-upgrade-inline, plan-tune-enable-setup; the same list as toolkit.core.vocabulary)
-- a person was asked before the first real skill question, when that first question came,
-- and how many meta-prompts were asked in all. The design asks for at most one (the lake
-- intro) before a new user's first real skill run. Asked means answered by a person
-- (sources agent, hook, transcript-import); auto-decided rows were never shown.
CREATE VIEW first_run_meta_prompts AS
WITH asked AS (
    SELECT
        project,
        developer,
        synthetic,
        ts,
        question_id,
        (question_id LIKE 'preamble-%'
         OR question_id IN ('gstack-upgrade-inline', 'plan-tune-enable-setup')) AS meta
    FROM question_log
    WHERE source IN ('agent', 'hook', 'transcript-import')
),
firsts AS (
    SELECT project, developer, synthetic, min(CASE WHEN NOT meta THEN ts END) AS first_skill_ts
    FROM asked
    GROUP BY project, developer, synthetic
)
SELECT
    f.project,
    f.developer,
    f.synthetic,
    f.first_skill_ts,
    (SELECT count(*) FROM asked a
      WHERE a.project = f.project AND a.developer = f.developer AND a.synthetic = f.synthetic
        AND a.meta AND (f.first_skill_ts IS NULL OR a.ts < f.first_skill_ts))
        AS meta_prompts_before_first_skill,
    (SELECT group_concat(question_id, ',') FROM (
        SELECT a.question_id FROM asked a
         WHERE a.project = f.project AND a.developer = f.developer AND a.synthetic = f.synthetic
           AND a.meta AND (f.first_skill_ts IS NULL OR a.ts < f.first_skill_ts)
         ORDER BY a.ts)) AS meta_prompts,
    (SELECT count(*) FROM asked a
      WHERE a.project = f.project AND a.developer = f.developer AND a.synthetic = f.synthetic
        AND a.meta) AS meta_prompts_total
FROM firsts f;
