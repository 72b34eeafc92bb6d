"""`plantune merge` against hostile teammates' databases: plantune's own schema, then
hand-edited with sqlite3. Every attack is kept as a test, whether it ever worked or not."""

import json
import sqlite3

import pytest

from tests.helpers import query
from tests.helpers.team import ALICE, BOB, EVE, history, invoke, ok, rank, rows_of


@pytest.fixture(autouse=True)
def project(monkeypatch):
    monkeypatch.setenv("PLANTUNE_MIRROR", "0")
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", "proj-a")


def edit(path, *statements):
    conn = sqlite3.connect(path)
    with conn:
        for sql in statements:
            if isinstance(sql, tuple):
                conn.execute(*sql)
            else:
                conn.executescript(sql)
    conn.close()


def summaries(team, developer=ALICE):
    return sorted(
        r[0]
        for r in query(
            team, "SELECT question_summary FROM question_log WHERE developer = ?", (developer,)
        )
    )


def squat_events(victim, hostile):
    """Copy the victim's question and preference events into ``hostile`` under their
    keys, with altered content, attributed to the hostile database's own developer."""
    conn = sqlite3.connect(hostile)
    conn.execute("ATTACH DATABASE ? AS v", (victim,))
    with conn:
        for table in ("question_log", "preference_events"):
            cols = [r[1] for r in conn.execute(f"PRAGMA v.table_info({table})") if r[1] != "id"]
            names = ", ".join(cols)
            values = ", ".join(
                {
                    "developer": f"'{BOB}'",
                    "question_summary": "'forged ' || question_summary",
                    "raw_json": "json_set(raw_json, '$.user_choice', 'forged')",
                }.get(c, c)
                for c in cols
            )
            conn.execute(f"INSERT INTO {table} ({names}) SELECT {values} FROM v.{table}")
    conn.execute("DETACH DATABASE v")
    conn.close()


# ------------------------------------------------------------- (d) squatting event keys


def test_squatted_event_keys_merged_first_do_not_keep_the_owners_rows_out(tmp_path):
    alice = history(str(tmp_path / "alice.db"), ALICE)
    bob = history(str(tmp_path / "bob.db"), BOB)
    squat_events(alice, bob)
    team = str(tmp_path / "team.db")
    ok(["merge", bob, "--db", team])
    (report,) = json.loads(ok(["merge", alice, "--db", team, "--json"]).output)
    # Alice's question events win: Bob's copies do not hash to their keys.
    assert summaries(team) == summaries(alice)
    assert report["tables"]["question_log"]["replaced"] == len(summaries(alice))
    assert not query(team, "SELECT 1 FROM question_log WHERE question_summary LIKE 'forged%'")
    assert summaries(team, BOB) == [s for s in summaries(bob, BOB) if "forged" not in s]
    # A preference event records no content to check its key against: Bob's copy stays,
    # and Alice's is counted and reported, never dropped silently; her preference is hers.
    assert report["tables"]["preference_events"]["contested"] == 1
    assert rows_of(team, ALICE)["developer_preferences"] == 1
    text = ok(["merge", alice, "--db", team]).output
    assert "1 rows whose keys another developer's rows hold not merged (contested)" in text
    # Bob merging his forged copies again changes nothing.
    ok(["merge", bob, "--db", team])
    assert summaries(team) == summaries(alice)


def test_a_squatted_trace_run_or_calibration_key_is_counted_never_dropped_silently(tmp_path):
    alice = history(str(tmp_path / "alice.db"), ALICE)
    bob = history(str(tmp_path / "bob.db"), BOB)
    run = (
        "INSERT INTO trace_runs (run_id, project, session_id, created_at, guidance_mode)"
        " VALUES ('run-1', 'proj-a', 's1', '2026-10-01', 'propose')"
    )
    edit(alice, run)
    edit(bob, run)
    team = str(tmp_path / "team.db")
    ok(["merge", bob, "--db", team])
    (report,) = json.loads(ok(["merge", alice, "--db", team, "--json"]).output)
    assert report["tables"]["trace_runs"]["contested"] == 1
    assert report["contested"] >= 1


def test_a_finding_never_links_a_squatters_copy_of_its_answer(tmp_path):
    alice = history(str(tmp_path / "alice.db"), ALICE)
    team = str(tmp_path / "team.db")
    ok(["merge", alice, "--db", team])
    linked = query(
        team,
        "SELECT q.developer FROM findings f JOIN question_log q ON q.id = f.answer_event_id",
    )
    assert set(linked) <= {(ALICE,)}


