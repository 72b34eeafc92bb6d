"""`plantune export` (Parquet, CSV, JSONL), `plantune team report` on DuckDB against the
SQLite views, and `plantune team calibrate --engine duckdb` against the numpy fit."""

import filecmp
import json
import os
import re
import sqlite3
import sys

import pyarrow.dataset as pads
import pytest

from tests.helpers import query
from tests.helpers.team import invoke, ok, team_db
from toolkit.analysis import calibrate, export, fit
from toolkit.analysis import team as teams
from toolkit.core import identity, seeded_db

SQL_OF = {
    "question_events": "SELECT project, count(*) FROM question_log GROUP BY 1",
    "findings": "SELECT project, count(*) FROM findings GROUP BY 1",
    "pacing_decisions": "SELECT project, count(*) FROM pacing_decisions GROUP BY 1",
    "calibrations": "SELECT project, count(*) FROM calibrations GROUP BY 1",
    "profile_signals": "SELECT project, count(*) FROM dimension_trace GROUP BY 1",
}


@pytest.fixture
def team(tmp_path):
    *_, path = team_db(tmp_path)
    ok(["calibrate", "--include-synthetic", "--db", path], developer="lead@example.com")
    return path


def read_dataset(directory, name):
    """A dataset read back with pyarrow's own hive partitioning (not through our reader)."""
    files = [f for f, _, _ in export.manifest_files(directory, name)]
    fmt = export.read_manifest(directory)["format"]
    ds = pads.dataset(
        files,
        format="parquet" if fmt == "parquet" else fmt.replace("jsonl", "json"),
        partitioning="hive",
        partition_base_dir=os.path.join(directory, name),
    )
    return ds.to_table()


def per_project(table):
    counts = {}
    for p in table.column("project").to_pylist():
        counts[p] = counts.get(p, 0) + 1
    return counts


def test_parquet_round_trip_matches_sqlite(team, tmp_path):
    out = str(tmp_path / "out")
    ok(["export", out, "--db", team])
    for name, sql in SQL_OF.items():
        want = dict(query(team, sql))
        got = per_project(read_dataset(out, name)) if want else {}
        assert got == want, name
        with open(os.path.join(out, name, "_schema.json"), encoding="utf-8") as f:
            schema = json.load(f)
        cols = [c["name"] for c in schema["columns"]]
        assert [c["name"] for c in schema["partitioning"]["columns"]] == ["project", "month"]
        if want:
            table = read_dataset(out, name)
            assert set(cols) <= set(table.column_names)
    # Values survive: every event key, developer and month, exactly.
    events = read_dataset(out, "question_events")
    got = sorted(
        zip(
            events.column("event_key").to_pylist(),
            events.column("developer").to_pylist(),
            events.column("month").to_pylist(),
        )
    )
    want = sorted(query(team, "SELECT event_key, developer, substr(ts, 1, 7) FROM question_log"))
    assert got == want
    # Folders are hive partitions of project and month.
    months = {m for (m,) in query(team, "SELECT DISTINCT substr(ts, 1, 7) FROM question_log")}
    assert len(months) >= 2
    for project, n in query(team, SQL_OF["question_events"]):
        assert os.path.isdir(os.path.join(out, "question_events", f"project={project}"))


def test_export_is_deterministic(team, tmp_path):
    one, two = str(tmp_path / "one"), str(tmp_path / "two")
    ok(["export", one, "--db", team])
    ok(["export", two, "--db", team])
    cmp = filecmp.dircmp(one, two)
    walk = [cmp]
    while walk:
        c = walk.pop()
        assert not c.left_only and not c.right_only
        _, mismatch, errors = filecmp.cmpfiles(c.left, c.right, c.common_files, shallow=False)
        assert not mismatch and not errors, mismatch
        walk.extend(c.subdirs.values())


