-- recent_auto_decisions: every question the agent answered for the user from a never-ask
-- (or ask-only-for-one-way) preference, with the answer it chose and the recommendation it
-- followed. Datasette shows the newest first; the /plantune "recent auto-decisions"
-- listing is its ten newest rows. INDEXED BY pins the small partial index of auto-decided
-- events: without table statistics SQLite would otherwise pick a full-log index for
-- facet counts and take seconds on a large log.
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
    tool_use_id
FROM question_log INDEXED BY question_log_auto_decided
WHERE source = 'auto-decided';