# ------------------------------------------------------ (a), (c) deletes and resurrection


def test_a_team_shaped_hostile_database_deletes_nothing_of_another_developer(tmp_path):
    """Bob's database carries developer tombstones and developer-kind deletion records
    naming Alice, as a team database would: untrusted, they speak for Bob only."""
    alice = history(str(tmp_path / "alice.db"), ALICE)
    bob = history(str(tmp_path / "bob.db"), BOB)
    team = str(tmp_path / "team.db")
    ok(["merge", alice, "--db", team])
    before = rows_of(team, ALICE)
    keys = query(alice, "SELECT event_key FROM question_log")
    conn = sqlite3.connect(bob)
    with conn:
        conn.executemany(
            "INSERT INTO developer_tombstones (event_key, developer, kind, deleted_at)"
            " VALUES (?, ?, 'question-log', '2030-01-01T00:00:00.000Z')",
            [(k, d) for (k,) in keys for d in (ALICE, "")],
        )
        for kind in ("developer-preference", "developer-declared-profile", "declared-profile"):
            conn.execute(
                "INSERT OR IGNORE INTO deletions (kind, developer, k1, k2, deleted_at)"
                " VALUES (?, ?, 'proj-a', 'alice-q', '2030-01-01T00:00:00.000Z')",
                (kind, ALICE),
            )
    conn.close()
    ok(["merge", bob, "--db", team])
    assert rows_of(team, ALICE) == before
    assert query(team, "SELECT DISTINCT developer FROM developer_tombstones") == [(BOB,)]


def test_a_database_claiming_a_developer_brings_back_nothing_they_deleted(tmp_path):
    """Alice deletes everything; a copy of her old database, stripped of its deletes and
    merged as hers, brings none of it back (the team keeps her deletes)."""
    alice = history(str(tmp_path / "alice.db"), ALICE)
    old = str(tmp_path / "old.db")
    ok(["backup", old, "--db", alice])
    team = str(tmp_path / "team.db")
    ok(["merge", alice, "--db", team])
    ok(["profile", "delete", "--all", "--yes", "--db", alice], developer=ALICE)
    ok(["merge", alice, "--db", team])
    edit(
        old,
        "DELETE FROM tombstones; DELETE FROM deletions;"
        " UPDATE plantune_meta SET value = 'another-id' WHERE key = 'database_id';",
    )
    ok(["merge", old, "--db", team])
    # (profile delete keeps preferences: they are settings, not history)
    assert rows_of(team, ALICE) == {"question_log": 0, "findings": 0, "developer_preferences": 1}
    # Nor under Bob's name while still naming Alice: refused.
    result = invoke(["merge", old, "--developer", BOB, "--db", team, "--json"])
    assert json.loads(result.output)[0]["refused"] > 0
    assert rows_of(team, ALICE)["question_log"] == 0


# ----------------------------------------------------------------- (e) spelling identities


