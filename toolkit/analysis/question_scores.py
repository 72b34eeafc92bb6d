"""Score logged questions with the three pacing factors, so the question log can calibrate.

A real gstack history holds questions and answers, not pacing findings. Each question-log
event is mapped here to the factors a finding carries (each 0, 1 or 2), so the threshold
fitted on logged questions means the same thing when `pacing rank` applies it to findings:

* **severity** -- how much is at stake if the choice is wrong. Registry (or event)
  category: approval, cherry-pick and routing decide what ships or what is built (1),
  clarification and feedback-loop questions refine it (0). One more point when the summary
  names something costly to get wrong (security, production, data loss, billing, ...) or
  the question offers four or more options (a wide decision).
* **irreversibility** -- how hard the choice is to undo. A one-way door (the classifier's
  registry, skill:category or keyword verdict, or the caller's own door type) is 2. A
  two-way question is 1 when its summary names a lasting step (deploy, release, publish,
  merge, migrate, rename, ...), else 0.
* **decision_matters** -- does the user want a say here. This is the evidence the log
  holds: how often the user overrode the recommendation on this question and on questions
  like it. The estimate backs off from the question itself to its skill, to its
  (door, category, phase) cell, to a main-effects prior over door, category, phase,
  options count and door reason; each level is shrunk toward the one above it by a fixed
  number of pseudo-answers, so a question seen twice cannot claim 100%. Counts are taken
  **leave-one-out at the session level**: sessions fall into ``FOLDS`` folds by a hash of
  their id, and an event's estimate counts only the answers of the other folds. Its own
  answer (and its session's) never enters its own estimate, so the factor cannot leak the
  label it is later judged against. (Leaving out the single event would not do: within a
  question, overridden events would then always rank just below followed ones, and a cut
  point between them would pick exactly the wrong events.) The estimate becomes 0/1/2 by cut
  points on its distribution over the fitted events (the top ``target`` share is 2, the
  next ``MATTERS_MIDDLE`` times target is 1), stored with the calibration.

Only answers a person gave count as evidence (sources agent, hook, transcript-import, with
a recommendation to follow or not). The phase is the event's own, else the one its skill
implies (plan-ceo-review is ceo, ...), else the one its question id's prefix implies.
numpy; analysis side only, never the hot path.
"""

import re
from dataclasses import dataclass
from hashlib import sha1 as _sha1

import numpy as np

# Sources where a person answered the question (not the auto-decider, not an import guess).
ANSWER_SOURCES = ("agent", "hook", "transcript-import")
SKILL_PHASES = {
    "plan-ceo-review": "ceo",
    "plan-design-review": "design",
    "plan-eng-review": "eng",
    "plan-devex-review": "dx",
}
STAKES_CATEGORIES = ("approval", "cherry-pick", "routing")
WIDE_OPTIONS = 4
_STAKES = re.compile(
    r"\b(secur\w*|vulnerab\w*|prod(uction)?|outage|data[- ]loss|los(e|ing) data|customers?|billing|"
    r"payments?|auth\w*|privacy|credentials?|compliance|legal|licen[cs]e|money|cost\w*|"
    r"performance|latency|downtime|incident)\b",
    re.IGNORECASE,
)
_LASTING = re.compile(
    r"\b(deploy\w*|releas\w*|publish\w*|launch\w*|ship(s|ping|ped)?|merg\w*|migrat\w*|rename\w*|"
    r"push\w*|tag(s|ging|ged)?|version bump|public api|schema|announce\w*|rollout|roll out)\b",
    re.IGNORECASE,
)
# Pseudo-answers each level is shrunk with toward the level above it.
PRIOR_STRENGTH = 20.0
QUESTION_STRENGTH = 10.0
# decision_matters cut points: the top `target` share of fitted events by estimated
# override rate is 2, the next MATTERS_MIDDLE x target is 1, the rest 0.
MATTERS_MIDDLE = 1.5
# Sessions are split into this many folds by a hash of their id; an event's evidence is
# every fold but its own (leave-one-fold-out).
FOLDS = 10
_EPS = 1e-6


