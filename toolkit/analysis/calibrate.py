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

import json

import numpy as np

from toolkit.analysis.fit import (
    DEFAULT_RESAMPLES,
    DEFAULT_TARGET,
    MAX_HALF_WIDTH,
    MIN_ANSWERED_FOR_RATE,
    MIN_DECISIONS,
    MIN_SESSIONS,
    ROWS_KEY,
    SCORE_FUNCTIONS,
    CalibrationError,
    bootstrap_rate,
    check_target,
    decision_matters_from_override_rate,
    fit_threshold,
    fit_weights,
    interruptions,
    override_rates,
    override_recall,
    score_findings,
    surfaced_mask,
)
from toolkit.core import identity
from toolkit.core.vocabulary import GATE_KINDS, plural
from toolkit.store import db

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
    cols = (
        "project",
        "session_id",
        "phase",
        "finding_id",
        "question_id",
        "severity",
        "irreversibility",
        "decision_matters",
        "door_type",
        "kind",
        "overridden",
        "answered",
        "synthetic",
        "created_at",
    )
    data = {c: [r[j] for r in rows] for j, c in enumerate(cols)}
    out = {
        c: np.asarray(data[c], dtype=object)
        for c in (
            "project",
            "session_id",
            "phase",
            "finding_id",
            "question_id",
            "door_type",
            "kind",
            "created_at",
        )
    }
    for c in ("severity", "irreversibility", "decision_matters"):
        out[c] = np.asarray(data[c], dtype=np.int64)
    for c in ("overridden", "answered", "synthetic"):
        out[c] = np.asarray(data[c], dtype=bool)
    out["n"] = len(rows)
    return out


def describe_filters(project, since, include_synthetic, n_synthetic):
    text = f" for project {project}" if project else ""
    if since:
        text += f" since {since}"
    if not include_synthetic and n_synthetic:
        text += f"; {n_synthetic:,} simulated findings were left out, add --include-synthetic to use them"
    return text


def calibrate(
    findings,
    target=DEFAULT_TARGET,
    score_function="additive",
    weights=None,
    fit_score_weights=False,
    resamples=DEFAULT_RESAMPLES,
    seed=0,
    max_miss=None,
    confidence=None,
    promise_on=None,
):
    """Fit the threshold on loaded findings and measure it. Returns a report dict.

    With ``max_miss`` the threshold is instead the least-asking one whose miss rate over
    the overridden decisions is at most ``max_miss`` at ``confidence`` (``guarantee``);
    the report's ``guarantee`` says so and gives the same figures at the plain target.
    """
    target = check_target(target)
    if score_function not in SCORE_FUNCTIONS:
        raise CalibrationError(
            f"unknown score function {score_function!r} (expected additive or weighted)"
        )
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
    promise = None
    if max_miss is not None:
        from toolkit.analysis import guarantee

        promise = guarantee.promise(
            findings if promise_on is None else promise_on,
            fit,
            (max_miss, confidence),
            score_function,
            weights,
        )
        fit = guarantee.rule_fit(fit, scores, ids, promise["threshold"], promise["tie_fraction"])

    eligible = np.zeros(findings["n"], dtype=bool)
    eligible[two_way] = surfaced_mask(scores, fit.threshold, fit.tie_fraction, ids=ids)
    surfaced = eligible[two_way]
    low, high, _ = bootstrap_rate(surfaced, findings["session_id"][two_way], resamples, seed)
    recall = override_recall(surfaced, overridden[two_way])
    rates = override_rates(
        findings["question_id"][two_way], overridden[two_way], findings["answered"][two_way]
    )
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
        "score_counts": {fmt_score(v): int(c) for v, c in zip(values, counts)},
        "interruptions": interruptions(
            findings["session_id"], findings["phase"], one_way, gate, eligible
        ),
        "most_overridden": [
            dict(r, decision_matters=int(decision_matters_from_override_rate(r["override_rate"])))
            for r in rates
            if r["answered"] >= MIN_ANSWERED_FOR_RATE
        ][:5],
        "bootstrap": {"unit": "session", "resamples": resamples, "seed": seed, "level": 0.95},
        "guarantee": promise,
        # The two-way rows the fit used, for notebook plots (never stored or printed).
        ROWS_KEY: {
            "score": scores,
            "id": ids,
            "surfaced": surfaced,
            "overridden": overridden[two_way],
            "session_id": findings["session_id"][two_way],
            "question_id": findings["question_id"][two_way],
            "answered": findings["answered"][two_way],
            "decision_matters": dm[two_way],
        },
    }


