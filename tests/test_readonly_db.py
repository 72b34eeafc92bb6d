"""Commands that only read never create or change a database they were not meant to.

- A mistyped ``--db`` is refused with one line and nothing is created (not the file, not
  its folder, not even a slug-cache entry).
- gstack's files under the state root feed only the state root's own database: reading
  a backup with ``--db`` leaves it byte for byte as it was, unless ``--state-root`` says
  to pick them up.
"""

import hashlib
import json
import os
import subprocess

import pytest
from click.testing import CliRunner

from tests.helpers import script
from toolkit.cli.app import cli
from toolkit.core import seeded_db
from toolkit.store import db

READ_ONLY = [
    ["status"],
    ["check", "ship-todos-create"],
    ["check", "ship-todos-create", "--json", "--summary-stdin"],
    ["pref", "list"],
    ["pref", "stats"],
    ["pref", "stats", "--project", "acme"],
    ["profile", "show"],
    ["profile", "gap"],
    ["profile", "trace", "autonomy"],
    ["profile", "mismatch"],
    ["profile", "export", "EXPORT"],
    ["registry", "list"],
    ["calibrate", "--dry-run"],
    ["serve", "--port", "0"],
    ["serve", "--get", "/plantune"],
    ["notebooks", "run", "--out", "OUT"],
]


def everything_under(folder):
    return sorted(
        os.path.relpath(os.path.join(d, n), folder)
        for d, dirs, names in os.walk(folder)
        for n in dirs + names
    )


@pytest.mark.parametrize("args", READ_ONLY, ids=lambda a: " ".join(a))
def test_a_missing_db_is_refused_and_nothing_is_created(tmp_path, state_root, args):
    missing = tmp_path / "typo" / "plantuen.db"
    args = [
        str(tmp_path / "out" / "x.json")
        if a == "EXPORT"
        else str(tmp_path / "out")
        if a == "OUT"
        else a
        for a in args
    ]
    before = everything_under(tmp_path)
    p = subprocess.run(
        [script("plantune"), *args, "--db", str(missing)],
        input="",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, GSTACK_PROJECT_SLUG=""),
    )
    assert (p.returncode, p.stdout) == (1, "")
    assert p.stderr == f"Error: no database at {missing} (plantune init creates one)\n"
    assert everything_under(tmp_path) == before


def test_commands_that_write_still_create_their_database(tmp_path):
    target = tmp_path / "new" / "plantune.db"
    r = CliRunner().invoke(
        cli,
        [
            "pref",
            "set",
            "ship-todos-create",
            "never-ask",
            "--source",
            "plan-tune",
            "--db",
            str(target),
        ],
    )
    assert r.exit_code == 0, r.output
    assert target.exists()


def test_one_message_for_a_missing_database():
    assert db.no_database_message("/x/y.db") == "no database at /x/y.db (plantune init creates one)"
    with pytest.raises(db.DatabaseError, match=r"^no database at /nope\.db \(plantune init"):
        seeded_db.connect("/nope.db", readonly=True)


# --- gstack's files feed only the state root's own database -------------------------------


def sha1(path):
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()


def dump(path):
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


@pytest.fixture
def live_and_copy(tmp_path, state_root):
    """A live state root with gstack files changed after a backup was taken."""
    runner = CliRunner()
    assert runner.invoke(cli, ["init"]).exit_code == 0
    copy = tmp_path / "pt-copy.db"
    assert runner.invoke(cli, ["backup", str(copy)]).exit_code == 0
    (state_root / "developer-profile.json").write_text(json.dumps({"declared": {"autonomy": 0.9}}))
    project = state_root / "projects" / "acme"
    project.mkdir(parents=True)
    (project / "question-preferences.json").write_text(
        json.dumps({"ship-todos-create": "never-ask"})
    )
    return copy


