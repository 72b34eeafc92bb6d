"""``plantune guidance`` and ``plantune hook session-end``: project-local guidance and run traces."""

import json
import os
import sys

import click

from toolkit.cli.app import db_option, fail, json_option, open_db, print_json

MODE_ENV = "PLANTUNE_GUIDANCE_MODE"


def project_dir_option(f):
    return click.option(
        "--project-dir",
        type=click.Path(file_okay=False),
        help="Project folder holding .plantune/ (default: the project root of the current "
        "directory: outermost git repo or marker folder, else the directory itself).",
    )(f)


def _layout(project_dir):
    from toolkit.guidance import files

    if project_dir and not os.path.isdir(project_dir):
        fail(f"project folder {project_dir} does not exist")
    return files.layout_for(project_dir=project_dir)


def _warn(messages):
    for m in messages:
        click.echo(f"warning: {m}", err=True)


@click.group()
def guidance():
    """Project-local guidance: run traces, evidence-backed proposals, fail-closed apply.

    Guidance lives in <project>/.plantune/local_guidance.md (optional global defaults in
    <state root>/guidance-preferences.md, never written). Modes: off, read, propose
    (default), apply.

    \b
    Example:
        plantune guidance init
        plantune guidance propose
        plantune guidance apply gp-1a2b3c4d5e6f
    """


@guidance.command()
@project_dir_option
@json_option
def init(project_dir, as_json):
    """Create .plantune/local_guidance.md (with its six sections) and the trace folder.

    An existing guidance file is left untouched.

    \b
    Example:
        plantune guidance init --project-dir .
    """
    from toolkit.guidance import files

    layout = _layout(project_dir)
    try:
        created = files.init_guidance(layout)
    except OSError as e:
        fail(f"cannot write {layout.base}: {e.strerror or e}")
    if as_json:
        print_json(
            {
                "project_dir": layout.project_dir,
                "guidance_file": layout.local_file,
                "created": created,
            }
        )
        return
    rel = layout.rel(layout.local_file)
    click.echo(f"Created {rel}" if created else f"{rel} already exists; left unchanged")


@guidance.command()
@project_dir_option
@click.option(
    "--context",
    is_flag=True,
    help="Print only the merged guidance block an agent can inject (empty when none).",
)
@click.option(
    "--mode", default="read", show_default=True, help="Mode to read under (off reads nothing)."
)
@json_option
def show(project_dir, context, mode, as_json):
    """Show the effective guidance: files read, warnings and the merged block.

    Project guidance overrides global defaults section by section. Use --context in a
    SessionStart hook to inject the block.

    \b
    Example:
        plantune guidance show --context
    """
    from toolkit.guidance import files

    if mode not in files.MODE_TABLE:
        fail(f"invalid mode '{mode}', must be one of: " + ", ".join(files.MODES))
    layout = _layout(project_dir)
    result = files.load_guidance(layout, mode)
    _warn(result.warnings)
    if context:
        if result.context:
            click.echo(result.context, nl=False)
        return
    if as_json:
        print_json(
            {
                "project_dir": layout.project_dir,
                "project_guidance_file": layout.local_file,
                "global_guidance_file": files.global_guidance_file(),
                "files_read": result.files_read,
                "warnings": result.warnings,
                "summary": result.summary,
                "context": result.context,
            }
        )
        return
    click.echo(f"Project guidance: {layout.rel(layout.local_file)}")
    click.echo(f"Global defaults:  {files.global_guidance_file()}")
    click.echo(f"Summary:          {result.summary}")
    click.echo("")
    click.echo(
        result.context or "No guidance in effect (run `plantune guidance init`).",
        nl=not result.context,
    )


