"""A database made by an earlier release upgrades in place: nothing runs twice, nothing is lost.

The fixture is a real plantune 0.1.0 database (simulated history, real questions, an
ingested gstack log, preferences, a declared profile, a pacing ranking, a calibration),
kept as an SQL dump. That release recorded six migrations under names that were later
changed to say what they do; the runner must count them as applied under their new names.
"""

import functools
import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from tests.helpers import query
from tests.helpers.views import assert_rollups_exact
from toolkit.core import seeded_db
from toolkit.store import db

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "upgrade", "release-0.1.0.sql")

# Tables whose totals must come through an upgrade unchanged, with the sums that say so.
ROLLUP_TOTALS = {
    "rollup_day": "sum(events), sum(one_way), sum(followed), sum(overridden), sum(unmarked)",
    "rollup_phase": "sum(questions), sum(auto_decided), sum(one_way), sum(findings)",
    "rollup_session": "sum(shown), sum(auto_decided), sum(one_way)",
    "rollup_question": "sum(events), sum(auto_decided), sum(one_way), sum(followed)",
    "rollup_choice": "sum(answers)",
    "profile_totals": "sum(sample_size), sum(question_ids_covered)",
}


def load_release(path):
    """Write the release database to ``path`` from the dump, as that release left it."""
    with open(FIXTURE, encoding="utf-8") as f:
        script = f.read()
    raw = sqlite3.connect(path)
    raw.executescript(script)
    raw.close()
    os.chmod(path, 0o600)


def recorded(path):
    """``{migration name: applied_at}`` as stored."""
    return dict(query(path, f"SELECT name, applied_at FROM {db.MIGRATIONS_TABLE}"))


@functools.cache
def release_columns():
    """``{table: [column]}`` of the release's history tables: an upgrade may add tables and
    columns, and what the release had must come through it unchanged."""
    with open(FIXTURE, encoding="utf-8") as f:
        script = f.read()
    raw = sqlite3.connect(":memory:")
    raw.executescript(script)
    tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    columns = {
        t: [r[1] for r in raw.execute(f'PRAGMA table_info("{t}")')]
        for t in db.HISTORY_TABLES
        if t in tables
    }
    raw.close()
    return columns


def snapshot(path):
    """What an upgrade must never change: the release's history rows (every column it had)
    and every running total."""
    raw = sqlite3.connect(path)
    try:
        counts, rows = {}, {}
        for table, columns in release_columns().items():
            counts[table] = raw.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
            names = ", ".join(f'"{c}"' for c in columns)
            rows[table] = sorted(raw.execute(f'SELECT {names} FROM "{table}"').fetchall(), key=repr)
        totals = {
            t: raw.execute(f'SELECT {sums} FROM "{t}"').fetchone()
            for t, sums in ROLLUP_TOTALS.items()
        }
        return counts, rows, totals
    finally:
        raw.close()


def current_names():
    return [name for name, _ in db.default_schema().migrations]


def squashed_parts():
    return {part for parts in db.SQUASHED_MIGRATIONS.values() for part in parts}


def upgraded_names():
    """What an upgraded (or new) database records: every current name, and the earlier
    name of each renamed migration (and the parts of each squash) beside it, for an earlier
    version that opens it."""
    return sorted(set(current_names()) | set(db.RENAMED_MIGRATIONS) | squashed_parts())


@pytest.fixture
def release_db(tmp_path):
    path = str(tmp_path / "release.db")
    load_release(path)
    return path


def test_the_fixture_is_a_database_of_the_release_before_the_renames(release_db):
    names = recorded(release_db)
    assert set(db.RENAMED_MIGRATIONS) <= set(names)
    assert not set(db.RENAMED_MIGRATIONS.values()) & set(names)
    stamp = query(release_db, "PRAGMA user_version")[0][0]
    assert stamp not in (0, db.default_schema().stamp)  # so opening it migrates
    counts, _, _ = snapshot(release_db)
    assert counts["question_log"] > 50 and counts["findings"] > 50
    assert counts["preferences"] and counts["calibrations"] and counts["pacing_runs"]


