import json
import os
import re
import sqlite3
import subprocess
import sys
import time

import click
import pytest
from click.testing import CliRunner

from tests.helpers import script
from toolkit.cli.app import cli


def all_commands(group=cli, prefix=()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        yield prefix + (name,), cmd
        if isinstance(cmd, click.Group):
            yield from all_commands(cmd, prefix + (name,))


def test_root_help_has_summary_and_example():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "plantune" in result.output and "Example" in result.output


@pytest.mark.parametrize("path", [p for p, _ in all_commands()], ids=" ".join)
def test_every_command_has_help_with_an_example(path):
    result = CliRunner().invoke(cli, list(path) + ["--help"])
    assert result.exit_code == 0, result.output
    cmd = dict(all_commands())[path]
    assert cmd.help and cmd.help.strip().splitlines()[0].strip(), f"{path} has no summary"
    assert "Example" in result.output, f"{' '.join(path)} --help shows no example"


def test_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert "plantune, version" in result.output


def test_init_then_status(db_file, state_root):
    runner = CliRunner()
    r = runner.invoke(cli, ["init"])
    assert r.exit_code == 0, r.output
    assert f"Created {db_file}" in r.output
    assert "53 questions" in r.output
    r = runner.invoke(cli, ["status"])
    assert r.exit_code == 0
    assert f"State root:     {state_root}" in r.output
    assert re.search(r"^registry_questions +53$", r.output, re.M)
    r = runner.invoke(cli, ["status", "--json"])
    data = json.loads(r.output)
    assert data["db"] == db_file
    assert data["tables"]["registry_questions"] == 53
    assert data["tables"]["signal_map"] == 62
    from toolkit.store import db

    assert data["schema_version"] == db.default_schema().migrations[-1][0].removesuffix(".sql")
    assert "0001_core.sql" in data["migrations"]


def test_status_on_a_fresh_root_creates_nothing(tmp_path, monkeypatch):
    root = tmp_path / "fresh" / ".gstack"
    monkeypatch.setenv("GSTACK_STATE_ROOT", str(root))
    monkeypatch.setenv("GSTACK_HOME", str(root))
    monkeypatch.delenv("PLANTUNE_DB")
    r = CliRunner().invoke(cli, ["status"])
    assert r.exit_code == 0, r.output
    assert "(none yet; plantune init creates it)" in r.output
    data = json.loads(CliRunner().invoke(cli, ["status", "--json"]).output)
    assert data == {"db": str(root / "plantune.db"), "state_root": str(root), "exists": False}
    assert not (tmp_path / "fresh").exists()


def test_status_shows_your_tables_and_the_internal_ones_with_all(db_file):
    assert CliRunner().invoke(cli, ["init"]).exit_code == 0
    shown = json.loads(CliRunner().invoke(cli, ["status", "--json"]).output)["tables"]
    every = json.loads(CliRunner().invoke(cli, ["status", "--all", "--json"]).output)["tables"]
    assert {"question_log", "preferences", "registry_questions", "calibrations"} <= set(shown)
    internal = set(every) - set(shown)
    assert {"rollup_day", "profile_feed", "plantune_rollups", "tombstones"} <= internal
    assert not [t for t in shown if t.startswith("rollup_") or t.endswith("_feed")]
    text = CliRunner().invoke(cli, ["status"]).output
    assert "question_log" in text and "rollup_day" not in text
    assert "rollup_day" in CliRunner().invoke(cli, ["status", "--all"]).output


def test_init_says_up_to_date_on_an_up_to_date_database(db_file):
    assert f"Created {db_file}" in CliRunner().invoke(cli, ["init"]).output
    r = CliRunner().invoke(cli, ["init"])
    assert r.exit_code == 0
    assert r.output.splitlines()[0] == f"{db_file} is up to date"
    assert json.loads(CliRunner().invoke(cli, ["init", "--json"]).output)["upgraded"] is False
    conn = sqlite3.connect(db_file)
    conn.execute("PRAGMA user_version = 1")  # as an older release left it
    conn.close()
    assert CliRunner().invoke(cli, ["init"]).output.splitlines()[0] == f"Upgraded {db_file}"


def test_db_option_beats_environment(tmp_path, db_file):
    other = str(tmp_path / "other.db")
    r = CliRunner().invoke(cli, ["init", "--db", other])
    assert r.exit_code == 0
    assert os.path.exists(other) and not os.path.exists(db_file)


def test_registry_list(db_file):
    r = CliRunner().invoke(cli, ["registry", "list", "--json"])
    rows = json.loads(r.output)
    assert len(rows) == 53
    triage = next(x for x in rows if x["id"] == "ship-test-failure-triage")
    assert triage["door_type"] == "one-way"
    assert triage["options"] == ["fix-now", "investigate", "ack-and-ship"]
    r = CliRunner().invoke(cli, ["registry", "list"])
    assert "53 questions (12 one-way, 41 two-way)" in r.output


def test_not_a_database_is_one_line_error_without_traceback(tmp_path):
    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello " * 1000)
    r = subprocess.run(
        [script("plantune"), "status", "--db", str(bogus)], capture_output=True, text=True
    )
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0
    assert "is not a plantune database" in r.stderr


def test_db_path_that_is_a_directory_fails_cleanly(tmp_path):
    r = subprocess.run(
        [script("plantune"), "init", "--db", str(tmp_path)], capture_output=True, text=True
    )
    assert r.returncode != 0
    assert "Traceback" not in r.stderr


def test_backup_refuses_existing_destination(db_file, tmp_path):
    CliRunner().invoke(cli, ["init"])
    dest = tmp_path / "exists.db"
    dest.write_text("keep me")
    r = CliRunner().invoke(cli, ["backup", str(dest)])
    assert r.exit_code == 1
    assert "already exists" in r.output
    assert dest.read_text() == "keep me"


def test_backup_while_a_writer_is_active(db_file, tmp_path):
    CliRunner().invoke(cli, ["init"])
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            """
import sys, time
from toolkit.core import seeded_db
from toolkit.store import db
conn = seeded_db.connect(sys.argv[1])
for i in range(3000):
    with db.transaction(conn):
        conn.execute("INSERT INTO preference_events (event_key, scope, ts, event_type) VALUES (?, 'p', 't', 'preference-set')", (str(i),))
""",
            db_file,
        ],
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    time.sleep(0.3)
    dest = str(tmp_path / "snap.db")
    r = subprocess.run([script("plantune"), "backup", dest], capture_output=True, text=True)
    writer.wait(timeout=120)
    assert r.returncode == 0, r.stderr
    copy = sqlite3.connect(dest)
    assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    n = copy.execute("SELECT count(*) FROM preference_events").fetchone()[0]
    assert 0 <= n <= 3000
    live = sqlite3.connect(db_file)
    assert live.execute("SELECT count(*) FROM preference_events").fetchone()[0] == 3000
