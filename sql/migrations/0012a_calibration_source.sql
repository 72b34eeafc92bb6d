-- 0012a_calibration_source: where a calibration's history came from.
--
-- A calibration is fitted either on recorded pacing findings or on the question log
-- (answered two-way questions scored by the question-log scorer). Both give a threshold
-- on the same score scale, so `pacing rank` applies either one to findings; the source
-- says which evidence stands behind it.
ALTER TABLE calibrations ADD COLUMN source TEXT NOT NULL DEFAULT 'findings'
    CHECK (source IN ('findings', 'question-log'));
