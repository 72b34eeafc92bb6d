"""Fit the pacing threshold from recorded findings (numpy; no pandas in here).

The pacing rule asks the user about a two-way finding when its score reaches the
threshold. ``fit_threshold`` picks the threshold (and, because scores are small integers
that tie a lot, a tie fraction) so that the share of two-way findings that surface is as
close to the target as the data allows. The rule is exactly the one in
``toolkit.scoring.reaches_threshold``; this module only evaluates it for many findings at
once:

* scores of a weighted function come from a 27-entry table built with ``scoring.score``
  itself, so the rounding at the threshold is identical to the hot path;
* the tie hash (sha1 of the finding id) is computed only for the findings sitting exactly
  at the threshold, once per id; the rest of the fit works on plain score arrays.

Around the fit: a by-session bootstrap interval for the achieved rate, override recall
(how many of the decisions the user overrode the rule would have asked about), the
interruptions per session and per phase before and after pacing, per-question override
rates (evidence that a decision matters to the user) and a logistic fit of score weights.
"""

import hashlib
import json
from dataclasses import asdict, dataclass

import numpy as np

from toolkit.store import db
from toolkit.core import identity, scoring

DEFAULT_TARGET = 0.20
ROWS_KEY = "_rows"
DEFAULT_RESAMPLES = 1000
RANK_CAP_PER_PHASE = 3
PHASES = ("ceo", "design", "eng", "dx", "other", "unknown")
GATE_KINDS = ("approval", "migration")
SCORE_FUNCTIONS = ("additive", "weighted")
# Override-rate cut points for "does this decision matter to the user" (0, 1, 2): a question
# the user overrides at least one time in ten is one they want a say in.
DECISION_MATTERS_CUTS = (0.10, 0.25)
MIN_ANSWERED_FOR_RATE = 5
MIN_OVERRIDES_FOR_WEIGHTS = 10
# The guard: a calibration is stored only when the 95% interval of its achieved rate
# (resampling whole sessions) is narrower than this many points either side.
MAX_HALF_WIDTH = 0.05


class CalibrationError(ValueError):
    """A calibration that cannot be done, explained in one sentence."""


# --------------------------------------------------------------------------- scores


def score_table(function=scoring.DEFAULT_SCORE_FUNCTION, weights=None):
    """All 27 possible scores, indexed by severity*9 + irreversibility*3 + decision_matters."""
    if function not in SCORE_FUNCTIONS:
        raise CalibrationError(f"unknown score function {function!r} (expected additive or weighted)")
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
    digests = b"".join([sha1((x if isinstance(x, str) else str(x)).encode("utf-8")).digest()[:4] for x in ids])
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


def _check_target(target):
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
    target = _check_target(target)
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

    return fit_from_histogram(values, counts, target,
                              None if ids is None and hashes is None else tie_stats)


def fit_from_histogram(values, counts, target, tie_stats=None):
    """The fit of :func:`fit_threshold` from a score histogram (distinct values ascending,
    their counts), for engines that count scores where the data lives (DuckDB, Spark).

    ``tie_stats(threshold, k)`` is asked only when the tied findings must be split: it
    returns the k-th and (k+1)-th smallest tie hashes at the threshold and, when those two
    are equal, how many hashes are below and at most the larger one. Without it the tie
    fraction is the ideal share k/m.
    """
    target = _check_target(target)
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
            raise CalibrationError("ids or hashes are needed to decide findings tied at the threshold")
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
    uniques, codes = np.unique(np.asarray(session_ids, dtype=object).astype(str), return_inverse=True)
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
        {"question_id": str(name), "answered": int(a), "overridden": int(h), "override_rate": float(h / a)}
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
    x = np.column_stack([
        np.ones(y.size),
        np.asarray(severity, dtype=np.float64),
        np.asarray(irreversibility, dtype=np.float64),
        np.asarray(decision_matters, dtype=np.float64),
    ])
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


# --------------------------------------------------------------------------- data and runs


def load_findings(conn, project=None, since=None, include_synthetic=False):
    """Findings from the ``finding_scores`` view as a dict of numpy arrays."""
    rows = conn.execute(
        "SELECT project, session_id, phase, finding_id, question_id, severity, irreversibility,"
        " decision_matters, door_type, kind, overridden, answered, synthetic, created_at"
        " FROM finding_scores"
        " WHERE (:project IS NULL OR project = :project)"
        " AND (:since IS NULL OR created_at >= :since)"
        " AND (:synthetic OR synthetic = 0)"
        " ORDER BY created_at, id",
        {"project": project, "since": since, "synthetic": 1 if include_synthetic else 0},
    ).fetchall()
    cols = ("project", "session_id", "phase", "finding_id", "question_id", "severity", "irreversibility",
            "decision_matters", "door_type", "kind", "overridden", "answered", "synthetic", "created_at")
    data = {c: [r[j] for r in rows] for j, c in enumerate(cols)}
    out = {c: np.asarray(data[c], dtype=object) for c in ("project", "session_id", "phase", "finding_id",
                                                          "question_id", "door_type", "kind", "created_at")}
    for c in ("severity", "irreversibility", "decision_matters"):
        out[c] = np.asarray(data[c], dtype=np.int64)
    for c in ("overridden", "answered", "synthetic"):
        out[c] = np.asarray(data[c], dtype=bool)
    out["n"] = len(rows)
    return out


