-- 0015b_pacing_rollup_project_index: the project facet of pacing_phase_counts reads a narrow
-- index of rollup_pacing instead of its wide rows (its primary key starts with the project,
-- but a scan of the key is a scan of every total).
CREATE INDEX rollup_pacing_project ON rollup_pacing (project);
