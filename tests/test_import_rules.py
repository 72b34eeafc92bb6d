"""The package's import rules: each room imports only the rooms below it, heavy libraries
stay in analysis, and no module imports itself back through another.

Every ``import`` statement counts, including the ones inside functions (the lazy imports
that keep the hot path lean are still dependencies).
"""

import ast
import os

from tests.helpers import REPO_ROOT

PACKAGE = os.path.join(REPO_ROOT, "toolkit")

# Room -> the rooms it may import. Storage at the bottom, the rules above it, gstack's file
# protocol above those, the hooks, pacing and guidance beside each other, analysis above
# pacing, the command line on top.
ALLOWED = {
    "store": set(),
    "core": {"store"},
    "gstack": {"store", "core"},
    "claude": {"store", "core", "gstack"},
    "pacing": {"store", "core", "gstack"},
    "guidance": {"store", "core", "gstack"},
    "analysis": {"store", "core", "gstack", "pacing"},
    "cli": {"store", "core", "gstack", "claude", "pacing", "guidance", "analysis"},
}
# The package's own top-level parts: launch.py starts the command line.
TOP_LEVEL = {
    "__init__": set(),
    "launch": {"cli"},
}
HEAVY = {
    "numpy",
    "pandas",
    "datasette",
    "nbclient",
    "nbformat",
    "matplotlib",
    "duckdb",
    "pyarrow",
    "pyspark",
    "uvicorn",
    "papermill",
}
CLICK_ROOMS = {"cli"}


def _modules():
    """``{dotted name: (room, ast tree)}`` for every module of the package."""
    out = {}
    for folder, _, names in os.walk(PACKAGE):
        for n in names:
            if not n.endswith(".py"):
                continue
            path = os.path.join(folder, n)
            rel = os.path.relpath(path, REPO_ROOT)[:-3].split(os.sep)
            if rel[-1] == "__init__":
                rel = rel[:-1]
            name = ".".join(rel)
            # toolkit/__init__.py, a top-level module (launch), or a room's module
            room = rel[1] if len(rel) > 1 else "__init__"
            with open(path, encoding="utf-8") as f:
                out[name] = (room, ast.parse(f.read()))
    return out


def _imports(tree):
    """Every module an import statement names (``from a import b`` names ``a`` and ``a.b``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative imports: use absolute ones"
            yield node, node.module
            for alias in node.names:
                yield node, f"{node.module}.{alias.name}"


MODULES = _modules()


def test_every_module_sits_in_a_known_room():
    rooms = {room for room, _ in MODULES.values()}
    assert rooms <= set(ALLOWED) | set(TOP_LEVEL), rooms - set(ALLOWED) - set(TOP_LEVEL)


def test_each_room_imports_only_the_rooms_below_it():
    wrong = []
    for name, (room, tree) in MODULES.items():
        allowed = ALLOWED.get(room, TOP_LEVEL.get(room, set()))
        for node, target in _imports(tree):
            parts = target.split(".")
            if parts[0] != "toolkit" or len(parts) < 2:
                continue
            other = parts[1]
            if other in ALLOWED and other != room and other not in allowed:
                wrong.append(f"{name}:{node.lineno} imports {target}")
    assert wrong == []


def test_store_uses_the_standard_library_only():
    import sys

    outside = []
    for name, (room, tree) in MODULES.items():
        if room != "store":
            continue
        for node, target in _imports(tree):
            top = target.split(".")[0]
            if top != "toolkit" and top not in sys.stdlib_module_names:
                outside.append(f"{name}:{node.lineno} imports {target}")
    assert outside == []


def test_heavy_libraries_only_in_analysis_and_click_only_in_the_command_line():
    wrong = []
    for name, (room, tree) in MODULES.items():
        for node, target in _imports(tree):
            top = target.split(".")[0]
            if top in HEAVY and room != "analysis":
                wrong.append(f"{name}:{node.lineno} imports {target}")
            if top == "click" and room not in CLICK_ROOMS:
                wrong.append(f"{name}:{node.lineno} imports {target}")
    assert wrong == []


def test_no_import_circles_between_modules():
    # Module-level imports only: a cycle there breaks (or silently depends on) import order.
    graph = {}
    for name, (_, tree) in MODULES.items():
        deps = set()
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for _, target in _imports(node):
                    if target in MODULES and target != name:
                        deps.add(target)
        graph[name] = deps
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        for dep in sorted(graph[node]):
            if state.get(dep) == "open":
                cycles.append(stack[stack.index(dep) :] + [dep])
            elif dep not in state:
                visit(dep, stack + [dep])
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_no_circles_between_rooms():
    # With every import counted (lazy ones too), the rooms form a one-way graph.
    edges = {room: set() for room in ALLOWED}
    for name, (room, tree) in MODULES.items():
        if room not in ALLOWED:
            continue
        for _, target in _imports(tree):
            parts = target.split(".")
            if (
                parts[0] == "toolkit"
                and len(parts) > 1
                and parts[1] in ALLOWED
                and parts[1] != room
            ):
                edges[room].add(parts[1])
    for room, deps in edges.items():
        for dep in deps:
            assert room not in edges[dep], (room, dep)
