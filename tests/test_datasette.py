"""Datasette over the plantune database: metadata, views, canned queries, serving read-only.

In-process tests use ``Datasette(...).client`` (via ``toolkit.serve.build_datasette``) and
read ``?_shape=array``; one test runs ``datasette --get`` and one runs a real
``plantune serve`` on a free port, answered over HTTP and stopped by its PID.
"""

import asyncio
import html
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import urllib.error
import urllib.parse
import urllib.request

import pytest
from click.testing import CliRunner

from tests.helpers import script
from tests.helpers.server import anonymous_get, free_port, http_get, read_banner, wait_until_up
from tests.helpers.views import (
    EXPECTED,
    VIEW_NAMES,
    build_history,
    history_with_simulated_rows,
    insert_event,
    ordered,
)
from toolkit.analysis import serve
from toolkit.cli.app import cli
from toolkit.core import seeded_db
from toolkit.store import db

METADATA = serve.load_metadata()
DB_META = METADATA["databases"]["plantune"]
QUERY_NAMES = sorted(DB_META["queries"])

# Canned query results for the history of tests/helpers/views.py, worked out by hand.
EXPECTED_QUERIES = {
    # events 4, 8 and 16: the user answered add-test three times out of three
    "same_answer_every_time": [
        dict(
            project="alpha",
            question_id="plan-eng-review-test-gap",
            always_answered="add-test",
            answers=3,
            door_type="two-way",
            current_preference="never-ask",
            suggestion="already never-ask",
        ),
    ],
    # every session (there are six, fewer than ten), summed per phase in review order
    "interruptions_per_phase_last_10_sessions": [
        dict(
            phase="ceo",
            sessions=2,
            asked=2,
            auto_decided=0,
            one_way=1,
            findings_silent=1,
            budget_spent=0,
        ),
        dict(
            phase="design",
            sessions=1,
            asked=4,
            auto_decided=0,
            one_way=0,
            findings_silent=0,
            budget_spent=0,
        ),
        dict(
            phase="eng",
            sessions=2,
            asked=2,
            auto_decided=3,
            one_way=1,
            findings_silent=1,
            budget_spent=1,
        ),
        dict(
            phase="dx",
            sessions=1,
            asked=2,
            auto_decided=1,
            one_way=1,
            findings_silent=0,
            budget_spent=0,
        ),
        dict(
            phase="other",
            sessions=1,
            asked=0,
            auto_decided=1,
            one_way=1,
            findings_silent=0,
            budget_spent=0,
        ),
        dict(
            phase="unknown",
            sessions=1,
            asked=1,
            auto_decided=0,
            one_way=0,
            findings_silent=0,
            budget_spent=0,
        ),
    ],
    # the history is from March 2026: nothing today
    "auto_decided_today": [],
    "override_hotspots": [
        dict(
            project="alpha",
            question_id="plan-eng-review-test-gap",
            skill="plan-eng-review",
            followed=4,
            overridden=0,
            override_rate=0.0,
            last_summary="Add the missing test?",
        ),
    ],
    "inert_preferences": [
        dict(
            project="__global__",
            question_id="ship-test-failure-triage",
            preference="never-ask",
            raw_value=None,
            came_from="global",
            door_type="one-way",
            effect="ASK_NORMALLY",
        ),
        dict(
            project="alpha",
            question_id="hook-aaaaaaaaaa",
            preference="unknown",
            raw_value="sometimes",
            came_from="project",
            door_type=None,
            effect="ASK_NORMALLY",
        ),
        dict(
            project="alpha",
            question_id="ship-test-failure-triage",
            preference="never-ask",
            raw_value=None,
            came_from="global",
            door_type="one-way",
            effect="ASK_NORMALLY",
        ),
        dict(
            project="beta",
            question_id="ship-test-failure-triage",
            preference="never-ask",
            raw_value=None,
            came_from="global",
            door_type="one-way",
            effect="ASK_NORMALLY",
        ),
    ],
    "one_way_safety_check": [dict(violations=3, verdict="SAFETY BUG: see one_way_audit")],
    "questions_per_day": [
        dict(day="2026-03-01", asked=4, auto_decided=1, one_way=1),
        dict(day="2026-03-02", asked=5, auto_decided=1, one_way=0),
        dict(day="2026-03-03", asked=2, auto_decided=3, one_way=3),
    ],
    # the calibration stored and pinned in the fixture below, newest change first
    "calibration_changes": [
        dict(
            ts="2026-03-05T00:00:00.000Z",
            scope="alpha",
            event_type="pinned",
            calibration_id=1,
            previous_id=None,
            threshold=3.0,
            achieved_rate=0.2,
            ci_low=0.17,
            ci_high=0.23,
            low_confidence=0,
            synthetic=0,
            detail="",
        ),
        dict(
            ts="2026-03-04T00:00:00.000Z",
            scope="alpha",
            event_type="fitted",
            calibration_id=1,
            previous_id=None,
            threshold=3.0,
            achieved_rate=0.2,
            ci_low=0.17,
            ci_high=0.23,
            low_confidence=0,
            synthetic=0,
            detail="",
        ),
    ],
}


