-- 0001_core: the core tables of plantune.
--
-- Every table is STRICT and every enum is a CHECK constraint, so the database itself
-- refuses a bad row whichever writer (hook, compat command, importer, notebook) sends it.
-- Times are UTC ISO-8601 text. JSON payloads live in *_json columns. Every row that
-- belongs to a project carries its slug in `project`; the reserved scope '__global__'
-- stands for "all projects" where a value is not tied to one.

-- Small key/value facts about the database itself (signal map version, seed state).
CREATE TABLE plantune_meta (
    key TEXT PRIMARY KEY,
    value TEXT
) STRICT;

-- The question registry: one row per registered AskUserQuestion id. Loaded from the
-- bundled copy on first open and replaced by `plantune registry sync`. The door type
-- here is what makes a question a one-way door for every safety check.
CREATE TABLE registry_questions (
    id TEXT PRIMARY KEY CHECK (id GLOB '[a-z0-9]*' AND length(id) <= 64),
    skill TEXT NOT NULL,
    category TEXT NOT NULL
        CHECK (category IN ('approval', 'clarification', 'routing', 'cherry-pick', 'feedback-loop')),
    door_type TEXT NOT NULL CHECK (door_type IN ('one-way', 'two-way')),
    options_json TEXT CHECK (options_json IS NULL OR json_type(options_json) = 'array'),
    signal_key TEXT,
    description TEXT NOT NULL DEFAULT '',
    origin TEXT NOT NULL DEFAULT 'bundled',
    updated_at TEXT NOT NULL
) STRICT;

-- The hand-made signal map: which answer to which signal_key moves which profile
-- dimension, and by how much. A question moves the profile only through this table.
CREATE TABLE signal_map (
    signal_key TEXT NOT NULL,
    user_choice TEXT NOT NULL,
    dimension TEXT NOT NULL CHECK (dimension IN
        ('scope_appetite', 'risk_tolerance', 'detail_preference', 'autonomy', 'architecture_care')),
    delta REAL NOT NULL,
    PRIMARY KEY (signal_key, user_choice, dimension)
) STRICT;

-- The question log: one row per question asked (or auto-decided) by an agent. It holds
-- every field of gstack's question-log.jsonl record, plus the project, the review phase,
-- the position of the question inside a multi-question call, a deterministic event key
-- (so importing the same line twice adds nothing), the unknown fields as JSON and where
-- the row came from. raw_json is the record exactly as gstack would have written it.
-- Writers other than gstack's (pacing, flips, transcript import) use the extra sources.
CREATE TABLE question_log (
    id INTEGER PRIMARY KEY,
    event_key TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    ts TEXT NOT NULL,
    skill TEXT NOT NULL,
    question_id TEXT NOT NULL CHECK (length(question_id) BETWEEN 1 AND 64),
    question_summary TEXT NOT NULL,
    category TEXT CHECK (category IS NULL OR category IN
        ('approval', 'clarification', 'routing', 'cherry-pick', 'feedback-loop')),
    door_type TEXT CHECK (door_type IS NULL OR door_type IN ('one-way', 'two-way')),
    options_count INTEGER CHECK (options_count IS NULL OR options_count BETWEEN 1 AND 26),
    user_choice TEXT NOT NULL,
    recommended TEXT,
    followed_recommendation INTEGER CHECK (followed_recommendation IS NULL OR followed_recommendation IN (0, 1)),
    session_id TEXT,
    source TEXT NOT NULL CHECK (source IN
        ('agent', 'hook', 'auq-other', 'auto-decided', 'codex-import-marker', 'codex-import-pattern',
         'transcript-import', 'flip')),
    tool_use_id TEXT CHECK (tool_use_id IS NULL OR length(tool_use_id) <= 128),
    question_index INTEGER NOT NULL DEFAULT 0 CHECK (question_index >= 0),
    free_text TEXT,
    phase TEXT NOT NULL DEFAULT 'unknown'
        CHECK (phase IN ('ceo', 'design', 'eng', 'dx', 'other', 'unknown')),
    -- plantune's own door classification at write time (registry, skill:category, keyword
    -- net on the summary), kept beside the caller's door_type so SQL can audit safety
    -- without a regex engine.
    door_class TEXT CHECK (door_class IS NULL OR door_class IN ('one-way', 'two-way')),
    door_reason TEXT,
    extra_json TEXT NOT NULL DEFAULT '{}' CHECK (json_type(extra_json) = 'object'),
    raw_json TEXT NOT NULL,
    ingested_from TEXT,
    synthetic INTEGER NOT NULL DEFAULT 0 CHECK (synthetic IN (0, 1)),
    recorded_at TEXT NOT NULL
) STRICT;
CREATE INDEX question_log_project_ts ON question_log (project, ts);
CREATE INDEX question_log_dedup ON question_log (project, source, tool_use_id, question_index);
CREATE INDEX question_log_question ON question_log (question_id);
CREATE INDEX question_log_session ON question_log (session_id, phase);

