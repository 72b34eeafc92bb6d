"""Import gstack's own stores into the database: incrementally, idempotently, tolerantly.

Files read (under a state root):

- ``projects/<slug>/question-log.jsonl``      -> question_log
- ``projects/<slug>/question-events.jsonl``   -> preference_events
- ``projects/<slug>/question-preferences.json`` -> preferences (scope <slug>)
- ``developer-profile.json``  -> declared_profile (scope '__global__'), office_hours_sessions
- ``builder-profile.jsonl``   -> office_hours_sessions (gstack's legacy session log)

Rules:

- Idempotent: every row has a deterministic key (sha1 of the project and the canonical
  record), inserted with INSERT OR IGNORE, so a second run, or a line that a compat
  command already recorded live and mirrored to the file, adds nothing.
- Incremental: ``ingest_state`` remembers each file's inode, size, mtime, byte offset and
  two fingerprints. Unchanged file -> one ``stat``, nothing read. Grown file -> read from
  the offset. Replaced, shrunk or rewritten file -> rescanned from byte 0 (safe, see above).
- Only complete lines are consumed; a partial last line is left for the next run.
- Rows and the offset that covers them are committed in the same transaction, in batches,
  so a killed import leaves a consistent database and a rerun finishes the job exactly.
- Tolerant: a bad line is skipped and reported with its line number; a pretty-printed
  (multi-line) object inside a ``.jsonl`` file is joined and imported, with a note.

Whole-file stores (preferences, developer profile) are made to match the file when the file
changed. Writers that mirror the database into those files must rewrite the file before
they commit (inside their write transaction): this module reads them under the write lock,
so it never applies a file that is older than the database.
"""

from __future__ import annotations

import os
import time

from toolkit.gstack import file_state
from toolkit.gstack.file_state import JSONL_KINDS, PROJECT_FILES, ROOT_FILES, unread_bytes
from toolkit.gstack.ingest_base import FileRead, FileReport, StrictError, Summary
from toolkit.gstack.ingest_jsonl import read_jsonl, report_partial
from toolkit.gstack.ingest_whole import read_whole
from toolkit.store import safe_io
from toolkit.store.paths import is_valid_slug

# ---------------------------------------------------------------------------
# Entry points


def ingest_file(
    conn,
    path,
    kind,
    project=None,
    *,
    state=None,
    strict=False,
    final=True,
    progress=None,
    report=None,
    root=None,
    deadline=None,
):
    """Ingest one gstack file of ``kind``; returns its :class:`FileReport`.

    ``final`` marks an explicit run: a truncated last line is then reported as skipped.
    ``state`` is the file's known ingest state when the caller already loaded it.
    Only a regular file is read (a FIFO, socket or device, or a symlink out of ``root``,
    is reported and skipped without ever blocking). A JSONL read stops at a line boundary once
    ``time.monotonic()`` passes ``deadline``, keeping what it read (the report's
    ``pending`` is the bytes left).
    """
    report = report or FileReport(path, kind, project)
    try:
        fh = safe_io.open_binary(path, root=root)
    except OSError as e:
        report.status = "error"
        report.error = e.reason if isinstance(e, safe_io.UnsafeFile) else (e.strerror or str(e))
        return report
    with fh:
        job = FileRead(
            conn,
            path,
            kind,
            project,
            report,
            fh,
            os.fstat(fh.fileno()),
            state=state,
            strict=strict,
            final=final,
            progress=progress,
            deadline=deadline,
        )
        if job.state is None:
            job.state = file_state.load(conn, [path]).get(path)
        try:
            if job.state is not None and job.state.unchanged(job.st):
                report.status = "unchanged"
                if kind in JSONL_KINDS:
                    report_partial(report, job.state, job.st, final, strict)
                return report
            return read_jsonl(job) if kind in JSONL_KINDS else read_whole(job)
        except StrictError:
            report.status = "failed"
            raise
        except OSError as e:
            report.status = "error"
            report.error = e.strerror or str(e)
            return report


def _project_files(state_root, slug):
    base = os.path.join(state_root, "projects", slug)
    return [(os.path.join(base, name), kind) for name, kind in PROJECT_FILES]


def sync_project(conn, state_root, slug, *, deadline=None, skip_jsonl=False) -> dict:
    """Bring one project's three gstack files into the database; cheap when nothing changed.

    For the hot path: an unchanged file costs one ``stat`` (plus one indexed query for all
    three). A partial last line is left alone and not reported. ``deadline`` (a
    ``time.monotonic()`` value) bounds the JSONL reads; ``skip_jsonl`` leaves them all for
    later (whole-file stores are still made current). Returns a summary dict:
    ``{"project", "imported", "duplicate", "skipped", "pending", "files": [...]}`` where
    ``pending`` is the JSONL bytes left unread.
    """
    if not is_valid_slug(slug):
        raise ValueError(f"unsafe project slug: {slug!r}")
    files = _project_files(os.fspath(state_root), slug)
    states = file_state.load(conn, [p for p, _ in files])
    reports = []
    pending = 0
    for path, kind in files:
        state = states.get(path)
        if state is None and not os.path.lexists(path):
            continue
        if kind in JSONL_KINDS and (
            skip_jsonl or (deadline is not None and time.monotonic() >= deadline)
        ):
            pending += unread_bytes(state, path)
            continue
        report = ingest_file(
            conn,
            path,
            kind,
            slug,
            state=state,
            final=False,
            root=state_root,
            deadline=deadline,
        )
        pending += report.pending
        reports.append(report)
    return {
        "project": slug,
        "imported": sum(r.imported for r in reports),
        "duplicate": sum(r.duplicate for r in reports),
        "skipped": sum(r.skipped for r in reports),
        "pending": pending,
        "files": [r.as_dict() for r in reports],
    }


def history_files(state_root):
    """Every gstack file under ``state_root`` the importer would read: [(path, kind, project)]."""
    return plan_files(os.fspath(state_root), Summary(os.fspath(state_root)))


def plan_files(state_root, summary):
    """Every file to ingest under ``state_root``: [(path, kind, project)]."""
    plan = []
    projects_dir = os.path.join(state_root, "projects")
    try:
        names = sorted(os.listdir(projects_dir))
    except FileNotFoundError:
        names = []
    except OSError as e:
        summary.problems.append(f"{projects_dir}: {e.strerror or e}")
        names = []
    for name in names:
        base = os.path.join(projects_dir, name)
        if not os.path.isdir(base):
            continue
        if not is_valid_slug(name):
            summary.problems.append(f"{base}: not a gstack project slug, skipped")
            continue
        # Anything at a store's path is planned: a FIFO or a symlink out of the state root
        # is then reported by ingest_file (refused, never read), not silently passed over.
        found = [(p, k) for p, k in _project_files(state_root, name) if os.path.lexists(p)]
        if found:
            summary.projects.append(name)
        plan.extend((p, k, name) for p, k in found)
    for name, kind in ROOT_FILES:
        path = os.path.join(state_root, name)
        if os.path.lexists(path):
            plan.append((path, kind, None))
    return plan


def pending_bytes(conn, plan):
    """Bytes the plan will read (for a progress bar): whole changed files, JSONL tails."""
    states = file_state.load(conn, [p for p, _, _ in plan]) if plan else {}
    total = 0
    for path, kind, _ in plan:
        try:
            st = os.stat(path)
        except OSError:
            continue
        state = states.get(path)
        if state is not None and state.unchanged(st):
            continue
        start = state.offset if state is not None and kind in JSONL_KINDS else 0
        total += max(st.st_size - min(start, st.st_size), 0)
    return total
