"""Fixtures every test can use: an isolated home and state root, a database, Spark.

Helpers shared by several test modules live in ``tests/helpers``.
"""

import os
import shutil
import subprocess

import pytest

from tests.helpers import script
from tests.helpers.loops import FULL_MODULES, FULL_TESTS
from tests.helpers.server import COOKIES, free_port, http_get, read_banner, wait_until_up


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    """Mark the full loop's tests ``full``; tests marked slow run only when PLANTUNE_SLOW
    is set (`make test-full` and CI set it)."""
    slow_runs = bool(os.environ.get("PLANTUNE_SLOW"))
    for item in items:
        module = item.module.__name__.rpartition(".")[2] if item.module else ""
        slow = item.get_closest_marker("slow")
        named = f"{module}::{getattr(item, 'originalname', item.name)}"
        if (
            module in FULL_MODULES
            or named in FULL_TESTS
            or slow
            or item.get_closest_marker("browser")
        ):
            item.add_marker(pytest.mark.full)
        if slow and not slow_runs:
            why = slow.kwargs.get("reason", "a long test")
            item.add_marker(pytest.mark.skip(reason=f"{why}; set PLANTUNE_SLOW=1 to run"))


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
    for var in (
        "GSTACK_PROJECT_SLUG",
        "PLANTUNE_MIRROR",
        "CONDUCTOR_PORT",
        "CONDUCTOR_WORKSPACE_PATH",
        "PLANTUNE_DEBUG",
        "PLANTUNE_DEVELOPER",
        "GIT_CONFIG_GLOBAL",
        "XDG_CONFIG_HOME",
    ):
        monkeypatch.delenv(var, raising=False)
    # The developer identity is resolved once per process; each test starts afresh.
    from toolkit.core import identity

    identity.reset()
    yield root


@pytest.fixture
def state_root(isolated_home):
    return isolated_home


@pytest.fixture
def db_file(isolated_home):
    return str(isolated_home / "plantune.db")


@pytest.fixture(scope="session")
def template_db(tmp_path_factory):
    """A database migrated once per run (migrating costs a few hundred milliseconds; a copy
    costs a few): the ``conn`` fixture starts every test from a copy of it."""
    from toolkit.core import seeded_db

    path = str(tmp_path_factory.mktemp("template") / "plantune.db")
    seeded_db.connect(path).close()  # the last close folds the WAL into the file
    assert not os.path.exists(path + "-wal")
    return path


@pytest.fixture
def conn(db_file, template_db):
    """The test's database, migrated: a private copy of the template, with its own id."""
    from toolkit.core import seeded_db

    shutil.copyfile(template_db, db_file)
    os.chmod(db_file, 0o600)
    c = seeded_db.connect(db_file)
    # Databases tell each other apart by this id (merge refuses the same database twice).
    c.execute(
        "UPDATE plantune_meta SET value = lower(hex(randomblob(16))) WHERE key = 'database_id'"
    )
    yield c
    c.close()


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
            missing = "pyspark is not installed (python -m pip install pyspark)"
    if missing:
        if os.environ.get("PLANTUNE_REQUIRE_SPARK"):
            pytest.fail(missing)
        pytest.skip(missing)
    from toolkit.analysis import team

    session = team.spark_session("local[2]")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def history_db(db_file):
    """A database holding the hand-made history of tests/helpers/views.py."""
    from tests.helpers.views import build_history
    from toolkit.core import seeded_db

    conn = seeded_db.connect(db_file)
    build_history(conn)
    conn.close()
    return db_file


@pytest.fixture
def served(history_db):
    """A real ``plantune serve`` on a free port, signed in through the link it printed
    (``proc.sign_in``; ``proc.banner`` holds the lines before it); stopped by its PID."""
    port = free_port()
    proc = subprocess.Popen(
        [script("plantune"), "serve", "--db", history_db, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        proc.banner, proc.sign_in = read_banner(proc)
        wait_until_up(base + "/-/versions.json", proc)
        http_get(proc.sign_in)  # signed in, as the owner opening the printed link
        yield base, history_db, proc
    finally:
        COOKIES.clear()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def project(tmp_path):
    """A small project folder with a marker, some source and docs, and no .plantune yet."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (root / "README.md").write_text("# demo\n")
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "docs").mkdir()
    (root / "docs" / "plan.md").write_text("plan\n")
    return root
