"""A simulated /autoplan review: 4 phases, 40 findings (8 one-way) against asking all 40.

The V0 baseline asks every finding. Pacing must show at most half as many questions
while every one-way finding is still shown. benchmarks/pacing.py prints the same
scenario's figures for benchmarks/RESULTS.md.
"""

import random

import pytest

from toolkit.pacing import rank as pacing

PHASES = ("ceo", "design", "eng", "dx")
# Two one-way findings per phase, each made one-way a different way: the registry, the
# finding's own door type, or the keyword net on its summary.
ONE_WAY = {
    "ceo": [
        ("plan-ceo-review-premise-revise", "Revise the premise: target teams, not solo devs", None),
        ("ceo-drop-free-tier", "Remove the free tier: a breaking change for current users", None),
    ],
    "design": [
        ("design-rename-public-routes", "Rename every public route", "one-way"),
        ("design-wipe-onboarding", "Wipe the onboarding flow and start over", None),
    ],
    "eng": [
        ("plan-eng-review-arch-finding", "Move sessions from Redis to Postgres", None),
        ("eng-drop-legacy-table", "Drop table legacy_orders once the backfill is done", None),
    ],
    "dx": [
        ("dx-rotate-keys", "Rotate the api keys that ship in the examples", None),
        ("dx-cli-flags", "Change the CLI flags (scripts in the wild break)", "one-way"),
    ],
}
TWO_WAY_TOPICS = [
    "naming",
    "error message",
    "retry policy",
    "log level",
    "test gap",
    "docs",
    "config default",
    "cache ttl",
    "copy",
    "spacing",
    "timeout",
    "metric",
]


def four_phase_review(seed=2026):
    """[(phase, findings)] for one review: 10 findings per phase, 2 of them one-way."""
    rng = random.Random(seed)
    factor = lambda: rng.choices([0, 1, 2], weights=[35, 40, 25])[0]
    out = []
    for phase in PHASES:
        findings = []
        for fid, summary, door in ONE_WAY[phase]:
            findings.append(
                {
                    "id": fid,
                    "summary": summary,
                    "severity": factor(),
                    "irreversibility": 2,
                    "decision_matters": factor(),
                    "door_type": door,
                    "recommended": "keep",
                    "options": ["keep", "change"],
                }
            )
        for k in range(8):
            topic = rng.choice(TWO_WAY_TOPICS)
            findings.append(
                {
                    "id": f"{phase}-{topic.replace(' ', '-')}-{k}",
                    "summary": f"{phase.upper()}: adjust the {topic}",
                    "severity": factor(),
                    "irreversibility": factor(),
                    "decision_matters": factor(),
                    "recommended": "fix-now",
                    "options": ["fix-now", "defer"],
                }
            )
        out.append((phase, findings))
    return out


def run_review(conn, session="review-1", budget=None, seed=2026):
    """Rank the review phase by phase; returns per-phase outputs."""
    outputs = []
    for phase, findings in four_phase_review(seed):
        request = {"session_id": session, "phase": phase, "findings": findings}
        if budget is not None:
            request["budget"] = budget
        outputs.append(pacing.rank(conn, request, "sim").output)
    return outputs


def shown(outputs):
    return [s["id"] for o in outputs for s in o["surface"]]


def test_scenario_shape():
    review = four_phase_review()
    findings = [f for _, fs in review for f in fs]
    assert len(findings) == 40 and len({f["id"] for f in findings}) == 40
    assert four_phase_review() == review  # seeded: the same review every run


@pytest.mark.parametrize("budget", [None, 6])
def test_pacing_shows_at_most_half_of_ask_all_and_every_one_way(conn, budget):
    outputs = run_review(conn, budget=budget)
    baseline = 40  # V0: every finding is a question
    asked = shown(outputs)
    one_way = {fid for phase in PHASES for fid, _, _ in ONE_WAY[phase]}
    assert one_way <= set(asked)
    assert all(
        o["surface"][i]["reason"] == "one-way"
        for o in outputs
        for i, s in enumerate(o["surface"])
        if s["id"] in one_way
    )
    assert len(asked) <= baseline * 0.5
    rank_surfaced = [s for o in outputs for s in o["surface"] if s["reason"] == "rank"]
    if budget is not None:
        assert len(rank_surfaced) <= budget
    # everything else is a Silent Decision in the question log, with its phase
    logged = dict(
        conn.execute(
            "SELECT phase, count(*) FROM question_log WHERE source = 'auto-decided' GROUP BY phase"
        )
    )
    assert sum(logged.values()) == baseline - len(asked)
    per_phase = {r["phase"]: dict(r) for r in conn.execute("SELECT * FROM pacing_phase_counts")}
    assert {p: per_phase[p]["silent"] for p in PHASES} == {p: logged.get(p, 0) for p in PHASES}
    assert all(per_phase[p]["surfaced_rank"] <= 3 for p in PHASES)
