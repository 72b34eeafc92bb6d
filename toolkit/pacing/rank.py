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
import sys

from toolkit.core import door_checks, identity, questions, scoring
from toolkit.core.errors import Refused, run_script
from toolkit.core.vocabulary import OPTIONS_MAX, gate_kind
from toolkit.pacing.request import (
    ARCHIVE_MARK,
    DEFAULT_TTL_MINUTES,
    GATE_KINDS,
    PHASE_CAP,
    TTL_ENV,
    PacingError,
    Ranking,
    parse_request,
    request_key,
    screened,
    validate_request,
)
from toolkit.store import db

# question_log truncates session_id to its limit; longer ids could not link.
# json_lite: the json package is slow to import on the hot path (see docs/performance.md).
from toolkit.store import json_lite as json

# ---------------------------------------------------------------------------
# Ranking
# ---------------------------------------------------------------------------


def number(value):
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
        raise PacingError(
            f"calibration {row[0]} has unusable weights; run `plantune calibrate` again"
        )
    cal = {
        "id": row[0],
        "threshold": row[1],
        "tie_fraction": row[2],
        "score_function": row[3],
        "weights": weights,
        "in_force": {
            "scope": row[5],
            "pinned": bool(row[9]),
            "low_confidence": bool(row[6]),
            "synthetic": bool(row[7]),
            "created_at": row[8],
        },
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
    nothing), and last the ids' own words (``door_checks.before_auto_decide``).
    """
    registered = False
    verdicts = {}
    for qid in dict.fromkeys((finding["id"], finding["question_id"])):
        verdict = door_checks.door_for(
            conn, qid, finding["door_text"] if qid == finding["id"] else None
        )
        if verdict.one_way:
            return "one-way", verdict.reason
        registered = registered or verdict.reason == "registry"
        verdicts[qid] = verdict
    if finding["door_type"] == "one-way":
        return "one-way", "finding"
    # Anything not one-way may be decided silently: the ids' own words get a second look.
    for qid, verdict in verdicts.items():
        second = door_checks.before_auto_decide(conn, qid, verdict)
        if second is not None:
            return "one-way", second.reason
    if registered:
        return "two-way", "registry"
    if finding["door_type"] == "two-way":
        return "two-way", "finding"
    return "two-way", "default-two-way"


def _rank_key(f):
    return (-f["score"], -f["irreversibility"], -f["severity"], f["id"])


def _replay(conn, project, req, key):
    """The stored answer when this (session, phase) was already ranked with the same request;
    a refusal when it was ranked with another, or when a finding was ranked before."""
    session_id, phase = req["session_id"], req["phase"]
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
    return None


def _surface_late_one_way(conn, req, replayed):
    """A replayed answer with every Silent Decision whose question is one-way by now (a
    fact learned since the first call) moved to the surface: a retry never silences a
    one-way door. The stored answer and its records stay as they were (the audit lists
    the first call's decision)."""
    output = replayed.output
    silent = {s["id"]: s for s in output["silent_decisions"]}
    late = []
    for f in req["findings"]:
        if f["id"] in silent:
            door, reason = _door(conn, f)
            if door == "one-way":
                late.append((f, reason))
    if not late:
        return replayed
    moved = {f["id"] for f, _ in late}
    surface = []
    for f, reason in late:
        item = {
            "id": f["id"],
            "reason": "one-way",
            "score": silent[f["id"]]["score"],
            "door_reason": reason,
        }
        if f["question_id"] != f["id"]:
            item["question_id"] = f["question_id"]
        surface.append(item)
    output["surface"] = surface + output["surface"]
    output["silent_decisions"] = [s for s in output["silent_decisions"] if s["id"] not in moved]
    replayed.notes.append("one-way since the first call, now surfaced: " + ", ".join(sorted(moved)))
    return replayed


def _chain_budget(conn, project, chain_id, asked, now, notes):
    """The chain's budget: fixed by its first call, which creates the chain row."""
    chain = conn.execute(
        "SELECT budget FROM pacing_chains WHERE project = ? AND chain_id = ?", (project, chain_id)
    ).fetchone()
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
            "UPDATE pacing_chains SET updated_at = ? WHERE project = ? AND chain_id = ?",
            (now, project, chain_id),
        )
        if asked != chain_budget and asked is not None:
            kept = "no budget" if chain_budget is None else f"its first budget {chain_budget}"
            notes.append(f"chain {chain_id} keeps {kept} (ignored {asked})")
    return chain_budget


