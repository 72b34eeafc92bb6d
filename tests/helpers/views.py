"""The small hand-made history behind the view tests, and the rows each view must show.

The history (``build_history``) is written straight into the tables, as hooks, pacing and
preference commands would. The expected rows were computed by hand from it; the comments
next to them say which events add up to each number. The view tests and the Datasette
tests read the same history and expect the same rows.
"""

import os

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
    (
        1,
        "alpha",
        "s1",
        "ceo",
        "2026-03-01T10:00:00.000Z",
        "plan-ceo-review-mode",
        "agent",
        "expand",
        "expand",
        1,
        "two-way",
        None,
        "plan-ceo-review",
        "Which review mode?",
    ),
    (
        2,
        "alpha",
        "s1",
        "ceo",
        "2026-03-01T10:02:00.000Z",
        "plan-ceo-review-premise-revise",
        "agent",
        "revise",
        "hold",
        0,
        "one-way",
        None,
        "plan-ceo-review",
        "Revise the premise?",
    ),
    (
        3,
        "alpha",
        "s1",
        "eng",
        "2026-03-01T10:10:00.000Z",
        "plan-eng-review-test-gap",
        "auto-decided",
        "add-test",
        "add-test",
        1,
        "two-way",
        None,
        "unknown",
        "Add the missing test?",
    ),
    (
        4,
        "alpha",
        "s1",
        "eng",
        "2026-03-01T10:20:00.000Z",
        "plan-eng-review-test-gap",
        "agent",
        "add-test",
        "add-test",
        1,
        "two-way",
        None,
        "plan-eng-review",
        "Add the missing test?",
    ),
    (
        5,
        "alpha",
        "s1",
        "eng",
        "2026-03-01T10:30:00.000Z",
        "hook-aaaaaaaaaa",
        "hook",
        "A) Yes",
        None,
        None,
        "two-way",
        None,
        "unknown",
        "Use the new cache?",
    ),
    (
        6,
        "alpha",
        "s2",
        "design",
        "2026-03-02T09:00:00.000Z",
        "plan-design-review-fix",
        "agent",
        "fix-now",
        "fix-now",
        1,
        "two-way",
        None,
        "plan-design-review",
        "Fix the contrast issue?",
    ),
    (
        7,
        "alpha",
        "s2",
        "design",
        "2026-03-02T09:05:00.000Z",
        "hook-aaaaaaaaaa",
        "hook",
        "B) No",
        None,
        None,
        "two-way",
        None,
        "unknown",
        "Use the new cache? (v2)",
    ),
    (
        8,
        "alpha",
        "s2",
        "design",
        "2026-03-02T09:30:00.000Z",
        "plan-eng-review-test-gap",
        "agent",
        "add-test",
        "add-test",
        1,
        "two-way",
        None,
        "plan-eng-review",
        "Add the missing test?",
    ),
    (
        9,
        "alpha",
        None,
        "unknown",
        "2026-03-02T12:00:00.000Z",
        "hook-bbbbbbbbbb",
        "auq-other",
        "other text",
        None,
        None,
        "two-way",
        None,
        "unknown",
        "Rename the module?",
    ),
    (
        10,
        "beta",
        "s3",
        "dx",
        "2026-03-02T23:59:59.000Z",
        "plan-devex-review-friction-fix",
        "auto-decided",
        "fix-now",
        "fix-now",
        1,
        "two-way",
        None,
        "unknown",
        "Fix the CLI friction?",
    ),
    (
        11,
        "beta",
        "s3",
        "dx",
        "2026-03-03T00:00:01.000Z",
        "plan-devex-review-friction-fix",
        "agent",
        "defer",
        "fix-now",
        0,
        "two-way",
        None,
        "plan-devex-review",
        "Fix the CLI friction?",
    ),
    (
        12,
        "beta",
        "s3",
        "dx",
        "2026-03-03T00:10:00.000Z",
        "beta-drop-legacy-table",
        "agent",
        "keep",
        "drop",
        0,
        "one-way",
        None,
        "beta",
        "Drop the legacy table?",
    ),
    # Three safety bugs for the audit: one-way by registry, by classifier, as logged.
    (
        13,
        "beta",
        "s3",
        "eng",
        "2026-03-03T00:20:00.000Z",
        "ship-test-failure-triage",
        "auto-decided",
        "ack-and-ship",
        "fix-now",
        0,
        "two-way",
        None,
        "unknown",
        "Tests fail: ship anyway?",
    ),
    (
        14,
        "beta",
        "s3",
        "eng",
        "2026-03-03T00:25:00.000Z",
        "beta-force-push",
        "auto-decided",
        "yes",
        "yes",
        1,
        "one-way",
        None,
        "unknown",
        "Force-push to main?",
    ),
    (
        15,
        "beta",
        "s4",
        "other",
        "2026-03-03T08:00:00.000Z",
        "plan-ceo-review-mode",
        "auto-decided",
        "hold",
        "hold",
        1,
        "two-way",
        "one-way",
        "unknown",
        "Which review mode?",
    ),
    (
        16,
        "alpha",
        "s2",
        "design",
        "2026-03-02T09:40:00.000Z",
        "plan-eng-review-test-gap",
        "agent",
        "add-test",
        "add-test",
        1,
        "two-way",
        None,
        "plan-eng-review",
        "Add the missing test?",
    ),
]

