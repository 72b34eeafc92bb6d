"""Facts about the bundled registry and signal map that gstack's own tests pin."""

import re

import pytest

from toolkit.core import registry, vocabulary

ENTRIES = registry.bundled_registry()
SIGNALS = registry.bundled_signal_map()
MAP = SIGNALS["map"]
KEBAB = re.compile(r"[a-z0-9-]+")
SAFETY_IDS = [
    "ship-test-failure-triage",
    "review-sql-safety",
    "review-llm-trust-boundary",
    "office-hours-landscape-privacy-gate",
    "plan-ceo-review-premise-revise",
    "plan-eng-review-arch-finding",
    "investigate-fix-apply",
    "land-and-deploy-merge-confirm",
    "land-and-deploy-rollback",
    "cso-global-scan-approval",
    "cso-finding-fix",
    "autoplan-user-challenge",
]


def test_entry_shape():
    # 146 (descriptions are ours to write; when present they follow the same rule)
    ids = [e["id"] for e in ENTRIES]
    assert len(ids) == len(set(ids)) == 53
    for e in ENTRIES:
        assert KEBAB.fullmatch(e["id"]) and len(e["id"]) <= 64
        assert e["id"].startswith(e["skill"] + "-")
        assert e["category"] in (
            "approval",
            "clarification",
            "routing",
            "cherry-pick",
            "feedback-loop",
        )
        assert e["door_type"] in ("one-way", "two-way")
        if e.get("options") is not None:
            assert e["options"] and all(isinstance(o, str) and o for o in e["options"])
        description = e.get("description")
        if description:
            assert 1 <= len(description) <= 200 and "\n" not in description


def test_lookup():
    # 147
    e = registry.lookup(ENTRIES, "ship-test-failure-triage")
    assert (e["skill"], e["door_type"]) == ("ship", "one-way")
    assert registry.lookup(ENTRIES, "adhoc-not-registered") is None


def test_one_way_set():
    # 148
    one_way = registry.one_way_ids(ENTRIES)
    assert {
        "ship-test-failure-triage",
        "review-sql-safety",
        "land-and-deploy-merge-confirm",
    } <= one_way
    assert "ship-changelog-voice-polish" not in one_way
    assert set(SAFETY_IDS) <= one_way and len(one_way) >= 10
    assert one_way == set(SAFETY_IDS)


def test_stats_are_consistent():
    # 149
    s = registry.stats(ENTRIES)
    assert s["total"] == len(ENTRIES) == s["one_way"] + s["two_way"]
    assert s["total"] == sum(s["by_skill"].values()) == sum(s["by_category"].values())
    assert (s["one_way"], s["two_way"]) == (12, 41)
    assert s["by_category"] == {"approval": 41, "routing": 8, "cherry-pick": 2, "clarification": 2}


def test_skill_coverage():
    # 150
    skills = {e["skill"] for e in ENTRIES}
    for skill in (
        "ship",
        "review",
        "office-hours",
        "plan-ceo-review",
        "plan-eng-review",
        "plan-design-review",
        "plan-devex-review",
        "qa",
        "investigate",
        "land-and-deploy",
        "cso",
    ):
        assert skill in skills
    assert len(skills) >= 10
    ids = {e["id"] for e in ENTRIES}
    assert {
        "preamble-telemetry-consent",
        "preamble-proactive-behavior",
        "preamble-routing-injection",
        "plan-tune-enable-setup",
        "plan-tune-declared-dimension",
        "plan-tune-confirm-mutation",
    } <= ids


def test_signal_keys_and_map():
    # 151
    used = {e["signal_key"] for e in ENTRIES if e.get("signal_key")}
    assert used <= set(MAP)
    assert len(set(MAP) - used) <= 3
    assert all(KEBAB.fullmatch(k) for k in used | set(MAP))


def test_apply_signal():
    # 152
    totals = {}
    assert registry.apply_signal(MAP, "scope-appetite", "expand", totals) == [
        ("scope_appetite", 0.06)
    ]
    assert totals == {"scope_appetite": 0.06}
    assert registry.apply_signal(MAP, "no-such-key", "expand", totals) == []
    assert registry.apply_signal(MAP, "scope-appetite", "no-such-choice", totals) == []
    assert totals == {"scope_appetite": 0.06}
    registry.apply_signal(MAP, "architecture-care", "fix-now", totals)
    assert totals == {"scope_appetite": 0.06, "architecture_care": 0.05, "risk_tolerance": -0.02}


@pytest.mark.parametrize(
    "total, value",
    [(0, 0.5), (0.06, 0.545), (0.12, 0.589), (0.3, 0.711), (-0.18, 0.368), (1, 0.953), (-1, 0.047)],
)
def test_normalize_worked_values(total, value):
    # normalise(0) = 0.5, outputs in [0, 1], and gstack's worked values
    assert registry.normalize(total) == value
    assert SIGNALS["normalization"]["examples"][str(total)] == value


def test_normalize_range_and_dimensions():
    # 153
    for total in [x / 2 for x in range(-20, 21)] + [-1e6, 1e6]:
        assert 0 <= registry.normalize(total) <= 1
    assert len(vocabulary.DIMENSIONS) == 5
    assert tuple(SIGNALS["dimension_order"]) == vocabulary.DIMENSIONS
    for choices in MAP.values():
        for deltas in choices.values():
            assert all(dim in vocabulary.DIMENSIONS for dim, _ in deltas)
