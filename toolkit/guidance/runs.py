"""Runs: what one agent session leaves behind, and the guidance step after it.

A *run* is one agent session end. Each run leaves a bundle under
``<project>/.plantune/trace/runs/<run_id>/``, one line in ``.plantune/trace/index.jsonl`` and
the same record in ``trace_runs``; then, per mode (off, read, propose, apply), the merged
guidance is read and a proposal made or applied. The validator gate checks the run's
required outputs.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import OrderedDict, namedtuple

from toolkit.guidance.apply import apply_proposal, render_proposal, save_proposal
from toolkit.guidance.files import (
    DEFAULT_MODE,
    MODE_TABLE,
    MODES,
    OPTIONAL_OUTPUTS,
    GuidanceError,
    Layout,
    global_guidance_file,
    load_guidance,
    project_root,
)
from toolkit.guidance.proposals import build_proposal
from toolkit.store import db, safe_io
from toolkit.store.safe_io import append_line, write_atomic

# ---------------------------------------------------------------------------
# What happened in a session (from the database)


def session_questions(conn, session_id):
    """Questions asked, auto-decided and flipped in ``session_id``, and its pacing findings."""
    events = [
        dict(r)
        for r in conn.execute(
            "SELECT id, ts, phase, skill, question_id, question_summary, door_type, door_class,"
            " user_choice, recommended, followed_recommendation, source FROM question_log"
            " WHERE session_id = ? ORDER BY ts, id",
            (session_id,),
        )
    ]
    findings = [
        dict(r)
        for r in conn.execute(
            "SELECT id, phase, finding_id, summary, door_type, disposition, surface_reason,"
            " recommended, choice, flipped_at FROM findings WHERE session_id = ?"
            " ORDER BY created_at, id",
            (session_id,),
        )
    ]
    return {
        "asked": [e for e in events if e["source"] not in ("auto-decided", "flip")],
        "auto_decided": [e for e in events if e["source"] == "auto-decided"],
        "flip_events": [e for e in events if e["source"] == "flip"],
        "silent": [f for f in findings if f["disposition"] == "silent"],
        "flipped": [f for f in findings if f["flipped_at"]],
        "findings": findings,
    }


def _cell(v) -> str:
    s = "" if v is None else str(v)
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_questions(session_id, q) -> str:
    out = [f"# Questions in session {session_id}", ""]
    out.append(
        f"{len(q['asked'])} asked, {len(q['auto_decided'])} auto-decided by preference, "
        f"{len(q['silent'])} silent pacing decisions, {len(q['flipped'])} flipped."
    )
    out.append("")
    out.append("## Asked")
    if q["asked"]:
        out.append(
            "| event | ts | phase | question | door | summary | answer | recommended | source |"
        )
        out.append("|---|---|---|---|---|---|---|---|---|")
        for e in q["asked"]:
            door = e["door_class"] or e["door_type"] or ""
            out.append(
                "| "
                + " | ".join(
                    _cell(x)
                    for x in (
                        e["id"],
                        e["ts"],
                        e["phase"],
                        e["question_id"],
                        door,
                        e["question_summary"],
                        e["user_choice"],
                        e["recommended"],
                        e["source"],
                    )
                )
                + " |"
            )
    else:
        out.append("None recorded for this session.")
    out.append("")
    out.append("## Auto-decided")
    if q["auto_decided"] or q["silent"]:
        for e in q["auto_decided"]:
            out.append(
                f"- event {e['id']}: `{e['question_id']}` → {_cell(e['user_choice'])} "
                "(never-ask preference)"
            )
        for f in q["silent"]:
            out.append(
                f"- finding `{f['finding_id']}` ({f['phase']}): silently accepted "
                f"{_cell(f['recommended'])}"
            )
    else:
        out.append("None.")
    out.append("")
    out.append("## Flipped")
    if q["flipped"] or q["flip_events"]:
        for f in q["flipped"]:
            out.append(
                f"- finding `{f['finding_id']}` ({f['phase']}): flipped at "
                f"{f['flipped_at']} to {_cell(f['choice'])}"
            )
        for e in q["flip_events"]:
            out.append(f"- event {e['id']}: `{e['question_id']}` → {_cell(e['user_choice'])}")
    else:
        out.append("None.")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# Validator gate


def validator_gate(layout: Layout, required) -> dict:
    """Which required outputs exist on disk (relative paths are from the project folder)."""
    found, missing, details = [], [], []
    for p in required:
        full = p if os.path.isabs(p) else os.path.join(layout.project_dir, p)
        try:
            st = os.stat(full)
            ok = True
            size = st.st_size
        except OSError:
            ok, size = False, None
        (found if ok else missing).append(p)
        details.append({"path": p, "found": ok, "size": size})
    return {
        "passed": not missing,
        "required_outputs": list(required),
        "found_outputs": found,
        "missing_outputs": missing,
        "checks": details,
    }


# ---------------------------------------------------------------------------
# Runs


def new_run_id(session_id, now) -> str:
    stamp = re.sub(r"[^0-9TZ]", "", now)[:15] + "Z"
    salt = f"{session_id}\0{now}\0{os.getpid()}\0{os.urandom(8).hex()}"
    return f"{stamp}-{hashlib.sha1(salt.encode()).hexdigest()[:8]}"


RunResult = namedtuple("RunResult", "record warnings errors proposal gate")


def _store_run(conn, record, errors):
    """Insert (or, later in the run, update) the run's ``trace_runs`` row."""
    raw = dict(record)
    if errors:
        raw["errors"] = list(errors)
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO trace_runs (run_id, project, session_id, created_at, task_id, topic,"
            " cwd, guidance_mode, run_dir, required_outputs_json, found_outputs_json,"
            " missing_outputs_json, guidance_files_read_json, guidance_proposal,"
            " applied_guidance_update, raw_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
            " ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET"
            " applied_guidance_update = excluded.applied_guidance_update,"
            " raw_json = excluded.raw_json",
            (
                record["run_id"],
                record["project"],
                record["session_id"],
                record["created_at"],
                record["task_id"],
                record["topic"],
                record["cwd"],
                record["guidance_mode"],
                record["run_dir"],
                json.dumps(record["required_outputs"]),
                json.dumps(record["found_outputs"]),
                json.dumps(record["missing_outputs"]),
                json.dumps(record["guidance_files_read"]),
                record["guidance_proposal"],
                int(record["applied_guidance_update"]),
                json.dumps(raw, ensure_ascii=False),
            ),
        )