def _describe_filters(project, since, include_synthetic, n_synthetic):
    text = f" for project {project}" if project else ""
    if since:
        text += f" since {since}"
    if not include_synthetic and n_synthetic:
        text += f"; {n_synthetic:,} simulated findings were left out, add --include-synthetic to use them"
    return text


def calibrate(findings, target=DEFAULT_TARGET, score_function="additive", weights=None, fit_score_weights=False,
              resamples=DEFAULT_RESAMPLES, seed=0):
    """Fit the threshold on loaded findings and measure it. Returns a report dict."""
    target = _check_target(target)
    if score_function not in SCORE_FUNCTIONS:
        raise CalibrationError(f"unknown score function {score_function!r} (expected additive or weighted)")
    if resamples < 1:
        raise CalibrationError("resamples must be at least 1")
    one_way = findings["door_type"] == "one-way"
    gate = np.isin(findings["kind"], GATE_KINDS)
    two_way = ~one_way & ~gate  # the findings the threshold decides
    n_two_way = int(two_way.sum())
    if n_two_way == 0:
        raise CalibrationError("no two-way findings to calibrate on")

    sev, irr, dm = findings["severity"], findings["irreversibility"], findings["decision_matters"]
    overridden = findings["overridden"]
    if fit_score_weights:
        score_function = "weighted"
        weights = fit_weights(sev[two_way], irr[two_way], dm[two_way], overridden[two_way])
    elif score_function == "weighted":
        weights = dict(weights or {})
    else:
        weights = {}
    scores_all = score_findings(sev, irr, dm, score_function, weights or None)
    scores = scores_all[two_way]
    ids = findings["finding_id"][two_way]
    fit = fit_threshold(scores, target, ids=ids)

    eligible = np.zeros(findings["n"], dtype=bool)
    eligible[two_way] = surfaced_mask(scores, fit.threshold, fit.tie_fraction, ids=ids)
    surfaced = eligible[two_way]
    low, high, _ = bootstrap_rate(surfaced, findings["session_id"][two_way], resamples, seed)
    recall = override_recall(surfaced, overridden[two_way])
    rates = override_rates(findings["question_id"][two_way], overridden[two_way], findings["answered"][two_way])
    values, counts = np.unique(scores, return_counts=True)
    created = findings["created_at"]
    return {
        "target": target,
        "score_function": score_function,
        "weights": weights,
        "threshold": fit.threshold,
        "tie_fraction": fit.tie_fraction,
        "achieved_rate": fit.achieved_rate,
        "ci_low": low,
        "ci_high": high,
        "n_findings": n_two_way,
        "n_sessions": int(np.unique(findings["session_id"][two_way].astype(str)).size),
        "n_synthetic": int(findings["synthetic"][two_way].sum()),
        "n_above": fit.n_above,
        "n_ties": fit.n_ties,
        "n_tie_surfaced": fit.n_tie_surfaced,
        "n_overridden": int(overridden[two_way].sum()),
        "override_recall": recall,
        "random_recall": fit.achieved_rate,
        "window_start": str(min(created)) if created.size else None,
        "window_end": str(max(created)) if created.size else None,
        "score_counts": {_fmt_score(v): int(c) for v, c in zip(values, counts)},
        "interruptions": interruptions(findings["session_id"], findings["phase"], one_way, gate, eligible),
        "most_overridden": [
            dict(r, decision_matters=int(decision_matters_from_override_rate(r["override_rate"])))
            for r in rates if r["answered"] >= MIN_ANSWERED_FOR_RATE
        ][:5],
        "bootstrap": {"unit": "session", "resamples": resamples, "seed": seed, "level": 0.95},
        # The two-way rows the fit used, for notebook plots (never stored or printed).
        ROWS_KEY: {
            "score": scores, "id": ids, "surfaced": surfaced, "overridden": overridden[two_way],
            "session_id": findings["session_id"][two_way], "question_id": findings["question_id"][two_way],
            "answered": findings["answered"][two_way], "decision_matters": dm[two_way],
        },
    }


