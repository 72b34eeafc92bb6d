"""Rules about the repository's own files."""

import ast
import os
import re

from tests.helpers import REPO_ROOT

TESTS_DIR = os.path.join(REPO_ROOT, "tests")

# Folders that are not the project's own files: environments, caches, build output.
SKIPPED_DIRS = {"__pycache__", "node_modules", "build", "dist", "htmlcov", "site"}

# gstack's behaviour is described in words, or by naming gstack's own file; a citation of
# a private specification (its name, or its section numbers) means nothing to a reader of
# this repository. This file spells out examples, so it is the one file not scanned.
SPEC_CITATION = re.compile(r"SPEC-gstack|\bSPEC\s*(?:§|section\s*)?\d", re.IGNORECASE)


def repo_text_files():
    """``(relative path, text)`` of every text file of the repository."""
    for top, dirs, files in os.walk(REPO_ROOT):
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in SKIPPED_DIRS
            and not d.endswith(".egg-info")
            and (not d.startswith(".") or d == ".ci")
        )
        for name in sorted(files):
            path = os.path.join(top, name)
            try:
                if os.path.getsize(path) > 5_000_000:
                    continue
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError):
                continue  # binary files, sockets, unreadable files
            yield os.path.relpath(path, REPO_ROOT), text


def test_no_file_cites_the_private_gstack_specification():
    here = os.path.relpath(os.path.abspath(__file__), REPO_ROOT)
    found = [
        f"{path}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
        for path, text in repo_text_files()
        if path != here
        for m in SPEC_CITATION.finditer(text)
    ]
    assert found == []


def test_the_citation_rule_catches_what_it_is_meant_to():
    for cited in ("per SPEC-gstack.md 1.1", "(SPEC 7.2)", "SPEC 11 #24", "spec section 3"):
        assert SPEC_CITATION.search(cited), cited
    for fine in ("gstack's question-log-hook.ts", "specification", "SPECIAL 2"):
        assert not SPEC_CITATION.search(fine), fine
    scanned = {path for path, _ in repo_text_files()}
    for path in (
        "README.md",
        "Makefile",
        os.path.join(".ci", "run"),
        os.path.join("sql", "views", "inferred_profile.sql"),
    ):
        assert path in scanned, path


def forbidden_imports(source, package="tests"):
    """What ``source`` (code of a module in ``package``) imports of tests outside helpers."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the module's own package
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            if base == "tests":  # ``from tests import x`` imports the module tests.x
                found += [f"tests.{a.name}" for a in node.names]
            else:
                found.append(base)
    return [m for m in found if m.startswith("tests.") and m.split(".")[1] != "helpers"]


def test_no_test_module_imports_another():
    """Shared test code lives in tests/helpers (or in conftest fixtures): a test module, a
    helper or conftest may import tests.helpers and nothing else of tests."""
    wrong = []
    for top, dirs, files in os.walk(TESTS_DIR):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".")]
        package = os.path.relpath(top, REPO_ROOT).replace(os.sep, ".")
        for name in sorted(files):
            if name.endswith(".py"):
                with open(os.path.join(top, name), encoding="utf-8") as f:
                    source = f.read()
                wrong += [
                    f"{package}.{name[:-3]} imports {m}" for m in forbidden_imports(source, package)
                ]
    assert wrong == []


def test_the_import_rule_sees_every_way_of_importing():
    cases = {
        "from tests.test_views import EXPECTED": ["tests.test_views"],
        "from tests import test_views, helpers": ["tests.test_views"],
        "import tests.conftest": ["tests.conftest"],
        "from tests.conftest import script": ["tests.conftest"],
        "from .test_views import x": ["tests.test_views"],
        "from .. import test_views": ["tests.test_views"],
        "def f():\n    from tests.test_ingest import dump": ["tests.test_ingest"],
        "from tests.helpers.views import EXPECTED": [],
        "from tests.helpers import hotpath": [],
        "from . import hotpath": [],
    }
    for source, expected in cases.items():
        package = "tests.helpers" if source.startswith(("from ..", "from . import")) else "tests"
        assert forbidden_imports(source, package) == expected, source


def test_the_full_loop_names_only_tests_that_exist():
    """A renamed module or test named in tests/helpers/loops.py would slip back into the
    fast loop unnoticed."""
    from tests.helpers.loops import FULL_MODULES, FULL_TESTS

    missing = [m for m in FULL_MODULES if not os.path.exists(os.path.join(TESTS_DIR, m + ".py"))]
    for named in FULL_TESTS:
        module, _, test = named.partition("::")
        path = os.path.join(TESTS_DIR, module + ".py")
        if not os.path.exists(path) or f"def {test}(" not in open(path, encoding="utf-8").read():
            missing.append(named)
    assert missing == []