-- Preferences: the user's "never ask / always ask / ask only for one-way" switch per
-- question. scope is a project slug or '__global__'; a project row beats the global one.
-- A value that is not one of the three (hand-edited files) is kept as 'unknown' with the
-- original text in raw_value, so nothing a user wrote is silently lost.
CREATE TABLE preferences (
    scope TEXT NOT NULL,
    question_id TEXT NOT NULL,
    preference TEXT NOT NULL
        CHECK (preference IN ('always-ask', 'never-ask', 'ask-only-for-one-way', 'unknown')),
    raw_value TEXT,
    source TEXT NOT NULL,
    free_text TEXT,
    synthetic INTEGER NOT NULL DEFAULT 0 CHECK (synthetic IN (0, 1)),
    updated_at TEXT NOT NULL,
    PRIMARY KEY (scope, question_id)
) STRICT;

-- Preference events: the append-only audit trail of every preference change (gstack's
-- question-events.jsonl), so a preference can always be explained.
CREATE TABLE preference_events (
    id INTEGER PRIMARY KEY,
    event_key TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL,
    ts TEXT NOT NULL,
    event_type TEXT NOT NULL CHECK (event_type IN ('preference-set', 'preference-cleared')),
    question_id TEXT,
    preference TEXT,
    source TEXT,
    free_text TEXT,
    extra_json TEXT NOT NULL DEFAULT '{}' CHECK (json_type(extra_json) = 'object'),
    ingested_from TEXT,
    synthetic INTEGER NOT NULL DEFAULT 0 CHECK (synthetic IN (0, 1))
) STRICT;
CREATE INDEX preference_events_scope ON preference_events (scope, ts);

-- The declared profile: what the user says about themselves, one value in [0, 1] per
-- dimension. gstack keeps one global profile, so rows normally use scope '__global__'.
CREATE TABLE declared_profile (
    scope TEXT NOT NULL,
    dimension TEXT NOT NULL CHECK (dimension IN
        ('scope_appetite', 'risk_tolerance', 'detail_preference', 'autonomy', 'architecture_care')),
    value REAL NOT NULL CHECK (value BETWEEN 0 AND 1),
    source TEXT NOT NULL,
    synthetic INTEGER NOT NULL DEFAULT 0 CHECK (synthetic IN (0, 1)),
    declared_at TEXT NOT NULL,
    PRIMARY KEY (scope, dimension)
) STRICT;

-- Office-hours sessions (gstack's developer-profile.json "sessions" and the legacy
-- builder-profile.jsonl). Order of insertion is the session order.
CREATE TABLE office_hours_sessions (
    id INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL UNIQUE,
    ts TEXT,
    date TEXT,
    mode TEXT,
    project_slug TEXT,
    signals_json TEXT NOT NULL DEFAULT '[]' CHECK (json_type(signals_json) = 'array'),
    resources_json TEXT NOT NULL DEFAULT '[]' CHECK (json_type(resources_json) = 'array'),
    topics_json TEXT NOT NULL DEFAULT '[]' CHECK (json_type(topics_json) = 'array'),
    design_doc TEXT,
    assignment TEXT,
    raw_json TEXT NOT NULL,
    origin TEXT NOT NULL,
    recorded_at TEXT NOT NULL
) STRICT;

