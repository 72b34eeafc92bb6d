-- run_questions: every agent run (trace run) beside the questions asked in its session.
--
-- A run is one session end (Claude Code SessionEnd/Stop, or `plantune guidance run`), so
-- it is linked to the question log through its session id; session ids are unique across
-- projects, so the project is not part of the join. One row per (run, question event);
-- runs of a session without questions have no rows. `before_run` is 1 when the question
-- was logged at or before the run's end (a Stop hook fires after every turn, so later
-- runs of one session also see the earlier questions), `auto_decided` marks events the
-- agent decided from a never-ask preference, and `user_answered` marks the sources whose
-- answer came from the user (the only ones guidance proposals may learn from).
-- CROSS JOIN keeps the runs as the outer loop: each run reads its own session's events
-- through the session index, never the whole log (a facet grouped by a log column would
-- otherwise scan the log in that column's order and look up a run for every event).
CREATE VIEW run_questions AS
SELECT
    t.run_id,
    t.project AS run_project,
    t.session_id,
    t.created_at AS run_created_at,
    t.guidance_mode,
    q.id AS event_id,
    q.project,
    q.ts,
    q.phase,
    q.skill,
    q.question_id,
    q.question_summary,
    q.door_type,
    q.door_class,
    q.user_choice,
    q.recommended,
    q.followed_recommendation,
    q.source,
    q.synthetic,
    CASE WHEN q.ts <= t.created_at THEN 1 ELSE 0 END AS before_run,
    CASE WHEN q.source = 'auto-decided' THEN 1 ELSE 0 END AS auto_decided,
    CASE WHEN q.source IN ('agent', 'hook', 'auq-other', 'transcript-import')
              AND q.user_choice NOT IN ('__unknown__', '__cancelled__') THEN 1 ELSE 0 END AS user_answered
FROM trace_runs AS t
CROSS JOIN question_log AS q ON q.session_id = t.session_id
WHERE t.session_id IS NOT NULL;
