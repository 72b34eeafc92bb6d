"""Generated gstack question-log histories (JSONL files under a state root) for tests.

Two generators of different shapes, so the question-log scorer is not tuned to one:

* ``registry_history``: registered questions only, phase implied by the skill (no phase
  field), category and door type copied from the registry, override odds set by
  category, door type and phase (main effects).
* ``adhoc_history``: ad-hoc question ids (``<skill>-<topic>`` and one-off splits), an
  explicit ``phase`` field, category and door type sometimes missing, a wider spread of
  options, per-topic random effects and a phase x category interaction in the override
  odds, weekday-heavy volume and millisecond timestamps.

Both write what gstack writes: compact JSON lines with ``followed_recommendation`` set by
the recommended-vs-choice rule, sources agent / hook / auto-decided.
"""

import json
import math
import os
import random
from datetime import UTC, datetime, timedelta

from toolkit.core import doors

# What an ad-hoc question is about: one phrase per question id (a question keeps its
# wording), none of them destructive, so no question becomes one-way by its text.
WORDS = (
    "warm the cache",
    "rename the flag",
    "tighten auth checks",
    "reword the docs",
    "split the module",
    "add a retry",
    "merge the branches",
    "hide the banner",
)
AREAS = ("checkout", "search", "billing page", "settings", "onboarding", "export")
PHASE_OF_SKILL = {
    "plan-ceo-review": "ceo",
    "plan-design-review": "design",
    "plan-eng-review": "eng",
    "plan-devex-review": "dx",
}


def _write(root, project, records):
    folder = os.path.join(str(root), "projects", project)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "question-log.jsonl"), "a", encoding="utf-8") as fh:
        fh.writelines(
            json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records
        )


def _answer(rng, p_override, options, source):
    recommended = options[0]
    if source == "auto-decided" or rng.random() >= p_override:
        return recommended, recommended, True
    return recommended, rng.choice(options[1:]), False


def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def registry_history(root, days=120, seed=1, end="2026-11-30", sessions_per_day=5.0):
    """Registered questions, phase from skill; returns the number of records written."""
    rng = random.Random(seed)
    registry = doors.load_bundled_registry()
    by_skill = {}
    for e in registry:
        by_skill.setdefault(e["skill"], []).append(e)
    skills = sorted(by_skill)
    weights = [4 if s in PHASE_OF_SKILL else 1 for s in skills]
    cat_effect = {
        "approval": -0.9,
        "routing": 1.4,
        "clarification": 2.0,
        "cherry-pick": 0.9,
        "feedback-loop": 0.0,
    }
    phase_effect = {"ceo": 1.5, "design": 0.4, "eng": 0.6, "dx": -1.0}
    end_day = datetime.fromisoformat(end).replace(tzinfo=UTC)
    written = 0
    for d in range(days):
        day = end_day - timedelta(days=days - 1 - d)
        per_project = {}
        for s in range(max(1, int(rng.expovariate(1 / sessions_per_day)))):
            project = rng.choice(("acme-web", "acme-api"))
            skill = rng.choices(skills, weights)[0]
            sid = f"{project}-{day:%Y%m%d}-{s}"
            t = day + timedelta(hours=rng.uniform(8, 20))
            for _ in range(rng.randint(2, 7)):
                q = rng.choice(by_skill[skill])
                phase = PHASE_OF_SKILL.get(skill, "other")
                logit = -2.6 + cat_effect[q["category"]] + phase_effect.get(phase, -1.2)
                logit += 1.5 if q["door_type"] == "one-way" else 0.0
                source = rng.choices(("agent", "hook", "auto-decided"), (6, 3, 1))[0]
                if source == "auto-decided" and q["door_type"] == "one-way":
                    source = "agent"
                options = q.get("options") or ["yes", "no"]
                if len(options) < 2:
                    options = options + ["other"]
                rec, choice, followed = _answer(rng, _sigmoid(logit), options, source)
                t += timedelta(seconds=rng.randint(20, 600))
                record = {
                    "skill": skill,
                    "question_id": q["id"],
                    "question_summary": f"{q['id'].replace('-', ' ')} for {project}",
                    "category": q["category"],
                    "door_type": q["door_type"],
                    "options_count": len(options),
                    "user_choice": choice,
                    "recommended": rec,
                    "session_id": sid,
                    "source": source,
                }
                if source == "hook":
                    record["tool_use_id"] = f"toolu_{rng.getrandbits(48):012x}"
                record["followed_recommendation"] = followed
                record["ts"] = t.strftime("%Y-%m-%dT%H:%M:%S.000Z")
                per_project.setdefault(project, []).append(record)
                written += 1
        for project, records in per_project.items():
            _write(root, project, records)
    return written