-- Findings and pacing decisions: every finding a review phase ranked, with its scores,
-- door type (and why), the decision (surfaced to the user or silently auto-accepted),
-- the choice in force and the link to the question-log event that answered it.
CREATE TABLE findings (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    session_id TEXT NOT NULL,
    chain_id TEXT NOT NULL,
    phase TEXT NOT NULL CHECK (phase IN ('ceo', 'design', 'eng', 'dx', 'other', 'unknown')),
    finding_id TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    severity INTEGER NOT NULL CHECK (severity BETWEEN 0 AND 2),
    irreversibility INTEGER NOT NULL CHECK (irreversibility BETWEEN 0 AND 2),
    decision_matters INTEGER NOT NULL CHECK (decision_matters BETWEEN 0 AND 2),
    door_type TEXT NOT NULL CHECK (door_type IN ('one-way', 'two-way')),
    door_reason TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'finding' CHECK (kind IN ('finding', 'approval', 'migration')),
    recommended TEXT,
    options_json TEXT NOT NULL DEFAULT '[]' CHECK (json_type(options_json) = 'array'),
    score REAL NOT NULL,
    threshold REAL NOT NULL,
    calibration_id INTEGER REFERENCES calibrations (id),
    disposition TEXT NOT NULL CHECK (disposition IN ('surfaced', 'silent')),
    surface_reason TEXT CHECK (surface_reason IS NULL OR surface_reason IN ('one-way', 'gate', 'rank', 'flip')),
    choice TEXT,
    answer_event_id INTEGER REFERENCES question_log (id),
    flipped_at TEXT,
    synthetic INTEGER NOT NULL DEFAULT 0 CHECK (synthetic IN (0, 1)),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (session_id, finding_id)
) STRICT;
CREATE INDEX findings_chain ON findings (chain_id, phase);
CREATE INDEX findings_project ON findings (project, created_at);

-- Calibrations: each fitted surfacing threshold with how it was fitted and how well it
-- did, so `pacing rank` can name the calibration behind every decision.
CREATE TABLE calibrations (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    created_at TEXT NOT NULL,
    target REAL NOT NULL CHECK (target BETWEEN 0 AND 1),
    threshold REAL NOT NULL,
    tie_fraction REAL NOT NULL CHECK (tie_fraction BETWEEN 0 AND 1),
    score_function TEXT NOT NULL,
    weights_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(weights_json)),
    achieved_rate REAL,
    ci_low REAL,
    ci_high REAL,
    n_findings INTEGER NOT NULL,
    n_sessions INTEGER,
    override_recall REAL,
    window_start TEXT,
    window_end TEXT,
    include_synthetic INTEGER NOT NULL DEFAULT 0 CHECK (include_synthetic IN (0, 1)),
    details_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(details_json))
) STRICT;
CREATE INDEX calibrations_project ON calibrations (project, created_at);

-- Trace runs: one row per agent run (session) with the guidance mode it ran under, the
-- outputs it had to produce and which were missing, so a run can always be explained.
CREATE TABLE trace_runs (
    run_id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    session_id TEXT,
    created_at TEXT NOT NULL,
    task_id TEXT,
    topic TEXT,
    cwd TEXT,
    guidance_mode TEXT NOT NULL CHECK (guidance_mode IN ('off', 'read', 'propose', 'apply')),
    run_dir TEXT,
    required_outputs_json TEXT NOT NULL DEFAULT '[]' CHECK (json_type(required_outputs_json) = 'array'),
    found_outputs_json TEXT NOT NULL DEFAULT '[]' CHECK (json_type(found_outputs_json) = 'array'),
    missing_outputs_json TEXT NOT NULL DEFAULT '[]' CHECK (json_type(missing_outputs_json) = 'array'),
    guidance_files_read_json TEXT NOT NULL DEFAULT '[]' CHECK (json_type(guidance_files_read_json) = 'array'),
    guidance_proposal TEXT,
    applied_guidance_update INTEGER NOT NULL DEFAULT 0 CHECK (applied_guidance_update IN (0, 1)),
    raw_json TEXT NOT NULL DEFAULT '{}',
    ingested_from TEXT
) STRICT;
CREATE INDEX trace_runs_session ON trace_runs (session_id);

-- Guidance proposals: evidence-backed changes to a project's local guidance, with the
-- content hashes that make `guidance apply` fail closed when the target moved.
CREATE TABLE guidance_proposals (
    id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    run_id TEXT,
    created_at TEXT NOT NULL,
    path TEXT,
    guidance_hash TEXT,
    preferences_hash TEXT,
    status TEXT NOT NULL DEFAULT 'proposed' CHECK (status IN ('proposed', 'applied', 'rejected', 'stale')),
    items_json TEXT NOT NULL DEFAULT '[]' CHECK (json_type(items_json) = 'array'),
    applied_at TEXT
) STRICT;

-- Ingest state: how far each imported file has been read (inode, size, byte offset), so
-- a rerun reads only new bytes and a truncated or replaced file is rescanned.
CREATE TABLE ingest_state (
    path TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    inode INTEGER,
    size INTEGER NOT NULL DEFAULT 0,
    offset INTEGER NOT NULL DEFAULT 0,
    line_no INTEGER NOT NULL DEFAULT 0,
    mtime_ns INTEGER,
    head_sha1 TEXT,
    updated_at TEXT NOT NULL
) STRICT;
