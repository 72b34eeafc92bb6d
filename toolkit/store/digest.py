"""SHA-1 for deterministic keys and file fingerprints, from CPython's own ``_sha1``.

``hashlib`` would load OpenSSL's binding first, at a cost to every hot call (``--check``,
``--summary-stdin``, ``gstack-question-log``, both hooks) that
``benchmarks/hot_path.py`` measures (measured: see docs/performance.md, section "What the hot path leaves out"), so this stays.

Only the standard library is imported here: this module is on the hot path.
"""

try:
    from _sha1 import sha1
except ImportError:  # pragma: no cover - interpreters built without it
    from hashlib import sha1


def sha1_hex(data):
    """Hex SHA-1 of bytes."""
    return sha1(data).hexdigest()
