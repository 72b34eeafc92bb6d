-- source_stats: where the question log of each project came from. One row per project and
-- source (agent, hook, auq-other, auto-decided, codex-import-*, transcript-import, flip):
-- the events, their share of the project's events in percent, how many carry unmarked
-- hook-<hash> ids, the days with at least one event, and the first and last such day
-- (UTC). The /plan-tune "stats" figures (TOTAL_LOGGED, SOURCE_*) add up from these rows.
-- Simulated events (synthetic = 1) have rows and shares of their own.
CREATE VIEW source_stats AS
SELECT
    project,
    source,
    synthetic,
    sum(events) AS events,
    round(100.0 * sum(events) / sum(sum(events)) OVER (PARTITION BY project, synthetic), 1) AS share_pct,
    sum(unmarked) AS unmarked,
    count(*) AS days_active,
    min(day) AS first_day,
    max(day) AS last_day
FROM rollup_day
GROUP BY project, source, synthetic;
