"""Claude Code hook logic: record AskUserQuestion answers, auto-decide by preference.

Two entry points, run by ``plantune hook post-tool-use`` and ``plantune hook
pre-tool-use``, in place of gstack's question-log-hook.ts and question-preference-hook.ts.
Both read the hook JSON from stdin, never raise, and print nothing unless they mean it: a
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
    _letter_prefix_end,
    _slug_words,
    extract_answers,
    extract_marker,
    extract_recommendation,
    hash_question_id,
    is_ask_tool,
    labels_of,
    parse_payload,
    question_text,
    questions_of,
    read_stdin,
)
from toolkit.core.jscompat import stringify, truncate
from toolkit.core.questions import (
    UNKNOWN_CHOICE,
    Event,
    QuestionError,
    normalize_choice,
    validate_event,
)
from toolkit.core.vocabulary import SILENCING_PREFERENCES
from toolkit.core.whole_question import of_question
from toolkit.store import json_lite, paths, safe_io

HOOK_POST = "post-tool-use"
HOOK_PRE = "pre-tool-use"
ERROR_LOG = "hook-errors.log"
MATCHER = "(AskUserQuestion|mcp__.*__AskUserQuestion)"
HOOK_TIMEOUT = 5
HOOK_EVENTS = ("PreToolUse", "PostToolUse")
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
# Registry knowledge


class Registry:
    """The registered questions a hook needs: id -> entry, plus the skills they belong to."""

    def __init__(self, entries):
        self.entries = {e["id"]: e for e in entries}
        self._canonical = None
        self.skills = sorted({e["skill"] for e in entries if e.get("skill")}, key=len, reverse=True)

    @classmethod
    def from_db(cls, conn):
        rows = conn.execute(
            "SELECT id, skill, category, door_type, options_json, signal_key FROM registry_questions"
        ).fetchall()
        entries = []
        for r in rows:
            e = dict(zip(("id", "skill", "category", "door_type", "options_json", "signal_key"), r))
            opts = e.pop("options_json")
            e["options"] = json_lite.loads(opts) if opts else None
            entries.append(e)
        return cls(entries)

    @classmethod
    def bundled(cls):
        from toolkit.core import doors

        return cls(doors.load_bundled_registry())

    def get(self, qid):
        """The entry for ``qid`` in any spelling of it (case, ``_`` vs ``-``, spaces)."""
        entry = self.entries.get(qid)
        if entry is None and isinstance(qid, str):
            from toolkit.core.doors import canonical_id

            if self._canonical is None:
                self._canonical = {canonical_id(k): e for k, e in self.entries.items()}
            entry = self._canonical.get(canonical_id(qid))
        return entry

    def door_types(self) -> dict:
        return {k: e["door_type"] for k, e in self.entries.items()}

    def skill_for(self, qid: str) -> str:
        """The entry's skill; for ad-hoc ``<skill>-…`` ids the longest known skill prefix."""
        entry = self.entries.get(qid)
        if entry and entry.get("skill"):
            return entry["skill"]
        for skill in self.skills:
            if qid.startswith(skill + "-"):
                return skill
        return "unknown"


def option_key(label: str, options) -> str | None:
    """The registry option key a label names, or None unless it is unambiguous.

    ``A) Fix now (recommended)`` -> ``fix-now``: drop the recommended marker and a
    letter/number prefix, slugify; an exact key wins, else the longest key the slug
    starts with (``accept-risk-and-ship`` -> ``accept-risk`` over ``accept``).
    """
    if not options or not isinstance(label, str):
        return None
    text = normalize_choice(label)
    end = _letter_prefix_end(text)
    if end is not None and end < len(text):
        text = text[end:]
    slug = _slug_words(text.lower()).strip("-")
    if not slug:
        return None
    keys = [k for k in options if isinstance(k, str) and k]
    if slug in keys:
        return slug
    hits = [k for k in keys if slug.startswith(k + "-")]
    return max(hits, key=len) if hits else None


# --------------------------------------------------------------------------
# Building question-log records


