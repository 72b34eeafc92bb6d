"""Claude Code hook logic: record AskUserQuestion answers, auto-decide by preference.

Entry points, run by ``plantune hook <name>``: ``post-tool-use`` and ``pre-tool-use`` in
place of gstack's question-log-hook.ts and question-preference-hook.ts, and two gstack has
no counterpart for: ``post-tool-use-failure`` (a question the user cancelled with Esc,
recorded as cancelled) and ``permission-request`` (a question delivered as a permission
request, which plantune never answers nor blocks). All read the hook JSON from stdin, never raise, and print nothing unless they mean it: a
hook that breaks or blocks AskUserQuestion breaks the agent (gstack issue #2035). Internal
errors go to ``<state root>/hook-errors.log``.

Where plantune deliberately differs from gstack's hooks (fixing their known bugs):
- every question of a multi-question call is recorded (``question_index``);
- the project slug is ``paths.resolve_slug(cwd)``, the one the CLI uses (gstack issue #2901);
- the skill comes from the marker id's registry entry (or its ``<skill>-`` prefix)
  instead of ``unknown``, and category / door type from the entry;
- an answer that is unambiguously one of the entry's options is stored as the option
  key (``A) Fix now (recommended)`` -> ``fix-now``) with the label kept in
  ``user_choice_label``, so hook answers move the profile;
- upper-case markers are lower-cased rather than logged and then rejected;
- PreToolUse honours the split-chain carve-out and never auto-decides on an unknown
  preference value (gstack's hook has no carve-out and auto-decides on any unknown
  value, unlike its own ``--check``), and never on a one-way door.

Hot path: stdlib plus toolkit's hot-path modules only.
"""

import os
import sys

from toolkit.claude.payload import (
    _COMPONENT_CHARS,
    Answer,
    HookInputError,
    extract_answers,
    extract_marker,
    extract_recommendation,
    is_ask_tool,
    labels_of,
    parse_payload,
    question_text,
    questions_of,
    read_stdin,
)
from toolkit.claude.records import Registry, build_record
from toolkit.claude.session_start import HOOK_SESSION_START
from toolkit.core.jscompat import stringify
from toolkit.core.questions import CANCELLED_CHOICE, QuestionError
from toolkit.core.vocabulary import SILENCING_PREFERENCES
from toolkit.core.whole_question import of_question
from toolkit.store import json_lite, paths, safe_io

HOOK_POST = "post-tool-use"
HOOK_PRE = "pre-tool-use"
HOOK_FAILURE = "post-tool-use-failure"
HOOK_PERMISSION = "permission-request"
ERROR_LOG = "hook-errors.log"
MATCHER = "(AskUserQuestion|mcp__.*__AskUserQuestion)"
HOOK_TIMEOUT = 5
# What `plantune hook install` registers: (event, matcher or None for every one, the
# `plantune hook` subcommand that handles it). One handler per event; install, check and
# the fast path read it.
HOOK_ENTRIES = (
    ("PreToolUse", MATCHER, HOOK_PRE),
    ("PostToolUse", MATCHER, HOOK_POST),
    ("PostToolUseFailure", MATCHER, HOOK_FAILURE),
    ("PermissionRequest", MATCHER, HOOK_PERMISSION),
    ("SessionStart", None, HOOK_SESSION_START),
)
HOOK_EVENTS = tuple(event for event, _, _ in HOOK_ENTRIES)
HOOK_BUSY_TIMEOUT_MS = 3000

AUTO_DECIDE_PREFERENCES = SILENCING_PREFERENCES


def log_error(hook: str, message: str, env=None) -> None:
    """Append ``<ISO ts> <hook>: <message>`` to the state root's hook-errors.log; never raises."""
    from toolkit.store.db import utc_now

    try:
        root = paths.state_root(env)
        os.makedirs(root, exist_ok=True)
        line = f"{utc_now()} {hook}: {' '.join(str(message).split())}"
        # Lone surrogates (undecodable bytes in a payload) are written as U+FFFD.
        line = line.encode("utf-8", "replace").decode("utf-8")
        safe_io.append_line(os.path.join(root, ERROR_LOG), line, root=root, make_dirs=False)
    except Exception:  # noqa: BLE001 - logging must never break the hook
        pass


