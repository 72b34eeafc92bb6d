"""Guidance promotion: project-local preferences and ad-hoc questions that hold across
projects or developers, proposed as global preferences or registry additions.

A promotion is a guidance proposal (a ``guidance_proposals`` row for the global scope)
with the evidence behind every item; it changes nothing until ``plantune guidance apply``,
which re-checks everything it relies on and fails closed.

What counts as holding:

- a preference: the same value for the same question in at least ``MIN_HOLDERS`` projects
  or ``MIN_HOLDERS`` developers (project preferences of this database, plus every
  developer's preferences merged into a team database), with no project or developer
  holding a different value. Simulated preferences never count.
- an ad-hoc question (logged, not in the registry): real events in at least
  ``MIN_HOLDERS`` projects or developers. It is proposed for the registry with the door
  type every safety signal agrees on: one-way when any says one-way.

Never proposed: a suppressing preference (never-ask, ask-only-for-one-way) for a question
any safety signal calls one-way (the registry, a one-way event or finding, the door
classifier), whatever the number of holders. Apply checks again.
"""

from __future__ import annotations

import hashlib
import json

from toolkit.guidance import files
from toolkit.guidance import proposals as guidance
from toolkit.store import db

MIN_HOLDERS = 3
KIND = "promotion"
EVIDENCE_LIMIT = 50


class PromotionError(files.GuidanceError):
    """A promotion that cannot be applied, explained in one line."""


def _preference_holders(conn):
    """{(question_id): [holder dicts]} from project preferences and merged developers'."""
    rows = conn.execute(
        "SELECT scope, developer, question_id, preference, source, updated_at, 'this database'"
        " FROM preferences WHERE scope != :g AND synthetic = 0 AND preference != 'unknown'"
        " UNION ALL"
        " SELECT d.scope, d.developer, d.question_id, d.preference, d.source, d.updated_at,"
        " m.path FROM developer_preferences d JOIN merge_sources m ON m.id = d.merged_from"
        " WHERE d.scope != :g AND d.synthetic = 0 AND d.preference != 'unknown'"
        " ORDER BY 3, 1, 2",
        {"g": db.GLOBAL_SCOPE},
    ).fetchall()
    holders = {}
    for scope, developer, qid, pref, source, updated_at, origin in rows:
        holders.setdefault(qid, []).append(
            {
                "project": scope,
                "developer": developer,
                "preference": pref,
                "source": source,
                "updated_at": updated_at,
                "from": origin,
            }
        )
    return holders


def _adhoc_questions(conn):
    """Real events of question ids the registry does not know, per id (hook ids excluded:
    they name one unmarked question text, not a reusable question)."""
    rows = conn.execute(
        "SELECT q.question_id, q.project, q.developer, count(*), min(q.ts), max(q.ts),"
        " min(q.event_key)"
        " FROM question_log q LEFT JOIN registry_questions r ON r.id = q.question_id"
        " WHERE r.id IS NULL AND q.synthetic = 0 AND q.question_id NOT GLOB 'hook-*'"
        " AND q.source NOT IN ('auto-decided', 'flip')"
        " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
    ).fetchall()
    out = {}
    for qid, project, developer, n, first, last, key in rows:
        out.setdefault(qid, []).append(
            {
                "project": project,
                "developer": developer,
                "events": n,
                "first_ts": first,
                "last_ts": last,
                "sample_event_key": key,
            }
        )
    return out


def _spread(holders):
    return (len({h["project"] for h in holders}), len({h["developer"] for h in holders}))


def _holds(holders):
    projects, developers = _spread(holders)
    return projects >= MIN_HOLDERS or developers >= MIN_HOLDERS


def _global_preference(conn, qid):
    r = conn.execute(
        "SELECT preference FROM preferences WHERE scope = ? AND question_id = ?",
        (db.GLOBAL_SCOPE, qid),
    ).fetchone()
    return r[0] if r else None


