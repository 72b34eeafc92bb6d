"""`plantune merge` never brings deleted data back: whichever database deleted it, and
whatever the order of merges, backups and deletes."""

import json
import os
import random
import sqlite3
from pathlib import Path

import pytest

from tests.helpers import query
from tests.helpers.team import ok
from tests.helpers.views import assert_rollups_exact
from toolkit.store import db

ALICE, BOB = "alice@example.com", "bob@example.com"


@pytest.fixture(autouse=True)
def project(monkeypatch):
    monkeypatch.setenv("PLANTUNE_MIRROR", "0")
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", "proj-a")


def init(path):
    ok(["init", "--db", str(path)])
    return str(path)


def rank(path, n, developer=ALICE):
    findings = {
        "session_id": f"s{n}",
        "phase": "eng",
        "skill": "plan-eng-review",
        "findings": [
            {
                "id": f"f{n}",
                "summary": f"finding {n} summary",
                "severity": 1,
                "irreversibility": 1,
                "decision_matters": 1,
                "recommended": "fix",
                "options": ["fix", "skip"],
            }
        ],
    }
    ok(["pacing", "rank", "--db", path], input=json.dumps(findings), developer=developer)


def log(path, n, developer=ALICE):
    event = {
        "skill": "plan-eng-review",
        "question_id": "plan-eng-review-q0",
        "question_summary": f"Question number {n}?",
        "user_choice": "a",
        "recommended": "a",
        "session_id": f"s{n}",
        "phase": "eng",
        "category": "clarification",
        "ts": "2026-10-01T10:00:00Z",
    }
    ok(["log", json.dumps(event), "--db", path], developer=developer)


def office_hours(path, n):
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "INSERT INTO office_hours_sessions (session_key, ts, mode, raw_json, origin,"
            " recorded_at, project_slug) VALUES (?, '2026-10-01T10:00:00Z', 'builder', ?, 't',"
            " ?, 'proj-a')",
            (f"oh-{n}", json.dumps({"private": f"notes {n} private"}), db.utc_now()),
        )
    conn.close()


def pref(path, n, developer=ALICE):
    ok(
        ["pref", "set", f"q-{n}", "never-ask", "--source", "plan-tune", "--db", path],
        developer=developer,
    )


def merge(source, team, developer=None):
    args = ["merge", source, "--db", team] + (["--developer", developer] if developer else [])
    return ok(args)


def delete_all(path, developer=ALICE):
    ok(["profile", "delete", "--all", "--yes", "--db", path], developer=developer)


def count(path, table):
    return query(path, f"SELECT count(*) FROM {table}")[0][0]


def check_rollups(path):
    conn = sqlite3.connect(path)
    try:
        assert_rollups_exact(conn)
    finally:
        conn.close()


def test_a_delete_in_the_team_database_holds_against_a_re_merge(tmp_path):
    alice, team = init(tmp_path / "alice.db"), init(tmp_path / "team.db")
    rank(alice, 1)
    log(alice, 1)
    office_hours(alice, 1)
    merge(alice, team)
    assert count(team, "findings") == count(team, "office_hours_sessions") == 1
    delete_all(team)
    merge(alice, team)
    for table in ("findings", "office_hours_sessions", "question_log"):
        assert count(team, table) == 0, table
    assert query(team, "SELECT count(*) FROM pacing_phase_counts") == [(0,)]
    check_rollups(team)
    data = Path(team).read_bytes()
    assert b"finding 1 summary" not in data and b"notes 1 private" not in data
    # Something new from the same source still arrives.
    rank(alice, 2)
    office_hours(alice, 2)
    merge(alice, team)
    assert query(team, "SELECT finding_id FROM findings") == [("f2",)]
    # (a merged copy's key names the merge source it came from)
    assert query(team, "SELECT session_key FROM office_hours_sessions") == [("merged:1:oh-2",)]
    check_rollups(team)


