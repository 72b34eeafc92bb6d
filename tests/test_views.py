"""The analysis views, each checked against rows worked out by hand from a small history.

The history (``build_history``) is written straight into the tables, as hooks, pacing and
preference commands would. The expected rows below were computed by hand from it; the
comments next to them say which events add up to each number. tests/test_datasette.py
serves the same history and expects the same rows.
"""

import json
import os
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.rollup_support import REFERENCE, assert_rollups_exact
from toolkit.store import db

VIEW_NAMES = [
    "daily_activity",
    "one_way_audit",
    "phase_counts",
    "preference_effective",
    "question_review",
    "recent_auto_decisions",
    "session_interruptions",
    "source_stats",
    "unmarked_questions",
]

# id, project, session, phase, ts, question_id, source, choice, recommended, followed,
# door_class, door_type, skill, summary
EVENTS = [
    (1, "alpha", "s1", "ceo", "2026-03-01T10:00:00.000Z", "plan-ceo-review-mode", "agent",
     "expand", "expand", 1, "two-way", None, "plan-ceo-review", "Which review mode?"),
    (2, "alpha", "s1", "ceo", "2026-03-01T10:02:00.000Z", "plan-ceo-review-premise-revise", "agent",
     "revise", "hold", 0, "one-way", None, "plan-ceo-review", "Revise the premise?"),
    (3, "alpha", "s1", "eng", "2026-03-01T10:10:00.000Z", "plan-eng-review-test-gap", "auto-decided",
     "add-test", "add-test", 1, "two-way", None, "unknown", "Add the missing test?"),
    (4, "alpha", "s1", "eng", "2026-03-01T10:20:00.000Z", "plan-eng-review-test-gap", "agent",
     "add-test", "add-test", 1, "two-way", None, "plan-eng-review", "Add the missing test?"),
    (5, "alpha", "s1", "eng", "2026-03-01T10:30:00.000Z", "hook-aaaaaaaaaa", "hook",
     "A) Yes", None, None, "two-way", None, "unknown", "Use the new cache?"),
    (6, "alpha", "s2", "design", "2026-03-02T09:00:00.000Z", "plan-design-review-fix", "agent",
     "fix-now", "fix-now", 1, "two-way", None, "plan-design-review", "Fix the contrast issue?"),
    (7, "alpha", "s2", "design", "2026-03-02T09:05:00.000Z", "hook-aaaaaaaaaa", "hook",
     "B) No", None, None, "two-way", None, "unknown", "Use the new cache? (v2)"),
    (8, "alpha", "s2", "design", "2026-03-02T09:30:00.000Z", "plan-eng-review-test-gap", "agent",
     "add-test", "add-test", 1, "two-way", None, "plan-eng-review", "Add the missing test?"),
    (9, "alpha", None, "unknown", "2026-03-02T12:00:00.000Z", "hook-bbbbbbbbbb", "auq-other",
     "other text", None, None, "two-way", None, "unknown", "Rename the module?"),
    (10, "beta", "s3", "dx", "2026-03-02T23:59:59.000Z", "plan-devex-review-friction-fix", "auto-decided",
     "fix-now", "fix-now", 1, "two-way", None, "unknown", "Fix the CLI friction?"),
    (11, "beta", "s3", "dx", "2026-03-03T00:00:01.000Z", "plan-devex-review-friction-fix", "agent",
     "defer", "fix-now", 0, "two-way", None, "plan-devex-review", "Fix the CLI friction?"),
    (12, "beta", "s3", "dx", "2026-03-03T00:10:00.000Z", "beta-drop-legacy-table", "agent",
     "keep", "drop", 0, "one-way", None, "beta", "Drop the legacy table?"),
    # Three safety bugs for the audit: one-way by registry, by classifier, as logged.
    (13, "beta", "s3", "eng", "2026-03-03T00:20:00.000Z", "ship-test-failure-triage", "auto-decided",
     "ack-and-ship", "fix-now", 0, "two-way", None, "unknown", "Tests fail: ship anyway?"),
    (14, "beta", "s3", "eng", "2026-03-03T00:25:00.000Z", "beta-force-push", "auto-decided",
     "yes", "yes", 1, "one-way", None, "unknown", "Force-push to main?"),
    (15, "beta", "s4", "other", "2026-03-03T08:00:00.000Z", "plan-ceo-review-mode", "auto-decided",
     "hold", "hold", 1, "two-way", "one-way", "unknown", "Which review mode?"),
    (16, "alpha", "s2", "design", "2026-03-02T09:40:00.000Z", "plan-eng-review-test-gap", "agent",
     "add-test", "add-test", 1, "two-way", None, "plan-eng-review", "Add the missing test?"),
]

# project, session, phase, finding_id, disposition, surface_reason, door_type, created_at
FINDINGS = [
    ("alpha", "s1", "eng", "finding-a", "surfaced", "rank", "two-way", "2026-03-01T10:15:00.000Z"),
    ("alpha", "s1", "eng", "finding-b", "silent", None, "two-way", "2026-03-01T10:15:00.000Z"),
    ("alpha", "s1", "eng", "finding-c", "surfaced", "one-way", "one-way", "2026-03-01T10:16:00.000Z"),
    ("beta", "s5", "ceo", "finding-d", "silent", None, "two-way", "2026-03-04T10:00:00.000Z"),
]

# scope, question_id, preference, raw_value, source, updated_at
PREFERENCES = [
    ("alpha", "plan-eng-review-test-gap", "never-ask", None, "plan-tune", "2026-03-01T09:00:00.000Z"),
    ("__global__", "plan-eng-review-test-gap", "always-ask", None, "plan-tune", "2026-02-01T00:00:00.000Z"),
    ("__global__", "plan-devex-review-friction-fix", "never-ask", None, "inline-user", "2026-02-02T00:00:00.000Z"),
    ("__global__", "ship-test-failure-triage", "never-ask", None, "plan-tune", "2026-02-03T00:00:00.000Z"),
    ("beta", "plan-ceo-review-split-scope", "never-ask", None, "plan-tune", "2026-03-03T00:00:00.000Z"),
    ("alpha", "hook-aaaaaaaaaa", "unknown", "sometimes", "plan-tune", "2026-03-01T11:00:00.000Z"),
]


