import json
from collections import defaultdict

import pytest
from click.testing import CliRunner

from toolkit.analysis import simulate
from toolkit.cli.app import cli
from toolkit.core import scoring, seeded_db
from toolkit.store import db

END = "2026-11-30"
SYNTHETIC_TABLES = (
    "question_log",
    "findings",
    "preferences",
    "preference_events",
    "declared_profile",
)


def _sim(conn, **kw):
    settings = {"days": 30, "seed": 11, "projects": 2, "end": END}
    settings.update(kw)
    return simulate.simulate(conn, **settings)


def _dump(conn):
    return {
        "question_log": conn.execute(
            "SELECT event_key, project, ts, question_id, user_choice, source, phase, raw_json"
            " FROM question_log ORDER BY event_key"
        ).fetchall(),
        "findings": conn.execute(
            "SELECT session_id, finding_id, severity, irreversibility, decision_matters, disposition, choice"
            " FROM findings ORDER BY session_id, finding_id"
        ).fetchall(),
    }


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """One modest simulated history shared by the read-only checks below."""
    path = str(tmp_path_factory.mktemp("sim") / "sim.db")
    conn = seeded_db.connect(path)
    summary = simulate.simulate(conn, days=45, seed=5, projects=3, end=END)
    yield conn, summary
    conn.close()


def test_same_seed_gives_the_same_history(tmp_path):
    a = seeded_db.connect(str(tmp_path / "a.db"))
    b = seeded_db.connect(str(tmp_path / "b.db"))
    _sim(a)
    _sim(b)
    assert _dump(a) == _dump(b)
    c = seeded_db.connect(str(tmp_path / "c.db"))
    _sim(c, seed=12)
    assert _dump(c)["findings"] != _dump(a)["findings"]


def test_rerunning_the_same_simulation_adds_nothing(conn):
    first = _sim(conn)
    counts = db.table_counts(conn)
    again = _sim(conn)
    assert db.table_counts(conn) == counts
    assert sum(first["written"].values()) > 0
    assert again["written"] == {
        "question_log": 0,
        "findings": 0,
        "preferences": 0,
        "declared_profile": 0,
    }


def test_every_row_is_marked_synthetic(history):
    conn, _ = history
    for table in SYNTHETIC_TABLES:
        total, synthetic = conn.execute(f"SELECT count(*), sum(synthetic) FROM {table}").fetchone()
        assert total > 0, table
        assert synthetic == total, table


def test_question_log_rows_are_complete(history):
    conn, summary = history
    rows = conn.execute("SELECT * FROM question_log").fetchall()
    assert len(rows) == summary["question_log"]
    registry = {r["id"]: r for r in conn.execute("SELECT * FROM registry_questions")}
    for r in rows:
        assert r["source"] in ("agent", "auto-decided", "flip")
        assert r["phase"] in ("ceo", "design", "eng", "dx")
        assert r["door_class"] == registry[r["question_id"]]["door_type"] == r["door_type"]
        assert r["door_reason"] == "registry"
        assert len(r["event_key"]) == 40
        record = json.loads(r["raw_json"])
        assert record["question_id"] == r["question_id"]
        assert record["user_choice"] == r["user_choice"]
        assert record["source"] == r["source"]
        assert record["ts"] == r["ts"]
        assert record["followed_recommendation"] == bool(r["followed_recommendation"])
        assert r["user_choice"] in json.loads(registry[r["question_id"]]["options_json"])
    sources = {r["source"] for r in rows}
    assert sources == {"agent", "auto-decided", "flip"}
    auto = [r for r in rows if r["source"] == "auto-decided"]
    assert all(r["user_choice"] == r["recommended"] and r["tool_use_id"] is None for r in auto)


def test_review_chains_have_the_expected_shape(history):
    conn, summary = history
    phases = defaultdict(set)
    per_phase = defaultdict(int)
    for r in conn.execute("SELECT session_id, phase, kind FROM findings"):
        phases[r["session_id"]].add(r["phase"])
        if r["kind"] == "finding":
            per_phase[(r["session_id"], r["phase"])] += 1
    assert len(phases) == summary["sessions"] > 30
    assert all({"ceo", "eng"} <= p for p in phases.values())
    assert any("design" in p for p in phases.values()) and not all(
        "design" in p for p in phases.values()
    )
    assert any("dx" in p for p in phases.values()) and not all("dx" in p for p in phases.values())
    assert all(5 <= n <= 10 for n in per_phase.values())
    days = conn.execute("SELECT count(DISTINCT substr(ts, 1, 10)) FROM question_log").fetchone()[0]
    assert days > 45 / 2, "sessions should happen on most days"
    first, last = conn.execute("SELECT min(ts), max(ts) FROM question_log").fetchone()
    assert first[:10] >= "2026-10-17" and last[:10] <= END