def fetch(ds, path, method="get", **kwargs):
    async def go():
        return await getattr(ds.client, method)(path, **kwargs)

    return asyncio.run(go())


def rows(ds, path):
    sep = "&" if "?" in path else "?"
    r = fetch(ds, f"{path}{sep}_shape=array&_size=max")
    assert r.status_code == 200, r.text
    return r.json()


def counts(path):
    conn = sqlite3.connect(path)
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    out = {n: conn.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}
    conn.close()
    return out


# --- in process ---------------------------------------------------------------------------


def test_every_view_and_canned_query_is_covered():
    assert set(EXPECTED_QUERIES) == set(QUERY_NAMES)
    assert set(VIEW_NAMES) <= set(DB_META["tables"])


@pytest.mark.parametrize("view", VIEW_NAMES)
def test_view_json_rows_are_the_hand_computed_ones(history_db, view):
    ds = serve.build_datasette(history_db)
    assert ordered(view, rows(ds, f"/plantune/{view}.json")) == ordered(view, EXPECTED[view])


@pytest.fixture
def history_and_simulation_db(db_file):
    """The hand-made history, simulated rows in the same projects and sessions, and one
    calibration with its history: canned queries must show only the real rows."""
    conn = seeded_db.connect(db_file)
    history_with_simulated_rows(conn)
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO calibrations (id, project, created_at, target, threshold, tie_fraction,"
            " score_function, achieved_rate, ci_low, ci_high, n_findings, n_sessions)"
            " VALUES (1, 'alpha', '2026-03-04T00:00:00.000Z', 0.2, 3, 1, 'additive', 0.2, 0.17, 0.23, 400, 60)"
        )
        conn.executemany(
            "INSERT INTO calibration_events (ts, scope, event_type, calibration_id) VALUES (?, 'alpha', ?, 1)",
            [("2026-03-04T00:00:00.000Z", "fitted"), ("2026-03-05T00:00:00.000Z", "pinned")],
        )
    conn.close()
    return db_file


def test_synthetic_facet_links_find_the_rows_they_count(history_and_simulation_db):
    """A facet link (?synthetic=1) reaches SQLite as text; every view page it filters must
    show as many rows as the view holds with that number."""
    ds = serve.build_datasette(history_and_simulation_db)
    conn = sqlite3.connect(history_and_simulation_db)
    for view in VIEW_NAMES:
        for value in (0, 1):
            sql = f"SELECT count(*) FROM {view} WHERE synthetic = ?"
            expected = conn.execute(sql, (value,)).fetchone()[0]
            got = rows(ds, f"/plantune/{view}.json?synthetic={value}")
            assert len(got) == expected, (view, value)
    conn.close()


@pytest.mark.parametrize("query", QUERY_NAMES)
def test_canned_query_rows_are_the_hand_computed_ones(history_and_simulation_db, query):
    ds = serve.build_datasette(history_and_simulation_db)
    assert rows(ds, f"/plantune/{query}.json") == EXPECTED_QUERIES[query]
    page = fetch(ds, f"/plantune/{query}")
    assert page.status_code == 200
    assert DB_META["queries"][query]["title"] in html.unescape(page.text)


