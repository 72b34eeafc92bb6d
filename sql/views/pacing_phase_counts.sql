-- Interruptions per session and phase: how many findings each review phase ranked, how
-- many reached the user (and why: one-way door, approval/migration gate, rank, flip),
-- how many became Silent Decisions, how many of those were flipped, and how many
-- surfaced questions already have the user's answer in the question log.
-- Reads the rollup_pacing totals (kept by triggers on findings), so a page, its count and
-- its facets read summary rows; only `answered` looks at the question log, and only for
-- the rows shown. A per-reason column is NULL for a group where no finding has a reason.
CREATE VIEW pacing_phase_counts AS
SELECT
    p.project,
    p.session_id,
    p.chain_id,
    p.phase,
    p.synthetic,
    p.findings,
    p.surfaced,
    iif(p.reasons > 0, p.surfaced_one_way, NULL) AS surfaced_one_way,
    iif(p.reasons > 0, p.surfaced_gate, NULL) AS surfaced_gate,
    iif(p.reasons > 0, p.surfaced_rank, NULL) AS surfaced_rank,
    iif(p.reasons > 0, p.surfaced_flip, NULL) AS surfaced_flip,
    p.silent,
    p.flipped,
    (SELECT count(*) FROM pacing_decisions AS d
     WHERE d.session_id = p.session_id AND d.phase = p.phase AND d.project = p.project
       AND d.synthetic = p.synthetic AND d.chain_id = p.chain_id
       AND d.disposition = 'surfaced' AND d.answer_event_id IS NOT NULL) AS answered,
    p.ranked_at
FROM rollup_pacing AS p;