def fmt_score(v):
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def run(
    conn,
    target=DEFAULT_TARGET,
    project=None,
    since=None,
    include_synthetic=False,
    score_function="additive",
    weights=None,
    fit_score_weights=False,
    resamples=DEFAULT_RESAMPLES,
    seed=0,
    holdout_days=None,
    max_miss=None,
    confidence=None,
):
    """Load the findings that match the filters and calibrate on them.

    With ``holdout_days`` the fit uses the older findings and the report adds how the
    rule does on the last ``holdout_days`` days.
    """
    findings = load_findings(conn, project, since, include_synthetic)
    held = cut = None
    if holdout_days is not None and findings["n"]:
        older, cut = split_days(findings["created_at"], holdout_days)
        held = masked_rows(findings, ~older)
        findings = masked_rows(findings, older)
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
            "no two-way findings to calibrate on"
            + describe_filters(project, since, include_synthetic, n_synthetic)
        )
    report = calibrate(
        findings,
        target,
        score_function,
        weights,
        fit_score_weights,
        resamples,
        seed,
        max_miss=max_miss,
        confidence=confidence,
    )
    report.update(
        {
            "project": project or db.GLOBAL_SCOPE,
            "since": since,
            "include_synthetic": bool(include_synthetic),
            "calibration_id": None,
            "source": "findings",
            "holdout": None,
        }
    )
    if held is not None:
        report["holdout"] = evaluate_holdout(held, report, holdout_days, cut, resamples, seed)
    return report


def confidence(report):
    """Whether the fit rests on enough data to store, and how much more would make it so.

    Three conditions: at least ``MIN_SESSIONS`` sessions and ``MIN_DECISIONS`` two-way
    decisions, and a session-bootstrap 95% interval of the achieved rate narrower than
    ±``MAX_HALF_WIDTH`` but not of zero width (resampling one session, or sessions that
    all agree, gives an interval such as 0.0% to 0.0%: degenerate, never narrow). An
    interval shrinks about as one over the square root of the number of sessions, which
    gives the estimate of sessions still needed.
    """
    low, high = report["ci_low"], report["ci_high"]
    n_sessions = int(report["n_sessions"] or 0)
    n_findings = int(report["n_findings"] or 0)
    half = None if low is None or high is None else (high - low) / 2.0
    degenerate = half is not None and half <= 0.0
    narrow = half is not None and 0.0 < half < MAX_HALF_WIDTH
    enough = n_sessions >= MIN_SESSIONS and n_findings >= MIN_DECISIONS
    ok = narrow and enough
    out = {
        "ok": bool(ok),
        "half_width": half,
        "max_half_width": MAX_HALF_WIDTH,
        "degenerate": bool(degenerate),
        "min_sessions": MIN_SESSIONS,
        "min_decisions": MIN_DECISIONS,
        "sessions_needed": 0,
        "findings_needed": 0,
    }
    if not ok:
        n = max(n_sessions, 1)
        per_session = n_findings / n if n_findings else 1.0
        total = max(n, MIN_SESSIONS)
        if not narrow:
            # Squared ratio of widths, with a little margin since the interval itself is
            # noisy; a zero-width interval says nothing, so ask for more sessions.
            ratio = (half / MAX_HALF_WIDTH) if half else 2.0
            total = max(total, n + 1, int(np.ceil(n * (ratio * 1.1) ** 2)))
        sessions_needed = total - n_sessions if n_sessions else total
        findings_needed = max(
            int(np.ceil(sessions_needed * per_session)), MIN_DECISIONS - n_findings, 0
        )
        if findings_needed and not sessions_needed:
            sessions_needed = int(np.ceil(findings_needed / per_session))
        out["sessions_needed"] = int(max(sessions_needed, 0))
        out["findings_needed"] = int(findings_needed)
    return out