def insert_event(conn, id=None, project="p", session_id="s", phase="eng", ts="2026-01-01T00:00:00.000Z",
                 question_id="plan-eng-review-test-gap", source="agent", user_choice="a", recommended=None,
                 followed=None, door_class="two-way", door_type=None, skill="plan-eng-review",
                 summary="A question?", event_key=None, synthetic=0):
    cur = conn.execute(
        "INSERT INTO question_log (id, event_key, project, ts, skill, question_id, question_summary,"
        " user_choice, recommended, followed_recommendation, session_id, source, phase, door_class,"
        " door_type, raw_json, recorded_at, synthetic)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?)",
        (id, event_key or f"key-{id}-{project}-{ts}-{question_id}-{source}-{os.urandom(4).hex()}", project, ts,
         skill, question_id, summary, user_choice, recommended, followed, session_id, source, phase,
         door_class, door_type, ts, synthetic),
    )
    return cur.lastrowid


def insert_finding(conn, project, session_id, phase, finding_id, disposition, surface_reason, door_type,
                   created_at, synthetic=0, chain_id=None, flipped_at=None):
    cur = conn.execute(
        "INSERT INTO findings (project, session_id, chain_id, phase, finding_id, summary, severity,"
        " irreversibility, decision_matters, door_type, door_reason, score, threshold, disposition,"
        " surface_reason, created_at, updated_at, synthetic, flipped_at)"
        " VALUES (?, ?, ?, ?, ?, 'A finding', 1, 1, 1, ?, 'test', 3, 4, ?, ?, ?, ?, ?, ?)",
        (project, session_id, chain_id or "chain-" + session_id, phase, finding_id, door_type, disposition,
         surface_reason, created_at, created_at, synthetic, flipped_at),
    )
    return cur.lastrowid


def build_history(conn):
    with db.transaction(conn):
        for (id_, project, session, phase, ts, qid, source, choice, rec, followed, door_class, door_type,
             skill, summary) in EVENTS:
            insert_event(conn, id=id_, project=project, session_id=session, phase=phase, ts=ts,
                         question_id=qid, source=source, user_choice=choice, recommended=rec,
                         followed=followed, door_class=door_class, door_type=door_type, skill=skill,
                         summary=summary, event_key=f"event-{id_}")
        for f in FINDINGS:
            insert_finding(conn, *f)
        conn.executemany(
            "INSERT INTO preferences (scope, question_id, preference, raw_value, source, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            PREFERENCES,
        )


def phase_row(project, session_id, phase, questions, asked, auto, one_way, followed, overridden,
              surfaced, silent, budget, first_ts, last_ts):
    return dict(project=project, session_id=session_id, phase=phase, questions=questions, asked=asked,
                auto_decided=auto, one_way=one_way, followed=followed, overridden=overridden,
                findings_surfaced=surfaced, findings_silent=silent, budget_spent=budget,
                first_ts=first_ts, last_ts=last_ts)


def session_row(project, session_id, shown, auto, one_way, surfaced, silent, first_ts, last_ts,
                minutes, phase_count, phases):
    return dict(project=project, session_id=session_id, shown=shown, auto_decided=auto, one_way=one_way,
                findings_surfaced=surfaced, findings_silent=silent, first_ts=first_ts, last_ts=last_ts,
                duration_minutes=minutes, phase_count=phase_count, phases=phases)


def review_row(project, question_id, skill, events, answered, auto, last_summary, last_choice, followed,
               overridden, rate, distinct, door_type, registration, first_ts, last_ts):
    return dict(project=project, question_id=question_id, skill=skill, events=events, answered=answered,
                auto_decided=auto, last_summary=last_summary, last_choice=last_choice, followed=followed,
                overridden=overridden, override_rate=rate, distinct_choices=distinct, door_type=door_type,
                registration=registration, first_ts=first_ts, last_ts=last_ts)


def pref_row(project, question_id, preference, raw_value, came_from, shadowed, source, updated_at,
             door_type, effect, inert):
    return dict(project=project, question_id=question_id, preference=preference, raw_value=raw_value,
                came_from=came_from, shadowed_global=shadowed, source=source, updated_at=updated_at,
                door_type=door_type, effect=effect, inert=inert)


D1, D2, D3, D4 = "2026-03-01T", "2026-03-02T", "2026-03-03T", "2026-03-04T"