def test_a_release_database_upgrades_without_running_any_migration_again(release_db):
    before_names = recorded(release_db)
    before = snapshot(release_db)

    conn = seeded_db.connect(release_db)
    after_names = recorded(release_db)
    # Every current migration is recorded under its current name; the old names stay.
    assert sorted(after_names) == upgraded_names()
    for name, applied_at in before_names.items():
        # The time it was applied is the release's own: it did not run again.
        assert after_names[db.RENAMED_MIGRATIONS.get(name, name)] == applied_at, name
        assert after_names[name] == applied_at, name
    assert snapshot(release_db) == before
    assert conn.execute("PRAGMA user_version").fetchone()[0] == db.default_schema().stamp

    # Every view of the current schema answers, and the summaries agree with the history.
    for name, _ in db.default_schema().views:
        conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()
    logged = conn.execute("SELECT count(*) FROM question_log").fetchone()[0]
    assert conn.execute("SELECT sum(questions) FROM daily_activity").fetchone()[0] == logged

    # The triggers that keep the totals are there exactly once: one new event adds one.
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO question_log (event_key, project, ts, skill, question_id,"
            " question_summary, user_choice, source, phase, raw_json, recorded_at)"
            " VALUES ('upgrade-test-1', 'acme-web', '2026-11-01T09:00:00.000Z', 'ship',"
            " 'ship-todos-create', 'Create TODOS.md?', 'accept', 'agent', 'eng', '{}',"
            " '2026-11-01T09:00:00.000Z')"
        )
    assert conn.execute("SELECT sum(questions) FROM daily_activity").fetchone()[0] == logged + 1
    assert conn.execute("SELECT sum(events) FROM rollup_day").fetchone()[0] == logged + 1
    assert_rollups_exact(conn)
    conn.close()


def test_opening_an_upgraded_database_again_changes_nothing(release_db, monkeypatch):
    seeded_db.connect(release_db).close()
    names = recorded(release_db)
    schema_sql = query(release_db, "SELECT type, name, sql FROM sqlite_master ORDER BY name")

    def no_migration(*args):
        raise AssertionError("an up-to-date database was migrated again")

    monkeypatch.setattr(db, "_migrate", no_migration)
    conn = seeded_db.connect(release_db)
    assert conn.execute("SELECT count(*) FROM phase_counts").fetchone()[0] > 0
    conn.close()
    assert recorded(release_db) == names
    assert (
        query(release_db, "SELECT type, name, sql FROM sqlite_master ORDER BY name") == schema_sql
    )


def test_the_release_preferences_still_decide_after_the_upgrade(release_db):
    from toolkit.core import preferences

    conn = seeded_db.connect(release_db)
    never = preferences.check(conn, "acme-web", "ship-changelog-voice-polish")
    assert (never.decision, never.preference) == ("AUTO_DECIDE", "never-ask")
    cleared = preferences.check(conn, "acme-web", "ship-todos-create")
    assert (cleared.decision, cleared.preference) == ("ASK_NORMALLY", None)
    globally = preferences.check(conn, "beta-api", "plan-ceo-review-mode")
    assert (globally.decision, globally.preference) == ("ASK_NORMALLY", "always-ask")
    conn.close()


def test_a_release_database_merges_into_a_team_database_as_it_is(release_db, tmp_path):
    """`plantune merge` reads a developer's database without upgrading it: the old names
    of renamed migrations are known names, not a newer schema."""
    from toolkit.analysis import merge

    team = seeded_db.connect(str(tmp_path / "team.db"))
    (result,) = merge.merge(team, [release_db])
    logged = query(release_db, "SELECT count(*) FROM question_log")[0][0]
    assert result["tables"]["question_log"]["added"] == logged
    assert team.execute("SELECT count(*) FROM question_log").fetchone()[0] == logged
    team.close()
    assert "0005_views_indexes.sql" in recorded(release_db)  # the source was only read


