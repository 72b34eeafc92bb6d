-- 0008_guidance_apply: what `guidance apply` needs to find and re-check a proposal.
--
-- A proposal is applied later, from any directory, so it remembers the project folder
-- whose `.plantune/local_guidance.md` it edits. details_json keeps what is not a change
-- but explains one: the candidates considered and rejected (with why), the question ids
-- whose preferences were hashed into preferences_hash (apply re-hashes the same set), and
-- the thresholds in force when the proposal was made.
ALTER TABLE guidance_proposals ADD COLUMN project_dir TEXT;
ALTER TABLE guidance_proposals ADD COLUMN details_json TEXT NOT NULL DEFAULT '{}'
    CHECK (json_type(details_json) = 'object');
CREATE INDEX guidance_proposals_project ON guidance_proposals (project, created_at);
CREATE INDEX trace_runs_project ON trace_runs (project, created_at);
-- Guidance proposals ask, for every candidate question, "was it ever one-way?" and "was it
-- ever logged without a door classification?". Both are rare rows, so partial indexes
-- answer them without visiting the question's whole history.
CREATE INDEX question_log_one_way ON question_log (question_id)
    WHERE door_class = 'one-way' OR door_type = 'one-way';
CREATE INDEX question_log_unclassified ON question_log (question_id) WHERE door_class IS NULL;