EXPECTED = {
    "phase_counts": [
        # events 1, 2: 2 asked by the agent, 2 one-way as classified, 1 followed, 1 overridden
        phase_row("alpha", "s1", "ceo", 2, 2, 0, 1, 1, 1, 0, 0, 0, D1 + "10:00:00.000Z", D1 + "10:02:00.000Z"),
        # events 3 (auto), 4, 5 (hook, no recommendation) and findings a (rank), b (silent), c (one-way)
        phase_row("alpha", "s1", "eng", 3, 2, 1, 0, 2, 0, 2, 1, 1, D1 + "10:10:00.000Z", D1 + "10:30:00.000Z"),
        # events 6, 7, 8, 16
        phase_row("alpha", "s2", "design", 4, 4, 0, 0, 3, 0, 0, 0, 0, D2 + "09:00:00.000Z", D2 + "09:40:00.000Z"),
        # event 9 has no session
        phase_row("alpha", None, "unknown", 1, 1, 0, 0, 0, 0, 0, 0, 0, D2 + "12:00:00.000Z", D2 + "12:00:00.000Z"),
        # events 10 (auto), 11 (overridden), 12 (one-way by classifier, overridden)
        phase_row("beta", "s3", "dx", 3, 2, 1, 1, 1, 2, 0, 0, 0, D2 + "23:59:59.000Z", D3 + "00:10:00.000Z"),
        # events 13 (auto, overridden; two-way as classified), 14 (auto, one-way by classifier)
        phase_row("beta", "s3", "eng", 2, 0, 2, 1, 1, 1, 0, 0, 0, D3 + "00:20:00.000Z", D3 + "00:25:00.000Z"),
        # event 15 (auto, logged one-way)
        phase_row("beta", "s4", "other", 1, 0, 1, 1, 1, 0, 0, 0, 0, D3 + "08:00:00.000Z", D3 + "08:00:00.000Z"),
        # finding d only: a phase where pacing kept everything silent
        phase_row("beta", "s5", "ceo", 0, 0, 0, 0, 0, 0, 0, 1, 0, D4 + "10:00:00.000Z", D4 + "10:00:00.000Z"),
    ],
    "session_interruptions": [
        session_row("alpha", "s1", 4, 1, 1, 2, 1, D1 + "10:00:00.000Z", D1 + "10:30:00.000Z", 30.0, 2, "ceo,eng"),
        session_row("alpha", "s2", 4, 0, 0, 0, 0, D2 + "09:00:00.000Z", D2 + "09:40:00.000Z", 40.0, 1, "design"),
        session_row("alpha", None, 1, 0, 0, 0, 0, D2 + "12:00:00.000Z", D2 + "12:00:00.000Z", 0.0, 1, "unknown"),
        # 23:59:59 to 00:25:00 is 25 minutes and 1 second; phases in review order, eng before dx
        session_row("beta", "s3", 2, 3, 2, 0, 0, D2 + "23:59:59.000Z", D3 + "00:25:00.000Z", 25.0, 2, "eng,dx"),
        session_row("beta", "s4", 0, 1, 1, 0, 0, D3 + "08:00:00.000Z", D3 + "08:00:00.000Z", 0.0, 1, "other"),
        session_row("beta", "s5", 0, 0, 0, 0, 1, D4 + "10:00:00.000Z", D4 + "10:00:00.000Z", 0.0, 1, "ceo"),
    ],
    "question_review": [
        review_row("alpha", "hook-aaaaaaaaaa", "unknown", 2, 2, 0, "Use the new cache? (v2)", "B) No", 0, 0,
                   None, 2, "two-way", "unmarked", D1 + "10:30:00.000Z", D2 + "09:05:00.000Z"),
        review_row("alpha", "hook-bbbbbbbbbb", "unknown", 1, 1, 0, "Rename the module?", "other text", 0, 0,
                   None, 1, "two-way", "unmarked", D2 + "12:00:00.000Z", D2 + "12:00:00.000Z"),
        review_row("alpha", "plan-ceo-review-mode", "plan-ceo-review", 1, 1, 0, "Which review mode?", "expand",
                   1, 0, 0.0, 1, "two-way", "registered", D1 + "10:00:00.000Z", D1 + "10:00:00.000Z"),
        review_row("alpha", "plan-ceo-review-premise-revise", "plan-ceo-review", 1, 1, 0, "Revise the premise?",
                   "revise", 0, 1, 1.0, 1, "one-way", "registered", D1 + "10:02:00.000Z", D1 + "10:02:00.000Z"),
        review_row("alpha", "plan-design-review-fix", "plan-design-review", 1, 1, 0, "Fix the contrast issue?",
                   "fix-now", 1, 0, 0.0, 1, "two-way", "registered", D2 + "09:00:00.000Z", D2 + "09:00:00.000Z"),
        # events 3 (auto), 4, 8, 16: the user always answered add-test
        review_row("alpha", "plan-eng-review-test-gap", "plan-eng-review", 4, 3, 1, "Add the missing test?",
                   "add-test", 4, 0, 0.0, 1, "two-way", "registered", D1 + "10:10:00.000Z", D2 + "09:40:00.000Z"),
        # ad-hoc ids: skill from the first event, door type from the classification when recorded
        review_row("beta", "beta-drop-legacy-table", "beta", 1, 1, 0, "Drop the legacy table?", "keep", 0, 1, 1.0,
                   1, "one-way", "ad-hoc", D3 + "00:10:00.000Z", D3 + "00:10:00.000Z"),
        review_row("beta", "beta-force-push", "unknown", 1, 0, 1, "Force-push to main?", "yes", 1, 0, 0.0, 0,
                   "one-way", "ad-hoc", D3 + "00:25:00.000Z", D3 + "00:25:00.000Z"),
        # event 15 logged one-way, but the registry (two-way) decides the door type here
        review_row("beta", "plan-ceo-review-mode", "plan-ceo-review", 1, 0, 1, "Which review mode?", "hold", 1, 0,
                   0.0, 0, "two-way", "registered", D3 + "08:00:00.000Z", D3 + "08:00:00.000Z"),
        review_row("beta", "plan-devex-review-friction-fix", "plan-devex-review", 2, 1, 1, "Fix the CLI friction?",
                   "defer", 1, 1, 0.5, 1, "two-way", "registered", D2 + "23:59:59.000Z", D3 + "00:00:01.000Z"),
        review_row("beta", "ship-test-failure-triage", "ship", 1, 0, 1, "Tests fail: ship anyway?", "ack-and-ship",
                   0, 1, 1.0, 0, "one-way", "registered", D3 + "00:20:00.000Z", D3 + "00:20:00.000Z"),
    ],
    "source_stats": [
        # alpha: agent 1, 2, 4, 6, 8, 16; auto 3; hook 5, 7; auq-other 9 (10 events)
        dict(project="alpha", source="agent", events=6, share_pct=60.0, unmarked=0, days_active=2,
             first_day="2026-03-01", last_day="2026-03-02"),
        dict(project="alpha", source="auq-other", events=1, share_pct=10.0, unmarked=1, days_active=1,
             first_day="2026-03-02", last_day="2026-03-02"),
        dict(project="alpha", source="auto-decided", events=1, share_pct=10.0, unmarked=0, days_active=1,
             first_day="2026-03-01", last_day="2026-03-01"),
        dict(project="alpha", source="hook", events=2, share_pct=20.0, unmarked=2, days_active=2,
             first_day="2026-03-01", last_day="2026-03-02"),
        # beta: agent 11, 12; auto 10, 13, 14, 15 (6 events)
        dict(project="beta", source="agent", events=2, share_pct=33.3, unmarked=0, days_active=1,
             first_day="2026-03-03", last_day="2026-03-03"),
        dict(project="beta", source="auto-decided", events=4, share_pct=66.7, unmarked=0, days_active=2,
             first_day="2026-03-02", last_day="2026-03-03"),
    ],
    "recent_auto_decisions": [
        dict(id=3, ts=D1 + "10:10:00.000Z", project="alpha", session_id="s1", phase="eng",
             question_id="plan-eng-review-test-gap", skill="unknown", question_summary="Add the missing test?",
             user_choice="add-test", recommended="add-test", tool_use_id=None),
        dict(id=10, ts=D2 + "23:59:59.000Z", project="beta", session_id="s3", phase="dx",
             question_id="plan-devex-review-friction-fix", skill="unknown", question_summary="Fix the CLI friction?",
             user_choice="fix-now", recommended="fix-now", tool_use_id=None),
        dict(id=13, ts=D3 + "00:20:00.000Z", project="beta", session_id="s3", phase="eng",
             question_id="ship-test-failure-triage", skill="unknown", question_summary="Tests fail: ship anyway?",
             user_choice="ack-and-ship", recommended="fix-now", tool_use_id=None),
        dict(id=14, ts=D3 + "00:25:00.000Z", project="beta", session_id="s3", phase="eng",
             question_id="beta-force-push", skill="unknown", question_summary="Force-push to main?",
             user_choice="yes", recommended="yes", tool_use_id=None),
        dict(id=15, ts=D3 + "08:00:00.000Z", project="beta", session_id="s4", phase="other",
             question_id="plan-ceo-review-mode", skill="unknown", question_summary="Which review mode?",
             user_choice="hold", recommended="hold", tool_use_id=None),
    ],
    "unmarked_questions": [
        dict(project="alpha", question_id="hook-aaaaaaaaaa", events=2, last_summary="Use the new cache? (v2)",
             last_choice="B) No", first_ts=D1 + "10:30:00.000Z", last_ts=D2 + "09:05:00.000Z"),
        dict(project="alpha", question_id="hook-bbbbbbbbbb", events=1, last_summary="Rename the module?",
             last_choice="other text", first_ts=D2 + "12:00:00.000Z", last_ts=D2 + "12:00:00.000Z"),
    ],
    "one_way_audit": [
        dict(id=13, ts=D3 + "00:20:00.000Z", project="beta", session_id="s3", phase="eng",
             question_id="ship-test-failure-triage", question_summary="Tests fail: ship anyway?",
             user_choice="ack-and-ship", registry_door_type="one-way", door_class="two-way", door_reason=None,
             logged_door_type=None, decided_by="check", flagged_by="registry"),
        dict(id=14, ts=D3 + "00:25:00.000Z", project="beta", session_id="s3", phase="eng",
             question_id="beta-force-push", question_summary="Force-push to main?", user_choice="yes",
             registry_door_type=None, door_class="one-way", door_reason=None, logged_door_type=None,
             decided_by="check", flagged_by="classifier"),
        dict(id=15, ts=D3 + "08:00:00.000Z", project="beta", session_id="s4", phase="other",
             question_id="plan-ceo-review-mode", question_summary="Which review mode?", user_choice="hold",
             registry_door_type="two-way", door_class="two-way", door_reason=None, logged_door_type="one-way",
             decided_by="check", flagged_by="logged"),
    ],
    "daily_activity": [
        # events 1-5
        dict(day="2026-03-01", project="alpha", questions=5, asked=4, auto_decided=1, one_way=1, followed=3,
             overridden=1, unmarked=1),
        # events 6-9 and 16
        dict(day="2026-03-02", project="alpha", questions=5, asked=5, auto_decided=0, one_way=0, followed=3,
             overridden=0, unmarked=2),
        # event 10, one second before midnight UTC
        dict(day="2026-03-02", project="beta", questions=1, asked=0, auto_decided=1, one_way=0, followed=1,
             overridden=0, unmarked=0),
        # events 11-15: one-way 12 (classifier), 14 (classifier), 15 (logged)
        dict(day="2026-03-03", project="beta", questions=5, asked=2, auto_decided=3, one_way=3, followed=2,
             overridden=3, unmarked=0),
    ],
    "preference_effective": [
        pref_row("__global__", "plan-devex-review-friction-fix", "never-ask", None, "global", None, "inline-user",
                 "2026-02-02T00:00:00.000Z", "two-way", "AUTO_DECIDE", 0),
        pref_row("__global__", "plan-eng-review-test-gap", "always-ask", None, "global", None, "plan-tune",
                 "2026-02-01T00:00:00.000Z", "two-way", "ASK_NORMALLY", 0),
        pref_row("__global__", "ship-test-failure-triage", "never-ask", None, "global", None, "plan-tune",
                 "2026-02-03T00:00:00.000Z", "one-way", "ASK_NORMALLY", 1),
        pref_row("alpha", "hook-aaaaaaaaaa", "unknown", "sometimes", "project", None, "plan-tune",
                 "2026-03-01T11:00:00.000Z", None, "ASK_NORMALLY", 0),
        pref_row("alpha", "plan-devex-review-friction-fix", "never-ask", None, "global", None, "inline-user",
                 "2026-02-02T00:00:00.000Z", "two-way", "AUTO_DECIDE", 0),
        # the project's never-ask beats the global always-ask
        pref_row("alpha", "plan-eng-review-test-gap", "never-ask", None, "project", "always-ask", "plan-tune",
                 "2026-03-01T09:00:00.000Z", "two-way", "AUTO_DECIDE", 0),
        pref_row("alpha", "ship-test-failure-triage", "never-ask", None, "global", None, "plan-tune",
                 "2026-02-03T00:00:00.000Z", "one-way", "ASK_NORMALLY", 1),
        # split-chain ids are always asked
        pref_row("beta", "plan-ceo-review-split-scope", "never-ask", None, "project", None, "plan-tune",
                 "2026-03-03T00:00:00.000Z", None, "ASK_NORMALLY", 0),
        pref_row("beta", "plan-devex-review-friction-fix", "never-ask", None, "global", None, "inline-user",
                 "2026-02-02T00:00:00.000Z", "two-way", "AUTO_DECIDE", 0),
        pref_row("beta", "plan-eng-review-test-gap", "always-ask", None, "global", None, "plan-tune",
                 "2026-02-01T00:00:00.000Z", "two-way", "ASK_NORMALLY", 0),
        pref_row("beta", "ship-test-failure-triage", "never-ask", None, "global", None, "plan-tune",
                 "2026-02-03T00:00:00.000Z", "one-way", "ASK_NORMALLY", 1),
    ],
}
# Every row of the history is real: each view says so in its synthetic column.
for _rows in EXPECTED.values():
    for _row in _rows:
        _row["synthetic"] = 0

