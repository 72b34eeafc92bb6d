"""`plantune guidance ...` and `plantune hook session-end`: CLI behaviour and the safety boundary."""

import json
import os
import subprocess

import pytest
from click.testing import CliRunner

from tests.helpers import script
from tests.helpers.guidance import (
    ONE_WAY,
    counts,
    file_sha,
    log,
    repeated,
    slug_of,
    tree_hashes,
    write_local,
)
from toolkit.cli.app import cli
from toolkit.core import seeded_db
from toolkit.guidance import files as guidance_files
from toolkit.store import db

TABLES = ("preferences", "preference_events", "guidance_proposals", "trace_runs", "question_log")


def invoke(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input)


def hook_payload(project, session="sess-h", event="SessionEnd"):
    return json.dumps(
        {
            "session_id": session,
            "cwd": str(project),
            "hook_event_name": event,
            "transcript_path": str(project / "no-such-transcript.jsonl"),
        }
    )


def test_init_show_and_context(project, state_root):
    r = invoke("guidance", "init", "--project-dir", str(project))
    assert r.exit_code == 0 and r.stdout == "Created .plantune/local_guidance.md\n"
    r = invoke("guidance", "init", "--project-dir", str(project))
    assert "already exists; left unchanged" in r.stdout
    (state_root / "guidance-preferences.md").write_text("## Review Preferences\n- Be terse.\n")
    r = invoke("guidance", "show", "--project-dir", str(project))
    assert r.exit_code == 0 and "Be terse." in r.stdout and "Project: Scope" in r.stdout
    r = invoke("guidance", "show", "--context", "--project-dir", str(project))
    assert r.stdout.startswith("<plantune-guidance ") and "Summary" not in r.stdout
    data = json.loads(invoke("guidance", "show", "--json", "--project-dir", str(project)).stdout)
    assert data["files_read"] == [
        str(state_root / "guidance-preferences.md"),
        ".plantune/local_guidance.md",
    ]


def test_show_context_is_empty_without_guidance(project):
    r = invoke("guidance", "show", "--context", "--project-dir", str(project))
    assert r.exit_code == 0 and r.stdout == ""
    assert not (project / ".plantune").exists()


def test_show_warns_about_a_malformed_file(project):
    (project / ".plantune").mkdir()
    (project / ".plantune" / "local_guidance.md").write_text("# nothing here\n")
    r = invoke("guidance", "show", "--project-dir", str(project))
    assert r.exit_code == 0
    assert "warning: project guidance" in r.stderr and "is malformed" in r.stderr


def test_run_reports_validator_and_proposal(conn, project):
    repeated(conn, slug_of(project), n=5)
    r = invoke(
        "guidance",
        "run",
        "--session",
        "s7",
        "--cwd",
        str(project),
        "--required",
        "docs/plan.md",
        "--required",
        "missing.md",
    )
    assert r.exit_code == 0, r.stderr
    assert "Validator: 1 of 2 required outputs missing: missing.md" in r.stdout
    assert "Guidance: 1 changes proposed (gp-" in r.stdout
    r = invoke("guidance", "run", "--session", "s8", "--cwd", str(project), "--json")
    data = json.loads(r.stdout)
    assert data["record"]["session_id"] == "s8" and data["errors"] == []


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--mode", "loud"],
            "Error: invalid mode 'loud', must be one of: off, read, propose, apply",
        ),
        (
            ["--review", "/no/such/review.md"],
            "Error: review file /no/such/review.md does not exist",
        ),
        (["--cwd", "/no/such/folder"], "Error: folder /no/such/folder does not exist"),
    ],
)
def test_run_bad_input_exits_1_and_writes_nothing(conn, project, args, message):
    r = invoke("guidance", "run", "--session", "s", "--project-dir", str(project), *args)
    assert r.exit_code == 1 and r.stderr.strip() == message
    assert not (project / ".plantune").exists()
    assert counts(conn, "trace_runs")["trace_runs"] == 0


def test_run_mode_from_environment(conn, project, monkeypatch):
    monkeypatch.setenv("PLANTUNE_GUIDANCE_MODE", "off")
    r = invoke("guidance", "run", "--session", "s", "--project-dir", str(project))
    assert r.exit_code == 0 and "(mode off)" in r.stdout


def test_run_trace_failure_exits_1_but_keeps_the_record(conn, project):
    (project / ".plantune").write_text("a file in the way")
    r = invoke("guidance", "run", "--session", "s", "--project-dir", str(project))
    assert r.exit_code == 1
    assert "error: bundle: cannot create" in r.stderr
    assert "traced with errors (its record is in the database)" in r.stderr
    assert counts(conn, "trace_runs")["trace_runs"] == 1


