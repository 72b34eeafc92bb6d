"""The contributor commands: `make demo` shows its steps and where everything ends up,
`make venv` shows pip's progress, `make notebooks` starts JupyterLab as root too."""

import os
import re
import shutil
import subprocess

import pytest

from tests.helpers import REPO_ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def make(*args, env=None, timeout=60):
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(_outside_make(), **(env or {})),
    )


def _outside_make():
    """The environment without what an enclosing make passes down (``make test-full``
    runs these tests with ``TEST_MARK=`` on its command line, which MAKEFLAGS carries)."""
    return {
        k: v
        for k, v in os.environ.items()
        if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "TEST_MARK")
    }


def test_building_the_venv_shows_pip_progress():
    r = make("-n", "-B", "venv")
    assert r.returncode == 0, r.stderr
    pip_lines = [line for line in r.stdout.splitlines() if "pip install" in line]
    assert pip_lines and all("--quiet" not in line and " -q" not in line for line in pip_lines)
    assert "== Building .venv" in r.stdout


def test_make_notebooks_passes_allow_root_only_for_root():
    r = make("-n", "notebooks", "NOTEBOOK_DB=/tmp/x.db")
    assert r.returncode == 0, r.stderr
    (line,) = [line for line in r.stdout.splitlines() if "jupyter lab" in line]
    assert ("--allow-root" in line) == (os.geteuid() == 0)
    assert line.rstrip().endswith("notebooks/")


@pytest.mark.slow(reason="runs the whole demo")
@pytest.mark.skipif(
    not os.path.exists(os.path.join(REPO_ROOT, ".venv", ".installed")),
    reason="make demo runs from the checkout's .venv",
)
def test_make_demo_prints_each_step_and_where_everything_is(tmp_path):
    root = tmp_path / "demo root"
    r = make("demo", f"DEMO_ROOT={root}", "DEMO_SERVE=0", "DEMO_DAYS=20", timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    steps = re.findall(r"^== (\d)/5 ", r.stdout, re.M)
    assert steps == ["1", "2", "3", "4", "5"]
    tail = r.stdout.splitlines()[-3:]
    assert tail == [
        f"   database:  {root}/plantune.db",
        f"   notebooks: {root}/notebooks (open the .html files in a browser)",
        f"   server:    not started (DEMO_SERVE=0); make serve DB='{root}/plantune.db' starts it "
        "on port 8001",
    ]
    assert (root / "plantune.db").exists()
    assert sorted(p.suffix for p in (root / "notebooks").iterdir()) == [
        ".html",
        ".html",
        ".ipynb",
        ".ipynb",
    ]


@pytest.mark.skipif(
    not os.path.exists(os.path.join(REPO_ROOT, ".venv", ".installed")),
    reason="make notebooks-run runs from the checkout's .venv",
)
def test_the_readme_notebooks_run_example_works_on_the_demo_database(tmp_path):
    from tests.helpers import script

    root = tmp_path / "demo"
    db = root / "plantune.db"
    home = tmp_path / "home"  # the isolated HOME, which has no .gstack
    env = {k: v for k, v in os.environ.items() if k not in ("GSTACK_STATE_ROOT", "GSTACK_HOME")}
    env.update(HOME=str(home), PLANTUNE_DB=str(db))
    for args in (["init", "--demo"], ["simulate", "--days", "20", "--seed", "7"]):
        subprocess.run([script("plantune"), *args], env=env, check=True, capture_output=True)
    env.pop("PLANTUNE_DB")
    # As the README writes it, on the demo database (NOTEBOOK_DB's default is the demo's).
    r = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "notebooks-run",
            f"NOTEBOOK_DB={db}",
            "NOTEBOOK_PARAMS=project=acme-storefront target=0.3",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    written = sorted((root / "notebooks").iterdir())
    assert sorted(p.suffix for p in written) == [".html", ".html", ".ipynb", ".ipynb"]
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in written), [
        oct(p.stat().st_mode) for p in written
    ]
    assert not (home / ".gstack").exists()  # nothing went to the state root


def test_make_test_leaves_out_the_full_tests_and_make_test_full_runs_them():
    fast = make("-n", "test")
    assert fast.returncode == 0, fast.stderr
    assert [line for line in fast.stdout.splitlines() if line.endswith("ruff check .")]
    assert '-m pytest -m "not full"' in fast.stdout
    full = make("-n", "test-full")
    assert full.returncode == 0, full.stderr
    assert "PLANTUNE_SLOW=1" in full.stdout and '-m pytest -m ""' in full.stdout


def test_make_docs_regenerates_the_reference_pages_and_builds_strictly():
    r = make("-n", "docs")
    assert r.returncode == 0, r.stderr
    assert "cog -r docs/cli.md docs/schema.md" in r.stdout
    assert "mkdocs build --strict" in r.stdout
