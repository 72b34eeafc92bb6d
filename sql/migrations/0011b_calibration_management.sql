-- 0011b_calibration_management: guarded, pinned and audited calibrations.
--
-- synthetic: 1 when the fit used simulated findings. Such a calibration never ranks real
-- findings (only a demo database uses it). Calibrations stored before this migration
-- with include_synthetic = 1 are marked synthetic: whether simulated findings were among
-- them is not known any more, and the safe side is to keep them out of real ranking.
ALTER TABLE calibrations ADD COLUMN synthetic INTEGER NOT NULL DEFAULT 0
    CHECK (synthetic IN (0, 1));
UPDATE calibrations SET synthetic = 1 WHERE include_synthetic = 1;
-- low_confidence: 1 when the 95% interval of the achieved rate was wider than the guard
-- allows and the user stored it anyway (calibrate --force).
ALTER TABLE calibrations ADD COLUMN low_confidence INTEGER NOT NULL DEFAULT 0
    CHECK (low_confidence IN (0, 1));

-- Pins: the calibration a scope (a project, or '__global__' for projects without their
-- own) is held to by `plantune calibrations use ID`, instead of its newest one. No row
-- means "the newest usable calibration" (`calibrations use --latest` deletes the row).
CREATE TABLE calibration_pins (
    scope TEXT PRIMARY KEY,
    calibration_id INTEGER NOT NULL REFERENCES calibrations (id),
    pinned_at TEXT NOT NULL
) STRICT;

-- Every change to which calibration is in force: a calibration stored ('fitted'), pinned
-- or unpinned. Append-only; the calibration_history view reads it.
CREATE TABLE calibration_events (
    id INTEGER PRIMARY KEY,
    ts TEXT NOT NULL,
    scope TEXT NOT NULL,
    event_type TEXT NOT NULL CHECK (event_type IN ('fitted', 'pinned', 'unpinned')),
    calibration_id INTEGER REFERENCES calibrations (id),
    previous_id INTEGER REFERENCES calibrations (id),
    synthetic INTEGER NOT NULL DEFAULT 0 CHECK (synthetic IN (0, 1)),
    detail TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX calibration_events_scope ON calibration_events (scope, ts);

-- Calibrations stored before now get their 'fitted' event, so the history is complete.
INSERT INTO calibration_events (ts, scope, event_type, calibration_id, synthetic, detail)
SELECT created_at, project, 'fitted', id, synthetic, 'stored before calibration events were kept'
FROM calibrations ORDER BY created_at, id;