def guard_message(report, check):
    """Why a fit may not be stored, and how much more data it needs (one paragraph)."""
    noun = _noun(report)
    fitted = (
        f"fitted on {report['n_findings']:,} {noun} from {_count(report['n_sessions'], 'session')}"
    )
    if check["half_width"] is None:
        width = "could not be measured"
    else:
        width = (
            f"is {_pct(report['ci_low'])} to {_pct(report['ci_high'])} "
            f"(±{100 * check['half_width']:.1f} points)"
        )
    reasons = []
    if report["n_sessions"] < MIN_SESSIONS or report["n_findings"] < MIN_DECISIONS:
        reasons.append(
            f"a calibration needs at least {MIN_SESSIONS} sessions and {MIN_DECISIONS} {noun}"
        )
    if check.get("degenerate"):
        reasons.append(
            f"the 95% interval of the share asked {width}, which is degenerate, not narrow"
        )
    elif check["half_width"] is None or check["half_width"] >= MAX_HALF_WIDTH:
        reasons.append(
            f"the 95% interval of the share asked {width}, wider than the "
            f"±{100 * MAX_HALF_WIDTH:.0f} points a calibration needs"
        )
    return (
        f"not stored: {'; '.join(reasons)}; {fitted}. About "
        f"{_count(check['sessions_needed'], 'more session')} (about {check['findings_needed']:,} more "
        f"{noun}) should be enough; or store it anyway with --force (marked low_confidence)"
    )


def _count(n, noun):
    n = int(n or 0)
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def masked_rows(arrays, mask):
    out = {k: (v[mask] if isinstance(v, np.ndarray) else v) for k, v in arrays.items()}
    out["n"] = int(np.count_nonzero(mask))
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

    core = {
        "project",
        "target",
        "threshold",
        "tie_fraction",
        "score_function",
        "weights",
        "achieved_rate",
        "ci_low",
        "ci_high",
        "n_findings",
        "n_sessions",
        "override_recall",
        "window_start",
        "window_end",
        "include_synthetic",
        "calibration_id",
        "source",
    }
    details = {k: v for k, v in report.items() if k not in core and k != ROWS_KEY}
    synthetic = int(bool(report.get("n_synthetic")))
    promise = report.get("guarantee") or {}
    now = db.utc_now()
    with db.transaction(conn):
        before = pacing.calibration_in_force(
            conn, report["project"], include_synthetic=bool(synthetic)
        )
        cur = conn.execute(
            "INSERT INTO calibrations (project, created_at, target, threshold, tie_fraction, score_function,"
            " weights_json, achieved_rate, ci_low, ci_high, n_findings, n_sessions, override_recall,"
            " window_start, window_end, include_synthetic, details_json, source, synthetic, low_confidence,"
            " developer, fitted_on, max_miss, miss_confidence, miss_upper_bound)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                report["project"],
                now,
                report["target"],
                report["threshold"],
                report["tie_fraction"],
                report["score_function"],
                json.dumps(report["weights"], sort_keys=True),
                report["achieved_rate"],
                report["ci_low"],
                report["ci_high"],
                report["n_findings"],
                report["n_sessions"],
                report["override_recall"],
                report["window_start"],
                report["window_end"],
                int(report["include_synthetic"]),
                json.dumps(details, sort_keys=True),
                report.get("source", "findings"),
                synthetic,
                int(bool(low_confidence)),
                developer or identity.developer(),
                fitted_on,
                promise.get("max_miss"),
                promise.get("confidence"),
                promise.get("miss_upper_bound"),
            ),
        )
        notes = ["team fit: in force only when pinned (calibrations use)"] if team else []
        if synthetic:
            notes.append("fitted on simulated findings: never ranks real ones")
        if low_confidence:
            notes.append("stored below the confidence guard (--force)")
        record_event(
            conn,
            report["project"],
            "fitted",
            cur.lastrowid,
            before[0] if before else None,
            synthetic,
            "; ".join(notes),
            now,
        )
    report["calibration_id"] = cur.lastrowid
    report["synthetic"] = bool(synthetic)
    report["low_confidence"] = bool(low_confidence)
    return cur.lastrowid


def record_event(
    conn, scope, event_type, calibration_id, previous_id, synthetic=0, detail="", now=None
):
    """Append one calibration_events row (the caller's transaction)."""
    conn.execute(
        "INSERT INTO calibration_events (ts, scope, event_type, calibration_id, previous_id, synthetic,"
        " detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            now or db.utc_now(),
            scope,
            event_type,
            calibration_id,
            previous_id,
            int(bool(synthetic)),
            detail,
        ),
    )


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


