import json
import os
import re

import nbformat
import pytest
from click.testing import CliRunner

from toolkit.analysis import notebooks, simulate
from toolkit.cli.app import cli
from toolkit.core import seeded_db

COMMITTED = notebooks.notebook_paths()


def test_the_two_analysis_notebooks_are_there():
    assert [os.path.basename(p) for p in COMMITTED] == [
        "01_question_log_distributions.ipynb",
        "02_calibrate_surface_threshold.ipynb",
    ]


@pytest.mark.parametrize("path", COMMITTED, ids=os.path.basename)
def test_committed_notebooks_have_no_outputs(path):
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    assert raw["metadata"]["kernelspec"]["name"] == "python3"
    for cell in raw["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], "commit notebooks without outputs"
            assert cell["execution_count"] is None, "commit notebooks without execution counts"


@pytest.mark.parametrize("path", COMMITTED, ids=os.path.basename)
def test_notebooks_take_the_database_from_parameters_and_read_views(path):
    nb = nbformat.read(path, as_version=4)
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1 and 'os.environ.get("PLANTUNE_DB"' in params[0].source
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for table in ("question_log", "findings"):
        assert f"FROM {table}" not in code, "notebooks read the views, not raw tables"


def test_notebooks_execute_against_a_simulated_database(tmp_path):
    path = str(tmp_path / "sim.db")
    conn = seeded_db.connect(path)
    simulate.simulate(conn, days=21, seed=4, projects=2, end="2026-11-30")
    out = tmp_path / "out"
    results = notebooks.run(path, str(out), {"INCLUDE_SYNTHETIC": True, "WRITE_CALIBRATION": True})
    assert [r["name"] for r in results] == [os.path.basename(p) for p in COMMITTED]
    for r in results:
        nb = nbformat.read(r["notebook"], as_version=4)
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
        assert not [o for o in outputs if o.output_type == "error"]
        assert sum("image/png" in o.get("data", {}) for o in outputs) >= 4, (
            "each notebook draws its plots"
        )
        injected = nb.cells[2]
        assert injected.metadata["tags"] == ["injected-parameters"]
        assert f"PLANTUNE_DB = {os.path.abspath(path)!r}" in injected.source
        with open(r["html"], encoding="utf-8") as f:
            page = f.read()
        assert page.count('<img alt="figure" src="data:image/png;base64,') >= 4
        assert "<h1>" in page
    text = "".join(
        o.get("text", "")
        for c in nbformat.read(results[1]["notebook"], 4).cells
        for o in c.get("outputs", [])
    )
    share = re.search(r"Share asked: ([0-9.]+)% \(target 20\.0%\)", text)
    assert share and abs(float(share.group(1)) - 20) < 0.5
    row = conn.execute("SELECT * FROM calibrations").fetchone()
    assert row is not None and f"stored calibration {row['id']} for __global__" in text


def test_a_failing_cell_is_reported_in_one_line(tmp_path, db_file):
    seeded_db.connect(db_file).close()
    folder = tmp_path / "nbs"
    folder.mkdir()
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("PLANTUNE_DB = ''", metadata={"tags": ["parameters"]}),
            nbformat.v4.new_code_cell(
                "assert PLANTUNE_DB, 'no db'\nraise RuntimeError('the\\nplot broke')"
            ),
        ]
    )
    nbformat.write(nb, str(folder / "broken.ipynb"))
    with pytest.raises(notebooks.NotebookError) as e:
        notebooks.run(db_file, str(tmp_path / "out"), directory=str(folder), html_copy=False)
    assert str(e.value) == "broken.ipynb failed in cell 3: RuntimeError: the plot broke"


def test_cli_without_a_database_fails_cleanly(tmp_path):
    missing = str(tmp_path / "missing.db")
    r = CliRunner().invoke(
        cli, ["notebooks", "run", "--db", missing, "--out", str(tmp_path / "out")]
    )
    assert r.exit_code == 1
    assert r.stderr.strip() == f"Error: no database at {missing} (plantune init creates one)"
    assert not os.path.exists(missing)
    r = CliRunner().invoke(cli, ["notebooks", "run", "--timeout", "soon"])
    assert (
        r.exit_code == 1
        and r.stderr.strip() == "Error: --timeout must be a whole number, got 'soon'"
    )


def test_markdown_rendering_escapes_and_formats():
    page = notebooks.markdown_to_html(
        "# Title <x>\n\nSome `code` and **bold**\ntext.\n\n- one\n- two\n  more"
    )
    assert page == (
        "<h1>Title &lt;x&gt;</h1>\n<p>Some <code>code</code> and <strong>bold</strong> text.</p>\n"
        "<ul><li>one</li><li>two more</li></ul>"
    )


