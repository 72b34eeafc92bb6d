-- session_interruptions: how often each agent session interrupted the user. One row per
-- project and session: questions shown to the user (auto-decided ones excluded), how many
-- were auto-decided instead, one-way doors among them (as classified when recorded),
-- findings surfaced and kept silent by pacing, the first and last activity, the duration
-- in minutes between them, and the review phases seen (in review order: ceo, design, eng,
-- dx, other, unknown). Events without a session id are grouped in one row per project
-- with an empty session_id. Reads the rollup_session totals; simulated rows (synthetic = 1) are
-- counted in rows of their own.
CREATE VIEW session_interruptions AS
SELECT
    project,
    nullif(session_key, '') AS session_id,
    synthetic,
    shown,
    auto_decided,
    one_way,
    findings_surfaced,
    findings_silent,
    first_ts,
    last_ts,
    round((julianday(last_ts) - julianday(first_ts)) * 1440, 1) AS duration_minutes,
    phase_count,
    phases
FROM rollup_session;