# --- hostile histories of the migrations table ---------------------------------------------


def test_a_database_recording_both_the_old_and_the_new_name_is_left_as_it_is(release_db):
    raw = sqlite3.connect(release_db)
    with raw:
        for old, new in db.RENAMED_MIGRATIONS.items():
            raw.execute(
                f"INSERT INTO {db.MIGRATIONS_TABLE} VALUES (?, ?)",
                (new, "2026-12-01T00:00:00.000Z"),
            )
    raw.close()
    before = recorded(release_db)
    snap = snapshot(release_db)

    seeded_db.connect(release_db).close()
    after = recorded(release_db)
    assert sorted(after) == upgraded_names()
    for name, applied_at in before.items():
        assert after[name] == applied_at  # nothing ran again, nothing was rewritten
    assert snapshot(release_db) == snap


def test_a_database_with_some_names_already_renamed_finishes_the_rest(release_db):
    before = recorded(release_db)
    first = sorted(db.RENAMED_MIGRATIONS)[:3]
    raw = sqlite3.connect(release_db)
    with raw:
        for old in first:
            raw.execute(
                f"UPDATE {db.MIGRATIONS_TABLE} SET name = ? WHERE name = ?",
                (db.RENAMED_MIGRATIONS[old], old),
            )
    raw.close()

    seeded_db.connect(release_db).close()
    after = recorded(release_db)
    assert sorted(after) == sorted(
        set(current_names()) | set(db.RENAMED_MIGRATIONS) - set(first) | squashed_parts()
    )
    for name, applied_at in before.items():
        assert after[db.RENAMED_MIGRATIONS.get(name, name)] == applied_at


# A process that opens the database and is killed (SIGKILL, no cleanup) at a chosen moment
# of the upgrade: on the n-th statement that starts with the given text.
KILLED_OPEN = """
import os, signal, sys, types
import {module} as db

real = db.sqlite3
prefix, nth = sys.argv[2], int(sys.argv[3])


class Killed(db.Connection):
    seen = 0

    def execute(self, sql, *args):
        if sql.lstrip().startswith(prefix):
            Killed.seen += 1
            if Killed.seen == nth:
                os.kill(os.getpid(), signal.SIGKILL)
        return super().execute(sql, *args)


shim = types.SimpleNamespace(**{{k: getattr(real, k) for k in dir(real) if not k.startswith("__")}})
shim.connect = lambda *a, factory=None, **k: real.connect(*a, factory=Killed, **k)
db.sqlite3 = shim
db.connect(sys.argv[1])
"""


def open_and_get_killed(path, prefix, nth=1):
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_OPEN.format(module=db.__name__), path, prefix, str(nth)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr


def test_a_kill_in_the_middle_of_the_renames_leaves_every_old_name(release_db):
    before = recorded(release_db)
    snap = snapshot(release_db)
    # Killed after the first rename, before the transaction holding them all commits.
    open_and_get_killed(release_db, f"INSERT OR IGNORE INTO {db.MIGRATIONS_TABLE}", nth=2)
    assert recorded(release_db) == before

    seeded_db.connect(release_db).close()
    after = recorded(release_db)
    assert sorted(after) == upgraded_names()
    for name, applied_at in before.items():
        assert after[db.RENAMED_MIGRATIONS.get(name, name)] == applied_at
    assert snapshot(release_db) == snap


def test_a_kill_after_the_renames_committed_is_finished_by_the_next_open(release_db):
    before = recorded(release_db)
    old_stamp = query(release_db, "PRAGMA user_version")[0][0]
    snap = snapshot(release_db)
    # Killed while the views are re-created, after the renames committed.
    open_and_get_killed(release_db, "DROP VIEW")
    halfway = recorded(release_db)
    assert set(db.RENAMED_MIGRATIONS.values()) <= set(halfway)
    assert query(release_db, "PRAGMA user_version")[0][0] == old_stamp

    conn = seeded_db.connect(release_db)
    after = recorded(release_db)
    assert sorted(after) == upgraded_names()
    for name, applied_at in before.items():
        assert after[db.RENAMED_MIGRATIONS.get(name, name)] == applied_at
    assert snapshot(release_db) == snap
    for name, _ in db.default_schema().views:
        conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()
    conn.close()


