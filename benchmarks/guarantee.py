"""The cost of a promise: ``calibrate --max-miss`` against the plain ``--target`` fit.

Both run in this one process on the same 1,000,000 two-way decisions (additive scores 0-6
with the skew of a review history; overrides more likely at higher scores; 20,000
sessions and 2,000 questions as clusters):

* target     ``fit.fit_threshold`` (the plain --target 0.20 fit) and the mask of what it
             asks, the baseline;
* guarantee  ``guarantee.guaranteed_rule`` (--max-miss 0.10 --confidence 0.90): the walk
             over the fixed grid with the clustered Clopper-Pearson test, and the
             description of the chosen rule.

Both get the tie hashes precomputed (a sha1 per id, ~1 s per million ids, which either
pays once when not given them; the guarantee hashes only the overridden decisions).
Each is timed best-of-N; the ratio is against the target fit. Also printed: the share
each asks and its miss rate. Run: ``python benchmarks/guarantee.py [N]``.
"""

import sys
import time

import numpy as np

from toolkit.analysis import fit as analysis_fit
from toolkit.analysis import guarantee

N = 1_000_000
REPEATS = 3


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    sev = np.digitize(0.8 * z + rng.normal(0, 0.6, n), [-0.45, 0.75])
    irr = np.digitize(0.5 * z + rng.normal(0, 0.7, n), [-0.1, 1.0])
    dm = np.digitize(0.35 * z + rng.normal(0, 0.8, n), [-0.35, 0.65])
    scores = analysis_fit.score_findings(sev, irr, dm)
    overridden = rng.random(n) < 1 / (1 + np.exp(-(-3.5 + 0.6 * scores)))
    ids = [f"decision-{i:07d}" for i in range(n)]
    sessions = (np.arange(n) // 50).astype(str).astype(object)
    questions = rng.integers(0, 2000, n).astype(str).astype(object)
    return scores, ids, overridden, [sessions, questions]


def best(fn, repeats=REPEATS):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main(n=N):
    scores, ids, overridden, clusters = make_data(n)
    hashes = analysis_fit.tie_hashes(ids)

    def target():
        f = analysis_fit.fit_threshold(scores, 0.20, hashes=hashes)
        asked = analysis_fit.surfaced_mask(scores, f.threshold, f.tie_fraction, hashes=hashes)
        return f, asked

    def promise():
        return guarantee.guaranteed_rule(
            scores, ids, overridden, 0.10, 0.90, clusters=clusters, hashes=hashes
        )

    t_target, (f, asked) = best(target)
    t_promise, g = best(promise)
    miss_target = float((overridden & ~asked).sum() / overridden.sum())
    print(f"{n:,} two-way decisions, {int(overridden.sum()):,} overridden")
    print(
        f"target 0.20      {1000 * t_target:9.1f} ms  (1.00x)  asks {f.achieved_rate:.1%}, misses {miss_target:.1%}"
    )
    print(
        f"max-miss 0.10    {1000 * t_promise:9.1f} ms  ({t_promise / t_target:.2f}x)  asks "
        f"{g['share_asked']:.1%}, misses {g['miss_rate']:.1%} (bound {g['miss_upper_bound']:.1%})"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else N)