# How each view's rows are put in a stable order for comparison.
SORT_KEYS = {
    "phase_counts": ("project", "session_id", "phase"),
    "session_interruptions": ("project", "session_id"),
    "question_review": ("project", "question_id"),
    "source_stats": ("project", "source"),
    "recent_auto_decisions": ("id",),
    "unmarked_questions": ("project", "question_id"),
    "one_way_audit": ("id",),
    "daily_activity": ("day", "project"),
    "preference_effective": ("project", "question_id"),
}


def ordered(view, rows):
    keys = SORT_KEYS[view]
    return sorted(rows, key=lambda r: tuple((r[k] is not None, r[k] or "") for k in keys))


def view_rows(conn, view):
    return [dict(r) for r in conn.execute(f"SELECT * FROM {view}")]


@pytest.fixture
def history(conn):
    build_history(conn)
    return conn


def test_every_view_file_is_covered_here():
    files = sorted(n[:-4] for n in os.listdir(db.VIEWS_DIR) if n.endswith(".sql"))
    assert set(VIEW_NAMES) <= set(files)
    assert set(EXPECTED) == set(VIEW_NAMES)


@pytest.mark.parametrize("view", VIEW_NAMES)
def test_view_file_has_purpose_comment_and_matching_name(view):
    with open(os.path.join(db.VIEWS_DIR, f"{view}.sql"), encoding="utf-8") as f:
        text = f.read()
    assert text.startswith(f"-- {view}: "), "a view file starts with a purpose comment naming it"
    assert f"CREATE VIEW {view} AS" in text