def test_trace_lists_runs_and_ingest_is_idempotent(conn, project):
    for s in ("a", "b"):
        invoke(
            "guidance", "run", "--session", s, "--project-dir", str(project), "--required", "x.md"
        )
    with open(project / ".plantune" / "trace" / "index.jsonl", "a") as f:
        f.write("garbage\n")
    r = invoke("guidance", "trace", "--project-dir", str(project))
    assert r.exit_code == 0
    assert r.stdout.count("outputs 0/1 missing: x.md") == 2 and "2 runs" in r.stdout
    assert "line 3 skipped: not JSON" in r.stderr
    conn.execute("DELETE FROM trace_runs")
    r = invoke("guidance", "trace", "--ingest", "--project-dir", str(project))
    assert "Ingested 2 new runs (0 already in the database, 1 bad lines)." in r.stdout
    rows = [tuple(x) for x in conn.execute("SELECT * FROM trace_runs ORDER BY run_id")]
    r = invoke("guidance", "trace", "--ingest", "--project-dir", str(project))
    assert "Ingested 0 new runs (2 already in the database" in r.stdout
    assert [tuple(x) for x in conn.execute("SELECT * FROM trace_runs ORDER BY run_id")] == rows
    data = json.loads(invoke("guidance", "trace", "--json", "--project-dir", str(project)).stdout)
    assert len(data["runs"]) == 2 and data["bad_lines"] == [{"line": 3, "reason": "not JSON"}]


def test_propose_then_apply(conn, project):
    repeated(conn, slug_of(project), n=5)
    invoke("guidance", "init", "--project-dir", str(project))
    r = invoke("guidance", "propose", "--project-dir", str(project))
    assert r.exit_code == 0
    pid = r.stdout.split()[1].rstrip(":")
    assert pid.startswith("gp-")
    assert f"Apply with: plantune guidance apply {pid}" in r.stdout
    md = project / ".plantune" / "proposals" / f"{pid}.md"
    text = md.read_text()
    for needle in (
        "Evidence: question-log events",
        "Future behaviour:",
        "Rejected alternatives:",
        "Applied: no",
        "sessions s1, s2",
    ):
        assert needle in text
    r = invoke("guidance", "apply", str(md))
    assert r.exit_code == 0, r.stderr
    assert (
        f"Applied proposal {pid}: 1 changes to .plantune/local_guidance.md (1 project "
        "preferences set, source plan-tune)." in r.stdout
    )
    r = invoke("guidance", "apply", pid)
    assert r.exit_code == 1 and f"proposal {pid} is applied at" in r.stderr


def test_propose_with_nothing_to_propose_writes_nothing(conn, project):
    repeated(
        conn,
        slug_of(project),
        qid=ONE_WAY,
        n=6,
        summary="Fix the SQL?",
        choice="fix-now",
        recommended="fix-now",
    )
    r = invoke("guidance", "propose", "--project-dir", str(project))
    assert r.exit_code == 0
    assert "No guidance changes proposed" in r.stdout and "one-way door" in r.stdout
    assert not (project / ".plantune").exists()


def test_apply_fails_closed_via_cli(conn, project):
    """Acceptance 2 through the command line: exit 1, files and database unchanged."""
    lay = write_local(project)
    repeated(conn, slug_of(project), n=5)
    pid = json.loads(invoke("guidance", "propose", "--json", "--project-dir", str(project)).stdout)[
        "id"
    ]
    with open(lay.local_file, "a") as f:
        f.write("- edited by hand\n")
    files = tree_hashes(project, skip_dir="__none__")
    rows = {t: [tuple(r) for r in conn.execute(f"SELECT * FROM {t}")] for t in TABLES}
    r = invoke("guidance", "apply", pid)
    assert r.exit_code == 1
    assert r.stderr == (
        f"Error: .plantune/local_guidance.md changed after proposal {pid} was "
        "generated; nothing applied (run `plantune guidance propose` again)\n"
    )
    assert tree_hashes(project, skip_dir="__none__") == files
    assert {t: [tuple(r) for r in conn.execute(f"SELECT * FROM {t}")] for t in TABLES} == rows


def test_apply_unknown_proposal(conn):
    r = invoke("guidance", "apply", "gp-ffffffffffff")
    assert r.exit_code == 1
    assert r.stderr == "Error: no guidance proposal gp-ffffffffffff (or it proposed no changes)\n"


# ---------------------------------------------------------------------------
# hook session-end


def test_hook_session_end_traces_the_session(conn, project, state_root):
    log(conn, slug_of(project), session="sess-h")
    r = invoke("hook", "session-end", input=hook_payload(project))
    assert r.exit_code == 0 and r.stdout == "" and r.stderr == ""
    row = conn.execute("SELECT * FROM trace_runs").fetchone()
    assert row["session_id"] == "sess-h" and row["guidance_mode"] == "propose"
    packet = json.loads((project / row["run_dir"] / "task_packet.json").read_text())
    assert packet["hook_event"] == "SessionEnd"
    assert "1 asked" in (project / row["run_dir"] / "questions.md").read_text()
    assert not (state_root / "hook-errors.log").exists()


