"""Where a calibration's history comes from: recorded pacing findings or, for a gstack
history, the question log (each answered two-way question scored with the three factors a
finding carries), chosen automatically or by name; the question-log fit is checked on the
last days it was not fitted on.
"""

import numpy as np

from toolkit.analysis.calibrate import (
    calibrate,
    describe_filters,
    evaluate_holdout,
    masked_rows,
    run,
    split_days,
    subset_scores,
)
from toolkit.analysis.fit import (
    DEFAULT_RESAMPLES,
    DEFAULT_TARGET,
    ROWS_KEY,
    CalibrationError,
    check_target,
    fit_weights,
)
from toolkit.store import db

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
    from toolkit.analysis import question_scores as qs

    row = conn.execute(
        "SELECT 1 FROM question_log WHERE source IN ("
        + ", ".join("?" * len(qs.ANSWER_SOURCES))
        + ")"
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
        raise CalibrationError(
            f"unknown source {source!r} (expected findings, question-log or auto)"
        )
    return source


def run_source(
    conn,
    source="auto",
    target=DEFAULT_TARGET,
    project=None,
    since=None,
    include_synthetic=False,
    score_function=None,
    weights=None,
    resamples=DEFAULT_RESAMPLES,
    seed=0,
    holdout_days=None,
    max_miss=None,
    confidence=None,
):
    """Calibrate from ``source`` (findings, question-log or auto); the report names the source used.

    For findings the score function defaults to additive (weights fitted when weighted
    is asked without weights); for the question log, to weighted with fitted weights.
    """
    chosen = choose_source(conn, source, project, since, include_synthetic)
    if chosen == "question-log":
        report = run_question_log(
            conn,
            target,
            project,
            since,
            include_synthetic,
            score_function,
            weights,
            resamples=resamples,
            seed=seed,
            holdout_days=holdout_days,
            max_miss=max_miss,
            confidence=confidence,
        )
    else:
        function = score_function or "additive"
        report = run(
            conn,
            target,
            project,
            since,
            include_synthetic,
            function,
            weights,
            fit_score_weights=function == "weighted" and weights is None,
            resamples=resamples,
            seed=seed,
            holdout_days=holdout_days,
            max_miss=max_miss,
            confidence=confidence,
        )
    report["source_asked"] = source
    return report


def public(report):
    """The report without the row arrays (what is printed and stored)."""
    return {k: v for k, v in report.items() if k != ROWS_KEY}


def _as_findings(ev, scores):
    """Scored question-log events in the shape ``calibrate`` takes (one 'finding' each)."""
    return {
        "project": ev["project"],
        "session_id": ev["session"],
        "phase": ev["phase"],
        "finding_id": ev["event_key"],
        "question_id": ev["question_key"],
        "door_type": ev["door"],
        "kind": np.full(ev["n"], "finding", dtype=object),
        "created_at": ev["ts"],
        "severity": scores.severity,
        "irreversibility": scores.irreversibility,
        "decision_matters": scores.decision_matters,
        "overridden": ev["overridden"],
        "answered": ev["labelled"],
        "synthetic": np.asarray(ev["synthetic"], dtype=bool),
        "n": ev["n"],
    }


def run_question_log(
    conn,
    target=DEFAULT_TARGET,
    project=None,
    since=None,
    include_synthetic=False,
    score_function=None,
    weights=None,
    resamples=DEFAULT_RESAMPLES,
    seed=0,
    holdout_days=None,
    max_miss=None,
    confidence=None,
):
    """Calibrate on answered two-way questions of the question log (see ``question_scores``).

    The score function defaults to weighted with weights fitted on the history (the
    logistic fit of overrides on the three factors), falling back to additive when there
    are too few overrides. With ``holdout_days`` the fit uses only the older history
    (its answers are the only evidence) and the report adds the achieved rate, its
    interval and override recall on the last ``holdout_days`` days.
    """
    from toolkit.analysis import question_scores as qs

    target = check_target(target)
    ev = qs.load_events(conn, project, since, include_synthetic)
    asked = ev["answered"]
    if not np.any(asked & (ev["door"] == "two-way")):
        raise CalibrationError(
            "no answered two-way questions in the question log to calibrate on"
            + describe_filters(project, since, include_synthetic, 0)
        )
    in_fit = np.ones(ev["n"], dtype=bool)
    cut = None
    if holdout_days is not None:
        in_fit, cut = split_days(ev["day"], holdout_days)
        if not np.any(in_fit & asked & (ev["door"] == "two-way")):
            raise CalibrationError(
                f"no answered two-way questions up to {cut}: choose a smaller --holdout-days"
            )
    fitted = in_fit & asked & (ev["door"] == "two-way")
    scores = qs.score_events(ev, in_fit & ev["labelled"], fitted, target)
    notes = []
    fit_weights_now = score_function is None or (score_function == "weighted" and weights is None)
    function = score_function or "weighted"
    if fit_weights_now:
        two_way_fit = fitted
        try:
            weights = fit_weights(
                scores.severity[two_way_fit],
                scores.irreversibility[two_way_fit],
                scores.decision_matters[two_way_fit],
                ev["overridden"][two_way_fit],
            )
            function = "weighted"
        except CalibrationError as e:
            if score_function == "weighted":
                raise
            notes.append(f"additive score used: {e}")
            function, weights = "additive", None
    fit_rows = in_fit & asked
    if not np.any(fit_rows & (ev["door"] == "two-way")):
        raise CalibrationError("no answered two-way questions to calibrate on")
    findings = _as_findings(masked_rows(ev, fit_rows), subset_scores(scores, fit_rows))
    promise_on = None
    if max_miss is not None:
        promise_on = _promise_rows(ev, in_fit, asked, scores, target)
    report = calibrate(
        findings,
        target,
        function,
        weights,
        False,
        resamples,
        seed,
        max_miss=max_miss,
        confidence=confidence,
        promise_on=promise_on,
    )
    report.update(
        {
            "source": "question-log",
            "project": project or db.GLOBAL_SCOPE,
            "since": since,
            "include_synthetic": bool(include_synthetic),
            "calibration_id": None,
            "matters_cuts": list(scores.matters_cuts),
            "notes": notes,
            "scorer": "question_scores (leave-one-out override evidence)",
            "holdout": None,
        }
    )
    if cut is not None:
        rows = ~in_fit & asked
        held = _as_findings(masked_rows(ev, rows), subset_scores(scores, rows))
        report["holdout"] = evaluate_holdout(held, report, holdout_days, cut, resamples, seed)
    return report


PROMISE_SHARE = 1 / 3


def _promise_rows(ev, in_fit, asked, scores, target):
    """The rows a --max-miss promise is measured on: the answered questions of the newest
    third of the fitted days, scored from the older days' answers only.

    A fitted row's "decision matters" comes from answers in other sessions, later ones
    included; a new question only has the past to go by. Measured on rows scored the
    way new ones will be, the promise holds for them.
    """
    from toolkit.analysis import question_scores as qs

    days = sorted({str(d) for d in ev["day"][in_fit]})
    cut = days[min(len(days) - 1, int(len(days) * (1 - PROMISE_SHARE)))] if days else ""
    newer = in_fit & np.asarray([str(d) >= cut for d in ev["day"]], dtype=bool)
    older = in_fit & ~newer
    if not np.any(older & asked):
        newer, older = in_fit, in_fit  # one day of history: nothing older to score from
    evidence = older & ev["labelled"]
    fresh = qs.score_events(
        ev, evidence, older & asked & (ev["door"] == "two-way"), target, cuts=scores.matters_cuts
    )
    rows = newer & asked
    out = _as_findings(masked_rows(ev, rows), subset_scores(fresh, rows))
    out["measured_on"] = (
        f"the questions answered from {cut} on, scored from older answers only"
        if np.any(older)
        else "the fitted history"
    )
    return out


def explain_question(
    conn, question_id, target=DEFAULT_TARGET, project=None, include_synthetic=False
):
    """Factors and evidence for the newest logged event of ``question_id`` (a dict)."""
    from toolkit.analysis import question_scores as qs
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
