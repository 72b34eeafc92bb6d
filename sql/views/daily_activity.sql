-- daily_activity: questions per UTC day and project, for charts of activity over time.
-- One row per day and project: questions recorded, how many reached the user (asked) and
-- how many were auto-decided, one-way doors (as classified when recorded), followed and
-- overridden recommendations, and unmarked hook-<hash> questions. The day is the first
-- ten characters of the event's UTC timestamp. Simulated events (synthetic = 1) are
-- counted in rows of their own.
CREATE VIEW daily_activity AS
SELECT
    day,
    project,
    synthetic,
    sum(events) AS questions,
    sum(events) - sum(iif(source = 'auto-decided', events, 0)) AS asked,
    sum(iif(source = 'auto-decided', events, 0)) AS auto_decided,
    sum(one_way) AS one_way,
    sum(followed) AS followed,
    sum(overridden) AS overridden,
    sum(unmarked) AS unmarked
FROM rollup_day
GROUP BY project, day, synthetic;
