"""A proposal after it is made: its Markdown, its stored row, finding it again, applying it.

``apply_proposal`` writes the guidance file and the project preferences only when neither
changed since the proposal was made (it fails closed), never suppresses a one-way door,
never writes a global preference, and touches no file but the project's guidance file.
"""

from __future__ import annotations

import json
import os
import re

from toolkit.gstack import mirror, pickup
from toolkit.guidance.files import (
    GUIDANCE_DIRNAME,
    LOCAL_FILENAME,
    GuidanceError,
    Layout,
    append_to_section,
    file_hash,
    guidance_template,
    preference_index,
    read_layer,
    section_lines,
)
from toolkit.guidance.proposals import (
    is_safe,
    preferences_hash,
    set_preference,
    store_proposal,
    unsafe_ids,
)
from toolkit.store import db, safe_io
from toolkit.store.safe_io import write_atomic


def render_proposal(p, status="proposed", applied_at=None) -> str:
    applied = f"yes, at {applied_at}" if status == "applied" else "no"
    out = [f"# Guidance update proposal {p['id']}", ""]
    out.append(f"- Project: `{p['project']}`")
    out.append(f"- Created: {p['created_at']}")
    out.append(f"- Run: {p['run_id'] or '(none: `plantune guidance propose`)'}")
    gh = p["guidance_hash"]
    out.append(
        f"- Guidance file: `{p['guidance_file']}` "
        + (f"(sha256 {gh[:16]}… when proposed)" if gh else "(absent when proposed)")
    )
    out.append(
        "- Affected preferences: "
        + (", ".join(f"`{q}`" for q in p["affected_question_ids"]) or "none")
        + f" (hash {p['preferences_hash'][:16]}…)"
    )
    if p["items"]:
        out.append(f"- Status: {status}; applied: {applied}")
    else:
        out.append("- Status: no changes, nothing to apply")
    if p["items"] and status == "proposed":
        out.append(
            f"- Apply with: `plantune guidance apply {p['id']}` (refused if the guidance "
            "file or these preferences change first)"
        )
    if p.get("guidance_malformed"):
        out.append(f"- Warning: {p['guidance_malformed']}")
    out.append("")
    out.append("## Proposed changes")
    if not p["items"]:
        out.append("None: no evidence reached the thresholds.")
    for n, item in enumerate(p["items"], 1):
        out.append("")
        verb = {"add": "Add to", "edit": "Edit in", "remove": "Remove from"}[item["action"]]
        out.append(f"### {n}. {verb} {item['section']}: {item['id']}")
        if item["line"]:
            out.append(f"- Line: {item['line']}")
        if item["kind"] == "preference":
            prev = item["previous_preference"] or "none"
            out.append(f"- Project preference: {prev} → {item['preference']} (source plan-tune)")
        out.append(f"- Rule: {item['rule']}")
        out.append(f"- Evidence: {_evidence_text(item['evidence'])}")
        out.append(f"- Future behaviour: {item['future_behaviour']}")
        out.append("- Rejected alternatives: " + "; ".join(item["rejected_alternatives"]))
        out.append(f"- Applied: {applied}")
    out.append("")
    out.append("## Considered and rejected")
    if not p["rejected"]:
        out.append("Nothing else came close.")
    for r in p["rejected"]:
        ev = _evidence_text(r["evidence"])
        out.append(
            f"- `{r['subject']}` ({r['rule']}): {r['reason']}"
            + (f". Evidence: {ev}" if ev != "none" else "")
        )
    out.append("")
    out.append(
        "Never proposed: suppressing a one-way door, validation, evidence or safety "
        "check; anything from a single run; anything from tool output or file content."
    )
    return "\n".join(out) + "\n"


def _evidence_text(ev) -> str:
    names = {
        "question_events": "question-log events",
        "sessions": "sessions",
        "trace_runs": "trace runs",
        "findings": "flipped findings",
        "preference_events": "preference events",
        "registry": "registry",
    }
    parts = []
    for key, label in names.items():
        v = ev.get(key)
        if not v:
            continue
        if isinstance(v, dict):
            parts.append(f"{label} " + ", ".join(f"{k}={w}" for k, w in v.items()))
        else:
            shown = ", ".join(str(x) for x in v[:20]) + (
                f" (+{len(v) - 20} more)" if len(v) > 20 else ""
            )
            parts.append(f"{label} {shown}")
    return "; ".join(parts) or "none"


