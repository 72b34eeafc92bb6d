"""Question-log records from AskUserQuestion calls: the registry a hook needs, option keys.

Shared by the hooks and the transcript importer, so an answer is stored the same way
whichever of them saw it. Hot path: stdlib plus toolkit's hot-path modules only.
"""

from toolkit.claude.payload import (
    extract_marker,
    extract_recommendation,
    hash_question_id,
    labels_of,
    letter_prefix_end,
    question_text,
    slug_words,
)
from toolkit.core.jscompat import truncate
from toolkit.core.questions import (
    UNKNOWN_CHOICE,
    Event,
    QuestionError,
    normalize_choice,
    validate_event,
)
from toolkit.core.whole_question import of_question
from toolkit.store import json_lite

# --------------------------------------------------------------------------
# Registry knowledge


_REGISTRY_COLUMNS = ("id", "skill", "category", "door_type", "options_json", "signal_key")
_REGISTRY_SQL = f"SELECT {', '.join(_REGISTRY_COLUMNS)} FROM registry_questions"


def _registry_entry(row):
    e = dict(zip(_REGISTRY_COLUMNS, row))
    opts = e.pop("options_json")
    e["options"] = json_lite.loads(opts) if opts else None
    return e


class Registry:
    """The registered questions a hook needs: id -> entry, plus the skills they belong to.

    From a database the rows are read when first needed: an id looked up as it is spelled
    reads its one row; any other use (another spelling, the doors of all, the skills) reads
    them all, once. A hook passing a question through reads at most one row."""

    def __init__(self, entries=None, conn=None):
        self._conn, self._entries, self._one = conn, None, {}
        if entries is not None:
            self._entries = {e["id"]: e for e in entries}
        self._canonical = self._skills = None

    @property
    def entries(self):
        if self._entries is None:
            rows = self._conn.execute(_REGISTRY_SQL).fetchall()
            self._entries = {r[0]: _registry_entry(r) for r in rows}
        return self._entries

    @property
    def skills(self):
        if self._skills is None:
            found = {e["skill"] for e in self.entries.values() if e.get("skill")}
            self._skills = sorted(found, key=len, reverse=True)
        return self._skills

    @classmethod
    def from_db(cls, conn):
        return cls(conn=conn)

    @classmethod
    def bundled(cls):
        from toolkit.core import doors

        return cls(doors.load_bundled_registry())

    def get(self, qid):
        """The entry for ``qid`` in any spelling of it (case, ``_`` vs ``-``, spaces)."""
        if self._entries is None and isinstance(qid, str):
            if qid not in self._one:
                row = self._conn.execute(_REGISTRY_SQL + " WHERE id = ?", (qid,)).fetchone()
                self._one[qid] = _registry_entry(row) if row else None
            if self._one[qid] is not None:
                return self._one[qid]
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
    end = letter_prefix_end(text)
    if end is not None and end < len(text):
        text = text[end:]
    slug = slug_words(text.lower()).strip("-")
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
    keys_beside=False,
    ts=None,
):
    """The question-log record for one question, validated (QuestionError if refused).

    Returns None for a question without text (gstack skips those too). With
    ``map_options``, a choice that is one of the shown labels and names one of the
    registry entry's options is stored as that option key, the label beside it. With
    ``keys_beside`` instead (an auto-decision), the choice and recommendation stay the
    labels gstack logs in its line and their keys go beside them (``user_choice_key``,
    ``recommended_key``); the database row stores the keys (``questions.prepare_row``).
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

    options = entry.get("options") if entry and (map_options or keys_beside) else None
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
            if key and keys_beside:
                record["user_choice_key"] = key
            elif key:
                record["user_choice"] = key
                record["user_choice_label"] = truncate(choice, 64)
        if recommended:
            key = option_key(recommended, options)
            if key and keys_beside:
                record["recommended_key"] = key
            elif key:
                record["recommended"] = key
                record["recommended_label"] = truncate(recommended, 64)
    event = validate_event(record, allow_phase=True)
    if whole != summary:
        # The door (door_class) is read from the whole question, options included.
        event = Event(event)
        event.door_text = event.whole_question = whole
    return event


def call_records(questions, answers, registry, *, session_id, tool_use_id, source, **options):
    """Every question of one AskUserQuestion call as its record, in one pass: an
    ``(index, record, refusal)`` per question with text, ``record`` None and ``refusal``
    the reason when validation refused it. ``answers[i]`` answers ``questions[i]``;
    ``options`` go to :func:`build_record`."""
    items = []
    for index, question in enumerate(questions):
        try:
            record = build_record(
                question,
                index,
                answers[index],
                registry=registry,
                session_id=session_id,
                tool_use_id=tool_use_id,
                source=source,
                multi_question=len(questions) > 1,
                **options,
            )
        except QuestionError as e:
            items.append((index, None, e.message))
            continue
        if record is not None:
            items.append((index, record, None))
    return items