def door_of(door_type, door_class, door_reason, registry_door, known=None):
    """(door, reason kind) of a logged question: one-way when any verdict says so.

    The classifier's stored reason is ``registry``, ``skill-category``, ``default-two-way``
    or ``keyword:<rule>``; only the part before the colon is a feature (rules are many
    and each is rare). A caller's, the registry's or a recorded one-way fact about the
    question (``known``: its ``door_knowledge`` source, any spelling of the id) beats a
    two-way verdict: a question is never treated as less dangerous than anyone said it was.
    """
    reason = (door_reason or "unclassified").split(":", 1)[0]
    if door_class == "one-way":
        return "one-way", reason
    if door_type == "one-way":
        return "one-way", "caller"
    if registry_door == "one-way":
        return "one-way", "registry"
    if known:
        return "one-way", "recorded"
    return "two-way", reason


def phase_of(phase, skill, question_id=None):
    """The event's phase, else the one its skill implies, else the one its question id's
    skill prefix implies (autoplan asks plan-ceo-review-* questions), else 'unknown'."""
    if phase and phase != "unknown":
        return phase
    if skill in SKILL_PHASES:
        return SKILL_PHASES[skill]
    for prefix, implied in SKILL_PHASES.items():
        if question_id and question_id.startswith(prefix + "-"):
            return implied
    return "unknown"


def options_bucket(count):
    if count is None:
        return "?"
    return "1-2" if count <= 2 else "3" if count == 3 else "4+"


def summary_features(summary):
    """(stakes word or None, lasting-step word or None) found in a question summary."""
    text = summary or ""
    stakes = _STAKES.search(text)
    lasting = _LASTING.search(text)
    return (stakes.group(0) if stakes else None, lasting.group(0) if lasting else None)


# --------------------------------------------------------------------------- events


_COLUMNS = (
    "id",
    "event_key",
    "project",
    "ts",
    "session_id",
    "skill",
    "question_id",
    "summary",
    "category",
    "door_type",
    "door_class",
    "door_reason",
    "registry_door",
    "phase",
    "options_count",
    "source",
    "followed",
    "synthetic",
)


def load_events(conn, project=None, since=None, include_synthetic=False):
    """Every logged question matching the filters, oldest first, as a dict of numpy arrays.

    The registry is matched on the canonical form of the question id (any spelling of a
    registered id finds it), and recorded one-way facts (``door_knowledge``) make every
    event of that question one-way. Adds the derived columns the scorer and the fit use:
    door, reason, phase (derived), answered (a person answered), labelled (answered with a
    known follow/override), overridden, day, the canonical question id and a session key
    (project + day when the event has no session).
    """
    from toolkit.core.doors import canonical_id

    rows = conn.execute(
        "SELECT q.id, q.event_key, q.project, q.ts, q.session_id, q.skill, q.question_id,"
        " q.question_summary, q.category, q.door_type, q.door_class, q.door_reason, NULL, q.phase,"
        " q.options_count, q.source, q.followed_recommendation, q.synthetic"
        " FROM question_log q"
        " WHERE (:project IS NULL OR q.project = :project)"
        " AND (:since IS NULL OR q.ts >= :since)"
        " AND (:synthetic OR q.synthetic = 0)"
        " ORDER BY q.ts, q.id",
        {"project": project, "since": since, "synthetic": 1 if include_synthetic else 0},
    ).fetchall()
    registry = {}
    for rid, door, category, options in conn.execute(
        "SELECT id, door_type, category, CASE WHEN options_json IS NOT NULL"
        " THEN nullif(json_array_length(options_json), 0) END FROM registry_questions"
        " ORDER BY door_type = 'one-way'"  # a one-way spelling of the same id wins
    ):
        registry[canonical_id(rid)] = (door, category, options)
    known = dict(
        conn.execute(
            "SELECT canonical_id, min(source) FROM door_knowledge GROUP BY canonical_id"
        ).fetchall()
    )
    canon = {}
    filled = []
    for r in rows:
        qid = r[6]
        key = canon.get(qid)
        if key is None:
            key = canon[qid] = canonical_id(qid) or qid
        reg = registry.get(key)
        if reg is not None:
            r = (*r[:8], r[8] or reg[1], *r[9:12], reg[0], r[13], r[14] or reg[2], *r[15:])
        filled.append(r)
    return events_from_rows(filled, known, canon)