# project, session, phase, finding_id, disposition, surface_reason, door_type, created_at
FINDINGS = [
    ("alpha", "s1", "eng", "finding-a", "surfaced", "rank", "two-way", "2026-03-01T10:15:00.000Z"),
    ("alpha", "s1", "eng", "finding-b", "silent", None, "two-way", "2026-03-01T10:15:00.000Z"),
    (
        "alpha",
        "s1",
        "eng",
        "finding-c",
        "surfaced",
        "one-way",
        "one-way",
        "2026-03-01T10:16:00.000Z",
    ),
    ("beta", "s5", "ceo", "finding-d", "silent", None, "two-way", "2026-03-04T10:00:00.000Z"),
]

# scope, question_id, preference, raw_value, source, updated_at
PREFERENCES = [
    (
        "alpha",
        "plan-eng-review-test-gap",
        "never-ask",
        None,
        "plan-tune",
        "2026-03-01T09:00:00.000Z",
    ),
    (
        "__global__",
        "plan-eng-review-test-gap",
        "always-ask",
        None,
        "plan-tune",
        "2026-02-01T00:00:00.000Z",
    ),
    (
        "__global__",
        "plan-devex-review-friction-fix",
        "never-ask",
        None,
        "inline-user",
        "2026-02-02T00:00:00.000Z",
    ),
    (
        "__global__",
        "ship-test-failure-triage",
        "never-ask",
        None,
        "plan-tune",
        "2026-02-03T00:00:00.000Z",
    ),
    (
        "beta",
        "plan-ceo-review-split-scope",
        "never-ask",
        None,
        "plan-tune",
        "2026-03-03T00:00:00.000Z",
    ),
    ("alpha", "hook-aaaaaaaaaa", "unknown", "sometimes", "plan-tune", "2026-03-01T11:00:00.000Z"),
]


def insert_event(
    conn,
    id=None,
    project="p",
    session_id="s",
    phase="eng",
    ts="2026-01-01T00:00:00.000Z",
    question_id="plan-eng-review-test-gap",
    source="agent",
    user_choice="a",
    recommended=None,
    followed=None,
    door_class="two-way",
    door_type=None,
    skill="plan-eng-review",
    summary="A question?",
    event_key=None,
    synthetic=0,
):
    cur = conn.execute(
        "INSERT INTO question_log (id, event_key, project, ts, skill, question_id, question_summary,"
        " user_choice, recommended, followed_recommendation, session_id, source, phase, door_class,"
        " door_type, raw_json, recorded_at, synthetic)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?)",
        (
            id,
            event_key or f"key-{id}-{project}-{ts}-{question_id}-{source}-{os.urandom(4).hex()}",
            project,
            ts,
            skill,
            question_id,
            summary,
            user_choice,
            recommended,
            followed,
            session_id,
            source,
            phase,
            door_class,
            door_type,
            ts,
            synthetic,
        ),
    )
    return cur.lastrowid


def insert_finding(
    conn,
    project,
    session_id,
    phase,
    finding_id,
    disposition,
    surface_reason,
    door_type,
    created_at,
    synthetic=0,
    chain_id=None,
    flipped_at=None,
):
    cur = conn.execute(
        "INSERT INTO findings (project, session_id, chain_id, phase, finding_id, summary, severity,"
        " irreversibility, decision_matters, door_type, door_reason, score, threshold, disposition,"
        " surface_reason, created_at, updated_at, synthetic, flipped_at)"
        " VALUES (?, ?, ?, ?, ?, 'A finding', 1, 1, 1, ?, 'test', 3, 4, ?, ?, ?, ?, ?, ?)",
        (
            project,
            session_id,
            chain_id or "chain-" + session_id,
            phase,
            finding_id,
            door_type,
            disposition,
            surface_reason,
            created_at,
            created_at,
            synthetic,
            flipped_at,
        ),
    )
    return cur.lastrowid


