"""Team analysis over an exported dataset: reports on DuckDB, the calibration fit on DuckDB
or Spark.

Both engines read the files the export manifest lists (never a folder glob, so files a
killed export left behind are never counted). The reports compute exactly what the
SQLite views compute (phase_counts, question_review, question_events, profile_diversity),
grouped for a team: per phase, per question and category, per developer.

The calibration fit runs where the data is, as two map-reduce steps:

1. the score histogram: every two-way finding is mapped to its factor code
   (severity*9 + irreversibility*3 + decision_matters) and the codes are counted; the
   driver turns codes into scores with the same 27-entry table the numpy fit uses and
   picks the threshold and how many tied findings must surface (k of m);
2. the tied-id hash selection: the tied findings are mapped to the sha1 hash of their id
   (the pacing rule's tie hash) and reduced to the k+1 smallest hashes, which fix the
   tie fraction.

Both steps feed ``analysis_fit.fit_from_histogram``, the numpy fit's own arithmetic, so the
threshold and tie fraction equal ``analysis_fit.fit_threshold`` on the same findings.
"""

from __future__ import annotations

import json
import os
import sys

from toolkit.analysis import export as exp
from toolkit.core.vocabulary import plural

ENGINES = ("duckdb", "spark")
DUCKDB_MEMORY = "2GB"
_DUCK_TYPES = {exp.S: "VARCHAR", exp.I: "BIGINT", exp.F: "DOUBLE"}
# The tie hash as a double in [0, 1): the first 32 bits of sha1(finding id), as
# scoring.tie_hash computes it.
_DUCK_TIE_HASH = "(('0x' || substr(sha1(finding_id), 1, 8))::UBIGINT / 4294967296.0)"


class TeamError(Exception):
    """A team command that cannot run, explained in one line."""


# ---------------------------------------------------------------- DuckDB


def duck_connect(directory):
    """An in-memory DuckDB with one view per dataset (project and month columns first)."""
    try:
        import duckdb
    except ImportError:
        raise TeamError(
            "DuckDB is not installed; reinstall plantune (it depends on duckdb)"
        ) from None
    try:
        manifest = exp.read_manifest(directory) if os.path.isdir(directory) else None
    except exp.ExportError as e:
        raise TeamError(str(e)) from None
    if manifest is None:
        raise TeamError(
            f"{directory} holds no plantune export (no {exp.MANIFEST});"
            " run `plantune export DIR` first"
        )
    con = duckdb.connect()
    # Reports aggregate; DuckDB spills what does not fit. The default (80% of the machine's
    # memory) is too greedy for a laptop or a shared box.
    con.execute(f"SET memory_limit = '{DUCKDB_MEMORY}'")
    con.execute("SET preserve_insertion_order = false")
    fmt = manifest["format"]
    for ds in exp.DATASETS:
        files = exp.manifest_files(directory, ds.name, manifest)
        cols = ", ".join(f'"{n}"' for n, _, _ in ds.columns)
        if not files:
            typed = ", ".join(f'CAST(NULL AS {_DUCK_TYPES[t]}) AS "{n}"' for n, t, _ in ds.columns)
            con.execute(
                f"CREATE VIEW {ds.name} AS SELECT CAST(NULL AS VARCHAR) AS project,"
                f" CAST(NULL AS VARCHAR) AS month, {typed} WHERE false"
            )
            continue
        names = [f for f, _, _ in files]
        # Project and month come from the folder names (hive partitioning), a constant per
        # file. A value the export had to percent-encode is read from the manifest instead,
        # joined on the file name, so it comes back exactly as stored.
        plain = all(exp.partition_dir(p, m) == f"project={p}/month={m}" for _, p, m in files)
        hive = (
            "hive_partitioning = true, hive_types = {'project': 'VARCHAR', 'month': 'VARCHAR'}"
            if plain
            else "filename = true"
        )
        if fmt == "parquet":
            source = f"read_parquet($files, {hive})"
        else:
            types = "{" + ", ".join(f"'{n}': '{_DUCK_TYPES[t]}'" for n, t, _ in ds.columns) + "}"
            if fmt == "csv":
                source = (
                    f"read_csv($files, header = true, columns = {types}, {hive},"
                    " auto_detect = false)"
                )
            else:
                source = (
                    f"read_json($files, format = 'newline_delimited', columns = {types}, {hive})"
                )
        # The file list is fixed when the view is made: a table function's arguments must be
        # constants, so the list is spelled into the view as a literal.
        literal = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in names) + "]"
        source = source.replace("$files", literal)
        if plain:
            con.execute(f"CREATE VIEW {ds.name} AS SELECT project, month, {cols} FROM {source}")
            continue
        con.execute(
            f"CREATE TABLE _parts_{ds.name} (filename VARCHAR, project VARCHAR, month VARCHAR)"
        )
        con.executemany(f"INSERT INTO _parts_{ds.name} VALUES (?, ?, ?)", files)
        con.execute(
            f"CREATE VIEW {ds.name} AS SELECT p.project, p.month, {cols}"
            f" FROM {source} AS d JOIN _parts_{ds.name} AS p ON p.filename = d.filename"
        )
    return con