def events_from_rows(rows, known=None, canon=None):
    """Events from ``_COLUMNS`` tuples; ``known`` maps canonical ids to a recorded one-way
    fact, ``canon`` question ids to their canonical form (computed when missing)."""
    from toolkit.core.doors import canonical_id

    known = known or {}
    canon = canon if canon is not None else {}
    cols = {c: [r[j] for r in rows] for j, c in enumerate(_COLUMNS)}
    n = len(rows)
    ev = {c: np.asarray(cols[c], dtype=object) for c in _COLUMNS}
    ev["n"] = n
    keys = [canon.get(q) or canonical_id(q) or q for q in cols["question_id"]]
    ev["question_key"] = np.asarray(keys, dtype=object)
    doors = [
        door_of(*t, known.get(k))
        for t, k in zip(
            zip(cols["door_type"], cols["door_class"], cols["door_reason"], cols["registry_door"]),
            keys,
        )
    ]
    ev["door"] = np.asarray([d for d, _ in doors], dtype=object)
    ev["reason"] = np.asarray([r for _, r in doors], dtype=object)
    ev["phase"] = np.asarray(
        [phase_of(p, s, q) for p, s, q in zip(cols["phase"], cols["skill"], keys)], dtype=object
    )
    ev["category"] = np.asarray([c or "none" for c in cols["category"]], dtype=object)
    ev["answered"] = np.isin(np.asarray(cols["source"], dtype=object), ANSWER_SOURCES)
    followed = np.asarray([-1 if f is None else int(f) for f in cols["followed"]], dtype=np.int64)
    ev["labelled"] = ev["answered"] & (followed >= 0)
    ev["overridden"] = ev["labelled"] & (followed == 0)
    ev["day"] = np.asarray([str(t)[:10] for t in cols["ts"]], dtype=object)
    ev["session"] = np.asarray(
        [s if s else f"{p}@{d}" for s, p, d in zip(cols["session_id"], cols["project"], ev["day"])],
        dtype=object,
    )
    return ev


# --------------------------------------------------------------------------- the scorer


@dataclass
class Scores:
    """Factors for every event, the override estimate behind decision_matters and its cuts."""

    severity: np.ndarray
    irreversibility: np.ndarray
    decision_matters: np.ndarray
    override_estimate: np.ndarray
    matters_cuts: tuple
    levels: dict  # level name -> (others answered, others overridden, estimate) arrays


def _codes(values):
    """Dense integer codes of a column (equal values, equal codes)."""
    _, codes = np.unique(np.asarray(values).astype(str), return_inverse=True)
    return codes.astype(np.int64)


def _keys(ev, names):
    """One integer group code per event for the combination of the ``names`` columns."""
    codes = ev["_codes"]
    key = np.zeros(ev["n"], dtype=np.int64)
    for name in names:
        if name not in codes:
            codes[name] = _codes(ev[name])
        part = codes[name]
        key = key * (int(part.max()) + 1 if part.size else 1) + part
        key = np.unique(key, return_inverse=True)[1].astype(np.int64)  # keep codes small
    return key


def session_folds(sessions, folds=None):
    """A stable fold number per event from its session id (sha1, so any run agrees)."""
    folds = folds or FOLDS
    return np.asarray(
        [
            int.from_bytes(_sha1(str(x).encode("utf-8")).digest()[:4], "big") % folds
            for x in sessions
        ],
        dtype=np.int64,
    )


