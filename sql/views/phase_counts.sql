-- phase_counts: how many questions each review phase put to the user, per project and
-- session. One row per project, session and phase with the questions recorded, how many
-- reached the user (asked) and how many were auto-decided from a never-ask preference,
-- how many were one-way doors (as classified when recorded), how often the user followed
-- or overrode the recommendation, and the pacing decisions of the phase: findings
-- surfaced, findings kept silent, and surfaced-by-rank (the two-way findings that spent
-- the phase's interruption budget). Reads the rollup_phase totals, so it stays fast on
-- millions of events. synthetic is 1 for the totals of simulated rows (plantune simulate),
-- 0 for real ones: the two are never added together.
CREATE VIEW phase_counts AS
SELECT
    project,
    nullif(session_key, '') AS session_id,
    phase,
    synthetic,
    questions,
    questions - auto_decided AS asked,
    auto_decided,
    one_way,
    followed,
    overridden,
    surfaced AS findings_surfaced,
    silent AS findings_silent,
    ranked AS budget_spent,
    first_ts,
    last_ts
FROM rollup_phase;