def _synthetic_filter(include_synthetic, alias=""):
    return "true" if include_synthetic else f"{alias}synthetic = 0"


# Per project, session and phase: the phase_counts view's numbers.
PHASE_SQL = """
WITH q AS (
    SELECT project, coalesce(session_id, '') AS session_key, phase,
        count(*) AS questions,
        count(*) FILTER (WHERE source = 'auto-decided') AS auto_decided,
        count(*) FILTER (WHERE door_class IS NOT DISTINCT FROM 'one-way'
                            OR door_type IS NOT DISTINCT FROM 'one-way') AS one_way,
        count(*) FILTER (WHERE followed_recommendation = 1) AS followed,
        count(*) FILTER (WHERE followed_recommendation = 0) AS overridden
    FROM question_events WHERE {qfilter} GROUP BY ALL
), f AS (
    SELECT project, session_id AS session_key, phase,
        count(*) FILTER (WHERE disposition = 'surfaced') AS surfaced,
        count(*) FILTER (WHERE disposition = 'silent') AS silent,
        count(*) FILTER (WHERE disposition = 'surfaced'
                            AND surface_reason IS NOT DISTINCT FROM 'rank') AS ranked
    FROM findings WHERE {ffilter} GROUP BY ALL
)
SELECT project, nullif(session_key, '') AS session_id, phase,
    coalesce(questions, 0) AS questions,
    coalesce(questions, 0) - coalesce(auto_decided, 0) AS asked,
    coalesce(auto_decided, 0) AS auto_decided, coalesce(one_way, 0) AS one_way,
    coalesce(followed, 0) AS followed, coalesce(overridden, 0) AS overridden,
    coalesce(surfaced, 0) AS findings_surfaced, coalesce(silent, 0) AS findings_silent,
    coalesce(ranked, 0) AS budget_spent
FROM q FULL OUTER JOIN f USING (project, session_key, phase)
ORDER BY project, session_id NULLS FIRST, phase
"""

# Per phase over the whole team: sessions, questions put to people, interruptions per session.
PHASE_SUMMARY_SQL = """
SELECT phase,
    count(DISTINCT (project, coalesce(session_id, ''))) AS sessions,
    sum(questions)::BIGINT AS questions, sum(asked)::BIGINT AS asked,
    sum(auto_decided)::BIGINT AS auto_decided, sum(one_way)::BIGINT AS one_way,
    sum(findings_surfaced)::BIGINT AS findings_surfaced,
    sum(findings_silent)::BIGINT AS findings_silent, sum(budget_spent)::BIGINT AS budget_spent,
    round(sum(asked) / count(DISTINCT (project, coalesce(session_id, ''))), 2)
        AS asked_per_session
FROM phase_rows GROUP BY phase
ORDER BY list_position(['ceo', 'design', 'eng', 'dx', 'other', 'unknown'], phase)
"""

# Followed, overridden and the override rate among those, as question_review counts them.
_OVERRIDES = """
    count(*) FILTER (WHERE followed_recommendation = 1) AS followed,
    count(*) FILTER (WHERE followed_recommendation = 0) AS overridden,
    round(1.0 * count(*) FILTER (WHERE followed_recommendation = 0)
          / nullif(count(*) FILTER (WHERE followed_recommendation IS NOT NULL), 0), 3)
        AS override_rate"""

