import os
import sys

import pytest

# The console scripts the subprocess tests run. PLANTUNE_TEST_BIN points them at another
# installation: CI installs the built wheel (not editable) into a clean venv and runs the
# compat tests against its bin folder, so what users install is what gets tested.
BIN_DIR = os.environ.get("PLANTUNE_TEST_BIN") or os.path.dirname(sys.executable)
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    """Point every state root, the database and HOME at tmp so no test touches a real home."""
    home = tmp_path / "home"
    root = tmp_path / "state"
    home.mkdir()
    root.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GSTACK_STATE_ROOT", str(root))
    monkeypatch.setenv("GSTACK_HOME", str(root))
    monkeypatch.setenv("PLANTUNE_DB", str(root / "plantune.db"))
    monkeypatch.setenv("GSTACK_QUESTION_LOG_NO_DERIVE", "1")
    for var in ("GSTACK_PROJECT_SLUG", "PLANTUNE_MIRROR", "CONDUCTOR_PORT",
                "CONDUCTOR_WORKSPACE_PATH", "PLANTUNE_DEBUG", "PLANTUNE_DEVELOPER",
                "GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    # The developer identity is resolved once per process; each test starts afresh.
    from toolkit.core import identity

    identity.reset()
    return root


@pytest.fixture
def state_root(isolated_home):
    return isolated_home


@pytest.fixture
def db_file(isolated_home):
    return str(isolated_home / "plantune.db")


@pytest.fixture
def conn(db_file):
    from toolkit.store import db

    c = db.connect(db_file)
    yield c
    c.close()


def script(name):
    """Path of an installed console script of this venv (compat tests run them as hooks do)."""
    return os.path.join(BIN_DIR, name)


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for the whole run (starting the JVM costs seconds).

    Skipped without Java or pyspark, unless PLANTUNE_REQUIRE_SPARK=1 (CI) makes that a
    failure.
    """
    import shutil

    missing = None
    if shutil.which("java") is None:
        missing = "no Java runtime (Debian: apt-get install default-jre-headless)"
    else:
        try:
            import pyspark  # noqa: F401
        except ImportError:
            missing = "pyspark is not installed (pip install 'plantune[spark]')"
    if missing:
        if os.environ.get("PLANTUNE_REQUIRE_SPARK"):
            pytest.fail(missing)
        pytest.skip(missing)
    from toolkit.analysis import team

    session = team.spark_session("local[2]")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