def subset_scores(scores, mask):
    from toolkit.analysis import question_scores as qs

    return qs.Scores(
        scores.severity[mask],
        scores.irreversibility[mask],
        scores.decision_matters[mask],
        scores.override_estimate[mask],
        scores.matters_cuts,
        {},
    )


def evaluate_holdout(findings, report, days, after, resamples=DEFAULT_RESAMPLES, seed=0):
    """Apply a fitted rule, unchanged, to held-out rows (same shape as ``load_findings``)."""
    one_way = findings["door_type"] == "one-way"
    gate = np.isin(findings["kind"], GATE_KINDS)
    two_way = ~one_way & ~gate
    out = {"days": days, "after": after, "n_findings": int(two_way.sum())}
    if not two_way.any():
        raise CalibrationError(
            f"nothing to validate on in the last {days} days: choose another --holdout-days"
        )
    values = score_findings(
        findings["severity"][two_way],
        findings["irreversibility"][two_way],
        findings["decision_matters"][two_way],
        report["score_function"],
        report["weights"] or None,
    )
    ids = findings["finding_id"][two_way]
    surfaced = surfaced_mask(values, report["threshold"], report["tie_fraction"], ids=ids)
    sessions = findings["session_id"][two_way]
    low, high, _ = bootstrap_rate(surfaced, sessions, resamples, seed)
    eligible = np.zeros(findings["n"], dtype=bool)
    eligible[two_way] = surfaced
    overridden = findings["overridden"][two_way]
    n_over = int(overridden.sum())
    out.update(
        {
            "n_sessions": int(np.unique(sessions.astype(str)).size),
            "achieved_rate": float(surfaced.mean()),
            "share_asked": float(surfaced.mean()),
            # Share of the held-out overridden decisions the fitted rule would have silenced.
            "miss_rate": float((overridden & ~surfaced).sum() / n_over) if n_over else None,
            "ci_low": low,
            "ci_high": high,
            "n_overridden": int(findings["overridden"][two_way].sum()),
            "override_recall": override_recall(surfaced, findings["overridden"][two_way]),
            "random_recall": float(surfaced.mean()),
            "interruptions": interruptions(
                findings["session_id"], findings["phase"], one_way, gate, eligible
            ),
        }
    )
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
        raise CalibrationError(
            f"the whole history is within the last {holdout_days} days: "
            "choose a smaller --holdout-days"
        )
    return older, cut


# --------------------------------------------------------------------------- words


def _pct(x):
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _rule(report):
    t = report["threshold"]
    t_text = f"{t:g}"
    if report["score_function"] == "weighted":
        w = report["weights"]
        what = (
            "weighted score ("
            + " + ".join(
                f"{w.get(k, 1.0):g}×{k.replace('_', ' ')}"
                for k in ("severity", "irreversibility", "decision_matters")
            )
            + ")"
        )
    else:
        what = "score (severity + irreversibility + decision matters)"
    f = report["tie_fraction"]
    if f >= 1.0:
        return f"a two-way finding is asked about when its {what} is {t_text} or more"
    if f <= 0.0:
        return f"a two-way finding is asked about when its {what} is above {t_text}"
    return (
        f"a two-way finding is asked about when its {what} is above {t_text}, "
        f"or exactly {t_text} and its id hashes under {f:.3f} (about {100 * f:.0f}% of those ties)"
    )


def _noun(report):
    return (
        "answered two-way questions"
        if report.get("source") == "question-log"
        else "two-way findings"
    )


