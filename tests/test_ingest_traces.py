"""`plantune ingest-traces DIR`: every project's trace index under DIR, idempotently."""

import json

from click.testing import CliRunner

from toolkit.cli.app import cli


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def test_ingest_traces_finds_projects_and_is_idempotent(conn, project, tmp_path):
    for s in ("a", "b"):
        assert (
            invoke("guidance", "run", "--session", s, "--project-dir", str(project)).exit_code == 0
        )
    index = project / ".plantune" / "trace" / "index.jsonl"
    with open(index, "a") as f:
        f.write("{broken\n")
    conn.execute("DELETE FROM trace_runs")
    # DIR may be a parent of the project, the project or its trace folder.
    for target in (project.parent, project, project / ".plantune" / "trace"):
        conn.execute("DELETE FROM trace_runs")
        r = invoke("ingest-traces", str(target))
        assert r.exit_code == 0, r.output
        assert "Ingested 2 new runs from 1 project(s)." in r.stdout
        assert f"{index}:3:" in r.stderr
    rows = [tuple(x) for x in conn.execute("SELECT * FROM trace_runs ORDER BY run_id")]
    r = invoke("ingest-traces", str(project), "--json")
    data = json.loads(r.stdout)
    assert data[0]["inserted"] == 0 and data[0]["already_present"] == 2
    assert [tuple(x) for x in conn.execute("SELECT * FROM trace_runs ORDER BY run_id")] == rows


def test_ingest_traces_without_any_index_is_an_error(conn, tmp_path):
    r = invoke("ingest-traces", str(tmp_path))
    assert r.exit_code == 1
    assert "no .plantune/trace/index.jsonl found under" in r.output
    assert conn.execute("SELECT count(*) FROM trace_runs").fetchone()[0] == 0


def test_ingest_traces_missing_folder(conn, tmp_path):
    r = invoke("ingest-traces", str(tmp_path / "nope"))
    assert r.exit_code == 1
    assert "is not a folder" in r.output
