"""The analysis views, each checked against rows worked out by hand from a small history.

The history and the expected rows live in tests/helpers/views.py, shared with the Datasette
tests, which serve the same history and expect the same rows.
"""

import json
import os
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.views import (
    D4,
    EXPECTED,
    REFERENCE,
    VIEW_NAMES,
    assert_rollups_exact,
    build_history,
    history_with_simulated_rows,
    insert_event,
    insert_finding,
    ordered,
    view_rows,
)
from toolkit.core import seeded_db
from toolkit.store import db, rollups


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
        insert_event(
            conn,
            id=1,
            question_id="qa-custom-thing",
            skill="qa",
            ts="2026-01-01T00:00:00.000Z",
            summary="first",
        )
        insert_event(
            conn,
            id=2,
            question_id="qa-custom-thing",
            skill="ship",
            ts="2026-01-01T00:00:00.000Z",
            summary="second, same instant",
        )
        insert_event(
            conn,
            id=3,
            question_id="qa-custom-thing",
            skill="ship",
            ts="2025-12-31T00:00:00.000Z",
            summary="older, recorded later",
        )
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
        insert_event(
            conn, question_id="ship-test-failure-triage", source="agent", door_class="one-way"
        )
        insert_event(conn, question_id="beta-force-push", source="hook", door_class="one-way")
        insert_event(conn, question_id="ship-release-pipeline-missing", source="auto-decided")
    assert view_rows(conn, "one_way_audit") == []


def test_one_way_audit_follows_a_registry_change(history):
    with db.transaction(history):
        history.execute(
            "UPDATE registry_questions SET door_type = 'one-way' WHERE id = 'plan-devex-review-friction-fix'"
        )
    rows = view_rows(history, "one_way_audit")
    assert [r["id"] for r in ordered("one_way_audit", rows)] == [10, 13, 14, 15]
    row10 = next(r for r in rows if r["id"] == 10)
    assert row10["flagged_by"] == "registry"


