"""Pacing sessions and chains close after PLANTUNE_PACING_TTL_MINUTES without activity.

A ranking that names an idle session or chain closes it (its rows move to an archived id,
nothing is deleted), starts afresh and says so; a replay inside the limit still replays.
"""

import json
import os
import subprocess
import time
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from tests.helpers import script
from toolkit.cli.app import cli
from toolkit.pacing import decisions
from toolkit.pacing import rank as pacing
from toolkit.pacing import request as pacing_request

PROJECT = "proj"
T0 = "2026-11-30T08:00:00.000Z"


def fnd(fid, s=2, i=1, d=2):
    return {
        "id": fid,
        "summary": f"Finding {fid}",
        "severity": s,
        "irreversibility": i,
        "decision_matters": d,
        "recommended": "fix-now",
        "options": ["fix-now", "defer"],
    }


def request(findings, session="s1", chain="c1", phase="eng", budget=2):
    return {
        "session_id": session,
        "chain_id": chain,
        "phase": phase,
        "budget": budget,
        "findings": findings,
    }


def at(minutes):
    """T0 plus ``minutes``, in the database's time format."""
    total = 8 * 60 + minutes
    day = 30 + total // (24 * 60)
    total %= 24 * 60
    return f"2026-11-{day:02d}T{total // 60:02d}:{total % 60:02d}:00.000Z"


def rank(conn, req, now):
    return pacing.rank(conn, json.loads(json.dumps(req)), PROJECT, now=now)


def rows(conn, table, where="1"):
    return [dict(r) for r in conn.execute(f"SELECT * FROM {table} WHERE {where} ORDER BY rowid")]


def test_epoch_ms_matches_the_calendar():
    for ts in (
        "1970-01-01T00:00:00.000Z",
        "2000-02-29T12:34:56.789Z",
        "2026-11-30T23:59:59Z",
        "2100-03-01T00:00:00.001Z",
    ):
        expected = datetime.fromisoformat(ts).astimezone(UTC)
        assert pacing._epoch_ms(ts) == round(expected.timestamp() * 1000)


def test_replay_within_the_limit_replays(conn):
    req = request([fnd("a"), fnd("b")])
    first = rank(conn, req, T0)
    again = pacing.rank(conn, json.loads(json.dumps(req)), PROJECT, now=at(119))
    assert again.replayed and again.output == first.output
    assert "expired" not in again.output and not again.notes


def test_replay_after_expiry_starts_a_fresh_chain_and_keeps_the_old_state(conn):
    req = request([fnd("a"), fnd("b"), fnd("c")], budget=2)
    first = rank(conn, req, T0)
    assert first.output["budget"]["remaining"] == 0
    before = rows(conn, "findings")

    later = rank(conn, req, at(121))
    out = later.output
    assert not later.replayed
    assert out["fresh_chain"] is True
    assert {(e["kind"], e["original_id"], e["archived_as"]) for e in out["expired"]} == {
        ("session", "s1", "s1~closed-1"),
        ("chain", "c1", "c1~closed-1"),
    }
    assert any("idle for 121 minutes" in n and "fresh chain" in n for n in later.notes)
    # A fresh budget: the new chain spends from zero again.
    assert out["budget"]["spent_before"] == 0 and out["budget"]["chain_budget"] == 2
    assert [s["id"] for s in out["surface"]] == [s["id"] for s in first.output["surface"]]

    # Nothing deleted: every old row is still there, unchanged but for its archived ids.
    old = rows(conn, "findings", "session_id = 's1~closed-1'")
    assert len(old) == len(before)
    for a, b in zip(before, old):
        assert a["chain_id"] == "c1" and b["chain_id"] == "c1~closed-1"
        assert {k: v for k, v in a.items() if k not in ("session_id", "chain_id")} == {
            k: v for k, v in b.items() if k not in ("session_id", "chain_id")
        }
    assert len(rows(conn, "findings", "session_id = 's1'")) == 3
    assert [r["session_id"] for r in rows(conn, "pacing_runs")] == ["s1~closed-1", "s1"]
    chains = {r["chain_id"]: r["budget"] for r in rows(conn, "pacing_chain_budgets")}
    assert chains == {"c1~closed-1": 2, "c1": 2}
    expiries = rows(conn, "pacing_expiries")
    assert [
        (e["kind"], e["last_activity"], e["closed_at"], e["ttl_minutes"]) for e in expiries
    ] == [("session", T0, at(121), 120.0), ("chain", T0, at(121), 120.0)]

    # The fresh state replays like any other within the limit; the archive stays queryable.
    again = pacing.rank(conn, json.loads(json.dumps(req)), PROJECT, now=at(150))
    assert again.replayed and again.output == out
    assert decisions.session_summary(conn, "s1~closed-1")["total"]["findings"] == 3


