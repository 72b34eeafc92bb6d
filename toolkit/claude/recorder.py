"""The hooks' recorder: one AskUserQuestion call's records into the database, and
gstack's question-log.jsonl kept current, with the spool behind it when the database is
locked.

The records come built (``toolkit.claude.records.call_records``); the recorder opens the
database lazily, inserts each record, writes gstack's line for it, and drains a few
spooled entries after a call whose records all reached the database.
"""

import os

from toolkit.claude.hook_entries import log_error
from toolkit.store import paths, safe_io

HOOK_BUSY_TIMEOUT_MS = 3000


def open_db(create: bool, db_path=None, env=None):
    from toolkit.core import seeded_db

    path = paths.db_path(db_path, env=env)
    if not create and not os.path.exists(path):
        return None
    conn = seeded_db.connect(path)
    # Claude Code kills a hook after 5 s: give up on a busy database well before that.
    conn.execute(f"PRAGMA busy_timeout = {HOOK_BUSY_TIMEOUT_MS}")
    return conn


def project_of(payload, env=None) -> str:
    """The payload's project slug, from its ``cwd`` as the CLI reads it (``paths.resolve_slug``)."""
    cwd = payload.get("cwd")
    cwd = cwd if isinstance(cwd, str) and cwd and "\x00" not in cwd else None  # no path has NUL
    return paths.resolve_slug(cwd=cwd, env=env)


def _insert(conn, record, project, index, registry, hook, env, gstack_files=True):
    """Insert one record and keep gstack's question-log.jsonl current; returns the status.

    ``gstack_files`` false (a database pinned with ``--db`` away from the state root's):
    gstack's files neither take part in the dedup window nor get the line, so a later
    ``plantune ingest`` cannot import the answer into the state root's database too.
    A cancelled question is never written there: gstack has no such answer.
    """
    from toolkit.core import questions
    from toolkit.core.jscompat import stringify
    from toolkit.gstack import mirror

    mirrored = gstack_files and mirror.enabled(env)
    line = stringify(record)  # the row's raw_json and gstack's line: serialised once
    result = questions.record_event(
        conn,
        record,
        project,
        raw=line,
        question_index=index,
        registry=registry.door_types(),
        unimported=mirror.backlog_twin(project, env, mirrored=mirrored) if gstack_files else None,
    )
    if (
        result.status == "inserted"
        and mirrored
        and record["user_choice"] != questions.CANCELLED_CHOICE
    ):
        # The row is committed: now the line, marked read so pickup does not read it back.
        try:
            mirror.append_committed(
                conn,
                mirror.project_file(project, mirror.QUESTION_LOG, env),
                "question-log",
                line,
                env,
            )
        except (OSError, ValueError) as e:
            log_error(hook, f"mirror write failed: {safe_io.describe(e)}", env)
    return result.status


class Recorder:
    """A hook's database connection, with the spool behind it.

    The database is opened lazily. When it stays locked past the hook's busy timeout (or
    is locked while being opened), this and every later record of the call go to the
    spool instead, and the hook still succeeds: Claude Code kills a hook that waits too
    long, and the answer would be lost with it. After a call whose records all reached the
    database, a few spooled entries are drained on the same connection.
    """

    def __init__(self, hook, db_path, env, conn=None):
        self.hook, self.db_path, self.env = hook, db_path, env
        self.conn, self.own = conn, conn is None
        self.busy = False
        self.wrote = False
        from toolkit.gstack import mirror

        # gstack's files go with the state root's own database only (see _insert).
        self.gstack_files = mirror.belongs_to_state_root(db_path, env)
        if conn is not None:
            return
        try:
            self.conn = open_db(create=True, db_path=db_path, env=env)
        except Exception as e:
            if not _busy(e):
                raise
            self.busy = True

    def registry(self):
        from toolkit.claude.records import Registry

        return Registry.from_db(self.conn) if self.conn is not None else Registry.bundled()

    def record(self, record, project, index, registry):
        if not self.busy:
            try:
                status = _insert(
                    self.conn,
                    record,
                    project,
                    index,
                    registry,
                    self.hook,
                    self.env,
                    gstack_files=self.gstack_files,
                )
                self.wrote = True
                return status
            except Exception as e:
                if not _busy(e):
                    raise
                self.busy = True
        return self._spool(record, project, index)

    def record_all(self, items, project, registry, refused="recorded") -> list:
        """Record a call's ``(index, record, refusal)`` items (``records.call_records``) in
        order; returns their statuses, "refused" (and a line in hook-errors.log) for each
        question validation refused."""
        statuses = []
        for index, record, refusal in items:
            if refusal is not None:
                log_error(self.hook, f"question {index} not {refused}: {refusal}", self.env)
                statuses.append("refused")
            else:
                statuses.append(self.record(record, project, index, registry))
        return statuses

    def _spool(self, record, project, index):
        from toolkit.core.questions import CANCELLED_CHOICE
        from toolkit.gstack import mirror, spool

        try:
            spool.put_question(
                record,
                project,
                paths.db_path(self.db_path, env=self.env),
                question_index=index,
                mirror=self.gstack_files
                and mirror.enabled(self.env)
                and record["user_choice"] != CANCELLED_CHOICE,
                env=self.env,
            )
        except spool.SpoolError as e:
            log_error(self.hook, f"question {index} lost: database is locked and {e}", self.env)
            return "lost"
        return "spooled"

    def close(self):
        if self.conn is None:
            return
        try:
            if self.wrote and not self.busy:
                from toolkit.gstack import spool

                warning = spool.drain_after_write(self.conn, self.env)
                if warning:
                    log_error(self.hook, warning, self.env)
        finally:
            if self.own:
                from toolkit.store import db

                db.finish(self.conn)


def _busy(error):
    from toolkit.store import db

    return db.is_busy(error)