def _fmt_score(v):
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def run(conn, target=DEFAULT_TARGET, project=None, since=None, include_synthetic=False, score_function="additive",
        weights=None, fit_score_weights=False, resamples=DEFAULT_RESAMPLES, seed=0, holdout_days=None):
    """Load the findings that match the filters and calibrate on them.

    With ``holdout_days`` the fit uses the older findings and the report adds how the
    rule does on the last ``holdout_days`` days.
    """
    findings = load_findings(conn, project, since, include_synthetic)
    held = cut = None
    if holdout_days is not None and findings["n"]:
        older, cut = split_days(findings["created_at"], holdout_days)
        held = _rows(findings, ~older)
        findings = _rows(findings, older)
    if findings["n"] == 0 or not np.any(
        (findings["door_type"] != "one-way") & ~np.isin(findings["kind"], GATE_KINDS)
    ):
        n_synthetic = 0
        if not include_synthetic:
            n_synthetic = conn.execute(
                "SELECT count(*) FROM finding_scores WHERE synthetic = 1"
                " AND (:project IS NULL OR project = :project) AND (:since IS NULL OR created_at >= :since)",
                {"project": project, "since": since},
            ).fetchone()[0]
        raise CalibrationError(
            "no two-way findings to calibrate on" + _describe_filters(project, since, include_synthetic, n_synthetic)
        )
    report = calibrate(findings, target, score_function, weights, fit_score_weights, resamples, seed)
    report.update({
        "project": project or db.GLOBAL_SCOPE,
        "since": since,
        "include_synthetic": bool(include_synthetic),
        "calibration_id": None,
        "source": "findings",
        "holdout": None,
    })
    if held is not None:
        report["holdout"] = evaluate_holdout(held, report, holdout_days, cut, resamples, seed)
    return report


def confidence(report):
    """Whether the fit is precise enough to store, and how much more data would make it so.

    The guard is the session-bootstrap 95% interval of the achieved rate: it must be
    narrower than ±``MAX_HALF_WIDTH``. An interval shrinks about as one over the square
    root of the number of sessions, which gives the estimate of sessions still needed.
    """
    low, high, n_sessions = report["ci_low"], report["ci_high"], report["n_sessions"]
    if low is None or high is None:
        half = None
    else:
        half = (high - low) / 2.0
    ok = half is not None and half < MAX_HALF_WIDTH
    out = {"ok": bool(ok), "half_width": half, "max_half_width": MAX_HALF_WIDTH,
           "sessions_needed": 0, "findings_needed": 0}
    if not ok:
        n = max(int(n_sessions or 0), 1)
        # Squared ratio of widths, with a little margin since the interval itself is noisy;
        # an interval of width 0 from one session says nothing, so ask for more sessions.
        ratio = (half / MAX_HALF_WIDTH) if half else 2.0
        total = max(n + 1, int(np.ceil(n * (ratio * 1.1) ** 2)))
        per_session = report["n_findings"] / n if report["n_findings"] else 1.0
        out["sessions_needed"] = total - n
        out["findings_needed"] = int(np.ceil(out["sessions_needed"] * per_session))
    return out


def guard_message(report, check):
    """Why a fit may not be stored, and how much more data it needs (one paragraph)."""
    if check["half_width"] is None:
        width = "could not be measured"
    else:
        width = (f"is {_pct(report['ci_low'])} to {_pct(report['ci_high'])} "
                 f"(±{100 * check['half_width']:.1f} points)")
    return (
        f"not stored: the 95% interval of the share asked {width}, wider than the "
        f"±{100 * MAX_HALF_WIDTH:.0f} points a calibration needs; fitted on "
        f"{report['n_findings']:,} {_noun(report)} from {report['n_sessions']:,} sessions. "
        f"About {check['sessions_needed']:,} more sessions (about {check['findings_needed']:,} more "
        f"{_noun(report)}) should narrow it enough; or store it anyway with --force "
        "(marked low_confidence)"
    )


def _rows(arrays, mask):
    out = {k: (v[mask] if isinstance(v, np.ndarray) else v) for k, v in arrays.items()}
    out["n"] = int(np.count_nonzero(mask))
    return out


# --------------------------------------------------------------------------- question-log source

SOURCES = ("findings", "question-log")


def has_findings(conn, project=None, since=None, include_synthetic=False):
    """True when there are two-way findings (not gates) to fit on under these filters."""
    row = conn.execute(
        "SELECT 1 FROM finding_scores WHERE door_type != 'one-way' AND kind NOT IN ('approval', 'migration')"
        " AND (:project IS NULL OR project = :project) AND (:since IS NULL OR created_at >= :since)"
        " AND (:synthetic OR synthetic = 0) LIMIT 1",
        {"project": project, "since": since, "synthetic": 1 if include_synthetic else 0},
    ).fetchone()
    return row is not None


def has_answered_questions(conn, project=None, since=None, include_synthetic=False):
    """True when the question log holds answered questions no verdict calls one-way."""
    from toolkit.core import question_scores as qs

    row = conn.execute(
        "SELECT 1 FROM question_log WHERE source IN (" + ", ".join("?" * len(qs.ANSWER_SOURCES)) + ")"
        " AND coalesce(door_class, '') != 'one-way' AND coalesce(door_type, '') != 'one-way'"
        " AND (? IS NULL OR project = ?) AND (? IS NULL OR ts >= ?) AND (? OR synthetic = 0) LIMIT 1",
        (*qs.ANSWER_SOURCES, project, project, since, since, 1 if include_synthetic else 0),
    ).fetchone()
    return row is not None


