"""The PreToolUse hook's judgment: whether an AskUserQuestion call may be auto-decided by
the user's preferences, and if so its ``auto-decided`` records.

Where plantune deliberately differs from gstack's question-preference-hook.ts: it honours
the split-chain carve-out and never auto-decides on an unknown preference value (gstack's
hook has no carve-out and auto-decides on any unknown value, unlike its own ``--check``),
and never on a one-way door.

Hot path: stdlib plus toolkit's hot-path modules only.
"""

import os

from toolkit.claude.hook_entries import HOOK_PRE, log_error
from toolkit.claude.payload import (
    COMPONENT_CHARS,
    Answer,
    extract_marker,
    extract_recommendation,
    labels_of,
    question_text,
)
from toolkit.claude.recorder import Recorder, open_db, project_of
from toolkit.claude.records import Registry, call_records
from toolkit.core.vocabulary import SILENCING_PREFERENCES
from toolkit.core.whole_question import of_question
from toolkit.store import json_lite, paths

AUTO_DECIDE_PREFERENCES = SILENCING_PREFERENCES
# Unicode's bidirectional embeddings, overrides, isolates and marks.
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def effective_preference(conn, project, question_id):
    """``(value, scope)`` in force: the project's preference beats the global one."""
    if conn is None:
        return None, None
    from toolkit.core import preferences

    return preferences.effective_preference(conn, project, question_id)


class Verdict:
    """Why one question may or may not be auto-decided."""

    __slots__ = (
        "question",
        "index",
        "qid",
        "summary",
        "labels",
        "recommended",
        "preference",
        "one_way",
        "eligible",
        "reason",
    )

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))


def judge_question(question, index, conn, project, registry, read_door=True) -> Verdict:
    """Whether one question may be auto-decided, and why.

    With ``read_door`` false the door is read only when the answer depends on it: a
    question with an auto-decide preference. Otherwise (the common pass-through: no
    preference, or no marker) ``one_way`` stays None, "not read", and the hook spares
    itself the classifier.
    """
    text = question_text(question)
    labels = labels_of(question)
    qid, summary = extract_marker(text) if text else (None, "")
    whole = of_question(question, text=summary)  # the question, header and every option
    v = Verdict(
        question=question,
        index=index,
        qid=qid,
        summary=summary,
        labels=labels,
        eligible=False,
        one_way=None,
    )
    if not text:
        v.reason = "no question text"
        return v
    if read_door:
        v.one_way = _one_way(conn, qid, whole, registry)
    if not qid:
        v.reason = "no marker"
        return v
    if extract_marker(summary)[0] is not None:
        # A second marker: which question this is cannot be told, so it is not decided.
        v.reason = "several markers"
        return v
    v.preference, _ = effective_preference(conn, project, qid)
    if v.preference in AUTO_DECIDE_PREFERENCES:  # only an auto-decision needs it
        v.recommended = extract_recommendation(summary, labels, strict=True)
    if v.one_way is None and v.preference in AUTO_DECIDE_PREFERENCES:
        v.one_way = _one_way(conn, qid, whole, registry)
    if v.one_way:
        v.reason = "one-way door"
    elif not whole.isascii() and not _BIDI_CONTROLS.isdisjoint(whole):
        # Shown in another order than it is read: the door rules may read another text.
        v.reason = "direction controls in the text"
    elif extract_marker(summary)[0] not in (None, qid):
        # Two ids name two questions: which one is asked is not ours to guess.
        v.reason = "several question ids"
    elif "-split-" in qid:
        v.reason = "split-chain option"
    elif v.preference not in AUTO_DECIDE_PREFERENCES:
        v.reason = "no auto-decide preference"
    elif not v.recommended:
        v.reason = "no unambiguous recommendation"
    elif _second_look(conn, qid, registry):
        v.one_way = True
        v.reason = "one-way door"
    else:
        v.eligible = True
    return v


def _one_way(conn, qid, summary, registry) -> bool:
    """The question's door, from every source (the database's when there is one)."""
    from toolkit.core import door_checks, doors

    entry = registry.get(qid) if qid else None
    skill = entry["skill"] if entry else None
    category = entry["category"] if entry else None
    if conn is not None:
        return door_checks.door_for(conn, qid, summary, skill, category).one_way
    return doors.decide(qid, skill, category, summary, registry.door_types()).one_way


def _second_look(conn, qid, registry) -> bool:
    """Before auto-deciding: the id's own words (an unregistered id) and one-way facts
    stored under a look-alike spelling (``door_checks.before_auto_decide``)."""
    from toolkit.core import door_checks, doors

    door = doors.Classification(False, "registry") if registry.get(qid) else None
    return door_checks.before_auto_decide(conn, qid, door) is not None


def _safe_component(s) -> bool:
    # _PATTERNS["safe_component"] as a full match
    return (
        isinstance(s, str)
        and 1 <= len(s) <= 128
        and all(c in COMPONENT_CHARS for c in s)
        and s not in (".", "..")
    )