def test_interruptions_per_phase_for_one_project(history_db):
    ds = serve.build_datasette(history_db)
    got = rows(ds, "/plantune/interruptions_per_phase_last_10_sessions.json?project=beta")
    # beta's sessions s3 (eng, dx), s4 (other) and s5 (ceo, findings only)
    assert got == [
        dict(
            phase="ceo",
            sessions=1,
            asked=0,
            auto_decided=0,
            one_way=0,
            findings_silent=1,
            budget_spent=0,
        ),
        dict(
            phase="eng",
            sessions=1,
            asked=0,
            auto_decided=2,
            one_way=1,
            findings_silent=0,
            budget_spent=0,
        ),
        dict(
            phase="dx",
            sessions=1,
            asked=2,
            auto_decided=1,
            one_way=1,
            findings_silent=0,
            budget_spent=0,
        ),
        dict(
            phase="other",
            sessions=1,
            asked=0,
            auto_decided=1,
            one_way=1,
            findings_silent=0,
            budget_spent=0,
        ),
    ]


def test_interruptions_per_phase_keeps_only_the_ten_latest_sessions(db_file):
    conn = seeded_db.connect(db_file)
    with db.transaction(conn):
        for i in range(12):  # sessions 0..11, one question each, session 11 the latest
            insert_event(
                conn,
                project="p",
                session_id=f"s{i:02d}",
                phase="eng" if i >= 2 else "ceo",
                ts=f"2026-01-{i + 1:02d}T00:00:00.000Z",
            )
    conn.close()
    ds = serve.build_datasette(db_file)
    got = rows(ds, "/plantune/interruptions_per_phase_last_10_sessions.json")
    assert got == [
        dict(
            phase="eng",
            sessions=10,
            asked=10,
            auto_decided=0,
            one_way=0,
            findings_silent=0,
            budget_spent=0,
        )
    ]


def test_auto_decided_today_shows_only_today(db_file):
    conn = seeded_db.connect(db_file)
    now = db.utc_now()
    with db.transaction(conn):
        insert_event(conn, id=1, source="auto-decided", ts=now, summary="decided today")
        insert_event(
            conn, id=2, source="auto-decided", ts="2020-01-01T00:00:00.000Z", summary="long ago"
        )
        insert_event(conn, id=3, source="agent", ts=now, summary="asked today")
    conn.close()
    ds = serve.build_datasette(db_file)
    got = rows(ds, "/plantune/auto_decided_today.json")
    assert [r["question_summary"] for r in got] == ["decided today"]


def test_one_way_safety_check_says_safe_on_a_clean_log(conn, db_file):
    with db.transaction(conn):
        insert_event(
            conn, question_id="ship-test-failure-triage", source="agent", door_class="one-way"
        )
    ds = serve.build_datasette(db_file)
    assert rows(ds, "/plantune/one_way_safety_check.json") == [
        dict(violations=0, verdict="safe: every one-way door was asked")
    ]


def _description_text(meta):
    if "description" in meta:
        return meta["description"]
    return re.sub(r"<[^>]+>", "", meta["description_html"])


@pytest.mark.parametrize("view", VIEW_NAMES)
def test_view_page_shows_its_description_facets_and_default_sort(history_db, view):
    ds = serve.build_datasette(history_db)
    page = fetch(ds, f"/plantune/{view}")
    assert page.status_code == 200
    meta = DB_META["tables"][view]
    first_sentence = _description_text(meta).split(":")[0].split(".")[0]
    assert first_sentence in html.unescape(page.text)
    for col in meta.get("facets", []):
        assert f'id="facet-{col}"' in page.text, f"facet {col} missing on {view}"
    if "sort_desc" in meta:
        assert f"sorted by {meta['sort_desc']} descending" in page.text
    # datasette-vega adds its chart tool to every table page
    assert "/-/static-plugins/datasette_vega/" in page.text


def test_chart_links_configure_datasette_vega(history_db):
    ds = serve.build_datasette(history_db)
    for view in ("phase_counts", "daily_activity"):
        page = fetch(ds, f"/plantune/{view}").text
        links = re.findall(r'href="\?([^"]*)#g\.mark=([^"]*)"', page)
        assert links, f"no chart link on {view}"
        for _, fragment in links:
            fragment = html.unescape("g.mark=" + fragment)
            params = dict(p.split("=", 1) for p in fragment.split("&"))
            columns = set(EXPECTED[view][0])
            assert params["g.x_column"] in columns and params["g.y_column"] in columns


