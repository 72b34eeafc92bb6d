-- 0013_team_provenance: whose row is whose, and where merged rows came from.
--
-- Every event, finding, preference and calibration row carries the developer it belongs
-- to: the writer's identity ($PLANTUNE_DEVELOPER, else the git user email), resolved once
-- per process. Rows written before this migration keep '' ("not recorded"); `plantune
-- merge --developer NAME` and exports name them. All changes are additive: new columns
-- with constant defaults (no table rewrite) and new tables.
ALTER TABLE question_log ADD COLUMN developer TEXT NOT NULL DEFAULT '';
ALTER TABLE preference_events ADD COLUMN developer TEXT NOT NULL DEFAULT '';
ALTER TABLE preferences ADD COLUMN developer TEXT NOT NULL DEFAULT '';
ALTER TABLE findings ADD COLUMN developer TEXT NOT NULL DEFAULT '';
ALTER TABLE calibrations ADD COLUMN developer TEXT NOT NULL DEFAULT '';

-- Provenance of merged rows: the merge source (merge_sources.id) a row was copied from,
-- NULL for rows written here. Calibrations have no natural key, so a merged one also keeps
-- a deterministic key (source database id + its id there) that makes a re-merge add nothing.
ALTER TABLE question_log ADD COLUMN merged_from INTEGER;
ALTER TABLE preference_events ADD COLUMN merged_from INTEGER;
ALTER TABLE findings ADD COLUMN merged_from INTEGER;
ALTER TABLE calibrations ADD COLUMN merged_from INTEGER;
ALTER TABLE calibrations ADD COLUMN merge_key TEXT;
CREATE UNIQUE INDEX calibrations_merge_key ON calibrations (merge_key) WHERE merge_key IS NOT NULL;

-- A stable identity for this database file, so a team database can tell two sources
-- apart (and the same source merged twice) whatever their paths are.
INSERT OR IGNORE INTO plantune_meta (key, value) VALUES ('database_id', lower(hex(randomblob(16))));

-- Merge sources: one row per (source database, developer) merged into this one, with the
-- path it was read from and the counts of its last merge.
CREATE TABLE merge_sources (
    id INTEGER PRIMARY KEY,
    database_id TEXT NOT NULL,
    developer TEXT NOT NULL,
    path TEXT NOT NULL,
    first_merged_at TEXT NOT NULL,
    last_merged_at TEXT NOT NULL,
    counts_json TEXT NOT NULL DEFAULT '{}' CHECK (json_type(counts_json) = 'object'),
    UNIQUE (database_id, developer)
) STRICT;

-- Developer preferences: the preferences of every merged developer, side by side. They are
-- never folded into `preferences` (the preferences this database's own user acts on), and
-- never into one another: each developer keeps their own switch per question.
CREATE TABLE developer_preferences (
    developer TEXT NOT NULL,
    scope TEXT NOT NULL,
    question_id TEXT NOT NULL,
    preference TEXT NOT NULL
        CHECK (preference IN ('always-ask', 'never-ask', 'ask-only-for-one-way', 'unknown')),
    raw_value TEXT,
    source TEXT NOT NULL,
    free_text TEXT,
    synthetic INTEGER NOT NULL DEFAULT 0 CHECK (synthetic IN (0, 1)),
    updated_at TEXT NOT NULL,
    merged_from INTEGER NOT NULL REFERENCES merge_sources (id),
    PRIMARY KEY (developer, scope, question_id)
) STRICT;