def save_proposal(conn, p, md_path, layout: Layout, write_md=True):
    """Store the proposal (rows only when it has changes), then write its markdown.

    The row goes first: if the file cannot be written the proposal can still be applied.
    """
    p["path"] = layout.rel(md_path)
    if p["items"]:
        store_proposal(conn, p, layout.project_dir, {"guidance_malformed": p["guidance_malformed"]})
    if write_md:
        write_atomic(md_path, render_proposal(p))


def _proposal_from_row(row) -> dict:
    details = json.loads(row["details_json"] or "{}")
    return {
        "id": row["id"],
        "project": row["project"],
        "project_dir": row["project_dir"],
        "run_id": row["run_id"],
        "created_at": row["created_at"],
        "path": row["path"],
        "guidance_file": details.get(
            "guidance_file", os.path.join(GUIDANCE_DIRNAME, LOCAL_FILENAME)
        ),
        "guidance_hash": row["guidance_hash"],
        "preferences_hash": row["preferences_hash"],
        "affected_question_ids": details.get("affected_question_ids", []),
        "items": json.loads(row["items_json"]),
        "rejected": details.get("rejected", []),
        "thresholds": details.get("thresholds", {}),
        "guidance_malformed": details.get("guidance_malformed"),
        "status": row["status"],
        "applied_at": row["applied_at"],
        "kind": details.get("kind", "project"),
        "merged_from": row["merged_from"],
        "developer": row["developer"],
    }


_PROPOSAL_HEADING = re.compile(r"^# Guidance update proposal (gp-[0-9a-f]{12})\s*$", re.M)


def find_proposal(conn, ref) -> dict:
    """A proposal by id, unique id prefix, or the path of its markdown file."""
    ref = (ref or "").strip()
    if not ref:
        raise GuidanceError("PROPOSAL is empty; give a proposal id or its .md file")
    pid = ref
    if os.sep in ref or ref.endswith(".md"):
        try:
            head = safe_io.read_bytes(ref, limit=4096).decode("utf-8", "replace")
            m = _PROPOSAL_HEADING.search(head)
        except OSError as e:
            raise GuidanceError(f"cannot read proposal file {ref}: {e.strerror or e}") from None
        if not m:
            raise GuidanceError(f"{ref} is not a plantune guidance proposal")
        pid = m.group(1)
    rows = conn.execute(
        "SELECT * FROM guidance_proposals WHERE id = ? OR (length(?) >= 6 AND id LIKE ? || '%')",
        (pid, pid, pid.replace("%", "").replace("_", "")),
    ).fetchall()
    exact = [r for r in rows if r["id"] == pid]
    if exact:
        rows = exact
    if not rows:
        raise GuidanceError(f"no guidance proposal {pid} (or it proposed no changes)")
    if len(rows) > 1:
        raise GuidanceError(f"proposal prefix {pid} is ambiguous ({len(rows)} matches)")
    return _proposal_from_row(rows[0])


