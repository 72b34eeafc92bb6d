"""Units stay small enough to read: no module over 800 lines, no function over 120."""

import ast
import os

from tests.helpers import REPO_ROOT

MODULE_LINES = 800
FUNCTION_LINES = 120


def _sources():
    for folder, _, names in os.walk(os.path.join(REPO_ROOT, "toolkit")):
        for n in sorted(names):
            if n.endswith(".py"):
                path = os.path.join(folder, n)
                with open(path, encoding="utf-8") as f:
                    yield os.path.relpath(path, REPO_ROOT), f.read()


def test_no_module_is_longer_than_800_lines():
    long = {
        path: len(text.splitlines())
        for path, text in _sources()
        if len(text.splitlines()) > MODULE_LINES
    }
    assert long == {}


def test_no_function_is_longer_than_120_lines():
    long = []
    for path, text in _sources():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = node.end_lineno - node.lineno + 1
                if size > FUNCTION_LINES:
                    long.append(f"{path}:{node.lineno} {node.name} ({size} lines)")
    assert long == []
