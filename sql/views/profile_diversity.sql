-- profile_diversity: how much observed data the inferred profile stands on, and the gate.
--
-- One row per (project, synthetic) with at least one counted event (SPEC-gstack 7.2:
-- non-empty question_id and user_choice), plus project '__all__' for all projects.
-- distinct_days is what gstack calls days_span: the number of different UTC dates (the
-- first 10 characters of ts). calendar_span_days is the real span, last day - first
-- day + 1. enough_data is the display gate of SPEC 7.3: at least 20 events across 3
-- skills, 8 question ids and 7 distinct days; below it the inferred values are noise.
CREATE VIEW profile_diversity AS
WITH arms AS (
    SELECT q.project, q.synthetic,
        count(*) AS sample_size,
        count(DISTINCT q.skill) AS skills_covered,
        count(DISTINCT q.question_id) AS question_ids_covered,
        count(DISTINCT CASE WHEN q.ts != '' THEN substr(q.ts, 1, 10) END) AS distinct_days,
        min(CASE WHEN q.ts != '' THEN substr(q.ts, 1, 10) END) AS first_day,
        max(CASE WHEN q.ts != '' THEN substr(q.ts, 1, 10) END) AS last_day
    FROM question_log AS q
    WHERE q.question_id != '' AND q.user_choice != ''
    GROUP BY q.project, q.synthetic
    UNION ALL
    SELECT '__all__', q.synthetic,
        count(*),
        count(DISTINCT q.skill),
        count(DISTINCT q.question_id),
        count(DISTINCT CASE WHEN q.ts != '' THEN substr(q.ts, 1, 10) END),
        min(CASE WHEN q.ts != '' THEN substr(q.ts, 1, 10) END),
        max(CASE WHEN q.ts != '' THEN substr(q.ts, 1, 10) END)
    FROM question_log AS q
    WHERE q.question_id != '' AND q.user_choice != ''
    GROUP BY q.synthetic
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
