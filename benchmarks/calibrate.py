"""Fitting the surfacing threshold on 1,000,000 findings: numpy vs a pure-Python loop vs pandas.

All run in this one process on the same scores (additive, 0-6, drawn with the skew of
a real review history) and the same finding ids:

* numpy     ``toolkit.calibrate.fit_threshold``: value counts of the scores, then the
            tie split on the findings at the threshold only;
* python    the same rule written as a plain loop (Counter, sorted walk, sorted ties),
            what you would write without numpy; it gives the identical answer;
* pandas    ``Series.quantile(1 - target)`` as the threshold, the usual one-liner. It has
            no tie handling, so its achieved rate is printed too.

numpy and python run twice: with the tie hashes precomputed (the fit itself) and from
the finding ids (sha1 of each tied id computed inside the fit).
Each is timed best-of-N; ratios are against numpy. Run: ``python benchmarks/calibrate.py``.
"""

import sys
import time
from collections import Counter

import numpy as np
import pandas as pd

from toolkit.analysis import fit as analysis_fit
from toolkit.core import scoring

N = 1_000_000
TARGET = 0.20
REPEATS = 3


def make_data(n=N, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    sev = np.digitize(0.8 * z + rng.normal(0, 0.6, n), [-0.45, 0.75])
    irr = np.digitize(0.5 * z + rng.normal(0, 0.7, n), [-0.1, 1.0])
    dm = np.digitize(0.35 * z + rng.normal(0, 0.8, n), [-0.35, 0.65])
    scores = analysis_fit.score_findings(sev, irr, dm)
    ids = [f"finding-{i:07d}" for i in range(n)]
    return scores, ids


def fit_python(scores, target, ids=None, hashes=None):
    """The fit as a plain Python loop: same rule, same answer, no numpy."""
    n = len(scores)
    counts = Counter(round(s, scoring.SCORE_DECIMALS) for s in scores)
    wanted = target * n
    above = 0
    for value in sorted(counts, reverse=True):
        if above + counts[value] >= wanted:
            break
        above += counts[value]
    m = counts[value]
    k = min(max(int(wanted - above + 0.5), 0), m)
    if k in (0, m):
        return value, (0.0 if k == 0 else 1.0), (above + k) / n
    if hashes is None:
        ties = sorted(scoring.tie_hash(i) for s, i in zip(scores, ids) if s == value)
    else:
        ties = sorted(h for s, h in zip(scores, hashes) if s == value)
    lo, hi = ties[k - 1], ties[k]
    fraction = min(max(k / m, lo + 1e-12), hi)
    return value, fraction, (above + k) / n


def fit_pandas(series, target):
    threshold = series.quantile(1 - target)
    return threshold, (series >= threshold).mean()


def best(fn, repeats=REPEATS):
    times, result = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def main():
    scores, ids = make_data()
    score_list = scores.tolist()
    series = pd.Series(scores)

    hashes = analysis_fit.tie_hashes(ids)
    hash_list = hashes.tolist()

    t_numpy, fit = best(lambda: analysis_fit.fit_threshold(scores, TARGET, hashes=hashes))
    t_numpy_ids, fit_ids = best(lambda: analysis_fit.fit_threshold(scores, TARGET, ids=ids))
    t_python, (p_thr, p_frac, p_rate) = best(
        lambda: fit_python(score_list, TARGET, hashes=hash_list), repeats=1
    )
    t_python_ids, (pi_thr, pi_frac, pi_rate) = best(
        lambda: fit_python(score_list, TARGET, ids=ids), repeats=1
    )
    t_pandas, (q_thr, q_rate) = best(lambda: fit_pandas(series, TARGET))
    t_hash_all, _ = best(lambda: analysis_fit.tie_hashes(ids), repeats=1)

    assert (fit.threshold, fit.achieved_rate) == (p_thr, p_rate) == (pi_thr, pi_rate), (
        "fits disagree"
    )
    assert fit_ids.tie_fraction == fit.tie_fraction

    print(f"fit on {N:,} findings, target {TARGET:.0%} (best of {REPEATS}; python loops run once)")
    print(f"{'method':<44} {'seconds':>8} {'vs numpy':>9}  threshold  tie frac  achieved")
    rows = [
        (
            "numpy fit_threshold, precomputed hashes",
            t_numpy,
            fit.threshold,
            fit.tie_fraction,
            fit.achieved_rate,
        ),
        ("pure-Python loop, precomputed hashes", t_python, p_thr, p_frac, p_rate),
        ("pandas quantile (no tie handling)", t_pandas, q_thr, float("nan"), q_rate),
        (
            "numpy fit_threshold, ids (ties hashed)",
            t_numpy_ids,
            fit_ids.threshold,
            fit_ids.tie_fraction,
            fit_ids.achieved_rate,
        ),
        ("pure-Python loop, ids (ties hashed)", t_python_ids, pi_thr, pi_frac, pi_rate),
    ]
    for name, t, thr, frac, rate in rows:
        print(f"{name:<44} {t:8.3f} {t / t_numpy:8.1f}x  {thr:9g}  {frac:8.3f}  {rate:8.4f}")
    print(
        f"ties at the threshold: {fit.n_ties:,} of {N:,} ({fit.n_ties / N:.0%}); "
        f"hashing all {N:,} ids once: {t_hash_all:.3f} s"
    )
    print(
        f"python/numpy: {t_python / t_numpy:.0f}x with hashes given, {t_python_ids / t_numpy_ids:.1f}x from ids; "
        f"pandas/numpy: {t_pandas / t_numpy:.2f}x but misses the target by {abs(q_rate - TARGET):.3f}"
    )
    if t_numpy >= 1.0:
        print("numpy fit took a second or more", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
