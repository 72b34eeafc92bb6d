"""The rollup tables behind the views, checked against a recomputation from the base tables."""

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
    for name, (reference, stored) in REFERENCE.items():
        want = [tuple(r) for r in conn.execute(reference)]
        got = [tuple(r) for r in conn.execute(stored)]
        assert got == want, name
    # rollup_session.phases lists exactly the phases its rollup_phase rows have
    for project, key, synthetic, phases in conn.execute(
            "SELECT project, session_key, synthetic, phases FROM rollup_session"):
        seen = {r[0] for r in conn.execute(
            "SELECT phase FROM rollup_phase WHERE project = ? AND session_key = ? AND synthetic = ?",
            (project, key, synthetic))}
        assert set(phases.split(",")) == seen
