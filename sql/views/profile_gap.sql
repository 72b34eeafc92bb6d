-- profile_gap: what the user declared against what their answers show, per dimension.
--
-- One row per (project, synthetic, dimension) where the user declared a value (the
-- global declared profile, scope '__global__') and the project has observed events
-- (inferred_profile; '__all__' is all projects). gap = |declared - inferred| rounded
-- half-up to 3 decimals on the exact binary value (same hand rounding as
-- inferred_profile). gap_word: close (< 0.1), drift (0.1 to 0.3), mismatch (> 0.3; a
-- gap of exactly 0.3 is drift, as --check-mismatch flags only gaps above 0.3).
-- A gap above 0.3 on fewer counted events than a mismatch needs is 'wide', never
-- 'mismatch', so this view and `profile mismatch` never disagree about one: sample_size
-- is the counted events of the row's project (profile_diversity's), and 10 is
-- MISMATCH_MIN_SAMPLE in toolkit/core/profile.py (a test holds the two together).
CREATE VIEW profile_gap AS
WITH samples AS (
    SELECT project, synthetic, sample_size FROM profile_totals
    UNION ALL
    SELECT '__all__', synthetic, sum(sample_size) FROM profile_totals GROUP BY synthetic
),
raw AS (
    SELECT i.project, i.synthetic, i.dimension, i.position,
        d.value AS declared, i.value AS inferred, abs(d.value - i.value) AS v,
        coalesce(s.sample_size, 0) AS sample_size
    FROM inferred_profile AS i
    JOIN declared_profile AS d ON d.scope = '__global__' AND d.dimension = i.dimension
        -- the real profile is compared with real declared values only
        AND (d.synthetic = 0 OR i.synthetic = 1)
    LEFT JOIN samples AS s ON s.project = i.project AND s.synthetic = i.synthetic
),
split AS (
    SELECT *, CAST(v * 1000 AS INTEGER) AS k, (129.0 * v) - ((129.0 * v) - v) AS a FROM raw
),
rounded AS (
    SELECT project, synthetic, dimension, position, declared, inferred, sample_size,
        (k + ((2000.0 * a - (2 * k + 1)) + 2000.0 * (v - a) >= 0)) / 1000.0 AS gap
    FROM split
)
SELECT
    project,
    synthetic,
    dimension,
    position,
    declared,
    inferred,
    gap,
    CASE WHEN gap < 0.1 THEN 'close' WHEN gap <= 0.3 THEN 'drift'
         WHEN sample_size < 10 THEN 'wide' ELSE 'mismatch' END AS gap_word,
    sample_size
FROM rounded;
