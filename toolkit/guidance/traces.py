"""The trace index: ``.plantune/trace/index.jsonl``, read tolerantly and loaded into trace_runs.

A line that is not a valid run record is skipped and reported with its line number, never
fatal; loading the same index twice changes nothing.
"""

from __future__ import annotations

import json

from toolkit.guidance.files import MODE_TABLE, MODES, Layout
from toolkit.store import db, safe_io

# ---------------------------------------------------------------------------
# Trace index

INDEX_FIELDS = (
    "run_id",
    "created_at",
    "task_id",
    "topic",
    "cwd",
    "guidance_mode",
    "run_dir",
    "required_outputs",
    "found_outputs",
    "missing_outputs",
    "guidance_files_read",
    "guidance_proposal",
    "applied_guidance_update",
)


def read_index(path):
    """``(records, bad)``: valid index records in file order, and (line_no, reason) skipped."""
    records, bad = [], []
    try:
        f = safe_io.open_text(path, errors="replace")
    except FileNotFoundError:
        return records, bad
    with f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                bad.append((n, "not JSON"))
                continue
            reason = _index_problem(rec)
            if reason:
                bad.append((n, reason))
                continue
            records.append(rec)
    return records, bad


def _index_problem(rec):
    if not isinstance(rec, dict):
        return "not a JSON object"
    for key in ("run_id", "created_at"):
        if not isinstance(rec.get(key), str) or not rec[key]:
            return f"missing {key}"
    if rec.get("guidance_mode") not in MODE_TABLE:
        return "guidance_mode is not one of " + ", ".join(MODES)
    for key in ("required_outputs", "found_outputs", "missing_outputs", "guidance_files_read"):
        if not isinstance(rec.get(key, []), list):
            return f"{key} is not a list"
    return None


def ingest_index(conn, layout: Layout, slug=None) -> dict:
    """Load ``.plantune/trace/index.jsonl`` into trace_runs; running it twice adds nothing.

    A run already in the database (written live by its run) is left as it is.
    """
    slug = slug or layout.slug()
    records, bad = read_index(layout.index_file)
    inserted = 0
    source = layout.rel(layout.index_file)
    with db.transaction(conn):
        for rec in records:
            cur = conn.execute(
                "INSERT INTO trace_runs (run_id, project, session_id, created_at, task_id, topic,"
                " cwd, guidance_mode, run_dir, required_outputs_json, found_outputs_json,"
                " missing_outputs_json, guidance_files_read_json, guidance_proposal,"
                " applied_guidance_update, raw_json, ingested_from) VALUES (?, ?, ?, ?, ?, ?, ?,"
                " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING",
                (
                    rec["run_id"],
                    _text(rec.get("project")) or slug,
                    _text(rec.get("session_id")),
                    rec["created_at"],
                    _text(rec.get("task_id")),
                    _text(rec.get("topic")),
                    _text(rec.get("cwd")),
                    rec["guidance_mode"],
                    _text(rec.get("run_dir")),
                    json.dumps(rec.get("required_outputs", [])),
                    json.dumps(rec.get("found_outputs", [])),
                    json.dumps(rec.get("missing_outputs", [])),
                    json.dumps(rec.get("guidance_files_read", [])),
                    _text(rec.get("guidance_proposal")),
                    1 if rec.get("applied_guidance_update") is True else 0,
                    json.dumps(rec, ensure_ascii=False),
                    source,
                ),
            )
            inserted += cur.rowcount
    return {
        "records": len(records),
        "inserted": inserted,
        "already_present": len(records) - inserted,
        "bad_lines": [{"file": source, "line": n, "reason": r} for n, r in bad],
    }


def _text(v):
    return v if isinstance(v, str) else None