def test_a_second_expiry_gets_the_next_archive_number(conn):
    req = request([fnd("a")])
    rank(conn, req, T0)
    rank(conn, req, at(200))
    third = rank(conn, req, at(400)).output
    assert [e["archived_as"] for e in third["expired"]] == ["s1~closed-2", "c1~closed-2"]
    assert conn.execute("SELECT count(*) FROM findings WHERE finding_id = 'a'").fetchone()[0] == 3


def test_activity_on_the_chain_from_another_session_keeps_it_open(conn):
    rank(conn, request([fnd("a"), fnd("b")], session="s1", budget=3), T0)
    rank(conn, request([fnd("c")], session="s2", phase="ceo", budget=3), at(100))
    out = rank(
        conn, request([fnd("d"), fnd("e")], session="s1", phase="design", budget=3), at(150)
    ).output
    # s1 was idle for 150 minutes and is closed; chain c1 was active 50 minutes ago and is not.
    assert [(e["kind"], e["original_id"]) for e in out["expired"]] == [("session", "s1")]
    assert out["fresh_chain"] is False
    assert out["budget"]["spent_before"] == 3 and out["budget"]["remaining"] == 0


def test_a_flip_counts_as_activity(conn):
    out = rank(conn, request([fnd("a", 0, 0, 0)]), T0).output
    assert [s["id"] for s in out["silent_decisions"]] == ["a"]
    decision = decisions.find_decision(conn, "a", "s1")
    decisions.flip_choice(conn, decision, "defer", now=at(100))
    later = rank(conn, request([fnd("b")], phase="ceo"), at(200))
    assert "expired" not in later.output


def test_the_limit_comes_from_the_environment(conn, monkeypatch):
    monkeypatch.setenv(pacing_request.TTL_ENV, "30")
    rank(conn, request([fnd("a")]), T0)
    assert "expired" in rank(conn, request([fnd("a")]), at(31)).output
    for bad in ("0", "-5", "soon", "nan", "inf"):
        monkeypatch.setenv(pacing_request.TTL_ENV, bad)
        with pytest.raises(
            pacing_request.PacingError,
            match="PLANTUNE_PACING_TTL_MINUTES must be a positive number",
        ):
            rank(conn, request([fnd("z")], session="s9", chain="c9"), at(40))
    assert conn.execute("SELECT count(*) FROM findings WHERE session_id = 's9'").fetchone()[0] == 0


def test_compat_script_says_so_and_exits_zero(db_file):
    env_req = json.dumps(request([fnd("a")]))
    run = subprocess.run(
        [script("gstack-pacing-rank")], input=env_req, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    env = dict(os.environ, PLANTUNE_PACING_TTL_MINUTES="0.0001")
    time.sleep(0.05)
    run = subprocess.run(
        [script("gstack-pacing-rank")],
        input=env_req,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["fresh_chain"] is True and "starting a fresh chain" in run.stderr
    bad = subprocess.run(
        [script("gstack-pacing-rank")],
        input=env_req,
        capture_output=True,
        text=True,
        env=dict(os.environ, PLANTUNE_PACING_TTL_MINUTES="never"),
        check=False,
    )
    assert bad.returncode == 1
    assert bad.stderr.strip() == (
        "gstack-pacing-rank: PLANTUNE_PACING_TTL_MINUTES must be a positive number "
        "of minutes, got 'never'"
    )


def test_cli_rank_prints_the_note(db_file, monkeypatch):
    payload = json.dumps(request([fnd("a")]))
    assert CliRunner().invoke(cli, ["pacing", "rank"], input=payload).exit_code == 0
    monkeypatch.setenv("PLANTUNE_PACING_TTL_MINUTES", "0.0001")
    time.sleep(0.05)
    r = CliRunner().invoke(cli, ["pacing", "rank"], input=payload)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["expired"][0]["archived_as"] == "s1~closed-1"
    assert "note: session s1 was idle" in r.stderr


def test_pacing_show_points_at_the_closed_session(db_file, conn):
    rank(conn, request([fnd("a")]), T0)
    rank(conn, request([fnd("a")]), at(300))
    r = CliRunner().invoke(cli, ["pacing", "show", "s1"])
    assert r.exit_code == 0, r.output
    assert (
        f"Closed earlier after a quiet spell (last active {T0}): kept as session s1~closed-1."
        in r.output
    )
    r = CliRunner().invoke(cli, ["pacing", "show", "s1~closed-1"])
    assert r.exit_code == 0 and "1 findings" in r.output
