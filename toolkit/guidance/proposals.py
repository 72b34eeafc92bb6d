"""Guidance proposals: evidence-backed changes to a project's guidance file, and apply.

A proposal turns repeated, user-originated evidence from the database into reviewable
changes, one rule per kind (always-ask, never-ask, explicit preferences restated, artifact
policy, removals), each item naming the events that justify it. Nothing is written until
``apply_proposal``, which fails closed when the guidance file or a preference it depends on
changed since the proposal was made. A one-way door is never proposed for suppression.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict

from toolkit.core import door_checks, doors, identity
from toolkit.core.questions import NO_ANSWER_CHOICES, normalize_choice
from toolkit.core.screening import has_injection
from toolkit.core.vocabulary import SILENCING_PREFERENCES, USER_PREFERENCE_SOURCES
from toolkit.guidance.files import (
    Layout,
    canonical,
    file_hash,
    preference_lines,
    read_layer,
    section_lines,
    sha256_hex,
)
from toolkit.store import db, safe_io

# ---------------------------------------------------------------------------
# Evidence rules. Conservative on purpose: each needs repetition across sessions.

USER_SOURCES = ("agent", "hook", "auq-other", "transcript-import")
NEVER_ASK_MIN_EVENTS = 5
NEVER_ASK_MIN_SESSIONS = 2
ALWAYS_ASK_MIN_OVERRIDES = 3
ALWAYS_ASK_MIN_SESSIONS = 2
ALWAYS_ASK_MIN_SHARE = 0.5
ARTIFACT_MIN_RUNS = 3
ARTIFACT_MIN_SESSIONS = 2
THRESHOLDS = {
    "never_ask_min_events": NEVER_ASK_MIN_EVENTS,
    "never_ask_min_sessions": NEVER_ASK_MIN_SESSIONS,
    "always_ask_min_overrides": ALWAYS_ASK_MIN_OVERRIDES,
    "always_ask_min_sessions": ALWAYS_ASK_MIN_SESSIONS,
    "always_ask_min_share": ALWAYS_ASK_MIN_SHARE,
    "artifact_min_runs": ARTIFACT_MIN_RUNS,
    "artifact_min_sessions": ARTIFACT_MIN_SESSIONS,
}
SUPPRESSING = SILENCING_PREFERENCES
# ---------------------------------------------------------------------------
# Proposals


def registry_of(conn):
    return dict(conn.execute("SELECT id, door_type FROM registry_questions"))


def unsafe_ids(conn, candidates, registry=None):
    """The ids among ``candidates`` that any safety signal calls one-way.

    ``door_checks.door_for`` on each id (the registry and every recorded fact, in canonical form:
    a logged door_type or door_class, a one-way pacing finding), plus the classifier over
    the summaries of events logged without a door_class (older or foreign writers), and
    ``door_checks.before_auto_decide`` (the id's own words, a look-alike spelling). One
    signal is enough: suppression is never proposed or applied on a doubtful id.
    ``registry`` (id -> door type) is consulted too when given.
    """
    candidates = sorted({c for c in candidates if isinstance(c, str)})
    unsafe = {c for c in candidates if registry and doors.decide(c, registry=registry).one_way}
    verdicts = {c: door_checks.door_for(conn, c) for c in candidates if c not in unsafe}
    unsafe.update(c for c, verdict in verdicts.items() if verdict.one_way)
    for i in range(0, len(candidates), 500):
        chunk = [c for c in candidates[i : i + 500] if c not in unsafe]
        if not chunk:
            continue
        marks = ",".join("?" * len(chunk))
        for qid, skill, category, summary in conn.execute(
            "SELECT DISTINCT question_id, skill, category, question_summary FROM question_log"
            f" WHERE question_id IN ({marks}) AND door_class IS NULL",
            chunk,
        ):
            if qid not in unsafe and doors.decide(qid, skill, category, summary, {}).one_way:
                unsafe.add(qid)
    # The second look every auto-decision takes (the id's own words, facts under a
    # look-alike spelling): a registration or a never-ask must not outlive it.
    unsafe.update(
        c
        for c, verdict in verdicts.items()
        if c not in unsafe and door_checks.before_auto_decide(conn, c, verdict)
    )
    return unsafe


class UnsafeCheck:
    """``qid in check`` answers unsafe_ids for one id at a time, cached."""

    def __init__(self, conn, registry):
        self.conn, self.registry, self.known = conn, registry, {}

    def prime(self, ids):
        todo = [i for i in ids if i not in self.known]
        bad = unsafe_ids(self.conn, todo, self.registry)
        self.known.update((i, i in bad) for i in todo)

    def __contains__(self, qid):
        if qid not in self.known:
            self.prime([qid])
        return self.known[qid]


def preferences_hash(conn, slug, question_ids) -> str:
    """Hash of the project and global preference rows of ``question_ids`` (absent rows too)."""
    qids = sorted(set(question_ids))
    rows = []
    if qids:
        marks = ",".join("?" * len(qids))
        rows = [
            list(r)
            for r in conn.execute(
                "SELECT scope, question_id, preference, raw_value, source, updated_at"
                f" FROM preferences WHERE scope IN (?, ?) AND question_id IN ({marks})"
                " AND " + db.real_rows() + " ORDER BY scope, question_id",
                (slug, db.GLOBAL_SCOPE, *qids),
            )
        ]
    return sha256_hex(canonical([qids, rows]).encode())


def _preference(conn, scope, qid):
    # A simulated preference never shapes a real proposal (only in a demo database).
    r = conn.execute(
        "SELECT preference, source FROM preferences WHERE scope = ? AND question_id = ?"
        " AND " + db.real_rows(),
        (scope, qid),
    ).fetchone()
    return (r[0], r[1]) if r else (None, None)


def _runs_of_sessions(conn, slug, sessions):
    sessions = sorted(s for s in sessions if s)
    if not sessions:
        return []
    marks = ",".join("?" * len(sessions))
    return [
        r[0]
        for r in conn.execute(
            f"SELECT run_id FROM trace_runs WHERE project = ? AND session_id IN ({marks})"
            " ORDER BY created_at, run_id",
            (slug, *sessions),
        )
    ]


def _pref_line(qid, pref, reason):
    return f"- `{qid}`: {pref} — {reason}"


class _Evidence:
    """What a proposal is computed from (one project's history and guidance file), and the
    items and rejected candidates found so far."""

    def __init__(self, conn, layout, slug):
        self.conn, self.slug = conn, slug
        self.registry = registry_of(conn)
        self.layer = read_layer(layout.local_file, "project")
        guidance_lines = None
        if self.layer.sections is not None:
            guidance_lines = safe_io.read_text(layout.local_file).splitlines()
        self.existing_prefs = preference_lines(guidance_lines) if guidance_lines else {}
        self.artifact_text = (
            "\n".join(l for _, l in section_lines(guidance_lines, "Artifact Policy"))
            if guidance_lines
            else ""
        )
        self.by_qid = _answers_by_question(conn, slug)
        self.flips = _flipped_silent_decisions(conn, slug)
        # Checked lazily: only ids that reach a threshold pay for the one-way lookups.
        self.unsafe = UnsafeCheck(conn, self.registry)
        self.items, self.rejected = [], []

    def reject(self, subject, rule, reason, evidence=None):
        self.rejected.append(
            {"subject": subject, "rule": rule, "reason": reason, "evidence": evidence or {}}
        )


def _answers_by_question(conn, slug):
    """The project's user-originated answers, per question id, oldest first."""
    # Plain tuples: this reads the project's whole answer history.
    cur = conn.cursor()
    cur.row_factory = None
    marks = ",".join("?" * len(USER_SOURCES))
    cur.execute(
        "SELECT id, session_id, question_id, user_choice, recommended, followed_recommendation"
        f" FROM question_log WHERE project = ? AND {db.real_rows()} AND source IN ({marks})"
        " AND user_choice NOT IN (?, ?) ORDER BY ts, id",
        (slug, *USER_SOURCES, *NO_ANSWER_CHOICES),
    )
    by_qid = OrderedDict()
    for eid, session, qid, choice, rec, followed in cur:
        by_qid.setdefault(qid, []).append(
            {
                "id": eid,
                "session_id": session,
                "user_choice": choice,
                "recommended": rec,
                "followed_recommendation": followed,
            }
        )
    return by_qid


def _flipped_silent_decisions(conn, slug):
    """Flips of silent pacing decisions are overrides by the user, keyed by the question
    that answered the finding when known, else by the finding id."""
    flips = {}
    for r in conn.execute(
        "SELECT f.id, f.session_id, COALESCE(q.question_id, f.finding_id) AS qid"
        " FROM findings f LEFT JOIN question_log q ON q.id = f.answer_event_id"
        " WHERE f.project = ? AND " + db.real_rows("f") + " AND f.disposition = 'silent'"
        " AND f.flipped_at IS NOT NULL ORDER BY f.id",
        (slug,),
    ):
        flips.setdefault(r["qid"], []).append((r["id"], r["session_id"]))
    return flips


def _propose_always_ask(ev):
    """always-ask where the user keeps overriding the recommendation; returns those ids."""
    always_ask = set()
    for qid in list(ev.by_qid) + [q for q in ev.flips if q not in ev.by_qid]:
        evs = ev.by_qid.get(qid, [])
        with_rec = [
            e
            for e in evs
            if e["recommended"] is not None and e["followed_recommendation"] is not None
        ]
        overrides = [e for e in with_rec if e["followed_recommendation"] == 0]
        flip_rows = ev.flips.get(qid, [])
        n_over = len(overrides) + len(flip_rows)
        sessions = {e["session_id"] for e in overrides if e["session_id"]}
        sessions |= {s for _, s in flip_rows if s}
        total = len(with_rec) + len(flip_rows)
        if n_over < ALWAYS_ASK_MIN_OVERRIDES:
            continue
        evidence = {
            "question_events": [e["id"] for e in overrides],
            "findings": [i for i, _ in flip_rows],
            "sessions": sorted(sessions),
            "trace_runs": _runs_of_sessions(ev.conn, ev.slug, sessions),
        }
        if len(sessions) < ALWAYS_ASK_MIN_SESSIONS:
            ev.reject(qid, "always-ask", f"{n_over} overrides, but all in one session", evidence)
            continue
        if n_over / total < ALWAYS_ASK_MIN_SHARE:
            ev.reject(
                qid,
                "always-ask",
                f"overrides are {n_over} of {total} answers, under {ALWAYS_ASK_MIN_SHARE:.0%}",
                evidence,
            )
            continue
        if qid in ev.unsafe:
            ev.reject(qid, "always-ask", "one-way doors are always asked already", evidence)
            continue
        current, _ = _preference(ev.conn, ev.slug, qid)
        glob, _ = _preference(ev.conn, db.GLOBAL_SCOPE, qid)
        if current == "always-ask" or (current is None and glob == "always-ask"):
            ev.reject(qid, "always-ask", "already always-ask", evidence)
            continue
        always_ask.add(qid)
        line = _pref_line(
            qid,
            "always-ask",
            f"the recommendation was overridden {n_over} times in {len(sessions)} sessions",
        )
        ev.items.append(
            {
                "id": f"always-ask:{qid}",
                "action": "edit" if current or qid in ev.existing_prefs else "add",
                "kind": "preference",
                "section": "Project Preferences",
                "question_id": qid,
                "preference": "always-ask",
                "previous_preference": current,
                "line": line,
                "rule": (
                    f"recommendation overridden in >= {ALWAYS_ASK_MIN_OVERRIDES} answers across "
                    f">= {ALWAYS_ASK_MIN_SESSIONS} sessions and >= {ALWAYS_ASK_MIN_SHARE:.0%} "
                    "of answers with a recommendation"
                ),
                "evidence": evidence,
                "future_behaviour": f"`{qid}` is always asked in this project, never auto-decided "
                "or paced silently.",
                "rejected_alternatives": [
                    "never-ask: would auto-pick the recommendation this user keeps overriding",
                    "leave as is: the recommendation keeps being overridden",
                ],
            }
        )
    return always_ask


def _propose_never_ask(ev, always_ask):
    """never-ask where the user gave the recommended answer again and again."""
    for qid, evs in ev.by_qid.items():
        last = normalize_choice(evs[-1]["user_choice"])
        streak = []
        for e in reversed(evs):
            if normalize_choice(e["user_choice"]) != last:
                break
            streak.append(e)
        streak.reverse()
        sessions = sorted({e["session_id"] for e in streak if e["session_id"]})
        if len(streak) < NEVER_ASK_MIN_EVENTS:
            continue
        evidence = {
            "question_events": [e["id"] for e in streak],
            "sessions": sessions,
            "trace_runs": _runs_of_sessions(ev.conn, ev.slug, sessions),
        }
        if qid in ev.unsafe:
            ev.reject(
                qid,
                "never-ask",
                f"same answer {len(streak)} times, but it is a one-way door: never suppressed",
                evidence,
            )
            continue
        if "-split-" in qid:
            ev.reject(
                qid,
                "never-ask",
                "split-chain questions are always asked; a preference would not apply",
                evidence,
            )
            continue
        if len(sessions) < NEVER_ASK_MIN_SESSIONS:
            ev.reject(
                qid,
                "never-ask",
                f"same answer {len(streak)} times, but all in one session",
                evidence,
            )
            continue
        if not all(e["followed_recommendation"] == 1 for e in streak):
            ev.reject(
                qid,
                "never-ask",
                "the repeated answer is not always the recommended "
                "option, so auto-deciding would not reproduce it",
                evidence,
            )
            continue
        if qid in always_ask:
            ev.reject(
                qid,
                "never-ask",
                "conflicting evidence: the recommendation was also "
                "often overridden (always-ask proposed instead)",
                evidence,
            )
            continue
        current, csource = _preference(ev.conn, ev.slug, qid)
        glob, _ = _preference(ev.conn, db.GLOBAL_SCOPE, qid)
        if current is not None:
            ev.reject(
                qid,
                "never-ask",
                f"the project already has a {current} preference "
                f"(source {csource}); an explicit choice is not overridden",
                evidence,
            )
            continue
        if glob is not None:
            ev.reject(
                qid,
                "never-ask",
                f"the global preference is {glob}; not overridden for one project",
                evidence,
            )
            continue
        line = _pref_line(
            qid,
            "never-ask",
            f'answered "{_one_line(last)}" (the '
            f"recommendation) {len(streak)} times in {len(sessions)} sessions",
        )
        ev.items.append(
            {
                "id": f"never-ask:{qid}",
                "action": "edit" if qid in ev.existing_prefs else "add",
                "kind": "preference",
                "section": "Project Preferences",
                "question_id": qid,
                "preference": "never-ask",
                "previous_preference": None,
                "line": line,
                "rule": (
                    f"same recommended answer to a two-way question in >= "
                    f"{NEVER_ASK_MIN_EVENTS} events across >= {NEVER_ASK_MIN_SESSIONS} "
                    "sessions, with no different answer since"
                ),
                "evidence": evidence,
                "future_behaviour": f"`{qid}` is auto-decided to the recommended option in this "
                "project (one-way safety checks still apply).",
                "rejected_alternatives": [
                    "global never-ask: evidence comes from this project only",
                    "ask-only-for-one-way: same effect on a two-way question, less clear",
                ],
            }
        )


def _restate_explicit_preferences(ev):
    # Explicit preferences the user stated (tune: replies, /plan-tune): restate the ones
    # in force in the guidance file so the agent sees them with their reason.
    seen = set()
    for r in ev.conn.execute(
        "SELECT e.id, e.question_id, e.preference, e.source, e.free_text, e.extra_json,"
        " p.preference AS current FROM preference_events e"
        " JOIN preferences p ON p.scope = e.scope AND p.question_id = e.question_id"
        " WHERE e.scope = ? AND e.event_type = 'preference-set' AND "
        + db.real_rows("e")
        + " ORDER BY e.ts DESC, e.id DESC",
        (ev.slug,),
    ):
        qid = r["question_id"]
        if qid in seen or qid is None:
            continue
        seen.add(qid)
        if r["source"] not in USER_PREFERENCE_SOURCES:
            continue
        try:
            extra = json.loads(r["extra_json"])
        except ValueError:
            extra = {}
        if extra.get("proposal_id"):
            continue  # written by an earlier apply, already in the file
        if r["preference"] != r["current"] or any(i.get("question_id") == qid for i in ev.items):
            continue
        if r["preference"] in SUPPRESSING and qid in ev.unsafe:
            ev.reject(
                qid,
                "explicit-preference",
                f"{r['preference']} is inert on a one-way door; not restated",
                {"preference_events": [r["id"]]},
            )
            continue
        if ev.existing_prefs.get(qid, (None, None))[1] == r["preference"]:
            continue
        reason = f"stated by the user (source {r['source']})"
        if r["free_text"] and not has_injection(r["free_text"]):
            reason += f': "{_one_line(r["free_text"])}"'
        ev.items.append(
            {
                "id": f"explicit:{qid}",
                "action": "edit" if qid in ev.existing_prefs else "add",
                "kind": "preference-note",
                "section": "Project Preferences",
                "question_id": qid,
                "preference": r["preference"],
                "previous_preference": r["preference"],
                "line": _pref_line(qid, r["preference"], reason),
                "rule": "explicit user preference (tune: reply or /plan-tune); restated as written",
                "evidence": {"preference_events": [r["id"]]},
                "future_behaviour": f"the guidance context shows the {r['preference']} preference "
                f"for `{qid}` and why; the preference itself is unchanged.",
                "rejected_alternatives": ["changing the preference: the user set it explicitly"],
            }
        )


def _propose_artifact_policy(ev):
    # Artifact policy: a required output missing again and again.
    missing_runs = OrderedDict()
    last_seen = {}
    for r in ev.conn.execute(
        "SELECT run_id, session_id, created_at, required_outputs_json, missing_outputs_json"
        " FROM trace_runs WHERE project = ? ORDER BY created_at, run_id",
        (ev.slug,),
    ):
        try:
            required = json.loads(r["required_outputs_json"])
            missing = set(json.loads(r["missing_outputs_json"]))
        except ValueError:
            continue
        for p in required:
            if not isinstance(p, str):
                continue
            last_seen[p] = p in missing
            if p in missing:
                missing_runs.setdefault(p, []).append((r["run_id"], r["session_id"] or r["run_id"]))
    for p, runs in missing_runs.items():
        if len(runs) < ARTIFACT_MIN_RUNS:
            continue
        sessions = sorted({s for _, s in runs})
        evidence = {"trace_runs": [rid for rid, _ in runs], "sessions": sessions}
        if len(sessions) < ARTIFACT_MIN_SESSIONS:
            ev.reject(p, "artifact-policy", f"missing in {len(runs)} runs of one session", evidence)
            continue
        if not last_seen.get(p):
            ev.reject(p, "artifact-policy", "found in the latest run that required it", evidence)
            continue
        if has_injection(p) or "`" in p or "\n" in p or len(p) > 200:
            ev.reject(_one_line(p)[:80], "artifact-policy", "the path is not plain text", evidence)
            continue
        if f"`{p}`" in ev.artifact_text:
            continue
        ev.items.append(
            {
                "id": f"artifact:{p}",
                "action": "add",
                "kind": "artifact-policy",
                "section": "Artifact Policy",
                "path": p,
                "line": f"- Produce `{p}` before the session ends: it was required but missing in "
                f"{len(runs)} runs across {len(sessions)} sessions.",
                "rule": (
                    f"required output missing in >= {ARTIFACT_MIN_RUNS} runs across >= "
                    f"{ARTIFACT_MIN_SESSIONS} sessions, and in the latest one"
                ),
                "evidence": evidence,
                "future_behaviour": f"agents are reminded to write `{p}`; the validator gate "
                "still checks it.",
                "rejected_alternatives": [
                    "dropping the requirement: guidance never relaxes a required output",
                ],
            }
        )


def _propose_removals(ev):
    # Removals: a suppressing preference line in the file for an id now known one-way.
    for qid, (_, pref) in ev.existing_prefs.items():
        if (
            pref in SUPPRESSING
            and qid in ev.unsafe
            and not any(i.get("question_id") == qid for i in ev.items)
        ):
            ev.items.append(
                {
                    "id": f"remove:{qid}",
                    "action": "remove",
                    "kind": "preference-note",
                    "section": "Project Preferences",
                    "question_id": qid,
                    "preference": None,
                    "previous_preference": pref,
                    "line": None,
                    "rule": "guidance must not suggest suppressing a one-way door",
                    "evidence": {"registry": {qid: ev.registry.get(qid, "classified one-way")}},
                    "future_behaviour": f"the guidance no longer lists {pref} for `{qid}`; it is "
                    "asked every time (one-way).",
                    "rejected_alternatives": ["keeping the line: it would mislead the agent"],
                }
            )


def build_proposal(conn, layout: Layout, slug=None, run_id=None, now=None) -> dict:
    """Compute a proposal from the project's history; nothing is written.

    Returns a dict with ``items`` (each naming its evidence, rule, future behaviour and
    rejected alternatives), ``rejected`` candidates with reasons, and the hashes that
    ``apply_proposal`` re-checks. Each kind of item has its own rule (one function each).
    """
    slug = slug or layout.slug()
    now = now or db.utc_now()
    ev = _Evidence(conn, layout, slug)
    always_ask = _propose_always_ask(ev)
    _propose_never_ask(ev, always_ask)
    _restate_explicit_preferences(ev)
    _propose_artifact_policy(ev)
    _propose_removals(ev)
    items, rejected, unsafe, layer = ev.items, ev.rejected, ev.unsafe, ev.layer
    items = [i for i in items if is_safe(i, unsafe)]
    affected = sorted({i["question_id"] for i in items if i.get("question_id")})
    proposal = {
        "project": slug,
        "project_dir": layout.project_dir,
        "run_id": run_id,
        "created_at": now,
        "guidance_file": layout.rel(layout.local_file),
        "guidance_hash": file_hash(layout.local_file),
        "guidance_malformed": layer.warning,
        "affected_question_ids": affected,
        "preferences_hash": preferences_hash(conn, slug, affected),
        "items": items,
        "rejected": rejected,
        "thresholds": THRESHOLDS,
    }
    proposal["id"] = (
        "gp-"
        + sha256_hex(
            canonical(
                [slug, layout.project_dir, run_id, now, items, proposal["guidance_hash"]]
            ).encode()
        )[:12]
    )
    return proposal


def is_safe(item, unsafe) -> bool:
    """Last line of defence: no item may suppress a one-way door."""
    if item.get("preference") in SUPPRESSING and item.get("question_id") in unsafe:
        return False
    return True


def _one_line(s) -> str:
    return " ".join(str(s).split()).replace("`", "'")


# --------------------------------------------------------------------------
# The rows an applied or stored proposal writes (apply and promote both write them)


def store_proposal(conn, p, project_dir, details=None):
    """The proposal's row (what `guidance apply` reads back), in its own transaction."""
    details = dict(
        details or {},
        rejected=p["rejected"],
        affected_question_ids=p["affected_question_ids"],
        thresholds=p["thresholds"],
        guidance_file=p["guidance_file"],
    )
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO guidance_proposals (id, project, run_id, created_at, path,"
            " guidance_hash, preferences_hash, status, items_json, project_dir, details_json)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 'proposed', ?, ?, ?)",
            (
                p["id"],
                p["project"],
                p["run_id"],
                p["created_at"],
                p.get("path"),
                p["guidance_hash"],
                p["preferences_hash"],
                json.dumps(p["items"], ensure_ascii=False),
                project_dir,
                json.dumps(details, ensure_ascii=False),
            ),
        )


def set_preference(conn, scope, question_id, preference, now, proposal_id, previous):
    """Write a preference an applied proposal sets, and its audit event (source plan-tune);
    returns the event record (what gstack's question-events.jsonl gets)."""
    conn.execute(
        "INSERT INTO preferences (scope, question_id, preference, source, updated_at,"
        " developer) VALUES (?, ?, ?, 'plan-tune', ?, ?) ON CONFLICT (scope, question_id)"
        " DO UPDATE SET preference = excluded.preference, raw_value = NULL,"
        " source = 'plan-tune', free_text = NULL, synthetic = 0,"
        " updated_at = excluded.updated_at, developer = excluded.developer",
        (scope, question_id, preference, now, identity.developer()),
    )
    record = {
        "ts": now,
        "event_type": "preference-set",
        "question_id": question_id,
        "preference": preference,
        "source": "plan-tune",
        "proposal_id": proposal_id,
    }
    conn.execute(
        "INSERT OR IGNORE INTO preference_events (event_key, scope, ts, event_type,"
        " question_id, preference, source, extra_json, developer) VALUES (?, ?, ?,"
        " 'preference-set', ?, ?, 'plan-tune', ?, ?)",
        (
            _pref_event_key(scope, record),
            scope,
            now,
            question_id,
            preference,
            json.dumps({"proposal_id": proposal_id, "previous": previous}),
            identity.developer(),
        ),
    )
    return record


def _pref_event_key(scope, record) -> str:
    return hashlib.sha1(f"{scope}\0{canonical(record)}".encode()).hexdigest()
