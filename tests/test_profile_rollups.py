"""The profile's running totals (migration 0014) against a full recomputation.

Random inserts, deletes, updates, imports of gstack lines and registry / signal-map edits
are applied in any order; after each step every maintained total must equal what grouping
the whole question log gives, exactly (sums in integer millionths).
"""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.core import seeded_db
from toolkit.gstack import ingest
from toolkit.store import db

# The full recomputation, written straight from the definition of a counted event.
# Every counted event belongs to its project and to '__all__' (all projects together).
KEYED = """
(SELECT q.*, iif(w.whole, '__all__', q.project) AS key
 FROM question_log AS q, (SELECT 0 AS whole UNION ALL SELECT 1) AS w
 WHERE q.question_id != '' AND q.user_choice != '')
"""

RECOMPUTE_TOTALS = f"""
SELECT key, synthetic, count(*), count(DISTINCT skill), count(DISTINCT question_id),
       count(DISTINCT nullif(substr(ts, 1, 10), '')),
       min(nullif(substr(ts, 1, 10), '')), max(nullif(substr(ts, 1, 10), ''))
FROM {KEYED}
GROUP BY key, synthetic
"""

RECOMPUTE_SUMS = f"""
SELECT q.key, q.synthetic, m.dimension, sum(CAST(round(m.delta * 1000000) AS INTEGER)), count(*)
FROM {KEYED} AS q
JOIN registry_questions AS r ON r.id = q.question_id
JOIN signal_map AS m ON m.signal_key = r.signal_key AND m.user_choice = q.user_choice
WHERE q.source IS NOT 'auto-decided'
GROUP BY q.key, q.synthetic, m.dimension
"""


def maintained(conn):
    """What the views read: the running totals per project, and '__all__' made from them."""
    totals = {
        tuple(r[:2]): tuple(r[2:])
        for r in conn.execute(
            "SELECT project, synthetic, sample_size, skills_covered, question_ids_covered,"
            " distinct_days, first_day, last_day FROM profile_diversity"
        )
    }
    sums = {
        tuple(r[:3]): (int(round(r[3] * 1000000)), r[4])
        for r in conn.execute(
            "SELECT project, synthetic, dimension, total_delta, events FROM inferred_profile"
            " WHERE events > 0"
        )
    }
    return totals, sums


def recomputed(conn):
    totals = {tuple(r[:2]): tuple(r[2:]) for r in conn.execute(RECOMPUTE_TOTALS)}
    sums = {tuple(r[:3]): tuple(r[3:]) for r in conn.execute(RECOMPUTE_SUMS)}
    return totals, sums


def assert_exact(conn):
    assert maintained(conn) == recomputed(conn)
    # The stored sums themselves, in integer millionths.
    stored = {
        tuple(r[:3]): tuple(r[3:])
        for r in conn.execute(
            "SELECT project, synthetic, dimension, micros, events FROM profile_sums"
        )
    }
    assert stored == {k: v for k, v in recomputed(conn)[1].items() if k[0] != "__all__"}
    # The feeds only carry changes: nothing is ever stored in them.
    assert conn.execute("SELECT count(*) FROM profile_feed").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM profile_move_feed").fetchone()[0] == 0


PROJECTS = ["alpha", "beta"]
DAYS = ["2026-03-01", "2026-03-02", "2026-04-09", ""]
# An auto-decided event counts but never moves a dimension, whatever it stores.
SOURCES = ["agent", "agent", "auto-decided"]


def _signal_questions(conn):
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM registry_questions WHERE signal_key IS NOT NULL ORDER BY id LIMIT 6"
        )
    ]


def _choices(conn):
    return [
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT user_choice FROM signal_map ORDER BY user_choice LIMIT 6"
        )
    ]


_seq = [0]


