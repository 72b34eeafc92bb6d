-- Chain budgets: each chained review's budget, how much of it rank-surfaced two-way
-- findings have spent (across all its phases and sessions) and what is left. One-way
-- doors, approval/migration gates and flips never spend it. A NULL budget means the
-- chain runs on the per-phase cap alone. Chains are kept by `pacing rank` only and
-- simulated findings never spend them, so synthetic is always 0 here.
CREATE VIEW pacing_chain_budgets AS
SELECT
    c.project,
    c.chain_id,
    c.budget,
    (SELECT count(*) FROM findings f
      WHERE f.project = c.project AND f.chain_id = c.chain_id AND f.surface_reason = 'rank'
        AND f.synthetic = 0) AS spent,
    CASE WHEN c.budget IS NULL THEN NULL ELSE max(0, c.budget - (
        SELECT count(*) FROM findings f
         WHERE f.project = c.project AND f.chain_id = c.chain_id AND f.surface_reason = 'rank'
        AND f.synthetic = 0))
    END AS remaining,
    (SELECT count(DISTINCT f.session_id) FROM findings f
      WHERE f.project = c.project AND f.chain_id = c.chain_id AND f.synthetic = 0) AS sessions,
    0 AS synthetic,
    c.created_at
FROM pacing_chains c;