def build_history(conn):
    with db.transaction(conn):
        for (
            id_,
            project,
            session,
            phase,
            ts,
            qid,
            source,
            choice,
            rec,
            followed,
            door_class,
            door_type,
            skill,
            summary,
        ) in EVENTS:
            insert_event(
                conn,
                id=id_,
                project=project,
                session_id=session,
                phase=phase,
                ts=ts,
                question_id=qid,
                source=source,
                user_choice=choice,
                recommended=rec,
                followed=followed,
                door_class=door_class,
                door_type=door_type,
                skill=skill,
                summary=summary,
                event_key=f"event-{id_}",
            )
        for f in FINDINGS:
            insert_finding(conn, *f)
        conn.executemany(
            "INSERT INTO preferences (scope, question_id, preference, raw_value, source, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            PREFERENCES,
        )


def phase_row(
    project,
    session_id,
    phase,
    questions,
    asked,
    auto,
    one_way,
    followed,
    overridden,
    surfaced,
    silent,
    budget,
    first_ts,
    last_ts,
):
    return dict(
        project=project,
        session_id=session_id,
        phase=phase,
        questions=questions,
        asked=asked,
        auto_decided=auto,
        one_way=one_way,
        followed=followed,
        overridden=overridden,
        findings_surfaced=surfaced,
        findings_silent=silent,
        budget_spent=budget,
        first_ts=first_ts,
        last_ts=last_ts,
    )


def session_row(
    project,
    session_id,
    shown,
    auto,
    one_way,
    surfaced,
    silent,
    first_ts,
    last_ts,
    minutes,
    phase_count,
    phases,
):
    return dict(
        project=project,
        session_id=session_id,
        shown=shown,
        auto_decided=auto,
        one_way=one_way,
        findings_surfaced=surfaced,
        findings_silent=silent,
        first_ts=first_ts,
        last_ts=last_ts,
        duration_minutes=minutes,
        phase_count=phase_count,
        phases=phases,
    )


def review_row(
    project,
    question_id,
    skill,
    events,
    answered,
    auto,
    last_summary,
    last_choice,
    followed,
    overridden,
    rate,
    distinct,
    door_type,
    registration,
    first_ts,
    last_ts,
):
    return dict(
        project=project,
        question_id=question_id,
        skill=skill,
        events=events,
        answered=answered,
        auto_decided=auto,
        last_summary=last_summary,
        last_choice=last_choice,
        followed=followed,
        overridden=overridden,
        override_rate=rate,
        distinct_choices=distinct,
        door_type=door_type,
        registration=registration,
        first_ts=first_ts,
        last_ts=last_ts,
    )


def pref_row(
    project,
    question_id,
    preference,
    raw_value,
    came_from,
    shadowed,
    source,
    updated_at,
    door_type,
    effect,
    inert,
):
    return dict(
        project=project,
        question_id=question_id,
        preference=preference,
        raw_value=raw_value,
        came_from=came_from,
        shadowed_global=shadowed,
        source=source,
        updated_at=updated_at,
        door_type=door_type,
        effect=effect,
        inert=inert,
    )


D1, D2, D3, D4 = "2026-03-01T", "2026-03-02T", "2026-03-03T", "2026-03-04T"

