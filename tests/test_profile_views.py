"""The profile views: inferred_profile against an independent Python recomputation,
the diversity gate at each of its edges, the gap words, the trace and half-up rounding."""

import json
import math
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.profile import add_event
from toolkit.core import profile
from toolkit.core.registry import REGISTRY_FILE, SIGNAL_MAP_FILE
from toolkit.store import db

DIMS = ("scope_appetite", "risk_tolerance", "detail_preference", "autonomy", "architecture_care")

with open(REGISTRY_FILE) as f:
    REGISTRY = {e["id"]: e for e in json.load(f)}
with open(SIGNAL_MAP_FILE) as f:
    SIGNAL_MAP = json.load(f)["map"]


def half_up3(x):
    return float(Decimal(x).quantize(Decimal("0.001"), ROUND_HALF_UP))


def recompute(events):
    """gstack's `--derive` and signal-map normalisation, written without looking at the SQL."""
    totals = defaultdict(lambda: defaultdict(Decimal))
    moved = defaultdict(lambda: defaultdict(int))
    groups = set()
    for project, synthetic, qid, choice in events:
        if not qid or not choice:
            continue
        for key in ((project, synthetic), (db.ALL_PROJECTS, synthetic)):
            groups.add(key)
        entry = REGISTRY.get(qid)
        if not entry or not entry.get("signal_key"):
            continue
        for dim, delta in SIGNAL_MAP.get(entry["signal_key"], {}).get(choice, []):
            for key in ((project, synthetic), (db.ALL_PROJECTS, synthetic)):
                totals[key][dim] += Decimal(str(delta))
                moved[key][dim] += 1
    out = {}
    for key in groups:
        for dim in DIMS:
            total = float(totals[key][dim])
            value = half_up3(1.0 / (1.0 + math.exp(-3.0 * total)))
            out[key + (dim,)] = (total, value, moved[key][dim])
    return out


SIGNAL_QIDS = sorted(q for q, e in REGISTRY.items() if e.get("signal_key"))
PLAIN_QIDS = sorted(q for q, e in REGISTRY.items() if not e.get("signal_key"))[:5]
ALL_CHOICES = sorted({c for choices in SIGNAL_MAP.values() for c in choices})

event = st.tuples(
    st.sampled_from(["alpha", "beta", "gamma"]),
    st.sampled_from([0, 0, 0, 1]),
    st.sampled_from(SIGNAL_QIDS * 3 + PLAIN_QIDS + ["adhoc-thing", "hook-0123456789"]),
    st.one_of(st.sampled_from(ALL_CHOICES), st.sampled_from(["__unknown__", "", "Something else"])),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(event, max_size=60))
def test_inferred_profile_equals_python_recomputation(conn, events):
    with db.transaction(conn):
        conn.execute("DELETE FROM question_log")
    for i, (project, synthetic, qid, choice) in enumerate(events):
        add_event(
            conn,
            qid,
            choice,
            project=project,
            synthetic=synthetic,
            skill=REGISTRY.get(qid, {}).get("skill", "adhoc"),
            ts=f"2026-03-{i % 28 + 1:02d}T08:00:00.000Z",
        )
    expected = recompute(events)
    rows = conn.execute(
        "SELECT project, synthetic, dimension, total_delta, value, events FROM inferred_profile"
    ).fetchall()
    got = {(r[0], r[1], r[2]): (r[3], r[4], r[5]) for r in rows}
    assert got == expected
    sizes = defaultdict(int)
    for project, synthetic, qid, choice in events:
        if qid and choice:
            sizes[(project, synthetic)] += 1
            sizes[(db.ALL_PROJECTS, synthetic)] += 1
    assert dict(sizes) == {
        (r[0], r[1]): r[2]
        for r in conn.execute("SELECT project, synthetic, sample_size FROM profile_diversity")
    }
    # The library reads the same rows, and falls back to neutral for unseen projects.
    for (project, synthetic, dim), (_, value, _) in expected.items():
        assert profile.inferred(conn, project, synthetic)["values"][dim] == value
    assert profile.inferred(conn, "never-seen")["values"] == {d: 0.5 for d in DIMS}


