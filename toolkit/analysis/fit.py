"""The threshold fit, in numpy: scores, the tie-aware fit to a target surfacing rate, and
its evaluation (bootstrap interval over whole sessions, override recall, interruptions per
phase), plus "does this decision matter" from override rates.

Pure functions over arrays: nothing here reads or writes the database.
"""

import hashlib
from dataclasses import asdict, dataclass

import numpy as np

from toolkit.core import scoring
from toolkit.core.vocabulary import PHASES

DEFAULT_TARGET = 0.20
ROWS_KEY = "_rows"
DEFAULT_RESAMPLES = 1000
RANK_CAP_PER_PHASE = 3
SCORE_FUNCTIONS = ("additive", "weighted")
# Override-rate cut points for "does this decision matter to the user" (0, 1, 2): a question
# the user overrides at least one time in ten is one they want a say in.
DECISION_MATTERS_CUTS = (0.10, 0.25)
MIN_ANSWERED_FOR_RATE = 5
MIN_OVERRIDES_FOR_WEIGHTS = 10
# The guard: a calibration is stored only when the 95% interval of its achieved rate
# (resampling whole sessions) is narrower than this many points either side.
MAX_HALF_WIDTH = 0.05
# ...and only when it rests on enough history: a few sessions resampled give an interval
# that looks narrow (one session gives 0.0% to 0.0%) and says nothing about the next one.
MIN_SESSIONS = 10
MIN_DECISIONS = 100


class CalibrationError(ValueError):
    """A calibration that cannot be done, explained in one sentence."""


# --------------------------------------------------------------------------- scores


def score_table(function=scoring.DEFAULT_SCORE_FUNCTION, weights=None):
    """All 27 possible scores, indexed by severity*9 + irreversibility*3 + decision_matters."""
    if function not in SCORE_FUNCTIONS:
        raise CalibrationError(
            f"unknown score function {function!r} (expected additive or weighted)"
        )
    table = np.empty(27, dtype=np.float64)
    for s in range(3):
        for i in range(3):
            for d in range(3):
                finding = {"severity": s, "irreversibility": i, "decision_matters": d}
                table[s * 9 + i * 3 + d] = scoring.score(finding, function, weights)
    return table


def score_findings(severity, irreversibility, decision_matters, function="additive", weights=None):
    """Vectorised ``scoring.score`` for arrays of factors (each 0-2)."""
    s = np.asarray(severity, dtype=np.int64)
    i = np.asarray(irreversibility, dtype=np.int64)
    d = np.asarray(decision_matters, dtype=np.int64)
    for name, a in (("severity", s), ("irreversibility", i), ("decision_matters", d)):
        if a.size and (a.min() < 0 or a.max() > 2):
            raise CalibrationError(f"{name} must be 0, 1 or 2")
    return score_table(function, weights)[s * 9 + i * 3 + d]


def tie_hashes(ids):
    """``scoring.tie_hash`` for many ids at once (one sha1 per id, the only per-id Python work)."""
    sha1 = hashlib.sha1
    digests = b"".join(
        [sha1((x if isinstance(x, str) else str(x)).encode("utf-8")).digest()[:4] for x in ids]
    )
    return np.frombuffer(digests, dtype=">u4").astype(np.float64) / 2**32


def _scores_array(scores):
    s = np.asarray(scores, dtype=np.float64).ravel()
    if s.size and not np.all(np.isfinite(s)):
        raise CalibrationError("scores must be finite numbers")
    return np.round(s, scoring.SCORE_DECIMALS)


def _hashes_at(positions, ids, hashes):
    if hashes is not None:
        return np.asarray(hashes, dtype=np.float64)[positions]
    return tie_hashes(ids[j] for j in positions)


# --------------------------------------------------------------------------- the fit


@dataclass
class Fit:
    """A fitted surfacing rule and how it does on the data it was fitted on."""

    threshold: float
    tie_fraction: float
    target: float
    achieved_rate: float
    n: int
    n_above: int  # strictly above the threshold: always surface
    n_ties: int  # exactly at the threshold
    n_tie_surfaced: int  # ties whose id hash falls under the tie fraction

    def as_dict(self):
        return asdict(self)


