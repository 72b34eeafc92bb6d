"""The whole of a question, as the door rules read it.

An agent's question is more than its sentence: a header, options with labels and
descriptions, a recommendation. "Which cleanup should I run now?" is harmless; its option
"Drop the users table in production (Recommended)" is not. Every reader that decides a
door (the hooks, ``--check``, pacing findings, the audit) builds the text the rules read
here, and nowhere else: each part on a line of its own, in the order a person reads them.

Hot path: nothing imported.
"""

__all__ = ["door_text", "logged_text", "of_question"]

# An event's parts besides its summary that a door reads.
WHOLE_PARTS = ("options", "header", "recommended", "recommendation")
_PARTS = tuple(f'"{part}"' for part in WHOLE_PARTS)


# The names of a question's fields (AskUserQuestion's, a logged event's, the JSON form's).
# Any other key of a mapping in a question is read as text: an agent may show it (options
# given as a mapping keyed by their labels, say).
FIELD_NAMES = frozenset(
    (
        "question", "question_summary", "summary", "header", "options", "label",
        "description", "preview", "markdown", "multiSelect", "multi_select",
        "recommendation", "recommended", "question_id", "id", "key", "skill", "category",
        "door_type",
    )
)  # fmt: skip


def _add_keys(parts, keys):
    for key in keys:
        if key not in FIELD_NAMES:
            _add(parts, key)


def _add(parts, value):
    if isinstance(value, str) and value.strip():
        parts.append(value)


def _add_all(parts, value):
    """Every string inside ``value`` (a string, or lists and mappings of them), in order."""
    if isinstance(value, dict):
        _add_keys(parts, value)
        value = value.values()
    elif not isinstance(value, (list, tuple)):
        _add(parts, value)
        return
    for item in value:
        _add_all(parts, item)


def door_text(question=None, header=None, options=None, recommendation=None) -> str:
    """The question, the header, every option's label, description and preview and the
    recommendation, joined with newlines (parts that are not text, or empty, left out).

    An option is a string or a mapping with ``label`` and ``description``; any other
    text an option carries (its ``preview`` or ``markdown``, the content the user sees when
    the option is focused; a description given as a list) is read after them.
    """
    parts = []
    _add(parts, question)
    _add(parts, header)
    if isinstance(options, (list, tuple)):
        for option in options:
            if isinstance(option, dict):
                _add(parts, option.get("label"))
                _add(parts, option.get("description"))
                _add_all(
                    parts, {k: v for k, v in option.items() if k not in ("label", "description")}
                )
                if not isinstance(option.get("description"), str):
                    _add_all(parts, option.get("description"))
            else:
                _add_all(parts, option)
    elif isinstance(options, dict):  # options keyed by their labels
        _add_all(parts, options)
    _add(parts, recommendation)
    return "\n".join(parts)


def of_question(obj, text=None) -> str:
    """``door_text`` of one question given as a mapping: an AskUserQuestion question
    (``question``, ``header``, ``options``), a ``--check`` JSON question, or a logged
    event (``question_summary``, ``options``, ``recommended``). ``text`` replaces the
    question's own sentence (the hook passes it without its id marker)."""
    if not isinstance(obj, dict):
        return text if isinstance(text, str) else ""
    if text is None:
        for key in ("question", "question_summary", "summary"):
            if isinstance(obj.get(key), str):
                text = obj[key]
                break
    recommendation = obj.get("recommendation")
    if not isinstance(recommendation, str):
        recommendation = obj.get("recommended")
    return door_text(text, obj.get("header"), obj.get("options"), recommendation)


QUESTION_JSON_HELP = (
    'a JSON object such as {"question": "...", "header": "...",'
    ' "options": [{"label": "...", "description": "..."}]}'
)


def from_json(data) -> str:
    """``door_text`` of a JSON question object (``--question-stdin``); ValueError with a
    one-line message when it is not one."""
    from toolkit.store import json_lite

    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("question on stdin is not valid UTF-8") from None
    every = []

    def pairs(items):
        # Each value as it comes, a duplicated key's too (a mapping keeps only the last).
        _add_keys(every, [k for k, _ in items])
        _add_all(every, [v for _, v in items if not isinstance(v, dict)])
        return dict(items)

    try:
        obj = json_lite.loads(data, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        obj = None
    text = of_question(obj) if isinstance(obj, dict) else ""
    if not text:
        raise ValueError(f"stdin must be {QUESTION_JSON_HELP}")
    # Any other text in the object (another key, an unknown field, a duplicated key) is
    # read too, after the question's own parts: the agent may show the user any of it.
    read = set(text.split("\n"))
    extra = [s for s in dict.fromkeys(every) if s not in read and not ("\n" in s and s in text)]
    return "\n".join([text] + extra) if extra else text


def logged_text(summary, raw_json, extra_json=None) -> str:
    """The whole question of a logged event: what the hook recorded it was shown
    (``whole_question``), else its summary with the header, options and recommendation
    of its original line when it has them."""
    import json

    if extra_json and '"whole_question"' in extra_json:
        try:
            whole = json.loads(extra_json).get("whole_question")
        except (ValueError, AttributeError):
            whole = None
        if isinstance(whole, str) and whole:
            return whole
    if raw_json and any(p in raw_json for p in _PARTS):
        try:
            raw = json.loads(raw_json)
        except ValueError:
            raw = None
        if isinstance(raw, dict):
            return of_question(raw, text=summary)
    return summary
