-- inferred_profile: the observed profile, recomputed from the question log on every read.
--
-- One row per (project, synthetic, dimension) for every project with at least one counted
-- event, plus project '__all__' for all projects together. Counted events follow
-- SPEC-gstack 7.2: every row with a non-empty question_id and user_choice, including
-- __unknown__ answers, auto-decided, hook and ad-hoc events; only a registered question
-- with a signal_key and an exact signal-map choice moves a dimension (dimension_trace).
-- `events` is how many events moved the dimension; `total_delta` is their sum, added in
-- integer millionths so it does not depend on row order.
-- `value` = 1 / (1 + exp(-3 * total_delta)) rounded half-up to 3 decimals on the exact
-- binary value, as JavaScript's toFixed(3) does. SQLite's round() rounds a decimal
-- rendering instead and disagrees near midpoints, so the rounding is done by hand: a
-- Veltkamp split (factor 2^7 + 1) cuts v into a 46-bit head a and a short tail, which
-- makes 2000*a and 2000*(v - a) exact, and the sign of 2000*v - (2k + 1) with
-- k = floor(1000*v) decides whether to round up.
-- Simulated history (synthetic = 1) is computed apart and never mixes with real rows.
-- Each arm groups straight from question_log so that `WHERE project = ?` reaches the
-- project index instead of aggregating every project first.
CREATE VIEW inferred_profile AS
WITH dims (dimension, position) AS (
    VALUES ('scope_appetite', 1), ('risk_tolerance', 2), ('detail_preference', 3),
           ('autonomy', 4), ('architecture_care', 5)
),
moves AS (
    SELECT r.id AS question_id, m.user_choice, m.dimension,
           CAST(round(m.delta * 1000000) AS INTEGER) AS micros
    FROM registry_questions AS r
    JOIN signal_map AS m ON m.signal_key = r.signal_key
),
totals AS (
    SELECT q.project, q.synthetic,
        sum(CASE s.dimension WHEN 'scope_appetite' THEN s.micros ELSE 0 END) AS m1,
        count(CASE s.dimension WHEN 'scope_appetite' THEN 1 END) AS e1,
        sum(CASE s.dimension WHEN 'risk_tolerance' THEN s.micros ELSE 0 END) AS m2,
        count(CASE s.dimension WHEN 'risk_tolerance' THEN 1 END) AS e2,
        sum(CASE s.dimension WHEN 'detail_preference' THEN s.micros ELSE 0 END) AS m3,
        count(CASE s.dimension WHEN 'detail_preference' THEN 1 END) AS e3,
        sum(CASE s.dimension WHEN 'autonomy' THEN s.micros ELSE 0 END) AS m4,
        count(CASE s.dimension WHEN 'autonomy' THEN 1 END) AS e4,
        sum(CASE s.dimension WHEN 'architecture_care' THEN s.micros ELSE 0 END) AS m5,
        count(CASE s.dimension WHEN 'architecture_care' THEN 1 END) AS e5
    FROM question_log AS q
    LEFT JOIN moves AS s ON s.question_id = q.question_id AND s.user_choice = q.user_choice
    WHERE q.question_id != '' AND q.user_choice != ''
    GROUP BY q.project, q.synthetic
    UNION ALL
    SELECT '__all__', q.synthetic,
        sum(CASE s.dimension WHEN 'scope_appetite' THEN s.micros ELSE 0 END),
        count(CASE s.dimension WHEN 'scope_appetite' THEN 1 END),
        sum(CASE s.dimension WHEN 'risk_tolerance' THEN s.micros ELSE 0 END),
        count(CASE s.dimension WHEN 'risk_tolerance' THEN 1 END),
        sum(CASE s.dimension WHEN 'detail_preference' THEN s.micros ELSE 0 END),
        count(CASE s.dimension WHEN 'detail_preference' THEN 1 END),
        sum(CASE s.dimension WHEN 'autonomy' THEN s.micros ELSE 0 END),
        count(CASE s.dimension WHEN 'autonomy' THEN 1 END),
        sum(CASE s.dimension WHEN 'architecture_care' THEN s.micros ELSE 0 END),
        count(CASE s.dimension WHEN 'architecture_care' THEN 1 END)
    FROM question_log AS q
    LEFT JOIN moves AS s ON s.question_id = q.question_id AND s.user_choice = q.user_choice
    WHERE q.question_id != '' AND q.user_choice != ''
    GROUP BY q.synthetic
),
per_dimension AS (
    SELECT t.project, t.synthetic, d.dimension, d.position,
        CASE d.position WHEN 1 THEN t.m1 WHEN 2 THEN t.m2 WHEN 3 THEN t.m3 WHEN 4 THEN t.m4
            ELSE t.m5 END AS micros,
        CASE d.position WHEN 1 THEN t.e1 WHEN 2 THEN t.e2 WHEN 3 THEN t.e3 WHEN 4 THEN t.e4
            ELSE t.e5 END AS events
    FROM totals AS t CROSS JOIN dims AS d
),
sigmoid AS (
    SELECT *, 1.0 / (1.0 + exp(-3.0 * (micros / 1000000.0))) AS v FROM per_dimension
),
split AS (
    SELECT *, CAST(v * 1000 AS INTEGER) AS k, (129.0 * v) - ((129.0 * v) - v) AS a FROM sigmoid
)
SELECT
    project,
    synthetic,
    dimension,
    position,
    micros / 1000000.0 AS total_delta,
    (k + ((2000.0 * a - (2 * k + 1)) + 2000.0 * (v - a) >= 0)) / 1000.0 AS value,
    events
FROM split;
