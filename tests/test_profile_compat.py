"""gstack-developer-profile / gstack-builder-profile against the behaviours gstack's own
test/gstack-developer-profile.test.ts and builder-profile.test.ts pin.

Each test gets a fresh state root (conftest). The scripts run as subprocesses, as gstack's
skills call them. Question events are planted in the database directly.
"""

import json
import os
import re
import subprocess
import sys

import pytest

from tests.helpers.profile import PROJECT, add_event, add_events, dev, read_lines, run
from toolkit.store import db


@pytest.fixture(autouse=True)
def project_slug(monkeypatch):
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", PROJECT)


def profile_file(root):
    return json.loads((root / "developer-profile.json").read_text())


def write_legacy(root, sessions, extra_lines=()):
    lines = [json.dumps(s) for s in sessions] + list(extra_lines)
    (root / "builder-profile.jsonl").write_text("\n".join(lines) + ("\n" if lines else ""))


def builder(root):
    r = run("gstack-builder-profile")
    assert r.returncode == 0, r.stderr
    return read_lines(r.stdout)


def log_session(entry):
    r = dev("--log-session", json.dumps(entry) if not isinstance(entry, str) else entry)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    return r


READ_KEYS = [
    "SESSION_COUNT",
    "TIER",
    "LAST_PROJECT",
    "LAST_ASSIGNMENT",
    "LAST_DESIGN_TITLE",
    "DESIGN_COUNT",
    "DESIGN_TITLES",
    "ACCUMULATED_SIGNALS",
    "TOTAL_SIGNAL_COUNT",
    "CROSS_PROJECT",
    "NUDGE_ELIGIBLE",
    "RESOURCES_SHOWN",
    "RESOURCES_SHOWN_COUNT",
    "TOPICS",
]


# --read on an empty state, and no arguments ---------------------------------------------


def test_read_on_empty_state_creates_stub(state_root):
    r = dev("--read")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert [l.split(":")[0] for l in lines] == READ_KEYS
    assert "SESSION_COUNT: 0" in lines and "TIER: introduction" in lines
    assert "CROSS_PROJECT: false" in lines
    assert "LAST_PROJECT: " in lines  # one space after the colon even when empty
    doc = profile_file(state_root)
    assert doc["schema_version"] == 1
    assert doc["inferred"]["values"] == {
        d: 0.5
        for d in (
            "scope_appetite",
            "risk_tolerance",
            "detail_preference",
            "autonomy",
            "architecture_care",
        )
    }
    assert doc["sessions"] == [] and doc["declared"] == {} and doc["gap"] == {}


def test_no_arguments_reads():
    r = dev()
    assert r.returncode == 0 and "TIER:" in r.stdout


# migration --------------------------------------------------------------------------------

LEGACY_3 = [
    {
        "date": "2026-01-01",
        "mode": "builder",
        "project_slug": "alpha",
        "signals": ["taste", "agency"],
        "resources_shown": ["https://a"],
        "topics": ["onboarding"],
    },
    {
        "date": "2026-01-02",
        "mode": "startup",
        "project_slug": "beta",
        "signals": ["named_users", "pushback", "taste"],
        "resources_shown": ["https://b"],
        "topics": ["fit", "onboarding"],
    },
    {
        "date": "2026-01-03",
        "mode": "builder",
        "project_slug": "alpha",
        "signals": ["agency"],
        "resources_shown": ["https://a"],
        "topics": ["iter"],
    },
]