@guidance.command()
@project_dir_option
@click.option("--ingest", is_flag=True, help="Also load the index into the database (idempotent).")
@click.option(
    "--limit",
    type=int,
    default=20,
    show_default=True,
    help="Most recent runs to list (text output; 0 for all).",
)
@db_option
@json_option
def trace(project_dir, ingest, limit, db_path, as_json):
    """Summarise the runs in .plantune/trace/index.jsonl; --ingest loads them into trace_runs.

    Corrupt index lines are skipped and reported with their line number.

    \b
    Example:
        plantune guidance trace --ingest
        plantune guidance trace --json
    """
    from toolkit.guidance import traces

    layout = _layout(project_dir)
    records, bad = traces.read_index(layout.index_file)
    for n, reason in bad:
        click.echo(f"warning: {layout.rel(layout.index_file)} line {n} skipped: {reason}", err=True)
    ingested = None
    if ingest:
        conn = open_db(db_path)
        ingested = traces.ingest_index(conn, layout)
    if as_json:
        print_json(
            {
                "index": layout.index_file,
                "runs": records,
                "bad_lines": [{"line": n, "reason": r} for n, r in bad],
                "ingest": ingested,
            }
        )
        return
    if not records:
        click.echo(f"No runs in {layout.rel(layout.index_file)} yet.")
    shown = records[-limit:] if limit and limit > 0 else records
    for r in shown:
        req = r.get("required_outputs") or []
        miss = r.get("missing_outputs") or []
        outputs = f"outputs {len(req) - len(miss)}/{len(req)}"
        if miss:
            outputs += " missing: " + ", ".join(str(m) for m in miss)
        proposal = "proposal" if r.get("guidance_proposal") else "no proposal"
        applied = ", applied" if r.get("applied_guidance_update") is True else ""
        click.echo(
            f"{r['run_id']}  {r['created_at']}  {r['guidance_mode']:<7}  "
            f"{outputs}  {proposal}{applied}"
        )
    if records:
        noun = "run" if len(records) == 1 else "runs"
        click.echo(
            f"\n{len(records)} {noun}"
            + (f" (showing the last {len(shown)})" if len(shown) < len(records) else "")
        )
    if ingested is not None:
        click.echo(
            f"Ingested {ingested['inserted']} new runs "
            f"({ingested['already_present']} already in the database, "
            f"{len(bad)} bad lines)."
        )


def _print_proposal_summary(p):
    for n, item in enumerate(p["items"], 1):
        click.echo(f"  {n}. {item['action']} {item['section']}: {item['id']}")
    if p["rejected"]:
        click.echo(f"Considered and rejected: {len(p['rejected'])}")
        for r in p["rejected"]:
            click.echo(f"  - {r['subject']} ({r['rule']}): {r['reason']}")


@guidance.command()
@project_dir_option
@db_option
@json_option
def propose(project_dir, db_path, as_json):
    """Propose evidence-backed guidance changes from this project's history.

    Writes .plantune/proposals/<id>.md and a database row when there is something to
    propose; nothing is applied.

    \b
    Example:
        plantune guidance propose
    """
    from toolkit.guidance import apply as guidance_apply
    from toolkit.guidance import proposals as g

    layout = _layout(project_dir)
    conn = open_db(db_path)
    p = g.build_proposal(conn, layout)
    if p["guidance_malformed"]:
        _warn([p["guidance_malformed"]])
    if p["items"]:
        md = os.path.join(layout.proposals_dir, f"{p['id']}.md")
        try:
            guidance_apply.save_proposal(conn, p, md, layout)
        except OSError as e:
            fail(f"proposal {p['id']} stored, but {layout.rel(md)} not written: {e.strerror or e}")
    if as_json:
        print_json(p)
        return
    if not p["items"]:
        click.echo("No guidance changes proposed: no evidence reached the thresholds.")
        _print_proposal_summary(p)
        return
    click.echo(f"Proposal {p['id']}: {len(p['items'])} changes ({p['path']})")
    _print_proposal_summary(p)
    click.echo(f"Apply with: plantune guidance apply {p['id']}")


@guidance.command()
@db_option
@json_option
def promote(db_path, as_json):
    """Propose promoting what holds across projects or developers: a preference held the same
    way in at least 3 projects or by 3 developers becomes a global preference, an ad-hoc
    question asked in at least 3 becomes a registry entry.

    Each item lists its evidence (who holds it, where, since when). Nothing changes until
    `plantune guidance apply ID`. A one-way question is never proposed as never-ask.
    Run it on a team database (see `plantune merge`) to count every developer.

    \b
    Example:
        plantune guidance promote --db team.db
        plantune guidance apply gp-1a2b3c4d5e6f --db team.db
    """
    from toolkit.guidance import promote as promoting

    conn = open_db(db_path)
    p = promoting.build(conn)
    promoting.save(conn, p)
    if as_json:
        print_json(p)
        return
    if not p["items"]:
        click.echo(
            "Nothing to promote: no preference or question holds in"
            f" {promoting.MIN_HOLDERS} projects or developers."
        )
    else:
        click.echo(f"Promotion {p['id']}: {len(p['items'])} proposed")
    for n, item in enumerate(p["items"], 1):
        ev = item["evidence"]
        where = f"{ev['projects']} projects, {ev['developers']} developers"
        if item["kind"] == "global-preference":
            prev = item["previous_preference"] or "none"
            click.echo(
                f"  {n}. global preference {item['question_id']}: {prev} ->"
                f" {item['preference']} ({where})"
            )
            for h in ev["holders"]:
                click.echo(
                    f"       {h['project']} / {h['developer']}: {h['preference']}"
                    f" (source {h['source']}, {h['updated_at']})"
                )
        else:
            click.echo(f"  {n}. registry addition {item['line']} ({where})")
            for h in ev["events"]:
                click.echo(
                    f"       {h['project']} / {h['developer']}: {h['events']} events,"
                    f" {h['first_ts']} to {h['last_ts']}"
                )
    if p["rejected"]:
        click.echo(f"Considered and rejected: {len(p['rejected'])}")
        for r in p["rejected"]:
            click.echo(f"  - {r['subject']}: {r['reason']}")
    if p["items"]:
        click.echo(f"Apply with: plantune guidance apply {p['id']}")


