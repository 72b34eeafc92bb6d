-- dimension_trace: every question-log event that moved a profile dimension, with its delta.
--
-- An event moves the profile only through the registry: its question_id must be a
-- registered question with a signal_key, and its exact user_choice must appear in the
-- signal map under that key, as in gstack's psychographic-signals.ts. One row per (event,
-- dimension), in log order by event_id. Events with an empty question_id or user_choice
-- never count, as in gstack's `--derive`; nor do auto-decided events (not the user's
-- answer: they store the option key where gstack's line has the label, which its
-- `--derive` never finds in the signal map).
-- `synthetic` is copied from the event so simulated history can be kept apart.
--
-- Datasette counts this view and groups it by synthetic in queries of their own, which
-- SQLite plans from the moving answers (registry x signal map) and the question index
-- (migration 0020); the newest-first page walks question_log (ts) instead. synthetic is
-- read as +q.synthetic (the same value) so that grouping by it is never served by walking
-- the whole log in the order of question_log (synthetic); the CAST gives the column back
-- its INTEGER affinity, so a filter Datasette binds as text ('1') still matches.
CREATE VIEW dimension_trace AS
SELECT
    q.id AS event_id,
    q.project,
    CAST(+q.synthetic AS INTEGER) AS synthetic,
    q.ts,
    q.skill,
    q.question_id,
    q.user_choice,
    q.source,
    r.signal_key,
    m.dimension,
    m.delta
FROM question_log AS q
JOIN registry_questions AS r ON r.id = q.question_id
JOIN signal_map AS m ON m.signal_key = r.signal_key AND m.user_choice = q.user_choice
WHERE q.question_id != '' AND q.user_choice != ''
  -- not auto-decided: the ids from the small partial index of 0005, read once, so that
  -- counting still reads only the index entries of the moving answers
  AND q.id NOT IN (SELECT a.id FROM question_log AS a INDEXED BY question_log_auto_question
                   WHERE a.source = 'auto-decided');
