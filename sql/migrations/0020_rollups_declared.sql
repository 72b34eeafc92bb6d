-- 0020_rollups_declared: the analysis rollups are declared in sql/rollups/, one file each
-- (its table, its triggers and the statement that adds rows set-based), and re-created and
-- refilled by toolkit.store.rollups whenever a file changes. This hands the objects the
-- migrations made over to them: everything dropped here is created again from those files
-- and refilled from question_log and findings in the same open of the database.
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
