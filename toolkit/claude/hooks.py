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
import select
import sys
import time

from toolkit.store import json_lite, paths, safe_io
from toolkit.core.questions import UNKNOWN_CHOICE, QuestionError, normalize_choice, validate_event
from toolkit.core.screening import js_trim, truncate

HOOK_POST = "post-tool-use"
HOOK_PRE = "pre-tool-use"
STDIN_TIMEOUT = 2.0
ERROR_LOG = "hook-errors.log"
# The tool result text Claude Code shows the model after AskUserQuestion.
ANSWERED_PREFIX = "User has answered your questions:"
ANSWERED_TRAILER = ". You can now continue"
MATCHER = "(AskUserQuestion|mcp__.*__AskUserQuestion)"
HOOK_TIMEOUT = 5
HOOK_EVENTS = ("PreToolUse", "PostToolUse")
HOOK_BUSY_TIMEOUT_MS = 3000

AUTO_DECIDE_PREFERENCES = ("never-ask", "ask-only-for-one-way")

# Patterns, compiled (and ``re`` imported: several ms) only when a hook needs one. The
# common paths need none: the tool name, an option's letter prefix and slug, and path
# components are read with string methods that follow these patterns (a test keeps them
# equal); a marker in non-ASCII text and a "Recommendation:" line use the regex.
_PATTERNS = {
    "mcp_tool": (r"mcp__.+__AskUserQuestion", "DOTALL"),
    "marker": (r"<gstack-qid:([a-z0-9-]{1,64})>", "IGNORECASE"),
    # Unicode \s is close enough to JS \s here, and compiles in microseconds (js_regex
    # spells the JS class out, which costs milliseconds on every hook start).
    "recommendation_line": (r"Recommendation:\s*([^\n]+)", "IGNORECASE"),
    "letter_prefix": (r"\s*(?:[A-Za-z]|[0-9]{1,2})\s*[).:\]]\s*", None),
    "non_slug": (r"[^a-z0-9]+", None),
    "safe_component": (r"[A-Za-z0-9._-]{1,128}", None),
}
_compiled = {}


def _pattern(name):
    p = _compiled.get(name)
    if p is None:
        import re

        source, flag = _PATTERNS[name]
        p = _compiled[name] = re.compile(source, getattr(re, flag) if flag else 0)
    return p


_MARKER_OPEN = "<gstack-qid:"
_MARKER_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_ASCII_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_ASCII_DIGITS = frozenset("0123456789")
_SLUG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_COMPONENT_CHARS = _ASCII_LETTERS | _ASCII_DIGITS | frozenset("._-")
_MCP_PREFIX, _MCP_SUFFIX = "mcp__", "__AskUserQuestion"


def _is_mcp_ask_tool(name):
    """``_PATTERNS["mcp_tool"]`` as a full match."""
    return (len(name) > len(_MCP_PREFIX) + len(_MCP_SUFFIX) and name.startswith(_MCP_PREFIX)
            and name.endswith(_MCP_SUFFIX))


def _skip_space(text, i):
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _letter_prefix_end(text):
    """Where ``_PATTERNS["letter_prefix"]`` matching at the start of ``text`` ends, or None."""
    i = _skip_space(text, 0)
    if i < len(text) and text[i] in _ASCII_LETTERS:
        i += 1
    elif i < len(text) and text[i] in _ASCII_DIGITS:
        i += 2 if text[i + 1:i + 2] in _ASCII_DIGITS else 1
    else:
        return None
    i = _skip_space(text, i)
    if i < len(text) and text[i] in ").:]":
        return _skip_space(text, i + 1)
    return None


def _slug_words(text):
    """``_PATTERNS["non_slug"].sub("-", text)``: each run of other characters becomes "-"."""
    out = []
    joined = False
    for c in text:
        if c in _SLUG_CHARS:
            out.append(c)
            joined = False
        elif not joined:
            out.append("-")
            joined = True
    return "".join(out)


# --------------------------------------------------------------------------
# stdin, error log