def build_record(
    question,
    index,
    answer,
    *,
    registry,
    session_id,
    tool_use_id,
    source,
    multi_question,
    recommended_strict=False,
    map_options=True,
    ts=None,
):
    """The question-log record for one question, validated (QuestionError if refused).

    Returns None for a question without text (gstack skips those too). With
    ``map_options``, a choice that is one of the shown labels and names one of the
    registry entry's options is stored as that option key, the label beside it.
    """
    text = question_text(question)
    if not text:
        return None
    labels = labels_of(question)
    marker_id, summary = extract_marker(text)
    qid = marker_id or hash_question_id(text, labels)
    entry = registry.get(qid) if marker_id else None
    recommended = extract_recommendation(summary, labels, strict=recommended_strict)

    record = {
        "skill": registry.skill_for(qid) if marker_id else "unknown",
        "question_id": qid,
        "question_summary": summary,
    }
    if entry:
        record["category"] = entry["category"]
        record["door_type"] = entry["door_type"]
    if labels:
        record["options_count"] = len(labels)
    choice = answer.choice or UNKNOWN_CHOICE
    record["user_choice"] = choice
    record["source"] = source if source else ("auq-other" if answer.free_text else "hook")
    if isinstance(session_id, str):
        record["session_id"] = session_id
    if isinstance(tool_use_id, str) and tool_use_id:
        # gstack's hooks cut these before logging, so an over-long id never loses the event.
        record["tool_use_id"] = truncate(tool_use_id, 128)
    if recommended:
        record["recommended"] = recommended
    if answer.free_text:
        record["free_text"] = answer.free_text
    if multi_question:
        record["question_index"] = index
    if ts:
        record["ts"] = ts
    whole = of_question(question, text=summary)

    options = entry.get("options") if entry and map_options else None
    if options:
        # Only a choice that is one of the shown labels is an option; typed text never is.
        shown = {normalize_choice(lab).lower() for lab in labels}
        if (
            choice != UNKNOWN_CHOICE
            and not answer.multi
            and not question.get("multiSelect")
            and normalize_choice(choice).lower() in shown
        ):
            key = option_key(choice, options)
            if key:
                record["user_choice"] = key
                record["user_choice_label"] = truncate(choice, 64)
        if recommended:
            key = option_key(recommended, options)
            if key:
                record["recommended"] = key
                record["recommended_label"] = truncate(recommended, 64)
    event = validate_event(record, allow_phase=True)
    if whole != summary:
        # The door (door_class) is read from the whole question, options included.
        event = Event(event)
        event.door_text = event.whole_question = whole
    return event


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


def _record(conn, record, project, index, registry, hook, env):
    """Insert one record and keep gstack's question-log.jsonl current; returns the status."""
    from toolkit.core import questions
    from toolkit.gstack import mirror

    result = questions.record_event(
        conn,
        record,
        project,
        question_index=index,
        registry=registry.door_types(),
        unimported=mirror.backlog_twin(project, env, mirrored=mirror.enabled(env)),
    )
    if result.status == "inserted" and mirror.enabled(env):
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
    writer = _Writer(HOOK_POST, db_path, env)
    try:
        registry = writer.registry()
        project = _project(payload, env)
        statuses = []
        for i, q in enumerate(qs):
            try:
                record = build_record(
                    q,
                    i,
                    answers[i],
                    registry=registry,
                    session_id=payload.get("session_id"),
                    tool_use_id=payload.get("tool_use_id"),
                    source=None,
                    multi_question=len(qs) > 1,
                )
            except QuestionError as e:
                log_error(HOOK_POST, f"question {i} not recorded: {e.message}", env)
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
                status = _record(self.conn, record, project, index, registry, self.hook, self.env)
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
                mirror=mirror.enabled(self.env),
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
            _auto_decide(payload, verdicts, conn, project, registry, env)
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


def _auto_decide(payload, verdicts, conn, project, registry, env):
    """Write the session marker and log one ``auto-decided`` event per question."""
    try:
        _write_marker(payload, env)
    except OSError as e:
        log_error(HOOK_PRE, f"auto-decided marker not written: {e}", env)
    multi = len(verdicts) > 1
    writer = _Writer(HOOK_PRE, None, env, conn=conn)
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
                # (as gstack does) so it never moves the profile.
                map_options=False,
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


def run_named_hook(event, db_path=None):
    """Run the PreToolUse or PostToolUse hook by its command name (the fast CLI path)."""
    if event == "post-tool-use":
        run_hook(HOOK_POST, lambda p: post_tool_use(p, db_path=db_path))
    else:
        run_hook(HOOK_PRE, lambda p: pre_tool_use(p, db_path=db_path))
