-- recent_auto_decisions: the questions the agent answered for the user from a never-ask
-- (or ask-only-for-one-way) preference in the 30 days up to the newest auto-decision,
-- with the answer it chose and the recommendation it followed. Datasette shows the newest
-- first; the /plantune "recent auto-decisions" listing is its ten newest rows. Older ones
-- stay in question_log (source = 'auto-decided'). synthetic is 1 for simulated ones.
-- The window is counted back from the newest auto-decision rather than from today, so a
-- history imported later still shows its last month. INDEXED BY pins the small partial
-- index of auto-decided events, which starts with ts: the newest one is its last entry
-- and the window is a range of it, so facet counts never touch the full log.
CREATE VIEW recent_auto_decisions AS
SELECT
    id,
    ts,
    project,
    session_id,
    phase,
    question_id,
    skill,
    question_summary,
    user_choice,
    recommended,
    tool_use_id,
    synthetic
FROM question_log INDEXED BY question_log_auto_decided
WHERE source = 'auto-decided'
  AND ts >= (SELECT strftime('%Y-%m-%dT%H:%M:%fZ', max(ts), '-30 days')
             FROM question_log INDEXED BY question_log_auto_decided
             WHERE source = 'auto-decided');