def test_incremental_export_adds_only_new_rows_and_rewrites_changed_partitions(
    team, tmp_path, monkeypatch
):
    out = str(tmp_path / "out")
    first = json.loads(ok(["export", out, "--db", team, "--json"]).output)
    assert (
        first["datasets"]["question_events"]["rows"]
        == query(team, "SELECT count(*) FROM question_log")[0][0]
    )
    # Nothing new: nothing written, the folder is left as it was.
    again = json.loads(ok(["export", out, "--db", team, "--json"]).output)
    assert all(d["rows"] == 0 for d in again["datasets"].values())
    # One new event in a partition that exists (the month of proj-a's latest event: some
    # rows are stamped with today's date): one new file holding exactly that row.
    latest = query(team, "SELECT max(ts) FROM question_log WHERE project = 'proj-a'")[0][0]
    event = {
        "skill": "ship",
        "question_id": "ship-x",
        "question_summary": "Ship?",
        "user_choice": "yes",
        "ts": latest,
        "session_id": "new-s",
    }
    ok(
        ["log", json.dumps(event), "--project", "proj-a", "--db", team],
        developer="alice@example.com",
    )
    third = json.loads(ok(["export", out, "--db", team, "--json"]).output)
    qe = third["datasets"]["question_events"]
    assert (qe["rows"], qe["files"], qe["appended"], qe["rewritten"]) == (1, 1, 1, 0)
    assert (
        len(read_dataset(out, "question_events"))
        == query(team, "SELECT count(*) FROM question_log")[0][0]
    )
    # A flip changes an old finding: its partition is rewritten, never duplicated.
    silent = query(
        team,
        "SELECT finding_id, session_id, project FROM findings"
        " WHERE disposition = 'silent' AND synthetic = 0 LIMIT 1",
    )[0]
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", silent[2])
    ok(
        ["flip", silent[0], "--session", silent[1], "--choice", "skip", "--db", team],
        developer="alice@example.com",
    )
    fourth = json.loads(ok(["export", out, "--db", team, "--json"]).output)
    assert fourth["datasets"]["findings"]["rewritten"] == 1
    findings = read_dataset(out, "findings")
    assert len(findings) == query(team, "SELECT count(*) FROM findings")[0][0]
    flipped = [r for r in findings.to_pylist() if r["finding_id"] == silent[0]]
    assert len(flipped) == 1 and flipped[0]["flipped_at"]
    # Deleted rows leave the dataset too.
    conn = sqlite3.connect(team)
    conn.execute("DELETE FROM question_log WHERE session_id = 'new-s'")
    conn.commit()
    conn.close()
    ok(["export", out, "--db", team])
    assert (
        len(read_dataset(out, "question_events"))
        == query(team, "SELECT count(*) FROM question_log")[0][0]
    )


def test_files_a_killed_run_left_are_never_read(team, tmp_path):
    out = str(tmp_path / "out")
    ok(["export", out, "--db", team])
    part = export.manifest_files(out, "question_events")[0][0]
    stray = os.path.join(os.path.dirname(part), "part-00099.parquet")
    with open(part, "rb") as src, open(stray, "wb") as dst:
        dst.write(src.read())
    report = team_report(out)
    assert report == team_report(out)  # the reader took the manifest's list, not the glob
    assert (
        sum(r["questions"] for r in report["phases"])
        == query(team, "SELECT count(*) FROM question_log")[0][0]
    )
    ok(["export", out, "--db", team])
    assert not os.path.exists(stray)


def team_report(out, include_synthetic=True):
    return teams.report(out, include_synthetic=include_synthetic, sessions=True)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_csv_and_jsonl_exports_give_the_same_report(team, tmp_path, fmt):
    pq, other = str(tmp_path / "pq"), str(tmp_path / fmt)
    ok(["export", pq, "--db", team])
    ok(["export", other, "--format", fmt, "--db", team])
    assert os.path.exists(export.manifest_files(other, "findings")[0][0])
    assert export.manifest_files(other, "findings")[0][0].endswith("." + fmt)
    assert team_report(other) == team_report(pq)


