"""`plantune merge` takes a source database as one developer's: a hostile source can
neither delete nor forge another developer's history in the team database."""

import json
import os
import random
import sqlite3

import pytest

from tests.helpers import query
from tests.helpers.team import ALICE, BOB, EVE, history, invoke, ok, rank, rows_of


@pytest.fixture(autouse=True)
def project(monkeypatch):
    monkeypatch.setenv("PLANTUNE_MIRROR", "0")
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", "proj-a")


def forge_deletes_of(victim_db, hostile_db):
    """Write into ``hostile_db`` a tombstone for every event of ``victim_db`` and a
    deletion record for each of its findings and preferences (as the victim's)."""
    keys = query(victim_db, "SELECT event_key FROM question_log")
    keys += query(victim_db, "SELECT event_key FROM preference_events")
    findings = query(victim_db, "SELECT session_id, finding_id FROM findings")
    prefs = query(victim_db, "SELECT developer, scope, question_id FROM preferences")
    conn = sqlite3.connect(hostile_db)
    with conn:
        conn.executemany(
            "INSERT OR IGNORE INTO tombstones (event_key, kind, deleted_at)"
            " VALUES (?, 'question-log', '2030-01-01T00:00:00.000Z')",
            keys,
        )
        for developer in ("", ALICE):
            conn.executemany(
                "INSERT OR IGNORE INTO deletions (kind, developer, k1, k2, deleted_at)"
                " VALUES ('finding', ?, ?, ?, '2030-01-01T00:00:00.000Z')",
                [(developer, s, f) for s, f in findings],
            )
        for kind in ("preference", "developer-preference", "preference-text"):
            conn.executemany(
                "INSERT OR IGNORE INTO deletions (kind, developer, k1, k2, deleted_at)"
                " VALUES (?, ?, ?, ?, '2030-01-01T00:00:00.000Z')",
                [(kind, d, s, q) for d, s, q in prefs],
            )
    conn.close()


def test_forged_tombstones_and_deletion_records_remove_nothing_of_another_developer(tmp_path):
    alice = history(str(tmp_path / "alice.db"), ALICE)
    bob = history(str(tmp_path / "bob.db"), BOB)
    team = str(tmp_path / "team.db")
    ok(["merge", alice, "--db", team])
    before = rows_of(team, ALICE)
    assert all(before.values())
    forge_deletes_of(alice, bob)
    ok(["merge", bob, "--db", team])
    assert rows_of(team, ALICE) == before
    assert all(rows_of(team, BOB).values())
    # Re-merging Alice's own database changes nothing: none of her rows was kept out.
    ok(["merge", alice, "--db", team])
    assert rows_of(team, ALICE) == before


def test_forged_deletes_merged_first_keep_nothing_of_another_developer_out(tmp_path):
    alice = history(str(tmp_path / "alice.db"), ALICE)
    bob = history(str(tmp_path / "bob.db"), BOB)
    forge_deletes_of(alice, bob)
    team = str(tmp_path / "team.db")
    ok(["merge", bob, "--db", team])
    ok(["merge", alice, "--db", team])
    assert rows_of(team, ALICE) == {
        "question_log": query(alice, "SELECT count(*) FROM question_log")[0][0],
        "findings": 1,
        "developer_preferences": 1,
    }


def test_a_source_deletes_its_own_developers_rows_and_they_stay_deleted(tmp_path):
    alice = history(str(tmp_path / "alice.db"), ALICE)
    bob = history(str(tmp_path / "bob.db"), BOB)
    backup = str(tmp_path / "bob-backup.db")
    ok(["backup", backup, "--db", bob])
    team = str(tmp_path / "team.db")
    ok(["merge", alice, bob, "--db", team])
    ok(["profile", "delete", "--all", "--yes", "--db", bob], developer=BOB)
    ok(["merge", bob, "--db", team])
    assert rows_of(team, BOB)["question_log"] == rows_of(team, BOB)["findings"] == 0
    ok(["merge", backup, "--developer", BOB, "--db", team])
    assert rows_of(team, BOB)["question_log"] == rows_of(team, BOB)["findings"] == 0
    assert all(rows_of(team, ALICE).values())