def scrub_error_log(texts, everything=False, env=None):
    """Remove hook-errors.log lines that mention any of ``texts`` (every line when
    ``everything``), atomically and keeping the file's mode; returns lines removed.
    Texts shorter than 4 characters are too common to mean the deleted data."""
    root = paths.state_root(env)
    path = os.path.join(root, ERROR_LOG)
    try:
        data = safe_io.read_bytes(path, root=root)
    except FileNotFoundError:
        return 0
    # Lines are written with whitespace runs collapsed (see log_error): match them so.
    needles = [" ".join(t.split()).encode("utf-8", "replace") for t in texts if len(t.strip()) >= 4]
    lines = data.splitlines(keepends=True)
    keep = [] if everything else [line for line in lines if not any(n in line for n in needles)]
    if len(keep) == len(lines):
        return 0
    safe_io.write_atomic(path, b"".join(keep), root=root)
    return len(lines) - len(keep)


# --------------------------------------------------------------------------
# Database access (opened lazily; a missing database means "no preferences yet")


def _open_db(create: bool, db_path=None, env=None):
    from toolkit.core import database

    path = paths.db_path(db_path, env=env)
    if not create and not os.path.exists(path):
        return None
    conn = database.connect(path)
    # Claude Code kills a hook after 5 s: give up on a busy database well before that.
    conn.execute(f"PRAGMA busy_timeout = {HOOK_BUSY_TIMEOUT_MS}")
    return conn


def _project(payload, env=None) -> str:
    cwd = payload.get("cwd")
    cwd = cwd if isinstance(cwd, str) and cwd else None
    return paths.resolve_slug(cwd=cwd, env=env)


def _record(conn, record, project, index, registry, hook, env, gstack_files=True):
    """Insert one record and keep gstack's question-log.jsonl current; returns the status.

    ``gstack_files`` false (a database pinned with ``--db`` away from the state root's):
    gstack's files neither take part in the dedup window nor get the line, so a later
    ``plantune ingest`` cannot import the answer into the state root's database too.
    A cancelled question is never written there: gstack has no such answer.
    """
    from toolkit.core import questions
    from toolkit.gstack import mirror

    mirrored = gstack_files and mirror.enabled(env)
    result = questions.record_event(
        conn,
        record,
        project,
        question_index=index,
        registry=registry.door_types(),
        unimported=mirror.backlog_twin(project, env, mirrored=mirrored) if gstack_files else None,
    )
    if result.status == "inserted" and mirrored and record["user_choice"] != CANCELLED_CHOICE:
        # The row is committed: now the line, marked read so pickup does not read it back.
        try:
            mirror.append_committed(
                conn,
                mirror.project_file(project, mirror.QUESTION_LOG, env),
                "question-log",
                stringify(record),
                env,
            )
        except (OSError, ValueError) as e:
            log_error(hook, f"mirror write failed: {safe_io.describe(e)}", env)
    return result.status


# --------------------------------------------------------------------------
# PostToolUse


def post_tool_use(payload, db_path=None, env=None) -> list:
    """Record every question of one AskUserQuestion call; returns the statuses.

    Errors on one question (a refused summary, say) are logged and do not stop the
    others. Prints nothing.
    """
    if not isinstance(payload, dict) or not is_ask_tool(payload.get("tool_name")):
        return []
    qs = questions_of(payload.get("tool_input"))
    if not qs:
        return []
    answers, diagnostic = extract_answers(payload.get("tool_response"), qs)
    if diagnostic:
        log_error(HOOK_POST, diagnostic, env)
    return _record_call(HOOK_POST, payload, qs, answers, payload.get("tool_use_id"), db_path, env)


