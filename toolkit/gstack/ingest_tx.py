"""The importer's write transactions: rows and the offset that covers them commit
together. A transaction goes on while no other writer waits for the lock (it looks every
CHECK_SECONDS of writing) until it has held the lock LOCK_MAX_SECONDS; then it ends (the
part being written, the rollup upkeep of its rows, the COMMIT) and lets waiting writers in.
"""

from __future__ import annotations

import time

from toolkit.store import db

# Lines read and prepared (without the write lock) before they are written: memory stays
# bounded, and no transaction holds more rows than this. Event keys are random, so a
# transaction dirties leaves all over the unique index: the more rows it holds, the more
# of them share each page written to the WAL (and checkpointed).
BATCH_LINES = 10000


class Tx:
    """Batch transactions that also work inside a caller's open transaction.

    When the caller already holds a transaction we never commit or roll it back: the
    caller decides, and our rows go with its. Every transaction of our own is timed from
    the moment the write lock is held to the end of its COMMIT (``holds``), and before
    taking the lock again we let writers that announced a wait go first.
    """

    def __init__(self, conn):
        self.conn = conn
        self.own = not conn.in_transaction
        self.started = None
        self.holds = []  # seconds each of our transactions held the write lock
        self.db_file = db.file_of(conn) if self.own else None
        self.autocheckpoint = None

    def checkpoint_between(self):
        """Checkpoint the WAL between our transactions instead of inside our COMMITs.

        SQLite checkpoints in the COMMIT call that grows the WAL past its limit. The lock
        is free by then, but the time is ours and would stretch our measured holds; a
        passive checkpoint run between two transactions never blocks another writer. It
        runs once about CHECKPOINT_FRAMES pages were written (measured at the previous
        one): a page that many transactions touch is then copied back once, not each time.
        """
        if self.own and self.autocheckpoint is None:
            self.autocheckpoint = self.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
            self.conn.execute("PRAGMA wal_autocheckpoint = 0")
            self.since_checkpoint, self.checkpoint_every = 0, 4

    def restore(self):
        if self.autocheckpoint is not None:
            self.conn.execute(f"PRAGMA wal_autocheckpoint = {int(self.autocheckpoint)}")
            self.autocheckpoint = None

    def begin(self):
        if self.own and not self.conn.in_transaction:
            if self.db_file:
                let_waiters_in(self.db_file)
            # A wait is announced (db.begin_immediate), as every other writer's is.
            db.begin_immediate(self.conn)
            self.started = time.perf_counter()

    def should_commit(self):
        """True when our open transaction should end now: a writer announced its wait, or
        we held the lock LOCK_MAX_SECONDS (a writer that waits without announcing, an
        earlier release's, waits that long at most)."""
        if not self.own or self.started is None:
            return False
        if time.perf_counter() - self.started >= LOCK_MAX_SECONDS:
            return True
        return self.db_file is not None and db.writers_waiting(self.db_file)

    def commit(self):
        if self.own and self.conn.in_transaction:
            self.conn.execute("COMMIT")
            self._held()
            if self.autocheckpoint:
                self.since_checkpoint += 1
                if self.since_checkpoint >= self.checkpoint_every:
                    self._checkpoint()

    def _checkpoint(self):
        frames = self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
        per_commit = max(frames, 1) / self.since_checkpoint
        self.checkpoint_every = max(1, min(64, int(CHECKPOINT_FRAMES / per_commit)))
        self.since_checkpoint = 0

    def rollback(self):
        if self.own and self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
            self._held()

    def _held(self):
        if self.started is not None:
            self.holds.append(time.perf_counter() - self.started)
            self.started = None


# How long the importer writes between two looks for a waiting writer: a hook or compat
# script that announced its wait gets the lock after this, the rollup upkeep of the open
# transaction's rows and our COMMIT, and the issue of a starved hook is a lost answer.
# The rows written between two looks adapt to the measured insert rate so that each
# stretch stays near this.
CHECK_SECONDS = 0.03
# How long one of our transactions goes on when no writer announced a wait (a writer that
# waits without announcing, an earlier release's, waits about this, plus the ending).
# Each commit rewrites the random leaf pages of the unique key and of the indexes, and
# the rollup upkeep runs once a transaction, so fewer, larger transactions cost less a
# row (benchmarks/RESULTS.md, "Issue 28 point 3, round 4").
LOCK_MAX_SECONDS = 0.05
# WAL pages written between two passive checkpoints of a bulk import (32 MB of 4 KiB pages).
CHECKPOINT_FRAMES = 8192
MIN_WRITE_ROWS = 50
# A writer that announced its wait gets the lock within this; then the import goes on
# even if more keep arriving.
MAX_YIELD_SECONDS = 0.5


def let_waiters_in(db_file):
    deadline = time.monotonic() + MAX_YIELD_SECONDS
    while db.writers_waiting(db_file) and time.monotonic() < deadline:
        time.sleep(0.005)


def next_chunk(current, rows, seconds):
    """Rows to write before the next look for a waiting writer, from how long ``rows``
    rows took (``seconds``)."""
    if rows <= 0 or seconds <= 0:
        return current
    fit = int(rows * CHECK_SECONDS / seconds)
    # Grow slowly (a fast batch may have been a lucky one), shrink at once.
    return max(MIN_WRITE_ROWS, min(fit, current * 2, BATCH_LINES))
