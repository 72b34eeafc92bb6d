-- profile_diversity: how much observed data the inferred profile stands on, and the gate.
--
-- One row per (project, synthetic) with at least one counted event (gstack's `--derive`
-- counts an event with a non-empty question_id and user_choice), plus project '__all__'
-- for all projects. A project's row is its running totals (profile_totals: one row,
-- whatever the history size); '__all__' counts the distinct skills, question ids and days
-- over the projects' per-skill, per-answer and per-day rows.
-- distinct_days is what gstack calls days_span: the number of different UTC dates (the
-- first 10 characters of ts). calendar_span_days is the real span, last day - first
-- day + 1. enough_data is gstack's "enough data" display gate: at least 20 events across
-- 3 skills, 8 question ids and 7 distinct days; below it the inferred values are noise.
CREATE VIEW profile_diversity AS
WITH arms AS (
    SELECT project, synthetic, sample_size, skills_covered, question_ids_covered,
           distinct_days, first_day, last_day
    FROM profile_totals
    WHERE sample_size > 0
    UNION ALL
    SELECT '__all__', t.synthetic, sum(t.sample_size),
        (SELECT count(DISTINCT skill) FROM profile_skills AS s WHERE s.synthetic = t.synthetic),
        (SELECT count(DISTINCT question_id) FROM profile_answers AS a
         WHERE a.synthetic = t.synthetic),
        (SELECT count(DISTINCT day) FROM profile_days AS d WHERE d.synthetic = t.synthetic),
        min(t.first_day), max(t.last_day)
    FROM profile_totals AS t
    GROUP BY t.synthetic
    HAVING sum(t.sample_size) > 0
)
SELECT
    project,
    synthetic,
    sample_size,
    skills_covered,
    question_ids_covered,
    distinct_days,
    CAST(julianday(last_day) - julianday(first_day) AS INTEGER) + 1 AS calendar_span_days,
    first_day,
    last_day,
    (sample_size >= 20 AND skills_covered >= 3 AND question_ids_covered >= 8
        AND distinct_days >= 7) AS enough_data
FROM arms;
