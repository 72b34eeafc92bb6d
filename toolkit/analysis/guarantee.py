"""A threshold with a promise: the least-asking rule whose miss rate is bounded.

Among the two-way decisions the user overrode, the *miss rate* of a surfacing rule is the
share it would have silenced. ``guaranteed_rule`` picks, from a grid of rules fixed before
looking at any answer, the one that asks least while a one-sided Clopper-Pearson upper
bound of its miss rate, at confidence C, is at most E.

Why this is a valid promise (Learn-then-Test, Angelopoulos et al. 2021, with fixed
sequence testing): each rule on the grid is a hypothesis "its miss rate is above E",
tested with the exact binomial p-value P(Bin(n, E) <= misses). The grid is walked from
the rule that asks everything (no misses) towards rules that ask less, and the walk stops
at the first rule it cannot certify. Testing in an order fixed in advance needs no
multiplicity correction, so with probability at least C (over the history drawn) the
chosen rule's miss rate on new decisions from the same process is at most E. Decisions
are treated as exchangeable; decisions of one session are not independent, which the
bound does not model (a held-out check, ``--holdout-days``, shows how it does).

The grid: every value of the score table (27 factor combinations) as threshold, each with
tie fractions 0, 1/20, ..., 1 (a tie surfaces when the stable hash of its id is under the
fraction, as ``scoring.reaches_threshold`` decides). Pure numpy; no database here.
"""

import math

import numpy as np

from toolkit.analysis.fit import CalibrationError, score_table, surfaced_mask, tie_hashes

METHOD = (
    "Clopper-Pearson upper bound on the miss rate of overridden two-way decisions, one-sided "
    "at the stated confidence; threshold chosen by fixed-sequence testing (Learn-then-Test) "
    "over a fixed grid of thresholds and tie fractions, from asking everything down"
)
TIE_STEPS = 20
DEFAULT_CONFIDENCE = 0.90


# --------------------------------------------------------------------------- binomial bound


def _log_cdf_upto(k, n, p):
    """log P(Bin(n, p) <= j) for j = 0..k (numpy array), 0 < p < 1."""
    j = np.arange(k, dtype=np.float64)
    steps = np.log((n - j) / (j + 1.0)) + math.log(p / (1.0 - p))
    log_pmf = np.concatenate(([n * math.log1p(-p)], n * math.log1p(-p) + np.cumsum(steps)))
    return np.logaddexp.accumulate(log_pmf)


def binom_cdf(k, n, p):
    """P(Bin(n, p) <= k), exact (a sum in log space)."""
    if k < 0:
        return 0.0
    if k >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    return float(min(1.0, math.exp(_log_cdf_upto(int(k), int(n), float(p))[-1])))


def upper_bound(k, n, confidence):
    """One-sided Clopper-Pearson upper bound of a rate seen k times in n, at ``confidence``.

    The p at which seeing k or fewer has probability 1 - confidence (bisection on the
    binomial CDF, which falls as p grows). None when n is 0.
    """
    if n <= 0:
        return None
    if k >= n:
        return 1.0
    alpha = 1.0 - confidence
    if k == 0:
        return 1.0 - alpha ** (1.0 / n)  # closed form: (1 - p)^n = alpha
    low, high = k / n, 1.0
    for _ in range(60):
        mid = (low + high) / 2.0
        if binom_cdf(k, n, mid) > alpha:
            low = mid
        else:
            high = mid
    return high


def overrides_needed(max_miss, confidence):
    """Fewest overridden decisions for which any rule can be certified (asking everything
    misses none: (1 - E)^n <= 1 - C)."""
    alpha = 1.0 - confidence
    n = max(1, math.ceil(math.log(alpha) / math.log1p(-max_miss)))
    while (1.0 - max_miss) ** n > alpha:
        n += 1
    while n > 1 and (1.0 - max_miss) ** (n - 1) <= alpha:
        n -= 1
    return n


def more_needed_at(miss_rate, n, max_miss, confidence, limit=10_000_000):
    """How many more overridden decisions, missed at ``miss_rate``, would bring the bound to
    ``max_miss`` (None when no amount would: the rate itself is not below it)."""
    if miss_rate is None or miss_rate >= max_miss:
        return None
    total = max(n, 1)
    while total <= limit:
        if upper_bound(math.floor(miss_rate * total), total, confidence) <= max_miss:
            break
        total *= 2
    else:
        return None
    low, high = max(n, 1), total  # bound(high) <= E; find the smallest such total
    while low < high:
        mid = (low + high) // 2
        if upper_bound(math.floor(miss_rate * mid), mid, confidence) <= max_miss:
            high = mid
        else:
            low = mid + 1
    return max(0, low - n)