@pytest.mark.parametrize("view", VIEW_NAMES)
def test_view_rows_match_the_hand_computed_ones(history, view):
    got = ordered(view, view_rows(history, view))
    assert got == ordered(view, EXPECTED[view])


def test_views_are_empty_on_a_fresh_database(conn):
    for view in VIEW_NAMES:
        assert view_rows(conn, view) == [], view


def test_question_review_skill_falls_back_to_first_event_and_last_summary_wins_ties(conn):
    with db.transaction(conn):
        insert_event(conn, id=1, question_id="qa-custom-thing", skill="qa", ts="2026-01-01T00:00:00.000Z",
                     summary="first")
        insert_event(conn, id=2, question_id="qa-custom-thing", skill="ship", ts="2026-01-01T00:00:00.000Z",
                     summary="second, same instant")
        insert_event(conn, id=3, question_id="qa-custom-thing", skill="ship", ts="2025-12-31T00:00:00.000Z",
                     summary="older, recorded later")
    row = dict(conn.execute("SELECT * FROM question_review").fetchone())
    # first by time is event 3; among the two latest, the higher id wins
    assert row["skill"] == "ship" and row["first_ts"] == "2025-12-31T00:00:00.000Z"
    assert row["last_summary"] == "second, same instant"
    assert row["registration"] == "ad-hoc"


def test_recent_auto_decisions_excludes_everything_else(history):
    ids = [r["id"] for r in view_rows(history, "recent_auto_decisions")]
    assert sorted(ids) == [3, 10, 13, 14, 15]


def test_one_way_audit_is_empty_on_a_clean_log(conn):
    with db.transaction(conn):
        # one-way questions that were asked, and two-way ones auto-decided: all fine
        insert_event(conn, question_id="ship-test-failure-triage", source="agent", door_class="one-way")
        insert_event(conn, question_id="beta-force-push", source="hook", door_class="one-way")
        insert_event(conn, question_id="ship-release-pipeline-missing", source="auto-decided")
    assert view_rows(conn, "one_way_audit") == []


def test_one_way_audit_follows_a_registry_change(history):
    with db.transaction(history):
        history.execute("UPDATE registry_questions SET door_type = 'one-way' WHERE id = 'plan-devex-review-friction-fix'")
    rows = view_rows(history, "one_way_audit")
    assert [r["id"] for r in ordered("one_way_audit", rows)] == [10, 13, 14, 15]
    row10 = next(r for r in rows if r["id"] == 10)
    assert row10["flagged_by"] == "registry"


def test_one_way_audit_names_every_rule_that_fires(conn):
    with db.transaction(conn):
        insert_event(conn, id=7, question_id="ship-test-failure-triage", source="auto-decided",
                     door_class="one-way", door_type="one-way")
    (row,) = view_rows(conn, "one_way_audit")
    assert row["flagged_by"] == "registry,classifier,logged"


def test_preference_effective_with_only_global_preferences_and_no_history(conn):
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
            " VALUES ('__global__', 'qa-tier', 'never-ask', 'plan-tune', '2026-01-01T00:00:00.000Z')"
        )
    rows = view_rows(conn, "preference_effective")
    assert [(r["project"], r["question_id"], r["came_from"], r["effect"]) for r in rows] == [
        ("__global__", "qa-tier", "global", "AUTO_DECIDE")
    ]


def test_session_interruptions_groups_null_and_empty_session_ids(conn):
    with db.transaction(conn):
        insert_event(conn, session_id=None, ts="2026-01-01T00:00:00.000Z")
        insert_event(conn, session_id="", ts="2026-01-01T00:06:00.000Z")
    (row,) = view_rows(conn, "session_interruptions")
    assert row["session_id"] is None and row["shown"] == 2 and row["duration_minutes"] == 6.0


# --- the rollup tables behind the views stay exact under every kind of write -------------


def test_rollups_match_the_base_tables_for_the_history(history):
    assert_rollups_exact(history)


def test_rollups_follow_updates_and_deletes(history):
    with db.transaction(history):
        # move event 16 into another session and phase, change its answer and source
        history.execute("UPDATE question_log SET session_id = 's9', phase = 'dx', source = 'auto-decided',"
                        " user_choice = 'skip', followed_recommendation = 0 WHERE id = 16")
        # the first and the last events of a question disappear
        history.execute("DELETE FROM question_log WHERE id IN (3, 8)")
        # a silent decision flipped by the user, and a finding removed
        history.execute("UPDATE findings SET disposition = 'surfaced', surface_reason = 'flip'"
                        " WHERE finding_id = 'finding-b'")
        history.execute("DELETE FROM findings WHERE finding_id = 'finding-d'")
    assert_rollups_exact(history)
    # the findings-only phase is gone with its last finding
    assert not history.execute("SELECT 1 FROM phase_counts WHERE session_id = 's5'").fetchone()
    with db.transaction(history):
        history.execute("DELETE FROM question_log")
        history.execute("DELETE FROM findings")
    assert_rollups_exact(history)
    for table in REFERENCE:
        assert history.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table