def read_stdin(timeout: float = STDIN_TIMEOUT, stream=None) -> str:
    """All of stdin, or what arrived before ``timeout`` seconds (a hook must not hang)."""
    stream = sys.stdin if stream is None else stream
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return ""
    deadline = time.monotonic() + timeout
    chunks = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], remaining)
        except (OSError, ValueError):
            break
        if not ready:
            break
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode("utf-8", "replace")


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
    needles = [" ".join(t.split()).encode("utf-8", "replace") for t in texts
               if len(t.strip()) >= 4]
    lines = data.splitlines(keepends=True)
    keep = [] if everything else [
        line for line in lines if not any(n in line for n in needles)]
    if len(keep) == len(lines):
        return 0
    safe_io.write_atomic(path, b"".join(keep), root=root)
    return len(lines) - len(keep)


class HookInputError(ValueError):
    """Stdin that is not a hook payload; logged, never shown to the agent."""


def parse_payload(text: str):
    """The hook JSON object, or None for empty stdin; HookInputError when unparseable."""
    if not text.strip():
        return None
    try:
        payload = json_lite.loads(text)
    except (ValueError, RecursionError) as e:
        raise HookInputError(f"stdin parse failed: {e}") from None
    if not isinstance(payload, dict):
        raise HookInputError("stdin parse failed: not a JSON object")
    return payload


# --------------------------------------------------------------------------
# Questions: ids, labels, recommendations


def is_ask_tool(name) -> bool:
    return isinstance(name, str) and (
        name == "AskUserQuestion" or _is_mcp_ask_tool(name))


def questions_of(tool_input) -> list:
    qs = tool_input.get("questions") if isinstance(tool_input, dict) else None
    return qs if isinstance(qs, list) else []


def option_label(option) -> str:
    """The string itself, else ``label``, else ``description``, else ""."""
    if isinstance(option, str):
        return option
    if isinstance(option, dict):
        for key in ("label", "description"):
            value = option.get(key)
            if isinstance(value, str) and value:
                return value
    return ""


def labels_of(question) -> list:
    options = question.get("options") if isinstance(question, dict) else None
    return [option_label(o) for o in options] if isinstance(options, list) else []


def question_text(question) -> str:
    text = question.get("question") if isinstance(question, dict) else None
    return text if isinstance(text, str) else ""


def extract_marker(text: str):
    """``(question_id or None, summary)``: the first ``<gstack-qid:…>`` marker, lower-cased.

    gstack keeps the marker's case and then the log rejects an upper-case id; an agent
    that shouts the marker means the same question, so we lower-case it.
    """
    if not text.isascii():
        # Unicode case folding (the Kelvin sign is a k) only the regex gets exactly right.
        m = _pattern("marker").search(text)
        if not m:
            return None, js_trim(text)
        return m.group(1).lower(), js_trim(text[: m.start()] + text[m.end():])
    # ASCII text: the same search as plain string operations (lower() keeps positions).
    lower = text.lower()
    start = 0
    while True:
        i = lower.find(_MARKER_OPEN, start)
        if i < 0:
            return None, js_trim(text)
        j = k = i + len(_MARKER_OPEN)
        while k < len(lower) and k - j <= 64 and lower[k] in _MARKER_ID_CHARS:
            k += 1
        if 1 <= k - j <= 64 and lower[k:k + 1] == ">":
            return lower[j:k], js_trim(text[:i] + text[k + 1:])
        start = i + 1


def _utf16_key(s: str):
    return s.encode("utf-16-be", "surrogatepass")


def hash_question_id(text: str, labels, skill: str = "unknown") -> str:
    """``hook-`` + 10 hex of sha1("<skill>::<text>::<labels sorted as JS sorts, joined by |>")."""
    joined = "|".join(sorted(labels, key=_utf16_key))
    try:
        from _sha1 import sha1  # CPython's own; hashlib would first load OpenSSL (~3 ms)
    except ImportError:  # pragma: no cover
        from hashlib import sha1

    digest = sha1(f"{skill}::{text}::{joined}".encode("utf-8", "surrogatepass")).hexdigest()
    return "hook-" + digest[:10]


def extract_recommendation(text: str, labels, strict: bool):
    """The recommended option label, found as gstack's hooks find it; None when absent or
    ambiguous.

    ``strict`` (PreToolUse) needs exactly one prose match; PostToolUse takes the first.
    """
    # normalize_choice drops a trailing "(recommended)": a label it changes carries one.
    marked = [lab for lab in labels if normalize_choice(lab) != js_trim(lab)]
    if len(marked) == 1:
        return normalize_choice(marked[0])
    if marked:
        return None
    m = _pattern("recommendation_line").search(text)
    if not m:
        return None
    prefix = js_trim(m.group(1))[:12].lower()
    if not prefix:
        return None
    hits = [lab for lab in labels if lab.lower().startswith(prefix)]
    if strict:
        return hits[0] if len(hits) == 1 else None
    return hits[0] if hits else None


