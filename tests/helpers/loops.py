"""Which tests `make test` leaves out for `make test-full` (tests/conftest.py marks them ``full``)."""

# The tests that belong to `make test-full` only. Whole modules: those that run the
# installed commands as processes (as agents and hooks do), start servers, notebook kernels
# or background imports, build and install wheels, or run `make`. `make test` runs the rest
# (`-m "not full"`): tests/test_commands_in_process.py keeps every command's path in it.
# Tests marked slow or browser are full tests too, wherever they are.
FULL_MODULES = {
    "test_backlog",
    "test_browser",
    "test_compat_log",
    "test_compat_pref",
    "test_concurrency",
    "test_delete_races",
    "test_demo_gstack",
    "test_error_boundary",
    "test_faults",
    "test_gstack_link",
    "test_hooks_delivery",
    "test_hooks_install",
    "test_hooks_post",
    "test_hooks_pre",
    "test_ingest_kill",
    "test_ingest_lock",
    "test_installed_smoke",
    "test_launcher",
    "test_makefile",
    "test_notebooks",
    "test_pacing_cli",
    "test_packaging",
    "test_pickup",
    "test_process_end",
    "test_profile_compat",
    "test_profile_sync",
    "test_readme",
    "test_restore",
    "test_spool",
    "test_team_spark",
}
# Single tests, by module and name: in-process tests that take the fast loop's longest
# (property tests over many random histories, fits on generated histories), by
# `pytest --durations` on the fast loop. Their neighbours stay in it.
FULL_TESTS = {
    "test_calibrate::test_calibration_meets_target_on_fitting_data_and_on_a_new_simulation",
    "test_calibrate_question_log::test_fit_holdout_and_recall_on_generated_histories",
    "test_calibrations::test_enough_data_is_stored_without_force",
    "test_hot_imports::test_door_tokenizer_follows_the_token_pattern",
    "test_hot_imports::test_git_config_reader_follows_its_patterns",
    "test_hot_imports::test_hook_string_readers_follow_their_patterns",
    "test_synthetic::test_simulated_history_changes_no_real_decision",
    "test_views::test_rollups_stay_exact_under_any_sequence_of_writes",
}
