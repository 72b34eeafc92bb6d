"""Claude Code hook payloads: the questions, options, markers, recommendations and answers
inside an AskUserQuestion call (reading and parsing stdin is ``toolkit.claude.hook_input``).

Parsing only: nothing here opens the database or writes a file. Hot path: standard library
and plantune's hot-path modules only; ``re`` is imported only for the rare texts that need
a regex.
"""

from toolkit.core.jscompat import js_trim, value_string
from toolkit.core.questions import UNKNOWN_CHOICE, normalize_choice
from toolkit.store import json_lite

# The tool result text Claude Code shows the model after AskUserQuestion.
ANSWERED_PREFIX = "User has answered your questions:"
ANSWERED_TRAILER = ". You can now continue"

# Patterns, compiled (and ``re`` imported: several ms) only when a hook needs one. The
# common paths need none: an option's letter prefix and slug, and path
# components are read with string methods that follow these patterns (a test keeps them
# equal); a marker in non-ASCII text and a "Recommendation:" line use the regex.
_PATTERNS = {
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
COMPONENT_CHARS = _ASCII_LETTERS | _ASCII_DIGITS | frozenset("._-")


def _skip_space(text, i):
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def letter_prefix_end(text):
    """Where ``_PATTERNS["letter_prefix"]`` matching at the start of ``text`` ends, or None."""
    i = _skip_space(text, 0)
    if i < len(text) and text[i] in _ASCII_LETTERS:
        i += 1
    elif i < len(text) and text[i] in _ASCII_DIGITS:
        i += 2 if text[i + 1 : i + 2] in _ASCII_DIGITS else 1
    else:
        return None
    i = _skip_space(text, i)
    if i < len(text) and text[i] in ").:]":
        return _skip_space(text, i + 1)
    return None


def slug_words(text):
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
# Questions: ids, labels, recommendations


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
        return m.group(1).lower(), js_trim(text[: m.start()] + text[m.end() :])
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
        if 1 <= k - j <= 64 and lower[k : k + 1] == ">":
            return lower[j:k], js_trim(text[:i] + text[k + 1 :])
        start = i + 1


def _utf16_key(s: str):
    return s.encode("utf-16-be", "surrogatepass")


def hash_question_id(text: str, labels, skill: str = "unknown") -> str:
    """``hook-`` + 10 hex of sha1("<skill>::<text>::<labels sorted as JS sorts, joined by |>")."""
    joined = "|".join(sorted(labels, key=_utf16_key))
    from toolkit.store.digest import sha1

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


def extract_answers(response, questions, _nested=False) -> tuple:
    """``([Answer per question], diagnostic or None)`` for a tool_response (every answer
    shape gstack's question-log-hook.ts reads, and those other hosts send).

    Shape D (native ``answers`` object keyed by question text, or by position), shape A
    (``answers`` array of objects, or of the chosen labels), shape B (``questions``
    array), and the ``User has answered your questions:`` text Claude Code returns to the
    model, alone, as JSON text, or in a list of content blocks (an MCP tool's result);
    anything else gives ``__unknown__`` for all.
    """
    n = len(questions)
    if not _truthy(response):
        return [Answer() for _ in range(n)], None
    if isinstance(response, dict):
        answers = response.get("answers")
        if isinstance(answers, dict):
            answers = _by_text(answers, questions)
            return _answers_object(answers, response.get("annotations"), questions), None
        if isinstance(answers, list):
            if answers and all(isinstance(a, (str, list)) for a in answers):
                by_text = {question_text(q): a for q, a in zip(questions, answers)}
                return _answers_object(by_text, None, questions), None
            return _answers_array(answers, n, ("option_label", "label", "choice", "answer")), None
        if isinstance(response.get("questions"), list):
            return _answers_array(
                response["questions"], n, ("user_answer", "answer", "choice")
            ), None
    if isinstance(response, list) and not _nested:
        blocks = [b.get("text") if isinstance(b, dict) else b for b in response]
        texts = [t for t in blocks if isinstance(t, str)]
        if texts:
            return extract_answers("\n".join(texts), questions, _nested=True)
    if isinstance(response, str):
        parsed = parse_answer_text(response, questions)
        if parsed:
            return _answers_object(parsed, None, questions), None
        if not _nested and response.lstrip()[:1] in ("{", "["):
            try:
                decoded = json_lite.loads(response)
            except (ValueError, RecursionError):
                decoded = None
            if isinstance(decoded, (dict, list)):
                return extract_answers(decoded, questions, _nested=True)
    diagnostic = (
        json_lite.dumps(response, ensure_ascii=False)[:300]
        if not isinstance(response, str)
        else response[:300]
    )
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


def _by_text(answers, questions):
    """Answers keyed by position (``{"0": …}``) as keyed by question text; others as given."""
    texts = [question_text(q) for q in questions]
    if any(t in answers for t in texts) or not all(str(i) in answers for i in range(len(texts))):
        return answers
    return {t: answers[str(i)] for i, t in enumerate(texts)}


def _choice_of(value):
    """An answer value's text: a mapping's label (or answer, choice), else the value."""
    if isinstance(value, dict):
        for key in ("label", "option_label", "answer", "choice"):
            if isinstance(value.get(key), str):
                return value[key]
    if isinstance(value, list):
        return [_choice_of(v) for v in value]
    return value


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
        value = _choice_of(answers[key])
        multi = isinstance(value, list)
        raw = ", ".join(value_string(v) for v in value) if multi else value_string(value)
        choice = normalize_choice(raw) or UNKNOWN_CHOICE
        free = None
        note = annotations.get(key)
        notes = note.get("notes") if isinstance(note, dict) else None
        if isinstance(notes, str) and notes:
            free = notes
        else:
            shown = {normalize_choice(lab).lower() for lab in labels_of(q)}
            if multi:
                picked = [normalize_choice(value_string(v)).lower() for v in value]
                if shown and any(p not in shown for p in picked):
                    free = raw  # an "Other" answer among the options, as in the joined text
            elif shown and choice.lower() not in shown:
                if q.get("multiSelect") is True and _all_shown(raw, shown):
                    multi = True  # several options, already joined (transcript text)
                else:
                    free = raw  # the user typed an "Other" answer
        out.append(Answer(choice, free, multi))
    return out


def _all_shown(raw, shown) -> bool:
    """Whether ``raw`` is several shown options joined by ", " (or by "," alone)."""
    for sep in (", ", ","):
        parts = [normalize_choice(p).lower() for p in raw.split(sep)]
        if len(parts) > 1 and all(p in shown for p in parts):
            return True
    return False


def parse_answer_text(text: str, questions) -> dict | None:
    """``{question text: answer}`` from ``User has answered your questions: "Q"="A", …``.

    The question texts are known from the call, so they anchor the split: an answer
    may itself contain quotes or commas.
    """
    start = text.find(ANSWERED_PREFIX)
    if start < 0:
        return None
    body = text[start + len(ANSWERED_PREFIX) :]
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
        segment = body[value_start : len(body) if last else anchors[k + 1][0]].rstrip()
        if not last:
            segment = segment.removesuffix(",").rstrip()
        answers[qtext] = segment.removesuffix('"')
    return answers or None