def test_migrate_legacy_sessions_once(state_root):
    write_legacy(state_root, LEGACY_3)
    r = dev("--migrate")
    assert r.returncode == 0
    assert r.stdout.strip() == "MIGRATE: ok — migrated 3 sessions from builder-profile.jsonl"
    doc = profile_file(state_root)
    assert len(doc["sessions"]) == 3
    assert doc["signals_accumulated"] == {"taste": 2, "agency": 2, "named_users": 1, "pushback": 1}
    assert doc["resources_shown"] == ["https://a", "https://b"]
    assert doc["topics"] == ["onboarding", "fit", "iter"]
    assert "migrated_at" in doc
    # the source is archived under gstack's name, exactly once.
    archived = [
        p.name for p in state_root.iterdir() if p.name.startswith("builder-profile.jsonl.migrated-")
    ]
    assert len(archived) == 1
    assert re.fullmatch(r"builder-profile\.jsonl\.migrated-\d{4}-\d\d-\d\d-\d{6}", archived[0])
    assert not (state_root / "builder-profile.jsonl").exists()
    # a second run finds nothing to do and changes nothing.
    r = dev("--migrate")
    assert r.returncode == 0
    assert re.search(r"no legacy file|already migrated", r.stdout)
    assert len(profile_file(state_root)["sessions"]) == 3
    assert read_lines(dev("--read").stdout)["SESSION_COUNT"] == "3"


def test_migrate_without_legacy_file():
    r = dev("--migrate")
    assert r.returncode == 0
    assert r.stdout.strip() == "MIGRATE: no legacy file to migrate"


def test_migrate_counts_and_reports_malformed_lines(state_root, conn):
    write_legacy(state_root, LEGACY_3[:2], extra_lines=["this is not json", "[1, 2]", ""])
    r = dev("--migrate")
    assert r.returncode == 0
    assert "migrated 2 sessions" in r.stdout
    assert "builder-profile.jsonl line 3: not a JSON object; skipped" in r.stderr
    assert "builder-profile.jsonl line 4" in r.stderr
    assert conn.execute("SELECT count(*) FROM office_hours_sessions").fetchone()[0] == 2


def test_empty_legacy_file_migrates_zero_sessions(state_root):
    write_legacy(state_root, [])
    r = dev("--migrate")
    assert "migrated 0 sessions" in r.stdout
    assert read_lines(dev().stdout)["TIER"] == "introduction"


# tiers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("n,tier", [(3, "welcome_back"), (5, "regular"), (9, "inner_circle")])
def test_tiers(state_root, n, tier):
    write_legacy(
        state_root,
        [
            {"date": f"2026-01-{i + 1:02d}", "mode": "builder", "project_slug": "p"}
            for i in range(n)
        ],
    )
    lines = read_lines(dev("--read").stdout)
    assert lines["SESSION_COUNT"] == str(n) and lines["TIER"] == tier


# derive -----------------------------------------------------------------------------------


def derive_ok(expected_events):
    r = dev("--derive")
    assert r.returncode == 0, r.stderr
    return r


def test_derive_with_no_events(state_root):
    r = derive_ok(0)
    assert r.stdout.strip() == "DERIVE: ok — 0 events, 0 skills, 0 questions"
    doc = profile_file(state_root)
    assert doc["inferred"]["sample_size"] == 0
    assert doc["inferred"]["values"]["scope_appetite"] == 0.5
    assert "derived_at" in doc


def test_five_expands(state_root, conn):
    for day in range(1, 6):
        add_event(conn, "plan-ceo-review-mode", "expand", ts=f"2026-04-0{day}T10:00:00.000Z")
    r = derive_ok(5)
    assert r.stdout.strip() == "DERIVE: ok — 5 events, 1 skills, 1 questions"
    inferred = profile_file(state_root)["inferred"]
    assert inferred["sample_size"] == 5
    assert inferred["values"]["scope_appetite"] == 0.711
    assert inferred["diversity"] == {"skills_covered": 1, "question_ids_covered": 1, "days_span": 5}


def test_three_reduces(state_root, conn):
    add_events(conn, [("plan-ceo-review-mode", "reduce")] * 3)
    derive_ok(3)
    assert profile_file(state_root)["inferred"]["values"]["scope_appetite"] == 0.368


def test_derive_is_deterministic(state_root, conn):
    add_events(
        conn,
        [
            ("plan-ceo-review-mode", "expand"),
            ("ship-pre-landing-review-fix", "fix-now"),
            ("land-and-deploy-merge-confirm", "reject"),
        ],
    )
    derive_ok(3)
    first = profile_file(state_root)["inferred"]
    derive_ok(3)
    assert profile_file(state_root)["inferred"] == first


