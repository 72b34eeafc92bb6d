"""Open the plantune database as the rules need it: migrated, and seeded with the registry.

``toolkit.store.db`` opens and migrates the file but knows nothing of questions; this is
where the bundled question registry and signal map are handed to it, to be loaded into an
empty database in the same transaction that creates the schema. Every command opens the
database through here.
"""

from toolkit.store import db


def seed(conn):
    """Load the bundled registry and signal map into a database that has none."""
    if conn.execute("SELECT 1 FROM registry_questions LIMIT 1").fetchone():
        return
    from toolkit.core import registry

    registry.load_bundled(conn)


def connect(path, migrate=True, schema=None, readonly=False):
    """``db.connect`` with the registry as its seed."""
    return db.connect(path, migrate=migrate, schema=schema, readonly=readonly, seed=seed)