def test_table_page_shows_column_descriptions(history_db):
    ds = serve.build_datasette(history_db)
    page = html.unescape(fetch(ds, "/plantune/question_log").text)
    assert DB_META["tables"]["question_log"]["description"].split(":")[0] in page
    columns = DB_META["tables"]["question_log"]["columns"]
    assert columns["door_class"] in page


def test_hidden_internal_tables_are_not_listed(history_db):
    ds = serve.build_datasette(history_db)
    page = fetch(ds, "/plantune").text
    assert "question_log" in page and "phase_counts" in page
    for name, meta in DB_META["tables"].items():
        if meta.get("hidden"):
            assert f'href="/plantune/{name}"' not in page, name


def test_metadata_is_served_unchanged(history_db):
    ds = serve.build_datasette(history_db)
    assert fetch(ds, "/-/metadata.json").json() == METADATA


def test_database_name_does_not_depend_on_the_file_name(tmp_path):
    path = str(tmp_path / "some-other-name.db")
    conn = seeded_db.connect(path)
    build_history(conn)
    conn.close()
    ds = serve.build_datasette(path)
    assert fetch(ds, "/plantune/phase_counts.json?_shape=array").status_code == 200
    assert [d["name"] for d in fetch(ds, "/-/databases.json").json()] == ["plantune"]


# --- metadata completeness and validity -----------------------------------------------------


