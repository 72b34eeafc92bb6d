"""Pacing: rank a review phase's findings, surface a few, auto-accept the rest reversibly.

A multi-phase review produces far more findings than a person will answer. ``rank``
decides, per phase, which findings reach the user and which become Silent Decisions
(the recommended option, auto-accepted, logged at once and reversible with ``flip``):

* one-way doors always surface, uncapped, and spend no budget;
* approval / migration gates always surface and never count against any budget;
* two-way findings whose score reaches the calibrated threshold surface best first
  (score, then irreversibility, then severity, descending; then id), at most
  ``PHASE_CAP`` per phase and never beyond what is left of the chain's budget;
* everything else is a Silent Decision.

Every decision is a row (``findings``), the chain budget and each ranked phase too
(``pacing_chains``, ``pacing_runs``), so flips survive context compaction and restarts.

Hot path: standard library only. ``rank_main`` is the ``gstack-pacing-rank`` console
script the review templates call, so it avoids click entirely.
"""

import os
import re
import sys

from toolkit.store import db
from toolkit.core import doors, identity, questions, scoring
from toolkit.store import json_lite as json  # the json package costs ~2 ms per hook process
from toolkit.core.screening import flatten_newlines, has_injection, truncate

__all__ = [
    "PHASES",
    "KINDS",
    "PHASE_CAP",
    "PacingError",
    "Ranking",
    "parse_request",
    "validate_request",
    "question_id_for",
    "active_calibration",
    "rank",
    "link_answers",
    "link_answer",
    "find_decision",
    "flip_question",
    "flip_choice",
    "flip_surface",
    "session_summary",
    "silent_decisions",
    "silent_block",
    "rank_main",
]

# Phases a review can rank in ('unknown' exists only for legacy question-log rows).
PHASES = ("ceo", "design", "eng", "dx", "other")
KINDS = ("finding", "approval", "migration")
GATE_KINDS = frozenset(("approval", "migration"))
DOOR_TYPES = ("one-way", "two-way")
# At most this many rank-surfaced two-way findings per phase (the seed's "max 3").
PHASE_CAP = 3
# gstack ends a session after 120 minutes without activity; pacing state does the same.
TTL_ENV = "PLANTUNE_PACING_TTL_MINUTES"
DEFAULT_TTL_MINUTES = 120
ARCHIVE_MARK = "~closed-"
DEFAULT_SKILL = "pacing"
SESSION_ID_MAX = 64  # question_log truncates session_id to 64; longer ids could not link
CHAIN_ID_MAX = 128
FINDING_ID_MAX = 128
SUMMARY_MAX = 1000
OPTION_MAX = 200
OPTIONS_MAX = 26
QUESTION_ID_MAX = questions.QUESTION_ID_MAX
QUESTION_SUMMARY_MAX = questions.SUMMARY_MAX

try:  # the built-in sha1 loads in a tenth of the time hashlib's OpenSSL binding takes
    from _sha1 import sha1 as _sha1
except ImportError:  # pragma: no cover - interpreters built without it
    from hashlib import sha1 as _sha1