# --------------------------------------------------------------------------
# Answers (PostToolUse tool_response, transcripts)


def _collapse(s: str) -> str:
    return " ".join(s.split()).lower()


def _truthy(v) -> bool:
    if isinstance(v, (list, dict)):
        return True
    return bool(v)


def _first_text(item, keys):
    for k in keys:
        v = item.get(k)
        if _truthy(v):
            return v if isinstance(v, str) else json_lite.dumps(v, ensure_ascii=False)
    return None


class Answer:
    """One question's answer: the choice text, typed free text, and whether it was multi-select."""

    __slots__ = ("choice", "free_text", "multi")

    def __init__(self, choice=UNKNOWN_CHOICE, free_text=None, multi=False):
        self.choice, self.free_text, self.multi = choice, free_text, multi


def extract_answers(response, questions) -> tuple:
    """``([Answer per question], diagnostic or None)`` for a tool_response (every answer
    shape gstack's question-log-hook.ts reads).

    Shape D (native ``answers`` object keyed by question text), shape A (``answers``
    array), shape B (``questions`` array), and the ``User has answered your questions:``
    text Claude Code returns to the model; anything else gives ``__unknown__`` for all.
    """
    n = len(questions)
    if not _truthy(response):
        return [Answer() for _ in range(n)], None
    if isinstance(response, dict):
        answers = response.get("answers")
        if isinstance(answers, dict):
            return _answers_object(answers, response.get("annotations"), questions), None
        if isinstance(answers, list):
            return _answers_array(answers, n, ("option_label", "label", "choice", "answer")), None
        if isinstance(response.get("questions"), list):
            return _answers_array(response["questions"], n, ("user_answer", "answer", "choice")), None
    if isinstance(response, str):
        parsed = parse_answer_text(response, questions)
        if parsed:
            return _answers_object(parsed, None, questions), None
    diagnostic = json_lite.dumps(response, ensure_ascii=False)[:300] if not isinstance(response, str) else response[:300]
    return [Answer() for _ in range(n)], f"unrecognised tool_response shape: {diagnostic}"


def _answers_array(items, n, keys):
    out = []
    for item in items[:n] if n else items:
        if not isinstance(item, dict):
            out.append(Answer())
            continue
        choice = _first_text(item, keys) or UNKNOWN_CHOICE
        free = item.get("free_text") or item.get("other_text")
        out.append(Answer(choice, free if isinstance(free, str) and free else None))
    while len(out) < n:
        out.append(Answer())
    return out


def _answers_object(answers, annotations, questions):
    keys = list(answers)
    collapsed = {}
    for k in keys:
        collapsed.setdefault(_collapse(k), k)
    annotations = annotations if isinstance(annotations, dict) else {}
    out = []
    for q in questions:
        text = question_text(q)
        if not text:
            out.append(Answer())
            continue
        if text in answers:
            key = text
        elif _collapse(text) in collapsed:
            key = collapsed[_collapse(text)]
        elif len(keys) == 1 and len(questions) == 1:
            key = keys[0]
        else:
            out.append(Answer())
            continue
        value = answers[key]
        multi = isinstance(value, list)
        raw = ", ".join(_js_string(v) for v in value) if multi else _js_string(value)
        choice = normalize_choice(raw) or UNKNOWN_CHOICE
        free = None
        note = annotations.get(key)
        notes = note.get("notes") if isinstance(note, dict) else None
        if isinstance(notes, str) and notes:
            free = notes
        elif not multi:
            shown = {normalize_choice(lab).lower() for lab in labels_of(q)}
            if shown and choice.lower() not in shown:
                parts = [normalize_choice(p).lower() for p in raw.split(", ")]
                if q.get("multiSelect") is True and len(parts) > 1 and all(p in shown for p in parts):
                    multi = True  # several options, already joined (transcript text)
                else:
                    free = raw  # the user typed an "Other" answer
        out.append(Answer(choice, free, multi))
    return out


