"""All of gstack's history under a state root, brought into the database (``plantune
ingest``): events spooled while the database was busy first, then every store file the
importer reads (:mod:`toolkit.gstack.ingest`).
"""

from __future__ import annotations

import os

from toolkit.gstack import ingest, spool
from toolkit.gstack.ingest_base import FileReport, IngestError, StrictError, Summary


def drain_spool(conn, state_root):
    """Record every event spooled under ``state_root`` (see toolkit.gstack.spool), oldest first.

    Events spooled while the database was locked are older than anything this run reads
    from the files, so they go first. Their gstack lines go to the same state root.
    """
    env = dict(os.environ, GSTACK_STATE_ROOT=state_root)
    return spool.drain(conn, env)


def ingest_state_root(conn, state_root, strict=False, progress=None) -> Summary:
    """Ingest every gstack store under ``state_root``; returns a :class:`Summary`.

    ``progress(advance_bytes, total_bytes)`` is called as bytes are read. With ``strict``
    the first skipped line raises :class:`StrictError` after rolling back its file (files
    finished before it stay imported). Raises :class:`IngestError` when the state root is
    missing.
    """
    state_root = os.fspath(state_root)
    if not os.path.exists(state_root):
        raise IngestError(f"state root {state_root} does not exist")
    if not os.path.isdir(state_root):
        raise IngestError(f"state root {state_root} is not a directory")
    summary = Summary(state_root)
    summary.spool = drain_spool(conn, state_root)
    files = ingest.plan_files(state_root, summary)
    tick = None
    if progress is not None:
        total = ingest.pending_bytes(conn, files)

        def tick(n):
            progress(n, total)

    for path, kind, project in files:
        report = FileReport(path, kind, project)
        summary.files.append(report)
        try:
            ingest.ingest_file(
                conn,
                path,
                kind,
                project,
                strict=strict,
                final=True,
                progress=tick,
                report=report,
                root=state_root,
            )
        except StrictError as e:
            e.summary = summary
            raise
    return summary
