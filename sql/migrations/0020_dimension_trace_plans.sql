-- 0020_dimension_trace_plans: the dimension_trace page counts its moves without reading
-- the whole question log.
--
-- A Datasette view page runs its rows, its count and each facet as separate queries, and
-- SQLite plans each one on its own. dimension_trace (one row per event and dimension an
-- answer moved) needs two different plans:
--
--   * the page, newest first, walks question_log (ts) from the end and looks the registry
--     and the signal map up for each event, stopping after the rows it shows;
--   * the count and the synthetic facet walk the moving answers instead (each registered
--     question with a signal key, times its choices in the signal map: a few hundred
--     pairs) and count the events of each pair in one range of an index on (question_id,
--     user_choice, synthetic), never reading an event that moved nothing.
--
-- question_log_question (question_id) stays as it is beside the new index: within one
-- question it keeps the events in log order, which the newest-answer look-up of
-- pacing_decisions reads from the end and stops at the first match; a wider key would make
-- it sort every answer of the question instead.
CREATE INDEX question_log_choice ON question_log (question_id, user_choice, synthetic);

-- Without statistics SQLite takes every table for a million rows, the registry and the
-- signal map included, so it never starts a count from the moving answers; and it does not
-- weigh that a page stops after its first rows, so with measured statistics it sorts all
-- moves for the page. These rows tell the planner what a large plantune database looks
-- like: a registry of about a hundred questions, a signal map of a few rows per signal key
-- and two per answer, and a log where each question recurs thousands of times and each of
-- its answers hundreds (so a look-up of one answer reads question_log_choice, not every
-- event of the question through question_log_question). With them each of the three queries gets its own plan, whatever
-- the size of the database. ANALYZE replaces them with measured ones (and can then make
-- the page sort).
ANALYZE sqlite_schema;
DELETE FROM sqlite_stat1 WHERE idx IN (
    'question_log_question', 'question_log_choice', 'sqlite_autoindex_registry_questions_1',
    'sqlite_autoindex_signal_map_1');
INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES
    ('question_log', 'question_log_question', '1000000 3000'),
    ('question_log', 'question_log_choice', '1000000 3000 700 350'),
    ('registry_questions', 'sqlite_autoindex_registry_questions_1', '100 1'),
    ('signal_map', 'sqlite_autoindex_signal_map_1', '200 7 2 1');
-- Analysing the schema table (it has no indexes) reloads the statistics into this
-- connection too.
ANALYZE sqlite_schema;
