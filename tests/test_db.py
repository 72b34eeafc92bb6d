import os
import sqlite3
import stat
import subprocess
import sys
import textwrap

import pytest

from tests.helpers import query
from toolkit.core import seeded_db
from toolkit.store import db


def schema_dump(path):
    c = sqlite3.connect(path)
    rows = c.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name").fetchall()
    c.close()
    return rows


def test_migrating_twice_changes_nothing(db_file):
    seeded_db.connect(db_file).close()
    before = schema_dump(db_file)
    c = seeded_db.connect(db_file)
    # every shipped migration, in order (other issues add their own after 0001)
    assert db.applied_migrations(c) == [n for n, _ in db.default_schema().migrations]
    assert db.applied_migrations(c)[0] == "0001_core.sql"
    counts = db.table_counts(c)
    c.close()
    # Force a full re-run of the migrate step (as if the views had changed).
    c = sqlite3.connect(db_file)
    c.execute("PRAGMA user_version = 0")
    c.close()
    c = seeded_db.connect(db_file)
    assert db.table_counts(c) == counts
    c.close()
    assert schema_dump(db_file) == before


def test_registry_and_signal_map_are_seeded(conn):
    assert conn.execute("SELECT count(*) FROM registry_questions").fetchone()[0] == 53
    assert (
        conn.execute(
            "SELECT count(*) FROM registry_questions WHERE door_type = 'one-way'"
        ).fetchone()[0]
        == 12
    )
    assert conn.execute("SELECT count(DISTINCT signal_key) FROM signal_map").fetchone()[0] == 10
    assert conn.execute(
        "SELECT delta FROM signal_map WHERE signal_key = 'scope-appetite' AND user_choice = 'expand'"
    ).fetchone()[0] == pytest.approx(0.06)


def test_database_from_0001_upgrades_when_a_later_migration_exists(tmp_path, db_file):
    mig = tmp_path / "migrations"
    mig.mkdir()
    core = os.path.join(db.MIGRATIONS_DIR, "0001_core.sql")
    (mig / "0001_core.sql").write_text(open(core).read())
    old = db.Schema(migrations_dir=str(mig), views_dir=db.VIEWS_DIR)
    c = seeded_db.connect(db_file, schema=old)
    c.execute(
        "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
        " VALUES ('p', 'q', 'never-ask', 'plan-tune', 'now')"
    )
    c.close()
    (mig / "0002_add_note.sql").write_text(
        textwrap.dedent("""
        -- throwaway migration used by this test
        ALTER TABLE preferences ADD COLUMN note TEXT;
        CREATE TABLE extra_thing (id INTEGER PRIMARY KEY, label TEXT) STRICT;
    """)
    )
    new = db.Schema(migrations_dir=str(mig), views_dir=db.VIEWS_DIR)
    assert new.stamp != old.stamp
    c = seeded_db.connect(db_file, schema=new)
    assert db.applied_migrations(c) == ["0001_core.sql", "0002_add_note.sql"]
    row = c.execute("SELECT preference, note FROM preferences").fetchone()
    assert tuple(row) == ("never-ask", None)
    c.execute("INSERT INTO extra_thing (label) VALUES ('x')")
    c.close()


def test_failed_migration_rolls_back_and_says_which(tmp_path, db_file):
    mig = tmp_path / "migrations"
    mig.mkdir()
    (mig / "0001_core.sql").write_text(
        open(os.path.join(db.MIGRATIONS_DIR, "0001_core.sql")).read()
    )
    (mig / "0002_broken.sql").write_text(
        "CREATE TABLE half_done (id INTEGER) STRICT;\nALTER TABLE no_such_table ADD COLUMN x TEXT;\n"
    )
    schema = db.Schema(migrations_dir=str(mig), views_dir=db.VIEWS_DIR)
    with pytest.raises(db.DatabaseError, match="migration 0002_broken.sql failed"):
        seeded_db.connect(db_file, schema=schema)
    c = sqlite3.connect(db_file)
    names = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "half_done" not in names  # the whole migration rolled back
    assert "question_log" in names  # 0001 was committed on its own


@pytest.mark.parametrize(
    "column,value",
    [
        ("door_type", "three-way"),
        ("category", "bogus"),
        ("phase", "qa"),
        ("source", "tool-output"),
        ("options_count", 27),
    ],
)
def test_enums_are_enforced_by_the_database(conn, column, value):
    row = {
        "event_key": "k1",
        "project": "p",
        "ts": "2026-01-01T00:00:00.000Z",
        "skill": "ship",
        "question_id": "ship-x",
        "question_summary": "s",
        "user_choice": "a",
        "source": "agent",
        "raw_json": "{}",
        "recorded_at": "now",
    }
    row[column] = value
    cols = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint failed"):
        conn.execute(f"INSERT INTO question_log ({cols}) VALUES ({marks})", list(row.values()))
    assert conn.execute("SELECT count(*) FROM question_log").fetchone()[0] == 0


def test_preference_enum_enforced(conn):
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
            " VALUES ('p', 'q', 'sometimes', 'plan-tune', 'now')"
        )


def test_strict_tables_refuse_wrong_types(conn):
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO findings (project, session_id, chain_id, phase, finding_id, severity,"
            " irreversibility, decision_matters, door_type, door_reason, score, threshold,"
            " disposition, created_at, updated_at) VALUES"
            " ('p','s','c','eng','f','high',0,0,'two-way','x',1,4,'silent','now','now')"
        )


def test_database_file_is_created_with_mode_0600(db_file):
    old = os.umask(0o022)
    try:
        seeded_db.connect(db_file).close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(db_file).st_mode) == 0o600


