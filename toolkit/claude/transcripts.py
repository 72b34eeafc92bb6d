"""Backfill question events from Claude Code session transcripts.

Claude Code keeps every session as JSONL under ``~/.claude/projects/<dir>/*.jsonl``.
An AskUserQuestion call is an assistant line whose ``message.content`` holds a
``tool_use`` item (``name`` AskUserQuestion or ``mcp__<server>__AskUserQuestion``,
``id``, ``input.questions``); its answer is a later user line with a ``tool_result``
item of the same ``tool_use_id`` (``content`` a string or a list of text items, maybe
``is_error``) and often a structured ``toolUseResult`` object carrying ``answers``.

Each answered question is recorded exactly as the PostToolUse hook would record it
(same ids, option keys, recommendation, free text), with source ``transcript-import``,
the answer's own timestamp, and the transcript line it came from.

What is not recorded, and why:
- a call with no tool_result (the session ended or was cut) and a call the user
  rejected or interrupted: the PostToolUse hook never fires for those, and an
  ``__unknown__`` answer says nothing while inflating sample sizes. They are
  counted in the summary instead.
- a question already in the database for the same project, tool_use_id and position
  from a live hook (``hook`` / ``auq-other``) or an earlier import: rerunning, or
  importing a session the hooks already saw, adds nothing.
Nothing is mirrored to gstack's question-log.jsonl: gstack has no such source.
"""

from __future__ import annotations

import json
import os

from toolkit.claude import hook_input, payload, records
from toolkit.core.questions import QuestionError
from toolkit.store import safe_io

SOURCE = "transcript-import"
_REJECTION_MARKERS = ("The user doesn't want to proceed", "[Request interrupted by user")
_SEEN_SOURCES = ("hook", "auq-other", SOURCE)


class TranscriptError(ValueError):
    """A directory we cannot import from; ``str()`` is the one-line reason."""


class Call:
    __slots__ = ("tool_use_id", "questions", "session_id", "cwd", "ts", "path", "line_no", "result")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))


class Result:
    __slots__ = ("is_error", "text", "structured", "ts", "line_no")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))


class Summary:
    """Counts for one import run, plus every skipped line as ``file:line: reason``."""

    def __init__(self):
        self.files = 0
        self.calls = 0
        self.imported = 0
        self.already_imported = 0
        self.captured_by_hook = 0
        self.unanswered = 0
        self.rejected = 0
        self.unreadable = 0
        self.refused = 0
        self.problems: list[str] = []

    def as_dict(self) -> dict:
        d = {
            k: getattr(self, k)
            for k in (
                "files",
                "calls",
                "imported",
                "already_imported",
                "captured_by_hook",
                "unanswered",
                "rejected",
                "unreadable",
                "refused",
            )
        }
        d["problems"] = list(self.problems)
        return d


