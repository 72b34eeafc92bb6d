"""SQL files read as declarations: statements split out of a file, and the rollups of
``sql/rollups/`` (one file each) parsed, compared with what a database holds, and made
again where their file changed.

A rollup file holds the rollup's tables, indexes and triggers, and, each after a line
``-- adds: TABLE``, a statement adding the rows of TABLE with ``id > :lo`` (grouped,
``ON CONFLICT ... DO UPDATE`` adding to what is there). ``plantune_rollups`` records, per
rollup, the sha1 of the file it was made from and the objects it made.

Only the standard library is imported here; ``toolkit.store.db`` imports this module only
to migrate (never on the hot path of an up-to-date database).
"""

try:
    from _sqlite3 import Error, complete_statement
except ImportError:  # pragma: no cover - a Python built without the split module
    from sqlite3 import Error, complete_statement

ROLLUPS_TABLE = "plantune_rollups"


class RollupError(Exception):
    """A rollup file that SQLite refused, in one sentence."""


def split_statements(script):
    """Split a SQL script into statements (executescript would commit our transaction)."""
    statements, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if complete_statement(buf):
            if buf.strip():
                statements.append(buf)
            buf = ""
    if buf.strip() and not buf.strip().startswith("--"):
        statements.append(buf)
    return [s for s in statements if _has_code(s)]


def _has_code(statement):
    return any(l.strip() and not l.strip().startswith("--") for l in statement.splitlines())


class Rollup:
    """One declared rollup (``sql/rollups/NAME.sql``), split into its parts.

    ``ddl``: the statements that create its tables, indexes and triggers, in file order.
    ``adds``: ``{source table: [statement]}``, each adding the rows of that table with
    ``id > :lo``. ``insert_triggers``: ``{source table: [(name, sql)]}``, its AFTER INSERT
    triggers on a table it has an adding statement for (what a bulk import leaves out and
    replaces by the adding statements).
    """

    def __init__(self, name, body):
        import re

        from toolkit.store.digest import sha1

        self.name, self.sha1 = name, sha1(body).hexdigest()
        self.ddl, self.adds, self.insert_triggers = [], {}, {}
        for statement in split_statements(body.decode("utf-8")):
            source = re.search(r"^--\s*adds:\s*(\w+)\s*$", statement, re.M)
            if source:
                self.adds.setdefault(source.group(1), []).append(statement)
            else:
                self.ddl.append(statement)
        trigger_head = (
            r"(?:\s*--[^\n]*\n)*\s*CREATE\s+TRIGGER\s+(\w+)\s+AFTER\s+INSERT\s+ON\s+(\w+)"
        )
        for statement in self.ddl:
            trigger = re.match(trigger_head, statement, re.I)
            if trigger and trigger.group(2) in self.adds:
                self.insert_triggers.setdefault(trigger.group(2), []).append(
                    (trigger.group(1), statement)
                )


class Rollups:
    """The rollups of a schema (``(name, file bytes)`` pairs), parsed on first use."""

    def __init__(self, files):
        self.files, self._parsed = files, None

    def __bool__(self):
        return bool(self.files)

    def __iter__(self):
        if self._parsed is None:
            self._parsed = [Rollup(name, body) for name, body in self.files]
        return iter(self._parsed)


def current(conn, rollups):
    """True when the database holds exactly these rollups, made from these very files."""
    if not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (ROLLUPS_TABLE,)
    ).fetchone():
        return False  # a database from before the declarations
    held = {name: sha for name, sha in conn.execute(f"SELECT name, sha1 FROM {ROLLUPS_TABLE}")}
    return held == {r.name: r.sha1 for r in rollups}


def sync(conn, rollups):
    """Make again and refill each rollup whose file changed; drop those no longer declared.

    When a file's sha1 differs from the one recorded (or an object it made is missing),
    every object it made is dropped, its statements run again and its tables are refilled
    by its adding statements with ``:lo = 0``, all in the caller's transaction. A rollup
    whose file did not change is left as it is. Raises :class:`RollupError`.
    """
    if not rollups:
        return
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {ROLLUPS_TABLE} (name TEXT PRIMARY KEY,"
        " sha1 TEXT NOT NULL, objects TEXT NOT NULL) STRICT"
    )
    existing = _objects(conn)
    wanted = {r.name: r for r in rollups}
    keep = set()
    recorded = conn.execute(f"SELECT name, sha1, objects FROM {ROLLUPS_TABLE}").fetchall()
    for name, sha, objects in recorded:
        made = [tuple(line.split(" ", 1)) for line in objects.splitlines()]
        rollup = wanted.get(name)
        if rollup is not None and rollup.sha1 == sha and all(o in existing for o in made):
            keep.add(name)
            continue
        # Triggers first (some sit on other tables), then indexes, then tables.
        for kind in ("trigger", "index", "table"):
            for made_kind, made_name in made:
                if made_kind == kind:
                    conn.execute(f'DROP {kind.upper()} IF EXISTS "{made_name}"')
        conn.execute(f"DELETE FROM {ROLLUPS_TABLE} WHERE name = ?", (name,))
    for rollup in rollups:
        if rollup.name in keep:
            continue
        before = _objects(conn)
        try:
            for statement in rollup.ddl:
                conn.execute(statement)
            for statements in rollup.adds.values():
                for statement in statements:
                    conn.execute(statement, {"lo": 0})
        except Error as e:
            raise RollupError(f"rollup {rollup.name} failed: {e}") from None
        made = _objects(conn) - before
        conn.execute(
            f"INSERT INTO {ROLLUPS_TABLE} (name, sha1, objects) VALUES (?, ?, ?)",
            (rollup.name, rollup.sha1, "\n".join(f"{k} {n}" for k, n in sorted(made))),
        )


def _objects(conn):
    return {(kind, name) for kind, name in conn.execute("SELECT type, name FROM sqlite_master")}