@guidance.command()
@click.argument("proposal")
@db_option
@json_option
def apply(proposal, db_path, as_json):
    """Apply PROPOSAL (an id, id prefix or .md file) to the project guidance and preferences.

    Fails closed: if the guidance file or an affected preference changed after the
    proposal was made, nothing is changed and the exit code is 1.

    \b
    Example:
        plantune guidance apply gp-1a2b3c4d5e6f
    """
    from toolkit.guidance import apply as guidance_apply
    from toolkit.guidance import files

    conn = open_db(db_path)
    try:
        p = guidance_apply.apply_proposal(conn, proposal)
    except files.GuidanceError as e:
        fail(str(e))
    except OSError as e:
        fail(f"guidance file not written: {e.strerror or e}; nothing applied")
    if p.get("warning"):
        click.echo(f"plantune: {p['warning']}", err=True)
    if as_json:
        print_json(p)
        return
    if p["kind"] == "promotion":
        n_pref = sum(1 for i in p["items"] if i["kind"] == "global-preference")
        click.echo(
            f"Applied promotion {p['id']}: {n_pref} global preferences set (source"
            f" plan-tune), {len(p['items']) - n_pref} questions added to the registry."
        )
        return
    n_pref = sum(1 for i in p["items"] if i["kind"] == "preference")
    click.echo(
        f"Applied proposal {p['id']}: {len(p['items'])} changes to "
        f"{p['guidance_file']} ({n_pref} project preferences set, source plan-tune)."
    )


@guidance.command()
@click.option("--session", "session_id", required=True, help="Agent session id.")
@click.option(
    "--mode",
    default=None,
    help="off | read | propose | apply (default: $PLANTUNE_GUIDANCE_MODE, else propose).",
)
@click.option(
    "--required",
    "required",
    multiple=True,
    help="An output the run must leave on disk (repeatable; relative to the project).",
)
@click.option("--cwd", type=click.Path(file_okay=False), help="Working directory of the run.")
@project_dir_option
@click.option(
    "--review", type=click.Path(dir_okay=False), help="Review text to keep in the bundle."
)
@click.option("--draft", type=click.Path(dir_okay=False), help="Draft text to keep in the bundle.")
@click.option(
    "--merged-analysis",
    type=click.Path(dir_okay=False),
    help="Merged analysis to keep in the bundle.",
)
@click.option("--topic", help="Short topic recorded in the trace index.")
@click.option("--task-id", help="Task id recorded in the trace index (default: the session id).")
@db_option
@json_option
def run(
    session_id,
    mode,
    required,
    cwd,
    project_dir,
    review,
    draft,
    merged_analysis,
    topic,
    task_id,
    db_path,
    as_json,
):
    """Trace a finished session: bundle, index line, database row, and guidance per mode.

    The bundle and index line are written even when required outputs are missing.

    \b
    Example:
        plantune guidance run --session 4f1c --required docs/plan.md --mode propose
    """
    from toolkit.guidance import files, runs

    mode = mode or os.environ.get(MODE_ENV) or files.DEFAULT_MODE
    if mode not in files.MODE_TABLE:
        fail(f"invalid mode '{mode}', must be one of: " + ", ".join(files.MODES))
    if cwd and not os.path.isdir(cwd):
        fail(f"folder {cwd} does not exist")
    if project_dir and not os.path.isdir(project_dir):
        fail(f"project folder {project_dir} does not exist")
    provided = {}
    for name, path in (
        ("review.md", review),
        ("draft.md", draft),
        ("merged_analysis.md", merged_analysis),
    ):
        if path is not None:
            if not os.path.isfile(path):
                fail(f"{name[:-3].replace('_', '-')} file {path} does not exist")
            provided[name] = path
    conn = open_db(db_path)
    try:
        result = runs.run_session(
            conn,
            session_id=session_id,
            cwd=cwd,
            project_dir=project_dir,
            mode=mode,
            required=list(required),
            provided=provided,
            topic=topic,
            task_id=task_id,
        )
    except files.GuidanceError as e:
        fail(str(e))
    _warn(result.warnings)
    rec = result.record
    if as_json:
        print_json(
            {
                "record": dict(rec),
                "warnings": result.warnings,
                "errors": result.errors,
                "proposal_id": result.proposal["id"]
                if result.proposal and result.proposal["items"]
                else None,
            }
        )
    else:
        gate = result.gate
        click.echo(f"Run {rec['run_id']} (mode {mode}): bundle {rec['run_dir']}")
        if gate["required_outputs"]:
            state = (
                "passed"
                if gate["passed"]
                else (
                    f"{len(gate['missing_outputs'])} of {len(gate['required_outputs'])} required "
                    "outputs missing: " + ", ".join(gate["missing_outputs"])
                )
            )
            click.echo(f"Validator: {state}")
        p = result.proposal
        if p is not None:
            if p["items"]:
                verb = "applied" if rec["applied_guidance_update"] else "proposed"
                click.echo(f"Guidance: {len(p['items'])} changes {verb} ({p['id']})")
            else:
                click.echo("Guidance: no changes proposed")
    for e in result.errors:
        click.echo(f"error: {e}", err=True)
    if result.errors:
        fail(f"run {rec['run_id']} traced with errors (its record is in the database)")