EXPECTED = {
    "phase_counts": [
        # events 1, 2: 2 asked by the agent, 2 one-way as classified, 1 followed, 1 overridden
        phase_row(
            "alpha",
            "s1",
            "ceo",
            2,
            2,
            0,
            1,
            1,
            1,
            0,
            0,
            0,
            D1 + "10:00:00.000Z",
            D1 + "10:02:00.000Z",
        ),
        # events 3 (auto), 4, 5 (hook, no recommendation) and findings a (rank), b (silent), c (one-way)
        phase_row(
            "alpha",
            "s1",
            "eng",
            3,
            2,
            1,
            0,
            2,
            0,
            2,
            1,
            1,
            D1 + "10:10:00.000Z",
            D1 + "10:30:00.000Z",
        ),
        # events 6, 7, 8, 16
        phase_row(
            "alpha",
            "s2",
            "design",
            4,
            4,
            0,
            0,
            3,
            0,
            0,
            0,
            0,
            D2 + "09:00:00.000Z",
            D2 + "09:40:00.000Z",
        ),
        # event 9 has no session
        phase_row(
            "alpha",
            None,
            "unknown",
            1,
            1,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            D2 + "12:00:00.000Z",
            D2 + "12:00:00.000Z",
        ),
        # events 10 (auto), 11 (overridden), 12 (one-way by classifier, overridden)
        phase_row(
            "beta",
            "s3",
            "dx",
            3,
            2,
            1,
            1,
            1,
            2,
            0,
            0,
            0,
            D2 + "23:59:59.000Z",
            D3 + "00:10:00.000Z",
        ),
        # events 13 (auto, overridden; two-way as classified), 14 (auto, one-way by classifier)
        phase_row(
            "beta",
            "s3",
            "eng",
            2,
            0,
            2,
            1,
            1,
            1,
            0,
            0,
            0,
            D3 + "00:20:00.000Z",
            D3 + "00:25:00.000Z",
        ),
        # event 15 (auto, logged one-way)
        phase_row(
            "beta",
            "s4",
            "other",
            1,
            0,
            1,
            1,
            1,
            0,
            0,
            0,
            0,
            D3 + "08:00:00.000Z",
            D3 + "08:00:00.000Z",
        ),
        # finding d only: a phase where pacing kept everything silent
        phase_row(
            "beta",
            "s5",
            "ceo",
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            1,
            0,
            D4 + "10:00:00.000Z",
            D4 + "10:00:00.000Z",
        ),
    ],
    "session_interruptions": [
        session_row(
            "alpha",
            "s1",
            4,
            1,
            1,
            2,
            1,
            D1 + "10:00:00.000Z",
            D1 + "10:30:00.000Z",
            30.0,
            2,
            "ceo,eng",
        ),
        session_row(
            "alpha",
            "s2",
            4,
            0,
            0,
            0,
            0,
            D2 + "09:00:00.000Z",
            D2 + "09:40:00.000Z",
            40.0,
            1,
            "design",
        ),
        session_row(
            "alpha",
            None,
            1,
            0,
            0,
            0,
            0,
            D2 + "12:00:00.000Z",
            D2 + "12:00:00.000Z",
            0.0,
            1,
            "unknown",
        ),
        # 23:59:59 to 00:25:00 is 25 minutes and 1 second; phases in review order, eng before dx
        session_row(
            "beta",
            "s3",
            2,
            3,
            2,
            0,
            0,
            D2 + "23:59:59.000Z",
            D3 + "00:25:00.000Z",
            25.0,
            2,
            "eng,dx",
        ),
        session_row(
            "beta", "s4", 0, 1, 1, 0, 0, D3 + "08:00:00.000Z", D3 + "08:00:00.000Z", 0.0, 1, "other"
        ),
        session_row(
            "beta", "s5", 0, 0, 0, 0, 1, D4 + "10:00:00.000Z", D4 + "10:00:00.000Z", 0.0, 1, "ceo"
        ),
    ],
    "question_review": [
        review_row(
            "alpha",
            "hook-aaaaaaaaaa",
            "unknown",
            2,
            2,
            0,
            "Use the new cache? (v2)",
            "B) No",
            0,
            0,
            None,
            2,
            "two-way",
            "unmarked",
            D1 + "10:30:00.000Z",
            D2 + "09:05:00.000Z",
        ),
        review_row(
            "alpha",
            "hook-bbbbbbbbbb",
            "unknown",
            1,
            1,
            0,
            "Rename the module?",
            "other text",
            0,
            0,
            None,
            1,
            "two-way",
            "unmarked",
            D2 + "12:00:00.000Z",
            D2 + "12:00:00.000Z",
        ),
        review_row(
            "alpha",
            "plan-ceo-review-mode",
            "plan-ceo-review",
            1,
            1,
            0,
            "Which review mode?",
            "expand",
            1,
            0,
            0.0,
            1,
            "two-way",
            "registered",
            D1 + "10:00:00.000Z",
            D1 + "10:00:00.000Z",
        ),
        review_row(
            "alpha",
            "plan-ceo-review-premise-revise",
            "plan-ceo-review",
            1,
            1,
            0,
            "Revise the premise?",
            "revise",
            0,
            1,
            1.0,
            1,
            "one-way",
            "registered",
            D1 + "10:02:00.000Z",
            D1 + "10:02:00.000Z",
        ),
        review_row(
            "alpha",
            "plan-design-review-fix",
            "plan-design-review",
            1,
            1,
            0,
            "Fix the contrast issue?",
            "fix-now",
            1,
            0,
            0.0,
            1,
            "two-way",
            "registered",
            D2 + "09:00:00.000Z",
            D2 + "09:00:00.000Z",
        ),
        # events 3 (auto), 4, 8, 16: the user always answered add-test
        review_row(
            "alpha",
            "plan-eng-review-test-gap",
            "plan-eng-review",
            4,
            3,
            1,
            "Add the missing test?",
            "add-test",
            4,
            0,
            0.0,
            1,
            "two-way",
            "registered",
            D1 + "10:10:00.000Z",
            D2 + "09:40:00.000Z",
        ),
        # ad-hoc ids: skill from the first event, door type from the classification when recorded
        review_row(
            "beta",
            "beta-drop-legacy-table",
            "beta",
            1,
            1,
            0,
            "Drop the legacy table?",
            "keep",
            0,
            1,
            1.0,
            1,
            "one-way",
            "ad-hoc",
            D3 + "00:10:00.000Z",
            D3 + "00:10:00.000Z",
        ),
        review_row(
            "beta",
            "beta-force-push",
            "unknown",
            1,
            0,
            1,
            "Force-push to main?",
            "yes",
            1,
            0,
            0.0,
            0,
            "one-way",
            "ad-hoc",
            D3 + "00:25:00.000Z",
            D3 + "00:25:00.000Z",
        ),
        # event 15 logged one-way, but the registry (two-way) decides the door type here
        review_row(
            "beta",
            "plan-ceo-review-mode",
            "plan-ceo-review",
            1,
            0,
            1,
            "Which review mode?",
            "hold",
            1,
            0,
            0.0,
            0,
            "two-way",
            "registered",
            D3 + "08:00:00.000Z",
            D3 + "08:00:00.000Z",
        ),
        review_row(
            "beta",
            "plan-devex-review-friction-fix",
            "plan-devex-review",
            2,
            1,
            1,
            "Fix the CLI friction?",
            "defer",
            1,
            1,
            0.5,
            1,
            "two-way",
            "registered",
            D2 + "23:59:59.000Z",
            D3 + "00:00:01.000Z",
        ),
        review_row(
            "beta",
            "ship-test-failure-triage",
            "ship",
            1,
            0,
            1,
            "Tests fail: ship anyway?",
            "ack-and-ship",
            0,
            1,
            1.0,
            0,
            "one-way",
            "registered",
            D3 + "00:20:00.000Z",
            D3 + "00:20:00.000Z",
        ),
    ],
    "source_stats": [
        # alpha: agent 1, 2, 4, 6, 8, 16; auto 3; hook 5, 7; auq-other 9 (10 events)
        dict(
            project="alpha",
            source="agent",
            events=6,
            share_pct=60.0,
            unmarked=0,
            days_active=2,
            first_day="2026-03-01",
            last_day="2026-03-02",
        ),
        dict(
            project="alpha",
            source="auq-other",
            events=1,
            share_pct=10.0,
            unmarked=1,
            days_active=1,
            first_day="2026-03-02",
            last_day="2026-03-02",
        ),
        dict(
            project="alpha",
            source="auto-decided",
            events=1,
            share_pct=10.0,
            unmarked=0,
            days_active=1,
            first_day="2026-03-01",
            last_day="2026-03-01",
        ),
        dict(
            project="alpha",
            source="hook",
            events=2,
            share_pct=20.0,
            unmarked=2,
            days_active=2,
            first_day="2026-03-01",
            last_day="2026-03-02",
        ),
        # beta: agent 11, 12; auto 10, 13, 14, 15 (6 events)
        dict(
            project="beta",
            source="agent",
            events=2,
            share_pct=33.3,
            unmarked=0,
            days_active=1,
            first_day="2026-03-03",
            last_day="2026-03-03",
        ),
        dict(
            project="beta",
            source="auto-decided",
            events=4,
            share_pct=66.7,
            unmarked=0,
            days_active=2,
            first_day="2026-03-02",
            last_day="2026-03-03",
        ),
    ],
    "recent_auto_decisions": [
        dict(
            id=3,
            ts=D1 + "10:10:00.000Z",
            project="alpha",
            session_id="s1",
            phase="eng",
            question_id="plan-eng-review-test-gap",
            skill="unknown",
            question_summary="Add the missing test?",
            user_choice="add-test",
            recommended="add-test",
            tool_use_id=None,
        ),
        dict(
            id=10,
            ts=D2 + "23:59:59.000Z",
            project="beta",
            session_id="s3",
            phase="dx",
            question_id="plan-devex-review-friction-fix",
            skill="unknown",
            question_summary="Fix the CLI friction?",
            user_choice="fix-now",
            recommended="fix-now",
            tool_use_id=None,
        ),
        dict(
            id=13,
            ts=D3 + "00:20:00.000Z",
            project="beta",
            session_id="s3",
            phase="eng",
            question_id="ship-test-failure-triage",
            skill="unknown",
            question_summary="Tests fail: ship anyway?",
            user_choice="ack-and-ship",
            recommended="fix-now",
            tool_use_id=None,
        ),
        dict(
            id=14,
            ts=D3 + "00:25:00.000Z",
            project="beta",
            session_id="s3",
            phase="eng",
            question_id="beta-force-push",
            skill="unknown",
            question_summary="Force-push to main?",
            user_choice="yes",
            recommended="yes",
            tool_use_id=None,
        ),
        dict(
            id=15,
            ts=D3 + "08:00:00.000Z",
            project="beta",
            session_id="s4",
            phase="other",
            question_id="plan-ceo-review-mode",
            skill="unknown",
            question_summary="Which review mode?",
            user_choice="hold",
            recommended="hold",
            tool_use_id=None,
        ),
    ],
    "unmarked_questions": [
        dict(
            project="alpha",
            question_id="hook-aaaaaaaaaa",
            events=2,
            last_summary="Use the new cache? (v2)",
            last_choice="B) No",
            first_ts=D1 + "10:30:00.000Z",
            last_ts=D2 + "09:05:00.000Z",
        ),
        dict(
            project="alpha",
            question_id="hook-bbbbbbbbbb",
            events=1,
            last_summary="Rename the module?",
            last_choice="other text",
            first_ts=D2 + "12:00:00.000Z",
            last_ts=D2 + "12:00:00.000Z",
        ),
    ],
    "one_way_audit": [
        dict(
            id=13,
            ts=D3 + "00:20:00.000Z",
            project="beta",
            session_id="s3",
            phase="eng",
            question_id="ship-test-failure-triage",
            question_summary="Tests fail: ship anyway?",
            user_choice="ack-and-ship",
            registry_door_type="one-way",
            door_class="two-way",
            door_reason=None,
            logged_door_type=None,
            decided_by="check",
            flagged_by="registry",
        ),
        dict(
            id=14,
            ts=D3 + "00:25:00.000Z",
            project="beta",
            session_id="s3",
            phase="eng",
            question_id="beta-force-push",
            question_summary="Force-push to main?",
            user_choice="yes",
            registry_door_type=None,
            door_class="one-way",
            door_reason=None,
            logged_door_type=None,
            decided_by="check",
            flagged_by="classifier",
        ),
        dict(
            id=15,
            ts=D3 + "08:00:00.000Z",
            project="beta",
            session_id="s4",
            phase="other",
            question_id="plan-ceo-review-mode",
            question_summary="Which review mode?",
            user_choice="hold",
            registry_door_type="two-way",
            door_class="two-way",
            door_reason=None,
            logged_door_type="one-way",
            decided_by="check",
            flagged_by="logged",
        ),
    ],
    "daily_activity": [
        # events 1-5
        dict(
            day="2026-03-01",
            project="alpha",
            questions=5,
            asked=4,
            auto_decided=1,
            one_way=1,
            followed=3,
            overridden=1,
            unmarked=1,
        ),
        # events 6-9 and 16
        dict(
            day="2026-03-02",
            project="alpha",
            questions=5,
            asked=5,
            auto_decided=0,
            one_way=0,
            followed=3,
            overridden=0,
            unmarked=2,
        ),
        # event 10, one second before midnight UTC
        dict(
            day="2026-03-02",
            project="beta",
            questions=1,
            asked=0,
            auto_decided=1,
            one_way=0,
            followed=1,
            overridden=0,
            unmarked=0,
        ),
        # events 11-15: one-way 12 (classifier), 14 (classifier), 15 (logged)
        dict(
            day="2026-03-03",
            project="beta",
            questions=5,
            asked=2,
            auto_decided=3,
            one_way=3,
            followed=2,
            overridden=3,
            unmarked=0,
        ),
    ],
    "preference_effective": [
        pref_row(
            "__global__",
            "plan-devex-review-friction-fix",
            "never-ask",
            None,
            "global",
            None,
            "inline-user",
            "2026-02-02T00:00:00.000Z",
            "two-way",
            "AUTO_DECIDE",
            0,
        ),
        pref_row(
            "__global__",
            "plan-eng-review-test-gap",
            "always-ask",
            None,
            "global",
            None,
            "plan-tune",
            "2026-02-01T00:00:00.000Z",
            "two-way",
            "ASK_NORMALLY",
            0,
        ),
        pref_row(
            "__global__",
            "ship-test-failure-triage",
            "never-ask",
            None,
            "global",
            None,
            "plan-tune",
            "2026-02-03T00:00:00.000Z",
            "one-way",
            "ASK_NORMALLY",
            1,
        ),
        pref_row(
            "alpha",
            "hook-aaaaaaaaaa",
            "unknown",
            "sometimes",
            "project",
            None,
            "plan-tune",
            "2026-03-01T11:00:00.000Z",
            None,
            "ASK_NORMALLY",
            0,
        ),
        pref_row(
            "alpha",
            "plan-devex-review-friction-fix",
            "never-ask",
            None,
            "global",
            None,
            "inline-user",
            "2026-02-02T00:00:00.000Z",
            "two-way",
            "AUTO_DECIDE",
            0,
        ),
        # the project's never-ask beats the global always-ask
        pref_row(
            "alpha",
            "plan-eng-review-test-gap",
            "never-ask",
            None,
            "project",
            "always-ask",
            "plan-tune",
            "2026-03-01T09:00:00.000Z",
            "two-way",
            "AUTO_DECIDE",
            0,
        ),
        pref_row(
            "alpha",
            "ship-test-failure-triage",
            "never-ask",
            None,
            "global",
            None,
            "plan-tune",
            "2026-02-03T00:00:00.000Z",
            "one-way",
            "ASK_NORMALLY",
            1,
        ),
        # split-chain ids are always asked
        pref_row(
            "beta",
            "plan-ceo-review-split-scope",
            "never-ask",
            None,
            "project",
            None,
            "plan-tune",
            "2026-03-03T00:00:00.000Z",
            None,
            "ASK_NORMALLY",
            0,
        ),
        pref_row(
            "beta",
            "plan-devex-review-friction-fix",
            "never-ask",
            None,
            "global",
            None,
            "inline-user",
            "2026-02-02T00:00:00.000Z",
            "two-way",
            "AUTO_DECIDE",
            0,
        ),
        pref_row(
            "beta",
            "plan-eng-review-test-gap",
            "always-ask",
            None,
            "global",
            None,
            "plan-tune",
            "2026-02-01T00:00:00.000Z",
            "two-way",
            "ASK_NORMALLY",
            0,
        ),
        pref_row(
            "beta",
            "ship-test-failure-triage",
            "never-ask",
            None,
            "global",
            None,
            "plan-tune",
            "2026-02-03T00:00:00.000Z",
            "one-way",
            "ASK_NORMALLY",
            1,
        ),
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


def history_with_simulated_rows(conn):
    """The hand-made history plus simulated events and findings in the same projects."""
    build_history(conn)
    with db.transaction(conn):
        for i, (project, session, phase, source) in enumerate(
            [
                ("alpha", "s1", "ceo", "agent"),
                ("alpha", "sim-1", "eng", "auto-decided"),
                ("beta", "s3", "dx", "auto-decided"),
                ("alpha", None, "unknown", "hook"),
            ]
        ):
            insert_event(
                conn,
                project=project,
                session_id=session,
                phase=phase,
                source=source,
                ts=D2 + f"1{i}:00:00.000Z",
                question_id="plan-eng-review-test-gap",
                user_choice="skip",
                followed=0,
                synthetic=1,
            )
        insert_finding(
            conn,
            "alpha",
            "s1",
            "ceo",
            "sim-finding",
            "surfaced",
            "rank",
            "two-way",
            D2 + "10:30:00.000Z",
            synthetic=1,
        )


# The rollup tables behind the views, and what a recomputation from the base tables gives.
REFERENCE = {
    "rollup_phase": (
        "SELECT project, session_key, phase, synthetic, sum(questions), sum(auto_decided), sum(one_way),"
        " sum(followed), sum(overridden), max(q_first_ts), max(q_last_ts), sum(findings), sum(surfaced),"
        " sum(silent), sum(ranked), max(f_first_ts), max(f_last_ts) FROM ("
        "  SELECT project, coalesce(session_id, '') AS session_key, phase, synthetic, count(*) AS questions,"
        "   sum(source = 'auto-decided') AS auto_decided,"
        "   sum(door_class IS 'one-way' OR door_type IS 'one-way') AS one_way,"
        "   sum(followed_recommendation IS 1) AS followed, sum(followed_recommendation IS 0) AS overridden,"
        "   min(ts) AS q_first_ts, max(ts) AS q_last_ts, 0 AS findings, 0 AS surfaced, 0 AS silent,"
        "   0 AS ranked, NULL AS f_first_ts, NULL AS f_last_ts"
        "  FROM question_log GROUP BY 1, 2, 3, 4"
        "  UNION ALL"
        "  SELECT project, session_id, phase, synthetic, 0, 0, 0, 0, 0, NULL, NULL, count(*),"
        "   sum(disposition = 'surfaced'), sum(disposition = 'silent'),"
        "   sum(disposition = 'surfaced' AND surface_reason IS 'rank'), min(created_at), max(created_at)"
        "  FROM findings GROUP BY 1, 2, 3, 4"
        ") GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
        "SELECT project, session_key, phase, synthetic, questions, auto_decided, one_way, followed, overridden,"
        " q_first_ts, q_last_ts, findings, surfaced, silent, ranked, f_first_ts, f_last_ts"
        " FROM rollup_phase ORDER BY 1, 2, 3, 4",
    ),
    "rollup_session": (
        "SELECT project, coalesce(session_key, ''), synthetic, sum(questions) - sum(auto_decided),"
        " sum(auto_decided), sum(one_way), sum(surfaced), sum(silent), min(first_ts), max(last_ts),"
        " count(DISTINCT phase)"
        " FROM (SELECT project, coalesce(session_id, '') AS session_key, phase, synthetic, 1 AS questions,"
        "  source = 'auto-decided' AS auto_decided, door_class IS 'one-way' OR door_type IS 'one-way' AS one_way,"
        "  0 AS surfaced, 0 AS silent, ts AS first_ts, ts AS last_ts FROM question_log"
        "  UNION ALL SELECT project, session_id, phase, synthetic, 0, 0, 0, disposition = 'surfaced',"
        "  disposition = 'silent', created_at, created_at FROM findings)"
        " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        "SELECT project, session_key, synthetic, shown, auto_decided, one_way, findings_surfaced,"
        " findings_silent, first_ts, last_ts, phase_count FROM rollup_session ORDER BY 1, 2, 3",
    ),
    "rollup_day": (
        "SELECT project, substr(ts, 1, 10), source, synthetic, count(*),"
        " sum(door_class IS 'one-way' OR door_type IS 'one-way'),"
        " sum(followed_recommendation IS 1), sum(followed_recommendation IS 0), sum(question_id GLOB 'hook-*')"
        " FROM question_log GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
        "SELECT project, day, source, synthetic, events, one_way, followed, overridden, unmarked FROM rollup_day"
        " ORDER BY 1, 2, 3, 4",
    ),
    "rollup_question": (
        "SELECT project, question_id, synthetic, count(*), sum(source = 'auto-decided'),"
        " sum(door_class IS 'one-way' OR door_type IS 'one-way'), sum(followed_recommendation IS 1),"
        " sum(followed_recommendation IS 0),"
        " (SELECT id FROM question_log x WHERE x.project = g.project AND x.question_id = g.question_id"
        "  AND x.synthetic = g.synthetic ORDER BY ts, id LIMIT 1),"
        " min(ts),"
        " (SELECT id FROM question_log x WHERE x.project = g.project AND x.question_id = g.question_id"
        "  AND x.synthetic = g.synthetic ORDER BY ts DESC, id DESC LIMIT 1),"
        " max(ts) FROM question_log g GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        "SELECT project, question_id, synthetic, events, auto_decided, one_way, followed, overridden,"
        " first_event_id, first_ts, last_event_id, last_ts FROM rollup_question ORDER BY 1, 2, 3",
    ),
    "rollup_choice": (
        "SELECT project, question_id, user_choice, synthetic, count(*) FROM question_log"
        " WHERE source != 'auto-decided' GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
        "SELECT project, question_id, user_choice, synthetic, answers FROM rollup_choice ORDER BY 1, 2, 3, 4",
    ),
    "rollup_pacing": (
        "SELECT project, session_id, chain_id, phase, synthetic, count(*), sum(disposition = 'surfaced'),"
        " sum(surface_reason IS NOT NULL), sum(surface_reason IS 'one-way'), sum(surface_reason IS 'gate'),"
        " sum(surface_reason IS 'rank'), sum(surface_reason IS 'flip'), sum(disposition = 'silent'),"
        " sum(flipped_at IS NOT NULL), min(created_at)"
        " FROM findings GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5",
        "SELECT project, session_id, chain_id, phase, synthetic, findings, surfaced, reasons, surfaced_one_way,"
        " surfaced_gate, surfaced_rank, surfaced_flip, silent, flipped, ranked_at"
        " FROM rollup_pacing ORDER BY 1, 2, 3, 4, 5",
    ),
    # The view over rollup_pacing gives exactly what grouping every pacing decision gave.
    "pacing_phase_counts": (
        "SELECT project, session_id, chain_id, phase, synthetic, count(*), sum(disposition = 'surfaced'),"
        " sum(surface_reason = 'one-way'), sum(surface_reason = 'gate'), sum(surface_reason = 'rank'),"
        " sum(surface_reason = 'flip'), sum(disposition = 'silent'), sum(flipped),"
        " sum(disposition = 'surfaced' AND answer_event_id IS NOT NULL), min(created_at)"
        " FROM pacing_decisions GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5",
        "SELECT project, session_id, chain_id, phase, synthetic, findings, surfaced, surfaced_one_way,"
        " surfaced_gate, surfaced_rank, surfaced_flip, silent, flipped, answered, ranked_at"
        " FROM pacing_phase_counts ORDER BY 1, 2, 3, 4, 5",
    ),
}


def assert_rollups_exact(conn):
    # A feed's row is applied by its trigger and discarded: none is ever stored.
    for (feed,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB '*_feed'"
    ).fetchall():
        assert conn.execute(f'SELECT count(*) FROM "{feed}"').fetchone()[0] == 0, feed
    for name, (reference, stored) in REFERENCE.items():
        want = [tuple(r) for r in conn.execute(reference)]
        got = [tuple(r) for r in conn.execute(stored)]
        assert got == want, name
    # rollup_session.phases lists exactly the phases its rollup_phase rows have
    for project, key, synthetic, phases in conn.execute(
        "SELECT project, session_key, synthetic, phases FROM rollup_session"
    ):
        seen = {
            r[0]
            for r in conn.execute(
                "SELECT phase FROM rollup_phase WHERE project = ? AND session_key = ? AND synthetic = ?",
                (project, key, synthetic),
            )
        }
        assert set(phases.split(",")) == seen
