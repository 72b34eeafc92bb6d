-- 0017_calibration_guarantee: a calibration fitted with `plantune calibrate --max-miss E
-- --confidence C` keeps its promise beside its threshold: at most max_miss of the two-way
-- decisions the user overrides are silenced, with confidence miss_confidence, and the
-- upper bound of the miss rate measured on the history it was fitted on. All three are
-- NULL for a calibration fitted to a plain target; the method and the figures at the plain
-- target stay in details_json (key "guarantee").
ALTER TABLE calibrations ADD COLUMN max_miss REAL CHECK (max_miss > 0 AND max_miss < 1);
ALTER TABLE calibrations ADD COLUMN miss_confidence REAL
    CHECK (miss_confidence > 0 AND miss_confidence < 1);
ALTER TABLE calibrations ADD COLUMN miss_upper_bound REAL
    CHECK (miss_upper_bound BETWEEN 0 AND 1);

-- Interruption replay: the newest `plantune report interruptions` run, one row per session
-- of the question log: questions asked as logged, the one-way doors and gates among them,
-- how many pacing with the calibration in force would ask (one-way and gates always,
-- two-way ones reaching the threshold at most 3 per phase and within the chain's budget),
-- the rest it would decide silently, and whether the session is non-trivial (questions in
-- two review phases, or ten questions). Replaced whole on every run; the session_pacing
-- view reads it for Datasette.
CREATE TABLE interruption_replay (
    project TEXT NOT NULL,
    session_id TEXT NOT NULL,
    first_ts TEXT NOT NULL,
    logged INTEGER NOT NULL CHECK (logged > 0),
    one_way INTEGER NOT NULL CHECK (one_way >= 0),
    gates INTEGER NOT NULL CHECK (gates >= 0),
    paced INTEGER NOT NULL CHECK (paced BETWEEN one_way AND logged),
    silent INTEGER NOT NULL CHECK (silent >= 0),
    non_trivial INTEGER NOT NULL CHECK (non_trivial IN (0, 1)),
    phases TEXT NOT NULL,
    calibration_id INTEGER,
    computed_at TEXT NOT NULL,
    PRIMARY KEY (project, session_id)
) STRICT;