# Per project and question id: the question_review view's override numbers.
QUESTION_SQL = (
    """
SELECT project, question_id, count(*) AS events,
    count(*) FILTER (WHERE source = 'auto-decided') AS auto_decided,"""
    + _OVERRIDES
    + """
FROM question_events WHERE {qfilter} GROUP BY ALL
ORDER BY project, question_id
"""
)

# Per category (over the question_events view's `overridden`).
CATEGORY_SQL = (
    """
SELECT category, count(*) AS events,"""
    + _OVERRIDES
    + """
FROM question_events WHERE {qfilter} GROUP BY ALL
ORDER BY category NULLS LAST
"""
)

# Per {group}: the profile_diversity view's numbers and its display gate.
DIVERSITY_SQL = """
WITH arms AS (
    SELECT {group} AS "{group}",
        count(*) AS sample_size,
        count(DISTINCT skill) AS skills_covered,
        count(DISTINCT question_id) AS question_ids_covered,
        count(DISTINCT CASE WHEN ts != '' THEN substr(ts, 1, 10) END) AS distinct_days,
        min(CASE WHEN ts != '' THEN substr(ts, 1, 10) END) AS first_day,
        max(CASE WHEN ts != '' THEN substr(ts, 1, 10) END) AS last_day
    FROM question_events
    WHERE question_id != '' AND user_choice != '' AND {qfilter}
    GROUP BY ALL
)
SELECT *,
    date_diff('day', try_cast(first_day AS DATE), try_cast(last_day AS DATE)) + 1
        AS calendar_span_days,
    (sample_size >= 20 AND skills_covered >= 3 AND question_ids_covered >= 8
        AND distinct_days >= 7) AS enough_data
FROM arms ORDER BY 1
"""


def _rows(con, sql):
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def report(directory, include_synthetic=False, con=None, sessions=False):
    """The team report as a dict of tables (lists of row dicts). ``sessions`` adds the
    per-session rows behind the phase totals (phase_counts' rows: large on big data)."""
    con = con or duck_connect(directory)
    qfilter = _synthetic_filter(include_synthetic)
    phase_sql = PHASE_SQL.format(qfilter=qfilter, ffilter=qfilter)
    con.execute(f"CREATE OR REPLACE TEMP VIEW phase_rows AS {phase_sql}")
    result = {
        "include_synthetic": include_synthetic,
        "phases": _rows(con, PHASE_SUMMARY_SQL),
        "questions": _rows(con, QUESTION_SQL.format(qfilter=qfilter)),
        "categories": _rows(con, CATEGORY_SQL.format(qfilter=qfilter)),
        "diversity": _rows(con, DIVERSITY_SQL.format(group="developer", qfilter=qfilter)),
    }
    if sessions:
        result["phase_sessions"] = _rows(con, "SELECT * FROM phase_rows")
    return result


def diversity(con, group="developer", include_synthetic=False):
    """profile_diversity's numbers per ``group`` (developer or project)."""
    if group not in ("developer", "project"):
        raise TeamError("diversity is grouped by developer or project")
    return _rows(
        con, DIVERSITY_SQL.format(group=group, qfilter=_synthetic_filter(include_synthetic))
    )


# ---------------------------------------------------------------- calibration


def _two_way(include_synthetic, project):
    cond = ["door_type != 'one-way'", "kind NOT IN ('approval', 'migration')"]
    if not include_synthetic:
        cond.append("synthetic = 0")
    if project:
        cond.append("project = " + "'" + project.replace("'", "''") + "'")
    return " AND ".join(cond)


def _nothing_to_fit(simulated=0):
    """The error for an empty fit; ``simulated``: simulated two-way findings left out."""
    if simulated:
        return TeamError(
            f"no real two-way findings to calibrate on; the dataset holds "
            f"{plural(simulated, 'simulated one')} (simulated data is left out unless you "
            "pass --include-synthetic)"
        )
    return TeamError("no two-way findings to calibrate on")