def test_deleting_a_squatted_key_does_not_keep_its_owner_out(tmp_path):
    """Bob writes a finding under Alice's session and finding ids before Alice merges,
    then deletes it: Alice's own finding still arrives."""
    alice = history(str(tmp_path / "alice.db"), ALICE)
    bob = str(tmp_path / "bob.db")
    ok(["init", "--db", bob])
    rank(bob, BOB, "alice-s", "alice-f")
    team = str(tmp_path / "team.db")
    ok(["merge", bob, "--db", team])
    ok(["profile", "delete", "--all", "--yes", "--db", bob], developer=BOB)
    ok(["merge", bob, "--db", team])
    assert query(team, "SELECT count(*) FROM findings") == [(0,)]
    ok(["merge", alice, "--db", team])
    assert query(team, "SELECT developer FROM findings") == [(ALICE,)]


def test_rows_attributed_to_another_developer_are_refused_and_counted(tmp_path):
    bob = history(str(tmp_path / "bob.db"), BOB, n=4)
    conn = sqlite3.connect(bob)
    with conn:
        forged = conn.execute(
            "UPDATE question_log SET developer = ? WHERE id IN"
            " (SELECT id FROM question_log ORDER BY id LIMIT 2)",
            (ALICE,),
        ).rowcount
        conn.execute("UPDATE preferences SET developer = ?", (ALICE,))
    conn.close()
    team = str(tmp_path / "team.db")
    result = invoke(["merge", bob, "--db", team])
    assert result.exit_code == 1
    assert "several developers" in result.output and "--developer" in result.output
    assert len(result.output.strip().splitlines()) == 1
    result = ok(["merge", bob, "--developer", BOB, "--db", team, "--json"])
    (report,) = json.loads(result.output)
    assert report["developer"] == BOB
    assert report["refused"] == forged + 1
    assert report["tables"]["question_log"]["refused"] == forged
    assert report["tables"]["preferences"]["refused"] == 1
    assert rows_of(team, ALICE) == {"question_log": 0, "findings": 0, "developer_preferences": 0}
    assert query(team, "SELECT DISTINCT developer FROM question_log") == [(BOB,)]
    text = ok(["merge", bob, "--developer", BOB, "--db", team]).output
    assert f"{forged + 1} rows attributed to another developer refused" in text


def test_a_database_naming_only_another_developer_speaks_for_them_only(tmp_path):
    """--developer names whom a source speaks for: rows naming anyone else never merge."""
    eve = history(str(tmp_path / "eve.db"), EVE)
    team = str(tmp_path / "team.db")
    result = ok(["merge", eve, "--developer", ALICE, "--db", team, "--json"])
    (report,) = json.loads(result.output)
    assert report["tables"]["question_log"]["added"] == 0
    assert report["refused"] > 0
    assert query(team, "SELECT count(*) FROM question_log") == [(0,)]


def test_a_team_database_as_a_source_needs_trust_said_loudly(tmp_path):
    alice = history(str(tmp_path / "alice.db"), ALICE)
    bob = history(str(tmp_path / "bob.db"), BOB)
    team, org = str(tmp_path / "team.db"), str(tmp_path / "org.db")
    ok(["merge", alice, bob, "--db", team])
    result = invoke(["merge", team, "--db", org])
    assert result.exit_code == 1 and "--trust-attribution" in result.output
    result = ok(["merge", team, "--trust-attribution", "--db", org])
    assert "warning: --trust-attribution" in result.stderr
    for developer in (ALICE, BOB):
        assert rows_of(org, developer) == rows_of(team, developer)
    # A delete in the trusted team database reaches the organisation's copies of everyone.
    ok(["profile", "delete", "--all", "--yes", "--db", team])
    ok(["merge", team, "--trust-attribution", "--db", org])
    for developer in (ALICE, BOB):
        assert rows_of(org, developer)["question_log"] == 0
        assert rows_of(org, developer)["findings"] == 0
    # ... and keeps them out when a developer's own database comes again.
    ok(["merge", alice, "--db", org])
    assert rows_of(org, ALICE)["question_log"] == 0


def test_a_source_whose_deletes_name_no_developer_is_refused(tmp_path):
    lone = str(tmp_path / "lone.db")
    ok(["init", "--db", lone])
    conn = sqlite3.connect(lone)
    with conn:
        conn.execute(
            "INSERT INTO tombstones (event_key, kind, deleted_at)"
            " VALUES ('0' , 'question-log', '2030-01-01T00:00:00.000Z')"
        )
    conn.close()
    team = str(tmp_path / "team.db")
    result = invoke(["merge", lone, "--db", team])
    assert result.exit_code == 1
    assert "deletes cannot be attributed" in result.output
    ok(["merge", lone, "--developer", BOB, "--db", team])
    assert query(team, "SELECT developer FROM developer_tombstones") == [(BOB,)]
    assert query(team, "SELECT count(*) FROM tombstones") == [(0,)]