def summary_lines(report):
    """The report in plain English, one sentence per line (CLI and notebook 02)."""
    where = (
        "all projects" if report["project"] == db.GLOBAL_SCOPE else f"project {report['project']}"
    )
    synthetic = "simulated data included" if report["include_synthetic"] else "real data only"
    window = f"{(report['window_start'] or '')[:10]} to {(report['window_end'] or '')[:10]}"
    source = report.get("source", "findings")
    lines = [
        (
            f"Fitted on {report['n_findings']:,} {_noun(report)} from {report['n_sessions']:,} sessions "
            f"({where}, {window}, {synthetic}; source: {source})."
        ),
        f"Rule: {_rule(report)}.",
        (
            f"Share asked: {_pct(report['achieved_rate'])} (target {_pct(report['target'])}); "
            f"95% interval over resampled sessions {_pct(report['ci_low'])} to {_pct(report['ci_high'])}."
        ),
    ]
    if source == "question-log":
        low, high = report["matters_cuts"]
        lines.append(
            "Factors come from the question log: severity from category, options and summary; "
            "irreversibility from the door and summary; decision matters from the override rate of "
            f"similar questions in other sessions (1 from {_pct(low)}, 2 from {_pct(high)})."
        )
    lines.extend(report.get("notes") or [])
    if report.get("guarantee"):
        from toolkit.analysis import guarantee

        lines.extend(guarantee.lines(report["guarantee"]))
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
        if report.get("guarantee") and held.get("miss_rate") is not None:
            g = report["guarantee"]
            lines.append(
                f"Held-out miss rate: {_pct(held['miss_rate'])} of the {held['n_overridden']:,} decisions "
                f"you overrode there would be silenced (promised at most {_pct(g['max_miss'])}), "
                f"asking {_pct(held['share_asked'])}."
            )
    if report["most_overridden"]:
        lines.append(
            "Most overridden questions (evidence your decision matters there): "
            + ", ".join(
                f"{r['question_id']} {_pct(r['override_rate'])}"
                for r in report["most_overridden"][:3]
            )
            + "."
        )
    return lines


def _recall_line(part, label):
    if part["override_recall"] is None:
        return f"{label}: no overridden decisions recorded."
    overrode = plural(part["n_overridden"], "decision")
    if not part["random_recall"]:
        # Nothing is asked: there is no random rule of the same size to compare with.
        return f"{label}: nothing would be asked, so none of the {overrode} you overrode."
    times = part["override_recall"] / part["random_recall"]
    return (
        f"{label}: {_pct(part['override_recall'])} of the {overrode} you "
        f"overrode would be asked about; asking a random {_pct(part['random_recall'])} would catch "
        f"{_pct(part['random_recall'])} ({times:.1f}x random)."
    )


def _interruption_lines(inter):
    lines = [
        (
            f"Questions per session: {inter['per_session']['before']:.1f} if everything is asked, "
            f"{inter['per_session']['after']:.1f} with pacing (one-way and gates always, "
            "at most 3 ranked per phase)."
        )
    ]
    if inter["per_phase"]:
        lines.append(
            "Per phase: "
            + ", ".join(
                f"{name} {v['before']:.1f} → {v['after']:.1f}"
                for name, v in inter["per_phase"].items()
            )
            + "."
        )
    return lines


def explain_lines(info):
    """``plantune calibrate --explain`` in plain English."""
    lines = [
        (
            f"Question {info['question_id']} (logged {info['times_logged']} times); "
            f"newest event {info['event_id']} at {info['ts']}: skill {info['skill']}, phase {info['phase']}, "
            f"category {info['category']}, {info['door']} door ({info['door_reason'] or 'unclassified'}), "
            f"{info['options_count'] if info['options_count'] is not None else 'unknown'} options."
        ),
        f"Summary: {info['summary']}",
    ]
    for factor in ("severity", "irreversibility", "decision_matters"):
        lines.append(
            f"{factor.replace('_', ' ')} = {info[factor]}: " + "; ".join(info["why"][factor]) + "."
        )
    lines.append("Override evidence from other sessions (each level shrunk toward the one above):")
    for row in info["evidence"]:
        counts = (
            ""
            if "others_answered" not in row
            else (
                f" ({row['others_overridden']:,} overridden of {row['others_answered']:,.0f} answered)"
            )
        )
        lines.append(f"  {row['level']}: {_pct(row['estimate'])}{counts}")
    return lines


def latest(conn, project=None, include_synthetic=False):
    """The calibration `pacing rank` would use for ``project`` (its own, else the global one)."""
    from toolkit.pacing import rank as pacing

    row = pacing.calibration_in_force(conn, project or db.GLOBAL_SCOPE, include_synthetic)
    if row is None:
        return None
    return dict(conn.execute("SELECT * FROM calibrations WHERE id = ?", (row[0],)).fetchone())