def _fit(code_counts, target, score_function, weights, tie_stats, simulated=None):
    """Driver step: codes -> score histogram -> the numpy fit's arithmetic.

    ``simulated()`` counts the simulated two-way findings the filter left out (asked only
    when there is nothing to fit, so the error can say why)."""
    import numpy as np

    from toolkit.analysis import calibrate
    from toolkit.analysis import fit as analysis_fit
    from toolkit.core import scoring

    table = analysis_fit.score_table(score_function, weights or None)
    hist = {}
    for code, n in code_counts:
        value = round(float(table[int(code)]), scoring.SCORE_DECIMALS)
        hist[value] = hist.get(value, 0) + int(n)
    if not hist:
        raise _nothing_to_fit(simulated() if simulated else 0)
    values = np.array(sorted(hist), dtype=np.float64)
    counts = np.array([hist[v] for v in values], dtype=np.int64)
    codes_at = {}
    for code in range(27):
        codes_at.setdefault(round(float(table[code]), scoring.SCORE_DECIMALS), []).append(code)

    def stats(threshold, k):
        return tie_stats(codes_at[round(threshold, scoring.SCORE_DECIMALS)], k)

    fit = analysis_fit.fit_from_histogram(values, counts, target, stats)
    result = fit.as_dict()
    result["score_function"] = score_function
    result["weights"] = weights or {}
    result["score_counts"] = {calibrate.fmt_score(v): int(c) for v, c in zip(values, counts)}
    return result


_CODE = "severity * 9 + irreversibility * 3 + decision_matters"


def calibrate_duckdb(
    directory,
    target,
    include_synthetic=False,
    project=None,
    score_function="additive",
    weights=None,
):
    con = duck_connect(directory)
    where = _two_way(include_synthetic, project)
    codes = con.execute(
        f"SELECT {_CODE} AS code, count(*) FROM findings WHERE {where} GROUP BY code"
    ).fetchall()

    def tie_stats(tied_codes, k):
        tied = f"{where} AND {_CODE} IN ({', '.join(str(c) for c in tied_codes)})"
        smallest = [
            r[0]
            for r in con.execute(
                f"SELECT {_DUCK_TIE_HASH} AS h FROM findings WHERE {tied} ORDER BY h LIMIT {k + 1}"
            ).fetchall()
        ]
        lo, hi = smallest[k - 1], smallest[k]
        if lo < hi:
            return lo, hi, None, None
        below, upto = con.execute(
            f"SELECT count(*) FILTER (WHERE h < $hi), count(*) FILTER (WHERE h <= $hi)"
            f" FROM (SELECT {_DUCK_TIE_HASH} AS h FROM findings WHERE {tied})",
            {"hi": hi},
        ).fetchone()
        return lo, hi, int(below), int(upto)

    def simulated():
        if include_synthetic:
            return 0
        left_out = f"{_two_way(True, project)} AND synthetic = 1"
        return con.execute(f"SELECT count(*) FROM findings WHERE {left_out}").fetchone()[0]

    return _fit(codes, target, score_function, weights, tie_stats, simulated)


def _spark_manifest(spark, directory):
    """The manifest, read through Spark's own file systems (local, HDFS, S3, ...)."""
    if "://" not in directory:
        return exp.read_manifest(directory)
    text = spark.sparkContext.wholeTextFiles(directory.rstrip("/") + "/" + exp.MANIFEST).collect()
    if not text:
        return None
    return json.loads(text[0][1])