# --- the rename map itself ------------------------------------------------------------------


def test_every_rename_points_at_a_current_migration_with_the_same_number():
    names = set(current_names())
    for old, new in db.RENAMED_MIGRATIONS.items():
        assert new in names, f"{new} is not a migration file"
        assert old not in names, f"{old} is still a migration file"
        assert old.split("_")[0] == new.split("_")[0], "a rename must keep the order"
        assert new not in db.RENAMED_MIGRATIONS, "renames point at the final name"


# --- an earlier release opening the database again ---------------------------------------


def release_schema(tmp_path, names):
    """The schema the release ran: its migrations under the names it knew (the current files,
    which did not change), and no rename map."""
    folder = tmp_path / "release-migrations"
    folder.mkdir()
    current = dict(db.default_schema().migrations)
    for name in names:
        with open(current[db.RENAMED_MIGRATIONS.get(name, name)], encoding="utf-8") as f:
            (folder / name).write_text(f.read(), encoding="utf-8")
    return db.Schema(migrations_dir=str(folder), renamed={})


@pytest.mark.parametrize("made_by", ["release", "current"])
def test_an_earlier_release_still_opens_the_database_after_an_upgrade(
    release_db, tmp_path, made_by
):
    """A hook of the earlier release (a global install beside a newer copy) keeps working
    on a database the current release upgraded or created: nothing runs a second time."""
    release_names = sorted(recorded(release_db))
    path = release_db if made_by == "release" else str(tmp_path / "new.db")
    db.connect(path).close()
    snap = snapshot(path)
    names = recorded(path)

    conn = db.connect(path, schema=release_schema(tmp_path, release_names))
    conn.close()
    assert recorded(path) == names
    assert snapshot(path) == snap
    db.connect(path).close()  # and back to the current release, still nothing to run
    assert recorded(path) == names


# --- a database made by main before the unreleased migrations were squashed ---------------

MAIN_FIXTURE = os.path.join(os.path.dirname(FIXTURE), "main-before-squash.sql")


@pytest.fixture
def main_db(tmp_path):
    path = str(tmp_path / "main.db")
    with open(MAIN_FIXTURE, encoding="utf-8") as f:
        script = f.read()
    raw = sqlite3.connect(path)
    raw.executescript(script)
    raw.close()
    os.chmod(path, 0o600)
    return path


def table_columns(path):
    """``{table: [column, ...]}`` of every table but the migrations table and the planner's."""
    raw = sqlite3.connect(path)
    try:
        names = [
            r[0]
            for r in raw.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name NOT LIKE 'sqlite_%' AND name != ?",
                (db.MIGRATIONS_TABLE,),
            )
        ]
        return {n: [r[1] for r in raw.execute(f'PRAGMA table_xinfo("{n}")')] for n in names}
    finally:
        raw.close()


def every_row(path, columns=None):
    """``{table: sorted rows}`` of the tables ``table_columns`` lists.

    With ``columns`` (from ``table_columns`` of an earlier state), only those tables and
    columns: what a later migration adds is left out of the comparison.
    """
    columns = columns if columns is not None else table_columns(path)
    raw = sqlite3.connect(path)
    try:
        return {
            t: sorted(
                raw.execute(
                    "SELECT " + ", ".join(f'"{c}"' for c in cols) + f' FROM "{t}"'
                ).fetchall(),
                key=repr,
            )
            for t, cols in columns.items()
        }
    finally:
        raw.close()