def test_one_way_audit_names_every_rule_that_fires(conn):
    with db.transaction(conn):
        insert_event(
            conn,
            id=7,
            question_id="ship-test-failure-triage",
            source="auto-decided",
            door_class="one-way",
            door_type="one-way",
        )
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
        history.execute(
            "UPDATE question_log SET session_id = 's9', phase = 'dx', source = 'auto-decided',"
            " user_choice = 'skip', followed_recommendation = 0 WHERE id = 16"
        )
        # the first and the last events of a question disappear
        history.execute("DELETE FROM question_log WHERE id IN (3, 8)")
        # a silent decision flipped by the user, and a finding removed
        history.execute(
            "UPDATE findings SET disposition = 'surfaced', surface_reason = 'flip'"
            " WHERE finding_id = 'finding-b'"
        )
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
            " FROM pacing_phase_counts WHERE chain_id = ?",
            (chain,),
        ).fetchone()

    with db.transaction(conn):
        insert_finding(conn, "p", "s1", "eng", "f1", "silent", None, "two-way", t[1], chain_id="c1")
        insert_finding(conn, "p", "s1", "eng", "f2", "silent", None, "two-way", t[2], chain_id="c1")
    # a later finding keeps the first ranking time; no reason at all gives empty per-reason totals
    assert tuple(group("c1")) == (2, 0, None, None, 2, 0, t[1])
    with db.transaction(conn):
        f0 = insert_finding(
            conn, "p", "s1", "eng", "f0", "surfaced", "rank", "two-way", t[0], chain_id="c1"
        )
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
EVENT = st.fixed_dictionaries(
    {
        "project": PROJECTS,
        "session_id": SESSIONS,
        "phase": PHASES,
        "ts": TIMES,
        "question_id": QIDS,
        "source": SOURCES,
        "user_choice": st.sampled_from(["a", "b"]),
        "followed": st.sampled_from([None, 0, 1]),
        "door_class": st.sampled_from([None, "one-way", "two-way"]),
        "door_type": st.sampled_from([None, "one-way"]),
        "synthetic": st.sampled_from([0, 0, 1]),
    }
)
DECISIONS = st.sampled_from(
    [
        ("surfaced", "rank"),
        ("surfaced", "flip"),
        ("surfaced", "one-way"),
        ("surfaced", "gate"),
        ("surfaced", None),
        ("silent", None),
    ]
)
FINDING = st.builds(
    lambda project, session_id, phase, decision, created_at, synthetic, chain_id, flipped_at: dict(
        project=project,
        session_id=session_id,
        phase=phase,
        disposition=decision[0],
        surface_reason=decision[1],
        created_at=created_at,
        synthetic=synthetic,
        chain_id=chain_id,
        flipped_at=flipped_at,
    ),
    PROJECTS,
    st.sampled_from(["s1", "s1", ""]),
    PHASES,
    DECISIONS,
    TIMES,
    st.sampled_from([0, 0, 1]),
    st.sampled_from(["c1", "c1", "c2"]),
    st.sampled_from([None, None, "2026-01-04T10:00:00.000Z"]),
)
INSERT = st.tuples(st.just("insert"), EVENT)
INSERT_FINDING = st.tuples(st.just("insert_finding"), FINDING)
# A bulk import: its rows inserted with the insert triggers left out, their rollups added
# set-based (toolkit.store.rollups.Bulk), as `plantune ingest` does for a large file.
BULK = st.tuples(st.just("bulk"), st.lists(EVENT, min_size=1, max_size=8))
BULK_FINDINGS = st.tuples(st.just("bulk_findings"), st.lists(FINDING, min_size=1, max_size=5))
BULK_EVENTS_SQL = (
    "INSERT INTO question_log (event_key, project, ts, skill, question_id, question_summary,"
    " user_choice, followed_recommendation, session_id, source, phase, door_class, door_type,"
    " raw_json, recorded_at, synthetic)"
    " VALUES (?, ?, ?, 'ship', ?, 'A question?', ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?)"
)
BULK_FINDINGS_SQL = (
    "INSERT INTO findings (project, session_id, chain_id, phase, finding_id, summary, severity,"
    " irreversibility, decision_matters, door_type, door_reason, score, threshold, disposition,"
    " surface_reason, created_at, updated_at, synthetic, flipped_at)"
    " VALUES (?, ?, ?, ?, ?, 'A finding', 1, 1, 1, 'two-way', 'test', 3, 4, ?, ?, ?, ?, ?, ?)"
)


def bulk_insert(conn, kind, items, counter):
    if kind == "bulk":
        table, sql = "question_log", BULK_EVENTS_SQL
        rows = [
            (
                f"bulk-{counter}-{i}",
                e["project"],
                e["ts"],
                e["question_id"],
                e["user_choice"],
                e["followed"],
                e["session_id"],
                e["source"],
                e["phase"],
                e["door_class"],
                e["door_type"],
                e["ts"],
                e["synthetic"],
            )
            for i, e in enumerate(items)
        ]
    else:
        table, sql = "findings", BULK_FINDINGS_SQL
        rows = [
            (
                f["project"],
                f["session_id"],
                f["chain_id"],
                f["phase"],
                f"bulk-{counter}-{i}",
                f["disposition"],
                f["surface_reason"],
                f["created_at"],
                f["created_at"],
                f["synthetic"],
                f["flipped_at"],
            )
            for i, f in enumerate(items)
        ]
    bulk = rollups.Bulk(conn, table)
    assert bulk.ready
    assert bulk.put(sql, rows) == len(rows)
    bulk.finish()