def transcript_files(root: str) -> list:
    """Every ``*.jsonl`` below ``root`` (recursively, symlinked folders not followed), sorted."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        found.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(".jsonl"))
    return found


def _content_items(obj):
    msg = obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    return [c for c in content if isinstance(c, dict)] if isinstance(content, list) else []


def _result_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            c.get("text", "")
            for c in content
            if isinstance(c, dict) and isinstance(c.get("text"), str)
        )
    return ""


def read_calls(path: str, problems: list) -> list:
    """The AskUserQuestion calls of one transcript, each with its result (or None)."""
    calls: dict = {}
    with safe_io.open_text(path, errors="replace") as fh:
        for line_no, line in enumerate(fh, 1):
            # Most lines are other tools and text: skip them before paying for json.loads.
            if "AskUserQuestion" not in line and not (
                calls and "tool_result" in line and any(t in line for t in _pending(calls))
            ):
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                problems.append(f"{path}:{line_no}: not valid JSON, skipped")
                continue
            if not isinstance(obj, dict):
                continue
            kind = obj.get("type")
            if kind == "assistant":
                for item in _content_items(obj):
                    if item.get("type") == "tool_use" and hook_input.is_ask_tool(item.get("name")):
                        tid = item.get("id")
                        if not isinstance(tid, str) or not tid:
                            problems.append(
                                f"{path}:{line_no}: AskUserQuestion call without an id, skipped"
                            )
                            continue
                        calls.setdefault(
                            tid,
                            Call(
                                tool_use_id=tid,
                                questions=hook_input.questions_of(item.get("input")),
                                session_id=obj.get("sessionId"),
                                cwd=obj.get("cwd"),
                                ts=obj.get("timestamp"),
                                path=path,
                                line_no=line_no,
                            ),
                        )
            elif kind == "user":
                results = [i for i in _content_items(obj) if i.get("type") == "tool_result"]
                structured = obj.get("toolUseResult")
                for item in results:
                    call = calls.get(item.get("tool_use_id"))
                    if call is None or call.result is not None:
                        continue
                    call.result = Result(
                        is_error=item.get("is_error") is True,
                        text=_result_text(item.get("content")),
                        # One structured result per line: it belongs to a lone tool_result only.
                        structured=structured
                        if len(results) == 1 and isinstance(structured, dict)
                        else None,
                        ts=obj.get("timestamp"),
                        line_no=line_no,
                    )
    return list(calls.values())


def _pending(calls):
    return [t for t, c in calls.items() if c.result is None]


def response_for(call):
    """``(tool_response, None)`` for an answered call, else ``(None, reason)``."""
    result = call.result
    if result is None:
        return None, "unanswered"
    if result.is_error or any(m in result.text for m in _REJECTION_MARKERS):
        return None, "rejected"
    if result.structured and isinstance(result.structured.get("answers"), dict):
        return result.structured, None
    parsed = payload.parse_answer_text(result.text, call.questions)
    if parsed:
        return {"answers": parsed}, None
    return None, "unreadable"


def check_root(root: str) -> list:
    """The transcript files under ``root``; TranscriptError when there is nothing to read."""
    if not os.path.isdir(root):
        raise TranscriptError(f"{root} is not a directory")
    files = transcript_files(root)
    if not files:
        raise TranscriptError(f"no *.jsonl transcripts under {root}")
    return files


def _slug_for(cwd, cache, env):
    from toolkit.store import paths

    if not (isinstance(cwd, str) and os.path.isabs(cwd)):
        return "unknown"
    if cwd not in cache:
        cache[cwd] = paths.resolve_slug(cwd=cwd, env=env)
    return cache[cwd]


def import_transcripts(conn, root: str, project: str | None = None, env=None) -> Summary:
    """Record every answered AskUserQuestion question found under ``root``.

    ``project`` forces one slug; otherwise each call's ``cwd`` is resolved with the
    same slug rules as the CLI and the hooks. One transaction per file.
    """
    from toolkit.core import questions
    from toolkit.store import db

    files = check_root(root)
    registry = records.Registry.from_db(conn)
    doors_map = registry.door_types()
    summary = Summary()
    slugs: dict = {}
    for path in files:
        summary.files += 1
        try:
            calls = read_calls(path, summary.problems)
        except safe_io.UnsafeFile as e:
            summary.problems.append(f"{e}, skipped")
            continue
        except OSError as e:
            summary.problems.append(f"{path}: cannot read ({e.strerror or e}), skipped")
            continue
        with db.transaction(conn):
            for call in calls:
                summary.calls += 1
                response, reason = response_for(call)
                if reason:
                    setattr(summary, reason, getattr(summary, reason) + 1)
                    if reason == "unreadable":
                        summary.problems.append(
                            f"{path}:{call.result.line_no}: answer to {call.tool_use_id} not readable, skipped"
                        )
                    continue
                slug = project or _slug_for(call.cwd, slugs, env)
                _import_call(conn, call, response, slug, registry, doors_map, summary, questions)
    return summary


def _import_call(conn, call, response, slug, registry, doors_map, summary, questions):
    answers, _ = payload.extract_answers(response, call.questions)
    multi = len(call.questions) > 1
    ts = call.result.ts if isinstance(call.result.ts, str) and call.result.ts else call.ts
    for i, q in enumerate(call.questions):
        seen = conn.execute(
            "SELECT source FROM question_log WHERE project = ? AND source IN (?, ?, ?)"
            " AND tool_use_id = ? AND question_index = ? LIMIT 1",
            (slug, *_SEEN_SOURCES, call.tool_use_id, i),
        ).fetchone()
        if seen:
            if seen[0] == SOURCE:
                summary.already_imported += 1
            else:
                summary.captured_by_hook += 1
            continue
        try:
            record = records.build_record(
                q,
                i,
                answers[i],
                registry=registry,
                session_id=call.session_id,
                tool_use_id=call.tool_use_id,
                source=None,
                multi_question=multi,
                ts=ts if isinstance(ts, str) else None,
            )
        except QuestionError as e:
            summary.refused += 1
            summary.problems.append(
                f"{call.path}:{call.line_no}: question {i} refused: {e.message}"
            )
            continue
        if record is None:
            continue
        # Validated under gstack's hook source; the database knows the import source.
        record["source"] = SOURCE
        result = questions.record_event(
            conn,
            record,
            slug,
            question_index=i,
            dedup=False,
            registry=doors_map,
            ingested_from=f"{os.path.abspath(call.path)}:{call.result.line_no}",
        )
        if result.status == "inserted":
            summary.imported += 1
        else:
            summary.already_imported += 1