def test_params_fill_the_parameters_cell_by_name_and_type(tmp_path):
    """--param NAME=VALUE reaches the notebooks that declare NAME, typed like its default."""
    path = str(tmp_path / "sim.db")
    conn = seeded_db.connect(path)
    simulate.simulate(conn, days=21, seed=4, projects=2, end="2026-11-30")
    conn.close()
    out = tmp_path / "out"
    r = CliRunner().invoke(
        cli,
        [
            "notebooks",
            "run",
            "--db",
            path,
            "--out",
            str(out),
            "--include-synthetic",
            "--no-html",
            "--param",
            "project=acme-storefront",
            "--param",
            "since=2026-11-10",
            "--param",
            "target=0.3",
            "--param",
            "resamples=200",
        ],
    )
    assert r.exit_code == 0, r.output
    first = nbformat.read(str(out / "01_question_log_distributions.ipynb"), as_version=4)
    second = nbformat.read(str(out / "02_calibrate_surface_threshold.ipynb"), as_version=4)
    injected = [c for c in second.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1
    source = injected[0].source
    for line in (
        "PROJECT = 'acme-storefront'",
        "SINCE = '2026-11-10'",
        "TARGET = 0.3",
        "RESAMPLES = 200",
        "INCLUDE_SYNTHETIC = True",
    ):
        assert line in source.splitlines(), line
    # notebook 01 declares none of them: it gets only what it declares
    (first_injected,) = [
        c for c in first.cells if "injected-parameters" in c.metadata.get("tags", [])
    ]
    assert "PROJECT" not in first_injected.source and "TARGET" not in first_injected.source
    # the parameters took effect: the fit is for that project and recent window only
    text = "".join(
        o.get("text", "") for c in second.cells if c.cell_type == "code" for o in c.outputs
    )
    assert "project acme-storefront" in text and "2026-11-1" in text


@pytest.mark.parametrize(
    "param, message",
    [
        ("nothing", "--param must look like name=value"),
        ("=3", "--param must look like name=value"),
        ("colour=blue", "no notebook has a parameter named 'colour' (they take: "),
        ("target=lots", "--param target takes a number"),
        ("target=nan", "--param target takes a finite number"),
        ("write_calibration=maybe", "--param write_calibration takes true or false"),
    ],
)
def test_bad_params_are_refused_before_anything_runs(tmp_path, db_file, param, message):
    seeded_db.connect(db_file).close()
    out = tmp_path / "out"
    r = CliRunner().invoke(cli, ["notebooks", "run", "--out", str(out), "--param", param])
    assert r.exit_code == 1
    assert message in r.output and r.output.count("\n") == 1
    assert not out.exists()


def test_a_param_given_twice_is_refused(tmp_path, db_file):
    seeded_db.connect(db_file).close()
    r = CliRunner().invoke(
        cli,
        [
            "notebooks",
            "run",
            "--out",
            str(tmp_path / "o"),
            "--param",
            "target=0.2",
            "--param",
            "TARGET=0.3",
        ],
    )
    assert r.exit_code == 1 and "--param TARGET is given twice" in r.output


def test_parameters_reads_the_tagged_cell():
    nb = nbformat.read(COMMITTED[1], as_version=4)
    params = notebooks.parameters(nb)
    assert (
        params["TARGET"] == 0.2
        and params["PROJECT"] is None
        and params["WRITE_CALIBRATION"] is False
    )
    assert "PLANTUNE_DB" in params


def test_notebooks_calibrate_from_the_question_log_with_a_holdout(tmp_path):
    """A gstack-only history (no findings): notebook 02 fits on the question log when asked."""
    from tests.helpers import gstack_history
    from toolkit.gstack import history

    root = tmp_path / "gstack"
    gstack_history.adhoc_history(root, days=60, seed=9)
    path = str(tmp_path / "gstack.db")
    conn = seeded_db.connect(path)
    history.ingest_state_root(conn, str(root))
    results = notebooks.run(
        path, str(tmp_path / "out"), {"SOURCE": "question-log", "HOLDOUT_DAYS": 14}, html_copy=False
    )
    texts = {}
    for r in results:
        nb = nbformat.read(r["notebook"], as_version=4)
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
        assert not [o for o in outputs if o.output_type == "error"]
        texts[r["name"]] = "\n".join(
            o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in outputs
        )
    first, second = (
        texts["01_question_log_distributions.ipynb"],
        texts["02_calibrate_surface_threshold.ipynb"],
    )
    assert "override_rate" in first and "category" in first and "phase" in first
    assert "Source: question-log" in second and "source: question-log" in second
    assert "last 14 days" in second and "override recall" in second