def test_pseudonymised_export_hides_developers_stably(team, tmp_path):
    out = str(tmp_path / "out")
    ok(["export", out, "--pseudonymise", "s3cret", "--db", team])
    devs = set(read_dataset(out, "question_events").column("developer").to_pylist())
    assert devs == {
        identity.pseudonym(d, "s3cret")
        for (d,) in query(team, "SELECT DISTINCT developer FROM question_log")
    }
    for name in export.BY_NAME:
        for f, _, _ in export.manifest_files(out, name):
            with open(f, "rb") as fh:
                assert b"example.com" not in fh.read(), f
    # Another salt gives other names; mixing salts in one folder is refused.
    result = invoke(["export", out, "--pseudonymise", "other", "--db", team])
    assert result.exit_code == 1 and "another salt" in result.output
    result = invoke(["export", out, "--db", team])
    assert result.exit_code == 1 and "--pseudonymise" in result.output


def test_export_bad_folders_get_one_line(team, tmp_path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    result = invoke(["export", str(busy), "--db", team])
    assert result.exit_code == 1 and "not empty" in result.output
    assert os.listdir(busy) == ["notes.txt"]
    out = str(tmp_path / "out")
    ok(["export", out, "--db", team])
    result = invoke(["export", out, "--format", "csv", "--db", team])
    assert result.exit_code == 1 and "holds a parquet export" in result.output
    other = str(tmp_path / "other.db")
    ok(["init", "--db", other])
    result = invoke(["export", out, "--db", other])
    assert result.exit_code == 1 and "another database" in result.output


# ---------------------------------------------------------------- DuckDB = SQLite views


def _sqlite_rows(path, sql):
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql)]
    finally:
        conn.close()


PHASE_COLUMNS = (
    "questions",
    "asked",
    "auto_decided",
    "one_way",
    "followed",
    "overridden",
    "findings_surfaced",
    "findings_silent",
    "budget_spent",
)


def test_team_report_equals_the_sqlite_views(team, tmp_path):
    out = str(tmp_path / "out")
    ok(["export", out, "--db", team])
    report = team_report(out)
    # Per-phase interruptions: phase_counts, row for row.
    sums = ", ".join(f"sum({c}) AS {c}" for c in PHASE_COLUMNS)
    want = _sqlite_rows(
        team,
        f"SELECT project, session_id, phase, {sums} FROM phase_counts"
        " GROUP BY project, session_id, phase",
    )

    def key(r):
        return (r["project"], r["session_id"] or "", r["phase"])

    got = {key(r): {c: r[c] for c in PHASE_COLUMNS} for r in report["phase_sessions"]}
    assert got == {key(r): {c: r[c] for c in PHASE_COLUMNS} for r in want}
    assert len(got) > 10
    # Override rates by question: question_review.
    want = {
        (r["project"], r["question_id"]): (
            r["events"],
            r["followed"],
            r["overridden"],
            r["override_rate"],
        )
        for r in _sqlite_rows(team, "SELECT * FROM question_review")
    }
    got = {
        (r["project"], r["question_id"]): (
            r["events"],
            r["followed"],
            r["overridden"],
            r["override_rate"],
        )
        for r in report["questions"]
    }
    assert got == want
    # By category: the question_events view's `overridden`.
    want = {
        r["category"]: (r["events"], r["followed"], r["overridden"])
        for r in _sqlite_rows(
            team,
            "SELECT category, count(*) AS events,"
            " sum(overridden = 0) AS followed,"
            " sum(overridden = 1) AS overridden"
            " FROM question_events GROUP BY category",
        )
    }
    got = {
        r["category"]: (r["events"], r["followed"], r["overridden"]) for r in report["categories"]
    }
    assert got == want
    # Diversity: profile_diversity's numbers, per project from the view ...
    duck = teams.duck_connect(out)
    cols = (
        "sample_size",
        "skills_covered",
        "question_ids_covered",
        "distinct_days",
        "calendar_span_days",
        "first_day",
        "last_day",
    )
    view = _sqlite_rows(
        team,
        "SELECT project, sum(sample_size) AS n FROM profile_diversity"
        " WHERE project != '__all__' GROUP BY project",
    )
    per_project = {r["project"]: r for r in teams.diversity(duck, "project", True)}
    assert {r["project"]: r["n"] for r in view} == {
        p: r["sample_size"] for p, r in per_project.items()
    }
    real = {
        r["project"]: r
        for r in _sqlite_rows(
            team, "SELECT * FROM profile_diversity WHERE synthetic = 0 AND project != '__all__'"
        )
    }
    duck_real = {r["project"]: r for r in teams.diversity(duck, "project", False)}
    assert {p: tuple(r[c] for c in cols) + (bool(r["enough_data"]),) for p, r in real.items()} == {
        p: tuple(r[c] for c in cols) + (r["enough_data"],) for p, r in duck_real.items()
    }
    # ... and per developer, the same definition grouped by developer in SQLite.
    by_dev = _sqlite_rows(
        team,
        "SELECT developer, count(*) AS sample_size,"
        " count(DISTINCT skill) AS skills_covered,"
        " count(DISTINCT question_id) AS question_ids_covered,"
        " count(DISTINCT substr(ts, 1, 10)) AS distinct_days"
        " FROM question_log WHERE question_id != '' AND user_choice != ''"
        " GROUP BY developer",
    )
    assert {r["developer"]: r for r in by_dev} == {
        r["developer"]: {
            k: r[k]
            for k in (
                "developer",
                "sample_size",
                "skills_covered",
                "question_ids_covered",
                "distinct_days",
            )
        }
        for r in report["diversity"]
    }
    assert {r["developer"] for r in report["diversity"]} == {"alice@example.com", "bob@example.com"}