def test_an_older_backup_of_a_source_brings_nothing_deleted_back(tmp_path):
    a, team = init(tmp_path / "a.db"), init(tmp_path / "t2.db")
    backup = str(tmp_path / "a-backup.db")
    pref(a, 1)
    office_hours(a, 1)
    ok(["backup", backup, "--db", a])
    merge(a, team)
    assert count(team, "developer_preferences") == 1
    ok(["pref", "clear", "q-1", "--db", a], developer=ALICE)
    delete_all(a)
    merge(a, team)
    assert count(team, "developer_preferences") == count(team, "office_hours_sessions") == 0
    out = merge(backup, team).output
    assert "1 of 1 preference events" not in out
    assert count(team, "developer_preferences") == count(team, "office_hours_sessions") == 0
    assert b"notes 1 private" not in Path(team).read_bytes()


def test_what_a_source_deletes_leaves_the_team_database(tmp_path):
    alice, team = init(tmp_path / "alice.db"), init(tmp_path / "team.db")
    for n in (1, 2):
        rank(alice, n)
        log(alice, n)
        office_hours(alice, n)
    pref(alice, 1)
    merge(alice, team)
    assert count(team, "findings") == 2
    events = count(team, "question_log")
    assert events >= 2
    result = json.loads(ok(["merge", alice, "--db", team, "--json"]).output)
    assert result[0]["removed"] == 0
    delete_all(alice)
    result = json.loads(ok(["merge", alice, "--db", team, "--json"]).output)
    tables = result[0]["tables"]
    assert tables["question_log"]["removed"] == events
    assert tables["findings"]["removed"] == 2
    assert tables["office_hours_sessions"]["removed"] == 2
    for table in ("question_log", "findings", "office_hours_sessions"):
        assert count(team, table) == 0, table
    # Preferences are not part of a profile delete: they stay.
    assert count(team, "developer_preferences") == 1
    data = Path(team).read_bytes()
    for n in (1, 2):
        assert f"finding {n} summary".encode() not in data
        assert f"Question number {n}?".encode() not in data
        assert f"notes {n} private".encode() not in data
    check_rollups(team)


def test_a_preference_set_again_after_its_clear_is_merged(tmp_path):
    a, team = init(tmp_path / "a.db"), init(tmp_path / "team.db")
    backup = str(tmp_path / "backup.db")
    pref(a, 1)
    merge(a, team)
    ok(["backup", backup, "--db", a])
    ok(["pref", "clear", "q-1", "--db", a], developer=ALICE)
    merge(a, team)
    assert count(team, "developer_preferences") == 0
    ok(["pref", "set", "q-1", "always-ask", "--source", "plan-tune", "--db", a], developer=ALICE)
    merge(a, team)
    assert query(team, "SELECT developer, question_id, preference FROM developer_preferences") == [
        (ALICE, "q-1", "always-ask")
    ]
    # The older backup (never-ask) neither removes nor overrides the newer choice.
    merge(backup, team)
    assert query(team, "SELECT preference FROM developer_preferences") == [("always-ask",)]


def test_erased_preference_text_stays_erased_in_the_team_database(tmp_path):
    a, team = init(tmp_path / "a.db"), init(tmp_path / "team.db")
    backup = str(tmp_path / "backup.db")
    pref(a, 1)
    conn = sqlite3.connect(a)
    with conn:
        conn.execute("UPDATE preferences SET free_text = 'my private reason'")
    conn.close()
    merge(a, team)
    assert query(team, "SELECT free_text FROM developer_preferences") == [("my private reason",)]
    ok(["backup", backup, "--db", a])
    delete_all(a)
    assert query(a, "SELECT free_text FROM preferences") == [(None,)]
    merge(a, team)
    assert query(team, "SELECT free_text FROM developer_preferences") == [(None,)]
    merge(backup, team)
    assert query(team, "SELECT free_text, preference FROM developer_preferences") == [
        (None, "never-ask")
    ]
    assert b"my private reason" not in Path(team).read_bytes()