def parse_answer_text(text: str, questions) -> dict | None:
    """``{question text: answer}`` from ``User has answered your questions: "Q"="A", …``.

    The question texts are known from the call, so they anchor the split: an answer
    may itself contain quotes or commas.
    """
    start = text.find(ANSWERED_PREFIX)
    if start < 0:
        return None
    body = text[start + len(ANSWERED_PREFIX):]
    end = body.rfind(ANSWERED_TRAILER)
    if end >= 0:
        body = body[:end]
    anchors = []
    for q in questions:
        qtext = question_text(q)
        if not qtext:
            continue
        token = f'"{qtext}"="'
        pos = body.find(token)
        if pos >= 0:
            anchors.append((pos, qtext, pos + len(token)))
    anchors.sort()
    answers = {}
    for k, (_, qtext, value_start) in enumerate(anchors):
        last = k + 1 == len(anchors)
        segment = body[value_start: len(body) if last else anchors[k + 1][0]].rstrip()
        if not last:
            segment = segment.removesuffix(",").rstrip()
        answers[qtext] = segment.removesuffix('"')
    return answers or None


def _js_string(v) -> str:
    """``String(v)`` for JSON values."""
    if isinstance(v, str):
        return v
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        from toolkit.core.questions import js_number

        return js_number(v)
    if isinstance(v, list):
        return ",".join("" if x is None else _js_string(x) for x in v)
    return "[object Object]"


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


def build_record(question, index, answer, *, registry, session_id, tool_use_id, source,
                 multi_question, recommended_strict=False, map_options=True, ts=None):
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

    record = {"skill": registry.skill_for(qid) if marker_id else "unknown",
              "question_id": qid, "question_summary": summary}
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

    options = entry.get("options") if entry and map_options else None
    if options:
        # Only a choice that is one of the shown labels is an option; typed text never is.
        shown = {normalize_choice(lab).lower() for lab in labels}
        if (choice != UNKNOWN_CHOICE and not answer.multi and not question.get("multiSelect")
                and normalize_choice(choice).lower() in shown):
            key = option_key(choice, options)
            if key:
                record["user_choice"] = key
                record["user_choice_label"] = truncate(choice, 64)
        if recommended:
            key = option_key(recommended, options)
            if key:
                record["recommended"] = key
                record["recommended_label"] = truncate(recommended, 64)
    return validate_event(record, allow_phase=True)


# --------------------------------------------------------------------------
# Database access (opened lazily; a missing database means "no preferences yet")


def _open_db(create: bool, db_path=None, env=None):
    from toolkit.store import db

    path = paths.db_path(db_path, env=env)
    if not create and not os.path.exists(path):
        return None
    conn = db.connect(path)
    # Claude Code kills a hook after 5 s: give up on a busy database well before that.
    conn.execute(f"PRAGMA busy_timeout = {HOOK_BUSY_TIMEOUT_MS}")
    return conn


def _project(payload, env=None) -> str:
    cwd = payload.get("cwd")
    cwd = cwd if isinstance(cwd, str) and cwd else None
    return paths.resolve_slug(cwd=cwd, env=env)


def _record(conn, record, project, index, registry, hook, env):
    """Insert one record and keep gstack's question-log.jsonl current; returns the status."""
    from toolkit.gstack import mirror
    from toolkit.core import questions

    result = questions.record_event(conn, record, project, question_index=index,
                                    registry=registry.door_types())
    if result.status == "inserted" and mirror.enabled(env):
        # The row is committed: now the line, marked read so pickup does not read it back.
        try:
            mirror.append_committed(conn, mirror.project_file(project, mirror.QUESTION_LOG, env),
                                    "question-log", questions.serialize(record), env)
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
                    q, i, answers[i], registry=registry, session_id=payload.get("session_id"),
                    tool_use_id=payload.get("tool_use_id"), source=None,
                    multi_question=len(qs) > 1)
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
                status = _record(self.conn, record, project, index, registry, self.hook,
                                 self.env)
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
            spool.put_question(record, project, paths.db_path(self.db_path, env=self.env),
                               question_index=index, mirror=mirror.enabled(self.env),
                               env=self.env)
        except spool.SpoolError as e:
            log_error(self.hook, f"question {index} lost: database is locked and {e}",
                      self.env)
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

    __slots__ = ("question", "index", "qid", "summary", "labels", "recommended",
                 "preference", "one_way", "eligible", "reason")

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
    v = Verdict(question=question, index=index, qid=qid, summary=summary, labels=labels,
                eligible=False, one_way=None)
    if not text:
        v.reason = "no question text"
        return v
    if read_door:
        v.one_way = _one_way(conn, qid, summary, registry)
    if not qid:
        v.reason = "no marker"
        return v
    v.recommended = extract_recommendation(summary, labels, strict=True)
    v.preference, _ = effective_preference(conn, project, qid)
    if v.one_way is None and v.preference in AUTO_DECIDE_PREFERENCES:
        v.one_way = _one_way(conn, qid, summary, registry)
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
    return (isinstance(s, str) and 1 <= len(s) <= 128 and all(c in _COMPONENT_CHARS for c in s)
            and s not in (".", ".."))


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
        with open(os.path.join(paths.state_root(env), "free-text-memory.json"), encoding="utf-8") as f:
            data = json_lite.loads(f.read())
    except (OSError, ValueError):
        return ""
    nuggets = data.get("nuggets") if isinstance(data, dict) else None
    if not isinstance(nuggets, list):
        return ""
    picked = []
    for key in keys:
        matching = [n for n in nuggets if isinstance(n, dict) and isinstance(n.get("nugget"), str)
                    and isinstance(n.get("applies_to_signal_keys"), list)
                    and key in n["applies_to_signal_keys"]]
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
            "(the user types the chosen option's name, not just a letter).")
    return "\n".join(lines)


