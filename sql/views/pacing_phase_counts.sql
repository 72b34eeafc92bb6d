-- Interruptions per session and phase: how many findings each review phase ranked, how
-- many reached the user (and why: one-way door, approval/migration gate, rank, flip),
-- how many became Silent Decisions, how many of those were flipped, and how many
-- surfaced questions already have the user's answer in the question log.
CREATE VIEW pacing_phase_counts AS
SELECT
    project,
    session_id,
    chain_id,
    phase,
    synthetic,
    count(*) AS findings,
    sum(disposition = 'surfaced') AS surfaced,
    sum(surface_reason = 'one-way') AS surfaced_one_way,
    sum(surface_reason = 'gate') AS surfaced_gate,
    sum(surface_reason = 'rank') AS surfaced_rank,
    sum(surface_reason = 'flip') AS surfaced_flip,
    sum(disposition = 'silent') AS silent,
    sum(flipped) AS flipped,
    sum(disposition = 'surfaced' AND answer_event_id IS NOT NULL) AS answered,
    min(created_at) AS ranked_at
FROM pacing_decisions
GROUP BY project, session_id, chain_id, phase, synthetic;