def _decide(conn, findings, cal, chain_budget, spent_before):
    """Each finding's score, door and disposition: ``(decided, ranked, silent)`` where
    ``decided`` lists (finding, "surfaced" | "silent", reason) in output order."""
    fn, weights = cal["score_function"], cal["weights"]
    threshold, tie_fraction = cal["threshold"], cal["tie_fraction"]
    one_way, gates, eligible, below = [], [], [], []
    for f in findings:
        f["score"] = scoring.score(f, fn, weights)
        f["door"], f["door_reason"] = _door(conn, f)
        # One-time prompts and mutation confirmations are gates: shown, never budgeted.
        f["kind"] = gate_kind(f["question_id"], gate_kind(f["id"], f["kind"]))
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
    return decided, ranked, silent


def _store_decisions(conn, project, req, decided, cal, now, registry, notes):
    """One ``findings`` row per decision; each silent one is logged as an auto-decided answer."""
    session_id, chain_id, phase = req["session_id"], req["chain_id"], req["phase"]
    threshold = cal["threshold"]
    rows = []
    developer = identity.developer()
    for f, disposition, reason in decided:
        summary, withheld = screened(f["summary"], f["question_id"])
        event_id = choice = None
        if disposition == "silent":
            choice = f["recommended"]
            event_id = log_event(
                conn, project, req, f, summary, choice, "auto-decided", now, registry, notes
            )
        rows.append(
            (
                project,
                session_id,
                chain_id,
                phase,
                f["id"],
                summary,
                f["severity"],
                f["irreversibility"],
                f["decision_matters"],
                f["door"],
                f["door_reason"],
                f["kind"],
                f["recommended"],
                json.dumps(f["options"], ensure_ascii=False),
                f["score"],
                threshold,
                cal["id"],
                disposition,
                reason,
                choice,
                event_id,
                now,
                now,
                f["question_id"],
                req["skill"],
                int(withheld),
                developer,
            )
        )
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


def _output(req, cal, decided, ranked, silent, chain_budget, spent_before):
    """What ``rank`` answers: the surfaced findings, the silent decisions and the budget."""
    surface = []
    for f, disposition, reason in decided:
        if disposition != "surfaced":
            break
        item = {
            "id": f["id"],
            "reason": reason,
            "score": number(f["score"]),
            "door_reason": f["door_reason"],
        }
        if f["question_id"] != f["id"]:
            item["question_id"] = f["question_id"]
        surface.append(item)
    output = {
        "session_id": req["session_id"],
        "chain_id": req["chain_id"],
        "phase": req["phase"],
        "threshold": number(cal["threshold"]),
        "calibration_id": cal["id"],
        "calibration": cal["in_force"],
        "surface": surface,
        "silent_decisions": [
            {
                "id": f["id"],
                "choice": f["recommended"],
                "score": number(f["score"]),
                "flip": f"flip {f['id']}",
            }
            for f in silent
        ],
        "budget": {
            "chain_budget": chain_budget,
            "spent_before": spent_before,
            "spent_this_phase": len(ranked),
            "remaining": None
            if chain_budget is None
            else max(0, chain_budget - spent_before - len(ranked)),
            "phase_cap": PHASE_CAP,
        },
    }
    return output


def rank(conn, request, project, *, now=None, registry=None):
    """Rank one phase of findings, store every decision and return a ``Ranking``.

    ``request`` is the parsed stdin object (validated here). The whole call is one write
    transaction, so two agents on one chain can never overspend its budget. The same
    request for an already ranked (session, phase) replays the stored answer; a
    different one is refused.
    """
    req = validate_request(request)
    key = request_key(project, req)
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
        replayed = _replay(conn, project, req, key)
        if replayed is not None:
            return _surface_late_one_way(conn, req, replayed)
        cal = active_calibration(conn, project)
        if registry is None:
            registry = dict(conn.execute("SELECT id, door_type FROM registry_questions").fetchall())
        chain_budget = _chain_budget(conn, project, chain_id, req["budget"], now, notes)
        # Simulated findings never spend a chain's budget (pacing_chain_budgets agrees).
        spent_before = conn.execute(
            "SELECT count(*) FROM findings WHERE project = ? AND chain_id = ? AND surface_reason = 'rank'"
            " AND synthetic = 0",
            (project, chain_id),
        ).fetchone()[0]
        decided, ranked, silent = _decide(conn, req["findings"], cal, chain_budget, spent_before)
        _store_decisions(conn, project, req, decided, cal, now, registry, notes)
        output = _output(req, cal, decided, ranked, silent, chain_budget, spent_before)
        if closed:
            output["fresh_chain"] = any(c["kind"] == "chain" for c in closed)
            output["expired"] = closed
        conn.execute(
            "INSERT INTO pacing_runs (project, session_id, phase, chain_id, request_sha1,"
            " output_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                project,
                session_id,
                phase,
                chain_id,
                key,
                json.dumps(output, ensure_ascii=False, separators=(",", ":")),
                now,
            ),
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
        column, ranked = (
            "session_id",
            "SELECT max(created_at) FROM pacing_runs WHERE session_id = :id",
        )
    else:
        column, ranked = "chain_id", "SELECT updated_at FROM pacing_chains WHERE chain_id = :id"
    row = conn.execute(
        f"SELECT max(coalesce(({ranked} AND project = :p), ''), coalesce((SELECT max(flipped_at)"
        f" FROM findings WHERE {column} = :id AND flipped_at IS NOT NULL AND project = :p), ''))",
        {"id": ident, "p": project},
    ).fetchone()
    return row[0] or None