SPELLINGS = [
    "Alice@Example.com",
    "  alice@example.com\t",
    "mailto:alice@example.com",
    "alice@example.com.",
    "\uff41lice@example.com",  # full-width a
    "ali\u200bce@example.com",  # zero-width space
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_an_identity_spelled_otherwise_is_the_same_developer(tmp_path, spelling):
    """Merged once under another spelling, Alice's delete still reaches every copy."""
    alice = history(str(tmp_path / "alice.db"), ALICE)
    team = str(tmp_path / "team.db")
    (report,) = json.loads(
        ok(["merge", alice, "--developer", spelling, "--db", team, "--json"]).output
    )
    assert report["developer"] == ALICE and report["refused"] == 0
    edit(alice, ("UPDATE question_log SET developer = ?", (spelling,)))
    ok(["merge", alice, "--db", team])  # rows naming both spellings: one developer
    ok(["profile", "delete", "--all", "--yes", "--db", alice], developer=ALICE)
    ok(["merge", alice, "--db", team])
    assert query(team, "SELECT count(*) FROM question_log") == [(0,)]
    assert query(team, "SELECT DISTINCT developer FROM developer_tombstones") == [(ALICE,)]


@pytest.mark.parametrize("lookalike", ["\u0430lice@example.com", "alic\u0435@example.com"])
def test_a_look_alike_identity_is_refused(tmp_path, lookalike):
    """Eve's rows name Alice with a Cyrillic letter: refused, never a second 'Alice'."""
    eve = history(str(tmp_path / "eve.db"), EVE)
    edit(eve, ("UPDATE question_log SET developer = ?", (lookalike,)))
    edit(eve, ("UPDATE findings SET developer = ?", (lookalike,)))
    edit(eve, ("UPDATE preferences SET developer = ?", (lookalike,)))
    edit(eve, ("UPDATE preference_events SET developer = ?", (lookalike,)))
    team = str(tmp_path / "team.db")
    result = invoke(["merge", eve, "--db", team])
    assert result.exit_code == 1 and "not an identity" in result.output
    assert len(result.output.strip().splitlines()) == 1
    (report,) = json.loads(ok(["merge", eve, "--developer", EVE, "--db", team, "--json"]).output)
    assert report["refused"] > 0
    assert query(team, "SELECT DISTINCT developer FROM question_log") in ([], [(EVE,)])


# ------------------------------------------------ (f) office hours and developer profiles


def test_office_hours_and_profile_records_of_a_hostile_source_touch_only_its_own(tmp_path):
    alice = history(str(tmp_path / "alice.db"), ALICE)
    ok(["profile", "declare", "autonomy", "0.7", "--db", alice], developer=ALICE)
    session = (
        "INSERT INTO office_hours_sessions (session_key, ts, mode, raw_json, origin,"
        " recorded_at) VALUES ('oh-1', '2026-10-01T10:00:00Z', 'builder', '{}', 'test',"
        " '2026-10-01T10:00:00Z')"
    )
    edit(alice, session)
    bob = history(str(tmp_path / "bob.db"), BOB)
    team = str(tmp_path / "team.db")
    ok(["merge", alice, "--db", team])
    held = query(team, "SELECT session_key FROM office_hours_sessions")
    profile = query(team, "SELECT developer, dimension FROM developer_declared_profile")
    # Bob records deletes of Alice's session (by its key here and in her database) and of
    # her declared profile, and ships a team-shaped profile table naming Alice.
    edit(
        bob,
        (
            "INSERT INTO developer_declared_profile (developer, scope, dimension, value,"
            " source, synthetic, declared_at, merged_from) VALUES"
            " (?, '__global__', 'autonomy', 0.0, 'forged', 0, '2030-01-01T00:00:00Z', 1)",
            (ALICE,),
        ),
    )
    conn = sqlite3.connect(bob)
    with conn:
        for kind, k1, k2 in [
            ("office-hours", "oh-1", ""),
            ("office-hours", held[0][0], ""),
            ("declared-profile", "__global__", "autonomy"),
            ("developer-declared-profile", "__global__", "autonomy"),
        ]:
            conn.execute(
                "INSERT OR IGNORE INTO deletions (kind, developer, k1, k2, deleted_at)"
                " VALUES (?, ?, ?, ?, '2030-01-01T00:00:00.000Z')",
                (kind, ALICE, k1, k2),
            )
    conn.close()
    result = invoke(["merge", bob, "--db", team])
    assert result.exit_code == 1 and "several developers" in result.output
    (report,) = json.loads(ok(["merge", bob, "--developer", BOB, "--db", team, "--json"]).output)
    assert query(team, "SELECT session_key FROM office_hours_sessions") == held
    assert query(team, "SELECT developer, dimension FROM developer_declared_profile") == profile
    assert query(
        team, "SELECT value FROM developer_declared_profile WHERE developer = ?", (ALICE,)
    ) == [(0.7,)]
    assert report["refused"] >= 1


# ------------------------------------------------------------------- (g) schema tricks


def alice_in_team(tmp_path):
    alice = history(str(tmp_path / "alice.db"), ALICE)
    team = str(tmp_path / "team.db")
    ok(["merge", alice, "--db", team])
    return alice, team, rows_of(team, ALICE)


def held_one_line(result):
    """A merge that refused a source: exit 1, one line, no traceback."""
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert len(result.output.strip().splitlines()) == 1


def test_a_sources_triggers_never_run_into_the_team_database(tmp_path):
    """Triggers on every table a merge writes, named as the team's: they would wipe the
    team's rows if they ran there. A source is only read, so they never fire."""
    alice, team, before = alice_in_team(tmp_path)
    bob = history(str(tmp_path / "bob.db"), BOB)
    statements = []
    for table in (
        "merge_sources",
        "question_log",
        "findings",
        "developer_tombstones",
        "deletions",
        "developer_preferences",
        "preference_events",
    ):
        for event in ("INSERT", "DELETE", "UPDATE"):
            statements.append(
                f"CREATE TRIGGER evil_{table}_{event.lower()} AFTER {event} ON {table} BEGIN"
                " DELETE FROM question_log; DELETE FROM findings;"
                " DELETE FROM developer_preferences; END;"
            )
    edit(bob, "\n".join(statements))
    ok(["merge", bob, "--db", team])
    ok(["merge", bob, "--db", team])
    assert rows_of(team, ALICE) == before
    assert all(rows_of(team, BOB).values())


def test_views_in_place_of_a_sources_tables_are_not_read_as_its_tables(tmp_path):
    """Tombstones and deletion records as views naming Alice's keys: not tables, not
    read. A question log that is a view: not a plantune database."""
    alice, team, before = alice_in_team(tmp_path)
    bob = history(str(tmp_path / "bob.db"), BOB)
    edit(
        bob,
        f"ATTACH DATABASE '{alice}' AS v;"
        "CREATE TABLE keys AS SELECT event_key FROM v.question_log;"
        "DETACH DATABASE v;"
        "DROP TABLE tombstones; DROP TABLE developer_tombstones;"
        "CREATE VIEW tombstones AS SELECT event_key, 'question-log' AS kind,"
        " '2030-01-01T00:00:00.000Z' AS deleted_at FROM keys;"
        "CREATE VIEW developer_tombstones AS SELECT event_key, '' AS developer,"
        " 'question-log' AS kind, '2030-01-01T00:00:00.000Z' AS deleted_at FROM keys;",
    )
    ok(["merge", bob, "--db", team])
    assert rows_of(team, ALICE) == before
    edit(
        bob,
        "ALTER TABLE question_log RENAME TO question_log_real;"
        "CREATE VIEW question_log AS SELECT * FROM question_log_real;",
    )
    held_one_line(invoke(["merge", bob, "--db", team]))
    assert rows_of(team, ALICE) == before


def test_a_temp_trigger_planted_in_a_sources_schema_never_reaches_the_team(tmp_path):
    """sqlite_master hand-edited to hold a TEMP trigger on the team's tables: the source
    is refused or its trigger stays inert; the team database is untouched."""
    alice, team, before = alice_in_team(tmp_path)
    bob = history(str(tmp_path / "bob.db"), BOB)
    conn = sqlite3.connect(bob)
    conn.execute("PRAGMA writable_schema = ON")
    with conn:
        conn.execute(
            "INSERT INTO sqlite_master (type, name, tbl_name, rootpage, sql) VALUES"
            " ('trigger', 'evil', 'question_log', 0, 'CREATE TEMP TRIGGER evil AFTER INSERT"
            " ON main.question_log BEGIN DELETE FROM main.question_log; END')"
        )
    conn.close()
    result = invoke(["merge", bob, "--db", team])
    if result.exit_code:
        held_one_line(result)
    assert rows_of(team, ALICE) == before
    ok(["merge", alice, "--db", team])
    assert rows_of(team, ALICE) == before


# ---------------------------------------------------------------- (h) malformed values


def loosen(path, table):
    """Replace ``table`` by a copy without any constraint (NOT NULL, types, keys)."""
    edit(
        path,
        f"ALTER TABLE {table} RENAME TO {table}_strict;"
        f"CREATE TABLE {table} AS SELECT * FROM {table}_strict;",
    )


MALFORMED = {
    "null developer": ("question_log", "UPDATE question_log SET developer = NULL"),
    "integer developer": ("question_log", "UPDATE question_log SET developer = 42"),
    "blob developer": ("question_log", "UPDATE question_log SET developer = x'616c696365'"),
    "null event key": ("question_log", "UPDATE question_log SET event_key = NULL"),
    "integer event key": ("preference_events", "UPDATE preference_events SET event_key = 7"),
    "huge text": (
        "question_log",
        "UPDATE question_log SET question_summary = printf('%.*c', 4000000, 'x')",
    ),
    "null tombstone key": (
        "tombstones",
        "INSERT INTO tombstones VALUES (NULL, 'question-log', '2030-01-01T00:00:00Z')",
    ),
    "garbage deletion time": (
        "deletions",
        "INSERT INTO deletions VALUES ('finding', 'x', 'alice-s', 'alice-f', 'not a time')",
    ),
    "null deletion key": (
        "deletions",
        "INSERT INTO deletions VALUES ('finding', '', 'alice-s', NULL, NULL)",
    ),
    "null finding ids": ("findings", "UPDATE findings SET session_id = NULL, finding_id = NULL"),
    "text preference time": ("preferences", "UPDATE preferences SET updated_at = 'soon'"),
}


# A source whose deletes cannot be read is refused whole: merging its rows without them
# could bring back what it deleted. Other malformed rows are refused or skipped one by one.
REFUSED = ("null tombstone key", "null deletion key")


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_values_in_a_source_never_touch_another_developers_rows(tmp_path, case):
    alice, team, before = alice_in_team(tmp_path)
    bob = history(str(tmp_path / "bob.db"), BOB)
    table, sql = MALFORMED[case]
    loosen(bob, table)
    edit(bob, sql)
    result = invoke(["merge", bob, "--developer", BOB, "--db", team])
    if case in REFUSED:
        held_one_line(result)
        assert "malformed rows" in result.output and "nothing merged" in result.output
        assert rows_of(team, BOB) == {t: 0 for t in before}
    else:
        assert result.exit_code == 0, result.output
    assert rows_of(team, ALICE) == before
    ok(["merge", alice, "--db", team])
    assert rows_of(team, ALICE) == before


def test_one_spelling_per_identity():
    from toolkit.core import identity

    for spelling in SPELLINGS:
        assert identity.normalise(spelling) == ALICE
        assert identity.normalise(identity.normalise(spelling)) == ALICE
    assert identity.same_script("jürgen@example.de") and identity.same_script(ALICE)
    assert not identity.same_script("\u0430lice@example.com")
    for bad in ("", " . ", "mailto:", "a\x85b@example.com"):
        with pytest.raises(identity.IdentityError):
            identity.normalise(bad)


def test_a_squatted_finding_is_counted_for_its_owner(tmp_path):
    """Bob ranks a finding under Alice's session and finding ids and merges first: Alice's
    finding cannot be added beside it, and her merge says so."""
    alice = history(str(tmp_path / "alice.db"), ALICE)
    bob = str(tmp_path / "bob.db")
    ok(["init", "--db", bob])
    rank(bob, BOB, "alice-s", "alice-f")
    team = str(tmp_path / "team.db")
    ok(["merge", bob, "--db", team])
    (report,) = json.loads(ok(["merge", alice, "--db", team, "--json"]).output)
    assert report["tables"]["findings"]["contested"] == 1


# ----------------------------------------------- (a) a source claiming another's database id


def test_a_source_claiming_anothers_database_id_removes_and_changes_nothing_of_theirs(tmp_path):
    """Bob copies Alice's database id and drops his deletion records (as a database from
    before them): what his database no longer holds is not Alice's to lose, and her trace
    run is not his to change."""
    alice = history(str(tmp_path / "alice.db"), ALICE)
    ok(["profile", "declare", "autonomy", "0.7", "--db", alice], developer=ALICE)
    run = (
        "INSERT INTO trace_runs (run_id, project, session_id, created_at, guidance_mode)"
        " VALUES ('run-1', 'proj-a', ?, '2026-10-01', 'propose')"
    )
    edit(alice, (run, ("alice-s",)))
    team = str(tmp_path / "team.db")
    ok(["merge", alice, "--db", team])
    tables = ("developer_preferences", "developer_declared_profile", "trace_runs")
    before = {t: query(team, f"SELECT * FROM {t} ORDER BY 1, 2") for t in tables}
    (dbid,) = query(alice, "SELECT value FROM plantune_meta WHERE key = 'database_id'")[0]
    bob = history(str(tmp_path / "bob.db"), BOB)
    edit(
        bob,
        ("UPDATE plantune_meta SET value = ? WHERE key = 'database_id'", (dbid,)),
        (run, ("forged",)),
        "DROP TABLE deletions;",
    )
    ok(["merge", bob, "--db", team])
    for t in tables:
        mine = [r for r in before[t] if ALICE in r]
        assert query(team, f"SELECT * FROM {t} WHERE developer = ? ORDER BY 1, 2", (ALICE,)) == mine