def test_adhoc_event_counts_but_moves_nothing(state_root, conn):
    add_event(conn, "adhoc-unregistered-question", "yes", skill="adhoc")
    derive_ok(1)
    inferred = profile_file(state_root)["inferred"]
    assert inferred["sample_size"] == 1
    assert inferred["values"]["scope_appetite"] == 0.5


def test_derive_counts_unknown_auto_decided_and_hook_events_but_skips_empty_choice(
    state_root, conn
):
    add_event(conn, "plan-ceo-review-mode", "__unknown__", source="hook")
    add_event(conn, "plan-ceo-review-mode", "expand", source="auto-decided")
    add_event(conn, "hook-0123456789", "A) Accept", skill="unknown", source="hook")
    add_event(conn, "plan-ceo-review-mode", "", source="hook")  # empty choice: not counted
    r = derive_ok(3)
    assert "3 events, 2 skills, 2 questions" in r.stdout
    # An auto-decided row counts but moves nothing, even when it stores a signal-map key
    # (gstack's hook logs the label, which its --derive never finds in the map).
    assert profile_file(state_root)["inferred"]["values"]["scope_appetite"] == 0.5
    add_event(conn, "plan-ceo-review-mode", "expand", source="hook")  # the user's answer
    derive_ok(4)
    assert profile_file(state_root)["inferred"]["values"]["scope_appetite"] == 0.545


def test_derive_reads_only_the_current_project(state_root, conn):
    add_events(conn, [("plan-ceo-review-mode", "expand")] * 2)
    add_events(conn, [("plan-ceo-review-mode", "reduce")] * 4, project="elsewhere")
    assert "2 events" in derive_ok(2).stdout
    r = dev("--derive", env={"GSTACK_PROJECT_SLUG": "elsewhere"})
    assert "4 events" in r.stdout
    assert profile_file(state_root)["inferred"]["values"]["scope_appetite"] < 0.5


def test_derive_fails_without_signal_map(conn):
    with db.transaction(conn):
        conn.execute("DELETE FROM signal_map")
    r = dev("--derive")
    assert r.returncode == 1
    assert r.stderr.strip() == "DERIVE: registry or signals file missing, cannot derive"


# trace ------------------------------------------------------------------------------------


def test_trace_lists_contributing_events(conn):
    for day in (1, 2, 3):
        add_event(conn, "plan-ceo-review-mode", "expand", ts=f"2026-04-0{day}T10:00:00.000Z")
    add_event(conn, "plan-ceo-review-mode", "hold", ts="2026-04-04T09:30:00.000Z")
    r = dev("--trace", "scope_appetite")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0] == "TRACE: 4 events for scope_appetite"
    assert lines[1] == "  2026-04-01T10:00:00  plan-ceo-review-mode  → expand  (+0.06)"
    assert lines[4] == "  2026-04-04T09:30:00  plan-ceo-review-mode  → hold  (-0.01)"


def test_trace_three_expands_phrase(conn):
    add_events(conn, [("plan-ceo-review-mode", "expand")] * 3)
    r = dev("--trace", "scope_appetite")
    assert "3 events for scope_appetite" in r.stdout
    assert "plan-ceo-review-mode" in r.stdout and "expand" in r.stdout


def test_trace_dimension_nothing_moved(conn):
    add_events(conn, [("plan-ceo-review-mode", "expand")] * 3)
    r = dev("--trace", "autonomy")
    assert r.returncode == 0
    assert r.stdout.strip() == "TRACE: no events contribute to autonomy"


def test_trace_without_events_for_project():
    r = dev("--trace", "autonomy")
    assert r.returncode == 0
    assert r.stdout.strip() == "TRACE: no events for this project"