def test_pacing_rollup_keeps_each_groups_first_ranking_and_reasons(conn):
    t = [f"2026-01-0{d}T10:00:00.000Z" for d in (1, 2, 3)]

    def group(chain):
        return conn.execute(
            "SELECT findings, surfaced, surfaced_one_way, surfaced_rank, silent, flipped, ranked_at"
            " FROM pacing_phase_counts WHERE chain_id = ?", (chain,)).fetchone()

    with db.transaction(conn):
        insert_finding(conn, "p", "s1", "eng", "f1", "silent", None, "two-way", t[1], chain_id="c1")
        insert_finding(conn, "p", "s1", "eng", "f2", "silent", None, "two-way", t[2], chain_id="c1")
    # a later finding keeps the first ranking time; no reason at all gives empty per-reason totals
    assert tuple(group("c1")) == (2, 0, None, None, 2, 0, t[1])
    with db.transaction(conn):
        f0 = insert_finding(conn, "p", "s1", "eng", "f0", "surfaced", "rank", "two-way", t[0], chain_id="c1")
    assert tuple(group("c1")) == (3, 1, 0, 1, 2, 0, t[0])
    assert_rollups_exact(conn)
    with db.transaction(conn):
        conn.execute("DELETE FROM findings WHERE id = ?", (f0,))
        conn.execute("UPDATE findings SET flipped_at = ? WHERE finding_id = 'f2'", (t[2],))
    assert tuple(group("c1")) == (2, 0, None, None, 2, 1, t[1])
    with db.transaction(conn):
        conn.execute("UPDATE findings SET chain_id = 'c2' WHERE finding_id = 'f1'")
    assert tuple(group("c1")) == (1, 0, None, None, 1, 1, t[2])
    assert tuple(group("c2")) == (1, 0, None, None, 1, 0, t[1])
    assert_rollups_exact(conn)


def test_duplicate_event_key_is_ignored_and_counted_once(conn):
    with db.transaction(conn):
        insert_event(conn, event_key="same")
        conn.execute(
            "INSERT OR IGNORE INTO question_log (event_key, project, ts, skill, question_id, question_summary,"
            " user_choice, source, raw_json, recorded_at) VALUES ('same', 'p', 'x', 's', 'q', 's', 'c', 'agent',"
            " '{}', 'x')"
        )
    assert conn.execute("SELECT sum(questions) FROM phase_counts").fetchone()[0] == 1
    assert_rollups_exact(conn)


PROJECTS = st.sampled_from(["p1", "p2"])
SESSIONS = st.sampled_from(["s1", "", None])
PHASES = st.sampled_from(["ceo", "eng"])
# Few distinct values, so that writes keep landing on the same groups and boundaries.
TIMES = st.sampled_from([f"2026-01-0{d}T10:00:00.000Z" for d in (1, 2, 3)])
QIDS = st.sampled_from(["ship-test-failure-triage", "hook-0123456789"])
SOURCES = st.sampled_from(["agent", "hook", "auto-decided"])
EVENT = st.fixed_dictionaries({
    "project": PROJECTS, "session_id": SESSIONS, "phase": PHASES, "ts": TIMES, "question_id": QIDS,
    "source": SOURCES, "user_choice": st.sampled_from(["a", "b"]), "followed": st.sampled_from([None, 0, 1]),
    "door_class": st.sampled_from([None, "one-way", "two-way"]), "door_type": st.sampled_from([None, "one-way"]),
    "synthetic": st.sampled_from([0, 0, 1]),
})
DECISIONS = st.sampled_from([("surfaced", "rank"), ("surfaced", "flip"), ("surfaced", "one-way"),
                             ("surfaced", "gate"), ("surfaced", None), ("silent", None)])
FINDING = st.builds(
    lambda project, session_id, phase, decision, created_at, synthetic, chain_id, flipped_at: dict(
        project=project, session_id=session_id, phase=phase, disposition=decision[0],
        surface_reason=decision[1], created_at=created_at, synthetic=synthetic, chain_id=chain_id,
        flipped_at=flipped_at),
    PROJECTS, st.sampled_from(["s1", "s1", ""]), PHASES, DECISIONS, TIMES, st.sampled_from([0, 0, 1]),
    st.sampled_from(["c1", "c1", "c2"]), st.sampled_from([None, None, "2026-01-04T10:00:00.000Z"]),
)
INSERT = st.tuples(st.just("insert"), EVENT)
INSERT_FINDING = st.tuples(st.just("insert_finding"), FINDING)
# Inserts are drawn more often so that groups fill up before rows are changed or removed.
OPERATION = st.one_of(
    INSERT, INSERT, INSERT,
    st.tuples(st.just("update"), st.integers(0, 50), EVENT),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    INSERT_FINDING, INSERT_FINDING,
    st.tuples(st.just("update_finding"), st.integers(0, 50), FINDING),
    st.tuples(st.just("delete_finding"), st.integers(0, 50)),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=st.lists(OPERATION, min_size=10, max_size=60))
