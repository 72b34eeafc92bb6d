"""The package's import rules: each room imports only the rooms below it, heavy libraries
stay in analysis, no module imports itself back through another, and no module takes a
private name (``_x``) from another.

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


def _resolved(name, is_package, node):
    """The module a ``from`` statement names, relative ones resolved against ``name``."""
    if node.level == 0:
        return node.module
    parts = name.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def module_graph(sources):
    """``{module: {imported module: line}}`` for ``sources`` (``{name: (is package, code)}``),
    from every import statement at any depth (inside functions, classes, ``if``s too)."""
    graph = {name: {} for name in sources}
    for name, (is_package, code) in sources.items():
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolved(name, is_package, node)
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                if target in sources and target != name:
                    graph[name].setdefault(target, node.lineno)
    return graph


def circles(graph, exempt=()):
    """Each import circle as ``a -> b -> a``, leaving out the imports of ``exempt`` modules."""
    graph = {m: ({} if m in exempt else deps) for m, deps in graph.items()}
    found, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        for dep in sorted(graph[node]):
            if state.get(dep) == "open":
                found.append(" -> ".join(stack[stack.index(dep) :] + [dep]))
            elif dep not in state:
                visit(dep, stack + [dep])
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    return found


def private_imports(sources, exempt=()):
    """``module:line name`` for each private name (``_x``, not ``__x__``) one module takes
    from another of ``sources``: ``from m import _x``, or ``m._x`` on a module it imported.
    A module's own package ``__init__`` is another module too."""

    def private(n):
        return n.startswith("_") and not (n.startswith("__") and n.endswith("__"))

    found = []
    for name, (is_package, code) in sources.items():
        if name in exempt:
            continue
        aliases = {}
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in sources:
                        aliases[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.ImportFrom):
                base = _resolved(name, is_package, node)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in sources:
                        aliases[alias.asname or alias.name] = full
                    if (base in sources or full in sources) and private(alias.name):
                        found.append(f"{name}:{node.lineno} {full}")
        for node in ast.walk(ast.parse(code)):
            if (
                isinstance(node, ast.Attribute)
                and private(node.attr)
                and isinstance(node.value, ast.Name)
                and aliases.get(node.value.id, name) != name
            ):
                found.append(f"{name}:{node.lineno} {aliases[node.value.id]}.{node.attr}")
    return found


def _sources():
    out = {}
    for folder, _, names in os.walk(PACKAGE):
        for n in names:
            if n.endswith(".py"):
                path = os.path.join(folder, n)
                rel = os.path.relpath(path, REPO_ROOT)[:-3].split(os.sep)
                is_package = rel[-1] == "__init__"
                with open(path, encoding="utf-8") as f:
                    out[".".join(rel[:-1] if is_package else rel)] = (is_package, f.read())
    return out


SOURCES = _sources()


def test_no_import_circles_between_modules():
    # Every import counts, the lazy ones inside functions too: a circle of lazy imports
    # still means neither module can be read (or changed) without the other.
    assert circles(module_graph(SOURCES)) == []


def test_no_private_name_is_imported_from_another_module():
    # A name that starts with "_" is the module's own business; one that another module
    # needs is part of its interface and has a public name.
    assert private_imports(SOURCES) == []


def test_the_import_rules_see_every_way_of_importing():
    sources = {
        "pkg": (True, '"""A package."""\n'),
        "pkg.a": (False, "def f():\n    from . import b\n    return b._hidden\n"),
        "pkg.b": (False, "def g():\n    from .a import _inner, __doc__\n"),
        "pkg.c": (False, "import pkg.a as a\nfrom pkg import _x\nimport os\nos._exit\n"),
    }
    assert circles(module_graph(sources)) == ["pkg.a -> pkg.b -> pkg.a"]
    assert circles(module_graph(sources), exempt={"pkg.b"}) == []
    assert sorted(private_imports(sources)) == [
        "pkg.a:3 pkg.b._hidden",
        "pkg.b:2 pkg.a._inner",
        "pkg.c:2 pkg._x",
    ]
    assert private_imports(sources, exempt={"pkg.a", "pkg.b"}) == ["pkg.c:2 pkg._x"]


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