# Words of the error Claude Code reports when the user turned the question down rather
# than the tool failing on its own (is_interrupt is the Esc key itself).
_REJECTED_WORDS = (
    "doesn't want to proceed",
    "doesn\u2019t want to proceed",
    "interrupted by user",
    "user rejected",
    "user declined",
    "user cancelled",
    "user canceled",
)


def was_cancelled(payload) -> bool:
    """Whether a PostToolUseFailure payload is the user dismissing the question."""
    if payload.get("is_interrupt") is True:
        return True
    error = payload.get("error")
    return isinstance(error, str) and any(w in error.lower() for w in _REJECTED_WORDS)


def post_tool_use_failure(payload, db_path=None, env=None) -> list:
    """Record an AskUserQuestion call the user cancelled (Esc), each question as cancelled.

    The choice is ``__cancelled__``: asked, so it counts as an interruption, but no answer,
    so it is neither followed nor overridden and moves no dimension. A failure that is not
    the user's (the tool could not ask at all) records nothing. Re-delivery of the same
    call (same ``tool_use_id``) is recognised by the dedup window. Prints nothing.
    """
    if not isinstance(payload, dict) or not is_ask_tool(payload.get("tool_name")):
        return []
    qs = questions_of(payload.get("tool_input"))
    if not qs or not was_cancelled(payload):
        return []
    answers = [Answer(choice=CANCELLED_CHOICE) for _ in qs]
    return _record_call(
        HOOK_FAILURE, payload, qs, answers, payload.get("tool_use_id"), db_path, env
    )


def permission_request(payload, db_path=None, env=None):
    """An AskUserQuestion delivered as a PermissionRequest: never answered, never blocked.

    Always returns None (no decision: the host shows its own picker and the user answers
    there). The answer arrives later with PostToolUse, or PostToolUseFailure on Esc. Only
    a host that put the user's answers in the request itself (``tool_input.answers``) has
    them recorded here; the request has no ``tool_use_id``, so the call is keyed by its
    session, questions and answers, which recognises a re-delivery and the PostToolUse
    that follows it.
    """
    if not isinstance(payload, dict) or not is_ask_tool(payload.get("tool_name")):
        return None
    tool_input = payload.get("tool_input")
    qs = questions_of(tool_input)
    if not qs or not isinstance(tool_input, dict) or not tool_input.get("answers"):
        return None
    answers, diagnostic = extract_answers(tool_input, qs)
    if diagnostic:
        log_error(HOOK_PERMISSION, diagnostic, env)
    _record_call(HOOK_PERMISSION, payload, qs, answers, answered_call_key(payload), db_path, env)
    return None


