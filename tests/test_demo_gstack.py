"""`make demo DEMO_SOURCE=gstack` on a state root holding only gstack question-log files.

The state root is generated in gstack's file format (no findings, no plantune database);
the demo ingests it, calibrates from the question log, runs both notebooks and serves the
database. The served page is fetched, then the demo is stopped by its process group.
"""

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers import REPO_ROOT
from tests.helpers import gstack_history as gh
from tests.helpers.server import COOKIES, SIGN_IN_LINE, free_port, http_get
from toolkit.core import seeded_db

BIN = os.path.dirname(sys.executable)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_demo_on_a_gstack_only_state_root(tmp_path):
    root = tmp_path / "gstack"
    gh.registry_history(root, days=60, seed=11)
    gh.adhoc_history(root, days=40, seed=12)
    assert sorted(os.listdir(root)) == ["projects"]
    port = free_port()
    env = dict(os.environ)
    for var in ("PLANTUNE_DB", "GSTACK_STATE_ROOT", "GSTACK_HOME"):
        env.pop(var, None)
    cmd = [
        "make",
        "--no-print-directory",
        "-C",
        REPO_ROOT,
        "-o",
        ".venv/.installed",
        "demo",
        "DEMO_SOURCE=gstack",
        f"DEMO_ROOT={root}",
        f"BIN={BIN}",
        f"SERVE_PORT={port}",
    ]
    with open(tmp_path / "demo.log", "w+") as log:
        proc = subprocess.Popen(
            cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 300
            page = None
            while time.monotonic() < deadline and proc.poll() is None:
                log.seek(0)
                links = [m.group(1) for m in map(SIGN_IN_LINE.match, log) if m]
                try:
                    http_get(links[0])  # the sign-in link the demo printed
                    status, page = http_get(
                        f"http://127.0.0.1:{port}/plantune/calibrations.json?_shape=array"
                    )
                    break
                except (OSError, IndexError):
                    time.sleep(1)
            log.seek(0)
            output = log.read()
            assert page is not None, output
            assert status == 200 and '"source": "question-log"' in page.replace('":"', '": "'), page
        finally:
            COOKIES.clear()
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert "Ingested" in output and "source: question-log" in output
    assert not [line for line in output.splitlines() if line.startswith("(skipped:")], output
    for name in ("01_question_log_distributions", "02_calibrate_surface_threshold"):
        assert (root / "notebooks" / f"{name}.html").exists(), output
    conn = seeded_db.connect(str(root / "plantune.db"))
    try:
        assert conn.execute("SELECT count(*) FROM findings").fetchone()[0] == 0
        row = conn.execute("SELECT source, achieved_rate FROM calibrations").fetchone()
        assert row[0] == "question-log" and abs(row[1] - 0.2) < 0.02
    finally:
        conn.close()
