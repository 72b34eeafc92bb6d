"""One-way door classifier: is this question too hard to undo to auto-decide?

Hot path: stdlib only, patterns compiled at import, the bundled registry read
lazily once per process.

Order (gstack scripts/one-way-doors.ts): a registered id decides alone, even
against a destructive-sounding summary; then the skill:category pairs; then the
keyword net over the summary; otherwise two-way.
"""

from __future__ import annotations

import os
from collections import namedtuple

from .screening import LazyPatterns, js_space_fold

__all__ = [
    "Classification",
    "DESTRUCTIVE_PATTERNS",
    "DESTRUCTIVE_PATTERN_SOURCES",
    "SKILL_CATEGORY_ONE_WAY",
    "REGISTRY_PATH",
    "classify",
    "is_one_way",
    "load_bundled_registry",
    "bundled_door_types",
]

_CREDS = r"(api key|token|secret|credential|access key|password)s?\b"

# Tested in this order; the first hit is reported, so "kubectl delete" is
# reported as \bdelete\b.  Quirks kept on purpose (JS semantics): "checkout -- f"
# and "restore ." do not match (no word boundary after them), "clean -fd" and
# "schema migrations" do not match, "branch -d" matches like "-D" under /i.
DESTRUCTIVE_PATTERN_SOURCES = (
    # file system
    r"\brm\s+-rf\b",
    r"\bdelete\b",
    r"\bremove\s+(directory|folder|files?)\b",
    r"\bwipe\b",
    r"\bpurge\b",
    r"\btruncate\b",
    # database
    r"\bdrop\s+(table|database|schema|index|column)\b",
    r"\bdelete\s+from\b",
    # git / vcs
    r"\bforce[- ]push\b",
    r"\bpush\s+--force\b",
    r"\bgit\s+reset\s+--hard\b",
    r"\bcheckout\s+--\b",
    r"\brestore\s+\.\b",
    r"\bclean\s+-f\b",
    r"\bbranch\s+-D\b",
    # deploy / infra
    r"\bkubectl\s+delete\b",
    r"\bterraform\s+destroy\b",
    r"\brollback\b",
    # credentials
    r"\brevoke\s+[\w\s]*\b" + _CREDS,
    r"\breset\s+[\w\s]*\b" + _CREDS,
    r"\brotate\s+[\w\s]*\b" + _CREDS,
    # architecture forks
    r"\barchitectur(e|al)\s+(change|fork|shift|decision)\b",
    r"\bdata\s+model\s+change\b",
    r"\bschema\s+migration\b",
    r"\bbreaking\s+change\b",
)

# Compiled one by one, only when a summary contains a pattern's leading word.
_DESTRUCTIVE = LazyPatterns(DESTRUCTIVE_PATTERN_SOURCES)
_JS_FORMS = tuple("/" + s + "/i" for s in DESTRUCTIVE_PATTERN_SOURCES)


def __getattr__(name):
    # DESTRUCTIVE_PATTERNS: (compiled pattern, JS string form reported as `matched`)
    # pairs. Built on first access, so a classification never pays for all 25 compiles.
    if name == "DESTRUCTIVE_PATTERNS":
        return tuple(zip(_DESTRUCTIVE, _JS_FORMS))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

SKILL_CATEGORY_ONE_WAY = frozenset({"cso:approval", "land-and-deploy:approval"})

REGISTRY_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "registry.json")

_bundled_entries: list | None = None
_bundled_doors: dict | None = None


# reason: "registry" | "skill-category" | "keyword" | "default-two-way";
# matched: the JS form of the first matching pattern (keyword only).
# (collections.namedtuple, not typing.NamedTuple: importing typing costs ~3 ms.)
Classification = namedtuple("Classification", "one_way reason matched", defaults=(None,))


def load_bundled_registry() -> list:
    """The 53 bundled question definitions (cached; treat as read-only)."""
    global _bundled_entries
    if _bundled_entries is None:
        import json

        with open(REGISTRY_PATH, encoding="utf-8") as fh:
            _bundled_entries = json.load(fh)
    return _bundled_entries


def bundled_door_types() -> dict:
    """``{question_id: door_type}`` for the bundled registry (cached; read-only)."""
    global _bundled_doors
    if _bundled_doors is None:
        _bundled_doors = {e["id"]: e["door_type"] for e in load_bundled_registry()}
    return _bundled_doors


def _door_of(registry, question_id: str):
    door = registry.get(question_id)
    if not isinstance(door, str) and hasattr(door, "get"):
        door = door.get("door_type")  # tolerate {id: entry} as well as {id: door_type}
    return door


def classify(
    question_id: str | None = None,
    skill: str | None = None,
    category: str | None = None,
    summary: str | None = None,
    registry=None,
) -> Classification:
    """Classify a question; ``registry`` maps id -> door_type (bundled when None)."""
    if question_id and isinstance(question_id, str):
        if registry is None:
            registry = bundled_door_types()
        if question_id in registry:
            return Classification(_door_of(registry, question_id) == "one-way", "registry")
    if skill and category and f"{skill}:{category}" in SKILL_CATEGORY_ONE_WAY:
        return Classification(True, "skill-category")
    if summary and isinstance(summary, str):
        i = _DESTRUCTIVE.first_index(js_space_fold(summary))
        if i is not None:
            return Classification(True, "keyword", _JS_FORMS[i])
    return Classification(False, "default-two-way")


def is_one_way(
    question_id: str | None = None,
    skill: str | None = None,
    category: str | None = None,
    summary: str | None = None,
    registry=None,
) -> bool:
    return classify(question_id, skill, category, summary, registry).one_way