def _registry_shape(conn, qid):
    """Skill and category most used by an ad-hoc question's events (ties: alphabetical)."""
    skill = conn.execute(
        "SELECT skill FROM question_log WHERE question_id = ? AND synthetic = 0"
        " GROUP BY skill ORDER BY count(*) DESC, skill LIMIT 1",
        (qid,),
    ).fetchone()[0]
    category = conn.execute(
        "SELECT category FROM question_log WHERE question_id = ? AND synthetic = 0"
        " AND category IS NOT NULL GROUP BY category ORDER BY count(*) DESC, category LIMIT 1",
        (qid,),
    ).fetchone()
    return skill, category[0] if category else "clarification"


def _promote_preferences(conn, prefs, check, items, rejected):
    """A global preference where projects or developers agree on one for a question."""
    rule_pref = (
        f"the same preference in >= {MIN_HOLDERS} projects or >= {MIN_HOLDERS}"
        " developers, and no holder disagrees"
    )
    for qid, holders in sorted(prefs.items()):
        if not _holds(holders):
            continue
        values = sorted({h["preference"] for h in holders})
        evidence = {
            "holders": holders[:EVIDENCE_LIMIT],
            "projects": _spread(holders)[0],
            "developers": _spread(holders)[1],
        }
        if len(values) > 1:
            rejected.append(
                {
                    "subject": qid,
                    "rule": rule_pref,
                    "evidence": evidence,
                    "reason": "holders disagree (" + ", ".join(values) + ")",
                }
            )
            continue
        pref = values[0]
        if pref in guidance.SUPPRESSING and qid in check:
            rejected.append(
                {
                    "subject": qid,
                    "rule": rule_pref,
                    "evidence": evidence,
                    "reason": f"one-way question: {pref} is never proposed for it",
                }
            )
            continue
        previous = _global_preference(conn, qid)
        if previous == pref:
            continue
        projects, developers = _spread(holders)
        items.append(
            {
                "id": f"global-preference:{qid}",
                "action": "add",
                "kind": "global-preference",
                "section": "Global Preferences",
                "question_id": qid,
                "preference": pref,
                "previous_preference": previous,
                "line": f"- `{qid}`: {pref}",
                "rule": rule_pref,
                "evidence": evidence,
                "future_behaviour": f"every project without its own preference for `{qid}` acts"
                f" as {pref} (held in {projects} projects by {developers}"
                " developers).",
                "rejected_alternatives": [
                    ("leaving it per project: the same choice is repeated everywhere")
                ],
            }
        )


def _promote_registry_additions(conn, adhoc, check, items):
    """A registry entry for an ad-hoc question asked across projects or developers."""
    rule_reg = (
        f"an unregistered question id asked in >= {MIN_HOLDERS} projects or"
        f" >= {MIN_HOLDERS} developers"
    )
    for qid, holders in sorted(adhoc.items()):
        if not _holds(holders):
            continue
        skill, category = _registry_shape(conn, qid)
        door = "one-way" if qid in check else "two-way"
        projects, developers = _spread(holders)
        items.append(
            {
                "id": f"registry-addition:{qid}",
                "action": "add",
                "kind": "registry-addition",
                "section": "Registry",
                "question_id": qid,
                "preference": None,
                "previous_preference": None,
                "line": f"{qid}: {skill}, {category}, {door}",
                "skill": skill,
                "category": category,
                "door_type": door,
                "rule": rule_reg,
                "evidence": {
                    "events": holders[:EVIDENCE_LIMIT],
                    "projects": projects,
                    "developers": developers,
                },
                "future_behaviour": f"`{qid}` is a registered {door} question of {skill}"
                f" ({category}); one-way registrations are never auto-decided.",
                "rejected_alternatives": [
                    ("keeping it ad hoc: its door type would be guessed on every call")
                ],
            }
        )


