-- 0020_rollups_declared: the analysis rollups are declared in sql/rollups/, one file each
-- (its tables, its triggers and the statements that add rows set-based), made again and
-- refilled by the migration runner (toolkit.store.declared) whenever a file changes. This
-- hands the objects the migrations made over to them: everything dropped here is created
-- again from those files and refilled from question_log and findings in the same open of
-- the database: the analysis rollups of 0005, 0011a and 0015 (with their feed tables)
-- and the profile totals of 0014 (with their feeds and the registry and signal-map
-- triggers).
DROP TRIGGER question_log_rollup_insert;
DROP TRIGGER question_log_rollup_delete;
DROP TRIGGER question_log_rollup_update;
DROP TRIGGER findings_rollup_insert;
DROP TRIGGER findings_rollup_delete;
DROP TRIGGER findings_rollup_update;
DROP TABLE rollup_question_log_add_feed;
DROP TABLE rollup_question_log_remove_feed;
DROP TABLE rollup_findings_add_feed;
DROP TABLE rollup_findings_remove_feed;
DROP TABLE rollup_phase;
DROP TABLE rollup_session;
DROP TABLE rollup_day;
DROP TABLE rollup_question;
DROP TABLE rollup_choice;
DROP TABLE rollup_pacing;
DROP TRIGGER question_log_profile_insert;
DROP TRIGGER question_log_profile_delete;
DROP TRIGGER question_log_profile_update;
DROP TRIGGER registry_questions_profile_insert;
DROP TRIGGER registry_questions_profile_delete;
DROP TRIGGER registry_questions_profile_update;
DROP TRIGGER signal_map_profile_insert;
DROP TRIGGER signal_map_profile_delete;
DROP TRIGGER signal_map_profile_update;
DROP TABLE profile_feed;
DROP TABLE profile_move_feed;
DROP TABLE profile_totals;
DROP TABLE profile_sums;
DROP TABLE profile_skills;
DROP TABLE profile_days;
DROP TABLE profile_answers;