def test_trace_without_dimension():
    r = dev("--trace")
    assert r.returncode != 0
    assert "missing dimension" in r.stderr
    assert r.stderr.strip() == "TRACE: missing dimension argument"


def test_trace_does_not_create_the_profile_file(state_root, conn):
    add_events(conn, [("plan-ceo-review-mode", "expand")])
    dev("--trace", "scope_appetite")
    assert not (state_root / "developer-profile.json").exists()


# gap --------------------------------------------------------------------------------------


def declare_in_file(root, declared):
    """Edit `declared` inside developer-profile.json the way gstack's /plan-tune skill does."""
    path = root / "developer-profile.json"
    if not path.exists():
        assert dev("--read").returncode == 0
    doc = json.loads(path.read_text())
    doc["declared"] = declared
    tmp = root / "developer-profile.json.tmp"
    tmp.write_text(json.dumps(doc, indent=2))
    os.replace(tmp, path)


def test_gap_with_nothing_declared():
    r = dev("--gap")
    assert r.returncode == 0
    data = json.loads(r.stdout)
    assert data["gap"] == {} and data["declared"] == {}
    assert set(data) == {"declared", "inferred", "gap"}


def test_gap_against_declared_in_the_file(state_root, conn):
    add_events(
        conn,
        [("office-hours-approach-choose", "ideal"), ("office-hours-approach-choose", "creative")],
    )
    declare_in_file(state_root, {"scope_appetite": 0.8})
    data = json.loads(dev("--gap").stdout)
    assert data["declared"] == {"scope_appetite": 0.8}
    assert data["inferred"]["scope_appetite"] == 0.552
    assert data["gap"] == {"scope_appetite": 0.248}
    assert abs(data["gap"]["scope_appetite"] - 0.25) < 0.01


# vibe, mismatch ---------------------------------------------------------------------------


def test_vibe_prints_an_archetype():
    r = dev("--vibe")
    assert r.returncode == 0
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    assert lines[0] == "Builder-Coach" and len(lines) == 2


def test_mismatch_on_stub():
    r = dev("--check-mismatch")
    assert r.returncode == 0
    assert r.stdout.strip() == "MISMATCH: not enough data (0 events; need 10+)"


def test_mismatch_none(state_root, conn):
    add_events(conn, [(f"adhoc-question-{i}", "yes") for i in range(20)], skill="adhoc")
    declare_in_file(state_root, {"scope_appetite": 0.5, "architecture_care": 0.5})
    r = dev("--check-mismatch")
    assert r.stdout.strip() == "MISMATCH: none"


def test_mismatch_two_dimensions(state_root, conn):
    pairs = (
        [("plan-ceo-review-mode", "reduce")] * 2
        + [("plan-ceo-review-mode", "hold")]
        + [("land-and-deploy-merge-confirm", "accept")] * 12
        + [(f"adhoc-q-{i}", "ok") for i in range(10)]
    )
    add_events(conn, pairs)
    declare_in_file(state_root, {"scope_appetite": 0.9, "autonomy": 0.2})
    r = dev("--check-mismatch")
    lines = r.stdout.splitlines()
    assert lines[0] == "MISMATCH: 2 dimension(s) disagree (gap > 0.3)"
    assert lines[1] == "  scope_appetite: declared 0.9 vs inferred 0.404 (gap 0.496)"
    assert lines[2] == "  autonomy: declared 0.2 vs inferred 0.808 (gap 0.608)"


def test_mismatch_threshold_is_strict_and_needs_ten_events(state_root, conn):
    add_events(conn, [(f"adhoc-q-{i}", "ok") for i in range(9)])
    declare_in_file(state_root, {"scope_appetite": 0.8})  # gap exactly 0.3 against 0.5
    assert "not enough data (9 events" in dev("--check-mismatch").stdout
    add_event(conn, "adhoc-q-last", "ok")
    assert dev("--check-mismatch").stdout.strip() == "MISMATCH: none"


# unknown subcommand -----------------------------------------------------------------------


