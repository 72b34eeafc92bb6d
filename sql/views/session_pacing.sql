-- session_pacing: the pacing design's first acceptance figure per session, from the newest
-- `plantune report interruptions` run: questions asked as logged, the one-way ones among
-- them (pacing always asks those), the questions pacing with the calibration in force
-- would ask, the share that is of the logged ones (the design asks for at most 0.5), and
-- the Silent Decisions it would make instead. Empty until the report has run.
CREATE VIEW session_pacing AS
SELECT
    project,
    session_id,
    first_ts,
    substr(first_ts, 1, 10) AS day,
    logged,
    one_way,
    gates,
    paced,
    round(1.0 * paced / logged, 3) AS paced_ratio,
    paced * 2 <= logged AS within_design,
    silent,
    non_trivial,
    phases,
    calibration_id,
    computed_at
FROM interruption_replay;