def _propose(conn, layout, slug, record, now, env, flags, warnings, errors):
    """The run's proposal as the mode allows (made, and applied in apply mode), or None."""
    run_id, run_dir = record["run_id"], layout.run_dir(record["run_id"])
    proposal = None
    if flags.writes_proposal:
        try:
            proposal = build_proposal(conn, layout, slug, run_id, now)
            md = os.path.join(run_dir, "guidance_update_proposal.md")
            save_proposal(conn, proposal, md, layout, write_md=False)
        except Exception as e:  # noqa: BLE001
            errors.append(f"proposal: {e}")
            proposal = None
        if proposal and flags.updates_guidance and proposal["items"]:
            try:
                applied = apply_proposal(conn, proposal["id"], now, env)
                proposal.update(status=applied["status"], applied_at=applied["applied_at"])
                record["applied_guidance_update"] = True
            except GuidanceError as e:
                warnings.append(f"apply: {e}")
            except Exception as e:  # noqa: BLE001
                errors.append(f"apply: {e}")
    return proposal


def _bundle_files(conn, session_id, packet, guidance, flags, gate, provided, proposal, errors):
    """The run bundle: file name -> a function that makes its text."""
    files = OrderedDict()
    files["task_packet.json"] = lambda: json.dumps(packet, indent=2, ensure_ascii=False) + "\n"
    files["guidance_context.md"] = lambda: _context_doc(guidance, flags)
    files["questions.md"] = lambda: render_questions(
        session_id, session_questions(conn, session_id)
    )
    files["validator_gate.json"] = lambda: json.dumps(gate, indent=2, ensure_ascii=False) + "\n"
    for name in OPTIONAL_OUTPUTS:
        files[name] = _provided_reader(name, provided.get(name))
    if flags.writes_proposal:
        if proposal is not None:
            files["guidance_update_proposal.md"] = lambda: render_proposal(
                proposal, proposal.get("status", "proposed"), proposal.get("applied_at")
            )
        else:
            reason = "; ".join(e for e in errors if e.startswith("proposal")) or "unknown error"
            files["guidance_update_proposal.md"] = lambda: (
                f"# Guidance update proposal\n\nNot produced: {reason}\n"
            )
    return files


