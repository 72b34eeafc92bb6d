"""Stored calibrations: the latest one, one by id, the list, pins (which calibration ranks a
scope) and the comparison of two over recent findings.
"""

import json

import numpy as np

from toolkit.analysis.calibrate import load_findings, record_event
from toolkit.analysis.fit import CalibrationError, interruptions, score_findings, surfaced_mask
from toolkit.core.vocabulary import GATE_KINDS
from toolkit.store import db

# --------------------------------------------------------------------------- managing calibrations


def get(conn, calibration_id):
    """One calibrations row as a dict (weights parsed), or raise CalibrationError."""
    row = conn.execute("SELECT * FROM calibrations WHERE id = ?", (calibration_id,)).fetchone()
    if row is None:
        raise CalibrationError(
            f"no calibration with id {calibration_id} (see `plantune calibrations list`)"
        )
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

    rows = [
        dict(r)
        for r in conn.execute(
            "SELECT c.id, c.project AS scope, c.created_at, c.n_findings, c.n_sessions, c.threshold,"
            " c.tie_fraction, c.achieved_rate, c.ci_low, c.ci_high, c.override_recall, c.score_function,"
            " c.synthetic, c.low_confidence, p.scope IS NOT NULL AS pinned, c.source, c.developer,"
            " c.fitted_on, c.merged_from, c.max_miss, c.miss_confidence, c.miss_upper_bound"
            " FROM calibrations c LEFT JOIN calibration_pins p ON p.calibration_id = c.id AND p.scope = c.project"
            " WHERE (:project IS NULL OR c.project = :project)"
            " ORDER BY c.created_at DESC, c.id DESC",
            {"project": project},
        )
    ]
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
        record_event(
            conn, c["project"], "pinned", calibration_id, previous, c["synthetic"], detail, now
        )
    return {
        "scope": c["project"],
        "calibration_id": calibration_id,
        "previous_id": previous,
        "low_confidence": c["low_confidence"],
    }


def unpin(conn, scope, now=None):
    """Release a scope's pin so its newest usable calibration is in force again."""
    from toolkit.pacing import rank as pacing

    now = now or db.utc_now()
    with db.transaction(conn):
        row = conn.execute(
            "SELECT calibration_id FROM calibration_pins WHERE scope = ?", (scope,)
        ).fetchone()
        if row is None:
            pinned = None
        else:
            pinned = row[0]
            conn.execute("DELETE FROM calibration_pins WHERE scope = ?", (scope,))
            now_in_force = pacing.calibration_in_force(conn, scope)
            current = (
                now_in_force[0] if now_in_force is not None and now_in_force[5] == scope else None
            )
            record_event(
                conn, scope, "unpinned", current, pinned, 0, "newest calibration in force", now
            )
    in_force = pacing.calibration_in_force(conn, scope)
    return {
        "scope": scope,
        "unpinned": pinned,
        "calibration_id": in_force[0] if in_force is not None else None,
    }


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
    history = {
        "project": project or db.GLOBAL_SCOPE,
        "days": days,
        "since": None,
        "until": newest,
        "findings": 0,
        "sessions": 0,
        "synthetic_included": bool(include_synthetic),
    }
    results = {}
    if newest is not None:
        since = conn.execute(
            "SELECT strftime('%Y-%m-%dT%H:%M:%fZ', ?, ?)", (newest, f"-{int(days)} days")
        ).fetchone()[0]
        history["since"] = since
        findings = load_findings(conn, project, since, include_synthetic)
        history["findings"] = findings["n"]
        history["sessions"] = (
            int(np.unique(findings["session_id"].astype(str)).size) if findings["n"] else 0
        )
        if findings["n"]:
            one_way = findings["door_type"] == "one-way"
            gate = np.isin(findings["kind"], GATE_KINDS)
            two_way = ~one_way & ~gate
            for key, c in (("a", a), ("b", b)):
                weights = c["weights"] if isinstance(c["weights"], dict) else {}
                scores = score_findings(
                    findings["severity"],
                    findings["irreversibility"],
                    findings["decision_matters"],
                    c["score_function"],
                    weights or None,
                )
                eligible = np.zeros(findings["n"], dtype=bool)
                eligible[two_way] = surfaced_mask(
                    scores[two_way],
                    c["threshold"],
                    c["tie_fraction"],
                    ids=findings["finding_id"][two_way],
                )
                rate = float(eligible[two_way].mean()) if two_way.any() else None
                results[key] = {
                    "share_asked": rate,
                    "interruptions": interruptions(
                        findings["session_id"], findings["phase"], one_way, gate, eligible
                    ),
                }
    return {"a": a, "b": b, "history": history, "applied": results}