def answered_call_key(payload):
    """The stand-in ``tool_use_id`` of a call whose answers travel in its input: a hash of
    its session, questions and answers (the same for the request and its PostToolUse)."""
    import hashlib

    tool_input = payload.get("tool_input") or {}
    canonical = json_lite.dumps(
        [payload.get("session_id"), tool_input.get("questions"), tool_input.get("answers")],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return "answers-" + hashlib.sha256(canonical.encode("utf-8", "replace")).hexdigest()[:40]


def _recorded_from_request(writer, payload, project) -> bool:
    """Whether the permission-request hook already recorded this call's answers."""
    tool_input = payload.get("tool_input")
    if writer.conn is None or not isinstance(tool_input, dict) or not tool_input.get("answers"):
        return False
    row = writer.conn.execute(
        "SELECT 1 FROM question_log WHERE project = ? AND source IN ('hook', 'auq-other')"
        " AND tool_use_id = ? LIMIT 1",
        (project, answered_call_key(payload)),
    ).fetchone()
    return row is not None


def _record_call(hook, payload, qs, answers, tool_use_id, db_path, env) -> list:
    """Record one question-log event per question of a call; returns the statuses."""
    writer = _Writer(hook, db_path, env)
    try:
        registry = writer.registry()
        project = _project(payload, env)
        if hook == HOOK_POST and _recorded_from_request(writer, payload, project):
            return ["duplicate"] * len(qs)
        statuses = []
        for i, q in enumerate(qs):
            try:
                record = build_record(
                    q,
                    i,
                    answers[i],
                    registry=registry,
                    session_id=payload.get("session_id"),
                    tool_use_id=tool_use_id,
                    source=None,
                    multi_question=len(qs) > 1,
                )
            except QuestionError as e:
                log_error(hook, f"question {i} not recorded: {e.message}", env)
                statuses.append("refused")
                continue
            if record is None:
                continue
            statuses.append(writer.record(record, project, i, registry))
        return statuses
    finally:
        writer.close()


class _Writer:
    """A hook's database connection, with the spool behind it.

    The database is opened lazily. When it stays locked past the hook's busy timeout (or
    is locked while being opened), this and every later record of the call go to the
    spool instead, and the hook still succeeds: Claude Code kills a hook that waits too
    long, and the answer would be lost with it. After a call whose records all reached the
    database, a few spooled entries are drained on the same connection.
    """

    def __init__(self, hook, db_path, env, conn=None):
        self.hook, self.db_path, self.env = hook, db_path, env
        self.conn, self.own = conn, conn is None
        self.busy = False
        self.wrote = False
        from toolkit.gstack import mirror

        # gstack's files go with the state root's own database only (see _record).
        self.gstack_files = mirror.belongs_to_state_root(db_path, env)
        if conn is not None:
            return
        try:
            self.conn = _open_db(create=True, db_path=db_path, env=env)
        except Exception as e:
            if not _busy(e):
                raise
            self.busy = True

    def registry(self):
        return Registry.from_db(self.conn) if self.conn is not None else Registry.bundled()

    def record(self, record, project, index, registry):
        if not self.busy:
            try:
                status = _record(
                    self.conn,
                    record,
                    project,
                    index,
                    registry,
                    self.hook,
                    self.env,
                    gstack_files=self.gstack_files,
                )
                self.wrote = True
                return status
            except Exception as e:
                if not _busy(e):
                    raise
                self.busy = True
        return self._spool(record, project, index)

    def _spool(self, record, project, index):
        from toolkit.gstack import mirror, spool

        try:
            spool.put_question(
                record,
                project,
                paths.db_path(self.db_path, env=self.env),
                question_index=index,
                mirror=self.gstack_files
                and mirror.enabled(self.env)
                and record["user_choice"] != CANCELLED_CHOICE,
                env=self.env,
            )
        except spool.SpoolError as e:
            log_error(self.hook, f"question {index} lost: database is locked and {e}", self.env)
            return "lost"
        return "spooled"

    def close(self):
        if self.conn is None:
            return
        try:
            if self.wrote and not self.busy:
                from toolkit.gstack import spool

                warning = spool.drain_after_write(self.conn, self.env)
                if warning:
                    log_error(self.hook, warning, self.env)
        finally:
            if self.own:
                self.conn.close()


def _busy(error):
    from toolkit.store import db

    return db.is_busy(error)


# --------------------------------------------------------------------------
# PreToolUse


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
    v.recommended = extract_recommendation(summary, labels, strict=True)
    v.preference, _ = effective_preference(conn, project, qid)
    if v.one_way is None and v.preference in AUTO_DECIDE_PREFERENCES:
        v.one_way = _one_way(conn, qid, whole, registry)
    if v.one_way:
        v.reason = "one-way door"
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
    from toolkit.core import doors

    entry = registry.get(qid) if qid else None
    skill = entry["skill"] if entry else None
    category = entry["category"] if entry else None
    if conn is not None:
        return doors.door_for(conn, qid, summary, skill, category).one_way
    return doors.decide(qid, skill, category, summary, registry.door_types()).one_way


def _second_look(conn, qid, registry) -> bool:
    """Before auto-deciding: the id's own words (an unregistered id) and one-way facts
    stored under a look-alike spelling (``doors.before_auto_decide``)."""
    from toolkit.core import doors

    door = doors.Classification(False, "registry") if registry.get(qid) else None
    return doors.before_auto_decide(conn, qid, door) is not None


def _safe_component(s) -> bool:
    # _PATTERNS["safe_component"] as a full match
    return (
        isinstance(s, str)
        and 1 <= len(s) <= 128
        and all(c in _COMPONENT_CHARS for c in s)
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


def pre_tool_use(payload, db_path=None, env=None):
    """The hook's stdout line, or None to pass through silently.

    All-or-nothing: the call is auto-decided only when every question is marked,
    two-way, not a split-chain option, has a never-ask / ask-only-for-one-way
    preference (project beats global) and one unambiguous recommendation.
    """
    if not isinstance(payload, dict) or not is_ask_tool(payload.get("tool_name")):
        return None
    qs = questions_of(payload.get("tool_input"))
    if not qs:
        return None
    conn = _open_db(create=False, db_path=db_path, env=env)
    try:
        registry = Registry.from_db(conn) if conn is not None else Registry.bundled()
        project = _project(payload, env)
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
            conn.close()


def _auto_decide(payload, verdicts, conn, project, registry, env, db_path=None):
    """Write the session marker and log one ``auto-decided`` event per question."""
    writer = _Writer(HOOK_PRE, db_path, env, conn=conn)
    if writer.gstack_files:
        try:
            _write_marker(payload, env)
        except OSError as e:
            log_error(HOOK_PRE, f"auto-decided marker not written: {e}", env)
    multi = len(verdicts) > 1
    try:
        _log_auto_decided(payload, verdicts, writer, project, registry, env, multi)
    finally:
        writer.close()


def _log_auto_decided(payload, verdicts, writer, project, registry, env, multi):
    for v in verdicts:
        answer = Answer(choice=v.recommended)
        try:
            record = build_record(
                v.question,
                v.index,
                answer,
                registry=registry,
                session_id=payload.get("session_id"),
                tool_use_id=payload.get("tool_use_id"),
                source="auto-decided",
                multi_question=multi,
                recommended_strict=True,
                # An auto-decision is not the user's answer in the moment: keep the label
                # (as gstack does) so it never moves the profile; the key goes beside it.
                map_options=False,
                keys_beside=True,
            )
        except QuestionError as e:
            log_error(HOOK_PRE, f"question {v.index} not logged: {e.message}", env)
            continue
        if record is not None:
            writer.record(record, project, v.index, registry)


def run_hook(name, handler):
    """Read the hook JSON on stdin, run ``handler`` and print what it returns.

    Runs inside the one error boundary, with the hook's own report: never raises and never
    exits non-zero (a broken hook must not break the agent), so every problem goes to
    hook-errors.log instead.
    """
    from toolkit.core.errors import run_script

    def hook(_args):
        payload = parse_payload(read_stdin())
        if payload is None:
            return 0
        out = handler(payload)
        if isinstance(out, str) and out:
            sys.stdout.buffer.write(out.encode("utf-8") + b"\n")
            sys.stdout.flush()
        return 0

    def report(_prog, error):
        if isinstance(error, HookInputError):
            log_error(name, str(error))
        else:
            log_error(name, f"main crash: {type(error).__name__}: {error}")
        return 0

    run_script(name, hook, [], crash=report)


HANDLERS = {
    HOOK_PRE: pre_tool_use,
    HOOK_POST: post_tool_use,
    HOOK_FAILURE: post_tool_use_failure,
    HOOK_PERMISSION: permission_request,
}


def run_named_hook(name, db_path=None):
    """Run a hook by its command name (the fast CLI path and the click commands)."""
    if name == HOOK_SESSION_START:
        from toolkit.claude import session_start

        return session_start.run()
    handler = HANDLERS[name]
    run_hook(name, lambda p: handler(p, db_path=db_path))