def run_session(
    conn,
    *,
    session_id,
    cwd=None,
    project_dir=None,
    mode=DEFAULT_MODE,
    required=(),
    provided=None,
    hook_event=None,
    transcript_path=None,
    topic=None,
    task_id=None,
    now=None,
    env=None,
) -> RunResult:
    """Trace one session end and, as ``mode`` allows, read, propose and apply guidance.

    Every stage is independent: the database row is written first, and a failure to
    write the bundle or the index is collected in ``errors`` (and stored in the row's
    raw_json), never raised, so nothing about the session is lost.
    """
    if mode not in MODE_TABLE:
        raise GuidanceError(f"invalid mode '{mode}', must be one of: " + ", ".join(MODES))
    if not isinstance(session_id, str) or not session_id.strip() or "\x00" in session_id:
        raise GuidanceError("session id is required (a non-empty string)")
    for pth in required:
        if not isinstance(pth, str) or not pth or "\x00" in pth:
            raise GuidanceError("required output paths must be non-empty strings")
    flags = MODE_TABLE[mode]
    now = now or db.utc_now()
    cwd = os.path.abspath(cwd or os.getcwd())
    layout = Layout(project_dir) if project_dir else Layout(project_root(cwd))
    slug = layout.slug()
    run_id = new_run_id(session_id, now)
    run_dir = layout.run_dir(run_id)
    warnings, errors = [], []
    provided = dict(provided or {})

    guidance = load_guidance(layout, mode, env, slug)
    warnings.extend(guidance.warnings)
    gate = validator_gate(layout, list(required))
    proposal_rel = layout.rel(os.path.join(run_dir, "guidance_update_proposal.md"))
    record = OrderedDict(
        run_id=run_id,
        created_at=now,
        task_id=task_id or session_id,
        topic=topic,
        cwd=cwd,
        guidance_mode=mode,
        run_dir=layout.rel(run_dir),
        required_outputs=gate["required_outputs"],
        found_outputs=gate["found_outputs"],
        missing_outputs=gate["missing_outputs"],
        guidance_files_read=guidance.files_read,
        guidance_proposal=proposal_rel if flags.writes_proposal else None,
        applied_guidance_update=False,
        project=slug,
        session_id=session_id,
    )

    try:
        _store_run(conn, record, errors)
    except Exception as e:  # noqa: BLE001 - the bundle below still records the run
        errors.append(f"database: trace run not stored: {e}")

    proposal = _propose(conn, layout, slug, record, now, env, flags, warnings, errors)

    # The bundle. Written file by file so one failure does not hide the rest.
    packet = OrderedDict(
        run_id=run_id,
        created_at=now,
        session_id=session_id,
        project=slug,
        cwd=cwd,
        hook_event=hook_event,
        transcript_path=transcript_path,
        topic=topic,
        task_id=record["task_id"],
        required_outputs=list(required),
        local_guidance=OrderedDict(
            enabled=flags.reads_guidance,
            mode=mode,
            project_guidance_file=layout.rel(layout.local_file),
            global_preferences_file=global_guidance_file(env),
            trace_dir=record["run_dir"],
            summary=guidance.summary,
            guidance_context=guidance.context,
        ),
        warnings=warnings,
    )
    files = _bundle_files(
        conn, session_id, packet, guidance, flags, gate, provided, proposal, errors
    )
    try:
        os.makedirs(run_dir, exist_ok=True)
    except OSError as e:
        errors.append(f"bundle: cannot create {record['run_dir']}: {e.strerror or e}")
    else:
        for name, make in files.items():
            try:
                write_atomic(os.path.join(run_dir, name), make())
            except Exception as e:  # noqa: BLE001
                errors.append(f"bundle: {name} not written: {getattr(e, 'strerror', None) or e}")
    try:
        append_line(layout.index_file, json.dumps(record, ensure_ascii=False))
    except OSError as e:
        errors.append(
            f"index: line not appended to {layout.rel(layout.index_file)}: {e.strerror or e}"
        )
    if errors or record["applied_guidance_update"]:
        try:
            _store_run(conn, record, errors)
        except Exception as e:  # noqa: BLE001
            errors.append(f"database: trace run not updated: {e}")
    return RunResult(record, warnings, errors, proposal, gate)


def _context_doc(guidance, flags) -> str:
    if not flags.reads_guidance:
        return "# Guidance context\n\nGuidance mode off: no guidance was read for this run.\n"
    out = ["# Guidance context", "", f"Summary: {guidance.summary}", ""]
    out.append("Files read: " + (", ".join(f"`{f}`" for f in guidance.files_read) or "none"))
    for w in guidance.warnings:
        out.append(f"Warning: {w}")
    out.append("")
    out.append(guidance.context or "No guidance in effect.")
    return "\n".join(out).rstrip("\n") + "\n"


def _provided_reader(name, source):
    def make():
        if source is None:
            return (
                f"# {name}\n\nNot produced: the caller provided no {name[:-3].replace('_', ' ')} "
                "for this run.\n"
            )
        return safe_io.read_text(source, errors="replace")

    return make
