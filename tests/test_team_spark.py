"""`plantune team calibrate --engine spark` in Spark local mode equals the numpy fit."""

import sqlite3

import pytest

from tests.helpers.team import ok, team_db
from toolkit.analysis import calibrate
from toolkit.analysis import team as teams


@pytest.fixture
def exported(tmp_path):
    _, _, path = team_db(tmp_path)
    out = str(tmp_path / "out")
    ok(["export", out, "--db", path])
    return path, out


def test_spark_calibration_equals_the_numpy_fit(spark, exported):
    path, out = exported
    for target, synthetic in ((0.20, True), (0.20, False), (0.07, True)):
        conn = sqlite3.connect(path)
        want = calibrate.run(conn, target=target, include_synthetic=synthetic, resamples=1)
        conn.close()
        got = teams.calibrate_spark(out, target, include_synthetic=synthetic, spark=spark)
        assert (got["threshold"], got["tie_fraction"], got["n"]) == (
            want["threshold"],
            want["tie_fraction"],
            want["n_findings"],
        ), (target, synthetic)
        assert got["n_tie_surfaced"] == want["n_tie_surfaced"]
    # The same job through the command line, on the running session.
    text = ok(["team", "calibrate", out, "--engine", "spark", "--include-synthetic"]).output
    conn = sqlite3.connect(path)
    want = calibrate.run(conn, include_synthetic=True, resamples=1)
    conn.close()
    assert f"tie fraction {want['tie_fraction']:.6f}" in text and "[spark]" in text
