"""Every console script, end to end, against a temp state root: the first run a user makes.

`make test` runs this against the development venv; CI runs it again with
PLANTUNE_TEST_BIN pointing at a clean venv where the built wheel is installed
(non-editable), from a working directory outside the checkout, so it checks what users
install.
"""

import json
import os
import sqlite3
import subprocess

import pytest

from tests.helpers import script

PAYLOAD = {
    "skill": "ship",
    "question_id": "ship-todos-create",
    "question_summary": "Create TODOS.md?",
    "user_choice": "accept",
    "source": "agent",
}
RANK_REQUEST = {
    "session_id": "smoke",
    "chain_id": "smoke",
    "phase": "eng",
    "budget": 6,
    "findings": [
        {
            "id": "eng-missing-index",
            "summary": "Add an index on orders.user_id",
            "severity": 2,
            "irreversibility": 0,
            "decision_matters": 2,
            "door_type": None,
            "kind": "finding",
            "recommended": "fix-now",
            "options": ["fix-now", "defer"],
        },
        {
            "id": "eng-cache-ttl",
            "summary": "Cache TTL is short",
            "severity": 0,
            "irreversibility": 1,
            "decision_matters": 1,
            "door_type": None,
            "kind": "finding",
            "recommended": "defer",
            "options": ["fix-now", "defer"],
        },
    ],
}


@pytest.fixture
def sh(tmp_path, state_root):
    """Run a console script from outside the checkout, as a user's shell would."""
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, GSTACK_PROJECT_SLUG="smoke-project")

    def run(name, *args, input=None, ok=True, timeout=300):
        p = subprocess.run(
            [script(name), *args],
            input=input,
            capture_output=True,
            text=True,
            cwd=work,
            env=env,
            timeout=timeout,
        )
        if ok:
            assert p.returncode == 0, f"{name} {' '.join(args)}: {p.stderr}"
            assert "Traceback" not in p.stderr
        return p

    return run


def test_first_run_of_every_console_script(sh, state_root, tmp_path):
    db = state_root / "plantune.db"
    out = sh("plantune", "init").stdout
    assert f"Created {db}" in out and "Registry: 53 questions" in out

    # The question log, through the compat script and the plantune command.
    sh("gstack-question-log", json.dumps(PAYLOAD))
    sh(
        "plantune",
        "log",
        json.dumps(
            {
                **PAYLOAD,
                "question_id": "ship-changelog-voice",
                "question_summary": "Changelog voice?",
                "phase": "eng",
            }
        ),
    )
    # Preferences and checks.
    assert sh("plantune", "check", "ship-todos-create").stdout.strip() == "ASK_NORMALLY"
    sh(
        "gstack-question-preference",
        "--write",
        json.dumps(
            {"question_id": "ship-todos-create", "preference": "never-ask", "source": "plan-tune"}
        ),
    )
    assert sh("gstack-question-preference", "--check", "ship-todos-create").stdout.startswith(
        "AUTO_DECIDE"
    )
    assert "ship-todos-create" in sh("plantune", "pref", "list").stdout
    assert sh("plantune", "pref", "stats").returncode == 0
    assert "NEVER_ASK: 1" in sh("gstack-question-preference", "--stats").stdout

    # The profile scripts.
    assert sh("gstack-developer-profile", "--derive").stdout.startswith("DERIVE: ok")
    assert set(json.loads(sh("gstack-developer-profile", "--gap").stdout)) == {
        "declared",
        "inferred",
        "gap",
    }
    assert "TIER: introduction" in sh("gstack-builder-profile").stdout
    assert sh("plantune", "profile", "show").stdout.startswith("Profile for smoke-project")

    # Pacing, through the hook-side script and the plantune command.
    ranked = json.loads(sh("gstack-pacing-rank", input=json.dumps(RANK_REQUEST)).stdout)
    assert {"surface", "silent_decisions", "budget"} <= set(ranked)
    again = sh(
        "plantune",
        "pacing",
        "rank",
        input=json.dumps({**RANK_REQUEST, "session_id": "s2", "chain_id": "s2"}),
    )
    assert "surface" in json.loads(again.stdout)

    # A simulated history, a calibration, the notebooks and the server.
    sh("plantune", "simulate", "--days", "30", "--seed", "3")
    assert "Stored as calibration 1" in sh("plantune", "calibrate", "--include-synthetic").stdout
    nb_out = tmp_path / "executed"
    ran = sh(
        "plantune", "notebooks", "run", "--include-synthetic", "--out", str(nb_out), timeout=900
    ).stdout
    assert "2 notebooks executed" in ran
    assert sorted(p.name for p in nb_out.iterdir()) == [
        "01_question_log_distributions.html",
        "01_question_log_distributions.ipynb",
        "02_calibrate_surface_threshold.html",
        "02_calibrate_surface_threshold.ipynb",
    ]
    page = sh("plantune", "serve", "--get", "/plantune/question_events.json?_shape=array").stdout
    assert any(row["question_id"] == "ship-todos-create" for row in json.loads(page))

    conn = sqlite3.connect(db)
    real = conn.execute("SELECT count(*) FROM question_log WHERE synthetic = 0").fetchone()[0]
    assert real >= 2
    assert conn.execute("SELECT count(*) FROM calibrations").fetchone()[0] >= 1
