"""The pacing design's acceptance figures, from recorded history.

* ``interruptions``: per session, the questions asked as logged, the one-way ones among
  them, and how many pacing would ask with the calibration in force: every one-way door
  and every gate (approval and mutation gates, one-time prompts), and of the other
  two-way questions those whose score reaches the threshold, at most ``PHASE_CAP`` per
  phase and never beyond the chain's budget. The design asks for at most 50% of the
  questions asked without pacing; the rest would be Silent Decisions, whose median count
  per non-trivial session is the design's "N".
* ``first_run``: per project (and developer), the registry's one-time prompts asked
  before the first real skill question; the design asks for at most 1.

Scores come from the question-log scorer (``question_scores``), as ``calibrate --source
question-log`` scores them; the rule is pacing's own (``scoring.reaches_threshold``).
"""

import json
from datetime import date

import numpy as np

from toolkit.analysis import question_scores as qs
from toolkit.analysis.fit import DEFAULT_TARGET, score_findings, surfaced_mask
from toolkit.core.vocabulary import REVIEW_PHASES, gate_kind
from toolkit.pacing.request import PHASE_CAP
from toolkit.store import db

DESIGN_RATIO = 0.5  # asked with pacing / asked before, at most
DESIGN_META_PROMPTS = 1  # meta-prompts before a new user's first real skill question
# A non-trivial session: questions in at least two review phases, or at least ten.
NON_TRIVIAL_PHASES = 2
NON_TRIVIAL_QUESTIONS = 10


class ReportError(ValueError):
    """A report that cannot be made, in one sentence."""


def _rule_for(conn, project, cache):
    """The calibration in force for ``project`` as (id, threshold, tie fraction, score
    function, weights, matters cuts or None)."""
    from toolkit.pacing import rank as pacing

    if project not in cache:
        cal = pacing.active_calibration(conn, project)
        cuts = None
        if cal["id"] is not None:
            row = conn.execute(
                "SELECT details_json FROM calibrations WHERE id = ?", (cal["id"],)
            ).fetchone()
            try:
                cuts = json.loads(row[0]).get("matters_cuts")
            except (ValueError, AttributeError):
                cuts = None
        cache[project] = (
            cal["id"],
            cal["threshold"],
            cal["tie_fraction"],
            cal["score_function"],
            cal["weights"] or None,
            tuple(cuts) if cuts else None,
        )
    return cache[project]


def _chains(conn, ev):
    """Each event's chain (the one pacing recorded, else its session) and each chain's budget."""
    chain_of = dict(
        conn.execute(
            "SELECT id, json_extract(extra_json, '$.chain_id') FROM question_log"
            " WHERE json_extract(extra_json, '$.chain_id') IS NOT NULL"
        ).fetchall()
    )
    chains = np.asarray(
        [chain_of.get(i) or s for i, s in zip(ev["id"], ev["session"])], dtype=object
    )
    budgets = {
        (p, c): b
        for p, c, b in conn.execute("SELECT project, chain_id, budget FROM pacing_chains")
        if b is not None
    }
    return chains, budgets