def _deny(reason: str) -> str:
    return json_lite.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                              "permissionDecision": "deny",
                                              "permissionDecisionReason": reason}},
                      ensure_ascii=False, separators=(",", ":"))


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
        verdicts = [judge_question(q, i, conn, project, registry, read_door=conductor)
                    for i, q in enumerate(qs)]
        if all(v.eligible for v in verdicts):
            _auto_decide(payload, verdicts, conn, project, registry, env)
            reason = "\n".join(
                f"[plan-tune auto-decide] {v.qid} → {v.recommended} (your {v.preference} "
                "preference). Proceed with that option without re-prompting. Change with /plan-tune."
                for v in verdicts)
            return _deny(reason)
        memory = _memory_line(verdicts, registry, env)
        if conductor:
            reason = _conductor_reason(verdicts)
            return _deny(reason + ("\n" + memory if memory else ""))
        if memory:
            return json_lite.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                      "additionalContext": memory}},
                              ensure_ascii=False, separators=(",", ":"))
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
                v.question, v.index, answer, registry=registry,
                session_id=payload.get("session_id"), tool_use_id=payload.get("tool_use_id"),
                source="auto-decided", multi_question=multi, recommended_strict=True,
                # An auto-decision is not the user's answer in the moment: keep the label
                # (as gstack does) so it never moves the profile.
                map_options=False)
        except QuestionError as e:
            log_error(HOOK_PRE, f"question {v.index} not logged: {e.message}", env)
            continue
        if record is not None:
            writer.record(record, project, v.index, registry)


# --------------------------------------------------------------------------
# Settings (`plantune hook install`)


class SettingsError(ValueError):
    """A settings file we refuse to touch; ``str()`` is the one-line reason."""


def running_executable() -> str:
    """Absolute path of the ``plantune`` command that is running now.

    Hooks run with whatever PATH Claude Code has, which seldom includes a venv's bin
    folder, so installed hook commands name the executable by its absolute path.
    """
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0).startswith("plantune") and os.access(argv0, os.X_OK):
        return os.path.abspath(argv0)
    beside = os.path.join(os.path.dirname(sys.executable), "plantune")
    if os.access(beside, os.X_OK):
        return beside
    raise SettingsError("cannot tell where the plantune command is; "
                        "pass --executable /path/to/plantune")


def resolve_executable(executable=None) -> str:
    """``--executable`` as an absolute path (a bare name is looked up on PATH), else the running one."""
    import shutil

    if not executable:
        return running_executable()
    if os.sep not in executable:
        found = shutil.which(executable)
        if not found:
            raise SettingsError(f"{executable} is not on PATH; pass its absolute path to --executable")
        return os.path.abspath(found)
    return os.path.abspath(os.path.expanduser(executable))


def _subcommand(event: str) -> str:
    return "pre-tool-use" if event == "PreToolUse" else "post-tool-use"


