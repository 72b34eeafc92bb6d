"""`plantune guidance promote`: what holds in 3 projects or developers is proposed (with its
evidence) as a global preference or a registry addition, applied only by `guidance apply`,
and a one-way question is never proposed as never-ask."""

import json
import sqlite3

import pytest

from tests.helpers import query
from tests.helpers.team import invoke, ok
from toolkit.store import db

TWO_WAY = "ship-pre-landing-review-fix"
ONE_WAY = "ship-test-failure-triage"
ADHOC_SAFE = "design-spacing-scale"
ADHOC_DANGER = "cleanup-orders-now"


def _person_db(path, developer, project, prefs, events=()):
    """One developer's database: preferences as if imported from their gstack files (which
    may hold anything a hand edit put there), and a few real events."""
    ok(["init", "--db", path])
    conn = sqlite3.connect(path)
    for qid, pref in prefs.items():
        conn.execute(
            "INSERT INTO preferences (scope, question_id, preference, source,"
            " updated_at, developer) VALUES (?, ?, ?, 'plan-tune', ?, ?)",
            (project, qid, pref, f"2026-11-0{1 + len(qid) % 8}T00:00:00Z", developer),
        )
    conn.commit()
    conn.close()
    for qid, summary in events:
        ok(
            [
                "log",
                json.dumps(
                    {
                        "skill": qid.split("-")[0],
                        "question_id": qid,
                        "question_summary": summary,
                        "user_choice": "yes",
                        "category": "approval",
                        "ts": "2026-11-02T00:00:00Z",
                    }
                ),
                "--project",
                project,
                "--db",
                path,
            ],
            developer=developer,
        )
    return path


@pytest.fixture
def team(tmp_path):
    paths = []
    for n, (dev, project) in enumerate(
        [("ann@x.io", "p1"), ("ben@x.io", "p2"), ("cat@x.io", "p3")]
    ):
        prefs = {TWO_WAY: "never-ask", ONE_WAY: "never-ask", ADHOC_DANGER: "never-ask"}
        if n == 2:
            prefs["plan-ceo-review-mode"] = "always-ask"
        else:
            prefs["plan-ceo-review-mode"] = "never-ask"
        events = [
            (ADHOC_SAFE, "Use the 4px spacing scale?"),
            (ADHOC_DANGER, "Drop the orders table and delete its backups?"),
        ]
        paths.append(_person_db(str(tmp_path / f"{dev}.db"), dev, project, prefs, events))
    team = str(tmp_path / "team.db")
    ok(["merge", *paths, "--db", team])
    return team


def promotion(team):
    return json.loads(ok(["guidance", "promote", "--db", team, "--json"]).output)


def test_promotion_proposes_what_holds_with_its_evidence(team):
    p = promotion(team)
    items = {i["id"]: i for i in p["items"]}
    pref = items[f"global-preference:{TWO_WAY}"]
    assert pref["preference"] == "never-ask" and pref["previous_preference"] is None
    holders = pref["evidence"]["holders"]
    assert {(h["project"], h["developer"]) for h in holders} == {
        ("p1", "ann@x.io"),
        ("p2", "ben@x.io"),
        ("p3", "cat@x.io"),
    }
    assert pref["evidence"]["projects"] == 3 and pref["evidence"]["developers"] == 3
    reg = items[f"registry-addition:{ADHOC_SAFE}"]
    assert reg["door_type"] == "two-way" and reg["evidence"]["projects"] == 3
    assert all(e["sample_event_key"] for e in reg["evidence"]["events"])
    # Disagreement is rejected with its reason, not proposed.
    rejected = {r["subject"]: r["reason"] for r in p["rejected"]}
    assert "disagree" in rejected["plan-ceo-review-mode"]
    # Nothing is applied by proposing.
    assert query(team, "SELECT count(*) FROM preferences WHERE scope = ?", (db.GLOBAL_SCOPE,)) == [
        (0,)
    ]
    assert query(team, "SELECT count(*) FROM registry_questions WHERE id = ?", (ADHOC_SAFE,)) == [
        (0,)
    ]


