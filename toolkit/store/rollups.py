"""Bulk imports with the analysis rollups added set-based, from their declarations.

Each rollup is one file of ``sql/rollups/`` (``toolkit.store.declared``): its table, the
triggers that keep it exact on every write, and one statement per source table that adds
the source rows with ``id > :lo``. The hot path (one logged question) goes through the
triggers. For a large import that per-row work is most of the cost, so :class:`Bulk`
does, inside the caller's write transaction: drop the rollups' insert triggers on the
table at its first :meth:`Bulk.put`, insert the rows of every put, then at
:meth:`Bulk.finish` run the adding statements over the new rowid range and create the
triggers again from the same files. Other connections see the state before the
transaction or after it, never the rows without their totals; the triggers they find are
the same.
The cost is the schema change: each commit makes every other open connection read the
schema again on its next statement (new connections, which every hook opens, pay nothing
more). Measured in ``benchmarks/RESULTS.md`` (issue 28, declared rollups).
"""

from toolkit.store import db, declared

# Below this many bytes to read (about 1,000 lines), an import keeps the per-row triggers.
BULK_MIN_BYTES = 256 << 10


class Bulk:
    """Inserts into ``table`` whose rollups are added set-based (see the module)."""

    def __init__(self, conn, table="question_log", schema=None):
        schema = db.default_schema() if schema is None else schema
        self.conn, self.table = conn, table
        self.triggers = [t for r in schema.rollups for t in r.insert_triggers.get(table, ())]
        self.adds = [s for r in schema.rollups for s in r.adds.get(table, ())]
        # Only over the very declarations the database holds (opened without migrating,
        # it may hold others): otherwise the triggers stay and do the work row by row.
        self.ready = bool(self.adds) and declared.current(conn, schema.rollups)
        self.lo = None  # the largest id before the first put of the open transaction

    def put(self, sql, rows):
        """Run ``sql`` (an INSERT into the table) for ``rows`` in the caller's write
        transaction; returns how many rows were inserted. Their rollups are added by
        :meth:`finish`, which must run before the transaction commits: a transaction
        that inserts many times drops the triggers and adds the totals once."""
        conn = self.conn
        if not self.ready:
            return conn.executemany(sql, rows).rowcount
        if not conn.in_transaction:
            raise RuntimeError("Bulk.put needs the caller's write transaction")
        if self.lo is None:
            self.lo = conn.execute(f'SELECT coalesce(max(id), 0) FROM "{self.table}"').fetchone()[0]
            for name, _ in self.triggers:
                conn.execute(f'DROP TRIGGER "{name}"')
        try:
            return conn.executemany(sql, rows).rowcount
        except BaseException:
            self.finish()  # the rows a failed statement left in are counted all the same
            raise

    def finish(self):
        """Add the rollups of every row put since the last finish (the rows with a larger
        id than any before the first put) and create the triggers again."""
        if self.lo is None:
            return
        lo, self.lo = self.lo, None
        conn = self.conn
        try:
            for statement in self.adds:
                conn.execute(statement, {"lo": lo})
        finally:
            for _, create in self.triggers:
                conn.execute(create)