def test_dispositions_follow_the_uncalibrated_pacing_rule(history):
    conn, _ = history
    rows = conn.execute(
        "SELECT f.*, q.source, q.followed_recommendation FROM findings f"
        " JOIN question_log q ON q.id = f.answer_event_id"
    ).fetchall()
    ranked = defaultdict(list)
    for f in rows:
        if f["door_type"] == "one-way":
            assert (f["disposition"], f["surface_reason"]) == ("surfaced", "one-way")
            assert f["irreversibility"] == 2
            assert f["source"] == "agent"
        elif f["kind"] != "finding":
            assert (f["disposition"], f["surface_reason"]) == ("surfaced", "gate")
        elif f["surface_reason"] == "rank":
            assert f["score"] >= 4
            ranked[(f["session_id"], f["phase"])].append(f)
        elif f["surface_reason"] == "flip":
            assert f["flipped_at"] and f["source"] == "flip" and f["followed_recommendation"] == 0
            assert f["choice"] != f["recommended"]
        else:
            assert f["disposition"] == "silent" and f["source"] == "auto-decided"
            assert f["choice"] == f["recommended"]
        assert f["score"] == scoring.score(f)
        assert f["threshold"] == 4.0
    assert ranked and all(len(v) <= 3 for v in ranked.values())
    # A silent two-way finding that reaches 4 only exists in a phase whose 3 slots were used.
    for f in rows:
        if (
            f["door_type"] == "two-way"
            and f["kind"] == "finding"
            and f["surface_reason"] is None
            and f["score"] >= 4
        ):
            slots = ranked[(f["session_id"], f["phase"])]
            assert len(slots) == 3
            assert all(s["score"] >= f["score"] for s in slots)


def test_factors_are_skewed_and_correlated_and_overrides_follow_decision_matters(history):
    conn, _ = history
    dist = dict(
        conn.execute(
            "SELECT severity + irreversibility + decision_matters, count(*) FROM findings"
            " WHERE door_type = 'two-way' AND kind = 'finding' GROUP BY 1"
        ).fetchall()
    )
    total = sum(dist.values())
    high = sum(n for s, n in dist.items() if s >= 5) / total
    assert high < 0.2, "high scores should be the minority"
    assert len(dist) >= 6
    corr = conn.execute(
        "SELECT avg(severity * irreversibility) - avg(severity) * avg(irreversibility) FROM findings"
        " WHERE door_type = 'two-way'"
    ).fetchone()[0]
    assert corr > 0
    rates = dict(
        conn.execute(
            "SELECT decision_matters, avg(overridden) FROM finding_scores WHERE answered = 1 GROUP BY 1"
        ).fetchall()
    )
    assert rates[0] < rates[1] < rates[2]
    followed = conn.execute(
        "SELECT avg(1 - overridden) FROM finding_scores WHERE answered = 1"
    ).fetchone()[0]
    assert followed > 0.6, "users follow the recommendation most of the time"


def test_preferences_and_declared_profile(history):
    conn, _ = history
    prefs = conn.execute("SELECT * FROM preferences").fetchall()
    assert prefs and all(p["source"] == "plan-tune" for p in prefs)
    one_way = {
        r[0] for r in conn.execute("SELECT id FROM registry_questions WHERE door_type = 'one-way'")
    }
    assert all(p["preference"] == "always-ask" for p in prefs if p["question_id"] in one_way)
    events = conn.execute(
        "SELECT count(*) FROM preference_events WHERE source = 'plan-tune'"
    ).fetchone()[0]
    assert events >= len(prefs)
    declared = conn.execute("SELECT dimension, value, scope FROM declared_profile").fetchall()
    assert len(declared) == 5
    assert all(0 <= d["value"] <= 1 and d["scope"] == db.GLOBAL_SCOPE for d in declared)