# Inserts are drawn more often so that groups fill up before rows are changed or removed.
OPERATION = st.one_of(
    INSERT,
    INSERT,
    INSERT,
    BULK,
    BULK_FINDINGS,
    st.tuples(st.just("update"), st.integers(0, 50), EVENT),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    INSERT_FINDING,
    INSERT_FINDING,
    st.tuples(st.just("update_finding"), st.integers(0, 50), FINDING),
    st.tuples(st.just("delete_finding"), st.integers(0, 50)),
)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=st.lists(OPERATION, min_size=10, max_size=60))
def test_rollups_stay_exact_under_any_sequence_of_writes(tmp_path_factory, operations):
    path = str(tmp_path_factory.mktemp("rollups") / "plantune.db")
    conn = seeded_db.connect(path)
    counter = 0
    with db.transaction(conn):
        for op in operations:
            kind = op[0]
            if kind == "insert":
                insert_event(conn, **op[1])
            elif kind in ("bulk", "bulk_findings"):
                counter += 1
                bulk_insert(conn, kind, op[1], counter)
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
                        (
                            e["project"],
                            e["session_id"],
                            e["phase"],
                            e["ts"],
                            e["question_id"],
                            e["source"],
                            e["user_choice"],
                            e["followed"],
                            e["door_class"],
                            e["door_type"],
                            e["synthetic"],
                            target,
                        ),
                    )
            elif kind == "insert_finding":
                f = op[1]
                counter += 1
                insert_finding(
                    conn,
                    f["project"],
                    f["session_id"],
                    f["phase"],
                    f"f{counter}",
                    f["disposition"],
                    f["surface_reason"],
                    "two-way",
                    f["created_at"],
                    f["synthetic"],
                    chain_id=f["chain_id"],
                    flipped_at=f["flipped_at"],
                )
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
                        (
                            f["project"],
                            f["session_id"],
                            f["phase"],
                            f["disposition"],
                            f["surface_reason"],
                            f["created_at"],
                            f["synthetic"],
                            f["chain_id"],
                            f["flipped_at"],
                            target,
                        ),
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
    conn = seeded_db.connect(db_file, schema=schema_before(tmp_path, "0005"))
    build_history(conn)
    assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'rollup_phase'").fetchone()
    conn.close()

    conn = seeded_db.connect(db_file)
    assert "0005_analysis_rollups.sql" in db.applied_migrations(conn)
    assert_rollups_exact(conn)
    for view in VIEW_NAMES:
        assert ordered(view, view_rows(conn, view)) == ordered(view, EXPECTED[view]), view
    with db.transaction(conn):
        insert_event(
            conn, project="alpha", session_id="s1", phase="ceo", ts="2026-03-01T09:00:00.000Z"
        )
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


def database_with(tmp_path_factory, name, *statements):
    """A migrated database in a temporary folder, filled by ``statements`` in one transaction."""
    path = str(tmp_path_factory.mktemp(name) / "plantune.db")
    conn = seeded_db.connect(path)
    with db.transaction(conn):
        for sql in statements:
            conn.execute(sql)
    conn.close()
    return path


@pytest.fixture(scope="module")
def large_log(tmp_path_factory):
    """20,000 events in 100 sessions of 200 (few rollup rows per event), 5% auto-decided,
    and 5,000 pacing findings (1,000 of them answered by an event)."""
    return database_with(
        tmp_path_factory,
        "large",
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
            """,
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
            """,
    )


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
        yield (
            f"SELECT {col} AS value, count(*) AS count FROM (SELECT * FROM {view}) WHERE {col} IS NOT NULL"
            f" GROUP BY {col} ORDER BY count DESC, value LIMIT 31"
        )


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
    conn = seeded_db.connect(path)
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


def test_simulated_rows_never_change_a_real_total(history):
    """Every view shows the same real rows after simulated rows land in the same projects and
    sessions; the simulated ones appear only in rows marked synthetic = 1."""
    before = {view: ordered(view, view_rows(history, view)) for view in VIEW_NAMES}
    with db.transaction(history):
        history.execute("DELETE FROM question_log")
        history.execute("DELETE FROM findings")
        history.execute("DELETE FROM preferences")
    history_with_simulated_rows(history)
    assert_rollups_exact(history)
    for view in VIEW_NAMES:
        rows = view_rows(history, view)
        real = [r for r in rows if r["synthetic"] == 0]
        assert ordered(view, real) == before[view], view
    simulated = [r for r in view_rows(history, "phase_counts") if r["synthetic"] == 1]
    assert (
        sum(r["questions"] for r in simulated) == 4
        and sum(r["findings_surfaced"] for r in simulated) == 1
    )