def _write_marker(payload, env):
    sid, tid = payload.get("session_id"), payload.get("tool_use_id")
    if not (_safe_component(sid) and _safe_component(tid)):
        return
    folder = os.path.join(paths.state_root(env), "sessions", sid)
    os.makedirs(folder, exist_ok=True)
    fd = os.open(os.path.join(folder, f".auto-decided-{tid}"), os.O_WRONLY | os.O_CREAT, 0o600)
    os.close(fd)


def _memory_line(verdicts, registry, env) -> str:
    """``[plan-tune memory] …`` from free-text-memory.json nuggets that match signal keys."""
    keys = []
    for v in verdicts:
        entry = registry.get(v.qid) if v.qid else None
        if entry and entry.get("signal_key"):
            keys.append(entry["signal_key"])
    if not keys:
        return ""
    try:
        with open(
            os.path.join(paths.state_root(env), "free-text-memory.json"), encoding="utf-8"
        ) as f:
            data = json_lite.loads(f.read())
    except (OSError, ValueError):
        return ""
    nuggets = data.get("nuggets") if isinstance(data, dict) else None
    if not isinstance(nuggets, list):
        return ""
    picked = []
    for key in keys:
        matching = [
            n
            for n in nuggets
            if isinstance(n, dict)
            and isinstance(n.get("nugget"), str)
            and isinstance(n.get("applies_to_signal_keys"), list)
            and key in n["applies_to_signal_keys"]
        ]
        matching.sort(key=lambda n: str(n.get("applied_at") or ""), reverse=True)
        for n in matching[:3]:
            if n["nugget"] not in picked:
                picked.append(n["nugget"])
    return "[plan-tune memory] Past answers suggest: " + " | ".join(picked) if picked else ""


def _conductor(env) -> bool:
    env = os.environ if env is None else env
    return bool(env.get("CONDUCTOR_WORKSPACE_PATH") or env.get("CONDUCTOR_PORT"))


def _conductor_reason(verdicts) -> str:
    lines = [
        "[conductor] AskUserQuestion is unreliable in Conductor, so do not call AskUserQuestion "
        "for this decision. Write a short decision brief in prose instead: the question, the "
        "options as A), B), C) and your recommendation, then ask the user to reply with a letter."
    ]
    one_way = [v.qid or "this question" for v in verdicts if v.one_way]
    if one_way:
        lines.append(
            f"{', '.join(one_way)} is a one-way door: before acting, ask for a typed confirmation "
            "(the user types the chosen option's name, not just a letter)."
        )
    return "\n".join(lines)


def _deny(reason: str) -> str:
    return json_lite.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def decide(payload, qs, db_path=None, env=None):
    """The PreToolUse hook's stdout line for an AskUserQuestion call's questions ``qs``, or
    None to pass through silently.

    All-or-nothing: the call is auto-decided only when every question is marked,
    two-way, not a split-chain option, has a never-ask / ask-only-for-one-way
    preference (project beats global) and one unambiguous recommendation.
    """
    conn = open_db(create=False, db_path=db_path, env=env)
    try:
        registry = Registry.from_db(conn) if conn is not None else Registry.bundled()
        project = project_of(payload, env)
        # All or nothing: unless every question has an auto-decide preference the call
        # passes through, and only Conductor's message then names the one-way doors.
        conductor = _conductor(env)
        verdicts = [
            judge_question(q, i, conn, project, registry, read_door=conductor)
            for i, q in enumerate(qs)
        ]
        if all(v.eligible for v in verdicts):
            _auto_decide(payload, verdicts, conn, project, registry, env, db_path)
            reason = "\n".join(
                f"[plan-tune auto-decide] {v.qid} → {v.recommended} (your {v.preference} "
                "preference). Proceed with that option without re-prompting. Change with /plan-tune."
                for v in verdicts
            )
            return _deny(reason)
        memory = _memory_line(verdicts, registry, env)
        if conductor:
            reason = _conductor_reason(verdicts)
            return _deny(reason + ("\n" + memory if memory else ""))
        if memory:
            return json_lite.dumps(
                {
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "additionalContext": memory,
                    }
                },
                ensure_ascii=False,
                separators=(",", ":"),
            )
        return None
    finally:
        if conn is not None:
            from toolkit.store import db

            db.finish(conn)


def _auto_decide(payload, verdicts, conn, project, registry, env, db_path=None):
    """Write the session marker and log one ``auto-decided`` event per question."""
    writer = Recorder(HOOK_PRE, db_path, env, conn=conn)
    if writer.gstack_files:
        try:
            _write_marker(payload, env)
        except OSError as e:
            log_error(HOOK_PRE, f"auto-decided marker not written: {e}", env)
    try:
        _log_auto_decided(payload, verdicts, writer, project, registry)
    finally:
        writer.close()


def _log_auto_decided(payload, verdicts, writer, project, registry):
    items = call_records(
        [v.question for v in verdicts],
        [Answer(choice=v.recommended) for v in verdicts],
        registry,
        session_id=payload.get("session_id"),
        tool_use_id=payload.get("tool_use_id"),
        source="auto-decided",
        recommended_strict=True,
        # gstack's line keeps the labels, the keys beside them; the row stores the keys
        # (questions.prepare_row). An auto-decision never moves the profile.
        map_options=False,
        keys_beside=True,
    )
    writer.record_all(items, project, registry, refused="logged")
