"""The hook JSON on stdin: read without hanging, parsed, and told apart as an
AskUserQuestion call or any other tool's.

This is all a hook needs before it knows it has a question to look at, so a hook that
passes through (another tool, a call without questions) imports nothing else of
``toolkit.claude``: no question rules, no JS formatting. Hot path: standard library and
``store.json_lite`` only.
"""

import os
import select
import sys
import time

from toolkit.store import json_lite

STDIN_TIMEOUT = 2.0
# An MCP server's AskUserQuestion: the regex, and the string test the hot path runs in its
# place (a test keeps the two equal).
MCP_TOOL_PATTERN = r"mcp__.+__AskUserQuestion"
_MCP_PREFIX, _MCP_SUFFIX = "mcp__", "__AskUserQuestion"


def _is_mcp_ask_tool(name):
    """``MCP_TOOL_PATTERN`` (with DOTALL) as a full match."""
    return (
        len(name) > len(_MCP_PREFIX) + len(_MCP_SUFFIX)
        and name.startswith(_MCP_PREFIX)
        and name.endswith(_MCP_SUFFIX)
    )


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


class HookInputError(ValueError):
    """Stdin that is not a hook payload; logged, never shown to the agent."""


def parse_payload(text: str):
    """The hook JSON object, or None for empty stdin; HookInputError when unparseable.

    A leading byte-order mark is dropped, and a lone surrogate (``"\\ud800"``: JSON, but
    no text SQLite or a file can hold) becomes U+FFFD, so such an answer is still kept.
    """
    text = text.removeprefix("\ufeff")
    if not text.strip():
        return None
    try:
        payload = json_lite.loads(text)
        if "\\ud" in text or "\\uD" in text:
            payload = _without_lone_surrogates(payload)
    except (ValueError, RecursionError) as e:
        raise HookInputError(f"stdin parse failed: {e}") from None
    if not isinstance(payload, dict):
        raise HookInputError("stdin parse failed: not a JSON object")
    return payload


def _without_lone_surrogates(value):
    if isinstance(value, str):
        try:
            value.encode("utf-8")  # at C speed: most strings have none
        except UnicodeEncodeError:
            return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
        return value
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    return value


def is_ask_tool(name) -> bool:
    return isinstance(name, str) and (name == "AskUserQuestion" or _is_mcp_ask_tool(name))


def questions_of(tool_input) -> list:
    qs = tool_input.get("questions") if isinstance(tool_input, dict) else None
    return qs if isinstance(qs, list) else []


def ask_questions(payload) -> list:
    """The questions of an AskUserQuestion call's payload; [] for any other payload."""
    if not isinstance(payload, dict) or not is_ask_tool(payload.get("tool_name")):
        return []
    return questions_of(payload.get("tool_input"))