def test_unknown_subcommand():
    r = dev("--frobnicate")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "gstack-developer-profile: unknown subcommand '--frobnicate'",
        "run --help for usage",
    ]
    assert "Traceback" not in r.stderr


def test_help_lists_every_subcommand():
    r = dev("--help")
    assert r.returncode == 0
    for sub in (
        "--read",
        "--profile",
        "--gap",
        "--derive",
        "--trace",
        "--check-mismatch",
        "--migrate",
        "--log-session",
        "--vibe",
        "--narrative",
    ):
        assert sub in r.stdout


def test_narrative():
    r = dev("--narrative")
    assert (
        r.stdout.strip() == "NARRATIVE: (v2 — not yet implemented; use /plan-tune profile for now)"
    )


# log-session and --read ---------------------------------------------------------------------


def test_log_session_then_read():
    assert read_lines(dev("--read").stdout)["SESSION_COUNT"] == "0"
    log_session(
        {
            "date": "2026-05-01",
            "mode": "startup",
            "project_slug": "test",
            "signal_count": 2,
            "signals": ["s1", "s2"],
        }
    )
    lines = read_lines(dev("--read").stdout)
    assert lines["SESSION_COUNT"] == "1" and lines["TIER"] == "welcome_back"
    assert lines["LAST_PROJECT"] == "test" and lines["TOTAL_SIGNAL_COUNT"] == "2"


def test_signals_accumulate(state_root):
    log_session({"date": "2026-05-01", "mode": "builder", "signals": ["a", "b"]})
    log_session({"date": "2026-05-02", "mode": "builder", "signals": ["a", "c"]})
    doc = json.loads(dev("--profile").stdout)
    assert len(doc["sessions"]) == 2
    assert doc["signals_accumulated"] == {"a": 2, "b": 1, "c": 1}
    assert profile_file(state_root)["signals_accumulated"] == {"a": 2, "b": 1, "c": 1}


def test_resources_and_topics_union():
    log_session(
        {
            "date": "2026-05-01",
            "mode": "builder",
            "resources_shown": ["url1", "url2"],
            "topics": ["ai"],
        }
    )
    log_session(
        {
            "date": "2026-05-02",
            "mode": "builder",
            "resources_shown": ["url2", "url3"],
            "topics": ["ai", "eng"],
        }
    )
    doc = json.loads(dev("--profile").stdout)
    assert sorted(doc["resources_shown"]) == ["url1", "url2", "url3"]
    assert sorted(doc["topics"]) == ["ai", "eng"]


@pytest.mark.parametrize(
    "arg",
    [
        "not-json",
        '{"foo":"bar"}',
        '{"date":"2026-01-01"}',
        '{"mode":"builder","date":""}',
        "[1]",
        "null",
    ],
)
def test_log_session_unusable_input_is_a_silent_noop(state_root, conn, arg):
    log_session(arg)
    assert not (state_root / "developer-profile.json").exists()
    assert conn.execute("SELECT count(*) FROM office_hours_sessions").fetchone()[0] == 0


def test_log_session_without_argument_is_a_noop(state_root):
    r = dev("--log-session")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    assert not (state_root / "developer-profile.json").exists()


def test_missing_ts_is_injected(state_root):
    log_session({"date": "2026-05-01", "mode": "builder"})
    ts = profile_file(state_root)["sessions"][0]["ts"]
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", ts)


def test_provided_ts_is_preserved(state_root):
    log_session({"date": "2026-05-01", "mode": "builder", "ts": "2026-05-23T12:34:56Z"})
    assert profile_file(state_root)["sessions"][0]["ts"] == "2026-05-23T12:34:56Z"