def test_synthetic_filter_from_a_url_finds_the_same_rows_as_a_number(history):
    """Datasette binds a facet link's value (?synthetic=1) as text: every view's synthetic
    column must keep INTEGER affinity so that '1' matches the rows 1 matches."""
    with db.transaction(history):
        history.execute("DELETE FROM question_log")
        history.execute("DELETE FROM findings")
        history.execute("DELETE FROM preferences")
    history_with_simulated_rows(history)
    question, choice = history.execute(
        "SELECT r.id, m.user_choice FROM registry_questions AS r"
        " JOIN signal_map AS m ON m.signal_key = r.signal_key LIMIT 1"
    ).fetchone()
    with db.transaction(history):
        for synthetic in (0, 1):
            insert_event(
                history,
                question_id=question,
                user_choice=choice,
                synthetic=synthetic,
                event_key=f"moving-{synthetic}",
            )
    for view in VIEW_NAMES:
        for value in (0, 1):
            sql = f"SELECT count(*) FROM {view} WHERE synthetic = ?"
            as_number = history.execute(sql, (value,)).fetchone()[0]
            as_text = history.execute(sql, (str(value),)).fetchone()[0]
            assert as_text == as_number, (view, value, as_text, as_number)
    moved = "SELECT count(*) FROM dimension_trace WHERE synthetic = '1'"
    assert history.execute(moved).fetchone()[0] > 0


def test_recent_auto_decisions_keeps_only_the_last_30_days(history):
    with db.transaction(history):
        old = insert_event(
            history, project="alpha", source="auto-decided", ts="2026-01-30T10:00:00.000Z"
        )
        edge = insert_event(
            history, project="alpha", source="auto-decided", ts="2026-02-01T08:00:00.000Z"
        )
    ids = {r["id"] for r in view_rows(history, "recent_auto_decisions")}
    # the newest auto-decision is 2026-03-03T08:00: 30 days back is 2026-02-01T08:00
    assert edge in ids and old not in ids
    assert ids == {3, 10, 13, 14, 15, edge}


def test_migration_0011a_splits_existing_totals_by_synthetic(tmp_path, db_file):
    """A database written before the rollups were keyed by synthetic is refilled exactly."""
    conn = seeded_db.connect(db_file, schema=schema_before(tmp_path, "0011"))
    history_with_simulated_rows(conn)
    mixed = conn.execute("SELECT count(*) FROM rollup_phase").fetchone()[0]
    conn.close()

    conn = seeded_db.connect(db_file)
    assert "0011a_synthetic_rollups.sql" in db.applied_migrations(conn)
    assert_rollups_exact(conn)
    assert conn.execute("SELECT count(*) FROM rollup_phase").fetchone()[0] > mixed
    with db.transaction(conn):
        insert_event(
            conn,
            project="alpha",
            session_id="s1",
            phase="ceo",
            ts=D4 + "09:00:00.000Z",
            synthetic=1,
        )
        conn.execute("DELETE FROM question_log WHERE id = 1")
    assert_rollups_exact(conn)
    conn.close()


# Views with one row per event or finding: the first page reads only the rows it shows (no
# sort or grouping of the whole table), and the count and facets read each row once through
# the table or an index, without looking up answers or the registry for every row.
ROW_VIEWS = [
    "question_events",
    "finding_scores",
    "pacing_decisions",
    "pacing_phase_counts",
    "run_questions",
]


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


@pytest.fixture(scope="module")
def moving_log(tmp_path_factory):
    """20,000 events in 100 sessions of 200, every fifth session simulated: one event in 25
    answers a registered question with a choice that moves the profile (one or two
    dimensions), one in 25 answers it with a choice that moves nothing, the rest are
    unmarked hook questions."""
    return database_with(
        tmp_path_factory,
        "moving",
        """
            WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 19999)
            INSERT INTO question_log (event_key, project, ts, skill, question_id, question_summary, user_choice,
                recommended, followed_recommendation, session_id, source, phase, door_class, synthetic,
                raw_json, recorded_at)
            SELECT 'k' || i, 'p' || (i / 200 % 3),
                   strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (i * 60) || ' seconds'),
                   'ship', iif(i % 25 < 2, 'ship-test-failure-triage', 'hook-' || printf('%010d', i % 20)),
                   'Tests failed. What now?',
                   CASE WHEN i % 25 = 1 THEN 'not-in-the-map'
                        ELSE CASE i / 25 % 3 WHEN 0 THEN 'fix-now' WHEN 1 THEN 'skip' ELSE 'add-test' END END,
                   'fix-now', 1, 's' || (i / 200), 'agent',
                   CASE i % 4 WHEN 0 THEN 'ceo' WHEN 1 THEN 'design' WHEN 2 THEN 'eng' ELSE 'dx' END,
                   'two-way', i / 200 % 5 = 0, '{}', '2026-01-01T00:00:00.000Z'
            FROM s
            """,
    )