# --------------------------------------------------------------------------- the rule grid


def _grid(function, weights):
    """(threshold, tie fraction) pairs, from the rule asking most to the one asking least."""
    values = np.unique(np.round(score_table(function, weights), 9))
    fractions = np.linspace(1.0, 0.0, TIE_STEPS + 1)
    return [(float(v), float(f)) for v in values for f in fractions]


def _counts(scores, hashes, grid):
    """For each rule of the grid, how many of the rows it would silence."""
    order = np.argsort(scores, kind="stable")
    s = scores[order]
    h = hashes[order]
    out = np.empty(len(grid), dtype=np.int64)
    for j, (v, f) in enumerate(grid):
        lo = np.searchsorted(s, v, side="left")
        hi = np.searchsorted(s, v, side="right")
        out[j] = lo + int(np.count_nonzero(h[lo:hi] >= f))
    return out


def check_request(max_miss, confidence):
    if not 0.0 < max_miss < 1.0:
        raise CalibrationError("--max-miss must be above 0 and below 1")
    if not 0.0 < confidence < 1.0:
        raise CalibrationError("--confidence must be above 0 and below 1")


def guaranteed_rule(
    scores,
    ids,
    overridden,
    max_miss,
    confidence=DEFAULT_CONFIDENCE,
    function="additive",
    weights=None,
):
    """The least-asking grid rule whose miss-rate bound is at most ``max_miss``.

    ``scores``, ``ids`` and ``overridden`` describe the two-way decisions. Returns a dict:
    threshold, tie_fraction, share_asked, n_overridden, n_missed, miss_rate,
    miss_upper_bound, plus the request and the method. Raises CalibrationError, saying
    how many more overridden decisions it would take, when no rule can be certified.
    """
    check_request(max_miss, confidence)
    scores = np.round(np.asarray(scores, dtype=np.float64), 9)
    overridden = np.asarray(overridden, dtype=bool)
    hashes = tie_hashes(ids)
    n_over = int(overridden.sum())
    needed = overrides_needed(max_miss, confidence)
    if n_over < needed:
        raise CalibrationError(
            f"no threshold can promise a miss rate of at most {_pct(max_miss)} at {_pct(confidence)} "
            f"confidence from {n_over:,} overridden two-way decisions: even asking every one needs "
            f"{needed:,}, so it would take at least {needed - n_over:,} more overridden decisions"
        )
    grid = _grid(function, weights)
    misses = _counts(scores[overridden], hashes[overridden], grid)
    alpha = 1.0 - confidence
    # The p-value of "miss rate > E" for each count of misses, all at once.
    log_cdf = _log_cdf_upto(int(misses.max()), n_over, max_miss)
    certified = log_cdf[misses] <= math.log(alpha)
    # Fixed sequence: walk from asking everything; stop at the first rule not certified.
    stop = int(np.argmin(certified)) if not certified.all() else len(grid)
    chosen = stop - 1  # >= 0: the first rule misses nothing and n_over >= needed
    threshold, fraction = grid[chosen]
    out = describe(scores, ids, overridden, threshold, fraction, confidence, hashes)
    out.update({"max_miss": max_miss, "confidence": confidence, "method": METHOD})
    return out


def describe(scores, ids, overridden, threshold, tie_fraction, confidence, hashes=None):
    """Share asked, misses and the miss-rate bound of one rule on these decisions."""
    scores = np.round(np.asarray(scores, dtype=np.float64), 9)
    overridden = np.asarray(overridden, dtype=bool)
    asked = surfaced_mask(scores, threshold, tie_fraction, ids=ids, hashes=hashes)
    n_over = int(overridden.sum())
    missed = int(np.count_nonzero(overridden & ~asked))
    return {
        "threshold": float(threshold),
        "tie_fraction": float(tie_fraction),
        "share_asked": float(asked.mean()) if asked.size else None,
        "n_overridden": n_over,
        "n_missed": missed,
        "miss_rate": missed / n_over if n_over else None,
        "miss_upper_bound": upper_bound(missed, n_over, confidence),
    }


def curve(scores, ids, overridden, confidence=DEFAULT_CONFIDENCE):
    """Miss rate and its bound against share asked for "score >= v" at each distinct score
    (for notebook 02), as a list of dicts, most asking first."""
    values = np.unique(np.round(np.asarray(scores, dtype=np.float64), 9))
    return [describe(scores, ids, overridden, float(v), 1.0, confidence) for v in values]


def _pct(x):
    return f"{100 * x:.0f}%" if float(100 * x).is_integer() else f"{100 * x:.1f}%"