def adhoc_history(root, days=100, seed=2, end="2026-11-30"):
    """Ad-hoc ids with an explicit phase field; returns the number of records written."""
    rng = random.Random(seed)
    categories = ("approval", "clarification", "routing", "cherry-pick", "feedback-loop")
    phases = ("ceo", "design", "eng", "dx", "other")
    skills = {
        "ceo": "autoplan",
        "design": "autoplan",
        "eng": "review",
        "dx": "autoplan",
        "other": "ship",
    }
    topics = []
    for phase in phases:
        for j in range(12):
            cat = rng.choice(categories)
            topics.append(
                {
                    "phase": phase,
                    "category": cat,
                    "skill": skills[phase],
                    "id": f"{skills[phase]}-{phase}-point-{j}",
                    "door": "one-way" if rng.random() < 0.12 else "two-way",
                    "effect": rng.gauss(0.0, 0.5),
                    "options": rng.randint(2, 6),
                    "words": rng.choice(WORDS),
                }
            )
    cat_effect = {
        "approval": 0.3,
        "clarification": -1.4,
        "routing": -0.4,
        "cherry-pick": 1.6,
        "feedback-loop": 1.0,
    }
    phase_effect = {"ceo": -1.2, "design": 1.4, "eng": 0.2, "dx": 0.7, "other": -0.8}
    end_day = datetime.fromisoformat(end).replace(tzinfo=UTC)
    written = 0
    for d in range(days):
        day = end_day - timedelta(days=days - 1 - d)
        n_sessions = rng.randint(3, 9) if day.weekday() < 5 else rng.randint(0, 2)
        records = []
        for s in range(n_sessions):
            sid = f"sess-{rng.getrandbits(40):010x}"
            t = day + timedelta(hours=rng.uniform(6, 23))
            focus = rng.sample(topics, 6)
            for _ in range(rng.randint(1, 12)):
                topic = rng.choice(focus)
                logit = (
                    -2.2
                    + cat_effect[topic["category"]]
                    + phase_effect[topic["phase"]]
                    + topic["effect"]
                )
                if topic["door"] == "one-way":
                    logit += 0.8
                if topic["phase"] == "eng" and topic["category"] == "approval":
                    logit += 1.8  # an interaction the main effects alone miss
                source = rng.choices(("agent", "hook", "auto-decided"), (3, 5, 2))[0]
                if topic["door"] == "one-way" and source == "auto-decided":
                    source = "hook"
                options = [f"option-{c}" for c in "abcdef"[: topic["options"]]]
                rec, choice, followed = _answer(rng, _sigmoid(logit), options, source)
                qid = (
                    topic["id"]
                    if rng.random() > 0.08
                    else f"{topic['skill']}-split-{rng.getrandbits(24):06x}"
                )
                t += timedelta(milliseconds=rng.randint(5_000, 900_000))
                record = {
                    "skill": topic["skill"],
                    "question_id": qid,
                    "question_summary": f"{topic['words'].capitalize()} in the {rng.choice(AREAS)}",
                    "user_choice": choice,
                    "recommended": rec,
                    "session_id": sid,
                    "phase": topic["phase"],
                }
                if rng.random() < 0.8:
                    record["category"] = topic["category"]
                if rng.random() < 0.7 or topic["door"] == "one-way":
                    record["door_type"] = topic["door"]
                if rng.random() < 0.9:
                    record["options_count"] = topic["options"]
                record["source"] = source
                if source == "hook":
                    record["tool_use_id"] = f"toolu_{rng.getrandbits(64):016x}"
                record["followed_recommendation"] = followed
                record["ts"] = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
                records.append(record)
                written += 1
        if records:
            _write(root, "beta-app", records)
    return written