@pytest.mark.parametrize(
    "stdin, args, logged",
    [
        ("not json", [], "stdin is not JSON"),
        ("[1]", [], "stdin is not a JSON object"),
        ('{"cwd": "/"}', [], "session_id missing from the hook input"),
        ('{"session_id": "s", "cwd": "relative/dir"}', [], "is not an existing absolute folder"),
        (None, ["--mode", "loud"], "invalid mode 'loud'"),
    ],
)
def test_hook_errors_go_to_the_log_and_exit_0(conn, project, state_root, stdin, args, logged):
    r = invoke(
        "hook", "session-end", *args, input=stdin if stdin is not None else hook_payload(project)
    )
    assert r.exit_code == 0 and r.stdout == "" and r.stderr == ""
    log_text = (state_root / "hook-errors.log").read_text()
    assert "hook session-end: " in log_text and logged in log_text
    assert counts(conn, "trace_runs")["trace_runs"] == 0


def test_hook_logs_trace_write_failures_and_keeps_the_row(conn, project, state_root):
    (project / ".plantune").write_text("in the way")
    r = invoke("hook", "session-end", "--mode", "read", input=hook_payload(project))
    assert r.exit_code == 0 and r.stdout == ""
    assert "bundle: cannot create" in (state_root / "hook-errors.log").read_text()
    assert counts(conn, "trace_runs")["trace_runs"] == 1


def test_hook_as_a_real_process(project, state_root, db_file):
    proc = subprocess.run(
        [script("plantune"), "hook", "session-end", "--mode", "read"],
        input=hook_payload(project, event="Stop"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    conn = seeded_db.connect(db_file)
    assert conn.execute("SELECT guidance_mode FROM trace_runs").fetchone()[0] == "read"
    proc = subprocess.run(
        [script("plantune"), "hook", "session-end"],
        input="{",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == ""
    assert "stdin is not JSON" in (state_root / "hook-errors.log").read_text()


# ---------------------------------------------------------------------------
# safety boundary


def test_nothing_outside_dot_plantune_changes_across_modes_and_commands(conn, project, state_root):
    slug = slug_of(project)
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "CLAUDE.md").write_text("# canonical instructions\n")
    glob = state_root / "guidance-preferences.md"
    glob.write_text("## Communication Preferences\n- Short answers.\n")
    repeated(conn, slug, n=6)
    repeated(
        conn,
        slug,
        qid=ONE_WAY,
        n=6,
        summary="Fix the SQL?",
        choice="fix-now",
        recommended="fix-now",
    )
    for i, s in enumerate(("x", "y", "z")):
        log(
            conn,
            slug,
            qid="ship-pre-landing-review-fix",
            choice="skip",
            recommended="fix-now",
            session=s,
        )
    before_files = tree_hashes(project)
    before_global = file_sha(glob)
    p = str(project)
    steps = [
        ("guidance", "init", "--project-dir", p),
        ("guidance", "show", "--project-dir", p),
        ("guidance", "show", "--context", "--project-dir", p),
    ]
    for mode in guidance_files.MODES:
        steps.append(
            (
                "guidance",
                "run",
                "--session",
                f"run-{mode}",
                "--mode",
                mode,
                "--cwd",
                p,
                "--required",
                "docs/plan.md",
                "--required",
                "out/report.md",
            )
        )
    for step in steps:
        r = invoke(*step)
        assert r.exit_code == 0, (step, r.stderr)
    for mode in guidance_files.MODES:
        r = invoke(
            "hook",
            "session-end",
            "--mode",
            mode,
            input=hook_payload(project, session=f"hook-{mode}"),
        )
        assert r.exit_code == 0
    r = invoke("guidance", "trace", "--ingest", "--project-dir", p)
    assert r.exit_code == 0
    r = invoke("guidance", "propose", "--json", "--project-dir", p)
    proposal = json.loads(r.stdout)
    if proposal["items"]:
        assert invoke("guidance", "apply", proposal["id"]).exit_code == 0
    assert not (state_root / "hook-errors.log").exists()
    # Things did happen inside .plantune and the database...
    assert len(os.listdir(project / ".plantune" / "trace" / "runs")) == 8
    assert (
        conn.execute("SELECT count(*) FROM preferences WHERE source = 'plan-tune'").fetchone()[0]
        >= 1
    )
    # ...and nothing else moved.
    assert tree_hashes(project) == before_files
    assert file_sha(glob) == before_global
    assert (
        conn.execute(
            "SELECT count(*) FROM preferences WHERE scope = ?", (db.GLOBAL_SCOPE,)
        ).fetchone()[0]
        == 0
    )
    assert (
        conn.execute(
            "SELECT count(*) FROM preferences WHERE question_id = ?", (ONE_WAY,)
        ).fetchone()[0]
        == 0
    )