def _archived_name(conn, kind, project, ident):
    column, table = (
        ("session_id", "pacing_runs") if kind == "session" else ("chain_id", "pacing_chains")
    )
    n = conn.execute(
        "SELECT count(*) FROM pacing_expiries WHERE project = ? AND kind = ? AND original_id = ?",
        (project, kind, ident),
    ).fetchone()[0]
    while True:
        n += 1
        name = f"{ident}{ARCHIVE_MARK}{n}"
        taken = conn.execute(
            f"SELECT 1 FROM {table} WHERE project = ? AND {column} = ? LIMIT 1", (project, name)
        ).fetchone()
        if taken is None:
            taken = conn.execute(
                f"SELECT 1 FROM findings WHERE {column} = ? LIMIT 1", (name,)
            ).fetchone()
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
            conn.execute(
                "UPDATE pacing_runs SET session_id = ? WHERE project = ? AND session_id = ?",
                (name, project, ident),
            )
            conn.execute(
                "UPDATE findings SET session_id = ? WHERE project = ? AND session_id = ?",
                (name, project, ident),
            )
        else:
            for table in ("pacing_chains", "pacing_runs", "findings"):
                conn.execute(
                    f"UPDATE {table} SET chain_id = ? WHERE project = ? AND chain_id = ?",
                    (name, project, ident),
                )
        conn.execute(
            "INSERT INTO pacing_expiries (project, kind, original_id, archived_as, last_activity, closed_at,"
            " ttl_minutes) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (project, kind, ident, name, last, now, ttl),
        )
        closed.append(
            {
                "kind": kind,
                "original_id": ident,
                "archived_as": name,
                "last_activity": last,
                "idle_minutes": round(idle, 1),
            }
        )
    return closed


def log_event(conn, project, ctx, f, summary, choice, source, now, registry, notes):
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
# gstack-pacing-rank: the hook-side entry point (no click)
# ---------------------------------------------------------------------------

_USAGE = "usage: gstack-pacing-rank [--db PATH] < request.json"


def rank_main(argv=None):
    """``gstack-pacing-rank``: request JSON on stdin, decisions JSON on stdout.

    Same contract as ``plantune pacing rank``; exit 1 with one line on stderr for bad
    input, and nothing stored.
    """
    return run_script(_PROG, _rank_command, argv)


_PROG = "gstack-pacing-rank"


def _rank_command(argv):
    db_file = None
    if argv[:1] == ["--db"] and len(argv) == 2:
        db_file = argv[1]
    elif argv in (["-h"], ["--help"]):
        print(_USAGE)
        return 0
    elif argv:
        raise Refused(_USAGE)
    try:
        from toolkit.core import seeded_db
        from toolkit.gstack import mirror
        from toolkit.store import paths
        from toolkit.store.safe_io import stdin_text

        request = parse_request(stdin_text())
        mirror.keep_to_own_database(db_file)
        conn = seeded_db.connect(paths.db_path(db_file))
        try:
            result = rank(conn, request, paths.resolve_slug())
        finally:
            db.finish(conn)
    except (PacingError, db.DatabaseError) as e:
        raise Refused(str(e)) from None
    for note in result.notes:
        print(f"{_PROG}: note: {note}", file=sys.stderr)
    # One compact line: the caller is a script (`plantune pacing rank` pretty-prints).
    sys.stdout.write(json.dumps(result.output, ensure_ascii=False, separators=(",", ":")) + "\n")
    return 0
