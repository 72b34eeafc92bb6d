"""The console commands start Python isolated and without site, under every install kind.

Each test installs plantune for real (pip into a venv, pip editable, pipx, uv tool) into a
throwaway folder and runs the installed commands. A sitecustomize module placed in the
install's site-packages writes a marker file whenever ``site`` runs: the launcher's fast
start must not write it, and its fallback (the normal start, taken when PYTHONPATH is
set) must. Dependencies are left out (--no-deps, or a copy of the wheel without them for pipx and
uv): the hot commands need the standard library only.
"""

import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow(reason="installs plantune into new environments")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)
PYVER = "python%d.%d" % sys.version_info[:2]
COMMANDS = (
    "plantune",
    "gstack-question-log",
    "gstack-question-preference",
    "gstack-developer-profile",
    "gstack-builder-profile",
    "gstack-pacing-rank",
)
SITECUSTOMIZE = (
    "import os\n"
    "if os.environ.get('SITE_MARKER'):\n"
    "    open(os.environ['SITE_MARKER'], 'a').close()\n"
)


def _run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, **kw)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    r = _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", ROOT, "-w", str(out)])
    assert r.returncode == 0, r.stderr
    (name,) = [n for n in os.listdir(out) if n.endswith(".whl")]
    return str(out / name)


@pytest.fixture(scope="module")
def bare_wheel(wheel, tmp_path_factory):
    """The wheel without its Requires-Dist lines, for installers that have no --no-deps
    (pipx reads every dependency's metadata, uv tool resolves them all)."""
    import base64
    import hashlib
    import zipfile

    out = tmp_path_factory.mktemp("bare") / os.path.basename(wheel)
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        names = src.namelist()
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        record = next(n for n in names if n.endswith(".dist-info/RECORD"))
        text = src.read(metadata).decode()
        text = "".join(
            line for line in text.splitlines(keepends=True) if not line.startswith("Requires-Dist:")
        )
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        for name in names:
            if name == metadata:
                dst.writestr(src.getinfo(name), data)
            elif name == record:
                rows = [
                    f"{metadata},sha256={digest},{len(data)}" if r.startswith(metadata + ",") else r
                    for r in src.read(name).decode().splitlines()
                ]
                dst.writestr(src.getinfo(name), "\n".join(rows) + "\n")
            else:
                dst.writestr(src.getinfo(name), src.read(name))
    return str(out)


def _venv(path):
    r = _run([sys.executable, "-m", "venv", "--without-pip", str(path)])
    assert r.returncode == 0, r.stderr
    return str(path / "bin" / "python")


def _pip_into(python, *args):
    r = _run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", *args]
    )
    assert r.returncode == 0, r.stderr


def _check_commands(bin_dir, site_packages, tmp_path):
    """Every command is installed; it runs without site, and with site under PYTHONPATH."""
    with open(os.path.join(site_packages, "sitecustomize.py"), "w") as f:
        f.write(SITECUSTOMIZE)
    for name in COMMANDS:
        assert os.access(os.path.join(bin_dir, name), os.X_OK), name
    marker = tmp_path / "site-ran"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "SITE_MARKER": str(marker),
        "GSTACK_STATE_ROOT": str(tmp_path / "state"),
    }
    pref = os.path.join(bin_dir, "gstack-question-preference")
    fast = _run([pref, "--help"], env=env)
    assert fast.returncode == 0, fast.stderr
    assert fast.stdout.startswith("Usage: gstack-question-preference")
    hook = _run([os.path.join(bin_dir, "plantune"), "hook", "pre-tool-use"], env=env, input="")
    assert hook.returncode == 0 and hook.stdout == ""
    assert not marker.exists(), "the launcher ran site"
    slow = _run([pref, "--help"], env=dict(env, PYTHONPATH=str(tmp_path / "nothing")))
    assert slow.returncode == 0 and slow.stdout == fast.stdout
    assert marker.exists(), "PYTHONPATH set: the normal start (with site) was expected"


def test_pip_install_into_a_venv(wheel, tmp_path):
    python = _venv(tmp_path / "venv")
    _pip_into(python, wheel)
    _check_commands(
        str(tmp_path / "venv" / "bin"),
        str(tmp_path / "venv" / "lib" / PYVER / "site-packages"),
        tmp_path,
    )


def test_editable_install(tmp_path):
    python = _venv(tmp_path / "venv")
    _pip_into(python, "-e", ROOT)
    site_packages = str(tmp_path / "venv" / "lib" / PYVER / "site-packages")
    # The package is found through the .pth file that names the source folder.
    assert not os.path.isfile(os.path.join(site_packages, "toolkit", "__init__.py"))
    _check_commands(str(tmp_path / "venv" / "bin"), site_packages, tmp_path)


def test_pipx_install(bare_wheel, tmp_path):
    pipx = os.path.join(BIN, "pipx")
    if not os.access(pipx, os.X_OK):
        pytest.skip("pipx is not installed (pip install -e '.[test]' installs it)")
    env = dict(
        os.environ,
        PIPX_HOME=str(tmp_path / "pipx"),
        PIPX_BIN_DIR=str(tmp_path / "bin"),
        PIPX_MAN_DIR=str(tmp_path / "man"),
    )
    r = _run([pipx, "install", "--python", sys.executable, bare_wheel], env=env)
    assert r.returncode == 0, r.stderr
    _check_commands(
        str(tmp_path / "bin"),
        str(tmp_path / "pipx" / "venvs" / "plantune" / "lib" / PYVER / "site-packages"),
        tmp_path,
    )


def test_uv_tool_install(bare_wheel, tmp_path):
    uv = os.path.join(BIN, "uv")
    if not os.access(uv, os.X_OK):
        pytest.skip("uv is not installed (pip install -e '.[test]' installs it)")
    env = dict(
        os.environ,
        UV_TOOL_DIR=str(tmp_path / "tools"),
        UV_TOOL_BIN_DIR=str(tmp_path / "bin"),
        UV_CACHE_DIR=str(tmp_path / "cache"),
        UV_PYTHON_DOWNLOADS="never",
    )
    r = _run([uv, "tool", "install", "--offline", "--python", sys.executable, bare_wheel], env=env)
    assert r.returncode == 0, r.stderr
    _check_commands(
        str(tmp_path / "bin"),
        str(tmp_path / "tools" / "plantune" / "lib" / PYVER / "site-packages"),
        tmp_path,
    )


def test_launcher_outside_any_venv_uses_python3_from_path(tmp_path):
    """A copy with no Python beside it runs with python3's normal start (or fails clearly)."""
    launcher = tmp_path / "gstack-question-preference"
    shutil.copy(os.path.join(ROOT, "launchers", "plantune"), launcher)
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(tmp_path)}
    r = _run([str(launcher), "--help"], env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Usage: gstack-question-preference")