def check_target(target):
    try:
        target = float(target)
    except (TypeError, ValueError):
        raise CalibrationError("target must be a number between 0 and 1") from None
    if not 0.0 <= target <= 1.0:
        raise CalibrationError("target must be between 0 and 1")
    return target


def fit_threshold(scores, target=DEFAULT_TARGET, ids=None, hashes=None):
    """The threshold and tie fraction whose surfaced share is closest to ``target``.

    A finding surfaces when its score is above the threshold, or equal to it and the
    stable hash of its id is under the tie fraction (``scoring.reaches_threshold``).
    Give the finding ``ids`` (or their precomputed ``hashes``) to have the tie fraction
    split the tied findings exactly; without them the tie fraction is the ideal share
    k/m of the ties and the achieved rate is what that split would give.
    """
    target = check_target(target)
    s = _scores_array(scores)
    n = s.size
    if n == 0:
        raise CalibrationError("no scores to fit: need at least one two-way finding")
    if ids is not None and len(ids) != n:
        raise CalibrationError("ids and scores must have the same length")
    if hashes is not None and len(hashes) != n:
        raise CalibrationError("hashes and scores must have the same length")

    values, counts = _value_counts(s)  # ascending

    def tie_stats(threshold, k):
        tied = _hashes_at(np.flatnonzero(s == threshold), ids, hashes)
        part = np.partition(tied, (k - 1, k))
        lo, hi = part[k - 1], part[k]
        if lo < hi:
            return lo, hi, None, None
        return lo, hi, int(np.count_nonzero(tied < hi)), int(np.count_nonzero(tied <= hi))

    return fit_from_histogram(
        values, counts, target, None if ids is None and hashes is None else tie_stats
    )


