"""``plantune calibrations``: list, show, compare and pin the stored calibrations."""

import click

from toolkit.cli.app import db_option, fail, json_option, open_db, print_json
from toolkit.core.vocabulary import plural


def _whole_id(value, name="ID"):
    try:
        n = int(str(value).strip())
    except ValueError:
        fail(f"{name} must be a calibration id (a whole number), got {value!r}")
    if n < 1:
        fail(f"{name} must be a calibration id (a whole number), got {value!r}")
    return n


def _pct(x):
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _interval(r):
    if r["ci_low"] is None or r["ci_high"] is None:
        return "n/a"
    return f"{_pct(r['ci_low'])}-{_pct(r['ci_high'])}"


def _flags(r):
    flags = []
    if r.get("active"):
        flags.append("active")
    if r.get("pinned"):
        flags.append("pinned")
    if r["synthetic"]:
        flags.append("synthetic")
    if r["low_confidence"]:
        flags.append("low_confidence")
    if r.get("max_miss") is not None:
        flags.append(f"guarantee:{r['max_miss']:g}@{r['miss_confidence']:g}")
    if r.get("fitted_on") == "team":
        flags.append("team")
    elif r.get("merged_from") is not None:
        flags.append("merged")
    return ",".join(flags) or "-"


@click.group()
def calibrations():
    """List, show, compare and pin the stored pacing calibrations.

    `pacing rank` uses a project's pinned calibration, else its newest one, else the
    global one the same way. Calibrations fitted on simulated findings (synthetic) never
    rank real findings. Every pin and unpin is recorded (the calibration_history view).

    \b
    Example:
        plantune calibrations list
        plantune calibrations diff 3 5
        plantune calibrations use 3
    """