def test_worked_values_from_the_signal_map(conn):
    # gstack's worked values: 0.06 → 0.545, 0.12 → 0.589, 0.30 → 0.711, −0.18 → 0.368.
    cases = {"p1": ["expand"], "p2": ["expand"] * 2, "p5": ["expand"] * 5, "m3": ["reduce"] * 3}
    for project, choices in cases.items():
        for c in choices:
            add_event(conn, "plan-ceo-review-mode", c, project=project)
    got = {p: profile.inferred(conn, p) for p in cases}
    assert [got[p]["values"]["scope_appetite"] for p in cases] == [0.545, 0.589, 0.711, 0.368]
    assert got["p5"]["totals"]["scope_appetite"] == 0.3  # exact, not 0.30000000000000004
    assert got["p5"]["events"]["scope_appetite"] == 5
    assert profile.inferred(conn, db.ALL_PROJECTS)["events"]["scope_appetite"] == 11


def test_float_accumulation_in_log_order_gives_the_same_values():
    # gstack adds binary floats in file order; plantune adds exact millionths. Over long
    # runs of real deltas the 3-decimal values agree.
    deltas = [d for choices in SIGNAL_MAP.values() for rows in choices.values() for _, d in rows]
    for n in range(1, 200):
        seq = [deltas[(i * 7 + n) % len(deltas)] for i in range(n)]
        float_total = 0.0
        for d in seq:
            float_total += d
        exact_total = float(sum(Decimal(str(d)) for d in seq))
        sig = lambda t: half_up3(1.0 / (1.0 + math.exp(-3.0 * t)))
        assert sig(float_total) == sig(exact_total)


def midpoint_neighbours():
    k = st.integers(min_value=0, max_value=999)
    steps = st.integers(min_value=-3, max_value=3)

    def near(k_steps):
        k, s = k_steps
        x = (2 * k + 1) / 2000
        for _ in range(abs(s)):
            x = math.nextafter(x, 2.0 if s > 0 else -1.0)
        return min(max(x, 0.0), 1.0)

    return st.tuples(k, steps).map(near)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(declared=st.one_of(st.floats(0, 1), midpoint_neighbours()))
def test_gap_view_rounds_half_up_on_the_exact_binary_value(conn, declared):
    # With no signal events the inferred value is 0.5, so gap = |declared - 0.5|: every
    # double in [0, 0.5] near a rounding midpoint is reachable.
    if conn.execute("SELECT count(*) FROM question_log").fetchone()[0] == 0:
        add_event(conn, "adhoc-q", "ok", project="p")
    with db.transaction(conn):
        profile.set_declared(conn, {"autonomy": declared}, source="test")
    row = conn.execute(
        "SELECT gap, gap_word FROM profile_gap WHERE project = 'p' AND dimension = 'autonomy'"
    ).fetchone()
    expected = half_up3(abs(declared - 0.5))
    assert row[0] == expected == profile.gap({"autonomy": declared}, {"autonomy": 0.5})["autonomy"]
    assert row[1] == profile.gap_word(expected, 1)


def test_sqlite_round_alone_would_be_wrong(conn):
    # Why the views round by hand: 1.0005 is stored as 1.000499999…, so half-up on the
    # binary value gives 1.0, while SQLite's round() says 1.001.
    assert half_up3(1.0005) == 1.0
    assert conn.execute("SELECT round(1.0005, 3)").fetchone()[0] == 1.001


@pytest.mark.parametrize(
    "gap_value,word",
    [(0.0, "close"), (0.099, "close"), (0.1, "drift"), (0.3, "drift"), (0.301, "mismatch")],
)
def test_gap_words(conn, gap_value, word):
    for _ in range(profile.MISMATCH_MIN_SAMPLE):
        add_event(conn, "adhoc-q", "ok", project="p")
    with db.transaction(conn):
        profile.set_declared(conn, {"risk_tolerance": 0.5 + gap_value}, source="test")
    row = conn.execute("SELECT gap, gap_word FROM profile_gap WHERE project = 'p'").fetchone()
    assert (row[0], row[1]) == (gap_value, word)