def test_opening_an_up_to_date_database_runs_no_ddl(db_file):
    seeded_db.connect(db_file).close()
    statements = []
    c = sqlite3.connect(db_file)
    c.close()
    # db may use the _sqlite3 C module directly; trace whichever module it opens with.
    orig_connect = db.sqlite3.connect

    def tracing_connect(*a, **kw):
        conn = orig_connect(*a, **kw)
        conn.set_trace_callback(statements.append)
        return conn

    db.sqlite3.connect = tracing_connect
    try:
        seeded_db.connect(db_file).close()
    finally:
        db.sqlite3.connect = orig_connect
    assert statements == [
        "PRAGMA foreign_keys = ON",
        "PRAGMA synchronous = NORMAL",
        "PRAGMA user_version",
    ]


def test_wal_mode_is_on(conn):
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


WRITER = textwrap.dedent("""
    import sys
    from toolkit.core import seeded_db
    from toolkit.store import db
    conn = seeded_db.connect(sys.argv[1])
    for i in range(500):
        with db.transaction(conn):
            conn.execute(
                "INSERT INTO preference_events (event_key, scope, ts, event_type, question_id)"
                " VALUES (?, 'p', '2026-01-01T00:00:00.000Z', 'preference-set', 'q')",
                (sys.argv[2] + str(i),),
            )
    print("done")
""")


def test_two_processes_writing_500_rows_each_lose_nothing(db_file):
    # Both processes also race to create and migrate the brand-new database.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, db_file, tag],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "locked" not in err
        assert out.strip() == "done"
    c = seeded_db.connect(db_file)
    assert c.execute("SELECT count(*) FROM preference_events").fetchone()[0] == 1000
    assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_backup_is_a_consistent_private_copy(conn, tmp_path):
    conn.execute(
        "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
        " VALUES ('p', 'q', 'never-ask', 'plan-tune', 'now')"
    )
    dest = str(tmp_path / "copy.db")
    db.backup(conn, dest)
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o600
    copy = sqlite3.connect(dest)
    assert copy.execute("SELECT preference FROM preferences").fetchone()[0] == "never-ask"
    assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with pytest.raises(db.DatabaseError, match="already exists"):
        db.backup(conn, dest)


def test_not_a_database_is_a_clear_error(tmp_path):
    bogus = tmp_path / "bogus.db"
    bogus.write_text("this is not sqlite at all, just some text " * 50)
    with pytest.raises(db.DatabaseError, match="is not a plantune database"):
        seeded_db.connect(str(bogus))


def test_the_conn_fixture_database_is_a_private_current_copy(conn, db_file, template_db):
    """Tests start from a copy of one migrated template: it must be as current as a new
    database, private, and its own database (merge tells databases apart by their id)."""
    assert conn.execute("PRAGMA user_version").fetchone()[0] == db.default_schema().stamp
    assert db.applied_migrations(conn) == [n for n, _ in db.default_schema().migrations]
    assert stat.S_IMODE(os.stat(db_file).st_mode) == 0o600
    own = conn.execute("SELECT value FROM plantune_meta WHERE key = 'database_id'").fetchone()[0]
    (template,) = query(template_db, "SELECT value FROM plantune_meta WHERE key = 'database_id'")
    assert len(own) == 32 and own != template[0]
    assert conn.execute("SELECT count(*) FROM registry_questions").fetchone()[0] > 0


# ---------------------------------------------------------------------------
# The stamp an installed wheel ships


def test_a_shipped_stamp_spares_the_schema_files_on_a_current_database(tmp_path, monkeypatch):
    path = str(tmp_path / "current.db")
    seeded_db.connect(path).close()
    stamp = db.default_schema().stamp
    monkeypatch.setattr(db, "shipped_stamp", lambda: stamp)

    def no_files():
        raise AssertionError("the schema files were read")

    monkeypatch.setattr(db, "default_schema", no_files)
    conn = seeded_db.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == stamp
    conn.close()


def test_a_database_behind_the_shipped_stamp_is_migrated(tmp_path, monkeypatch):
    path = str(tmp_path / "behind.db")
    seeded_db.connect(path).close()
    raw = sqlite3.connect(path)
    raw.execute("DROP VIEW inferred_profile")
    raw.execute("PRAGMA user_version = 7")
    raw.commit()
    raw.close()
    stamp = db.default_schema().stamp
    monkeypatch.setattr(db, "shipped_stamp", lambda: stamp)
    conn = seeded_db.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == stamp
    assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'inferred_profile'").fetchone()
    conn.close()


def test_a_shipped_stamp_with_broken_schema_files_creates_no_database(tmp_path, monkeypatch):
    monkeypatch.setattr(db, "shipped_stamp", lambda: 12345)

    def broken():
        raise db.DatabaseError("schema migrations folder not found at nowhere")

    monkeypatch.setattr(db, "default_schema", broken)
    path = tmp_path / "new" / "plantune.db"
    with pytest.raises(db.DatabaseError):
        seeded_db.connect(str(path))
    assert not path.exists()
    # An existing database whose stamp differs is not touched either.
    existing = tmp_path / "old.db"
    raw = sqlite3.connect(existing)
    raw.execute("PRAGMA user_version = 7")
    raw.close()
    with pytest.raises(db.DatabaseError):
        seeded_db.connect(str(existing))
    assert sqlite3.connect(existing).execute("PRAGMA user_version").fetchone()[0] == 7


def test_a_source_checkout_ships_no_stamp():
    assert db.shipped_stamp() is None