def test_every_table_view_and_column_is_described(conn):
    """Generic on purpose: whatever tables and views a migrated database has, each is described."""
    missing = []
    objects = conn.execute(
        "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    assert len(objects) > 20
    for name, kind in objects:
        meta = DB_META["tables"].get(name)
        if meta is None:
            missing.append(f"{kind} {name}")
            continue
        if meta.get("hidden") and not meta.get("columns"):
            continue
        if not (meta.get("description") or meta.get("description_html")):
            missing.append(f"{kind} {name}: description")
        described = meta.get("columns", {})
        for col in [r[1] for r in conn.execute(f'PRAGMA table_xinfo("{name}")')]:
            if not described.get(col):
                missing.append(f"{kind} {name}.{col}")
    assert missing == []


def test_metadata_names_only_real_tables_and_columns(conn):
    for name, meta in DB_META["tables"].items():
        cols = [r[1] for r in conn.execute(f'PRAGMA table_xinfo("{name}")')]
        assert cols, f"metadata describes {name}, which does not exist"
        for key in ("columns",):
            assert set(meta.get(key, {})) <= set(cols), name
        for col in meta.get("facets", []):
            assert col in cols, f"{name} facet {col}"
        for key in ("sort", "sort_desc", "label_column"):
            if key in meta:
                assert meta[key] in cols, f"{name} {key}"


def test_metadata_has_the_required_top_level_fields_and_no_write_queries():
    for key in ("title", "license", "license_url", "source"):
        assert METADATA.get(key), key
    assert METADATA.get("description") or METADATA.get("description_html")
    for name, query in DB_META["queries"].items():
        assert not query.get("write"), f"{name} is a write query"
        assert query.get("title") and (query.get("description") or query.get("description_html")), (
            name
        )
        first = query["sql"].lstrip().split()[0].lower()
        assert first in ("select", "with"), name


# --- read-only ----------------------------------------------------------------------------

WRITE_SQL = [
    "insert into preferences (scope, question_id, preference, source, updated_at)"
    " values ('x', 'y', 'never-ask', 'plan-tune', 'now')",
    "drop table question_log",
    "delete from question_log",
    "update question_log set user_choice = 'changed'",
    # starts like a read, so only the read-only connection stops it
    "with x as (select 1) delete from question_log",
    "attach database 'elsewhere.db' as other",
    "pragma journal_mode = delete",
]

WRITE_POSTS = [
    ("/plantune/question_log/-/insert", {"row": {"question_id": "x"}}),
    ("/plantune/-/create", {"table": "evil", "row": {"a": 1}}),
    ("/plantune/question_log/-/drop", {}),
    ("/plantune/question_log", {"question_id": "x"}),
    ("/plantune/same_answer_every_time", {}),
    ("/plantune", {"sql": "delete from question_log"}),
]


def test_sql_editor_refuses_writes_and_nothing_changes(history_db):
    before = counts(history_db)
    ds = serve.build_datasette(history_db)
    for sql in WRITE_SQL:
        r = fetch(ds, "/plantune.json?" + urllib.parse.urlencode({"sql": sql}))
        assert r.status_code >= 400, sql
    assert fetch(
        ds, "/plantune.json?sql=select+count(*)+as+n+from+question_log&_shape=array"
    ).json() == [{"n": 16}]
    assert counts(history_db) == before


def test_posts_to_write_endpoints_fail_and_nothing_changes(history_db):
    before = counts(history_db)
    ds = serve.build_datasette(history_db)
    for path, body in WRITE_POSTS:
        r = fetch(ds, path, method="post", json=body)
        assert not 200 <= r.status_code < 300, path
    assert counts(history_db) == before


def test_the_served_database_refuses_writes_even_from_plugins(history_db):
    before = counts(history_db)
    ds = serve.build_datasette(history_db)
    database = ds.get_database("plantune")

    async def attempts():
        with pytest.raises(PermissionError):
            await database.execute_write("delete from question_log")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            await database.execute("delete from question_log")

    asyncio.run(attempts())
    assert counts(history_db) == before


# --- command line ---------------------------------------------------------------------------


def test_datasette_get_smoke(history_db, tmp_path):
    named = tmp_path / "plantune.db"  # the metadata describes the database named "plantune"
    shutil.copy(history_db, named)
    result = subprocess.run(
        [
            script("datasette"),
            str(named),
            "-m",
            serve.METADATA_FILE,
            "--get",
            "/plantune/phase_counts.json?_shape=array&_size=max",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert ordered("phase_counts", got) == ordered("phase_counts", EXPECTED["phase_counts"])


def test_serve_refuses_a_missing_database_and_creates_nothing(tmp_path):
    path = tmp_path / "nothing-here.db"
    r = CliRunner().invoke(cli, ["serve", "--db", str(path), "--port", "0"])
    assert r.exit_code == 1
    assert r.output.strip() == f"Error: no database at {path} (plantune init creates one)"
    assert not path.exists()


def test_serve_refuses_a_port_in_use(history_db):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = CliRunner().invoke(cli, ["serve", "--db", history_db, "--port", str(port)])
    assert r.exit_code == 1
    assert r.output.strip() == (
        f"Error: port {port} on 127.0.0.1 is already in use; choose another with --port"
    )


def test_serve_rejects_a_bad_port():
    r = CliRunner().invoke(cli, ["serve", "--port", "70000"])
    assert r.exit_code == 2
    assert "70000 is not in the range 0<=x<=65535" in r.output


def test_plantune_serve_answers_over_http_and_stops_by_pid(served):
    base, path, proc = served
    status, body = http_get(base + "/plantune/phase_counts.json?_shape=array&_size=max")
    assert status == 200
    assert ordered("phase_counts", json.loads(body)) == ordered(
        "phase_counts", EXPECTED["phase_counts"]
    )
    status, page = http_get(base + "/plantune/question_review")
    assert status == 200 and "registered, ad-hoc or unmarked" in page
    os.kill(proc.pid, 15)
    assert proc.wait(timeout=15) == 0
    printed = "".join(proc.banner) + proc.stdout.read()
    assert f"read-only at http://127.0.0.1:{base.rsplit(':', 1)[1]}/plantune" in printed
    with pytest.raises(urllib.error.URLError):
        http_get(base + "/-/versions.json", timeout=2)


def test_plantune_serve_refuses_writes_over_http(served):
    base, path, _ = served
    before = counts(path)
    for sql in WRITE_SQL:
        with pytest.raises(urllib.error.HTTPError) as e:
            http_get(base + "/plantune.json?" + urllib.parse.urlencode({"sql": sql}))
        assert e.value.code == 400, sql
    for route, body in WRITE_POSTS:
        request = urllib.request.Request(
            base + route,
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(request, timeout=10)
        assert e.value.code >= 400, route
    assert counts(path) == before


def test_plantune_serve_shows_rows_written_while_it_runs(served):
    base, path, _ = served
    url = base + "/plantune/session_interruptions.json?_shape=array&session_id=s-live"
    assert json.loads(http_get(url)[1]) == []
    conn = seeded_db.connect(path)  # a hook writing while the server reads
    with db.transaction(conn):
        insert_event(
            conn, project="alpha", session_id="s-live", phase="eng", ts="2026-03-05T10:00:00.000Z"
        )
    conn.close()
    (row,) = json.loads(http_get(url)[1])
    assert row["shown"] == 1 and row["phases"] == "eng"


# --- owner-only by default -------------------------------------------------------------

ANONYMOUS_REFUSED = (
    "/",
    "/plantune",
    "/plantune.json",
    "/plantune/question_log.json?_shape=array",
    "/plantune/question_log",
    "/plantune/question_log/1.json",
    "/plantune/phase_counts.json?_shape=array",
    "/plantune.json?"
    + urllib.parse.urlencode({"sql": "select question_summary from question_log"}),
    "/-/databases.json",
    "/-/metadata.json",
    "/-/versions.json",
)


def test_serve_refuses_anonymous_requests_and_serves_the_signed_in_owner(served):
    base, path, proc = served
    for route in ANONYMOUS_REFUSED:
        status, body = anonymous_get(base + route)
        assert status == 403, route
        assert "Sign in to plantune" in body and "question_summary" not in body, route
    # A made-up token or a forged cookie signs nobody in.
    assert anonymous_get(base + "/-/sign-in?token=guess")[0] == 403
    forged = urllib.request.Request(
        base + "/plantune.json", headers={"Cookie": "plantune_owner=eyJhIjoib3duZXIifQ.x"}
    )
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(forged, timeout=10)
    assert e.value.code == 403
    # The sign-in page itself is open to anyone (it shows nothing of the data).
    status, page = anonymous_get(base + "/-/sign-in")
    assert status == 200 and "Sign in to plantune" in page
    # Signed in (the fixture opened the printed link): everything reads.
    sql = urllib.parse.urlencode(
        {"sql": "select count(*) as n from question_log", "_shape": "array"}
    )
    status, body = http_get(base + "/plantune.json?" + sql)
    assert status == 200 and json.loads(body)[0]["n"] == counts(path)["question_log"]
    assert http_get(base + "/plantune/question_log.json?_shape=array")[0] == 200
    status, body = http_get(base + "/-/databases.json")
    assert status == 200
    [database] = json.loads(body)
    assert database["name"] == "plantune" and "path" not in database
    assert os.path.basename(path) not in body and os.path.dirname(path) not in body
    assert "to you only" in "".join(proc.banner)


def test_each_run_has_its_own_sign_in_token(history_db):
    links = []
    for _ in range(2):
        port = free_port()
        proc = subprocess.Popen(
            [script("plantune"), "serve", "--db", history_db, "--port", str(port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            _, link = read_banner(proc)
            links.append(link)
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    assert links[0] != links[1]
    assert all(link.split("token=")[1] for link in links)


def test_no_auth_serves_read_only_without_sign_in_and_says_so(history_db):
    port = free_port()
    proc = subprocess.Popen(
        [script("plantune"), "serve", "--db", history_db, "--port", str(port), "--no-auth"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines, link = read_banner(proc)
        assert link is None and "anyone who can reach this port" in "".join(lines)
        base = f"http://127.0.0.1:{port}"
        wait_until_up(base + "/-/versions.json", proc)
        status, body = anonymous_get(base + "/plantune/question_log.json?_shape=array")
        assert status == 200 and json.loads(body)
        status, body = anonymous_get(base + "/-/databases.json")
        assert status == 200 and "path" not in json.loads(body)[0]
        write = urllib.parse.urlencode({"sql": "delete from question_log"})
        assert anonymous_get(base + "/plantune.json?" + write)[0] == 400
    finally:
        proc.terminate()
        proc.wait(timeout=15)