def choose_source(conn, source, project=None, since=None, include_synthetic=False):
    """``auto`` means findings when there are any, else the question log when it has
    answered questions, else findings (whose error then says what is missing)."""
    if source == "auto":
        if has_findings(conn, project, since, include_synthetic):
            return "findings"
        if has_answered_questions(conn, project, since, include_synthetic):
            return "question-log"
        return "findings"
    if source not in SOURCES:
        raise CalibrationError(f"unknown source {source!r} (expected findings, question-log or auto)")
    return source


def run_source(conn, source="auto", target=DEFAULT_TARGET, project=None, since=None, include_synthetic=False,
               score_function=None, weights=None, resamples=DEFAULT_RESAMPLES, seed=0, holdout_days=None):
    """Calibrate from ``source`` (findings, question-log or auto); the report names the source used.

    For findings the score function defaults to additive (weights fitted when weighted
    is asked without weights); for the question log, to weighted with fitted weights.
    """
    chosen = choose_source(conn, source, project, since, include_synthetic)
    if chosen == "question-log":
        report = run_question_log(conn, target, project, since, include_synthetic, score_function, weights,
                                  resamples=resamples, seed=seed, holdout_days=holdout_days)
    else:
        function = score_function or "additive"
        report = run(conn, target, project, since, include_synthetic, function, weights,
                     fit_score_weights=function == "weighted" and weights is None, resamples=resamples, seed=seed,
                     holdout_days=holdout_days)
    report["source_asked"] = source
    return report


def public(report):
    """The report without the row arrays (what is printed and stored)."""
    return {k: v for k, v in report.items() if k != ROWS_KEY}


def _as_findings(ev, scores):
    """Scored question-log events in the shape ``calibrate`` takes (one 'finding' each)."""
    return {
        "project": ev["project"], "session_id": ev["session"], "phase": ev["phase"],
        "finding_id": ev["event_key"], "question_id": ev["question_key"], "door_type": ev["door"],
        "kind": np.full(ev["n"], "finding", dtype=object), "created_at": ev["ts"],
        "severity": scores.severity, "irreversibility": scores.irreversibility,
        "decision_matters": scores.decision_matters, "overridden": ev["overridden"], "answered": ev["labelled"],
        "synthetic": np.asarray(ev["synthetic"], dtype=bool), "n": ev["n"],
    }


def _holdout_cut(days, holdout_days):
    """The last day of the fit window: ``holdout_days`` days before the newest valid day."""
    from datetime import date, timedelta

    valid = [d for d in days if _is_day(d)]
    if not valid:
        raise CalibrationError("no dated history to hold out from")
    newest = date.fromisoformat(max(valid))
    return (newest - timedelta(days=holdout_days)).isoformat()


def _is_day(day):
    from datetime import date

    try:
        date.fromisoformat(day)
    except ValueError:
        return False
    return True


def run_question_log(conn, target=DEFAULT_TARGET, project=None, since=None, include_synthetic=False,
                     score_function=None, weights=None, resamples=DEFAULT_RESAMPLES, seed=0, holdout_days=None):
    """Calibrate on answered two-way questions of the question log (see ``question_scores``).

    The score function defaults to weighted with weights fitted on the history (the
    logistic fit of overrides on the three factors), falling back to additive when there
    are too few overrides. With ``holdout_days`` the fit uses only the older history
    (its answers are the only evidence) and the report adds the achieved rate, its
    interval and override recall on the last ``holdout_days`` days.
    """
    from toolkit.core import question_scores as qs

    target = _check_target(target)
    ev = qs.load_events(conn, project, since, include_synthetic)
    asked = ev["answered"]
    if not np.any(asked & (ev["door"] == "two-way")):
        raise CalibrationError(
            "no answered two-way questions in the question log to calibrate on"
            + _describe_filters(project, since, include_synthetic, 0)
        )
    in_fit = np.ones(ev["n"], dtype=bool)
    cut = None
    if holdout_days is not None:
        in_fit, cut = split_days(ev["day"], holdout_days)
        if not np.any(in_fit & asked & (ev["door"] == "two-way")):
            raise CalibrationError(f"no answered two-way questions up to {cut}: choose a smaller --holdout-days")
    fitted = in_fit & asked & (ev["door"] == "two-way")
    scores = qs.score_events(ev, in_fit & ev["labelled"], fitted, target)
    notes = []
    fit_weights_now = score_function is None or (score_function == "weighted" and weights is None)
    function = score_function or "weighted"
    if fit_weights_now:
        two_way_fit = fitted
        try:
            weights = fit_weights(scores.severity[two_way_fit], scores.irreversibility[two_way_fit],
                                  scores.decision_matters[two_way_fit], ev["overridden"][two_way_fit])
            function = "weighted"
        except CalibrationError as e:
            if score_function == "weighted":
                raise
            notes.append(f"additive score used: {e}")
            function, weights = "additive", None
    fit_rows = in_fit & asked
    if not np.any(fit_rows & (ev["door"] == "two-way")):
        raise CalibrationError("no answered two-way questions to calibrate on")
    findings = _as_findings(_rows(ev, fit_rows), _subset_scores(scores, fit_rows))
    report = calibrate(findings, target, function, weights, False, resamples, seed)
    report.update({
        "source": "question-log",
        "project": project or db.GLOBAL_SCOPE,
        "since": since,
        "include_synthetic": bool(include_synthetic),
        "calibration_id": None,
        "matters_cuts": list(scores.matters_cuts),
        "notes": notes,
        "scorer": "question_scores (leave-one-out override evidence)",
        "holdout": None,
    })
    if cut is not None:
        rows = ~in_fit & asked
        held = _as_findings(_rows(ev, rows), _subset_scores(scores, rows))
        report["holdout"] = evaluate_holdout(held, report, holdout_days, cut, resamples, seed)
    return report


