"""Units stay small enough to read: no function over 120 lines, and a warning (not a
failure) for a module over 1,500. Modules are split by interface, not by length: the rules
that hold them apart are in tests/test_import_rules.py (no circles, no private names)."""

import ast
import os
import warnings

from tests.helpers import REPO_ROOT

MODULE_LINES = 1500
FUNCTION_LINES = 120


def _sources():
    for folder, _, names in os.walk(os.path.join(REPO_ROOT, "toolkit")):
        for n in sorted(names):
            if n.endswith(".py"):
                path = os.path.join(folder, n)
                with open(path, encoding="utf-8") as f:
                    yield os.path.relpath(path, REPO_ROOT), f.read()


def test_a_very_long_module_is_worth_a_second_look():
    for path, text in _sources():
        if len(text.splitlines()) > MODULE_LINES:
            warnings.warn(f"{path} has {len(text.splitlines())} lines: is it one concern?")


def test_no_function_is_longer_than_120_lines():
    long = []
    for path, text in _sources():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = node.end_lineno - node.lineno + 1
                if size > FUNCTION_LINES:
                    long.append(f"{path}:{node.lineno} {node.name} ({size} lines)")
    assert long == []