def test_resources_rows_do_not_hide_the_last_real_session():
    log_session(
        {
            "date": "2026-05-01",
            "mode": "startup",
            "project_slug": "realproj",
            "assignment": "real assignment text",
            "design_doc": "plans/real.md",
        }
    )
    log_session(
        {
            "date": "2026-05-01",
            "mode": "resources",
            "project_slug": "realproj",
            "assignment": "",
            "design_doc": "",
            "resources_shown": ["url1"],
        }
    )
    lines = read_lines(dev("--read").stdout)
    assert lines["LAST_PROJECT"] == "realproj"
    assert lines["LAST_ASSIGNMENT"] == "real assignment text"
    assert lines["LAST_DESIGN_TITLE"] == "plans/real.md"
    assert lines["RESOURCES_SHOWN"] == "url1"
    assert lines["DESIGN_COUNT"] == "1" and lines["DESIGN_TITLES"] == '["realproj"]'


def sessions_of(modes, signals=None, project="p"):
    out = []
    for i, mode in enumerate(modes):
        s = {"date": f"2026-02-{i + 1:02d}", "mode": mode, "project_slug": project}
        if signals is not None:
            s["signals"] = signals[i]
        out.append(s)
    return out


@pytest.mark.parametrize(
    "modes,count,tier",
    [
        (["startup"] + ["resources"] * 3, 1, "welcome_back"),  # one real session
        (["startup"] * 3 + ["resources"] * 4, 3, "welcome_back"),  # three real sessions
        (["startup"] * 4 + ["resources"] * 5, 4, "regular"),  # four real sessions
        (["startup"] * 7 + ["resources"] * 6, 7, "regular"),  # seven real sessions
        (
            ["startup"] * 7 + ["resources"] * 6 + ["startup"],
            8,
            "inner_circle",
        ),  # eight real sessions
    ],
)
def test_resources_rows_do_not_count(state_root, modes, count, tier):
    write_legacy(state_root, sessions_of(modes))
    lines = builder(state_root)
    assert lines["SESSION_COUNT"] == str(count) and lines["TIER"] == tier


@pytest.mark.parametrize(
    "modes,signals,eligible",
    [
        (
            ["startup", "resources", "resources", "resources"],
            [["a"] * 5, [], [], []],
            "false",
        ),  # one startup session with five signals, then resources rows
        (
            ["builder"] * 3 + ["resources"],
            [["a", "b"], ["c", "d"], ["e"], []],
            "true",
        ),  # three builder sessions
        (
            ["builder"] * 2 + ["resources"],
            [["a", "b", "c"], ["d", "e", "f"], []],
            "false",
        ),  # two builder sessions
        (["builder"] * 3, [["a", "b"], ["c"], ["d"]], "false"),  # three sessions, four signals
        (
            ["builder"] * 3 + ["resources"],
            [["a"], ["b"], ["c"], ["d", "e"]],
            "true",
        ),  # resources signals count
    ],
)
def test_nudge_eligibility(state_root, modes, signals, eligible):
    write_legacy(state_root, sessions_of(modes, signals))
    assert builder(state_root)["NUDGE_ELIGIBLE"] == eligible


def test_trailing_resources_row_does_not_make_cross_project(state_root):
    write_legacy(
        state_root,
        sessions_of(["startup", "startup"], project="samep")
        + sessions_of(["resources"], project="otherp"),
    )
    lines = builder(state_root)
    assert lines["CROSS_PROJECT"] == "false" and lines["LAST_PROJECT"] == "samep"


def test_end_to_end_migrate_then_builder_profile(state_root):
    write_legacy(
        state_root,
        [
            {"date": "2026-01-01", "mode": "builder", "project_slug": "x"},
            {"date": "2026-01-02", "mode": "startup", "project_slug": "x"},
            {"date": "2026-01-03", "mode": "builder", "project_slug": "y"},
        ],
    )
    assert "migrated 3 sessions" in dev("--migrate").stdout
    lines = builder(state_root)
    assert lines["SESSION_COUNT"] == "3" and lines["TIER"] == "welcome_back"
    assert lines["CROSS_PROJECT"] == "true"


def test_log_derive_profile(conn):
    add_events(conn, [("plan-ceo-review-mode", "expand")] * 5)
    assert dev("--derive").returncode == 0
    doc = json.loads(dev("--profile").stdout)
    assert doc["inferred"]["sample_size"] == 5
    assert doc["inferred"]["values"]["scope_appetite"] > 0.5