@calibrations.command(name="list")
@click.option(
    "--project", default=None, help="Only the calibrations of this scope (a project or __global__)."
)
@db_option
@json_option
def list_(project, db_path, as_json):
    """List every calibration, newest first, and which one is in force for each scope.

    Columns: id, scope, source, created, findings and sessions used, threshold, tie
    fraction, achieved rate with its 95% interval, override recall, and the flags active
    (in force), pinned, synthetic, low_confidence, team (a `team calibrate` fit) and merged
    (another developer's, from `plantune merge`); a team or merged calibration is in force
    only while pinned. A fit with `calibrate --max-miss E --confidence C` is flagged
    guarantee:E@C.

    \b
    Example:
        plantune calibrations list --json
    """
    from toolkit.analysis import calibrations as analysis_calibrations

    conn = open_db(db_path)
    rows = analysis_calibrations.listing(conn, project)
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo("(no calibrations yet: run `plantune calibrate`)")
        return
    head = (
        "id",
        "scope",
        "source",
        "created",
        "findings",
        "sessions",
        "threshold",
        "ties",
        "rate",
        "95% interval",
        "recall",
        "flags",
    )
    table = [head] + [
        (
            str(r["id"]),
            r["scope"],
            r["source"],
            (r["created_at"] or "")[:16].replace("T", " "),
            f"{r['n_findings']:,}",
            "" if r["n_sessions"] is None else f"{r['n_sessions']:,}",
            f"{r['threshold']:g}",
            f"{r['tie_fraction']:.3f}",
            _pct(r["achieved_rate"]),
            _interval(r),
            _pct(r["override_recall"]),
            _flags(r),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())


@calibrations.command()
@click.argument("calibration_id", metavar="ID")
@db_option
@json_option
def show(calibration_id, db_path, as_json):
    """Show one calibration: how it was fitted, how well it did, and whether it is in force.

    \b
    Example:
        plantune calibrations show 3
    """
    from toolkit.analysis import calibrate as cal
    from toolkit.analysis import calibrations as analysis_calibrations
    from toolkit.analysis import fit

    cid = _whole_id(calibration_id)
    conn = open_db(db_path)
    try:
        c = analysis_calibrations.get(conn, cid)
    except fit.CalibrationError as e:
        fail(str(e))
    listed = {r["id"]: r for r in analysis_calibrations.listing(conn, c["project"])}[cid]
    c["active"], c["pinned"] = listed["active"], listed["pinned"]
    if as_json:
        print_json(c)
        return
    report = dict(c, **{k: v for k, v in c["details"].items() if k not in c})
    click.echo(f"Calibration {cid} for {c['project']}, stored {c['created_at']} ({_flags(c)}).")
    for line in cal.summary_lines(report):
        click.echo(line)
    if c["synthetic"]:
        click.echo(
            "Fitted on simulated findings: never ranks real findings (only a demo database uses it)."
        )
    if c["low_confidence"]:
        click.echo(
            "Stored with --force below the confidence guard (too little data, or too wide an interval)."
        )


def _line(label, a, b):
    return f"{label:<28} {a:<22} {b}"


@calibrations.command()
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option(
    "--days", default="30", show_default=True, help="Days of recent history to apply both to."
)
@click.option(
    "--project", default=None, help="Apply both to this project's history (default: their scope)."
)
@db_option
@json_option
def diff(a, b, days, project, db_path, as_json):
    """Compare calibrations A and B side by side, and on the same recent history.

    Both rules are applied to the last --days days of findings: the share of two-way
    findings each would ask about and the questions per session and per phase each
    would give (one-way doors and gates always asked, at most 3 ranked per phase).

    \b
    Example:
        plantune calibrations diff 3 5 --days 60
    """
    from toolkit.analysis import calibrations as analysis_calibrations
    from toolkit.analysis import fit

    a_id, b_id = _whole_id(a, "A"), _whole_id(b, "B")
    try:
        n_days = int(str(days).strip())
    except ValueError:
        n_days = 0
    if not 1 <= n_days <= 3650:
        fail(f"--days must be a whole number between 1 and 3650, got {days!r}")
    conn = open_db(db_path)
    try:
        out = analysis_calibrations.compare(conn, a_id, b_id, n_days, project)
    except fit.CalibrationError as e:
        fail(str(e))
    if as_json:
        print_json(out)
        return
    ca, cb = out["a"], out["b"]
    click.echo(_line("", f"calibration {a_id}", f"calibration {b_id}"))
    for label, key, fmt in (
        ("scope", "project", str),
        ("created", "created_at", lambda v: (v or "")[:16].replace("T", " ")),
        ("score function", "score_function", str),
        ("threshold", "threshold", lambda v: f"{v:g}"),
        ("tie fraction", "tie_fraction", lambda v: f"{v:.3f}"),
        ("findings used", "n_findings", lambda v: f"{v:,}"),
        ("sessions used", "n_sessions", lambda v: "n/a" if v is None else f"{v:,}"),
        ("achieved rate", "achieved_rate", _pct),
        ("override recall", "override_recall", _pct),
    ):
        click.echo(_line(label, fmt(ca[key]), fmt(cb[key])))
    click.echo(_line("95% interval", _interval(ca), _interval(cb)))
    click.echo(_line("flags", _flags(ca), _flags(cb)))
    h = out["history"]
    if not out["applied"]:
        click.echo(f"No findings in the last {n_days} days to apply them to.")
        return
    click.echo("")
    what = "all projects" if h["project"] == "__global__" else f"project {h['project']}"
    sim = ", simulated findings included" if h["synthetic_included"] else ""
    click.echo(
        f"On the same history ({what}, {h['since'][:10]} to {h['until'][:10]}: "
        f"{plural(h['findings'], 'finding')} in {plural(h['sessions'], 'session')}{sim}):"
    )
    ra, rb = out["applied"]["a"], out["applied"]["b"]
    click.echo(_line("share of two-way asked", _pct(ra["share_asked"]), _pct(rb["share_asked"])))
    ia, ib = ra["interruptions"], rb["interruptions"]
    click.echo(
        _line(
            "questions per session",
            f"{ia['per_session']['after']:.2f}",
            f"{ib['per_session']['after']:.2f}",
        )
    )
    for phase, va in ia["per_phase"].items():
        vb = ib["per_phase"].get(phase, {"after": 0.0})
        click.echo(_line(f"  per {phase} phase", f"{va['after']:.2f}", f"{vb['after']:.2f}"))


@calibrations.command()
@click.argument("calibration_id", metavar="ID", required=False)
@click.option("--latest", is_flag=True, help="Unpin: the newest calibration is in force again.")
@click.option(
    "--project",
    default=None,
    help="With --latest: the scope to unpin (a project; default: the global scope).",
)
@db_option
@json_option
def use(calibration_id, latest, project, db_path, as_json):
    """Pin calibration ID for its scope, or with --latest go back to the newest one.

    A pinned calibration ranks its scope's findings (a project, or every project without
    its own calibration when it is global) until `use --latest` unpins it. A calibration
    fitted on simulated findings cannot be pinned outside a demo database.

    \b
    Example:
        plantune calibrations use 3
        plantune calibrations use --latest --project acme-web
    """
    from toolkit.analysis import calibrations as analysis_calibrations
    from toolkit.analysis import fit
    from toolkit.store import db, paths

    if latest == (calibration_id is not None):
        fail("give a calibration ID to pin, or --latest to unpin (not both)")
    if project is not None and not latest:
        fail("--project goes with --latest (a calibration ID already names its scope)")
    if project is not None and project != db.GLOBAL_SCOPE and not paths.is_valid_slug(project):
        fail(f"--project must be a project slug, got {project!r}")
    conn = open_db(db_path)
    try:
        if latest:
            out = analysis_calibrations.unpin(conn, project or db.GLOBAL_SCOPE)
        else:
            out = analysis_calibrations.pin(conn, _whole_id(calibration_id))
    except fit.CalibrationError as e:
        fail(str(e))
    if as_json:
        print_json(out)
        return
    if latest:
        if out["unpinned"] is None:
            click.echo(f"Nothing was pinned for {out['scope']}.")
        else:
            click.echo(f"Unpinned calibration {out['unpinned']} for {out['scope']}.")
        now = out["calibration_id"]
        click.echo(
            f"In force for {out['scope']}: "
            + (f"calibration {now}." if now is not None else "the default rule (no calibration).")
        )
        return
    note = " (low_confidence: stored below the confidence guard)" if out["low_confidence"] else ""
    click.echo(
        f"Pinned calibration {out['calibration_id']} for {out['scope']}{note}; "
        "`pacing rank` uses it until `plantune calibrations use --latest`."
    )
