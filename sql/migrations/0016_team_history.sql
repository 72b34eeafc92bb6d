-- 0016_team_history: the rest of a developer's history in a team database, and team fits.
--
-- Office-hours sessions, trace runs and guidance proposals say whose they are and which
-- merge source they came from, as events and findings do (0013). Rows written here keep
-- developer '' (this database's own user) and merged_from NULL.
ALTER TABLE office_hours_sessions ADD COLUMN developer TEXT NOT NULL DEFAULT '';
ALTER TABLE office_hours_sessions ADD COLUMN merged_from INTEGER;
ALTER TABLE trace_runs ADD COLUMN developer TEXT NOT NULL DEFAULT '';
ALTER TABLE trace_runs ADD COLUMN merged_from INTEGER;
ALTER TABLE guidance_proposals ADD COLUMN developer TEXT NOT NULL DEFAULT '';
ALTER TABLE guidance_proposals ADD COLUMN merged_from INTEGER;

-- Declared profiles of merged developers, side by side: like developer_preferences, what
-- one developer says about themselves is never folded into anyone else's profile, nor
-- into this database's own declared_profile.
CREATE TABLE developer_declared_profile (
    developer TEXT NOT NULL,
    scope TEXT NOT NULL,
    dimension TEXT NOT NULL CHECK (dimension IN
        ('scope_appetite', 'risk_tolerance', 'detail_preference', 'autonomy', 'architecture_care')),
    value REAL NOT NULL CHECK (value BETWEEN 0 AND 1),
    source TEXT NOT NULL,
    synthetic INTEGER NOT NULL DEFAULT 0 CHECK (synthetic IN (0, 1)),
    declared_at TEXT NOT NULL,
    merged_from INTEGER NOT NULL REFERENCES merge_sources (id),
    PRIMARY KEY (developer, scope, dimension)
) STRICT;

-- fitted_on: 'team' for a threshold fitted on a team dataset (`plantune team calibrate`),
-- 'own' for one fitted on this database's history. A team fit, like a calibration merged
-- from another developer's database, is listed and can be pinned with `calibrations use`,
-- but never becomes the calibration in force by being the newest.
ALTER TABLE calibrations ADD COLUMN fitted_on TEXT NOT NULL DEFAULT 'own'
    CHECK (fitted_on IN ('own', 'team'));
