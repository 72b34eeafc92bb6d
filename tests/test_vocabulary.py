"""One vocabulary: the shared words are defined in toolkit/core/vocabulary.py only."""

import ast
import os

from tests.helpers import REPO_ROOT
from toolkit.core import vocabulary

SHARED = {
    name: value
    for name, value in vars(vocabulary).items()
    if name.isupper() and isinstance(value, tuple)
}


def _literal(node):
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None
    return tuple(value) if isinstance(value, (tuple, list, frozenset, set)) else None


def test_no_module_spells_out_a_shared_word_list():
    here = os.path.join(REPO_ROOT, "toolkit")
    copies = []
    for folder, _, names in os.walk(here):
        for n in names:
            if not n.endswith(".py") or n == "vocabulary.py":
                continue
            tree = ast.parse(open(os.path.join(folder, n), encoding="utf-8").read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign):
                    value = _literal(node.value)
                    if value is None and isinstance(node.value, ast.Call) and node.value.args:
                        value = _literal(node.value.args[0])  # frozenset((...))
                    for name, shared in SHARED.items():
                        if value is not None and len(value) > 1 and value == shared:
                            copies.append(f"{n}:{node.lineno} copies {name}")
    assert copies == []


def test_the_phase_lists_nest():
    assert vocabulary.PHASES[: len(vocabulary.FINDING_PHASES)] == vocabulary.FINDING_PHASES
    assert vocabulary.FINDING_PHASES[:4] == vocabulary.REVIEW_PHASES
    assert set(vocabulary.SILENCING_PREFERENCES) < set(vocabulary.PREFERENCES)
    assert set(vocabulary.GATE_KINDS) < set(vocabulary.FINDING_KINDS)


def test_the_id_rule():
    assert vocabulary.is_kebab("ship-changelog-voice-polish")
    for bad in ("", "Ship", "a_b", "a b", "a\n", None, 5, "é"):
        assert not vocabulary.is_kebab(bad)