@pytest.mark.parametrize("declared", [0.0, 0.1, 0.19, 0.9, 1.0])
@pytest.mark.parametrize("events", [1, 2, profile.MISMATCH_MIN_SAMPLE - 1])
def test_a_wide_gap_on_few_answers_is_never_a_mismatch(conn, declared, events):
    # As `profile mismatch` says "not enough data" below its sample, the view never calls
    # a gap a mismatch there: for the project, nor for __all__ with the same few events.
    for _ in range(events):
        add_event(conn, "adhoc-q", "ok", project="p")
    with db.transaction(conn):
        profile.set_declared(conn, {"autonomy": declared}, source="test")
    rows = conn.execute(
        "SELECT project, gap, gap_word, sample_size FROM profile_gap ORDER BY project"
    ).fetchall()
    assert [r[0] for r in rows] == ["__all__", "p"]
    for _, gap, word, sample in rows:
        assert gap > profile.MISMATCH_GAP and sample == events
        assert word == "wide" == profile.gap_word(gap, sample)
        assert profile.mismatch({"autonomy": declared}, {"autonomy": 0.5}, sample) is None


def test_the_view_and_the_cli_share_one_threshold(conn):
    # The sample below which a wide gap is not a mismatch, in the view and in Python alike,
    # right at its edge; __all__ counts every project's events together.
    with db.transaction(conn):
        profile.set_declared(conn, {"autonomy": 0.95}, source="test")
    for n in range(1, profile.MISMATCH_MIN_SAMPLE + 2):
        add_event(conn, "adhoc-q", "ok", project="p" if n % 2 else "q")
        for project, gap, word, sample in conn.execute(
            "SELECT project, gap, gap_word, sample_size FROM profile_gap"
        ):
            expected = profile.diversity(conn, project)["sample_size"]
            assert sample == expected
            assert word == profile.gap_word(gap, expected)
            flagged = profile.mismatch({"autonomy": 0.95}, {"autonomy": 0.5}, expected)
            assert (word == "mismatch") == bool(flagged)


def test_gap_view_has_rows_only_for_declared_dimensions(conn):
    add_event(conn, "plan-ceo-review-mode", "expand", project="p")
    assert conn.execute("SELECT count(*) FROM profile_gap").fetchone()[0] == 0
    with db.transaction(conn):
        profile.set_declared(conn, {"scope_appetite": 0.8, "autonomy": 0.2}, source="test")
    rows = conn.execute(
        "SELECT project, dimension, declared, inferred, gap FROM profile_gap"
        " ORDER BY project, position"
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        ("__all__", "scope_appetite", 0.8, 0.545, 0.255),
        ("__all__", "autonomy", 0.2, 0.5, 0.3),
        ("p", "scope_appetite", 0.8, 0.545, 0.255),
        ("p", "autonomy", 0.2, 0.5, 0.3),
    ]


# diversity gate ------------------------------------------------------------------------------

SKILLS = ["ship", "review", "qa", "cso"]


def plant(conn, events=20, skills=3, qids=8, days=7, project="gate"):
    """Exactly `events` counted events over `skills` skills, `qids` ids and `days` days."""
    assert events >= max(qids, days) and qids >= skills
    for i in range(events):
        q = i % qids
        skill = SKILLS[q % skills]
        add_event(
            conn,
            f"{skill}-question-{q}",
            "ok",
            skill=skill,
            project=project,
            ts=f"2026-05-{(i % days) * 2 + 1:02d}T12:00:00.000Z",
        )


def gate_row(conn, project="gate"):
    return profile.diversity(conn, project)


def test_gate_open_exactly_at_the_thresholds(conn):
    plant(conn)
    row = gate_row(conn)
    assert (
        row["sample_size"],
        row["skills_covered"],
        row["question_ids_covered"],
        row["distinct_days"],
    ) == (20, 3, 8, 7)
    assert row["enough_data"] is True
    assert profile.gate_message(row) is None