def _subset_scores(scores, mask):
    from toolkit.core import question_scores as qs

    return qs.Scores(scores.severity[mask], scores.irreversibility[mask], scores.decision_matters[mask],
                     scores.override_estimate[mask], scores.matters_cuts, {})


def evaluate_holdout(findings, report, days, after, resamples=DEFAULT_RESAMPLES, seed=0):
    """Apply a fitted rule, unchanged, to held-out rows (same shape as ``load_findings``)."""
    one_way = findings["door_type"] == "one-way"
    gate = np.isin(findings["kind"], GATE_KINDS)
    two_way = ~one_way & ~gate
    out = {"days": days, "after": after, "n_findings": int(two_way.sum())}
    if not two_way.any():
        raise CalibrationError(f"nothing to validate on in the last {days} days: choose another --holdout-days")
    values = score_findings(findings["severity"][two_way], findings["irreversibility"][two_way],
                            findings["decision_matters"][two_way], report["score_function"],
                            report["weights"] or None)
    ids = findings["finding_id"][two_way]
    surfaced = surfaced_mask(values, report["threshold"], report["tie_fraction"], ids=ids)
    sessions = findings["session_id"][two_way]
    low, high, _ = bootstrap_rate(surfaced, sessions, resamples, seed)
    eligible = np.zeros(findings["n"], dtype=bool)
    eligible[two_way] = surfaced
    out.update({
        "n_sessions": int(np.unique(sessions.astype(str)).size),
        "achieved_rate": float(surfaced.mean()),
        "ci_low": low,
        "ci_high": high,
        "n_overridden": int(findings["overridden"][two_way].sum()),
        "override_recall": override_recall(surfaced, findings["overridden"][two_way]),
        "random_recall": float(surfaced.mean()),
        "interruptions": interruptions(findings["session_id"], findings["phase"], one_way, gate, eligible),
    })
    return out


def split_days(days, holdout_days):
    """(mask of the older rows to fit on, last fitted day) for ``--holdout-days``."""
    if holdout_days < 1:
        raise CalibrationError("--holdout-days must be at least 1")
    if len(days) == 0:
        raise CalibrationError("no history to split")
    days = [str(d)[:10] for d in days]
    cut = _holdout_cut(days, holdout_days)
    # A row whose time is not a date (gstack does not check `ts`) stays with the older rows.
    older = np.asarray([d <= cut or not _is_day(d) for d in days], dtype=bool)
    if not older.any():
        raise CalibrationError(f"the whole history is within the last {holdout_days} days: "
                               "choose a smaller --holdout-days")
    return older, cut


def explain_question(conn, question_id, target=DEFAULT_TARGET, project=None, include_synthetic=False):
    """Factors and evidence for the newest logged event of ``question_id`` (a dict)."""
    from toolkit.core import question_scores as qs

    from toolkit.core.doors import canonical_id

    ev = qs.load_events(conn, project, None, include_synthetic)
    hits = np.flatnonzero(ev["question_key"] == (canonical_id(question_id) or question_id))
    if hits.size == 0:
        raise CalibrationError(f"no logged question with id {question_id!r}")
    answered = hits[ev["answered"][hits]]
    i = int((answered if answered.size else hits)[-1])
    fitted = ev["answered"] & (ev["door"] == "two-way")
    scores = qs.score_events(ev, ev["labelled"], fitted, target)
    out = qs.explain(ev, scores, i)
    out["times_logged"] = int(hits.size)
    return out