def hook_command(event: str, executable: str, db_path=None) -> str:
    """The hook's shell command line: the quoted executable; ``db_path`` pins the database."""
    import shlex

    command = f"{shlex.quote(executable)} hook {_subcommand(event)}"
    if db_path:
        command += " --db " + shlex.quote(os.path.abspath(db_path))
    return command


def settings_entries(executable: str, db_path=None) -> dict:
    """The ``hooks`` block Claude Code needs for both events."""
    return {
        event: [{"matcher": MATCHER,
                 "hooks": [{"type": "command", "command": hook_command(event, executable, db_path),
                            "timeout": HOOK_TIMEOUT}]}]
        for event in HOOK_EVENTS
    }


def _hook_executable(command, event):
    """The executable a ``… hook <event> [--db PATH]`` command line runs, else None.

    Earlier versions wrote the executable unquoted, so words before ``hook`` are joined
    back into one path (``/path with space/plantune``).
    """
    import shlex

    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    tail = ["hook", _subcommand(event)]
    for k in range(1, len(words) - 1):
        rest = words[k + 2:]
        if words[k:k + 2] == tail and (not rest or (len(rest) == 2 and rest[0] == "--db")):
            return " ".join(words[:k])
    return None


def _is_ours(command, event, executable=None) -> bool:
    """A hook entry that runs plantune for ``event``: ours to replace, whatever its path."""
    found = _hook_executable(command, event)
    if found is None:
        return False
    return found == executable or os.path.basename(found).startswith("plantune")


def merge_settings(settings: dict, executable: str, db_path=None) -> dict:
    """Add (or repoint) our two hook entries in a settings object in place.

    Returns ``{event: "added" | "present" | "updated"}``. The first plantune entry of an
    event is kept (its command repointed), further ones are removed, so installing again
    never duplicates; every other key and every other tool's hook is kept as it was.
    """
    if not isinstance(settings, dict):
        raise SettingsError("the settings file must hold a JSON object")
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError('"hooks" must be a JSON object')
    outcome = {}
    for event, groups in settings_entries(executable, db_path).items():
        existing = hooks.setdefault(event, [])
        if not isinstance(existing, list):
            raise SettingsError(f'"hooks.{event}" must be a JSON array')
        wanted = groups[0]["hooks"][0]["command"]
        status = None
        for group in list(existing):
            items = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(items, list):
                continue
            for item in list(items):
                if not (isinstance(item, dict) and _is_ours(item.get("command"), event, executable)):
                    continue
                if status is None:
                    status = "present"
                    if item.get("command") != wanted:
                        item["command"] = wanted
                        status = "updated"
                else:
                    items.remove(item)
                    status = "updated"
            if not items:
                existing.remove(group)
        if status is None:
            existing.append(groups[0])
            status = "added"
        outcome[event] = status
    return outcome


def installed_commands(settings: dict) -> list:
    """``(event, command)`` for every plantune hook entry in a settings object."""
    found = []
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    for event in HOOK_EVENTS:
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        for group in groups if isinstance(groups, list) else []:
            items = group.get("hooks") if isinstance(group, dict) else None
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and _is_ours(item.get("command"), event):
                    found.append((event, item["command"]))
    return found


# What `hook install --check` feeds each command: a question call that the hooks read
# through (database, registry, preferences) without recording anything, since a question
# without text is skipped and an unmarked one is never auto-decided.
CHECK_PAYLOADS = {
    "PreToolUse": {"hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion",
                   "session_id": "plantune-hook-check", "cwd": os.sep,
                   "tool_input": {"questions": [{"question": "plantune hook check",
                                                 "options": ["A", "B"]}]}},
    "PostToolUse": {"hook_event_name": "PostToolUse", "tool_name": "AskUserQuestion",
                    "session_id": "plantune-hook-check", "cwd": os.sep,
                    "tool_input": {"questions": [{"question": "", "options": []}]},
                    "tool_response": {"answers": {}}},
}
CHECK_PATH = "/usr/bin:/bin"
# Variables a hook inherits from the user's environment that decide where plantune writes.
CHECK_PASSED_VARS = ("HOME", "GSTACK_STATE_ROOT", "GSTACK_HOME", "PLANTUNE_DB", "PLANTUNE_MIRROR")