_KEBAB = re.compile(r"[a-z0-9-]+")
_NON_KEBAB = re.compile(r"[^a-z0-9]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class PacingError(ValueError):
    """Bad pacing input or state; ``str(err)`` is the one-line message for the user."""

    exit_code = 1

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class Ranking:
    """What ``rank`` returns: the JSON answer, whether it was replayed, and notes."""

    __slots__ = ("output", "replayed", "notes")

    def __init__(self, output, replayed=False, notes=()):
        self.output, self.replayed, self.notes = output, replayed, list(notes)


# ---------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------


def _reject_constant(name):
    raise ValueError(f"invalid constant {name}")


def parse_request(text):
    """Parse the stdin of ``pacing rank``: one JSON object."""
    if text is None or not text.strip():
        raise PacingError("no input: expected a JSON object with session_id, phase and findings on stdin")
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        raise PacingError(f"invalid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise PacingError("invalid input: expected a JSON object with session_id, phase and findings")
    return obj


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _text(value, what, max_len, required=True):
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise PacingError(f"{what} must be a non-empty string")
    if len(value) > max_len:
        raise PacingError(f"{what} must be at most {max_len} characters")
    if "\x00" in value:
        raise PacingError(f"{what} must not contain NUL bytes")
    return value


def _one_line(value, what, max_len, required=True):
    value = _text(value, what, max_len, required)
    if value is not None and _CONTROL.search(value):
        raise PacingError(f"{what} must be one line without control characters")
    return value


def _finding(raw, position):
    label = f"finding {position}"
    if not isinstance(raw, dict):
        raise PacingError(f"{label} must be a JSON object")
    fid = _one_line(raw.get("id"), f"{label}: id", FINDING_ID_MAX)
    label = f"finding {fid}"
    # Long summaries are cut, not refused: the full text stays with the agent.
    full = _text(raw.get("summary"), f"{label}: summary", sys.maxsize)
    # The door is read from the whole summary; only the stored copy is cut.
    out = {"id": fid, "summary": full[:SUMMARY_MAX], "door_text": full}
    for factor in scoring.FACTORS:
        value = raw.get(factor)
        if not _is_int(value) or not 0 <= value <= 2:
            raise PacingError(f"{label}: {factor} must be an integer 0-2 (got {json.dumps(value)})")
        out[factor] = value
    door = raw.get("door_type")
    if door is not None and door not in DOOR_TYPES:
        raise PacingError(f"{label}: door_type must be one-way, two-way or null")
    out["door_type"] = door
    kind = raw.get("kind", "finding")
    if kind is None:
        kind = "finding"
    if kind not in KINDS:
        raise PacingError(f"{label}: kind must be one of: {', '.join(KINDS)}")
    out["kind"] = kind
    options = raw.get("options", [])
    if options is None:
        options = []
    if not isinstance(options, list) or len(options) > OPTIONS_MAX:
        raise PacingError(f"{label}: options must be a list of at most {OPTIONS_MAX} strings")
    for opt in options:
        _one_line(opt, f"{label}: each option", OPTION_MAX)
    if len(set(options)) != len(options):
        raise PacingError(f"{label}: options must not repeat")
    recommended = raw.get("recommended")
    if recommended is None and options:
        recommended = options[0]
    if recommended is None:
        raise PacingError(f"{label}: recommended required (the option a Silent Decision takes)")
    out["recommended"] = _one_line(recommended, f"{label}: recommended", OPTION_MAX)
    out["options"] = list(options)
    return out


def validate_request(obj):
    """Check a ``pacing rank`` request and return it normalised (defaults filled in).

    Raises PacingError naming the first problem. Nothing here reads the database.
    """
    if not isinstance(obj, dict):
        raise PacingError("invalid input: expected a JSON object with session_id, phase and findings")
    session_id = _one_line(obj.get("session_id"), "session_id", SESSION_ID_MAX)
    chain_id = obj.get("chain_id")
    chain_id = session_id if chain_id is None else _one_line(chain_id, "chain_id", CHAIN_ID_MAX)
    phase = obj.get("phase")
    if not isinstance(phase, str) or phase.lower() not in PHASES:
        raise PacingError(f"unknown phase {json.dumps(phase)}, must be one of: {', '.join(PHASES)}")
    budget = obj.get("budget")
    if budget is not None and (not _is_int(budget) or budget < 0):
        raise PacingError(f"budget must be a non-negative integer (got {json.dumps(budget)})")
    skill = obj.get("skill", DEFAULT_SKILL)
    if skill is None:
        skill = DEFAULT_SKILL
    if not isinstance(skill, str) or not _KEBAB.fullmatch(skill):
        raise PacingError("skill must be kebab-case")
    findings = obj.get("findings")
    if not isinstance(findings, list):
        raise PacingError("findings must be a list")
    normalised, seen, qids = [], set(), {}
    for position, raw in enumerate(findings, 1):
        f = _finding(raw, position)
        if f["id"] in seen:
            raise PacingError(f"duplicate finding id {f['id']}")
        seen.add(f["id"])
        f["question_id"] = qid = question_id_for(f["id"])
        if qid in qids:
            raise PacingError(f"findings {qids[qid]} and {f['id']} map to the same question id {qid}")
        qids[qid] = f["id"]
        normalised.append(f)
    return {
        "session_id": session_id,
        "chain_id": chain_id,
        "phase": phase.lower(),
        "budget": budget,
        "skill": skill,
        "findings": normalised,
    }


def question_id_for(finding_id):
    """The question-log id for a finding: itself when valid there, else a derived kebab id.

    The derived form keeps the readable part and adds 10 hex digits of its sha1, so two
    different ids never share a question id in practice.
    """
    if len(finding_id) <= QUESTION_ID_MAX and _KEBAB.fullmatch(finding_id):
        return finding_id
    slug = _NON_KEBAB.sub("-", finding_id.lower()).strip("-")[:53].strip("-") or "finding"
    digest = _sha1(finding_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{slug}-{digest}"


def _request_key(project, req):
    canonical = json.dumps([project, req], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return _sha1(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _screened(summary, question_id):
    """(summary safe for the log and the block, withheld?) — instruction-like text is
    replaced, never rejected, so one bad summary cannot break a phase's ranking."""
    flat = flatten_newlines(summary)
    if has_injection(flat) or has_injection(truncate(flat, QUESTION_SUMMARY_MAX)):
        return f"Finding {question_id}: summary withheld (instruction-like text)", True
    return flat, False


# ---------------------------------------------------------------------------
# Ranking
# ---------------------------------------------------------------------------


def _number(value):
    value = float(value)
    return int(value) if value.is_integer() else value


def calibration_in_force(conn, project, include_synthetic=False):
    """The calibrations row that ranks ``project``'s findings, or None for the default rule.

    A project's own calibration beats the global one; within a scope a pinned calibration
    (``plantune calibrations use ID``) beats the newest one. A calibration fitted on
    simulated findings never ranks real ones (only in a demo database, or when the caller
    opts in), and a pin on one is ignored. A team fit (``team calibrate``) or a calibration
    merged from another developer's database is in force only while pinned.
    """
    real = db.real_rows("c", include_synthetic)
    pinned_real = db.real_rows("pc", include_synthetic)
    return conn.execute(
        "SELECT c.id, c.threshold, c.tie_fraction, c.score_function, c.weights_json, c.project,"
        " c.low_confidence, c.synthetic, c.created_at, p.scope IS NOT NULL AS pinned"
        " FROM calibrations c"
        " LEFT JOIN calibration_pins p ON p.calibration_id = c.id AND p.scope = c.project"
        f" WHERE c.project IN (?, ?) AND {real}"
        " AND (p.scope IS NOT NULL OR NOT EXISTS (SELECT 1 FROM calibration_pins pp"
        "  JOIN calibrations pc ON pc.id = pp.calibration_id"
        f"  WHERE pp.scope = c.project AND {pinned_real}))"
        # A team fit or another developer's merged calibration ranks only when pinned.
        " AND (p.scope IS NOT NULL OR (c.fitted_on = 'own' AND c.merged_from IS NULL))"
        " ORDER BY c.project = ? DESC, pinned DESC, c.created_at DESC, c.id DESC LIMIT 1",
        (project, db.GLOBAL_SCOPE, project),
    ).fetchone()


def active_calibration(conn, project):
    """The calibration in force for ``project`` (see ``calibration_in_force``), else the default.

    Returns a dict: id (None for the default), threshold, tie_fraction, score_function,
    weights, and what the caller reports about it (scope, pinned, low_confidence).
    """
    row = calibration_in_force(conn, project)
    if row is None:
        return {
            "id": None,
            "threshold": scoring.DEFAULT_THRESHOLD,
            "tie_fraction": scoring.DEFAULT_TIE_FRACTION,
            "score_function": scoring.DEFAULT_SCORE_FUNCTION,
            "weights": {},
            "in_force": None,
        }
    try:
        weights = json.loads(row[4])
    except ValueError:
        weights = None
    if not isinstance(weights, dict):
        raise PacingError(f"calibration {row[0]} has unusable weights; run `plantune calibrate` again")
    cal = {
        "id": row[0],
        "threshold": row[1],
        "tie_fraction": row[2],
        "score_function": row[3],
        "weights": weights,
        "in_force": {"scope": row[5], "pinned": bool(row[9]), "low_confidence": bool(row[6]),
                     "synthetic": bool(row[7]), "created_at": row[8]},
    }
    try:
        scoring.score({f: 0 for f in scoring.FACTORS}, cal["score_function"], weights)
    except (ValueError, TypeError) as e:
        raise PacingError(f"calibration {row[0]}: {e}; run `plantune calibrate` again") from None
    return cal


def _door(conn, finding):
    """(door_type, door_reason): one-way if any source says so, else two-way.

    The registry (canonical id, for the finding id and the question it stands for), the
    whole summary as the agent sent it, every recorded fact about either id, the
    finding's own door_type (an agent's "one-way" is final, its "two-way" overrules
    nothing), and last the ids' own words (``doors.before_auto_decide``).
    """
    registered = False
    verdicts = {}
    for qid in dict.fromkeys((finding["id"], finding["question_id"])):
        verdict = doors.door_for(conn, qid, finding["door_text"] if qid == finding["id"] else None)
        if verdict.one_way:
            return "one-way", verdict.reason
        registered = registered or verdict.reason == "registry"
        verdicts[qid] = verdict
    if finding["door_type"] == "one-way":
        return "one-way", "finding"
    # Anything not one-way may be decided silently: the ids' own words get a second look.
    for qid, verdict in verdicts.items():
        second = doors.before_auto_decide(conn, qid, verdict)
        if second is not None:
            return "one-way", second.reason
    if registered:
        return "two-way", "registry"
    if finding["door_type"] == "two-way":
        return "two-way", "finding"
    return "two-way", "default-two-way"


def _rank_key(f):
    return (-f["score"], -f["irreversibility"], -f["severity"], f["id"])


def rank(conn, request, project, *, now=None, registry=None):
    """Rank one phase of findings, store every decision and return a ``Ranking``.

    ``request`` is the parsed stdin object (validated here). The whole call is one write
    transaction, so two agents on one chain can never overspend its budget. The same
    request for an already ranked (session, phase) replays the stored answer; a
    different one is refused.
    """
    req = validate_request(request)
    key = _request_key(project, req)
    now = now or db.utc_now()
    session_id, chain_id, phase = req["session_id"], req["chain_id"], req["phase"]
    notes = []
    ttl = ttl_minutes()
    with db.transaction(conn):
        closed = close_idle(conn, project, session_id, chain_id, now, ttl)
        for c in closed:
            notes.append(
                f"{c['kind']} {c['original_id']} was idle for {c['idle_minutes']:g} minutes (limit {ttl:g}):"
                f" closed, its decisions kept as {c['archived_as']}; starting a fresh {c['kind']}"
            )
        run = conn.execute(
            "SELECT request_sha1, output_json FROM pacing_runs"
            " WHERE project = ? AND session_id = ? AND phase = ?",
            (project, session_id, phase),
        ).fetchone()
        if run is not None:
            if run[0] == key:
                return Ranking(json.loads(run[1]), replayed=True)
            raise PacingError(
                f"phase {phase} of session {session_id} is already ranked with other findings;"
                " flip single decisions with `plantune flip ID`"
            )
        if req["findings"]:
            earlier = dict(
                conn.execute(
                    "SELECT finding_id, phase FROM findings WHERE session_id = ?", (session_id,)
                ).fetchall()
            )
            for f in req["findings"]:
                if f["id"] in earlier:
                    raise PacingError(
                        f"finding {f['id']} was already ranked in phase {earlier[f['id']]}"
                        f" of session {session_id}"
                    )
        cal = active_calibration(conn, project)
        if registry is None:
            registry = dict(conn.execute("SELECT id, door_type FROM registry_questions").fetchall())

        chain = conn.execute(
            "SELECT budget FROM pacing_chains WHERE project = ? AND chain_id = ?", (project, chain_id)
        ).fetchone()
        asked = req["budget"]
        if chain is None:
            chain_budget = asked
            conn.execute(
                "INSERT INTO pacing_chains (project, chain_id, budget, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (project, chain_id, asked, now, now),
            )
        else:
            # The chain's first call fixes its budget (none included): a budget that
            # appeared later could already be overspent, and one that changed would let
            # a chained review reset what it has left.
            chain_budget = chain[0]
            conn.execute(
                "UPDATE pacing_chains SET updated_at = ? WHERE project = ? AND chain_id = ?", (now, project, chain_id)
            )
            if asked != chain_budget and asked is not None:
                kept = "no budget" if chain_budget is None else f"its first budget {chain_budget}"
                notes.append(f"chain {chain_id} keeps {kept} (ignored {asked})")
        # Simulated findings never spend a chain's budget (pacing_chain_budgets agrees).
        spent_before = conn.execute(
            "SELECT count(*) FROM findings WHERE project = ? AND chain_id = ? AND surface_reason = 'rank'"
            " AND synthetic = 0",
            (project, chain_id),
        ).fetchone()[0]

        fn, weights = cal["score_function"], cal["weights"]
        threshold, tie_fraction = cal["threshold"], cal["tie_fraction"]
        one_way, gates, eligible, below = [], [], [], []
        for f in req["findings"]:
            f["score"] = scoring.score(f, fn, weights)
            f["door"], f["door_reason"] = _door(conn, f)
            if f["door"] == "one-way":
                one_way.append(f)
            elif f["kind"] in GATE_KINDS:
                gates.append(f)
            elif scoring.reaches_threshold(f["score"], f["id"], threshold, tie_fraction):
                eligible.append(f)
            else:
                below.append(f)
        eligible.sort(key=_rank_key)
        slots = PHASE_CAP
        if chain_budget is not None:
            slots = max(0, min(slots, chain_budget - spent_before))
        ranked, silent = eligible[:slots], eligible[slots:] + below
        one_way.sort(key=_rank_key)
        gates.sort(key=_rank_key)
        silent.sort(key=_rank_key)

        decided = [(f, "surfaced", "one-way") for f in one_way]
        decided += [(f, "surfaced", "rank") for f in ranked]
        decided += [(f, "surfaced", "gate") for f in gates]
        decided += [(f, "silent", None) for f in silent]
        rows = []
        developer = identity.developer()
        for f, disposition, reason in decided:
            summary, withheld = _screened(f["summary"], f["question_id"])
            event_id = choice = None
            if disposition == "silent":
                choice = f["recommended"]
                event_id = _log_event(
                    conn, project, req, f, summary, choice, "auto-decided", now, registry,
                    notes
                )
            rows.append((
                project, session_id, chain_id, phase, f["id"], summary, f["severity"],
                f["irreversibility"], f["decision_matters"], f["door"], f["door_reason"],
                f["kind"], f["recommended"], json.dumps(f["options"], ensure_ascii=False),
                f["score"], threshold, cal["id"], disposition, reason, choice, event_id, now, now,
                f["question_id"], req["skill"], int(withheld), developer,
            ))
        conn.executemany(
            "INSERT INTO findings (project, session_id, chain_id, phase, finding_id, summary,"
            " severity, irreversibility, decision_matters, door_type, door_reason, kind,"
            " recommended, options_json, score, threshold, calibration_id, disposition,"
            " surface_reason, choice, answer_event_id, created_at, updated_at, question_id,"
            " skill, summary_withheld, developer)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
            " ?)",
            rows,
        )

        surface = []
        for f, disposition, reason in decided:
            if disposition != "surfaced":
                break
            item = {"id": f["id"], "reason": reason, "score": _number(f["score"]),
                    "door_reason": f["door_reason"]}
            if f["question_id"] != f["id"]:
                item["question_id"] = f["question_id"]
            surface.append(item)
        output = {
            "session_id": session_id,
            "chain_id": chain_id,
            "phase": phase,
            "threshold": _number(threshold),
            "calibration_id": cal["id"],
            "calibration": cal["in_force"],
            "surface": surface,
            "silent_decisions": [
                {"id": f["id"], "choice": f["recommended"], "score": _number(f["score"]),
                 "flip": f"flip {f['id']}"}
                for f in silent
            ],
            "budget": {
                "chain_budget": chain_budget,
                "spent_before": spent_before,
                "spent_this_phase": len(ranked),
                "remaining": None if chain_budget is None
                else max(0, chain_budget - spent_before - len(ranked)),
                "phase_cap": PHASE_CAP,
            },
        }
        if closed:
            output["fresh_chain"] = any(c["kind"] == "chain" for c in closed)
            output["expired"] = closed
        conn.execute(
            "INSERT INTO pacing_runs (project, session_id, phase, chain_id, request_sha1,"
            " output_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (project, session_id, phase, chain_id, key,
             json.dumps(output, ensure_ascii=False, separators=(",", ":")), now),
        )
    return Ranking(output, notes=notes)


# ---------------------------------------------------------------------------
# Expiry: sessions and chains close after a quiet spell
# ---------------------------------------------------------------------------


def ttl_minutes():
    """The idle limit in minutes: $PLANTUNE_PACING_TTL_MINUTES, else 120."""
    raw = os.environ.get(TTL_ENV, "").strip()
    if not raw:
        return DEFAULT_TTL_MINUTES
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise PacingError(f"{TTL_ENV} must be a positive number of minutes, got {raw!r}")
    return value


def _epoch_ms(ts):
    """Milliseconds since 1970 of a 'YYYY-MM-DDTHH:MM:SS[.mmm]Z' time (no strptime: hot path)."""
    y, m, d = int(ts[0:4]), int(ts[5:7]), int(ts[8:10])
    y -= m <= 2  # days from civil (proleptic Gregorian), as in Howard Hinnant's algorithm
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    seconds = int(ts[11:13]) * 3600 + int(ts[14:16]) * 60 + int(ts[17:19])
    ms = int(ts[20:23]) if len(ts) > 20 and ts[19] == "." else 0
    return (days * 86400 + seconds) * 1000 + ms


def _last_activity(conn, kind, project, ident):
    """The newest ranking or flip of a session or chain (None when it never ranked)."""
    if kind == "session":
        column, ranked = "session_id", "SELECT max(created_at) FROM pacing_runs WHERE session_id = :id"
    else:
        column, ranked = "chain_id", "SELECT updated_at FROM pacing_chains WHERE chain_id = :id"
    row = conn.execute(
        f"SELECT max(coalesce(({ranked} AND project = :p), ''), coalesce((SELECT max(flipped_at)"
        f" FROM findings WHERE {column} = :id AND flipped_at IS NOT NULL AND project = :p), ''))",
        {"id": ident, "p": project},
    ).fetchone()
    return row[0] or None


def _archived_name(conn, kind, project, ident):
    column, table = ("session_id", "pacing_runs") if kind == "session" else ("chain_id", "pacing_chains")
    n = conn.execute(
        "SELECT count(*) FROM pacing_expiries WHERE project = ? AND kind = ? AND original_id = ?",
        (project, kind, ident),
    ).fetchone()[0]
    while True:
        n += 1
        name = f"{ident}{ARCHIVE_MARK}{n}"
        taken = conn.execute(f"SELECT 1 FROM {table} WHERE project = ? AND {column} = ? LIMIT 1",
                             (project, name)).fetchone()
        if taken is None:
            taken = conn.execute(f"SELECT 1 FROM findings WHERE {column} = ? LIMIT 1", (name,)).fetchone()
        if taken is None:
            return name


def close_idle(conn, project, session_id, chain_id, now, ttl):
    """Close the session and the chain a ranking names when each has been idle over ``ttl``.

    Closing keeps every row and value: the session's (or chain's) rows move to an archived
    id and a ``pacing_expiries`` row says so, so the original id starts afresh (no replay,
    a new budget). Runs inside the ranking's write transaction. Returns what was closed.
    """
    closed = []
    now_ms = _epoch_ms(now)
    for kind, ident in (("session", session_id), ("chain", chain_id)):
        last = _last_activity(conn, kind, project, ident)
        if last is None:
            continue
        idle = (now_ms - _epoch_ms(last)) / 60000.0
        if idle <= ttl:
            continue
        name = _archived_name(conn, kind, project, ident)
        if kind == "session":
            conn.execute("UPDATE pacing_runs SET session_id = ? WHERE project = ? AND session_id = ?",
                         (name, project, ident))
            conn.execute("UPDATE findings SET session_id = ? WHERE project = ? AND session_id = ?",
                         (name, project, ident))
        else:
            for table in ("pacing_chains", "pacing_runs", "findings"):
                conn.execute(f"UPDATE {table} SET chain_id = ? WHERE project = ? AND chain_id = ?",
                             (name, project, ident))
        conn.execute(
            "INSERT INTO pacing_expiries (project, kind, original_id, archived_as, last_activity, closed_at,"
            " ttl_minutes) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (project, kind, ident, name, last, now, ttl),
        )
        closed.append({"kind": kind, "original_id": ident, "archived_as": name, "last_activity": last,
                       "idle_minutes": round(idle, 1)})
    return closed


def _log_event(conn, project, ctx, f, summary, choice, source, now, registry, notes):
    """Write one question-log event for a decision and return its row id.

    ``ctx`` carries session_id, phase, chain_id and skill. The record goes through the
    same validation as every gstack event (with a gstack source), then takes the pacing
    source: 'auto-decided' is gstack's own, 'flip' is plantune's. Its line goes to gstack's
    question-log.jsonl as well, so gstack's own /plan-tune views (recent auto-decisions,
    stats by source) see what pacing decided; a mirror problem is added to ``notes``.
    """
    record = {
        "skill": ctx["skill"],
        "question_id": f["question_id"],
        "question_summary": summary,
        "door_type": f["door"],
        "user_choice": choice,
        "recommended": f["recommended"],
        "session_id": ctx["session_id"],
        "phase": ctx["phase"],
        "source": "auto-decided",
        "chain_id": ctx["chain_id"],
    }
    if 1 <= len(f["options"]) <= OPTIONS_MAX:
        record["options_count"] = len(f["options"])
    try:
        record = questions.validate_event(record, now=now, allow_phase=True)
    except questions.QuestionError:
        # Only the summary can still fail here (it was screened above): keep the decision
        # and log it under a neutral summary rather than lose it.
        record["question_summary"] = f"Finding {f['question_id']}"
        record = questions.validate_event(record, now=now, allow_phase=True)
    record["source"] = source
    recorded = questions.record_event(conn, record, project, registry=registry, recorded_at=now)
    if recorded.status == "inserted":
        from toolkit.gstack import mirror

        if mirror.enabled():
            # Appended once the ranking commits; a problem is added to the notes then.
            warning = mirror.append_question_event(conn, project, record, warnings=notes)
            if warning:
                notes.append(warning)
    if recorded.id is not None:
        return recorded.id
    return conn.execute(
        "SELECT id FROM question_log WHERE event_key = ?", (recorded.event_key,)
    ).fetchone()[0]


# ---------------------------------------------------------------------------
# Answers, flips and reports
# ---------------------------------------------------------------------------


def link_answers(conn, session_id=None):
    """Copy each decision's newest answer (the ``pacing_decisions`` view) into ``findings``.

    The view is the rule; this keeps ``findings.answer_event_id`` / ``choice`` current for
    readers of the table. Called lazily by ``pacing show``, ``pacing silent`` and ``flip``;
    returns how many decisions changed.
    """
    where = "" if session_id is None else " AND d.session_id = ?"
    params = [db.utc_now()] + ([] if session_id is None else [session_id])
    with db.transaction(conn):
        cur = conn.execute(
            "UPDATE findings SET answer_event_id = d.answer_event_id, choice = d.answer_choice,"
            " updated_at = ? FROM pacing_decisions d WHERE d.id = findings.id"
            " AND d.answer_event_id IS NOT NULL"
            " AND d.answer_event_id IS NOT findings.answer_event_id" + where,
            params,
        )
        return cur.rowcount


def link_answer(conn, event_row_id):
    """Link one just-logged question-log event to the decision it answers, if any."""
    row = conn.execute(
        "SELECT session_id FROM question_log WHERE id = ?", (event_row_id,)
    ).fetchone()
    if row is None or row[0] is None:
        return 0
    return link_answers(conn, row[0])


_DECISION_COLUMNS = (
    "id, project, session_id, chain_id, phase, finding_id, question_id, summary, kind,"
    " door_type, door_reason, score, disposition, surface_reason, recommended, options_json,"
    " choice, flipped_at, skill, answer_event_id"
)


def find_decision(conn, finding_id, session_id=None, project=None):
    """The decision a ``flip ID`` means: by finding id or question id, in ``session_id``
    when given, else the newest one (preferring ``project``)."""
    sql = (f"SELECT {_DECISION_COLUMNS} FROM findings WHERE (finding_id = ? OR question_id = ?)"
           " AND " + db.real_rows())
    params = [finding_id, finding_id]
    if session_id is not None:
        sql += " AND session_id = ?"
        params.append(session_id)
    sql += " ORDER BY project = ? DESC, id DESC LIMIT 1"
    params.append(project or "")
    row = conn.execute(sql, params).fetchone()
    if row is None:
        where = f" in session {session_id}" if session_id is not None else ""
        raise PacingError(f"no pacing decision with id {finding_id}{where}")
    d = dict(zip([c.strip() for c in _DECISION_COLUMNS.split(",")], row))
    d["options"] = json.loads(d.pop("options_json"))
    return d


def flip_question(decision):
    """The re-opened decision as JSON ready for AskUserQuestion."""
    from shlex import quote

    options = decision["options"] or [decision["recommended"]]
    # Decisions that started silent were auto-chosen; rank/one-way/gate ones never were.
    was_silent = decision["disposition"] == "silent" or decision["surface_reason"] == "flip"
    auto = decision["recommended"] if was_silent else None
    labels = []
    for opt in options:
        notes = []
        if opt == decision["recommended"]:
            notes.append("recommended")
        if opt == auto:
            notes.append("auto-chosen")
        if decision["flipped_at"] and opt == decision["choice"]:
            notes.append("current choice")
        labels.append({"label": opt, "description": ", ".join(notes)})
    return {
        "finding_id": decision["finding_id"],
        "question_id": decision["question_id"],
        "session_id": decision["session_id"],
        "phase": decision["phase"],
        "door_type": decision["door_type"],
        "disposition": decision["disposition"],
        "question": decision["summary"],
        "options": options,
        "recommended": decision["recommended"],
        "auto_chosen": auto,
        "current_choice": decision["choice"],
        "flipped": decision["flipped_at"] is not None,
        "ask_user_question": {
            "questions": [{
                "question": decision["summary"],
                "header": f"Flip {decision['phase']}",
                "multiSelect": False,
                "options": labels,
            }]
        },
        "record_answer": (
            f"plantune flip {quote(decision['finding_id'])} --session"
            f" {quote(decision['session_id'])} --choice OPTION"
        ),
    }


def flip_choice(conn, decision, choice, project=None, now=None):
    """Record the user's new choice for a decision (a 'flip' question-log event)."""
    choice = _one_line(choice, "choice", OPTION_MAX)
    options = decision["options"]
    if options and choice not in options:
        normalised = {questions.normalize_choice(o): o for o in options}
        choice = normalised.get(questions.normalize_choice(choice))
        if choice is None:
            raise PacingError(f"choice must be one of: {', '.join(options)}")
    now = now or db.utc_now()
    ctx = {"skill": decision["skill"], "session_id": decision["session_id"],
           "phase": decision["phase"], "chain_id": decision["chain_id"]}
    f = {"question_id": decision["question_id"], "door": decision["door_type"],
         "recommended": decision["recommended"], "options": options}
    notes = []
    with db.transaction(conn):
        event_id = _log_event(
            conn, decision["project"], ctx, f, decision["summary"], choice, "flip", now, None,
            notes
        )
        conn.execute(
            "UPDATE findings SET choice = ?, answer_event_id = ?, flipped_at = ?, updated_at = ?"
            " WHERE id = ?",
            (choice, event_id, now, now, decision["id"]),
        )
    decision = dict(decision, choice=choice, flipped_at=now, answer_event_id=event_id)
    if notes:
        decision["warning"] = notes[0]
    return decision


def flip_surface(conn, decision, now=None):
    """Take a Silent Decision out of the block: it counts as surfaced (reason 'flip') and
    waits for the user's answer. Spends no chain budget: the user asked for it."""
    if decision["disposition"] != "silent":
        raise PacingError(f"{decision['finding_id']} is already surfaced ({decision['surface_reason']})")
    now = now or db.utc_now()
    with db.transaction(conn):
        conn.execute(
            # The auto-decided event no longer answers it; the user's answer will.
            "UPDATE findings SET disposition = 'surfaced', surface_reason = 'flip', flipped_at = ?,"
            " answer_event_id = NULL, updated_at = ? WHERE id = ?",
            (now, now, decision["id"]),
        )
    return dict(decision, disposition="surfaced", surface_reason="flip", flipped_at=now,
                answer_event_id=None)


_PHASE_ORDER = {p: i for i, p in enumerate(PHASES + ("unknown",))}


def session_summary(conn, session_id):
    """Per-phase counts and budgets of one session (for ``pacing show``)."""
    link_answers(conn, session_id)
    counts = conn.execute(
        "SELECT * FROM pacing_phase_counts WHERE session_id = ?", (session_id,)
    ).fetchall()
    if not counts:
        raise PacingError(f"no pacing decisions for session {session_id}")
    runs = {
        (r[0], r[1]): json.loads(r[2])
        for r in conn.execute(
            "SELECT project, phase, output_json FROM pacing_runs WHERE session_id = ? ORDER BY rowid",
            (session_id,),
        )
    }
    phases = []
    for c in counts:
        c = dict(c)
        run = runs.get((c["project"], c["phase"]), {})
        c["budget"] = run.get("budget")
        c["threshold"] = run.get("threshold")
        c["calibration_id"] = run.get("calibration_id")
        phases.append(c)
    phases.sort(key=lambda c: (c["ranked_at"], _PHASE_ORDER.get(c["phase"], 99)))
    chains = [
        dict(r)
        for r in conn.execute(
            "SELECT project, chain_id, budget, spent, remaining, sessions FROM pacing_chain_budgets"
            " WHERE (project, chain_id) IN (SELECT DISTINCT project, chain_id FROM findings"
            " WHERE session_id = ?) ORDER BY chain_id",
            (session_id,),
        )
    ]
    total = {k: sum(p[k] for p in phases) for k in ("findings", "surfaced", "silent", "flipped")}
    closed = [
        dict(r) for r in conn.execute(
            "SELECT project, archived_as, last_activity, closed_at FROM pacing_expiries"
            " WHERE kind = 'session' AND original_id = ? ORDER BY id", (session_id,),
        )
    ]
    return {"session_id": session_id, "phases": phases, "chains": chains, "total": total, "closed_earlier": closed}


def silent_decisions(conn, session_id, phase=None):
    """The session's Silent Decisions in ranking order (optionally one phase)."""
    link_answers(conn, session_id)
    sql = (
        "SELECT phase, finding_id, question_id, summary, recommended, choice_in_force AS choice,"
        " flipped, score FROM pacing_decisions WHERE session_id = ? AND disposition = 'silent'"
    )
    params = [session_id]
    if phase is not None:
        if phase.lower() not in PHASES:
            raise PacingError(f"unknown phase {json.dumps(phase)}, must be one of: {', '.join(PHASES)}")
        sql += " AND phase = ?"
        params.append(phase.lower())
    sql += " ORDER BY created_at, id"
    rows = [dict(r) for r in conn.execute(sql, params)]
    if not rows and not conn.execute(
        "SELECT 1 FROM findings WHERE session_id = ? LIMIT 1", (session_id,)
    ).fetchone():
        raise PacingError(f"no pacing decisions for session {session_id}")
    for r in rows:
        r["flipped"] = bool(r["flipped"])
        r["score"] = _number(r["score"])
        r["flip"] = f"flip {r['finding_id']}"
    return rows


def silent_block(rows):
    """The Silent Decisions block as Markdown: one line per decision."""
    if not rows:
        return "### Silent Decisions\n\nNone: every finding of this session was surfaced."
    lines = [
        f"### Silent Decisions ({len(rows)})",
        "",
        "Auto-accepted with the recommended option. Reply `flip <id>` to reopen one.",
        "",
    ]
    for r in rows:
        if r["flipped"] and r["choice"] != r["recommended"]:
            chosen = f"`{r['choice']}` (flipped from `{r['recommended']}`)"
        elif r["flipped"]:
            chosen = f"`{r['choice']}` (confirmed)"
        else:
            chosen = f"`{r['choice']}`"
        lines.append(f"- **{r['phase']}** {r['summary']} → {chosen} · `{r['flip']}`")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# gstack-pacing-rank: the hook-side entry point (no click)
# ---------------------------------------------------------------------------

_USAGE = "usage: gstack-pacing-rank [--db PATH] < request.json"


def rank_main(argv=None):
    """``gstack-pacing-rank``: request JSON on stdin, decisions JSON on stdout.

    Same contract as ``plantune pacing rank``; exit 1 with one line on stderr for bad
    input, and nothing stored.
    """
    standalone = argv is None
    argv = sys.argv[1:] if standalone else argv
    prog = "gstack-pacing-rank"
    db_file = None
    if argv[:1] == ["--db"] and len(argv) == 2:
        db_file = argv[1]
    elif argv in (["-h"], ["--help"]):
        print(_USAGE)
        return 0
    elif argv:
        print(f"{prog}: {_USAGE}", file=sys.stderr)
        return 1
    try:
        from toolkit.gstack import mirror
        from toolkit.store import paths

        request = parse_request(sys.stdin.read())
        mirror.keep_to_own_database(db_file)
        conn = db.connect(paths.db_path(db_file))
        try:
            result = rank(conn, request, paths.resolve_slug())
        finally:
            conn.close()
    except (PacingError, db.DatabaseError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - a review template must get one line, not a traceback
        print(f"{prog}: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    for note in result.notes:
        print(f"{prog}: note: {note}", file=sys.stderr)
    # One compact line: the caller is a script (`plantune pacing rank` pretty-prints).
    sys.stdout.write(json.dumps(result.output, ensure_ascii=False, separators=(",", ":")) + "\n")
    if standalone:
        # Committed and flushed: skip interpreter teardown and SQLite's close-time
        # checkpoint, which would double the cost of a one-shot hook call.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0
