-- Every pacing decision with the question-log event that answers it.
--
-- A finding is linked to its answer by session + question id (+ phase, or an event
-- logged without one), so the writer of the answer (`plantune log`, gstack-question-log,
-- a hook) needs to know nothing about pacing. The newest matching event wins: for a
-- Silent Decision that is its auto-decided event or a later flip; for a surfaced finding
-- only an event other than auto-decided counts (the user's answer, or a flip), so a
-- decision flipped out of the block stays unanswered until the user answers it; a question
-- the user cancelled (Esc) answers nothing.
-- choice_in_force is what the agent should act on. A simulated finding (synthetic = 1)
-- is answered only by simulated events and a real one only by real events.
-- The answer's fields are looked up per row shown (not joined), so counting the view or
-- faceting it on a finding's own columns never looks for answers. The answer is found
-- through question_log_question, newest first, stopping at the first match (+session_id
-- keeps SQLite from reading and sorting the whole session instead).
CREATE VIEW pacing_decisions AS
SELECT
    d.*,
    (SELECT a.source FROM question_log AS a WHERE a.id = d.answer_event_id) AS answer_source,
    (SELECT a.user_choice FROM question_log AS a WHERE a.id = d.answer_event_id) AS answer_choice,
    (SELECT a.ts FROM question_log AS a WHERE a.id = d.answer_event_id) AS answered_at,
    COALESCE((SELECT a.user_choice FROM question_log AS a WHERE a.id = d.answer_event_id),
             d.choice) AS choice_in_force
FROM (
    SELECT
        f.id,
        f.project,
        f.session_id,
        f.chain_id,
        f.phase,
        f.finding_id,
        f.question_id,
        f.summary,
        f.kind,
        f.door_type,
        f.door_reason,
        f.severity,
        f.irreversibility,
        f.decision_matters,
        f.score,
        f.threshold,
        f.calibration_id,
        f.disposition,
        f.surface_reason,
        f.recommended,
        f.choice,
        f.flipped_at,
        f.flipped_at IS NOT NULL AS flipped,
        f.created_at,
        f.synthetic,
        (
            SELECT q.id FROM question_log q
            WHERE +q.session_id = f.session_id
              AND q.question_id = f.question_id
              AND (q.phase = f.phase OR q.phase = 'unknown')
              AND q.synthetic = f.synthetic
              AND (f.disposition = 'silent' OR q.source <> 'auto-decided')
              AND q.user_choice <> '__cancelled__'
            ORDER BY q.id DESC
            LIMIT 1
        ) AS answer_event_id
    FROM findings f
) d;