def check_command(event: str, command: str, env=None) -> str:
    """Run one installed hook command as Claude Code would; "" when OK, else why it failed.

    ``sh -c`` with a minimal environment (PATH=/usr/bin:/bin plus HOME and plantune's own
    variables), the sample payload on stdin. Failed: a non-zero exit (127 is "not found"),
    a time-out, unexpected output, or a new line in hook-errors.log.
    """
    import json
    import subprocess

    source = os.environ if env is None else env
    check_env = {k: source[k] for k in CHECK_PASSED_VARS if source.get(k)}
    check_env["PATH"] = CHECK_PATH
    errors_log = os.path.join(paths.state_root(check_env), ERROR_LOG)

    def log_size():
        try:
            return os.path.getsize(errors_log)
        except OSError:
            return 0

    before = log_size()
    try:
        p = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(CHECK_PAYLOADS[event]),
                           capture_output=True, text=True, env=check_env,
                           timeout=max(15, 3 * HOOK_TIMEOUT))
    except subprocess.TimeoutExpired:
        return f"no answer within {max(15, 3 * HOOK_TIMEOUT)} s"
    said = " ".join((p.stderr.strip().splitlines() or [""])[-1:]).strip()
    if p.returncode != 0:
        return f"exit {p.returncode}" + (f": {said}" if said else "")
    if p.stdout.strip():
        return f"unexpected output: {p.stdout.strip().splitlines()[0]}"
    if log_size() > before:
        with open(errors_log, encoding="utf-8", errors="replace") as f:
            f.seek(before)
            logged = f.read().strip().splitlines()
        return f"logged an error: {logged[-1] if logged else '?'}"
    return ""


def gstack_hooks_in(settings: dict) -> list:
    """gstack's own question hooks still registered (they would record answers twice)."""
    found = []
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    for groups in hooks.values() if isinstance(hooks, dict) else []:
        for group in groups if isinstance(groups, list) else []:
            items = group.get("hooks") if isinstance(group, dict) else None
            for item in items if isinstance(items, list) else []:
                cmd = item.get("command") if isinstance(item, dict) else None
                if isinstance(cmd, str) and ("question-log-hook" in cmd or "question-preference-hook" in cmd):
                    found.append(cmd)
    return found


def install_settings(path: str, executable: str, db_path=None) -> tuple:
    """Merge our hooks into the settings file at ``path`` (created if missing).

    Atomic (temp file + rename, mode kept). Raises SettingsError for a file that is
    not a JSON object; nothing is written then. Returns ``(outcome, gstack_hooks)``.
    """
    import json

    text = ""
    try:
        text = safe_io.read_text(path)
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError) as e:
        raise SettingsError(f"cannot read {path}: {safe_io.describe(e)}") from None
    if text.strip():
        try:
            settings = json.loads(text)
        except ValueError as e:
            raise SettingsError(f"{path} is not valid JSON ({e}); fix or move it, nothing was changed") from None
    else:
        settings = {}
    try:
        outcome = merge_settings(settings, executable, db_path)
    except SettingsError as e:
        raise SettingsError(f"{path}: {e}; nothing was changed") from None
    if all(v == "present" for v in outcome.values()):
        return outcome, gstack_hooks_in(settings)
    # A settings file kept as a symlink (dotfiles) is written where it leads.
    safe_io.write_atomic(os.path.realpath(path),
                         json.dumps(settings, indent=2, ensure_ascii=False) + "\n", mode=0o644)
    return outcome, gstack_hooks_in(settings)


def run_hook(name, handler):
    """Read the hook JSON on stdin, run ``handler`` and print what it returns.

    Never raises and never exits non-zero: a broken hook must not break the agent, so
    every problem goes to hook-errors.log instead.
    """
    import sys

    try:
        payload = parse_payload(read_stdin())
        if payload is None:
            return
        out = handler(payload)
        if isinstance(out, str) and out:
            sys.stdout.buffer.write(out.encode("utf-8") + b"\n")
            sys.stdout.flush()
    except HookInputError as e:
        log_error(name, str(e))
    except Exception as e:  # noqa: BLE001 - a hook must never break the agent
        log_error(name, f"main crash: {type(e).__name__}: {e}")


def run_named_hook(event, db_path=None):
    """Run the PreToolUse or PostToolUse hook by its command name (the fast CLI path)."""
    if event == "post-tool-use":
        run_hook(HOOK_POST, lambda p: post_tool_use(p, db_path=db_path))
    else:
        run_hook(HOOK_PRE, lambda p: pre_tool_use(p, db_path=db_path))
