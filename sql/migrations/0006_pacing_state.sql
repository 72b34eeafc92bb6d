-- 0006_pacing_state: the state `pacing rank` and `plantune flip` keep between calls.
--
-- A pacing decision must outlive the agent's context (compaction, restarts), so every
-- piece of pacing memory is a row: the question id a finding is logged under (answers are
-- linked back by session + question id), the skill its events are logged with, whether
-- its summary was withheld by the injection screen, each chain's budget and each ranked
-- phase with the exact answer it produced (a retried call gets the same answer back).

-- The question-log id a finding's answers use: the finding id when it is already a valid
-- question id (kebab-case, at most 64 characters), else a kebab id derived from it.
ALTER TABLE findings ADD COLUMN question_id TEXT NOT NULL DEFAULT '';
-- The skill recorded on the finding's auto-decided and flip events.
ALTER TABLE findings ADD COLUMN skill TEXT NOT NULL DEFAULT 'pacing';
-- 1 when the finding's summary matched the injection screen and a neutral summary was
-- stored in its place (the agent's text never reaches the question log or the block).
ALTER TABLE findings ADD COLUMN summary_withheld INTEGER NOT NULL DEFAULT 0
    CHECK (summary_withheld IN (0, 1));
CREATE INDEX findings_session_question ON findings (session_id, question_id);

-- Chain budgets: how many rank-surfaced two-way questions a chained review may ask in
-- all, across its phases and sessions. The first budget given for a chain is kept; the
-- amount spent is counted from the findings table, so it can never drift or reset.
CREATE TABLE pacing_chains (
    project TEXT NOT NULL,
    chain_id TEXT NOT NULL,
    budget INTEGER CHECK (budget IS NULL OR budget >= 0),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (project, chain_id)
) STRICT;

-- Ranked phases: one row per (session, phase) with the hash of the request and the JSON
-- answer. The same request again replays the stored answer; a different request for an
-- already ranked phase is refused, so decisions, flips and links are never overwritten.
CREATE TABLE pacing_runs (
    project TEXT NOT NULL,
    session_id TEXT NOT NULL,
    phase TEXT NOT NULL CHECK (phase IN ('ceo', 'design', 'eng', 'dx', 'other', 'unknown')),
    chain_id TEXT NOT NULL,
    request_sha1 TEXT NOT NULL,
    output_json TEXT NOT NULL CHECK (json_type(output_json) = 'object'),
    created_at TEXT NOT NULL,
    PRIMARY KEY (project, session_id, phase)
) STRICT;
CREATE INDEX pacing_runs_session ON pacing_runs (session_id);
