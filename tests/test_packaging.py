"""The wheel is self-contained: what `pip install .` puts on disk runs without the source tree.

The wheel is built from a copy of the project (so stray outputs can be planted without
touching the checkout) and installed with ``pip --target`` into a temp folder; the scripts
it installs run with that folder first on the path, from a working directory outside the
checkout, so only the installed copy can answer.
"""

import ast
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tomllib
import zipfile

import pytest

from tests.helpers import BIN_DIR, REPO_ROOT, script
from toolkit.store.db import RENAMED_MIGRATIONS, SQUASHED_MIGRATIONS

PROJECT_FILES = ("pyproject.toml", "README.md", "datasette-metadata.json", "hatch_build.py")
PROJECT_DIRS = ("toolkit", "sql", "notebooks", "launchers")
CONSOLE_SCRIPTS = (
    "plantune",
    "gstack-question-log",
    "gstack-question-preference",
    "gstack-developer-profile",
    "gstack-builder-profile",
    "gstack-pacing-rank",
)


def _source_files(folder, suffix):
    out = []
    for dirpath, dirnames, names in os.walk(os.path.join(REPO_ROOT, folder)):
        dirnames[:] = [d for d in dirnames if d not in ("out", ".ipynb_checkpoints", "__pycache__")]
        out += [
            os.path.relpath(os.path.join(dirpath, n), REPO_ROOT)
            for n in names
            if n.endswith(suffix)
        ]
    return sorted(out)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory):
    """Build the wheel from a copy of the project that has notebook outputs lying around."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    for name in PROJECT_FILES:
        shutil.copy(os.path.join(REPO_ROOT, name), src / name)
    for name in PROJECT_DIRS:
        shutil.copytree(
            os.path.join(REPO_ROOT, name),
            src / name,
            ignore=shutil.ignore_patterns("__pycache__", "out", ".ipynb_checkpoints"),
        )
    (src / "notebooks" / "out").mkdir()
    (src / "notebooks" / "out" / "01_question_log_distributions.html").write_text("<p>old run</p>")
    (src / "notebooks" / ".ipynb_checkpoints").mkdir()
    (src / "notebooks" / ".ipynb_checkpoints" / "x-checkpoint.ipynb").write_text("{}")
    dist = work / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-q",
            "-w",
            str(dist),
            str(src),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    (path,) = dist.glob("plantune-*.whl")
    return path


@pytest.fixture(scope="session")
def installed(wheel, tmp_path_factory):
    """The wheel installed (its files only; dependencies come from this venv) into a folder."""
    target = tmp_path_factory.mktemp("installed") / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--disable-pip-version-check",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return target


def run_installed(site, *args, cwd, env=None, input=None):
    """Run a console script of the --target install, its own copy first on the path.

    A --target folder has no Python beside its scripts, so the launcher runs python3 from
    PATH: this venv's, as for a user who installed with it.
    """
    full = dict(
        os.environ, PYTHONPATH=str(site), PATH=BIN_DIR + os.pathsep + os.environ.get("PATH", "")
    )
    full.update(env or {})
    return subprocess.run(
        [str(site / "bin" / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full,
        input=input,
        timeout=120,
    )


def test_wheel_maps_schema_notebooks_and_metadata_into_the_package(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for rel in _source_files("sql", ".sql") + _source_files("notebooks", ".ipynb"):
        assert f"toolkit/{rel}" in names, rel
    assert "toolkit/datasette-metadata.json" in names
    assert "toolkit/data/registry.json" in names
    # Nothing outside the package, and no notebook outputs or checkpoints.
    tops = {n.split("/")[0] for n in names}
    assert tops == {"toolkit", "plantune-0.1.0.dist-info", "plantune-0.1.0.data"}, tops
    assert not [n for n in names if "/out/" in n or "checkpoint" in n]
    # Every console command is a copy of the launcher, installed as a script.
    with open(os.path.join(REPO_ROOT, "launchers", "plantune"), "rb") as f:
        launcher = f.read()
    for name in CONSOLE_SCRIPTS:
        script = zipfile.ZipFile(wheel).read(f"plantune-0.1.0.data/scripts/{name}")
        assert script == launcher, name


def test_installed_copy_finds_its_bundled_files_inside_the_package(installed, tmp_path):
    code = (
        "import importlib.resources, json, toolkit, toolkit.store.resources as r\n"
        "print(json.dumps({'pkg': toolkit.__file__, 'files': str(importlib.resources.files("
        "'toolkit')), 'dir': r.package_dir(), 'paths': [r.path(n) for n in r.BUNDLED]}))"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(installed)),
        check=True,
    )
    import json

    found = json.loads(r.stdout)
    pkg = str(installed / "toolkit")
    assert found["pkg"] == os.path.join(pkg, "__init__.py")
    assert found["files"] == found["dir"] == pkg
    assert found["paths"] == [
        os.path.join(pkg, n) for n in ("sql", "notebooks", "datasette-metadata.json")
    ]


def test_installed_copy_creates_a_complete_database(installed, tmp_path):
    db = tmp_path / "state" / "plantune.db"
    r = run_installed(installed, "plantune", "init", "--db", str(db), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Registry: 53 questions" in r.stdout
    conn = sqlite3.connect(db)
    migrations = [row[0] for row in conn.execute("SELECT name FROM plantune_migrations")]
    expected = sorted(os.path.basename(p) for p in _source_files("sql/migrations", ".sql"))
    # A renamed migration is recorded under its earlier name too, for earlier releases, and
    # a squash under the names of its parts.
    parts = [p for ps in SQUASHED_MIGRATIONS.values() for p in ps]
    assert sorted(migrations) == sorted(expected + list(RENAMED_MIGRATIONS) + parts)
    views = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view'")}
    assert views == {os.path.basename(p)[:-4] for p in _source_files("sql/views", ".sql")}
    r = run_installed(
        installed,
        "gstack-question-preference",
        "--check",
        "ship-todos-create",
        cwd=tmp_path,
        env={"PLANTUNE_DB": str(db), "GSTACK_PROJECT_SLUG": "p"},
    )
    assert (r.returncode, r.stdout.strip()) == (0, "ASK_NORMALLY"), r.stderr


@pytest.mark.parametrize("damage", ["missing", "empty"])
def test_a_missing_migrations_folder_is_an_error_and_creates_nothing(installed, tmp_path, damage):
    broken = tmp_path / "site"
    shutil.copytree(installed, broken, symlinks=True)
    migrations = broken / "toolkit" / "sql" / "migrations"
    shutil.rmtree(migrations)
    if damage == "empty":
        migrations.mkdir()
    db = tmp_path / "fresh" / "plantune.db"
    r = run_installed(broken, "plantune", "init", "--db", str(db), cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [r.stderr.strip()]
    assert str(migrations) in r.stderr
    assert "this plantune installation is incomplete; reinstall it" in r.stderr
    assert "Traceback" not in r.stderr
    assert not db.exists() and not db.parent.exists()


def test_a_missing_notebook_folder_or_metadata_is_a_clear_error(installed, tmp_path):
    broken = tmp_path / "site"
    shutil.copytree(installed, broken, symlinks=True)
    shutil.rmtree(broken / "toolkit" / "notebooks")
    os.unlink(broken / "toolkit" / "datasette-metadata.json")
    db = tmp_path / "plantune.db"
    assert run_installed(broken, "plantune", "init", "--db", str(db), cwd=tmp_path).returncode == 0
    r = run_installed(broken, "plantune", "notebooks", "run", "--db", str(db), cwd=tmp_path)
    assert r.returncode == 1
    assert "notebooks folder not found at" in r.stderr and "reinstall" in r.stderr
    r = run_installed(broken, "plantune", "serve", "--db", str(db), "--port", "0", cwd=tmp_path)
    assert r.returncode == 1
    assert "Datasette metadata not found at" in r.stderr and "reinstall" in r.stderr


# Declared dependencies that are used without an import statement in plantune's code.
USED_WITHOUT_IMPORT = {
    "datasette-vega": "a Datasette plugin: Datasette loads it through its entry point",
    "ipykernel": "the python3 kernel that nbclient starts to run the notebooks",
}
IMPORT_NAMES = {"nbformat": "nbformat", "nbclient": "nbclient"}


def _code_sources():
    import json

    for rel in _source_files("toolkit", ".py"):
        yield open(os.path.join(REPO_ROOT, rel), encoding="utf-8").read()
    for rel in _source_files("notebooks", ".ipynb"):
        with open(os.path.join(REPO_ROOT, rel), encoding="utf-8") as f:
            cells = json.load(f)["cells"]
        for cell in cells:
            if cell["cell_type"] == "code":
                yield "".join(cell["source"])


def _imported_modules():
    """Top-level modules imported by plantune's code and by the notebooks it runs."""
    names = set()
    for text in _code_sources():
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names