# ---------------------------------------------------------------------------
# Hook


def _hook_error_log(message):
    """Append one line to <state root>/hook-errors.log; never raises."""
    from toolkit.claude.hook_entries import log_error

    log_error("hook session-end", message)


@click.command("session-end")
@click.option(
    "--mode",
    default=None,
    help="off | read | propose | apply (default: $PLANTUNE_GUIDANCE_MODE, else propose).",
)
@db_option
def session_end(mode, db_path):
    """Claude Code SessionEnd/Stop hook: trace the session, then guidance per mode.

    Reads the hook JSON (session_id, cwd, transcript_path, hook_event_name) on stdin,
    prints nothing and always exits 0; problems go to <state root>/hook-errors.log.

    \b
    Example:
        echo '{"session_id":"4f1c","cwd":"/src/app","hook_event_name":"SessionEnd"}' \\
            | plantune hook session-end --mode propose
    """
    from toolkit.core.errors import run_script

    def report(_prog, error):  # hooks never break the agent
        _hook_error_log(f"internal error: {type(error).__name__}: {error}")
        return 0

    run_script("hook session-end", lambda _args: _session_end(mode, db_path), [], crash=report)
    sys.exit(0)


def _session_end(mode, db_path):
    from toolkit.core import seeded_db
    from toolkit.guidance import files, runs
    from toolkit.store import paths
    from toolkit.store.safe_io import stdin_text

    mode = mode or os.environ.get(MODE_ENV) or files.DEFAULT_MODE
    if mode not in files.MODE_TABLE:
        _hook_error_log(f"invalid mode '{mode}', must be one of: " + ", ".join(files.MODES))
        return
    raw = stdin_text()
    try:
        payload = json.loads(raw)
    except ValueError:
        _hook_error_log("stdin is not JSON")
        return
    if not isinstance(payload, dict):
        _hook_error_log("stdin is not a JSON object")
        return
    session_id = payload.get("session_id")
    if not isinstance(session_id, str) or not session_id.strip():
        _hook_error_log("session_id missing from the hook input")
        return
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd) or not os.path.isdir(cwd):
        _hook_error_log(f"cwd {cwd!r} is not an existing absolute folder")
        return
    transcript = payload.get("transcript_path")
    event = payload.get("hook_event_name")
    conn = seeded_db.connect(paths.db_path(db_path))
    result = runs.run_session(
        conn,
        session_id=session_id,
        cwd=cwd,
        mode=mode,
        hook_event=event if isinstance(event, str) else None,
        transcript_path=transcript if isinstance(transcript, str) else None,
    )
    for w in result.warnings:
        _hook_error_log(f"warning: run {result.record['run_id']}: {w}")
    for e in result.errors:
        _hook_error_log(f"run {result.record['run_id']}: {e}")