def test_rollups_stay_exact_under_any_sequence_of_writes(tmp_path_factory, operations):
    path = str(tmp_path_factory.mktemp("rollups") / "plantune.db")
    conn = db.connect(path)
    counter = 0
    with db.transaction(conn):
        for op in operations:
            kind = op[0]
            if kind == "insert":
                insert_event(conn, **op[1])
            elif kind in ("update", "delete"):
                ids = [r[0] for r in conn.execute("SELECT id FROM question_log ORDER BY id")]
                if not ids:
                    continue
                target = ids[op[1] % len(ids)]
                if kind == "delete":
                    conn.execute("DELETE FROM question_log WHERE id = ?", (target,))
                else:
                    e = op[2]
                    conn.execute(
                        "UPDATE question_log SET project = ?, session_id = ?, phase = ?, ts = ?, question_id = ?,"
                        " source = ?, user_choice = ?, followed_recommendation = ?, door_class = ?, door_type = ?,"
                        " synthetic = ? WHERE id = ?",
                        (e["project"], e["session_id"], e["phase"], e["ts"], e["question_id"], e["source"],
                         e["user_choice"], e["followed"], e["door_class"], e["door_type"], e["synthetic"],
                         target),
                    )
            elif kind == "insert_finding":
                f = op[1]
                counter += 1
                insert_finding(conn, f["project"], f["session_id"], f["phase"], f"f{counter}", f["disposition"],
                               f["surface_reason"], "two-way", f["created_at"], f["synthetic"],
                               chain_id=f["chain_id"], flipped_at=f["flipped_at"])
            else:
                ids = [r[0] for r in conn.execute("SELECT id FROM findings ORDER BY id")]
                if not ids:
                    continue
                target = ids[op[1] % len(ids)]
                if kind == "delete_finding":
                    conn.execute("DELETE FROM findings WHERE id = ?", (target,))
                else:
                    f = op[2]
                    conn.execute(
                        "UPDATE findings SET project = ?, session_id = ?, phase = ?, disposition = ?,"
                        " surface_reason = ?, created_at = ?, synthetic = ?, chain_id = ?, flipped_at = ?"
                        " WHERE id = ?",
                        (f["project"], f["session_id"], f["phase"], f["disposition"], f["surface_reason"],
                         f["created_at"], f["synthetic"], f["chain_id"], f["flipped_at"], target),
                    )
            assert_rollups_exact(conn)
    conn.close()


def schema_before(tmp_path, first_missing):
    """The schema as it was before migration ``first_missing`` (a name prefix), no views."""
    mig = tmp_path / "migrations"
    mig.mkdir()
    for name, path in db.default_schema().migrations:
        if name < first_missing:
            (mig / name).write_text(open(path, encoding="utf-8").read())
    (tmp_path / "no-views").mkdir()
    return db.Schema(migrations_dir=str(mig), views_dir=str(tmp_path / "no-views"))


def test_an_existing_database_gets_its_rollups_filled_by_the_migration(tmp_path, db_file):
    """A database written before 0005 existed is backfilled exactly, then kept current."""
    conn = db.connect(db_file, schema=schema_before(tmp_path, "0005"))
    build_history(conn)
    assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'rollup_phase'").fetchone()
    conn.close()

    conn = db.connect(db_file)
    assert "0005_analysis_rollups.sql" in db.applied_migrations(conn)
    assert_rollups_exact(conn)
    for view in VIEW_NAMES:
        assert ordered(view, view_rows(conn, view)) == ordered(view, EXPECTED[view]), view
    with db.transaction(conn):
        insert_event(conn, project="alpha", session_id="s1", phase="ceo", ts="2026-03-01T09:00:00.000Z")
    assert_rollups_exact(conn)
    conn.close()


# --- the views stay cheap on a large log: they never walk the whole question log ---------

def load_metadata():
    root = os.path.dirname(db.SQL_DIR)
    with open(os.path.join(root, "datasette-metadata.json"), encoding="utf-8") as f:
        return json.load(f)


def vm_steps(conn, sql):
    """SQLite virtual-machine steps a query takes: a measure of work that does not depend on load."""
    steps = [0]

    def tick():
        steps[0] += 1
        return 0

    conn.set_progress_handler(tick, 100)
    try:
        conn.execute(sql).fetchall()
    finally:
        conn.set_progress_handler(None, 0)
    return steps[0] * 100


@pytest.fixture(scope="module")
def large_log(tmp_path_factory):
    """20,000 events in 100 sessions of 200 (few rollup rows per event), 5% auto-decided,
    and 5,000 pacing findings (1,000 of them answered by an event)."""
    path = str(tmp_path_factory.mktemp("large") / "plantune.db")
    conn = db.connect(path)
    with db.transaction(conn):
        conn.execute(
            """
            WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 19999)
            INSERT INTO question_log (event_key, project, ts, skill, question_id, question_summary, user_choice,
                recommended, followed_recommendation, session_id, source, phase, door_class, raw_json, recorded_at)
            SELECT 'k' || i, 'p' || (i / 200 % 3),
                   strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (i * 60) || ' seconds'),
                   'qa', iif(i % 7 = 0, 'hook-' || printf('%010d', i % 20), 'qa-tier'), 'Which tier?',
                   iif(i % 3 = 0, 'deep', 'quick'), 'quick', i % 3 != 0, 's' || (i / 200),
                   iif(i % 20 = 0 AND i % 7 != 0, 'auto-decided', 'agent'),
                   CASE i % 4 WHEN 0 THEN 'ceo' WHEN 1 THEN 'design' WHEN 2 THEN 'eng' ELSE 'dx' END,
                   'two-way', '{}', '2026-01-01T00:00:00.000Z'
            FROM s
            """
        )
        conn.execute(
            """
            WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 4999)
            INSERT INTO findings (project, session_id, chain_id, phase, finding_id, severity, irreversibility,
                decision_matters, door_type, door_reason, score, threshold, disposition, surface_reason,
                answer_event_id, created_at, updated_at)
            SELECT 'p' || (i / 50 % 3), 's' || (i / 50), 'c' || (i / 50),
                   CASE i % 4 WHEN 0 THEN 'ceo' WHEN 1 THEN 'design' WHEN 2 THEN 'eng' ELSE 'dx' END,
                   'f' || i, 1, 1, 1, 'two-way', 'test', 3, 4, iif(i % 5 = 0, 'surfaced', 'silent'),
                   iif(i % 5 = 0, 'rank', NULL), iif(i % 5 = 0, i * 4 + 1, NULL),
                   strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (i * 240) || ' seconds'),
                   '2026-01-01T00:00:00.000Z'
            FROM s
            """
        )
    conn.close()
    return path


def datasette_queries(view, meta):
    """The queries a Datasette view page runs: rows (with the default sort), count, facets."""
    table = meta["databases"]["plantune"]["tables"].get(view, {})
    order = ""
    if table.get("sort_desc"):
        order = f" ORDER BY {table['sort_desc']} DESC"
    elif table.get("sort"):
        order = f" ORDER BY {table['sort']}"
    yield f"SELECT * FROM {view}{order} LIMIT 101"
    yield f"SELECT count(*) FROM {view}"
    for col in table.get("facets", []):
        yield (f"SELECT {col} AS value, count(*) AS count FROM (SELECT * FROM {view}) WHERE {col} IS NOT NULL"
               f" GROUP BY {col} ORDER BY count DESC, value LIMIT 31")


