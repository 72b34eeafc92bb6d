"""A ranking request: the findings JSON a review sends, checked field by field.

Bad input gets one clear line (``PacingError``) and nothing is stored. Also the pacing
vocabulary and limits every pacing module shares. Hot path: standard library only.
"""

import re
import sys

from toolkit.core import questions, scoring
from toolkit.core.jscompat import truncate
from toolkit.core.screening import flatten_newlines, has_injection

# question_log truncates session_id to its limit; longer ids could not link.
from toolkit.core.vocabulary import (
    DOOR_TYPES,
    FINDING_KINDS,
    FINDING_PHASES,
    OPTIONS_MAX,
    QUESTION_ID_MAX,
    SESSION_ID_MAX,
    is_kebab,
)
from toolkit.core.vocabulary import GATE_KINDS as GATE_KIND_NAMES
from toolkit.core.whole_question import door_text

# json_lite: the json package is slow to import on the hot path (see docs/performance.md).
from toolkit.store import json_lite as json
from toolkit.store.digest import sha1 as _sha1

# Phases a review can rank in ('unknown' exists only for legacy question-log rows).
PHASES = FINDING_PHASES
KINDS = FINDING_KINDS
GATE_KINDS = frozenset(GATE_KIND_NAMES)
# At most this many rank-surfaced two-way findings per phase (the seed's "max 3").
PHASE_CAP = 3
# gstack ends a session after 120 minutes without activity; pacing state does the same.
TTL_ENV = "PLANTUNE_PACING_TTL_MINUTES"
DEFAULT_TTL_MINUTES = 120
ARCHIVE_MARK = "~closed-"
DEFAULT_SKILL = "pacing"
CHAIN_ID_MAX = 128
FINDING_ID_MAX = 128
SUMMARY_MAX = 1000
OPTION_MAX = 200
QUESTION_SUMMARY_MAX = questions.SUMMARY_MAX