def _held_out_counts(keys, history, y, fold, leave_out):
    """Per event: answered and overridden counts of its group in the history.

    For events marked ``leave_out`` the counts of their own session fold are taken away,
    so neither their own answer nor any answer of their session is counted.
    """
    _, codes = np.unique(keys, return_inverse=True)
    size = (codes.max() + 1) if codes.size else 0
    n_g = np.bincount(codes[history], minlength=size).astype(np.float64)
    k_g = np.bincount(codes[history], weights=y[history], minlength=size)
    cell = codes * FOLDS + fold
    n_gf = np.bincount(cell[history], minlength=size * FOLDS).astype(np.float64)
    k_gf = np.bincount(cell[history], weights=y[history], minlength=size * FOLDS)
    n, k = n_g[codes], k_g[codes]
    n = np.where(leave_out, n - n_gf[cell], n)
    k = np.where(leave_out, k - k_gf[cell], k)
    return n, k


def _logit(p):
    p = np.clip(p, _EPS, 1 - _EPS)
    return np.log(p / (1 - p))


def _shrunk(n, k, prior, strength):
    return (k + strength * prior) / (n + strength)


MAIN_EFFECTS = ("category", "phase", "options", "reason")


def override_estimates(ev, history):
    """Held-out override rate estimate for every event, from the ``history`` events.

    ``history`` marks the labelled events whose answers are evidence. No event counts
    the answers of its own session fold, so its own answer can neither raise nor lower
    its own estimate. Events outside the history (a held-out day) leave out their fold
    too, so fitted and held-out events get estimates of the same spread.
    """
    history = np.asarray(history, dtype=bool) & ev["labelled"]
    leave_out = np.ones(ev["n"], dtype=bool)
    y = ev["overridden"].astype(np.float64)
    fold = session_folds(ev["session"])
    ev = dict(ev)
    ev["options"] = np.asarray([options_bucket(c) for c in ev["options_count"]], dtype=object)
    ev["all"] = np.full(ev["n"], "all", dtype=object)
    ev["_codes"] = {}
    levels = {}
    n_all, k_all = _held_out_counts(ev["all"], history, y, fold, leave_out)
    base = (k_all + 1.0) / (n_all + 2.0)
    levels["all"] = (n_all, k_all, base)
    n, k = _held_out_counts(_keys(ev, ["door"]), history, y, fold, leave_out)
    door = _shrunk(n, k, base, PRIOR_STRENGTH)
    levels["door"] = (n, k, door)
    logit = _logit(door)
    for name in MAIN_EFFECTS:
        n, k = _held_out_counts(_keys(ev, ["door", name]), history, y, fold, leave_out)
        rate = _shrunk(n, k, door, PRIOR_STRENGTH)
        levels[name] = (n, k, rate)
        logit = logit + _logit(rate) - _logit(door)
    prior = 1.0 / (1.0 + np.exp(-logit))
    levels["main effects"] = (np.zeros(ev["n"]), np.zeros(ev["n"]), prior)
    estimate = prior
    for name, fields, strength in (
        ("cell", ["door", "category", "phase"], PRIOR_STRENGTH),
        ("skill", ["door", "category", "phase", "skill"], PRIOR_STRENGTH),
        ("question", ["door", "category", "phase", "skill", "question_key"], QUESTION_STRENGTH),
    ):
        n, k = _held_out_counts(_keys(ev, fields), history, y, fold, leave_out)
        estimate = _shrunk(n, k, estimate, strength)
        levels[name] = (n, k, estimate)
    return estimate, levels


def matters_cuts(estimates, target):
    """Cut points on the override estimate: top ``target`` share -> 2, next band -> 1."""
    e = np.asarray(estimates, dtype=np.float64)
    if e.size == 0:
        return (1.0, 1.0)
    high = float(np.quantile(e, max(0.0, 1.0 - target)))
    low = float(np.quantile(e, max(0.0, 1.0 - (1.0 + MATTERS_MIDDLE) * target)))
    return (min(low, high), high)