@pytest.mark.parametrize("view", VIEW_NAMES)
def test_view_pages_do_a_fraction_of_the_work_of_one_log_scan(large_log, view):
    conn = sqlite3.connect(large_log)
    scan = vm_steps(conn, "SELECT sum(length(question_summary)) FROM question_log")
    for sql in datasette_queries(view, load_metadata()):
        steps = vm_steps(conn, sql)
        assert steps < scan / 4, f"{sql!r} took {steps} steps; one scan of the log takes {scan}"
    conn.close()


def test_changing_or_deleting_one_row_touches_only_its_groups(large_log, tmp_path):
    """Writers delete and update rows one at a time (profile delete, flips): each must stay
    a handful of index look-ups, never a walk over the log or the findings."""
    path = str(tmp_path / "copy.db")
    source = sqlite3.connect(large_log)
    target = sqlite3.connect(path)
    source.backup(target)
    source.close()
    target.close()
    conn = db.connect(path)
    scan = vm_steps(conn, "SELECT sum(length(question_summary)) FROM question_log")
    latest = conn.execute("SELECT max(id) FROM question_log").fetchone()[0]
    writes = [
        f"DELETE FROM question_log WHERE id = {latest}",  # last event of its phase and question
        "UPDATE findings SET answer_event_id = NULL WHERE answer_event_id = 1",
        "DELETE FROM question_log WHERE id = 1",  # first event; findings are checked for references
        "UPDATE question_log SET phase = 'dx', session_id = NULL WHERE id = 2",
        "UPDATE findings SET disposition = 'surfaced', surface_reason = 'flip' WHERE id = 8",
        "DELETE FROM findings WHERE id = 5000",
    ]
    for sql in writes:
        steps = vm_steps(conn, sql)
        assert steps < scan / 20, f"{sql!r} took {steps} steps; one scan of the log takes {scan}"
    assert_rollups_exact(conn)
    conn.close()


def _history_with_simulated_rows(conn):
    """The hand-made history plus simulated events and findings in the same projects."""
    build_history(conn)
    with db.transaction(conn):
        for i, (project, session, phase, source) in enumerate([
                ("alpha", "s1", "ceo", "agent"), ("alpha", "sim-1", "eng", "auto-decided"),
                ("beta", "s3", "dx", "auto-decided"), ("alpha", None, "unknown", "hook")]):
            insert_event(conn, project=project, session_id=session, phase=phase, source=source,
                         ts=D2 + f"1{i}:00:00.000Z", question_id="plan-eng-review-test-gap",
                         user_choice="skip", followed=0, synthetic=1)
        insert_finding(conn, "alpha", "s1", "ceo", "sim-finding", "surfaced", "rank", "two-way",
                       D2 + "10:30:00.000Z", synthetic=1)


def test_simulated_rows_never_change_a_real_total(history):
    """Every view shows the same real rows after simulated rows land in the same projects and
    sessions; the simulated ones appear only in rows marked synthetic = 1."""
    before = {view: ordered(view, view_rows(history, view)) for view in VIEW_NAMES}
    with db.transaction(history):
        history.execute("DELETE FROM question_log")
        history.execute("DELETE FROM findings")
        history.execute("DELETE FROM preferences")
    _history_with_simulated_rows(history)
    assert_rollups_exact(history)
    for view in VIEW_NAMES:
        rows = view_rows(history, view)
        real = [r for r in rows if r["synthetic"] == 0]
        assert ordered(view, real) == before[view], view
    simulated = [r for r in view_rows(history, "phase_counts") if r["synthetic"] == 1]
    assert sum(r["questions"] for r in simulated) == 4 and sum(r["findings_surfaced"] for r in simulated) == 1


def test_recent_auto_decisions_keeps_only_the_last_30_days(history):
    with db.transaction(history):
        old = insert_event(history, project="alpha", source="auto-decided", ts="2026-01-30T10:00:00.000Z")
        edge = insert_event(history, project="alpha", source="auto-decided", ts="2026-02-01T08:00:00.000Z")
    ids = {r["id"] for r in view_rows(history, "recent_auto_decisions")}
    # the newest auto-decision is 2026-03-03T08:00: 30 days back is 2026-02-01T08:00
    assert edge in ids and old not in ids
    assert ids == {3, 10, 13, 14, 15, edge}


def test_migration_0011a_splits_existing_totals_by_synthetic(tmp_path, db_file):
    """A database written before the rollups were keyed by synthetic is refilled exactly."""
    conn = db.connect(db_file, schema=schema_before(tmp_path, "0011"))
    _history_with_simulated_rows(conn)
    mixed = conn.execute("SELECT count(*) FROM rollup_phase").fetchone()[0]
    conn.close()

    conn = db.connect(db_file)
    assert "0011a_synthetic_rollups.sql" in db.applied_migrations(conn)
    assert_rollups_exact(conn)
    assert conn.execute("SELECT count(*) FROM rollup_phase").fetchone()[0] > mixed
    with db.transaction(conn):
        insert_event(conn, project="alpha", session_id="s1", phase="ceo", ts=D4 + "09:00:00.000Z", synthetic=1)
        conn.execute("DELETE FROM question_log WHERE id = 1")
    assert_rollups_exact(conn)
    conn.close()


# Views with one row per event or finding: the first page reads only the rows it shows (no
# sort or grouping of the whole table), and the count and facets read each row once through
# the table or an index, without looking up answers or the registry for every row.
ROW_VIEWS = ["question_events", "finding_scores", "pacing_decisions", "pacing_phase_counts", "run_questions"]


@pytest.mark.parametrize("view", ROW_VIEWS)
def test_row_view_pages_read_each_row_at_most_once_through_an_index(large_log, view):
    conn = sqlite3.connect(large_log)
    scan = vm_steps(conn, "SELECT sum(length(question_summary)) FROM question_log")
    first_page, *rest = datasette_queries(view, load_metadata())
    steps = vm_steps(conn, first_page)
    assert steps < scan / 4, f"{first_page!r} took {steps} steps; one scan of the log takes {scan}"
    for sql in rest:
        steps = vm_steps(conn, sql)
        assert steps < 3 * scan, f"{sql!r} took {steps} steps; one scan of the log takes {scan}"
    conn.close()