def store(conn, report, fitted_on="own", developer=None):
    """Insert the calibration row for ``report`` and its 'fitted' event; returns its id.

    A fit that used any simulated finding is stored synthetic = 1, so it never ranks real
    findings. A fit that fails the confidence guard is stored low_confidence = 1: callers
    that enforce the guard (``plantune calibrate`` without --force) never get here with one.
    A team fit (``fitted_on='team'``) has no session bootstrap to guard with; it is in
    force only once pinned.
    """
    team = fitted_on == "team"
    low_confidence = not team and not confidence(report)["ok"]
    from toolkit.pacing import rank as pacing

    core = {"project", "target", "threshold", "tie_fraction", "score_function", "weights", "achieved_rate",
            "ci_low", "ci_high", "n_findings", "n_sessions", "override_recall", "window_start", "window_end",
            "include_synthetic", "calibration_id", "source"}
    details = {k: v for k, v in report.items() if k not in core and k != ROWS_KEY}
    synthetic = int(bool(report.get("n_synthetic")))
    now = db.utc_now()
    with db.transaction(conn):
        before = pacing.calibration_in_force(conn, report["project"], include_synthetic=bool(synthetic))
        cur = conn.execute(
            "INSERT INTO calibrations (project, created_at, target, threshold, tie_fraction, score_function,"
            " weights_json, achieved_rate, ci_low, ci_high, n_findings, n_sessions, override_recall,"
            " window_start, window_end, include_synthetic, details_json, source, synthetic, low_confidence,"
            " developer, fitted_on) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                report["project"], now, report["target"], report["threshold"], report["tie_fraction"],
                report["score_function"], json.dumps(report["weights"], sort_keys=True), report["achieved_rate"],
                report["ci_low"], report["ci_high"], report["n_findings"], report["n_sessions"],
                report["override_recall"], report["window_start"], report["window_end"],
                int(report["include_synthetic"]), json.dumps(details, sort_keys=True),
                report.get("source", "findings"), synthetic, int(bool(low_confidence)),
                developer or identity.developer(), fitted_on,
            ),
        )
        notes = ["team fit: in force only when pinned (calibrations use)"] if team else []
        if synthetic:
            notes.append("fitted on simulated findings: never ranks real ones")
        if low_confidence:
            notes.append("stored below the confidence guard (--force)")
        record_event(conn, report["project"], "fitted", cur.lastrowid,
                     before[0] if before else None, synthetic, "; ".join(notes), now)
    report["calibration_id"] = cur.lastrowid
    report["synthetic"] = bool(synthetic)
    report["low_confidence"] = bool(low_confidence)
    return cur.lastrowid


def record_event(conn, scope, event_type, calibration_id, previous_id, synthetic=0, detail="", now=None):
    """Append one calibration_events row (the caller's transaction)."""
    conn.execute(
        "INSERT INTO calibration_events (ts, scope, event_type, calibration_id, previous_id, synthetic,"
        " detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (now or db.utc_now(), scope, event_type, calibration_id, previous_id, int(bool(synthetic)), detail),
    )


# --------------------------------------------------------------------------- words


def _pct(x):
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _rule(report):
    t = report["threshold"]
    t_text = f"{t:g}"
    if report["score_function"] == "weighted":
        w = report["weights"]
        what = "weighted score (" + " + ".join(f"{w.get(k, 1.0):g}×{k.replace('_', ' ')}"
                                               for k in ("severity", "irreversibility", "decision_matters")) + ")"
    else:
        what = "score (severity + irreversibility + decision matters)"
    f = report["tie_fraction"]
    if f >= 1.0:
        return f"a two-way finding is asked about when its {what} is {t_text} or more"
    if f <= 0.0:
        return f"a two-way finding is asked about when its {what} is above {t_text}"
    return (f"a two-way finding is asked about when its {what} is above {t_text}, "
            f"or exactly {t_text} and its id hashes under {f:.3f} (about {100 * f:.0f}% of those ties)")


def _noun(report):
    return "answered two-way questions" if report.get("source") == "question-log" else "two-way findings"


def summary_lines(report):
    """The report in plain English, one sentence per line (CLI and notebook 02)."""
    where = "all projects" if report["project"] == db.GLOBAL_SCOPE else f"project {report['project']}"
    synthetic = "simulated data included" if report["include_synthetic"] else "real data only"
    window = f"{(report['window_start'] or '')[:10]} to {(report['window_end'] or '')[:10]}"
    source = report.get("source", "findings")
    lines = [
        (f"Fitted on {report['n_findings']:,} {_noun(report)} from {report['n_sessions']:,} sessions "
         f"({where}, {window}, {synthetic}; source: {source})."),
        f"Rule: {_rule(report)}.",
        (f"Share asked: {_pct(report['achieved_rate'])} (target {_pct(report['target'])}); "
         f"95% interval over resampled sessions {_pct(report['ci_low'])} to {_pct(report['ci_high'])}."),
    ]
    if source == "question-log":
        low, high = report["matters_cuts"]
        lines.append(
            "Factors come from the question log: severity from category, options and summary; "
            "irreversibility from the door and summary; decision matters from the override rate of "
            f"similar questions in other sessions (1 from {_pct(low)}, 2 from {_pct(high)})."
        )
    lines.extend(report.get("notes") or [])
    lines.append(_recall_line(report, "Override recall"))
    inter = report["interruptions"]
    lines.extend(_interruption_lines(inter))
    held = report.get("holdout")
    if held:
        lines.append(
            f"Held out the last {held['days']} days (after {held['after']}): {held['n_findings']:,} {_noun(report)} "
            f"from {held['n_sessions']:,} sessions; share asked {_pct(held['achieved_rate'])} "
            f"(95% interval {_pct(held['ci_low'])} to {_pct(held['ci_high'])})."
        )
        lines.append(_recall_line(held, "Held-out override recall"))
    if report["most_overridden"]:
        lines.append("Most overridden questions (evidence your decision matters there): " + ", ".join(
            f"{r['question_id']} {_pct(r['override_rate'])}" for r in report["most_overridden"][:3]
        ) + ".")
    return lines