READERS = [
    ["profile", "show"],
    ["profile", "gap"],
    ["pref", "list"],
    ["pref", "stats"],
    ["check", "ship-todos-create"],
    ["status"],
    ["profile", "export", "EXPORT"],
]


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a))
def test_reading_a_backup_leaves_it_unchanged(live_and_copy, tmp_path, state_root, args):
    args = [str(tmp_path / "me.json") if a == "EXPORT" else a for a in args]
    before, rows = sha1(live_and_copy), dump(live_and_copy)
    p = subprocess.run(
        [script("plantune"), *args, "--db", str(live_and_copy)],
        capture_output=True,
        text=True,
        env=dict(os.environ, GSTACK_PROJECT_SLUG="acme"),
    )
    assert p.returncode == 0, p.stderr
    assert dump(live_and_copy) == rows
    assert sha1(live_and_copy) == before
    # The live files were neither rewritten nor extended from the copy.
    assert json.loads((state_root / "developer-profile.json").read_text()) == {
        "declared": {"autonomy": 0.9}
    }
    assert not (state_root / "projects" / "acme" / "question-log.jsonl").exists()


def test_the_copy_answers_from_its_own_rows(live_and_copy):
    r = CliRunner().invoke(
        cli, ["check", "ship-todos-create", "--project", "acme", "--db", str(live_and_copy)]
    )
    assert r.stdout.strip() == "ASK_NORMALLY"  # the live file's never-ask did not leak in
    r = CliRunner().invoke(cli, ["profile", "show", "--json", "--db", str(live_and_copy)])
    assert json.loads(r.stdout)["declared"] == {}


def test_state_root_option_picks_up_into_another_database(live_and_copy, state_root):
    r = CliRunner().invoke(
        cli,
        ["--state-root", str(state_root), "profile", "show", "--json", "--db", str(live_and_copy)],
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["declared"] == {"autonomy": 0.9}
    r = CliRunner().invoke(
        cli,
        [
            "--state-root",
            str(state_root),
            "check",
            "ship-todos-create",
            "--project",
            "acme",
            "--db",
            str(live_and_copy),
        ],
    )
    assert r.stdout.startswith("AUTO_DECIDE")
    # The flag does not outlive its command.
    r = CliRunner().invoke(cli, ["profile", "show", "--json", "--db", str(live_and_copy)])
    assert r.exit_code == 0


def test_the_own_database_named_explicitly_still_picks_up(live_and_copy, state_root):
    own = str(state_root / "plantune.db")
    r = CliRunner().invoke(cli, ["profile", "show", "--json", "--db", own])
    assert json.loads(r.stdout)["declared"] == {"autonomy": 0.9}
    r = CliRunner().invoke(cli, ["check", "ship-todos-create", "--project", "acme", "--db", own])
    assert r.stdout.startswith("AUTO_DECIDE")


def test_writing_to_a_scratch_database_leaves_the_live_files_alone(tmp_path, state_root):
    scratch = tmp_path / "scratch.db"
    record = {
        "skill": "ship",
        "question_id": "ship-todos-create",
        "question_summary": "Create TODOS.md?",
        "user_choice": "accept",
        "source": "agent",
    }
    p = subprocess.run(
        [script("plantune"), "log", json.dumps(record), "--db", str(scratch)],
        capture_output=True,
        text=True,
        env=dict(os.environ, GSTACK_PROJECT_SLUG="acme"),
    )
    assert p.returncode == 0, p.stderr
    assert not (state_root / "projects").exists()
    import sqlite3

    assert sqlite3.connect(scratch).execute("SELECT count(*) FROM question_log").fetchone()[0] == 1


def test_a_link_to_the_own_database_is_the_own_database(live_and_copy, state_root, tmp_path):
    link = tmp_path / "link.db"
    link.symlink_to(state_root / "plantune.db")
    r = CliRunner().invoke(cli, ["profile", "show", "--json", "--db", str(link)])
    assert json.loads(r.stdout)["declared"] == {"autonomy": 0.9}