def test_deletions_reach_a_team_of_teams(tmp_path):
    a, team, org = init(tmp_path / "a.db"), init(tmp_path / "team.db"), init(tmp_path / "org.db")
    rank(a, 1)
    pref(a, 1)
    merge(a, team)
    merge(team, org)
    assert count(org, "findings") == count(org, "developer_preferences") == 1
    ok(["pref", "clear", "q-1", "--db", a], developer=ALICE)
    delete_all(a)
    merge(a, team)
    merge(team, org)
    assert count(org, "findings") == count(org, "developer_preferences") == 0


# ---------------------------------------------------------------- property


class World:
    """Two developers' databases, their backups and a team database, with what each one
    should hold: rows are markers (kind, n), each written once."""

    def __init__(self, tmp_path, rng):
        self.tmp, self.rng, self.n = tmp_path, rng, 0
        self.team = init(tmp_path / "team.db")
        self.sources = {dev: init(tmp_path / f"{dev.split('@')[0]}.db") for dev in (ALICE, BOB)}
        self.present = {dev: set() for dev in self.sources}
        self.deleted = {dev: set() for dev in self.sources}
        self.backups = []
        self.team_present, self.team_deleted = set(), set()
        self.log = []

    def write(self, dev):
        self.n += 1
        path, kind = self.sources[dev], self.rng.choice(["f", "q", "oh", "p"])
        {
            "f": lambda: rank(path, self.n, dev),
            "q": lambda: log(path, self.n, dev),
            "oh": lambda: office_hours(path, self.n),
            "p": lambda: pref(path, self.n, dev),
        }[kind]()
        self.present[dev].add((kind, self.n))

    def clear_pref(self, dev):
        prefs = sorted(m for m in self.present[dev] if m[0] == "p")
        if prefs:
            m = self.rng.choice(prefs)
            ok(["pref", "clear", f"q-{m[1]}", "--db", self.sources[dev]], developer=dev)
            self.present[dev].discard(m)
            self.deleted[dev].add(m)

    def delete_source(self, dev):
        delete_all(self.sources[dev], dev)
        gone = {m for m in self.present[dev] if m[0] != "p"}
        self.present[dev] -= gone
        self.deleted[dev] |= gone

    def delete_team(self):
        delete_all(self.team)
        # Merged preferences are (developer, marker): a profile delete keeps them.
        gone = {m for m in self.team_present if m[0] in ("f", "q", "oh")}
        self.team_present -= gone
        self.team_deleted |= gone

    def backup(self, dev):
        path = str(self.tmp / f"backup-{len(self.backups)}.db")
        ok(["backup", path, "--db", self.sources[dev]])
        self.backups.append((dev, path, set(self.present[dev]), set(self.deleted[dev])))

    def merge(self, dev, path, present, deleted):
        merge(path, self.team, developer=dev)
        self.team_deleted |= deleted
        self.team_present |= {(dev, m) if m[0] == "p" else m for m in present}
        self.team_present = {
            m
            for m in self.team_present
            if m not in self.team_deleted and m[1] not in self.team_deleted
        }

    def step(self):
        dev = self.rng.choice(sorted(self.sources))
        op = self.rng.choices(
            ["write", "clear", "delete", "team-delete", "backup", "merge", "merge-backup"],
            [6, 1, 1, 1, 2, 3, 2],
        )[0]
        self.log.append(f"{op} {dev}")
        if op == "write":
            self.write(dev)
        elif op == "clear":
            self.clear_pref(dev)
        elif op == "delete":
            self.delete_source(dev)
        elif op == "team-delete":
            self.delete_team()
        elif op == "backup":
            self.backup(dev)
        elif op == "merge":
            self.merge(dev, self.sources[dev], self.present[dev], self.deleted[dev])
        elif self.backups:
            self.merge(*self.rng.choice(self.backups))

    def team_rows(self):
        rows = set()
        for (summary,) in query(self.team, "SELECT summary FROM findings"):
            rows.add(("f", int(summary.split()[1])))
        for (summary,) in query(
            self.team,
            "SELECT question_summary FROM question_log"
            " WHERE question_summary LIKE 'Question number %'",
        ):
            rows.add(("q", int(summary.rstrip("?").split()[-1])))
        for (key,) in query(self.team, "SELECT session_key FROM office_hours_sessions"):
            rows.add(("oh", int(key.split("-")[1])))
        for dev, qid in query(
            self.team, "SELECT developer, question_id FROM developer_preferences"
        ):
            rows.add((dev, ("p", int(qid.split("-")[1]))))
        return rows


