-- 0012b_pacing_expiry: pacing sessions and chains that close after a quiet spell.
--
-- Pacing state follows gstack's session tracking, where a session ends after 120 minutes
-- without activity. A session or chain with no ranking and no flip for
-- PLANTUNE_PACING_TTL_MINUTES is closed when a ranking next names it: its rows keep every
-- value but move to an archived id (`<id>~closed-<n>`), so the same id starts afresh with
-- a new budget and new decisions. Nothing is deleted; this table says what was closed,
-- when, and under which id its rows are kept.
CREATE TABLE pacing_expiries (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('session', 'chain')),
    original_id TEXT NOT NULL,
    archived_as TEXT NOT NULL,
    last_activity TEXT NOT NULL,
    closed_at TEXT NOT NULL,
    ttl_minutes REAL NOT NULL CHECK (ttl_minutes > 0),
    UNIQUE (project, kind, archived_as)
) STRICT;
CREATE INDEX pacing_expiries_original ON pacing_expiries (project, kind, original_id);