def score_events(ev, history, fitted, target, cuts=None):
    """The three factors of every event in ``ev``.

    ``history`` marks the events whose answers are evidence (leave-one-out for those in
    it); ``fitted`` marks the events the cut points are taken from (ignored when ``cuts``
    is given, e.g. the cuts of a stored calibration).
    """
    estimate, levels = override_estimates(ev, history)
    if cuts is None:
        cuts = matters_cuts(estimate[np.asarray(fitted, dtype=bool)], target)
    matters = (estimate >= cuts[0]).astype(np.int64) + (estimate >= cuts[1]).astype(np.int64)
    distinct, where = np.unique(ev["summary"].astype(str), return_inverse=True)
    found = [summary_features(s) for s in distinct]
    feats = [found[j] for j in where]
    stakes = np.asarray([f[0] is not None for f in feats], dtype=bool)
    lasting = np.asarray([f[1] is not None for f in feats], dtype=bool)
    options = np.asarray([-1 if c is None else int(c) for c in ev["options_count"]], dtype=np.int64)
    severity = np.isin(ev["category"], STAKES_CATEGORIES).astype(np.int64)
    severity += (stakes | (options >= WIDE_OPTIONS)).astype(np.int64)
    one_way = ev["door"] == "one-way"
    irreversibility = np.where(one_way, 2, lasting.astype(np.int64))
    return Scores(
        severity, irreversibility, matters, estimate, tuple(float(c) for c in cuts), levels
    )


def explain(ev, scores, i):
    """Factors of event ``i`` with the rule and the evidence behind each (a dict)."""
    stakes, lasting = summary_features(ev["summary"][i])
    options = ev["options_count"][i]
    category = ev["category"][i]
    sev_why = [
        f"category {category} "
        + (
            "decides what is built or shipped (+1)"
            if category in STAKES_CATEGORIES
            else "refines a decision (+0)"
        )
    ]
    if stakes or (options is not None and options >= WIDE_OPTIONS):
        sev_why.append(f"summary names '{stakes}' (+1)" if stakes else f"{options} options (+1)")
    if ev["door"][i] == "one-way":
        irr_why = [f"one-way door ({ev['reason'][i]}): 2"]
    elif lasting:
        irr_why = [f"two-way door ({ev['reason'][i]}); summary names a lasting step '{lasting}': 1"]
    else:
        irr_why = [f"two-way door ({ev['reason'][i]}); no lasting step in the summary: 0"]
    evidence = []
    for name, (n, k, est) in scores.levels.items():
        row = {"level": name, "estimate": round(float(est[i]), 4)}
        if name != "main effects":
            row.update(others_answered=int(n[i]), others_overridden=int(k[i]))
        evidence.append(row)
    return {
        "event_id": int(ev["id"][i]),
        "question_id": str(ev["question_id"][i]),
        "ts": str(ev["ts"][i]),
        "skill": str(ev["skill"][i]),
        "phase": str(ev["phase"][i]),
        "category": str(category),
        "door": str(ev["door"][i]),
        "door_reason": str(ev["door_reason"][i] or ""),
        "options_count": options,
        "summary": str(ev["summary"][i]),
        "answered": bool(ev["answered"][i]),
        "overridden": bool(ev["overridden"][i]) if ev["labelled"][i] else None,
        "severity": int(scores.severity[i]),
        "irreversibility": int(scores.irreversibility[i]),
        "decision_matters": int(scores.decision_matters[i]),
        "why": {
            "severity": sev_why,
            "irreversibility": irr_why,
            "decision_matters": [
                (
                    f"estimated override rate {scores.override_estimate[i]:.1%} (this answer left out); "
                    f"cut points {scores.matters_cuts[0]:.1%} (1) and {scores.matters_cuts[1]:.1%} (2)"
                )
            ],
        },
        "evidence": evidence,
    }