_NON_KEBAB = re.compile(r"[^a-z0-9]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class PacingError(ValueError):
    """Bad pacing input or state; ``str(err)`` is the one-line message for the user."""

    exit_code = 1

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class Ranking:
    """What ``rank`` returns: the JSON answer, whether it was replayed, and notes."""

    __slots__ = ("output", "replayed", "notes")

    def __init__(self, output, replayed=False, notes=()):
        self.output, self.replayed, self.notes = output, replayed, list(notes)


# ---------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------


def _reject_constant(name):
    raise ValueError(f"invalid constant {name}")


def parse_request(text):
    """Parse the stdin of ``pacing rank``: one JSON object."""
    if text is None or not text.strip():
        raise PacingError(
            "no input: expected a JSON object with session_id, phase and findings on stdin"
        )
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        raise PacingError(f"invalid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise PacingError(
            "invalid input: expected a JSON object with session_id, phase and findings"
        )
    return obj


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _text(value, what, max_len, required=True):
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise PacingError(f"{what} must be a non-empty string")
    if len(value) > max_len:
        raise PacingError(f"{what} must be at most {max_len} characters")
    if "\x00" in value:
        raise PacingError(f"{what} must not contain NUL bytes")
    return value


def one_line(value, what, max_len, required=True):
    value = _text(value, what, max_len, required)
    if value is not None and _CONTROL.search(value):
        raise PacingError(f"{what} must be one line without control characters")
    return value


def _finding(raw, position):
    label = f"finding {position}"
    if not isinstance(raw, dict):
        raise PacingError(f"{label} must be a JSON object")
    fid = one_line(raw.get("id"), f"{label}: id", FINDING_ID_MAX)
    label = f"finding {fid}"
    # Long summaries are cut, not refused: the full text stays with the agent.
    full = _text(raw.get("summary"), f"{label}: summary", sys.maxsize)
    # The door is read from the whole summary; only the stored copy is cut.
    out = {"id": fid, "summary": full[:SUMMARY_MAX]}
    for factor in scoring.FACTORS:
        value = raw.get(factor)
        if not _is_int(value) or not 0 <= value <= 2:
            raise PacingError(f"{label}: {factor} must be an integer 0-2 (got {json.dumps(value)})")
        out[factor] = value
    door = raw.get("door_type")
    if door is not None and door not in DOOR_TYPES:
        raise PacingError(f"{label}: door_type must be one-way, two-way or null")
    out["door_type"] = door
    kind = raw.get("kind", "finding")
    if kind is None:
        kind = "finding"
    if kind not in KINDS:
        raise PacingError(f"{label}: kind must be one of: {', '.join(KINDS)}")
    out["kind"] = kind
    options = raw.get("options", [])
    if options is None:
        options = []
    if not isinstance(options, list) or len(options) > OPTIONS_MAX:
        raise PacingError(f"{label}: options must be a list of at most {OPTIONS_MAX} strings")
    for opt in options:
        one_line(opt, f"{label}: each option", OPTION_MAX)
    if len(set(options)) != len(options):
        raise PacingError(f"{label}: options must not repeat")
    recommended = raw.get("recommended")
    if recommended is None and options:
        recommended = options[0]
    if recommended is None:
        raise PacingError(f"{label}: recommended required (the option a Silent Decision takes)")
    out["recommended"] = one_line(recommended, f"{label}: recommended", OPTION_MAX)
    out["options"] = list(options)
    # The door is read from the whole finding: a destructive option makes it one-way.
    out["door_text"] = door_text(full, None, out["options"], out["recommended"])
    return out


def validate_request(obj):
    """Check a ``pacing rank`` request and return it normalised (defaults filled in).

    Raises PacingError naming the first problem. Nothing here reads the database.
    """
    if not isinstance(obj, dict):
        raise PacingError(
            "invalid input: expected a JSON object with session_id, phase and findings"
        )
    session_id = one_line(obj.get("session_id"), "session_id", SESSION_ID_MAX)
    chain_id = obj.get("chain_id")
    chain_id = session_id if chain_id is None else one_line(chain_id, "chain_id", CHAIN_ID_MAX)
    phase = obj.get("phase")
    if not isinstance(phase, str) or phase.lower() not in PHASES:
        raise PacingError(f"unknown phase {json.dumps(phase)}, must be one of: {', '.join(PHASES)}")
    budget = obj.get("budget")
    if budget is not None and (not _is_int(budget) or budget < 0):
        raise PacingError(f"budget must be a non-negative integer (got {json.dumps(budget)})")
    skill = obj.get("skill", DEFAULT_SKILL)
    if skill is None:
        skill = DEFAULT_SKILL
    if not isinstance(skill, str) or not is_kebab(skill):
        raise PacingError("skill must be kebab-case")
    findings = obj.get("findings")
    if not isinstance(findings, list):
        raise PacingError("findings must be a list")
    normalised, seen, qids = [], set(), {}
    for position, raw in enumerate(findings, 1):
        f = _finding(raw, position)
        if f["id"] in seen:
            raise PacingError(f"duplicate finding id {f['id']}")
        seen.add(f["id"])
        f["question_id"] = qid = question_id_for(f["id"])
        if qid in qids:
            raise PacingError(
                f"findings {qids[qid]} and {f['id']} map to the same question id {qid}"
            )
        qids[qid] = f["id"]
        normalised.append(f)
    return {
        "session_id": session_id,
        "chain_id": chain_id,
        "phase": phase.lower(),
        "budget": budget,
        "skill": skill,
        "findings": normalised,
    }


def question_id_for(finding_id):
    """The question-log id for a finding: itself when valid there, else a derived kebab id.

    The derived form keeps the readable part and adds 10 hex digits of its sha1, so two
    different ids never share a question id in practice.
    """
    if len(finding_id) <= QUESTION_ID_MAX and is_kebab(finding_id):
        return finding_id
    slug = _NON_KEBAB.sub("-", finding_id.lower()).strip("-")[:53].strip("-") or "finding"
    digest = _sha1(finding_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{slug}-{digest}"


def request_key(project, req):
    canonical = json.dumps(
        [project, req], sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return _sha1(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def screened(summary, question_id):
    """(summary safe for the log and the block, withheld?) — instruction-like text is
    replaced, never rejected, so one bad summary cannot break a phase's ranking."""
    flat = flatten_newlines(summary)
    if has_injection(flat) or has_injection(truncate(flat, QUESTION_SUMMARY_MAX)):
        return f"Finding {question_id}: summary withheld (instruction-like text)", True
    return flat, False