def test_a_developers_delete_reaches_a_team_of_teams_for_that_developer_only(tmp_path):
    alice = history(str(tmp_path / "alice.db"), ALICE)
    bob = history(str(tmp_path / "bob.db"), BOB)
    team, org = str(tmp_path / "team.db"), str(tmp_path / "org.db")
    ok(["merge", alice, bob, "--db", team])
    ok(["merge", team, "--trust-attribution", "--db", org])
    bob_rows = rows_of(org, BOB)
    ok(["profile", "delete", "--all", "--yes", "--db", alice], developer=ALICE)
    ok(["merge", alice, "--db", team])
    ok(["merge", team, "--trust-attribution", "--db", org])
    assert rows_of(org, ALICE)["question_log"] == rows_of(org, ALICE)["findings"] == 0
    assert rows_of(org, BOB) == bob_rows
    assert query(org, "SELECT DISTINCT developer FROM developer_tombstones") == [(ALICE,)]


# ---------------------------------------------------------------- property: a hostile teammate


def alice_rows(path):
    """What a database holds of Alice's, by content: events, findings, preferences."""
    table = "developer_preferences" if "team" in os.path.basename(path) else "preferences"
    return (
        set(query(path, "SELECT question_summary FROM question_log WHERE developer = ?", (ALICE,))),
        set(query(path, "SELECT finding_id FROM findings WHERE developer = ?", (ALICE,))),
        set(query(path, f"SELECT question_id FROM {table} WHERE developer = ?", (ALICE,))),
    )


def forge_copies_of(victim_db, hostile_db):
    """Copy the victim's events and preferences into ``hostile_db``, still naming the victim."""
    conn = sqlite3.connect(hostile_db)
    conn.execute("ATTACH DATABASE ? AS v", (victim_db,))
    with conn:
        columns = [r[1] for r in conn.execute("PRAGMA v.table_info(question_log)") if r[1] != "id"]
        names = ", ".join(columns)
        conn.execute(
            f"INSERT OR IGNORE INTO question_log ({names}) SELECT {names} FROM v.question_log"
        )
        columns = [r[1] for r in conn.execute("PRAGMA v.table_info(preferences)")]
        names = ", ".join(columns)
        conn.execute(
            f"INSERT OR IGNORE INTO preferences ({names}) SELECT {names} FROM v.preferences"
        )
    conn.execute("DETACH DATABASE v")
    conn.close()


@pytest.mark.parametrize("seed", range(3))
def test_no_hostile_teammate_changes_what_the_team_holds_of_another(tmp_path, seed):
    rng = random.Random(seed)
    alice, bob = str(tmp_path / "alice.db"), str(tmp_path / "bob.db")
    team = str(tmp_path / "team.db")
    for path in (alice, bob):
        ok(["init", "--db", path])
    expected, n, log = (set(), set(), set()), 0, []
    for _ in range(25):
        op = rng.choice(["write", "write", "delete", "merge", "forge", "bob"])
        log.append(op)
        n += 1
        if op == "write":
            kind = rng.choice(["q", "f", "p"])
            if kind == "q":
                event = {
                    "skill": "plan-eng-review",
                    "question_id": "plan-eng-review-q0",
                    "question_summary": f"alice question {n}?",
                    "user_choice": "a",
                    "session_id": f"alice-{n}",
                    "ts": "2026-10-01T10:00:00Z",
                }
                ok(["log", json.dumps(event), "--db", alice], developer=ALICE)
            elif kind == "f":
                rank(alice, ALICE, f"alice-{n}", f"alice-f{n}")
            else:
                ok(
                    [
                        "pref",
                        "set",
                        f"alice-q{n}",
                        "never-ask",
                        "--source",
                        "plan-tune",
                        "--db",
                        alice,
                    ],
                    developer=ALICE,
                )
        elif op == "delete":
            ok(["profile", "delete", "--all", "--yes", "--db", alice], developer=ALICE)
        elif op == "merge":
            ok(["merge", alice, "--db", team])
            expected = alice_rows(alice)
        elif op == "forge":
            forge_deletes_of(alice, bob)
            forge_copies_of(alice, bob)
        else:
            rank(bob, BOB, f"bob-{n}", f"bob-f{n}")
            ok(["merge", bob, "--developer", BOB, "--db", team])
        if os.path.exists(team):
            team_rows = alice_rows(team)
            assert team_rows == expected, (seed, log)
