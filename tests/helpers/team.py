"""Databases for the team tests: developers' histories (simulated and real rows) and a
team database merged from them."""

import json
import os

from click.testing import CliRunner

from tests.helpers import query
from toolkit.cli.app import cli
from toolkit.core import identity


def invoke(args, input=None, developer=None):
    """Run a plantune command in-process as ``developer`` (identity reset afterwards)."""
    identity.reset()
    if developer:
        identity.set_developer(developer)
    try:
        return CliRunner().invoke(cli, args, input=input)
    finally:
        identity.reset()


def ok(args, input=None, developer=None):
    result = invoke(args, input, developer)
    assert result.exit_code == 0, result.output
    return result


def real_rows(db, developer, project, n=6, session="s-real"):
    """A few real (non-simulated) question events, findings and a preference."""
    old = os.environ.get("GSTACK_PROJECT_SLUG")
    os.environ["GSTACK_PROJECT_SLUG"] = project
    try:
        _real_rows(db, developer, project, n, session)
    finally:
        if old is None:
            del os.environ["GSTACK_PROJECT_SLUG"]
        else:
            os.environ["GSTACK_PROJECT_SLUG"] = old


def _real_rows(db, developer, project, n, session):
    for i in range(n):
        event = {
            "skill": "plan-eng-review",
            "question_id": f"plan-eng-review-q{i % 3}",
            "question_summary": f"Real question {i}?",
            "user_choice": "a",
            "recommended": "a" if i % 2 else "b",
            "session_id": session,
            "phase": "eng",
            "category": "clarification",
            "ts": f"2026-10-0{1 + i % 5}T10:00:0{i}Z",
        }
        ok(["log", json.dumps(event), "--db", db], developer=developer)
    findings = {
        "session_id": session,
        "phase": "eng",
        "skill": "plan-eng-review",
        "findings": [
            {
                "id": f"{project}-f{i}",
                "summary": f"finding {i}",
                "severity": i % 3,
                "irreversibility": (i + 1) % 3,
                "decision_matters": 1,
                "recommended": "fix",
                "options": ["fix", "skip"],
            }
            for i in range(8)
        ],
    }
    ok(["pacing", "rank", "--db", db], input=json.dumps(findings), developer=developer)
    ok(
        ["pref", "set", "plan-eng-review-q0", "never-ask", "--source", "plan-tune", "--db", db],
        developer=developer,
    )


def developer_db(path, developer, seed, project="proj-a", days=6, real=True):
    ok(
        ["simulate", "--days", str(days), "--seed", str(seed), "--end", "2026-11-20", "--db", path],
        developer=developer,
    )
    if real:
        real_rows(path, developer, project)
    return path


def team_db(tmp_path):
    """alice and bob, each with a history; merged into team.db. Returns the paths."""
    a = developer_db(str(tmp_path / "alice.db"), "alice@example.com", 1)
    b = developer_db(str(tmp_path / "bob.db"), "Bob@Example.com", 2, project="proj-b")
    team = str(tmp_path / "team.db")
    ok(["merge", a, b, "--db", team])
    return a, b, team


# Merge-trust helpers: three developers, a small history each, their rows in a team database.
ALICE, BOB, EVE = "alice@example.com", "bob@example.com", "eve@example.com"


def history(path, developer, n=3, tag=None):
    """A developer's own database: question events, a ranked finding, a preference."""
    tag = tag or developer.split("@")[0]
    ok(["init", "--db", path])
    for i in range(n):
        event = {
            "skill": "plan-eng-review",
            "question_id": "plan-eng-review-q0",
            "question_summary": f"{tag} question {i}?",
            "user_choice": "a",
            "session_id": f"{tag}-s",
            "phase": "eng",
            "ts": f"2026-10-01T10:00:0{i}Z",
        }
        ok(["log", json.dumps(event), "--db", path], developer=developer)
    rank(path, developer, f"{tag}-s", f"{tag}-f")
    ok(
        ["pref", "set", f"{tag}-q", "never-ask", "--source", "plan-tune", "--db", path],
        developer=developer,
    )
    return path


def rank(path, developer, session, finding):
    findings = {
        "session_id": session,
        "phase": "eng",
        "skill": "plan-eng-review",
        "findings": [
            {
                "id": finding,
                "summary": f"{finding} summary",
                "severity": 1,
                "irreversibility": 1,
                "decision_matters": 1,
                "recommended": "fix",
                "options": ["fix", "skip"],
            }
        ],
    }
    ok(["pacing", "rank", "--db", path], input=json.dumps(findings), developer=developer)


def rows_of(team, developer):
    """What the team database holds of ``developer``: every kind a merge copies."""
    return {
        t: query(team, f"SELECT count(*) FROM {t} WHERE developer = ?", (developer,))[0][0]
        for t in ("question_log", "findings", "developer_preferences")
    }
