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
- PreToolUse's own differences are in ``toolkit.claude.auto_decide``.

A payload's path reads straight down: this module reads it (``hook_input``); a call with
questions is turned into complete records in one pass (``records.call_records``, on what
``payload`` parses) and handed to the recorder once (``recorder.Recorder.record_all``).
A hook that passes through (another tool, no questions) imports nothing more.

Hot path: stdlib plus toolkit's hot-path modules only.
"""

import sys

from toolkit.claude.hook_entries import (
    HOOK_FAILURE,
    HOOK_PERMISSION,
    HOOK_POST,
    HOOK_PRE,
    log_error,
)
from toolkit.claude.hook_input import (
    HookInputError,
    ask_questions,
    parse_payload,
    read_stdin,
)
from toolkit.store import json_lite

# --------------------------------------------------------------------------
# PostToolUse, PostToolUseFailure, PermissionRequest: record the answers


def post_tool_use(payload, db_path=None, env=None) -> list:
    """Record every question of one AskUserQuestion call; returns the statuses.

    Errors on one question (a refused summary, say) are logged and do not stop the
    others. Prints nothing.
    """
    qs = ask_questions(payload)
    if not qs:
        return []
    from toolkit.claude.payload import extract_answers
    from toolkit.core.questions import UNKNOWN_CHOICE

    answers, diagnostic = extract_answers(payload.get("tool_response"), qs)
    tool_input = payload["tool_input"]
    if tool_input.get("answers") and all(a.choice == UNKNOWN_CHOICE for a in answers):
        # A host that keeps the answers in the input only (as a permission request does).
        answers, diagnostic = extract_answers(tool_input, qs)
    if diagnostic:
        log_error(HOOK_POST, diagnostic, env)
    call_id = _tool_use_id(payload) or call_key(payload, qs, answers)
    return _record_call(HOOK_POST, payload, qs, answers, call_id, db_path, env)


def _tool_use_id(payload):
    """The payload's ``tool_use_id`` when it is one (a non-empty string), else None."""
    tool_use_id = payload.get("tool_use_id")
    return tool_use_id if isinstance(tool_use_id, str) and tool_use_id else None


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
    qs = ask_questions(payload)
    if not qs or not was_cancelled(payload):
        return []
    from toolkit.claude.payload import Answer
    from toolkit.core.questions import CANCELLED_CHOICE

    answers = [Answer(choice=CANCELLED_CHOICE) for _ in qs]
    call_id = _tool_use_id(payload) or call_key(payload, qs, answers)
    return _record_call(HOOK_FAILURE, payload, qs, answers, call_id, db_path, env)


def permission_request(payload, db_path=None, env=None):
    """An AskUserQuestion delivered as a PermissionRequest: never answered, never blocked.

    Always returns None (no decision: the host shows its own picker and the user answers
    there). The answer arrives later with PostToolUse, or PostToolUseFailure on Esc. Only
    a host that put the user's answers in the request itself (``tool_input.answers``) has
    them recorded here; the request has no ``tool_use_id``, so the call is keyed by its
    session, questions and answers, which recognises a re-delivery and the PostToolUse
    that follows it.
    """
    qs = ask_questions(payload)
    tool_input = payload.get("tool_input") if qs else None
    if not qs or not isinstance(tool_input, dict) or not tool_input.get("answers"):
        return None
    from toolkit.claude.payload import extract_answers

    answers, diagnostic = extract_answers(tool_input, qs)
    if diagnostic:
        log_error(HOOK_PERMISSION, diagnostic, env)
    _record_call(
        HOOK_PERMISSION, payload, qs, answers, call_key(payload, qs, answers), db_path, env
    )
    return None


def call_key(payload, qs, answers):
    """The stand-in ``tool_use_id`` of a call that has none (a permission request, a host
    that leaves it out): a hash of its session, question texts and answers as read, so the
    request and its PostToolUse, and a re-delivery, get the same one whatever the order
    of their fields, extra fields, or where the answers travel."""
    from toolkit.claude.payload import question_text
    from toolkit.store.digest import sha1_hex

    session = payload.get("session_id")
    canonical = json_lite.dumps(
        [
            session if isinstance(session, str) else None,
            [question_text(q) for q in qs],
            [[a.choice, a.free_text, a.multi] for a in answers],
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return "answers-" + sha1_hex(canonical.encode("utf-8", "replace"))


def _recorded_from_request(writer, project, key) -> bool:
    """Whether the permission-request hook already recorded this call's answers."""
    if writer.conn is None:
        return False
    row = writer.conn.execute(
        "SELECT 1 FROM question_log WHERE project = ? AND source IN ('hook', 'auq-other')"
        " AND tool_use_id = ? LIMIT 1",
        (project, key),
    ).fetchone()
    return row is not None


def _record_call(hook, payload, qs, answers, tool_use_id, db_path, env) -> list:
    """Record one question-log event per question of a call; returns the statuses."""
    from toolkit.claude.recorder import Recorder, project_of
    from toolkit.claude.records import call_records

    recorder = Recorder(hook, db_path, env)
    try:
        registry = recorder.registry()
        project = project_of(payload, env)
        if (
            hook == HOOK_POST
            and tool_use_id != (key := call_key(payload, qs, answers))
            and _recorded_from_request(recorder, project, key)
        ):
            return ["duplicate"] * len(qs)
        items = call_records(
            qs,
            answers,
            registry,
            session_id=payload.get("session_id"),
            tool_use_id=tool_use_id,
            source=None,
        )
        return recorder.record_all(items, project, registry)
    finally:
        recorder.close()


# --------------------------------------------------------------------------
# PreToolUse: judged in toolkit.claude.auto_decide


def pre_tool_use(payload, db_path=None, env=None):
    """The hook's stdout line, or None to pass through silently (``auto_decide.decide``)."""
    qs = ask_questions(payload)
    if not qs:
        return None
    from toolkit.claude import auto_decide

    return auto_decide.decide(payload, qs, db_path, env)


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
    """Run a question hook by its command name (the fast CLI path and the click commands);
    ``session-start`` has its own module, ``toolkit.claude.session_start``."""
    handler = HANDLERS[name]
    run_hook(name, lambda p: handler(p, db_path=db_path))