# the legacy builder-profile shim ------------------------------------------------------------


def test_no_file(state_root):
    lines = builder(state_root)
    assert lines["SESSION_COUNT"] == "0" and lines["TIER"] == "introduction"
    assert lines["TOTAL_SIGNAL_COUNT"] == "0" and lines["CROSS_PROJECT"] == "false"
    assert lines["NUDGE_ELIGIBLE"] == "false" and lines["RESOURCES_SHOWN_COUNT"] == "0"


def test_empty_legacy_file(state_root):
    write_legacy(state_root, [])
    lines = builder(state_root)
    assert lines["SESSION_COUNT"] == "0" and lines["TIER"] == "introduction"


@pytest.mark.parametrize(
    "n,tier",
    [
        (1, "welcome_back"),
        (2, "welcome_back"),
        (3, "welcome_back"),
        (4, "regular"),
        (7, "regular"),
        (8, "inner_circle"),
        (15, "inner_circle"),
    ],
)
def test_tiers_from_identical_legacy_lines(state_root, n, tier):
    # Identical lines are distinct sessions: none may be lost to deduplication.
    write_legacy(state_root, [{"date": "2026-01-01", "mode": "builder", "project_slug": "p"}] * n)
    lines = builder(state_root)
    assert lines["SESSION_COUNT"] == str(n) and lines["TIER"] == tier


def test_signals(state_root):
    write_legacy(
        state_root,
        sessions_of(
            ["builder"] * 3, [["named_users", "pushback"], ["taste"], ["named_users", "agency"]]
        ),
    )
    lines = builder(state_root)
    assert lines["TOTAL_SIGNAL_COUNT"] == "5"
    assert lines["ACCUMULATED_SIGNALS"] == "named_users:2,pushback:1,taste:1,agency:1"


def test_no_signals(state_root):
    write_legacy(state_root, sessions_of(["builder"] * 2))
    lines = builder(state_root)
    assert lines["TOTAL_SIGNAL_COUNT"] == "0" and lines["ACCUMULATED_SIGNALS"] == ""


@pytest.mark.parametrize(
    "projects,cross", [(["a", "a"], "false"), (["a", "b"], "true"), (["a"], "false")]
)
def test_cross_project(state_root, projects, cross):
    write_legacy(
        state_root, [{"date": "2026-01-01", "mode": "builder", "project_slug": p} for p in projects]
    )
    assert builder(state_root)["CROSS_PROJECT"] == cross


@pytest.mark.parametrize(
    "mode,signals,eligible",
    [
        ("builder", [["a", "b"], ["c", "d"], ["e"]], "true"),
        ("startup", [["a", "b", "c"]] * 3, "false"),
        ("builder", [["a"], ["b"], ["c"]], "false"),
    ],
)
def test_nudge(state_root, mode, signals, eligible):
    write_legacy(state_root, sessions_of([mode] * len(signals), signals))
    assert builder(state_root)["NUDGE_ELIGIBLE"] == eligible


def test_two_builders_with_six_signals(state_root):
    write_legacy(state_root, sessions_of(["builder"] * 2, [["a", "b", "c"], ["d", "e", "f"]]))
    assert builder(state_root)["NUDGE_ELIGIBLE"] == "false"


@pytest.mark.parametrize(
    "resources,count", [([["u1", "u2"], ["u3"]], "3"), ([["u1"], ["u1"]], "1"), ([[], []], "0")]
)
def test_resources_union(state_root, resources, count):
    write_legacy(
        state_root,
        [{"date": "2026-01-01", "mode": "builder", "resources_shown": r} for r in resources],
    )
    assert builder(state_root)["RESOURCES_SHOWN_COUNT"] == count