def _insert(conn, project, synthetic, qid, choice, day, skill, source="agent"):
    _seq[0] += 1
    ts = f"{day}T10:00:{_seq[0] % 60:02d}.000Z" if day else ""
    conn.execute(
        "INSERT INTO question_log (event_key, project, ts, skill, question_id, question_summary,"
        " user_choice, source, raw_json, synthetic, recorded_at)"
        " VALUES (?, ?, ?, ?, ?, 'q', ?, ?, '{}', ?, ?)",
        (f"k{_seq[0]}", project, ts, skill, qid, choice, source, synthetic, db.utc_now()),
    )


def _import(conn, root, project, lines):
    path = root / "projects" / project / "question-log.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        for qid, choice, day, source in lines:
            _seq[0] += 1
            f.write(
                json.dumps(
                    {
                        "source": source,
                        "skill": "ship",
                        "question_id": qid,
                        "question_summary": "q",
                        "user_choice": choice,
                        "ts": f"{day or '2026-05-05'}T09:00:00Z",
                        "session_id": f"s{_seq[0]}",
                    }
                )
                + "\n"
            )
    ingest.sync_project(conn, str(root), project)


step = st.one_of(
    st.tuples(
        st.just("insert"),
        st.sampled_from(PROJECTS),
        st.sampled_from([0, 0, 1]),
        st.integers(0, 7),
        st.integers(0, 7),
        st.sampled_from(DAYS),
        st.sampled_from(["ship", "review", "qa"]),
        st.sampled_from(SOURCES),
    ),
    st.tuples(st.just("delete"), st.integers(0, 1000)),
    st.tuples(
        st.just("update"),
        st.integers(0, 1000),
        st.integers(0, 7),
        st.sampled_from(PROJECTS),
        st.sampled_from(DAYS),
        st.sampled_from(SOURCES),
    ),
    st.tuples(
        st.just("import"),
        st.sampled_from(PROJECTS),
        st.lists(
            st.tuples(
                st.integers(0, 7),
                st.integers(0, 7),
                st.sampled_from(DAYS),
                st.sampled_from(SOURCES),
            ),
            min_size=1,
            max_size=5,
        ),
    ),
    st.tuples(st.just("registry"), st.integers(0, 7), st.booleans()),
    st.tuples(st.just("signal"), st.integers(0, 7), st.integers(-90000, 90000)),
)


def _pick(conn, index):
    ids = [r[0] for r in conn.execute("SELECT id FROM question_log ORDER BY id")]
    return ids[index % len(ids)] if ids else None


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(step, min_size=1, max_size=25))
def test_maintained_totals_equal_full_recomputation(conn, state_root, steps):
    with db.transaction(conn):
        conn.execute("DELETE FROM question_log")
        conn.execute("DELETE FROM ingest_state")
    for p in PROJECTS:
        log = state_root / "projects" / p / "question-log.jsonl"
        if log.exists():
            log.unlink()
    assert_exact(conn)
    qids = _signal_questions(conn) + ["adhoc-question"]
    choices = _choices(conn) + ["", "__unknown__"]
    for s in steps:
        kind = s[0]
        if kind == "import":
            _import(
                conn,
                state_root,
                s[1],
                [
                    (qids[q % len(qids)], choices[c % len(choices)] or "x", d, src)
                    for q, c, d, src in s[2]
                ],
            )
        else:
            with db.transaction(conn):
                if kind == "insert":
                    _, project, synthetic, q, c, day, skill, source = s
                    _insert(
                        conn,
                        project,
                        synthetic,
                        qids[q % len(qids)],
                        choices[c % len(choices)],
                        day,
                        skill,
                        source,
                    )
                elif kind == "delete":
                    row = _pick(conn, s[1])
                    if row is not None:
                        conn.execute("DELETE FROM question_log WHERE id = ?", (row,))
                elif kind == "update":
                    row = _pick(conn, s[1])
                    if row is not None:
                        ts = f"{s[4]}T11:00:00.000Z" if s[4] else ""
                        conn.execute(
                            "UPDATE question_log SET user_choice = ?, project = ?, ts = ?,"
                            " source = ? WHERE id = ?",
                            (choices[s[2] % len(choices)], s[3], ts, s[5], row),
                        )
                elif kind == "registry":
                    qid = qids[s[1] % len(qids)]
                    key = conn.execute(
                        "SELECT signal_key FROM signal_map ORDER BY signal_key LIMIT 1 OFFSET ?",
                        (s[1],),
                    ).fetchone()
                    conn.execute(
                        "UPDATE registry_questions SET signal_key = ? WHERE id = ?",
                        (key[0] if s[2] and key else None, qid),
                    )
                elif kind == "signal":
                    row = conn.execute(
                        "SELECT rowid FROM signal_map ORDER BY rowid LIMIT 1 OFFSET ?", (s[1],)
                    ).fetchone()
                    if row:
                        conn.execute(
                            "UPDATE signal_map SET delta = ? WHERE rowid = ?",
                            (s[2] / 1000000, row[0]),
                        )
        assert_exact(conn)