def test_team_report_text_and_errors(team, tmp_path):
    out = str(tmp_path / "out")
    ok(["export", out, "--db", team])
    text = ok(["team", "report", out]).output
    assert "Interruptions per review phase" in text and "alice@example.com" in text
    assert "simulated history left out" in text
    result = invoke(["team", "report", str(tmp_path / "nothing")])
    assert result.exit_code == 1 and "no plantune export" in result.output


# ---------------------------------------------------------------- calibration = numpy


def numpy_fit(path, include_synthetic=True):
    conn = sqlite3.connect(path)
    try:
        report = calibrate.run(conn, include_synthetic=include_synthetic, resamples=1)
    finally:
        conn.close()
    return report["threshold"], report["tie_fraction"], report["n_findings"]


def test_duckdb_calibration_equals_the_numpy_fit(team, tmp_path):
    out = str(tmp_path / "out")
    ok(["export", out, "--db", team])
    for synthetic in (True, False):
        got = teams.calibrate(out, "duckdb", include_synthetic=synthetic)
        threshold, tie_fraction, n = numpy_fit(team, synthetic)
        assert (got["threshold"], got["tie_fraction"], got["n"]) == (threshold, tie_fraction, n)
    # Every target, including the ones that split ties.
    for target in (0.0, 0.05, 0.2, 0.33, 0.5, 0.9, 1.0):
        conn = sqlite3.connect(team)
        want = calibrate.run(conn, target=target, include_synthetic=True, resamples=1)
        conn.close()
        got = teams.calibrate(out, "duckdb", target=target, include_synthetic=True)
        assert (got["threshold"], got["tie_fraction"]) == (
            want["threshold"],
            want["tie_fraction"],
        ), target
    text = ok(["team", "calibrate", out, "--include-synthetic"]).output
    threshold, tie_fraction, n = numpy_fit(team, True)
    assert text.startswith(f"Threshold {threshold:g} with tie fraction {tie_fraction:.6f}")


def test_histogram_fit_equals_fit_threshold_with_duplicate_ids():
    import numpy as np

    rng = np.random.default_rng(3)
    scores = rng.integers(0, 7, 500).astype(float)
    ids = [f"id-{i % 40}" for i in range(500)]  # many duplicates: unreachable k
    for target in np.linspace(0, 1, 23):
        want = fit.fit_threshold(scores, target, ids=ids)
        values, counts = np.unique(scores, return_counts=True)
        hashes = fit.tie_hashes(ids)

        def stats(threshold, k, hashes=hashes):
            tied = np.sort(hashes[scores == threshold])
            lo, hi = tied[k - 1], tied[k]
            return lo, hi, int((tied < hi).sum()), int((tied <= hi).sum())

        got = fit.fit_from_histogram(values, counts, target, stats)
        assert got == want