def build(conn, now=None):
    """The promotion proposal (a dict); nothing is written."""
    now = now or db.utc_now()
    prefs = _preference_holders(conn)
    adhoc = _adhoc_questions(conn)
    check = guidance.UnsafeCheck(conn, guidance.registry_of(conn))
    check.prime(list(prefs) + list(adhoc))
    items, rejected = [], []
    _promote_preferences(conn, prefs, check, items, rejected)
    _promote_registry_additions(conn, adhoc, check, items)
    # Last line of defence, as in every guidance proposal.
    unsafe = {i["question_id"] for i in items if i["question_id"] in check}
    items = [i for i in items if guidance.is_safe(i, unsafe)]
    affected = sorted({i["question_id"] for i in items})
    proposal = {
        "kind": KIND,
        "project": db.GLOBAL_SCOPE,
        "project_dir": None,
        "run_id": None,
        "created_at": now,
        "guidance_file": "(global preferences and registry)",
        "guidance_hash": _registry_hash(conn, affected),
        "guidance_malformed": None,
        "affected_question_ids": affected,
        "preferences_hash": guidance.preferences_hash(conn, db.GLOBAL_SCOPE, affected),
        "items": items,
        "rejected": rejected,
        "thresholds": {"min_holders": MIN_HOLDERS},
    }
    proposal["id"] = (
        "gp-"
        + hashlib.sha256(
            json.dumps([KIND, now, items], sort_keys=True, ensure_ascii=False).encode()
        ).hexdigest()[:12]
    )
    return proposal


def _registry_hash(conn, qids):
    rows = []
    if qids:
        marks = ",".join("?" * len(qids))
        rows = [
            list(r)
            for r in conn.execute(
                f"SELECT id, door_type FROM registry_questions WHERE id IN ({marks}) ORDER BY id",
                qids,
            )
        ]
    return hashlib.sha256(json.dumps([qids, rows]).encode()).hexdigest()


def save(conn, p):
    """Store a proposal that has items (what `guidance apply` reads)."""
    if not p["items"]:
        return
    guidance.store_proposal(conn, p, None, {"kind": KIND})


def is_promotion(p):
    return p.get("kind") == KIND


def apply(conn, p, now=None):
    """Apply a stored promotion: global preferences and registry rows, or nothing.

    Fails closed when a global preference or registry row it touches changed since it was
    proposed, or when an item would now suppress a one-way question.
    """
    now = now or db.utc_now()
    qids = p["affected_question_ids"]
    with db.transaction(conn):
        if guidance.preferences_hash(conn, db.GLOBAL_SCOPE, qids) != p["preferences_hash"]:
            raise PromotionError(
                f"global preferences for {', '.join(qids)} changed after"
                f" proposal {p['id']} was made; nothing applied (run"
                " `plantune guidance promote` again)"
            )
        if _registry_hash(conn, qids) != p["guidance_hash"]:
            raise PromotionError(
                f"the registry changed after proposal {p['id']} was made;"
                " nothing applied (run `plantune guidance promote` again)"
            )
        unsafe = guidance.unsafe_ids(conn, qids)
        for item in p["items"]:
            if not guidance.is_safe(item, unsafe):
                raise PromotionError(
                    f"cannot set {item['preference']} on one-way question"
                    f' "{item["question_id"]}"; nothing applied'
                )
            if (
                item["kind"] == "registry-addition"
                and item["door_type"] == "two-way"
                and item["question_id"] in unsafe
            ):
                raise PromotionError(
                    f'"{item["question_id"]}" is now classified one-way;'
                    " nothing applied (run `plantune guidance promote` again)"
                )
        for item in p["items"]:
            qid = item["question_id"]
            if item["kind"] == "global-preference":
                guidance.set_preference(
                    conn,
                    db.GLOBAL_SCOPE,
                    qid,
                    item["preference"],
                    now,
                    p["id"],
                    item["previous_preference"],
                )
            else:
                conn.execute(
                    "INSERT INTO registry_questions (id, skill, category, door_type, signal_key,"
                    " description, origin, updated_at) VALUES (?, ?, ?, ?, NULL, ?, 'promoted', ?)",
                    (
                        qid,
                        item["skill"],
                        item["category"],
                        item["door_type"],
                        f"Promoted from {item['evidence']['projects']} projects",
                        now,
                    ),
                )
        conn.execute(
            "UPDATE guidance_proposals SET status = 'applied', applied_at = ? WHERE id = ?",
            (now, p["id"]),
        )
    p["status"], p["applied_at"] = "applied", now
    return p