def test_registry_replaced_wholesale_keeps_sums_exact(conn):
    """A registry sync deletes and re-inserts rows: the sums follow, both ways."""
    qid = _signal_questions(conn)[0]
    choice = conn.execute(
        "SELECT m.user_choice FROM signal_map m JOIN registry_questions r"
        " ON r.signal_key = m.signal_key WHERE r.id = ? LIMIT 1",
        (qid,),
    ).fetchone()[0]
    with db.transaction(conn):
        for _ in range(3):
            _insert(conn, "alpha", 0, qid, choice, "2026-03-01", "ship")
    before = maintained(conn)
    assert any(k[0] == "alpha" for k in before[1])
    with db.transaction(conn):
        saved = conn.execute("SELECT * FROM registry_questions").fetchall()
        conn.execute("DELETE FROM registry_questions")
        assert not [k for k in maintained(conn)[1]]
        marks = ",".join("?" * len(saved[0]))
        conn.executemany(
            f"INSERT INTO registry_questions VALUES ({marks})", [tuple(r) for r in saved]
        )
    assert maintained(conn) == before
    assert_exact(conn)


def test_migration_backfills_existing_events(tmp_path):
    """A database written before 0014 gets its totals from the rows already there."""
    from toolkit.store.db import MIGRATIONS_DIR, VIEWS_DIR, Schema

    old = tmp_path / "old"
    old.mkdir()
    for name in sorted(p for p in __import__("os").listdir(MIGRATIONS_DIR) if p < "0014"):
        (old / name).write_text(open(f"{MIGRATIONS_DIR}/{name}").read())
    (tmp_path / "noviews").mkdir()
    path = str(tmp_path / "x.db")
    c = seeded_db.connect(path, schema=Schema(str(old), str(tmp_path / "noviews")))
    qid = _signal_questions(c)[0]
    with db.transaction(c):
        for i, p in enumerate(["alpha", "beta", "alpha"]):
            _insert(c, p, 0, qid, "accept", DAYS[i], "ship")
        # auto-decided: counted by the adding statement, moving nothing
        _insert(c, "beta", 0, qid, "accept", DAYS[0], "ship", source="auto-decided")
    c.close()
    c = seeded_db.connect(path, schema=Schema(MIGRATIONS_DIR, VIEWS_DIR))
    assert maintained(c)[0][("__all__", 0)][0] == 4
    assert_exact(c)


def test_removing_the_last_days_event_moves_the_day_range_in(conn):
    qid = _signal_questions(conn)[0]
    with db.transaction(conn):
        for day in ("2026-03-01", "2026-03-05", "2026-03-09"):
            _insert(conn, "alpha", 0, qid, "accept", day, "ship")
    for day, expected in (
        ("2026-03-09", ("2026-03-01", "2026-03-05")),
        ("2026-03-01", ("2026-03-05", "2026-03-05")),
    ):
        with db.transaction(conn):
            conn.execute("DELETE FROM question_log WHERE substr(ts, 1, 10) = ?", (day,))
        row = conn.execute(
            "SELECT first_day, last_day, distinct_days FROM profile_totals WHERE project = 'alpha'"
        ).fetchone()
        assert tuple(row[:2]) == expected
        assert_exact(conn)


