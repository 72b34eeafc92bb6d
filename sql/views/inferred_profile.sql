-- inferred_profile: the observed profile, read from the running totals of 0014.
--
-- One row per (project, synthetic, dimension) for every project with at least one counted
-- event, plus project '__all__' for all projects together. Counted events are those
-- gstack's `--derive` counts: every row with a non-empty question_id and user_choice, including
-- __unknown__ answers, auto-decided, hook and ad-hoc events; only a registered question
-- with a signal_key and an exact signal-map choice moves a dimension (dimension_trace).
-- `events` is how many events moved the dimension; `total_delta` is their sum, kept in
-- integer millionths by triggers (profile_sums) so it does not depend on row order, and
-- reading it costs a few rows whatever the history size ('__all__': a few per project).
-- `value` = 1 / (1 + exp(-3 * total_delta)) rounded half-up to 3 decimals on the exact
-- binary value, as JavaScript's toFixed(3) does. SQLite's round() rounds a decimal
-- rendering instead and disagrees near midpoints, so the rounding is done by hand: a
-- Veltkamp split (factor 2^7 + 1) cuts v into a 46-bit head a and a short tail, which
-- makes 2000*a and 2000*(v - a) exact, and the sign of 2000*v - (2k + 1) with
-- k = floor(1000*v) decides whether to round up.
-- Simulated history (synthetic = 1) is kept apart and never mixes with real rows.
CREATE VIEW inferred_profile AS
WITH dims (dimension, position) AS (
    VALUES ('scope_appetite', 1), ('risk_tolerance', 2), ('detail_preference', 3),
           ('autonomy', 4), ('architecture_care', 5)
),
-- Per project from the running totals; '__all__' adds up the projects' rows.
totals AS (
    SELECT project, synthetic FROM profile_totals WHERE sample_size > 0
    UNION ALL
    SELECT '__all__', synthetic FROM profile_totals GROUP BY synthetic HAVING sum(sample_size) > 0
),
sums AS (
    SELECT project, synthetic, dimension, micros, events FROM profile_sums
    UNION ALL
    SELECT '__all__', synthetic, dimension, sum(micros), sum(events)
    FROM profile_sums GROUP BY synthetic, dimension
),
per_dimension AS (
    SELECT t.project, t.synthetic, d.dimension, d.position,
           coalesce(s.micros, 0) AS micros, coalesce(s.events, 0) AS events
    FROM totals AS t
    CROSS JOIN dims AS d
    LEFT JOIN sums AS s
        ON s.project = t.project AND s.synthetic = t.synthetic AND s.dimension = d.dimension
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