def test_dimension_trace_page_count_and_facet_read_only_the_moves(moving_log):
    """The page reads the newest events until it has its rows; the count and the synthetic
    facet read the index entries of the moving answers only, never the whole log."""
    conn = sqlite3.connect(moving_log)
    scan = vm_steps(conn, "SELECT sum(length(question_summary)) FROM question_log")
    # 800 of the 20,000 events move something: reading only them (and grouping their
    # moves for the facet) stays well under half a scan; walking the log takes several.
    # The extra count is the one of the page that a click on the facet's value 0 opens.
    queries = [*datasette_queries("dimension_trace", load_metadata())]
    for sql in [*queries, "SELECT count(*) FROM dimension_trace WHERE synthetic = 0"]:
        steps = vm_steps(conn, sql)
        assert steps < scan / 2, f"{sql!r} took {steps} steps; one scan of the log takes {scan}"
    # the counts are still every move: one row per event and dimension its answer moved
    dims = {}
    for key, choice in conn.execute(
        "SELECT r.id, m.user_choice FROM registry_questions r JOIN signal_map m USING (signal_key)"
    ):
        dims[key, choice] = dims.get((key, choice), 0) + 1
    expected = {0: 0, 1: 0}
    for qid, choice, synthetic in conn.execute(
        "SELECT question_id, user_choice, synthetic FROM question_log"
    ):
        expected[synthetic] += dims.get((qid, choice), 0)
    assert expected[0] > 0 and expected[1] > 0
    facet = queries[-1]
    assert dict(conn.execute(facet).fetchall()) == expected
    assert conn.execute("SELECT count(*) FROM dimension_trace").fetchone()[0] == sum(
        expected.values()
    )
    newest = conn.execute("SELECT ts FROM dimension_trace ORDER BY ts DESC LIMIT 101").fetchall()
    assert len(newest) == 101 and newest == sorted(newest, reverse=True)
    conn.close()


def test_migration_0020_gives_an_existing_database_the_plans(tmp_path, db_file):
    """A database from before 0020 gets the index and the planner statistics: its count
    starts from the moving answers and its page from the newest events, with the same rows."""
    conn = seeded_db.connect(db_file, schema=schema_before(tmp_path, "0020"))
    build_history(conn)
    conn.close()
    conn = seeded_db.connect(db_file)
    rows = conn.execute("SELECT * FROM dimension_trace ORDER BY event_id, dimension").fetchall()
    joined = conn.execute(
        "SELECT q.id, m.dimension, m.delta FROM question_log q"
        " JOIN registry_questions r ON r.id = q.question_id"
        " JOIN signal_map m ON m.signal_key = r.signal_key AND m.user_choice = q.user_choice"
        " WHERE q.source IS NOT 'auto-decided'"  # an auto-decision moves nothing
        " ORDER BY q.id, m.dimension"
    ).fetchall()
    assert rows and [(r["event_id"], r["dimension"], r["delta"]) for r in rows] == [
        tuple(r) for r in joined
    ]

    def plan(sql):
        return " | ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql))

    count = plan("SELECT count(*) FROM dimension_trace")
    assert count.startswith("SCAN r") and "question_log_choice" in count, count
    page = plan("SELECT * FROM dimension_trace ORDER BY ts DESC LIMIT 101")
    assert page.startswith("SCAN q USING INDEX question_log_ts") and "TEMP B-TREE" not in page
    conn.close()
