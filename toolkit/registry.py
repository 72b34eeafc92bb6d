"""The question registry and the signal map: bundled data, loading and listing."""

import json
import os

from toolkit.db import utc_now

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
REGISTRY_FILE = os.path.join(DATA_DIR, "registry.json")
SIGNAL_MAP_FILE = os.path.join(DATA_DIR, "signal-map.json")
DIMENSIONS = ("scope_appetite", "risk_tolerance", "detail_preference", "autonomy", "architecture_care")


def bundled_registry():
    with open(REGISTRY_FILE, encoding="utf-8") as f:
        return json.load(f)


def bundled_signal_map():
    with open(SIGNAL_MAP_FILE, encoding="utf-8") as f:
        return json.load(f)


def replace_registry(conn, entries, origin):
    """Replace every registry row with ``entries`` (caller holds the transaction)."""
    now = utc_now()
    conn.execute("DELETE FROM registry_questions")
    conn.executemany(
        "INSERT INTO registry_questions (id, skill, category, door_type, options_json, signal_key,"
        " description, origin, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                e["id"],
                e["skill"],
                e["category"],
                e["door_type"],
                None if e.get("options") is None else json.dumps(e["options"]),
                e.get("signal_key"),
                e.get("description") or "",
                origin,
                now,
            )
            for e in entries
        ],
    )


def replace_signal_map(conn, signal_map):
    conn.execute("DELETE FROM signal_map")
    rows = []
    for key, choices in signal_map["map"].items():
        for choice, deltas in choices.items():
            for dim, delta in deltas:
                rows.append((key, choice, dim, float(delta)))
    conn.executemany(
        "INSERT INTO signal_map (signal_key, user_choice, dimension, delta) VALUES (?, ?, ?, ?)", rows
    )
    conn.execute(
        "INSERT OR REPLACE INTO plantune_meta (key, value) VALUES ('signal_map_version', ?)",
        (signal_map.get("signal_map_version", ""),),
    )


def load_bundled(conn):
    """Fill the registry and signal map tables from the copies shipped with plantune."""
    replace_registry(conn, bundled_registry(), origin="bundled")
    replace_signal_map(conn, bundled_signal_map())


def list_questions(conn):
    rows = conn.execute(
        "SELECT id, skill, category, door_type, options_json, signal_key, description, origin"
        " FROM registry_questions ORDER BY skill, id"
    ).fetchall()
    out = []
    for r in rows:
        d = dict(r)
        options = d.pop("options_json")
        d["options"] = json.loads(options) if options is not None else None
        out.append(d)
    return out


def door_types(conn):
    """Map of registered id → door type, read from the database (the synced registry wins)."""
    return dict(conn.execute("SELECT id, door_type FROM registry_questions"))


# --------------------------------------------------------------------------
# Pure helpers over the registry entries and the signal map (gstack's
# question-registry.ts and psychographic-signals.ts), for lint, tests and the profile.


def lookup(entries, question_id):
    """The registry entry for ``question_id``, or None for an ad-hoc id."""
    for e in entries:
        if e["id"] == question_id:
            return e
    return None


def one_way_ids(entries):
    return {e["id"] for e in entries if e["door_type"] == "one-way"}


def stats(entries):
    """``{total, one_way, two_way, by_skill, by_category}`` as gstack's registry stats."""
    by_skill, by_category = {}, {}
    for e in entries:
        by_skill[e["skill"]] = by_skill.get(e["skill"], 0) + 1
        by_category[e["category"]] = by_category.get(e["category"], 0) + 1
    one_way = len(one_way_ids(entries))
    return {"total": len(entries), "one_way": one_way, "two_way": len(entries) - one_way,
            "by_skill": by_skill, "by_category": by_category}


def apply_signal(signal_map, signal_key, user_choice, totals=None):
    """The ``(dimension, delta)`` pairs one answer contributes, added to ``totals`` if given.

    ``signal_map`` is the ``map`` object of the signal map. An unknown signal_key or
    choice contributes nothing and leaves ``totals`` untouched.
    """
    deltas = (signal_map.get(signal_key) or {}).get(user_choice)
    if not deltas:
        return []
    pairs = [(dim, delta) for dim, delta in deltas]
    if totals is not None:
        for dim, delta in pairs:
            totals[dim] = totals.get(dim, 0) + delta
    return pairs


def normalize(total):
    """``1 / (1 + e^(-3 total))`` rounded half-up to 3 decimals, as JS ``toFixed(3)`` does
    on the exact binary value (Python's ``round`` is half-even)."""
    import math
    from decimal import ROUND_HALF_UP, Decimal

    try:
        value = 1.0 / (1.0 + math.exp(-3.0 * total))
    except OverflowError:  # a hugely negative total
        value = 0.0
    return float(Decimal(value).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP))