def test_gate_edge_events_19(conn):
    plant(conn, events=19)
    row = gate_row(conn)
    assert row["sample_size"] == 19 and row["enough_data"] is False
    assert "need 1 more event " in profile.gate_message(row)


def test_gate_edge_skills_2(conn):
    plant(conn, skills=2)
    row = gate_row(conn)
    assert row["skills_covered"] == 2 and row["sample_size"] == 20 and row["enough_data"] is False
    assert "need 1 more skill " in profile.gate_message(row)


def test_gate_edge_question_ids_7(conn):
    plant(conn, qids=7)
    row = gate_row(conn)
    assert row["question_ids_covered"] == 7 and row["enough_data"] is False
    assert "1 more different question " in profile.gate_message(row)


def test_gate_edge_days_6(conn):
    plant(conn, days=6)
    row = gate_row(conn)
    assert row["distinct_days"] == 6 and row["enough_data"] is False
    assert "1 more day " in profile.gate_message(row)


def test_gate_message_lists_every_shortfall(conn):
    plant(conn, events=8, skills=1, qids=8, days=2)
    message = profile.gate_message(gate_row(conn))
    assert message.startswith(
        "Not enough observed data yet — need 12 more events across 2 more skills and 5 more days"
    )


def test_empty_question_id_or_choice_never_counts(conn):
    plant(conn, events=19)
    add_event(conn, "ship-question-0", "", skill="ship", project="gate", ts="2026-06-30T00:00:00Z")
    assert gate_row(conn)["sample_size"] == 19


def test_distinct_days_versus_calendar_span(conn):
    add_event(conn, "ship-a", "ok", project="span", ts="2026-01-01T23:59:59.000Z")
    add_event(conn, "ship-a", "ok", project="span", ts="2026-01-01T00:00:00.000Z")
    add_event(conn, "ship-a", "ok", project="span", ts="2026-01-10T10:00:00.000Z")
    row = profile.diversity(conn, "span")
    assert (row["distinct_days"], row["calendar_span_days"]) == (2, 10)
    assert (row["first_day"], row["last_day"]) == ("2026-01-01", "2026-01-10")


def test_all_projects_row_and_synthetic_kept_apart(conn):
    plant(conn, events=10, project="one")
    plant(conn, events=10, project="two")
    add_event(conn, "ship-sim", "ok", project="one", synthetic=1)
    rows = {
        (r[0], r[1]): r[2]
        for r in conn.execute("SELECT project, synthetic, sample_size FROM profile_diversity")
    }
    assert rows == {
        ("one", 0): 10,
        ("two", 0): 10,
        (db.ALL_PROJECTS, 0): 20,
        ("one", 1): 1,
        (db.ALL_PROJECTS, 1): 1,
    }


def test_dimension_trace_rows(conn):
    add_event(conn, "plan-eng-review-arch-finding", "fix-now", project="t")  # two dimensions
    add_event(conn, "plan-ceo-review-mode", "nonsense", project="t")  # moves nothing
    add_event(conn, "ship-todos-create", "accept", project="t")  # no signal_key
    rows = conn.execute(
        "SELECT question_id, dimension, delta FROM dimension_trace"
        " WHERE project = 't' ORDER BY event_id, dimension"
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        ("plan-eng-review-arch-finding", "architecture_care", 0.05),
        ("plan-eng-review-arch-finding", "risk_tolerance", -0.02),
    ]


def test_project_filter_reads_the_running_totals_only(conn):
    for view, table in (
        ("inferred_profile", "profile_totals"),
        ("profile_diversity", "profile_totals"),
    ):
        plan = " ".join(
            r[3]
            for r in conn.execute(
                f"EXPLAIN QUERY PLAN SELECT * FROM {view} WHERE project = 'x' AND synthetic = 0"
            )
        )
        assert "question_log" not in plan
        assert "USING PRIMARY KEY (project=? AND synthetic=?)" in plan