def fit_from_histogram(values, counts, target, tie_stats=None):
    """The fit of :func:`fit_threshold` from a score histogram (distinct values ascending,
    their counts), for engines that count scores where the data lives (DuckDB, Spark).

    ``tie_stats(threshold, k)`` is asked only when the tied findings must be split: it
    returns the k-th and (k+1)-th smallest tie hashes at the threshold and, when those two
    are equal, how many hashes are below and at most the larger one. Without it the tie
    fraction is the ideal share k/m.
    """
    target = check_target(target)
    values = np.asarray(values, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if n == 0:
        raise CalibrationError("no scores to fit: need at least one two-way finding")
    at_or_above = np.cumsum(counts[::-1])[::-1]
    above = at_or_above - counts
    wanted = target * n
    # The highest score value whose "at or above" count still reaches the wanted count.
    idx = int(np.searchsorted(-at_or_above, -wanted, side="right")) - 1
    idx = max(idx, 0)
    threshold = float(values[idx])
    m = int(counts[idx])
    n_above = int(above[idx])
    k = int(np.clip(np.floor(wanted - n_above + 0.5), 0, m))

    if k == 0:
        fraction, surfaced_ties = 0.0, 0
    elif k == m:
        fraction, surfaced_ties = 1.0, m
    elif tie_stats is None:
        fraction, surfaced_ties = k / m, k
    else:
        fraction, surfaced_ties = _split_ties(k, m, *tie_stats(threshold, k))
    return Fit(
        threshold=threshold,
        tie_fraction=float(fraction),
        target=target,
        achieved_rate=(n_above + surfaced_ties) / n,
        n=n,
        n_above=n_above,
        n_ties=m,
        n_tie_surfaced=int(surfaced_ties),
    )


def _value_counts(s):
    """Distinct values and their counts, ascending.

    Additive scores are small integers: counting them with bincount is linear, where
    np.unique would sort a million floats. Other scores fall back to np.unique.
    """
    if s.size:
        low, high = s.min(), s.max()
        if high - low <= 4096 and low == np.floor(low):
            as_int = (s - low).astype(np.int64)
            if np.array_equal(as_int + low, s):
                counts = np.bincount(as_int)
                present = np.flatnonzero(counts)
                return present + low, counts[present]
    return np.unique(s, return_counts=True)


def _split_ties(k, m, lo, hi, below, upto):
    """A fraction f with exactly k of the m tied hashes below it, as near k/m as possible.

    Hashes are uniform, so the fraction nearest k/m surfaces the same share of ties on
    new data. Only the k-th (``lo``) and (k+1)-th (``hi``) smallest hashes matter (a
    partition, not a sort). Duplicate ids can make k unreachable (``lo == hi``); then the
    nearest reachable count wins, from how many hashes are below (``below``) and at most
    (``upto``) ``hi``.
    """
    if lo < hi:
        fraction = min(max(k / m, float(np.nextafter(lo, 1.0))), float(hi))
        return fraction, k
    if k - below <= upto - k:
        return float(hi), below
    return (1.0 if upto == m else float(np.nextafter(hi, 1.0))), upto


def surfaced_mask(scores, threshold, tie_fraction, ids=None, hashes=None):
    """Boolean array: which findings reach the threshold under the tie rule."""
    s = _scores_array(scores)
    t = round(float(threshold), scoring.SCORE_DECIMALS)
    mask = s > t
    tie = np.flatnonzero(s == t)
    if tie.size and tie_fraction > 0:
        if ids is None and hashes is None:
            raise CalibrationError(
                "ids or hashes are needed to decide findings tied at the threshold"
            )
        mask[tie[_hashes_at(tie, ids, hashes) < tie_fraction]] = True
    return mask


def surface_rate_curve(scores):
    """(values, share surfacing at "score >= value") for every distinct score, ascending."""
    s = _scores_array(scores)
    values, counts = np.unique(s, return_counts=True)
    return values, np.cumsum(counts[::-1])[::-1] / max(s.size, 1)


def recall_curve(scores, overridden):
    """(values, surface share, override recall) for "score >= value" at each distinct value."""
    s = _scores_array(scores)
    o = np.asarray(overridden, dtype=bool)
    values, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    hits = np.bincount(inverse, weights=o, minlength=values.size)
    rate = np.cumsum(counts[::-1])[::-1] / max(s.size, 1)
    total = o.sum()
    recall = np.cumsum(hits[::-1])[::-1] / total if total else np.full(values.size, np.nan)
    return values, rate, recall


# --------------------------------------------------------------------------- evaluation


def session_codes(session_ids):
    """Dense integer codes for session ids (and the number of sessions)."""
    uniques, codes = np.unique(
        np.asarray(session_ids, dtype=object).astype(str), return_inverse=True
    )
    return codes, uniques.size


def bootstrap_rate(surfaced, sessions, resamples=DEFAULT_RESAMPLES, seed=0, level=0.95):
    """Percentile interval of the surfaced share, resampling whole sessions.

    Findings of one session are not independent (one plan, one mood), so sessions are
    the unit drawn with replacement. Returns (low, high, samples).
    """
    surfaced = np.asarray(surfaced, dtype=np.float64)
    codes, n_sessions = session_codes(sessions)
    if surfaced.size == 0:
        raise CalibrationError("no findings to bootstrap")
    per_n = np.bincount(codes, minlength=n_sessions).astype(np.float64)
    per_hit = np.bincount(codes, weights=surfaced, minlength=n_sessions)
    rng = np.random.default_rng(seed)
    # Draw in blocks so a million sessions never needs a resamples x sessions matrix.
    block = max(1, min(resamples, 4_000_000 // max(n_sessions, 1)))
    samples = []
    done = 0
    while done < resamples:
        b = min(block, resamples - done)
        pick = rng.integers(0, n_sessions, size=(b, n_sessions))
        samples.append(per_hit[pick].sum(axis=1) / per_n[pick].sum(axis=1))
        done += b
    samples = np.concatenate(samples)
    tail = (1.0 - level) / 2.0 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high), samples


def override_recall(surfaced, overridden):
    """Share of overridden decisions the rule would have surfaced (None when there are none)."""
    o = np.asarray(overridden, dtype=bool)
    if not o.any():
        return None
    return float(np.asarray(surfaced, dtype=bool)[o].mean())


def interruptions(sessions, phases, one_way, gate, eligible, cap=RANK_CAP_PER_PHASE):
    """Questions asked per session and per phase: ask everything vs the pacing rule.

    Before, every finding is a question. After, one-way findings and approval/migration
    gates are always asked, plus at most ``cap`` eligible two-way findings per phase.
    """
    codes, n_sessions = session_codes(sessions)
    phases = np.asarray(phases, dtype=object).astype(str)
    phase_names, phase_codes = np.unique(phases, return_inverse=True)
    one_way = np.asarray(one_way, dtype=bool)
    gate = np.asarray(gate, dtype=bool) & ~one_way
    ranked = np.asarray(eligible, dtype=bool) & ~one_way & ~gate
    group = codes * phase_names.size + phase_codes
    size = n_sessions * phase_names.size
    before = np.bincount(group, minlength=size)
    always = np.bincount(group, weights=one_way | gate, minlength=size)
    after = always + np.minimum(np.bincount(group, weights=ranked, minlength=size), cap)
    present = before > 0
    per_phase = {}
    for p, name in enumerate(phase_names):
        rows = present.reshape(n_sessions, -1)[:, p]
        if rows.any():
            per_phase[str(name)] = {
                "phases": int(rows.sum()),
                "before": float(before.reshape(n_sessions, -1)[rows, p].mean()),
                "after": float(after.reshape(n_sessions, -1)[rows, p].mean()),
            }
    return {
        "sessions": int(n_sessions),
        "per_session": {
            "before": float(before.sum() / max(n_sessions, 1)),
            "after": float(after.sum() / max(n_sessions, 1)),
        },
        "per_phase": dict(sorted(per_phase.items(), key=lambda kv: _phase_order(kv[0]))),
    }


def _phase_order(name):
    return PHASES.index(name) if name in PHASES else len(PHASES)


# --------------------------------------------------------------------------- decision matters


def override_rates(question_ids, overridden, answered=None):
    """Per question id: answered count, overridden count and override rate (1 - followed share).

    Only decisions the user made count (``answered``); auto-decided rows always "follow".
    Returns a list of dicts, most overridden first.
    """
    q = np.asarray(question_ids, dtype=object).astype(str)
    o = np.asarray(overridden, dtype=np.float64)
    keep = np.ones(q.size, dtype=bool) if answered is None else np.asarray(answered, dtype=bool)
    names, inverse = np.unique(q[keep], return_inverse=True)
    n = np.bincount(inverse, minlength=names.size)
    hits = np.bincount(inverse, weights=o[keep], minlength=names.size)
    out = [
        {
            "question_id": str(name),
            "answered": int(a),
            "overridden": int(h),
            "override_rate": float(h / a),
        }
        for name, a, h in zip(names, n, hits)
    ]
    out.sort(key=lambda r: (-r["override_rate"], -r["answered"], r["question_id"]))
    return out


def decision_matters_from_override_rate(rate):
    """0, 1 or 2 from a historical override rate (vectorised)."""
    return np.digitize(np.asarray(rate, dtype=np.float64), DECISION_MATTERS_CUTS)


def fit_weights(severity, irreversibility, decision_matters, overridden):
    """Score weights from a logistic regression of "overridden" on the three factors.

    A factor that makes overrides more likely earns weight; negative effects are clipped
    to 0. Weights are scaled to sum to 3 so a weighted score stays on the additive scale.
    """
    y = np.asarray(overridden, dtype=np.float64)
    hits = int(y.sum())
    if hits < MIN_OVERRIDES_FOR_WEIGHTS or y.size - hits < MIN_OVERRIDES_FOR_WEIGHTS:
        raise CalibrationError(
            f"not enough overridden decisions to fit weights (need {MIN_OVERRIDES_FOR_WEIGHTS} "
            f"overridden and {MIN_OVERRIDES_FOR_WEIGHTS} followed, have {hits} and {y.size - hits})"
        )
    x = np.column_stack(
        [
            np.ones(y.size),
            np.asarray(severity, dtype=np.float64),
            np.asarray(irreversibility, dtype=np.float64),
            np.asarray(decision_matters, dtype=np.float64),
        ]
    )
    beta = np.zeros(4)
    ridge = 1e-3 * np.eye(4)  # keeps Newton steps finite when a factor perfectly separates
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        w = p * (1.0 - p)
        step = np.linalg.solve(x.T @ (x * w[:, None]) + ridge, x.T @ (y - p) - ridge @ beta)
        beta += step
        if np.max(np.abs(step)) < 1e-9:
            break
    coef = np.clip(beta[1:], 0.0, None)
    if coef.sum() <= 0:
        raise CalibrationError("cannot fit weights: no factor makes overrides more likely")
    coef = coef / coef.sum() * 3.0
    return {name: round(float(c), 3) for name, c in zip(scoring.FACTORS, coef)}