def test_the_main_fixture_recorded_every_squashed_migration_and_not_the_squash(main_db):
    names = recorded(main_db)
    for squash, parts in db.SQUASHED_MIGRATIONS.items():
        assert set(parts) <= set(names) and squash not in names
    rows = every_row(main_db)
    for table in ("deletions", "tombstones", "developer_preferences", "merge_sources"):
        assert rows[table], table


def test_a_main_database_upgrades_without_running_the_squash_and_keeps_every_row(main_db):
    before_names = recorded(main_db)
    before = every_row(main_db)
    columns = table_columns(main_db)
    # The rollups' feeds (never holding a row) are gone since 0020: the declared rollups'
    # triggers write the totals themselves.
    for feed in [t for t in columns if t.endswith("_feed") and t.startswith("rollup_")]:
        assert before.pop(feed) == []
        del columns[feed]
    # Auto-decided answers move no profile dimension any more (their answers are kept
    # apart): the profile rollup is refilled, its counts (profile_totals) unchanged.
    for moved in ("profile_answers", "profile_sums"):
        before.pop(moved)
        del columns[moved]
    conn = seeded_db.connect(main_db)
    after_names = recorded(main_db)
    assert sorted(after_names) == upgraded_names()
    for name, applied_at in before_names.items():
        assert after_names[name] == applied_at, name
    for squash, parts in db.SQUASHED_MIGRATIONS.items():
        # Counted applied when its last part was: it did not run.
        assert after_names[squash] == max(before_names[p] for p in parts)
    after = every_row(main_db, columns)
    assert after == before
    # One new event adds one to every total: each trigger is there exactly once.
    logged = conn.execute("SELECT count(*) FROM question_log").fetchone()[0]
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO question_log (event_key, project, ts, skill, question_id,"
            " question_summary, user_choice, source, phase, raw_json, recorded_at)"
            " VALUES ('upgrade-test-2', 'acme-web', '2026-11-01T09:00:00.000Z', 'ship',"
            " 'ship-todos-create', 'Create TODOS.md?', 'accept', 'agent', 'eng', '{}',"
            " '2026-11-01T09:00:00.000Z')"
        )
    assert conn.execute("SELECT sum(events) FROM rollup_day").fetchone()[0] == logged + 1
    assert_rollups_exact(conn)
    for name, _ in db.default_schema().views:
        conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()
    conn.close()
    seeded_db.connect(main_db).close()  # again: nothing to do
    assert sorted(recorded(main_db)) == upgraded_names()


def test_every_path_to_the_current_schema_gives_the_same_schema(main_db, release_db, tmp_path):
    """A new database, an upgraded 0.1.0 one and an upgraded main one: the same tables,
    indexes, triggers and views, and the same planted statistics."""

    def schema(path):
        seeded_db.connect(path).close()
        return (
            set(query(path, "SELECT type, name, tbl_name, sql FROM sqlite_master")),
            set(query(path, "SELECT * FROM sqlite_stat1 WHERE stat LIKE '1000000 %'")),
        )

    new = schema(str(tmp_path / "new.db"))
    assert schema(main_db) == new
    assert schema(release_db) == new


def test_a_database_with_only_some_squashed_migrations_is_refused_untouched(main_db):
    (squash, parts), *_ = db.SQUASHED_MIGRATIONS.items()
    raw = sqlite3.connect(main_db)
    with raw:
        raw.execute(f"DELETE FROM {db.MIGRATIONS_TABLE} WHERE name = ?", (parts[-1],))
    raw.close()
    before = recorded(main_db)
    with pytest.raises(db.DatabaseError) as e:
        seeded_db.connect(main_db)
    assert "development version" in str(e.value) and "\n" not in str(e.value)
    assert recorded(main_db) == before


def test_every_squashed_migration_is_gone_and_the_squash_is_a_file():
    names = set(current_names())
    for squash, parts in db.SQUASHED_MIGRATIONS.items():
        assert squash in names
        assert not names & set(parts)