def _auto_line(seq, choice, **extra):
    return {
        "skill": "plan-ceo-review",
        "question_id": "plan-ceo-review-mode",
        "question_summary": "How big should this plan be?",
        "user_choice": choice,
        "recommended": choice,
        "source": "auto-decided",
        "session_id": f"auto{seq}",
        "tool_use_id": f"tu-{seq}",
        "ts": f"2026-05-0{seq}T09:00:00.000Z",
        **extra,
    }


def test_ingested_auto_decided_lines_keep_a_label_store_a_text_key_and_move_nothing(
    conn, state_root
):
    """gstack's own hook logs the label only: kept as it is (a label is never guessed
    into a key without the shown options). plantune's line carries the keys beside the
    labels: the row stores them. A key that is not text is ignored; a hand-logged
    auto-decided key counts but moves nothing."""
    lines = [
        _auto_line(1, "D) Reduce"),
        _auto_line(2, "D) Reduce", user_choice_key="reduce", recommended_key="reduce"),
        _auto_line(3, "D) Reduce", user_choice_key=5, recommended_key=["reduce"]),
        _auto_line(4, "expand"),
    ]
    path = state_root / "projects" / "alpha" / "question-log.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    ingest.sync_project(conn, str(state_root), "alpha")
    rows = conn.execute(
        "SELECT q.user_choice, q.recommended, q.extra_json, e.choice_key"
        " FROM question_log q JOIN question_events e USING (id) ORDER BY q.ts"
    ).fetchall()
    assert [(r[0], r[1], r[3]) for r in rows] == [
        ("D) Reduce", "D) Reduce", "D) Reduce"),
        ("reduce", "reduce", "reduce"),
        ("D) Reduce", "D) Reduce", "D) Reduce"),
        ("expand", "expand", "expand"),
    ]
    assert json.loads(rows[1][2]) == {
        "user_choice_label": "D) Reduce",
        "recommended_label": "D) Reduce",
    }
    assert json.loads(rows[2][2]) == {"user_choice_key": 5, "recommended_key": ["reduce"]}
    totals, sums = maintained(conn)
    assert totals[("alpha", 0)][:2] == (4, 1)  # counted: sample size, skills
    assert not [k for k in sums if k[0] == "alpha"]
    assert conn.execute("SELECT count(*) FROM dimension_trace").fetchone()[0] == 0
    assert_exact(conn)


def test_an_auto_decided_row_from_before_keys_reads_its_key_and_moves_nothing(conn):
    """Rows recorded while auto-decisions stored the label, the key in extra_json: no
    backfill, the views read both shapes."""
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO question_log (event_key, project, ts, skill, question_id,"
            " question_summary, user_choice, recommended, source, extra_json, raw_json,"
            " recorded_at) VALUES ('old', 'alpha', '2026-05-01T09:00:00.000Z',"
            " 'plan-ceo-review', 'plan-ceo-review-mode', 'q', 'D) Reduce', 'D) Reduce',"
            " 'auto-decided', '{\"user_choice_key\":\"reduce\"}', '{}', ?)",
            (db.utc_now(),),
        )
        _insert(
            conn, "alpha", 0, "plan-ceo-review-mode", "reduce", "2026-05-02", "x", "auto-decided"
        )
    assert [r[0] for r in conn.execute("SELECT choice_key FROM question_events ORDER BY id")] == [
        "reduce",
        "reduce",
    ]
    totals, sums = maintained(conn)
    assert totals[("alpha", 0)][0] == 2 and not [k for k in sums if k[0] == "alpha"]
    assert_exact(conn)
