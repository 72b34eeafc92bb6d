"""The former name of ``toolkit.core.seeded_db``, kept only for ``toolkit/gstack/*`` while
that package is being rewritten (its modules are PENDING in tests/test_import_rules.py).
Nothing else imports it; it goes when those imports name ``seeded_db``."""

from toolkit.core.seeded_db import connect, seed

__all__ = ["connect", "seed"]