def test_topics_union(state_root):
    write_legacy(
        state_root,
        [
            {"date": "2026-01-01", "mode": "builder", "topics": ["fintech", "payments"]},
            {"date": "2026-01-02", "mode": "builder", "topics": ["payments", "ai-product"]},
        ],
    )
    topics = builder(state_root)["TOPICS"].split(",")
    assert topics == ["fintech", "payments", "ai-product"]


def test_last_fields_come_from_the_last_session(state_root):
    write_legacy(
        state_root,
        [
            {
                "date": "2026-01-01",
                "mode": "builder",
                "project_slug": "first",
                "assignment": "one",
                "design_doc": "d1.md",
            },
            {
                "date": "2026-01-02",
                "mode": "builder",
                "project_slug": "second",
                "assignment": "two",
                "design_doc": "d2.md",
            },
        ],
    )
    lines = builder(state_root)
    assert lines["LAST_PROJECT"] == "second" and lines["LAST_ASSIGNMENT"] == "two"
    assert lines["LAST_DESIGN_TITLE"] == "d2.md"


def test_malformed_lines_skipped(state_root):
    write_legacy(
        state_root, sessions_of(["builder"] * 2), extra_lines=["this is not json", "{broken json"]
    )
    lines = builder(state_root)
    assert lines["SESSION_COUNT"] == "2" and lines["TIER"] == "welcome_back"


def test_design_count(state_root):
    write_legacy(
        state_root,
        [
            {"date": "2026-01-01", "mode": "builder", "project_slug": f"p{i}", "design_doc": d}
            for i, d in enumerate(["path/design-1.md", "", "path/design-2.md"])
        ],
    )
    lines = builder(state_root)
    assert lines["DESIGN_COUNT"] == "2" and lines["DESIGN_TITLES"] == '["p0","p2"]'


# hot path ---------------------------------------------------------------------------------


def test_compat_script_imports_no_heavy_modules(state_root):
    code = (
        "import sys\n"
        "from toolkit.gstack import compat_profile\n"
        "for sub in (['--read'], ['--derive'], ['--vibe'], ['--gap'], ['--trace', 'autonomy']):\n"
        "    compat_profile.run(sub)\n"
        "heavy = {'click', 'pandas', 'numpy', 'datasette', 'nbclient', 'matplotlib'}\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in heavy)\n"
        "print('LOADED', loaded)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "GSTACK_PROJECT_SLUG": PROJECT},
    )
    assert r.returncode == 0, r.stderr
    assert "LOADED []" in r.stdout


def test_profile_lives_under_state_root_not_home(state_root, tmp_path):
    other_home = tmp_path / "elsewhere"
    other_home.mkdir()
    r = dev("--read", env={"GSTACK_HOME": str(other_home), "HOME": str(other_home)})
    assert r.returncode == 0
    assert (state_root / "developer-profile.json").exists()
    assert not any(other_home.rglob("developer-profile.json"))


def test_derive_picks_up_lines_gstack_appended_to_the_question_log(state_root, monkeypatch):
    """A switch-over: gstack's own bin appended to question-log.jsonl; --derive counts it."""
    import json as _json
    import subprocess as _sp

    from tests.helpers import script as _script

    monkeypatch.setenv("GSTACK_PROJECT_SLUG", "switchover")
    log = state_root / "projects" / "switchover" / "question-log.jsonl"
    log.parent.mkdir(parents=True)
    lines = [
        {
            "skill": "plan-ceo-review",
            "question_id": "plan-ceo-review-mode",
            "question_summary": "Mode?",
            "user_choice": "expand",
            "source": "agent",
            "ts": f"2026-04-0{d}T10:00:00.000Z",
        }
        for d in range(1, 6)
    ]
    log.write_text("".join(_json.dumps(x, separators=(",", ":")) + "\n" for x in lines))
    r = _sp.run([_script("gstack-developer-profile"), "--derive"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "DERIVE: ok — 5 events, 1 skills, 1 questions"
    r = _sp.run(
        [_script("gstack-developer-profile"), "--trace", "scope_appetite"],
        capture_output=True,
        text=True,
    )
    assert "5 events for scope_appetite" in r.stdout