def test_one_way_questions_are_never_proposed_as_never_ask(team):
    p = promotion(team)
    for item in p["items"]:
        if item["preference"] in ("never-ask", "ask-only-for-one-way"):
            assert item["question_id"] not in (ONE_WAY, ADHOC_DANGER)
    rejected = {r["subject"]: r["reason"] for r in p["rejected"]}
    assert "one-way" in rejected[ONE_WAY]
    # An ad-hoc question the classifier calls one-way (from its summary, not a keyword in its
    # id) is rejected as never-ask and registered, if at all, as one-way.
    assert "one-way" in rejected[ADHOC_DANGER]
    reg = [i for i in p["items"] if i["question_id"] == ADHOC_DANGER]
    assert all(i["kind"] == "registry-addition" and i["door_type"] == "one-way" for i in reg)


def test_apply_sets_global_preferences_and_registry_rows_once(team):
    p = promotion(team)
    text = ok(["guidance", "apply", p["id"], "--db", team], developer="lead@x.io").output
    assert text.startswith(f"Applied promotion {p['id']}")
    assert query(
        team,
        "SELECT question_id, preference, source, developer FROM preferences WHERE scope = ?",
        (db.GLOBAL_SCOPE,),
    ) == [(TWO_WAY, "never-ask", "plan-tune", "lead@x.io")]
    assert query(
        team, "SELECT door_type, origin FROM registry_questions WHERE id = ?", (ADHOC_SAFE,)
    ) == [("two-way", "promoted")]
    again = invoke(["guidance", "apply", p["id"], "--db", team])
    assert again.exit_code == 1 and "is applied" in again.output
    # The next promotion has nothing left to propose for them.
    ids = {i["question_id"] for i in promotion(team)["items"]}
    assert TWO_WAY not in ids and ADHOC_SAFE not in ids


def test_apply_fails_closed_when_the_global_preference_moved(team):
    p = promotion(team)
    ok(["pref", "set", TWO_WAY, "always-ask", "--source", "plan-tune", "--global", "--db", team])
    before = query(team, "SELECT * FROM preferences ORDER BY 1, 2")
    result = invoke(["guidance", "apply", p["id"], "--db", team])
    assert result.exit_code == 1 and "changed after" in result.output
    assert query(team, "SELECT * FROM preferences ORDER BY 1, 2") == before
    assert query(team, "SELECT count(*) FROM registry_questions WHERE origin = 'promoted'") == [
        (0,)
    ]


def test_apply_refuses_a_question_that_became_one_way(team):
    p = promotion(team)
    # Facts arrive after the proposal: the question is now known one-way.
    conn = sqlite3.connect(team)
    conn.execute("UPDATE registry_questions SET door_type = 'one-way' WHERE id = ?", (TWO_WAY,))
    conn.commit()
    conn.close()
    result = invoke(["guidance", "apply", p["id"], "--db", team])
    assert result.exit_code == 1 and "nothing applied" in result.output
    assert query(team, "SELECT count(*) FROM preferences WHERE scope = ?", (db.GLOBAL_SCOPE,)) == [
        (0,)
    ]


def test_two_holders_are_not_enough(tmp_path):
    paths = [
        _person_db(str(tmp_path / f"{d}.db"), d, p, {TWO_WAY: "never-ask"})
        for d, p in (("ann@x.io", "p1"), ("ben@x.io", "p2"))
    ]
    team = str(tmp_path / "team.db")
    ok(["merge", *paths, "--db", team])
    p = promotion(team)
    assert p["items"] == []
    assert "Nothing to promote" in ok(["guidance", "promote", "--db", team]).output


def test_one_developer_in_three_projects_holds(tmp_path):
    path = str(tmp_path / "me.db")
    ok(["init", "--db", path])
    for project in ("p1", "p2", "p3"):
        ok(
            [
                "pref",
                "set",
                TWO_WAY,
                "never-ask",
                "--source",
                "plan-tune",
                "--project",
                project,
                "--db",
                path,
            ],
            developer="me@x.io",
        )
    text = ok(["guidance", "promote", "--db", path]).output
    assert f"global preference {TWO_WAY}: none -> never-ask (3 projects, 1 developers)" in text