def _run_world(tmp_path, seed, steps):
    rng = random.Random(seed)
    world = World(tmp_path, rng)
    for _ in range(steps):
        world.step()
        assert world.team_rows() == world.team_present, (seed, world.log)
    check_rollups(world.team)
    # A deleted row's text is not left in the team database's file.
    data = Path(world.team).read_bytes()
    for kind, n in world.team_deleted:
        if kind == "f":
            assert f"finding {n} summary".encode() not in data, (seed, world.log)
        elif kind == "oh":
            assert f"notes {n} private".encode() not in data, (seed, world.log)


@pytest.mark.parametrize("seed", range(3))
def test_no_order_of_merges_backups_and_deletes_brings_a_deleted_row_back(tmp_path, seed):
    _run_world(tmp_path, seed, 30)


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("PLANTUNE_SLOW"),
    reason="twelve longer histories; set PLANTUNE_SLOW=1 to run",
)
@pytest.mark.parametrize("seed", range(3, 15))
def test_no_order_brings_a_deleted_row_back_long_runs(tmp_path, seed):
    _run_world(tmp_path, seed, 60)


def test_every_kind_of_merged_row_stays_deleted(tmp_path):
    """Trace runs, guidance proposals, calibrations and the declared profile: deleted in
    the source, they leave the team database, and a backup from before brings none back."""
    a, team = init(tmp_path / "a.db"), init(tmp_path / "team.db")
    backup = str(tmp_path / "backup.db")
    pref(a, 1)
    ok(["profile", "declare", "autonomy", "0.7", "--db", a], developer=ALICE)
    now = db.utc_now()
    conn = sqlite3.connect(a)
    with conn:
        conn.execute(
            "INSERT INTO trace_runs (run_id, project, created_at, guidance_mode)"
            " VALUES ('run-1', 'proj-a', ?, 'propose')",
            (now,),
        )
        conn.execute(
            "INSERT INTO guidance_proposals (id, project, run_id, created_at)"
            " VALUES ('prop-1', 'proj-a', 'run-1', ?)",
            (now,),
        )
        conn.execute(
            "INSERT INTO calibrations (project, created_at, target, threshold, tie_fraction,"
            " score_function, n_findings, developer) VALUES ('proj-a', ?, 0.2, 4, 0, 'sum', 10,"
            " ?)",
            (now, ALICE),
        )
    conn.close()
    merge(a, team)
    tables = ("trace_runs", "guidance_proposals", "calibrations", "developer_declared_profile")
    assert [count(team, t) for t in tables] == [1, 1, 1, 1]
    ok(["backup", backup, "--db", a])
    conn = sqlite3.connect(a)
    with conn:
        for table in ("guidance_proposals", "trace_runs", "calibrations", "declared_profile"):
            conn.execute(f"DELETE FROM {table}")
    conn.close()
    merge(a, team)
    assert [count(team, t) for t in tables] == [0, 0, 0, 0]
    merge(backup, team)
    assert [count(team, t) for t in tables] == [0, 0, 0, 0]
    # Declaring again afterwards is newer than the delete: it is merged.
    ok(["profile", "declare", "autonomy", "0.4", "--db", a], developer=ALICE)
    merge(a, team)
    assert query(team, "SELECT dimension, value FROM developer_declared_profile") == [
        ("autonomy", 0.4)
    ]