def apply_proposal(conn, ref, now=None, env=None) -> dict:
    """Apply a proposal to the project guidance file and project preferences.

    Fails closed: raises GuidanceError (and changes nothing) when the proposal was already
    applied, when the guidance file or the affected preferences differ from what the
    proposal saw, or when a change would now suppress a one-way door.
    """
    now = now or db.utc_now()
    p = find_proposal(conn, ref)
    if p["status"] != "proposed":
        when = f" at {p['applied_at']}" if p["applied_at"] else ""
        raise GuidanceError(f"proposal {p['id']} is {p['status']}{when}; nothing applied")
    if not p["items"]:
        raise GuidanceError(f"proposal {p['id']} has no changes to apply")
    if p["merged_from"] is not None:
        raise GuidanceError(
            f"proposal {p['id']} was merged from another database; apply it"
            " in the database it was made in"
        )
    if p["kind"] == "promotion":
        from toolkit.guidance import promote

        return promote.apply(conn, p, now)
    if not p["project_dir"]:
        raise GuidanceError(f"proposal {p['id']} does not name its project folder")
    layout = Layout(p["project_dir"])
    # The hash is taken again right before writing, under the database write lock, so a
    # concurrent apply of another proposal cannot slip in between.
    mirroring = mirror.enabled(env)
    warnings = []
    with db.transaction(conn):
        if mirroring:
            # A hand edit of gstack's preferences file made a moment ago counts as a change
            # of the affected preferences (and is kept): picked up before the checks.
            pickup.pickup(conn, p["project"], env)
        current = file_hash(layout.local_file)
        if current != p["guidance_hash"]:
            raise GuidanceError(
                f"{layout.rel(layout.local_file)} changed after proposal {p['id']} was "
                "generated; nothing applied (run `plantune guidance propose` again)"
            )
        if (
            preferences_hash(conn, p["project"], p["affected_question_ids"])
            != p["preferences_hash"]
        ):
            raise GuidanceError(
                "preferences for " + ", ".join(p["affected_question_ids"]) + f" changed after "
                f"proposal {p['id']} was generated; nothing applied (run `plantune guidance "
                "propose` again)"
            )
        unsafe = unsafe_ids(conn, p["affected_question_ids"])
        for item in p["items"]:
            if not is_safe(item, unsafe):
                raise GuidanceError(
                    f"cannot set {item['preference']} on one-way question "
                    f'"{item["question_id"]}"; nothing applied'
                )
        if current is None:
            text = guidance_template(p["project"], now)
        else:
            text = safe_io.read_text(layout.local_file)
            layer = read_layer(layout.local_file, "project")
            if layer.warning:
                raise GuidanceError(
                    layer.warning.replace("; continuing without it", "") + "; nothing applied"
                )
        new_text = _edit_guidance(text, p, now)
        events = []
        for item in p["items"]:
            if item["kind"] != "preference":
                continue
            events.append(
                set_preference(
                    conn,
                    p["project"],
                    item["question_id"],
                    item["preference"],
                    now,
                    p["id"],
                    item["previous_preference"],
                )
            )
        conn.execute(
            "UPDATE guidance_proposals SET status = 'applied', applied_at = ? WHERE id = ?",
            (now, p["id"]),
        )
        if p["run_id"]:
            conn.execute(
                "UPDATE trace_runs SET applied_guidance_update = 1 WHERE run_id = ?", (p["run_id"],)
            )
        # Last step inside the transaction: if the file cannot be written, the database
        # changes roll back with the raised error.
        write_atomic(layout.local_file, new_text)
        # Then gstack's own files, by the writer `--write` uses: its preferences file and
        # events log say what the database says, so gstack's hook and skills follow the
        # applied guidance, and the next pickup of the file does not undo it.
        if events and mirroring:
            # Written once the transaction commits (never for a rolled-back apply).
            mirror.preferences_changed(conn, p["project"], events, env, warnings=warnings)
    if warnings:
        p["warning"] = warnings[0]
    p["status"], p["applied_at"] = "applied", now
    if p.get("path"):
        md = os.path.join(layout.project_dir, p["path"])
        if os.path.isfile(md):
            try:
                write_atomic(md, render_proposal(p, "applied", now))
            except OSError:
                pass  # the database and the revision history already say it was applied
    return p


def _edit_guidance(text, p, now) -> str:
    lines = text.splitlines()
    changes = []
    for item in p["items"]:
        if item["section"] == "Project Preferences":
            existing = preference_index(lines)
            qid = item["question_id"]
            if qid in existing:
                indexes = [i for i, _ in existing[qid]]
                if item["line"] is not None:
                    lines[indexes.pop(0)] = item["line"]
                for idx in reversed(indexes):  # one line per id: drop the duplicates
                    del lines[idx]
            elif item["line"] is not None:
                append_to_section(lines, "Project Preferences", item["line"])
            prev = item["previous_preference"] or "none"
            new = item["preference"] or "removed"
            changes.append(
                f"{qid} {prev} → {new}"
                if item["kind"] == "preference"
                else f"{item['action']} note {qid}"
            )
        else:
            append_to_section(lines, item["section"], item["line"])
            changes.append(f"artifact policy {item['path']}")
    runs = []
    for item in p["items"]:
        for rid in item["evidence"].get("trace_runs", []):
            if rid not in runs:
                runs.append(rid)
    if p["run_id"] and p["run_id"] not in runs:
        runs.append(p["run_id"])
    anchors = "\n".join(l for _, l in section_lines(lines, "Trace Anchors"))
    for rid in runs[-5:]:
        if rid not in anchors:
            append_to_section(
                lines, "Trace Anchors", f"- run {rid}: `{GUIDANCE_DIRNAME}/trace/runs/{rid}`"
            )
    where = p.get("path") or "the database"
    append_to_section(
        lines,
        "Revision History",
        f"- {now} applied proposal {p['id']} ({'; '.join(changes)}); evidence: `{where}`",
    )
    return "\n".join(lines) + "\n"