def _recall_line(part, label):
    if part["override_recall"] is None:
        return f"{label}: no overridden decisions recorded."
    times = part["override_recall"] / part["random_recall"] if part["random_recall"] else float("nan")
    return (
        f"{label}: {_pct(part['override_recall'])} of the {part['n_overridden']:,} decisions you "
        f"overrode would be asked about; asking a random {_pct(part['random_recall'])} would catch "
        f"{_pct(part['random_recall'])} ({times:.1f}x random)."
    )


def _interruption_lines(inter):
    lines = [
        (f"Questions per session: {inter['per_session']['before']:.1f} if everything is asked, "
         f"{inter['per_session']['after']:.1f} with pacing (one-way and gates always, "
         "at most 3 ranked per phase).")
    ]
    if inter["per_phase"]:
        lines.append("Per phase: " + ", ".join(
            f"{name} {v['before']:.1f} → {v['after']:.1f}" for name, v in inter["per_phase"].items()
        ) + ".")
    return lines


def explain_lines(info):
    """``plantune calibrate --explain`` in plain English."""
    lines = [
        (f"Question {info['question_id']} (logged {info['times_logged']} times); "
         f"newest event {info['event_id']} at {info['ts']}: skill {info['skill']}, phase {info['phase']}, "
         f"category {info['category']}, {info['door']} door ({info['door_reason'] or 'unclassified'}), "
         f"{info['options_count'] if info['options_count'] is not None else 'unknown'} options."),
        f"Summary: {info['summary']}",
    ]
    for factor in ("severity", "irreversibility", "decision_matters"):
        lines.append(f"{factor.replace('_', ' ')} = {info[factor]}: " + "; ".join(info["why"][factor]) + ".")
    lines.append("Override evidence from other sessions (each level shrunk toward the one above):")
    for row in info["evidence"]:
        counts = "" if "others_answered" not in row else (
            f" ({row['others_overridden']:,} overridden of {row['others_answered']:,.0f} answered)")
        lines.append(f"  {row['level']}: {_pct(row['estimate'])}{counts}")
    return lines


def latest(conn, project=None, include_synthetic=False):
    """The calibration `pacing rank` would use for ``project`` (its own, else the global one)."""
    from toolkit.pacing import rank as pacing

    row = pacing.calibration_in_force(conn, project or db.GLOBAL_SCOPE, include_synthetic)
    if row is None:
        return None
    return dict(conn.execute("SELECT * FROM calibrations WHERE id = ?", (row[0],)).fetchone())


# --------------------------------------------------------------------------- managing calibrations


def get(conn, calibration_id):
    """One calibrations row as a dict (weights parsed), or raise CalibrationError."""
    row = conn.execute("SELECT * FROM calibrations WHERE id = ?", (calibration_id,)).fetchone()
    if row is None:
        raise CalibrationError(f"no calibration with id {calibration_id} (see `plantune calibrations list`)")
    out = dict(row)
    try:
        out["weights"] = json.loads(out.pop("weights_json"))
    except ValueError:
        out["weights"] = None
    details = out.pop("details_json", "{}")
    try:
        out["details"] = json.loads(details)
    except ValueError:
        out["details"] = {}
    for k in ("include_synthetic", "synthetic", "low_confidence"):
        out[k] = bool(out[k])
    return out


def listing(conn, project=None):
    """Every calibration (newest first) with whether it is pinned and in force for its scope."""
    from toolkit.pacing import rank as pacing

    rows = [dict(r) for r in conn.execute(
        "SELECT c.id, c.project AS scope, c.created_at, c.n_findings, c.n_sessions, c.threshold,"
        " c.tie_fraction, c.achieved_rate, c.ci_low, c.ci_high, c.override_recall, c.score_function,"
        " c.synthetic, c.low_confidence, p.scope IS NOT NULL AS pinned, c.source, c.developer,"
        " c.fitted_on, c.merged_from"
        " FROM calibrations c LEFT JOIN calibration_pins p ON p.calibration_id = c.id AND p.scope = c.project"
        " WHERE (:project IS NULL OR c.project = :project)"
        " ORDER BY c.created_at DESC, c.id DESC", {"project": project})]
    in_force = {}
    for scope in {r["scope"] for r in rows}:
        row = pacing.calibration_in_force(conn, scope)
        in_force[scope] = row[0] if row is not None and row[5] == scope else None
    for r in rows:
        r["active"] = in_force.get(r["scope"]) == r["id"]
        for k in ("synthetic", "low_confidence", "pinned"):
            r[k] = bool(r[k])
    return rows