def interruptions(conn, project=None, since=None, include_synthetic=False):
    """Per-session logged, one-way and paced counts, with the medians the design names."""
    ev = qs.load_events(conn, project, since, include_synthetic)
    asked = ev["answered"]
    if not asked.any():
        where = f" for project {project}" if project else ""
        where += f" since {since}" if since else ""
        raise ReportError(f"no answered questions in the question log{where}")
    one_way = ev["door"] == "one-way"
    gate = (
        np.asarray([gate_kind(q) != "finding" for q in ev["question_key"]], dtype=bool) & ~one_way
    )
    ranked = np.zeros(ev["n"], dtype=bool)  # two-way questions reaching the threshold
    cache = {}
    rule_ids = {}
    two_way = asked & ~one_way & ~gate
    fitted = asked & (ev["door"] == "two-way")
    default_scores = None
    for proj in sorted({str(p) for p in ev["project"][asked]}):
        rows = two_way & (ev["project"] == proj)
        cid, threshold, fraction, function, weights, cuts = _rule_for(conn, proj, cache)
        rule_ids[proj] = cid
        if not rows.any():
            continue
        if cuts is None:
            if default_scores is None:
                default_scores = qs.score_events(ev, ev["labelled"], fitted, DEFAULT_TARGET)
            scores = default_scores
        else:
            scores = qs.score_events(ev, ev["labelled"], fitted, DEFAULT_TARGET, cuts=cuts)
        values = score_findings(
            scores.severity[rows],
            scores.irreversibility[rows],
            scores.decision_matters[rows],
            function,
            weights,
        )
        ranked[rows] = surfaced_mask(values, threshold, fraction, ids=ev["event_key"][rows])

    chains, budgets = _chains(conn, ev)
    spent = {}
    sessions = {}
    order = np.flatnonzero(asked)  # events are oldest first: budgets are spent in time order
    for i in order:
        key = (str(ev["project"][i]), str(ev["session"][i]))
        s = sessions.get(key)
        if s is None:
            s = sessions[key] = {
                "session_id": key[1],
                "project": key[0],
                "first_ts": str(ev["ts"][i]),
                "logged": 0,
                "one_way": 0,
                "gates": 0,
                "eligible": {},
                "chain": (key[0], str(chains[i])),
                "phases": [],
            }
        s["logged"] += 1
        s["one_way"] += int(one_way[i])
        s["gates"] += int(gate[i])
        phase = str(ev["phase"][i])
        if phase not in s["phases"]:
            s["phases"].append(phase)
        if ranked[i]:
            s["eligible"][phase] = s["eligible"].get(phase, 0) + 1
    out = []
    for s in sorted(sessions.values(), key=lambda s: (s["first_ts"], s["session_id"])):
        chain = s.pop("chain")
        paced_two_way = 0
        for phase in s["phases"]:
            n = min(PHASE_CAP, s["eligible"].get(phase, 0))
            budget = budgets.get(chain)
            if budget is not None:
                n = max(0, min(n, budget - spent.get(chain, 0)))
            spent[chain] = spent.get(chain, 0) + n
            paced_two_way += n
        eligible = s.pop("eligible")
        s["ranked_eligible"] = sum(eligible.values())
        s["paced"] = s["one_way"] + s["gates"] + paced_two_way
        s["silent"] = s["logged"] - s["paced"]
        s["ratio"] = s["paced"] / s["logged"]
        review = [p for p in s["phases"] if p in REVIEW_PHASES]
        s["non_trivial"] = len(review) >= NON_TRIVIAL_PHASES or s["logged"] >= NON_TRIVIAL_QUESTIONS
        s["calibration_id"] = rule_ids.get(s["project"])
        out.append(s)
    ratios = [s["ratio"] for s in out]
    heavy = [s["silent"] for s in out if s["non_trivial"]]
    median = float(np.median(ratios))
    return {
        "project": project,
        "since": since,
        "sessions": out,
        "n_sessions": len(out),
        "logged": sum(s["logged"] for s in out),
        "paced": sum(s["paced"] for s in out),
        "median_ratio": median,
        "design_ratio": DESIGN_RATIO,
        "meets_design": median <= DESIGN_RATIO,
        "one_way_always_asked": all(s["paced"] >= s["one_way"] for s in out),
        "non_trivial_sessions": len(heavy),
        "median_silent_non_trivial": float(np.median(heavy)) if heavy else None,
        "calibrations": rule_ids,
    }


def store_interruptions(conn, report):
    """Keep the newest run's per-session rows for the ``session_pacing`` view (Datasette)."""
    now = db.utc_now()
    rows = [
        (
            s["project"],
            s["session_id"],
            s["first_ts"],
            s["logged"],
            s["one_way"],
            s["gates"],
            s["paced"],
            s["silent"],
            int(s["non_trivial"]),
            ",".join(s["phases"]),
            s["calibration_id"],
            now,
        )
        for s in report["sessions"]
    ]
    with db.transaction(conn):
        conn.execute("DELETE FROM interruption_replay")
        conn.executemany(
            "INSERT INTO interruption_replay (project, session_id, first_ts, logged, one_way,"
            " gates, paced, silent, non_trivial, phases, calibration_id, computed_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    return len(rows)


def first_run(conn):
    """Per project and developer: meta-prompts asked before the first real skill question."""
    rows = [dict(r) for r in conn.execute("SELECT * FROM first_run_meta_prompts")]
    for r in rows:
        r["within_design"] = r["meta_prompts_before_first_skill"] <= DESIGN_META_PROMPTS
    developers = {r["developer"] for r in rows}
    return {
        "projects": rows,
        "design_max": DESIGN_META_PROMPTS,
        "team": len(developers) > 1,
        "within_design": sum(r["within_design"] for r in rows),
    }


def check_day(value):
    try:
        return date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise ReportError(f"--since must be a date like 2026-01-31, got {value!r}") from None
