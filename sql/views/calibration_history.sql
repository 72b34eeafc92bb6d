-- calibration_history: every change to which calibration ranks a scope's findings, oldest
-- first. One row per event: a calibration stored by `plantune calibrate` ('fitted'),
-- pinned by `plantune calibrations use ID` ('pinned') or released by `calibrations use
-- --latest` ('unpinned'), with the scope (a project, or '__global__'), the calibration
-- and the one in force before (for pins), and the calibration's threshold, achieved rate
-- with its 95% interval, and whether it was fitted on simulated findings (synthetic) or
-- stored with --force below the confidence guard (low_confidence).
CREATE VIEW calibration_history AS
SELECT
    e.id,
    e.ts,
    e.scope,
    e.event_type,
    e.calibration_id,
    e.previous_id,
    c.threshold,
    c.tie_fraction,
    c.achieved_rate,
    c.ci_low,
    c.ci_high,
    c.n_findings,
    c.n_sessions,
    c.low_confidence,
    e.synthetic,
    e.detail
FROM calibration_events AS e
LEFT JOIN calibrations AS c ON c.id = e.calibration_id;