def pin(conn, calibration_id, now=None):
    """Hold the calibration's scope to it; returns the event row written.

    A calibration fitted on simulated findings cannot be pinned outside a demo database:
    it would rank real findings.
    """
    from toolkit.pacing import rank as pacing

    c = get(conn, calibration_id)
    if c["synthetic"] and not db.is_demo(conn):
        raise CalibrationError(
            f"calibration {calibration_id} was fitted on simulated findings and never ranks real ones;"
            " fit one on real findings (`plantune calibrate`) or use a demo database"
        )
    now = now or db.utc_now()
    with db.transaction(conn):
        before = pacing.calibration_in_force(conn, c["project"])
        previous = before[0] if before is not None and before[5] == c["project"] else None
        conn.execute(
            "INSERT INTO calibration_pins (scope, calibration_id, pinned_at) VALUES (?, ?, ?)"
            " ON CONFLICT (scope) DO UPDATE SET calibration_id = excluded.calibration_id,"
            " pinned_at = excluded.pinned_at",
            (c["project"], calibration_id, now),
        )
        detail = "stored with --force below the confidence guard" if c["low_confidence"] else ""
        record_event(conn, c["project"], "pinned", calibration_id, previous, c["synthetic"], detail, now)
    return {"scope": c["project"], "calibration_id": calibration_id, "previous_id": previous,
            "low_confidence": c["low_confidence"]}


def unpin(conn, scope, now=None):
    """Release a scope's pin so its newest usable calibration is in force again."""
    from toolkit.pacing import rank as pacing

    now = now or db.utc_now()
    with db.transaction(conn):
        row = conn.execute("SELECT calibration_id FROM calibration_pins WHERE scope = ?", (scope,)).fetchone()
        if row is None:
            pinned = None
        else:
            pinned = row[0]
            conn.execute("DELETE FROM calibration_pins WHERE scope = ?", (scope,))
            now_in_force = pacing.calibration_in_force(conn, scope)
            current = now_in_force[0] if now_in_force is not None and now_in_force[5] == scope else None
            record_event(conn, scope, "unpinned", current, pinned, 0, "newest calibration in force", now)
    in_force = pacing.calibration_in_force(conn, scope)
    return {"scope": scope, "unpinned": pinned,
            "calibration_id": in_force[0] if in_force is not None else None}


def compare(conn, a_id, b_id, days=30, project=None):
    """Two calibrations side by side, applied to the same recent findings.

    The history is the last ``days`` days of two-way and other findings (ending at the
    newest finding), of ``project`` when given, else of the two calibrations' scope when
    they share a project, else of every project. Simulated findings are used only when
    one of the two calibrations was fitted on them.
    """
    a, b = get(conn, a_id), get(conn, b_id)
    include_synthetic = a["synthetic"] or b["synthetic"]
    if project is None and a["project"] == b["project"] and a["project"] != db.GLOBAL_SCOPE:
        project = a["project"]
    real = db.real_rows(None, include_synthetic)
    newest = conn.execute(
        f"SELECT max(created_at) FROM findings WHERE {real} AND (:p IS NULL OR project = :p)",
        {"p": project},
    ).fetchone()[0]
    history = {"project": project or db.GLOBAL_SCOPE, "days": days, "since": None, "until": newest,
               "findings": 0, "sessions": 0, "synthetic_included": bool(include_synthetic)}
    results = {}
    if newest is not None:
        since = conn.execute("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', ?, ?)",
                             (newest, f"-{int(days)} days")).fetchone()[0]
        history["since"] = since
        findings = load_findings(conn, project, since, include_synthetic)
        history["findings"] = findings["n"]
        history["sessions"] = int(np.unique(findings["session_id"].astype(str)).size) if findings["n"] else 0
        if findings["n"]:
            one_way = findings["door_type"] == "one-way"
            gate = np.isin(findings["kind"], GATE_KINDS)
            two_way = ~one_way & ~gate
            for key, c in (("a", a), ("b", b)):
                weights = c["weights"] if isinstance(c["weights"], dict) else {}
                scores = score_findings(findings["severity"], findings["irreversibility"],
                                        findings["decision_matters"], c["score_function"], weights or None)
                eligible = np.zeros(findings["n"], dtype=bool)
                eligible[two_way] = surfaced_mask(scores[two_way], c["threshold"], c["tie_fraction"],
                                                  ids=findings["finding_id"][two_way])
                rate = float(eligible[two_way].mean()) if two_way.any() else None
                results[key] = {
                    "share_asked": rate,
                    "interruptions": interruptions(findings["session_id"], findings["phase"], one_way, gate,
                                                   eligible),
                }
    return {"a": a, "b": b, "history": history, "applied": results}