def test_a_project_name_the_folder_must_encode_comes_back_exactly(tmp_path):
    path = str(tmp_path / "odd.db")
    ok(["init", "--db", path])
    conn = sqlite3.connect(path)
    for n, project in enumerate(["odd project/x", "plain"]):
        conn.execute(
            "INSERT INTO question_log (event_key, project, ts, skill, question_id,"
            " question_summary, user_choice, source, raw_json, recorded_at, developer)"
            " VALUES (?, ?, '2026-11-01T00:00:00Z', 'ship', 'ship-x', 'Ship?', 'y',"
            " 'agent', '{}', 'now', 'me@x')",
            (f"k{n}", project),
        )
    conn.commit()
    conn.close()
    out = str(tmp_path / "out")
    ok(["export", out, "--db", path])
    assert os.path.isdir(os.path.join(out, "question_events", "project=odd%20project%2Fx"))
    report = teams.report(out, include_synthetic=True)
    assert sorted(r["project"] for r in report["questions"]) == ["odd project/x", "plain"]


def test_a_stored_team_fit_is_listed_and_ranks_only_once_pinned(team, tmp_path):
    from toolkit.pacing import rank as pacing

    out = str(tmp_path / "out")
    ok(["export", out, "--db", team])
    fresh = str(tmp_path / "fresh.db")
    result = json.loads(ok(["team", "calibrate", out, "--store", "--db", fresh, "--json"]).output)
    cid = result["calibration_id"]
    row = query(
        fresh,
        "SELECT project, developer, fitted_on, threshold, tie_fraction,"
        " n_findings, synthetic, json_extract(details_json, '$.engine')"
        " FROM calibrations WHERE id = ?",
        (cid,),
    )
    assert row == [
        (
            "__global__",
            "team",
            "team",
            result["threshold"],
            result["tie_fraction"],
            result["n"],
            0,
            "duckdb",
        )
    ]
    listed = {
        r["id"]: r for r in json.loads(ok(["calibrations", "list", "--db", fresh, "--json"]).output)
    }
    assert listed[cid]["fitted_on"] == "team" and not listed[cid]["active"]
    assert "team" in ok(["calibrations", "list", "--db", fresh]).output
    conn = seeded_db.connect(fresh)
    try:
        # Newest and the only one, yet the default rule ranks until it is pinned.
        assert pacing.calibration_in_force(conn, "proj-a") is None
        ok(["calibrations", "use", str(cid), "--db", fresh])
        assert pacing.calibration_in_force(conn, "proj-a")[0] == cid
    finally:
        conn.close()
    text = ok(["team", "calibrate", out, "--store", "--db", fresh]).output
    assert "ranks nothing until pinned" in text
    # A fit that may include simulated findings is stored synthetic.
    again = json.loads(
        ok(
            ["team", "calibrate", out, "--store", "--include-synthetic", "--db", fresh, "--json"]
        ).output
    )
    assert query(
        fresh, "SELECT synthetic FROM calibrations WHERE id = ?", (again["calibration_id"],)
    ) == [(1,)]


def test_calibrating_simulated_data_without_the_flag_says_why_nothing_fits(tmp_path, db_file):
    ok(["simulate", "--days", "3", "--seed", "5", "--db", db_file])
    out = str(tmp_path / "out")
    ok(["export", out, "--db", db_file])
    r = invoke(["team", "calibrate", out])
    assert r.exit_code == 1
    [line] = r.output.strip().splitlines()
    assert re.fullmatch(
        r"Error: no real two-way findings to calibrate on; the dataset holds [\d,]+ simulated "
        r"ones \(simulated data is left out unless you pass --include-synthetic\)",
        line,
    ), line
    assert ok(["team", "calibrate", out, "--include-synthetic"]).output.startswith("Threshold")


def test_without_pyspark_the_error_names_a_command_that_installs_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)  # as where pyspark is not installed
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    with pytest.raises(teams.TeamError) as e:
        teams.spark_session()
    assert f"`{sys.executable} -m pip install pyspark`" in str(e.value)
    assert "plantune[spark]" not in str(e.value)