def test_every_declared_dependency_is_used():
    with open(os.path.join(REPO_ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    imported = _imported_modules()
    for requirement in project["dependencies"]:
        dist = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower()
        module = IMPORT_NAMES.get(dist, dist.replace("-", "_"))
        assert module in imported or dist in USED_WITHOUT_IMPORT, (
            f"{dist} is declared but never imported"
        )
    assert not any(r.startswith("sqlite-utils") for r in project["dependencies"])


def test_console_scripts_under_test_are_the_installation_asked_for():
    """With PLANTUNE_TEST_BIN (CI's non-editable install) the scripts must not run this checkout."""
    r = subprocess.run(
        [script("python"), "-c", "import toolkit; print(toolkit.__file__)"],
        capture_output=True,
        text=True,
        cwd=os.path.expanduser("~"),
        check=True,
    )
    location = os.path.realpath(r.stdout.strip())
    if os.environ.get("PLANTUNE_TEST_BIN"):
        assert not location.startswith(os.path.realpath(REPO_ROOT) + os.sep), location
        assert os.path.realpath(BIN_DIR) != os.path.realpath(os.path.dirname(sys.executable))
    else:
        assert location == os.path.join(os.path.realpath(REPO_ROOT), "toolkit", "__init__.py")


def test_the_wheel_ships_the_stamp_of_its_own_schema(installed, tmp_path):
    from toolkit.store import db as store_db

    sql = installed / "toolkit" / "sql"
    shipped = int((sql / store_db.STAMP_FILE).read_text())
    computed = store_db.Schema(
        str(sql / "migrations"), str(sql / "views"), rollups_dir=str(sql / "rollups")
    ).stamp
    assert shipped == computed
    db = tmp_path / "plantune.db"
    r = run_installed(installed, "plantune", "init", "--db", str(db), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == shipped


def test_an_editable_install_ships_no_stamp():
    assert not os.path.exists(os.path.join(REPO_ROOT, "sql", "schema-stamp"))
    assert not os.path.exists(os.path.join(REPO_ROOT, "toolkit", "sql"))
