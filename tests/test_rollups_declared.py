"""Rollups are declarations (sql/rollups/NAME.sql): a changed file is re-created and
refilled on the next open, equal to a from-scratch GROUP BY; an unchanged one is left."""

import shutil

import pytest

from tests.helpers.views import assert_rollups_exact
from toolkit.core import questions, seeded_db
from toolkit.store import db


def log(conn, n, project="p"):
    for i in range(n):
        rec = questions.validate_event(
            {
                "skill": "ship",
                "question_id": f"q{i % 4}",
                "question_summary": "Ship it?",
                "user_choice": "abc"[i % 3],
                "session_id": f"s{i % 2}",
                "ts": f"2026-03-0{1 + i % 5}T10:00:00.000Z",
            }
        )
        questions.record_event(conn, rec, project)


@pytest.fixture
def rollups_copy(tmp_path):
    folder = tmp_path / "rollups"
    shutil.copytree(db.ROLLUPS_DIR, folder)
    return folder


def schema(folder):
    return db.Schema(rollups_dir=str(folder))


def test_a_changed_rollup_file_is_re_created_and_refilled(tmp_path, rollups_copy):
    path = str(tmp_path / "t.db")
    conn = seeded_db.connect(path, schema=schema(rollups_copy))
    log(conn, 40)
    conn.close()
    day = rollups_copy / "rollup_day.sql"
    # A new column: the table is made again and every row refilled from question_log.
    text = day.read_text()
    text = text.replace(
        "    unmarked INTEGER NOT NULL DEFAULT 0,\n",
        "    unmarked INTEGER NOT NULL DEFAULT 0,\n    spare INTEGER,\n",
        1,
    )
    text = text.replace("NEW.question_id GLOB 'hook-*')", "NEW.question_id GLOB 'hook-*', NULL)")
    text = text.replace(
        "sum(question_id GLOB 'hook-*')\n", "sum(question_id GLOB 'hook-*'), NULL\n"
    )
    day.write_text(text)
    changed = schema(rollups_copy)
    conn = seeded_db.connect(path, schema=changed)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == changed.stamp
    columns = [r[1] for r in conn.execute("PRAGMA table_info(rollup_day)")]
    assert columns[-1] == "spare"
    assert_rollups_exact(conn)
    log(conn, 7, project="other")  # the re-created triggers keep it exact
    assert_rollups_exact(conn)
    assert conn.execute("SELECT sum(events) FROM rollup_day").fetchone()[0] == 47


def test_a_rollup_whose_file_did_not_change_is_left_as_it_is(tmp_path, rollups_copy):
    path = str(tmp_path / "t.db")
    conn = seeded_db.connect(path, schema=schema(rollups_copy))
    log(conn, 10)
    # A total out of line would be put right by a refill: it stays, so nothing refilled it.
    conn.execute("UPDATE rollup_choice SET answers = answers + 100")
    conn.close()
    (rollups_copy / "rollup_day.sql").write_text(
        (rollups_copy / "rollup_day.sql").read_text() + "\n-- a comment changes the file\n"
    )
    conn = seeded_db.connect(path, schema=schema(rollups_copy))
    assert conn.execute("SELECT sum(answers) FROM rollup_choice").fetchone()[0] > 100
    assert conn.execute("SELECT sum(events) FROM rollup_day").fetchone()[0] == 10


def test_a_rollup_no_longer_declared_is_dropped_with_its_triggers(tmp_path, rollups_copy):
    path = str(tmp_path / "t.db")
    seeded_db.connect(path, schema=schema(rollups_copy)).close()
    (rollups_copy / "rollup_choice.sql").unlink()
    views = tmp_path / "views"
    shutil.copytree(db.VIEWS_DIR, views)
    for view in views.iterdir():
        if "rollup_choice" in view.read_text():
            view.unlink()
    conn = seeded_db.connect(
        path, schema=db.Schema(views_dir=str(views), rollups_dir=str(rollups_copy))
    )
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert not {n for n in names if n.startswith("rollup_choice")}
    assert "rollup_choice" not in {r[0] for r in conn.execute("SELECT name FROM plantune_rollups")}
    log(conn, 3, project="other")
    assert conn.execute("SELECT sum(events) FROM rollup_day").fetchone()[0] == 3


def test_a_broken_rollup_file_is_one_clear_error_and_changes_nothing(tmp_path, rollups_copy):
    path = str(tmp_path / "t.db")
    conn = seeded_db.connect(path, schema=schema(rollups_copy))
    log(conn, 5)
    stamp = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.close()
    day = rollups_copy / "rollup_day.sql"
    day.write_text(day.read_text().replace("FROM question_log NOT INDEXED", "FROM no_such_table"))
    with pytest.raises(db.DatabaseError, match="rollup rollup_day failed"):
        seeded_db.connect(path, schema=schema(rollups_copy))
    conn = seeded_db.connect(path, migrate=False)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == stamp
    assert conn.execute("SELECT sum(events) FROM rollup_day").fetchone()[0] == 5
    assert_rollups_exact(conn)


def test_every_rollup_file_declares_a_table_triggers_and_an_adding_statement():
    for rollup in db.default_schema().rollups:
        assert any(
            s.lstrip().startswith("CREATE TABLE") or "\nCREATE TABLE" in s for s in rollup.ddl
        )
        assert rollup.adds, rollup.name
        for table, statements in rollup.adds.items():
            assert rollup.insert_triggers.get(table), (rollup.name, table)
            assert all(":lo" in s for s in statements)
