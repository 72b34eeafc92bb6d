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