def test_real_rows_are_never_overwritten_or_replaced(conn):
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO declared_profile (scope, dimension, value, source, declared_at)"
            " VALUES ('__global__', 'autonomy', 0.9, 'user', '2026-01-01T00:00:00.000Z')"
        )
        conn.execute(
            "INSERT INTO question_log (event_key, project, ts, skill, question_id, question_summary, user_choice,"
            " source, raw_json, recorded_at) VALUES ('real', 'mine', '2026-01-01T00:00:00.000Z', 'ship',"
            " 'ship-todos-create', 'real question', 'accept', 'agent', '{}', '2026-01-01T00:00:00.000Z')"
        )
    _sim(conn)
    assert conn.execute(
        "SELECT value, synthetic FROM declared_profile WHERE dimension = 'autonomy'"
    ).fetchone()[:] == (0.9, 0)
    summary = _sim(conn, seed=99, replace=True)
    assert summary["cleared"]["findings"] > 0
    assert conn.execute("SELECT count(*) FROM question_log WHERE synthetic = 0").fetchone()[0] == 1
    # only seed 99 is left
    assert conn.execute("SELECT count(*) FROM findings").fetchone()[0] == summary["findings"]
    assert (
        conn.execute("SELECT value FROM declared_profile WHERE dimension = 'autonomy'").fetchone()[
            0
        ]
        == 0.9
    )


def test_progress_is_reported_per_day(conn):
    seen = []
    _sim(conn, days=7, progress=seen.append)
    assert seen == list(range(1, 8))


def test_small_flushes_write_the_same_rows(tmp_path):
    a = seeded_db.connect(str(tmp_path / "a.db"))
    b = seeded_db.connect(str(tmp_path / "b.db"))
    _sim(a, days=10)
    _sim(b, days=10, flush_every=7)
    assert _dump(a) == _dump(b)


@pytest.mark.parametrize(
    "kw,message",
    [
        ({"days": 0}, "--days must be a whole number between 1 and 3650"),
        ({"days": 1.5}, "--days must be a whole number between 1 and 3650"),
        ({"projects": 13}, "--projects must be a whole number between 1 and 12"),
        ({"seed": "x"}, "--seed must be a whole number"),
        ({"end": "30/11/2026"}, "--end must be a date like 2026-01-31, got '30/11/2026'"),
    ],
)
def test_library_refuses_bad_settings(conn, kw, message):
    with pytest.raises(simulate.SimulationError) as e:
        _sim(conn, **kw)
    assert str(e.value) == message
    assert conn.execute("SELECT count(*) FROM question_log").fetchone()[0] == 0


def test_cli_simulate_reports_and_writes(db_file):
    r = CliRunner().invoke(
        cli, ["simulate", "--days", "14", "--seed", "3", "--projects", "2", "--end", END]
    )
    assert r.exit_code == 0, r.output
    assert (
        "Simulated 14 days (2026-11-17 to 2026-11-30, seed 3) for 2 projects: acme-storefront, acme-billing-api."
        in r.output
    )
    assert "all marked synthetic" in r.output
    assert r.stderr == ""  # no progress bar when stderr is not a terminal
    conn = seeded_db.connect(db_file)
    n = conn.execute("SELECT count(*) FROM findings").fetchone()[0]
    assert n > 0
    r = CliRunner().invoke(
        cli, ["simulate", "--days", "14", "--seed", "3", "--projects", "2", "--end", END, "--json"]
    )
    data = json.loads(r.output)
    assert data["findings"] == n and data["written"]["findings"] == 0


@pytest.mark.parametrize(
    "args,message",
    [
        (["--days", "0"], "Error: --days must be between 1 and 3650, got 0"),
        (["--days", "ten"], "Error: --days must be a whole number, got 'ten'"),
        (["--projects", "40"], "Error: --projects must be between 1 and 12, got 40"),
        (["--seed", "1.5"], "Error: --seed must be a whole number, got '1.5'"),
        (["--end", "yesterday"], "Error: --end must be a date like 2026-01-31, got 'yesterday'"),
    ],
)
def test_cli_simulate_bad_input_writes_nothing(db_file, args, message):
    r = CliRunner().invoke(cli, ["simulate"] + args)
    assert r.exit_code == 1
    assert r.stderr.strip() == message
    assert r.stdout == ""
    conn = seeded_db.connect(db_file)
    assert (
        sum(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in SYNTHETIC_TABLES) == 0
    )


def test_written_counts_are_rows_not_trigger_changes(conn):
    """The rollup triggers change other tables too; the summary counts only real rows."""
    from toolkit.analysis import simulate as sim_mod

    summary = sim_mod.simulate(conn, days=5, seed=3, projects=1)
    for table in ("question_log", "findings"):
        n = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        assert summary["written"][table] == n, table
