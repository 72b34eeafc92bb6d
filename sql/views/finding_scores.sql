-- finding_scores: every finding a review phase ranked, with its three factors, the additive
-- score, its door type and kind, what pacing decided, and what the user did about it. The
-- answer is the question-log event the finding links to (the latest one: an answer, an
-- auto-decision or a flip). `overridden` is 1 when the choice in force is not the
-- recommended one (the user answered differently or flipped a silent decision);
-- `answered` is 1 when a person made the decision rather than the auto-decider.
-- `plantune calibrate` and notebook 02 fit the surfacing threshold on this view.
-- The answer's fields are looked up per row shown (not joined), so counting the view or
-- faceting it on a finding's own columns reads only findings (or one of its indexes).
CREATE VIEW finding_scores AS
SELECT
    f.id,
    f.project,
    f.session_id,
    f.chain_id,
    f.phase,
    f.finding_id,
    (SELECT q.question_id FROM question_log AS q WHERE q.id = f.answer_event_id) AS question_id,
    (SELECT q.skill FROM question_log AS q WHERE q.id = f.answer_event_id) AS skill,
    f.summary,
    f.severity,
    f.irreversibility,
    f.decision_matters,
    f.severity + f.irreversibility + f.decision_matters AS additive_score,
    f.score AS score_at_decision,
    f.threshold AS threshold_at_decision,
    f.calibration_id,
    f.door_type,
    f.door_reason,
    f.kind,
    f.disposition,
    f.surface_reason,
    f.recommended,
    f.choice,
    (SELECT q.source FROM question_log AS q WHERE q.id = f.answer_event_id) AS answer_source,
    (SELECT q.followed_recommendation FROM question_log AS q WHERE q.id = f.answer_event_id)
        AS followed_recommendation,
    CASE
        WHEN f.flipped_at IS NOT NULL OR (SELECT q.followed_recommendation = 0 FROM question_log AS q
                                          WHERE q.id = f.answer_event_id) THEN 1
        WHEN f.choice IS NOT NULL AND f.recommended IS NOT NULL AND f.choice != f.recommended THEN 1
        ELSE 0
    END AS overridden,
    coalesce((SELECT q.source != 'auto-decided' FROM question_log AS q WHERE q.id = f.answer_event_id),
             0) AS answered,
    f.flipped_at,
    f.synthetic,
    f.created_at,
    substr(f.created_at, 1, 10) AS day
FROM findings AS f;
