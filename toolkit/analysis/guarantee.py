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

from toolkit.analysis.fit import (
    CalibrationError,
    Fit,
    score_findings,
    score_table,
    surfaced_mask,
    tie_hashes,
)
from toolkit.core.vocabulary import GATE_KINDS

METHOD = (
    "Clopper-Pearson upper bound (binomial, one-sided at the stated confidence) on the miss "
    "rate of overridden two-way decisions, with sessions and questions as clusters "
    "(Korn-Graubard effective sample size); threshold chosen by fixed-sequence testing (Learn-then-Test) over a fixed "
    "grid of thresholds and tie fractions, from asking everything down"
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


def effective(missed, groupings):
    """(misses, decisions) to bound with: the plain counts shrunk by the design effect of
    the groupings (Korn and Graubard's effective sample size for clustered data).

    Overrides of one session go together (one plan, one mood), and so do those of one
    question, so n overridden decisions carry less than n independent ones. Each
    grouping's design effect is the between-group variance of the miss rate over its
    binomial variance; with two groupings crossed, their excesses over 1 add up (the
    two-way cluster variance of Cameron, Gelbach and Miller, the crossed cells being
    single decisions). The effective counts keep the miss rate and divide the decisions
    by the design effect, the misses rounded up; never more than the plain counts.
    """
    n = int(missed.size)
    k = int(np.count_nonzero(missed))
    if k == 0 or k == n:
        return k, n
    p = k / n
    deff = 1.0
    for codes, n_groups in groupings:
        if n_groups < 2:
            continue
        per_n = np.bincount(codes, minlength=n_groups).astype(np.float64)
        per_k = np.bincount(codes, weights=missed.astype(np.float64), minlength=n_groups)
        variance = n_groups / (n_groups - 1) * float(np.sum((per_k - p * per_n) ** 2)) / n**2
        deff += max(0.0, variance / (p * (1.0 - p) / n) - 1.0)
    n_eff = max(1, math.floor(n / deff))
    return min(n_eff, math.ceil(p * n_eff - 1e-9)), n_eff


def guaranteed_rule(
    scores,
    ids,
    overridden,
    max_miss,
    confidence=DEFAULT_CONFIDENCE,
    function="additive",
    weights=None,
    clusters=(),
    hashes=None,
):
    """The least-asking grid rule whose miss-rate bound is at most ``max_miss``.

    ``scores``, ``ids`` and ``overridden`` describe the two-way decisions; ``clusters`` is
    a list of groupings of them (session ids, question ids) whose members go together;
    ``hashes``, the ids' tie hashes when already computed. Returns a dict: threshold,
    tie_fraction, share_asked, n_overridden, n_missed, miss_rate, miss_upper_bound, plus
    the request and the method.
    Raises CalibrationError, saying how many more overridden decisions it would take,
    when no rule can be certified.
    """
    check_request(max_miss, confidence)
    scores = np.round(np.asarray(scores, dtype=np.float64), 9)
    overridden = np.asarray(overridden, dtype=bool)
    n_over = int(overridden.sum())
    needed = overrides_needed(max_miss, confidence)
    if n_over < needed:
        raise CalibrationError(
            f"no threshold can promise a miss rate of at most {_pct(max_miss)} at {_pct(confidence)} "
            f"confidence from {n_over:,} overridden two-way decisions: even asking every one needs "
            f"{needed:,}, so it would take at least {needed - n_over:,} more overridden decisions"
        )
    groupings = [_codes(g, overridden) for g in (clusters or ())]
    s_o = scores[overridden]
    if hashes is None:  # only the overridden decisions' hashes are needed for the walk
        h_o = tie_hashes(x for x, o in zip(ids, overridden) if o)
    else:
        h_o = np.asarray(hashes, dtype=np.float64)[overridden]
    log_alpha = math.log(1.0 - confidence)
    grid = _grid(function, weights)
    chosen = 0  # asking everything misses nothing, and n_over >= needed certifies it
    # Fixed sequence: walk from asking everything; stop at the first rule not certified.
    for j in range(1, len(grid)):
        v, f = grid[j]
        missed = (s_o < v) | ((s_o == v) & (h_o >= f))
        k, n = effective(missed, groupings)
        # p-value of "the miss rate is above E": P(Bin(n, E) <= k)
        if k >= n or _log_cdf_upto(k, n, max_miss)[-1] > log_alpha:
            break
        chosen = j
    threshold, fraction = grid[chosen]
    out = describe(
        scores, ids, overridden, threshold, fraction, confidence, hashes, groupings=groupings
    )
    out.update({"max_miss": max_miss, "confidence": confidence, "method": METHOD})
    return out


def _codes(groups, overridden):
    names = np.asarray(groups, dtype=object)[np.asarray(overridden, dtype=bool)].astype(str)
    uniques, codes = np.unique(names, return_inverse=True)
    return codes, int(uniques.size)


def describe(
    scores,
    ids,
    overridden,
    threshold,
    tie_fraction,
    confidence,
    hashes=None,
    clusters=(),
    groupings=None,
):
    """Share asked, misses and the miss-rate bound of one rule on these decisions
    (``groupings``: the clusters already coded, as ``_codes`` gives them)."""
    scores = np.round(np.asarray(scores, dtype=np.float64), 9)
    overridden = np.asarray(overridden, dtype=bool)
    asked = surfaced_mask(scores, threshold, tie_fraction, ids=ids, hashes=hashes)
    n_over = int(overridden.sum())
    missed = overridden & ~asked
    if groupings is None:
        groupings = [_codes(g, overridden) for g in clusters]
    k, n = effective(missed[overridden], groupings)
    return {
        "threshold": float(threshold),
        "tie_fraction": float(tie_fraction),
        "share_asked": float(asked.mean()) if asked.size else None,
        "n_overridden": n_over,
        "n_missed": int(missed.sum()),
        "miss_rate": int(missed.sum()) / n_over if n_over else None,
        "effective_overridden": n,
        "miss_upper_bound": upper_bound(k, n, confidence),
    }


def curve(scores, ids, overridden, confidence=DEFAULT_CONFIDENCE, clusters=()):
    """Miss rate and its bound against share asked for "score >= v" at each distinct score
    (for notebook 02), as a list of dicts, most asking first."""
    values = np.unique(np.round(np.asarray(scores, dtype=np.float64), 9))
    return [
        describe(scores, ids, overridden, float(v), 1.0, confidence, clusters=clusters)
        for v in values
    ]


def _pct(x):
    return f"{100 * x:.0f}%" if float(100 * x).is_integer() else f"{100 * x:.1f}%"


# --------------------------------------------------------------------------- in a calibration


def promise(findings, fit, request, function, weights):
    """The guarantee for a calibration: ``guaranteed_rule`` on the two-way rows of
    ``findings`` (the shape ``calibrate.load_findings`` returns), with the plain target's
    rule ``fit`` measured beside it."""
    max_miss, confidence = request
    if confidence is None:
        confidence = DEFAULT_CONFIDENCE
    rows = (findings["door_type"] != "one-way") & ~np.isin(findings["kind"], GATE_KINDS)
    scores = score_findings(
        findings["severity"][rows],
        findings["irreversibility"][rows],
        findings["decision_matters"][rows],
        function,
        weights or None,
    )
    ids = findings["finding_id"][rows]
    overridden = findings["overridden"][rows]
    questions = [
        a if a is not None else b
        for a, b in zip(findings["question_id"][rows], findings["finding_id"][rows])
    ]
    clusters = [findings["session_id"][rows], np.asarray(questions, dtype=object)]
    out = guaranteed_rule(
        scores, ids, overridden, max_miss, confidence, function, weights or None, clusters
    )
    at_target = describe(
        scores, ids, overridden, fit.threshold, fit.tie_fraction, confidence, clusters=clusters
    )
    out["at_target"] = dict(at_target, target=fit.target)
    out["n_decisions"] = int(scores.size)
    out["measured_on"] = findings.get("measured_on", "the fitted history")
    return out


def rule_fit(fit, scores, ids, threshold, tie_fraction):
    """A ``Fit`` for a given rule on the fitted rows (how the guaranteed rule does there)."""
    s = np.round(np.asarray(scores, dtype=np.float64), 9)
    tied = s == round(threshold, 9)
    asked = surfaced_mask(scores, threshold, tie_fraction, ids=ids)
    return Fit(
        threshold=threshold,
        tie_fraction=tie_fraction,
        target=fit.target,
        achieved_rate=float(asked.mean()),
        n=int(s.size),
        n_above=int(np.count_nonzero(s > round(threshold, 9))),
        n_ties=int(np.count_nonzero(tied)),
        n_tie_surfaced=int(np.count_nonzero(asked & tied)),
    )


def _pct1(x):
    return "n/a" if x is None else f"{100 * x:.1f}%"


def lines(g):
    """The guarantee in plain English (nothing when the fit was not asked for one)."""
    if not g:
        return []
    t = g["at_target"]
    return [
        (
            f"Guarantee: with {_pct1(g['confidence'])} confidence at most {_pct1(g['max_miss'])} of the "
            f"two-way decisions you would override are silenced: the miss rate's upper bound is "
            f"{_pct1(g['miss_upper_bound'])} ({g['n_missed']:,} of {g['n_overridden']:,} overridden "
            f"decisions missed in {g.get('measured_on', 'the fitted history')}), asking {_pct1(g['share_asked'])} of two-way decisions."
        ),
        (
            f"At the plain target ({_pct1(t['target'])}): asking {_pct1(t['share_asked'])}, miss rate "
            f"{_pct1(t['miss_rate'])}, upper bound {_pct1(t['miss_upper_bound'])}."
        ),
        "Method: " + g["method"] + ".",
    ]