def spark_session(master=None):
    """The running SparkSession, or a new one on ``master`` (default local[*])."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        # plantune is installed from a clone, so an extra cannot be named; pyspark goes
        # into the environment plantune runs in.
        raise TeamError(
            f"pyspark is not installed; install it beside plantune with `{sys.executable} -m pip"
            " install pyspark` (it also needs a Java runtime, e.g. apt-get install"
            " default-jre-headless)"
        ) from None
    builder = SparkSession.builder.appName("plantune-calibrate")
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    # Under spark-submit (which starts the gateway) the master comes from its --master.
    if master or not os.environ.get("PYSPARK_GATEWAY_PORT"):
        builder = builder.master(master or "local[*]")
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    return builder.getOrCreate()


def calibrate_spark(
    directory,
    target,
    include_synthetic=False,
    project=None,
    score_function="additive",
    weights=None,
    master=None,
    spark=None,
):
    spark = spark or spark_session(master)
    from pyspark.sql import functions as F

    manifest = _spark_manifest(spark, directory)
    if manifest is None:
        raise TeamError(f"{directory} holds no plantune export (no {exp.MANIFEST})")
    if manifest["format"] != "parquet":
        raise TeamError("--engine spark reads Parquet exports; export with --format parquet")
    base = directory.rstrip("/") + "/findings"
    files = [
        base + "/" + key + "/" + name
        for key, p in sorted(manifest["datasets"].get("findings", {}).get("partitions", {}).items())
        for name in p["files"]
    ]
    if not files:
        raise _nothing_to_fit()
    # basePath makes Spark read project and month back from the folder names.
    every = spark.read.option("basePath", base).parquet(*files)
    df = every.where(F.expr(_two_way(include_synthetic, project)))
    code = F.expr(_CODE)
    # Map-reduce 1: the score histogram, counted per factor code.
    codes = [(r["code"], r["count"]) for r in df.groupBy(code.alias("code")).count().collect()]
    hashed = F.conv(F.substring(F.sha1(F.col("finding_id").cast("binary")), 1, 8), 16, 10).cast(
        "double"
    ) / F.lit(4294967296.0)

    def tie_stats(tied_codes, k):
        tied = df.where(code.isin(tied_codes)).select(hashed.alias("h"))
        # Map-reduce 2: the k+1 smallest tie hashes (a per-partition top-k, then a merge).
        smallest = [r["h"] for r in tied.orderBy("h").limit(k + 1).collect()]
        lo, hi = smallest[k - 1], smallest[k]
        if lo < hi:
            return lo, hi, None, None
        row = tied.agg(
            F.sum((F.col("h") < hi).cast("long")).alias("below"),
            F.sum((F.col("h") <= hi).cast("long")).alias("upto"),
        ).collect()[0]
        return lo, hi, int(row["below"]), int(row["upto"])

    def simulated():
        if include_synthetic:
            return 0
        return every.where(F.expr(f"{_two_way(True, project)} AND synthetic = 1")).count()

    return _fit(codes, target, score_function, weights, tie_stats, simulated)


def calibrate(
    directory,
    engine="duckdb",
    target=0.20,
    include_synthetic=False,
    project=None,
    master=None,
    score_function="additive",
    weights=None,
):
    if engine not in ENGINES:
        raise TeamError(f"unknown engine {engine!r}; use duckdb or spark")
    if engine == "spark":
        result = calibrate_spark(
            directory, target, include_synthetic, project, score_function, weights, master
        )
    else:
        if master:
            raise TeamError("--master is for --engine spark")
        result = calibrate_duckdb(
            directory, target, include_synthetic, project, score_function, weights
        )
    result["engine"] = engine
    result["include_synthetic"] = include_synthetic
    result["project"] = project
    return result


# The developer a team fit is stored under: it is every merged developer's, no one's own.
TEAM_DEVELOPER = "team"


def store(conn, result, directory):
    """Store a team fit as a calibrations row of its scope (``--project``, else global):
    developer 'team', fitted_on 'team', with the engine and dataset in its details. It is
    listed by ``calibrations list`` but ranks only once pinned (``calibrations use ID``):
    a team threshold never silently replaces anyone's own. A fit that may have used
    simulated findings is stored synthetic. Returns the calibration id."""
    from toolkit.analysis import calibrate
    from toolkit.store import db

    report = {
        "project": result["project"] or db.GLOBAL_SCOPE,
        "target": result["target"],
        "threshold": result["threshold"],
        "tie_fraction": result["tie_fraction"],
        "score_function": result["score_function"],
        "weights": result["weights"],
        "achieved_rate": result["achieved_rate"],
        "ci_low": None,
        "ci_high": None,
        "n_findings": result["n"],
        "n_sessions": None,
        "override_recall": None,
        "window_start": None,
        "window_end": None,
        "include_synthetic": result["include_synthetic"],
        "source": "findings",
        # How many simulated findings the dataset held is not counted: the safe side.
        "n_synthetic": int(bool(result["include_synthetic"])),
        "engine": result["engine"],
        "dataset": directory,
        "n_above": result["n_above"],
        "n_ties": result["n_ties"],
        "n_tie_surfaced": result["n_tie_surfaced"],
        "score_counts": result["score_counts"],
    }
    return calibrate.store(conn, report, fitted_on="team", developer=TEAM_DEVELOPER)
