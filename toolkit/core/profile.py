"""The developer profile: declared values, inferred values, gap, diversity gate, trace.

Inferred values are never stored: they are read from the ``inferred_profile`` view, a pure
function of the question log, the registry and the signal map, so a signal-map change or a
new event shows up on the next read and two concurrent derives cannot race. The declared
profile (what the user says about themselves) and the office-hours sessions are rows.

This module is imported by the ``gstack-developer-profile`` console script, so it uses the
standard library only.
"""

import math
import os

# json_lite and store.digest: the json package (and re with it) and hashlib (OpenSSL) cost
# every derive, which agents run after each logged question, milliseconds to import.
from toolkit.core.jscompat import (
    in_property_order,
    is_falsy,
    number_string_exact_ints,
    round3,
    stringify_indented,
    stringify_plain,
    value_string,
)
from toolkit.core.vocabulary import DIMENSIONS, plural
from toolkit.store import db
from toolkit.store import json_lite as json

DIMENSION_WORDS = {
    "scope_appetite": ("small scope, ship fast", "boil the ocean"),
    "risk_tolerance": ("conservative, ask first", "move fast, auto-decide"),
    "detail_preference": ("terse", "verbose"),
    "autonomy": ("hands-on, consult me", "delegate"),
    "architecture_care": ("pragmatic, ship it", "principled, get it right"),
}

# gstack's "enough data" display gate: below it the inferred values are not shown.
GATE = {"sample_size": 20, "skills_covered": 3, "question_ids_covered": 8, "distinct_days": 7}
MISMATCH_MIN_SAMPLE = 10
MISMATCH_GAP = 0.3
NEUTRAL = 0.5

# `profile setup`: A/B/C answers. B is "balanced"; gstack's fixtures use 0.5 for it.
SETUP_VALUES = {"a": 0.25, "b": 0.5, "c": 0.85}
SETUP_QUESTIONS = (
    (
        "scope_appetite",
        "When a plan could grow, what do you usually want?",
        ("Keep it small and ship", "Depends on the project", "Build the full thing properly"),
    ),
    (
        "risk_tolerance",
        "When the agent is unsure about a reversible step, should it…",
        ("Stop and ask me first", "Use judgement", "Just go ahead and tell me after"),
    ),
    (
        "detail_preference",
        "How much explanation do you want with each question?",
        ("Short and to the point", "Some context", "The full reasoning"),
    ),
    (
        "autonomy",
        "How much should the agent decide on its own?",
        (
            "Consult me on most choices",
            "Routine ones alone, big ones with me",
            "Delegate almost everything",
        ),
    ),
    (
        "architecture_care",
        "Pragmatic shortcut or principled design, when they conflict?",
        ("Ship the shortcut", "Case by case", "Get the design right first"),
    ),
)


class ProfileError(Exception):
    """Bad input to a profile operation, explained in one sentence."""


# --------------------------------------------------------------------------
# numbers the way gstack prints them


def _string(v):
    """``String(v)`` with the profile's number formatting."""
    return value_string(v, number_string_exact_ints)


def canonical_json(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------
# inferred profile, diversity, gap, trace


def neutral_values():
    return {d: NEUTRAL for d in DIMENSIONS}


def inferred(conn, project, synthetic=0):
    """``{"values", "totals", "events"}`` for ``project`` (``db.ALL_PROJECTS`` for all)."""
    rows = conn.execute(
        "SELECT dimension, total_delta, value, events FROM inferred_profile"
        " WHERE project = ? AND synthetic = ? ORDER BY position",
        (project, synthetic),
    ).fetchall()
    out = {
        "values": neutral_values(),
        "totals": {d: 0.0 for d in DIMENSIONS},
        "events": {d: 0 for d in DIMENSIONS},
    }
    for r in rows:
        out["values"][r["dimension"]] = r["value"]
        out["totals"][r["dimension"]] = r["total_delta"]
        out["events"][r["dimension"]] = r["events"]
    return out


def diversity(conn, project, synthetic=0):
    """The profile_diversity row for ``project`` (zeros when it has no counted events)."""
    row = conn.execute(
        "SELECT sample_size, skills_covered, question_ids_covered, distinct_days,"
        " calendar_span_days, first_day, last_day, enough_data FROM profile_diversity"
        " WHERE project = ? AND synthetic = ?",
        (project, synthetic),
    ).fetchone()
    if row is None:
        return {
            "sample_size": 0,
            "skills_covered": 0,
            "question_ids_covered": 0,
            "distinct_days": 0,
            "calendar_span_days": 0,
            "first_day": None,
            "last_day": None,
            "enough_data": False,
        }
    d = dict(row)
    d["enough_data"] = bool(d["enough_data"])
    return d


def shortfall(div):
    """What is missing below the display gate: ``{"events": n, "skills": m, ...}`` (0 = met)."""
    return {
        "events": max(0, GATE["sample_size"] - div["sample_size"]),
        "skills": max(0, GATE["skills_covered"] - div["skills_covered"]),
        "question_ids": max(0, GATE["question_ids_covered"] - div["question_ids_covered"]),
        "days": max(0, GATE["distinct_days"] - div["distinct_days"]),
    }


def _plural(n, word):
    return f"{n} more {word}" + ("" if n == 1 else "s")


def gate_message(div):
    """Plain-English verdict on the display gate, or None when there is enough data."""
    if div["enough_data"]:
        return None
    s = shortfall(div)
    parts = []
    if s["events"]:
        parts.append(_plural(s["events"], "event"))
    if s["skills"]:
        parts.append(_plural(s["skills"], "skill"))
    if s["question_ids"]:
        parts.append(_plural(s["question_ids"], "different question"))
    if s["days"]:
        parts.append(_plural(s["days"], "day"))
    if len(parts) > 1:
        need = (
            f"{parts[0]} across "
            + ", ".join(parts[1:-1])
            + (" and " if len(parts) > 2 else "")
            + parts[-1]
        )
    else:
        need = parts[0]
    return (
        f"Not enough observed data yet — need {need} before the inferred values mean much "
        f"(have {plural(div['sample_size'], 'event')}, {plural(div['skills_covered'], 'skill')}, "
        f"{plural(div['question_ids_covered'], 'question')}, {plural(div['distinct_days'], 'day')})."
    )


# The word for a wide gap on fewer answers than a mismatch needs (MISMATCH_MIN_SAMPLE);
# the profile_gap view uses the same words and threshold.
WIDE_GAP_WORD = "wide"


def gap_word(gap, sample_size=None):
    """close / drift / mismatch; with ``sample_size``, a wide gap on fewer answers than
    ``mismatch`` needs is only "wide", so ``profile gap``, the profile_gap view and
    ``profile mismatch`` agree."""
    if gap < 0.1:
        return "close"
    if gap <= MISMATCH_GAP:
        return "drift"
    if sample_size is not None and sample_size < MISMATCH_MIN_SAMPLE:
        return WIDE_GAP_WORD
    return "mismatch"


def gap(declared_values, inferred_values):
    """``{dim: round3(|declared - inferred|)}`` for dimensions present on both sides."""
    return {
        d: round3(abs(declared_values[d] - inferred_values[d]))
        for d in declared_values
        if d in inferred_values
    }


def mismatch(declared_values, inferred_values, sample_size):
    """``None`` below the sample threshold, else ``[(dim, declared, inferred, gap), ...]``."""
    if sample_size < MISMATCH_MIN_SAMPLE:
        return None
    flagged = []
    for d, value in declared_values.items():
        if d not in inferred_values:
            continue
        # Compared after rounding: gstack compares the raw difference, so 0.8 vs 0.5
        # (0.30000000000000004) was flagged while printing "gap 0.3".
        g = round3(abs(value - inferred_values[d]))
        if g > MISMATCH_GAP:
            flagged.append((d, value, inferred_values[d], g))
    return flagged


def trace(conn, project, dimension, synthetic=0):
    """Every event of ``project`` that moved ``dimension``, oldest first."""
    return [
        dict(r)
        for r in conn.execute(
            "SELECT event_id, ts, skill, question_id, user_choice, source, signal_key, delta"
            " FROM dimension_trace WHERE project = ? AND synthetic = ? AND dimension = ?"
            " ORDER BY event_id",
            (project, synthetic, dimension),
        )
    ]


def has_events(conn, project):
    return (
        conn.execute("SELECT 1 FROM question_log WHERE project = ? LIMIT 1", (project,)).fetchone()
        is not None
    )


def signals_loaded(conn):
    """True when the registry and the signal map both have rows (derive needs them)."""
    return bool(
        conn.execute(
            "SELECT 1 FROM registry_questions WHERE signal_key IS NOT NULL LIMIT 1"
        ).fetchone()
        and conn.execute("SELECT 1 FROM signal_map LIMIT 1").fetchone()
    )


# --------------------------------------------------------------------------
# declared profile


def declared(conn, synthetic=None):
    """``{dim: value}`` of the global declared profile, in dimension order.

    Values made up by ``plantune simulate`` count only in a demo database; ``synthetic``
    (0 or 1) keeps only the real or only the simulated values, for a view of one history.
    """
    where = "synthetic = ?" if synthetic is not None else db.real_rows()
    args = (db.GLOBAL_SCOPE,) if synthetic is None else (db.GLOBAL_SCOPE, int(synthetic))
    rows = dict(
        conn.execute(
            "SELECT dimension, value FROM declared_profile WHERE scope = ? AND " + where,
            args,
        ).fetchall()
    )
    return {d: rows[d] for d in DIMENSIONS if d in rows}


def declared_at(conn):
    row = conn.execute(
        "SELECT max(declared_at) FROM declared_profile WHERE scope = ? AND " + db.real_rows(),
        (db.GLOBAL_SCOPE,),
    ).fetchone()
    return row[0]


def parse_declared_value(dimension, value):
    """Validate a user-declared value; returns a float in [0, 1] or raises ProfileError."""
    if dimension not in DIMENSIONS:
        raise ProfileError(
            f"unknown dimension '{dimension}' (expected one of: {', '.join(DIMENSIONS)})"
        )
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ProfileError(
            f"value for {dimension} must be a number between 0 and 1, got '{value}'"
        ) from None
    if math.isnan(number) or not 0 <= number <= 1:
        raise ProfileError(f"value for {dimension} must be between 0 and 1, got {value}")
    return number


def set_declared(conn, values, source, now=None):
    """Upsert declared values (caller holds the transaction)."""
    now = now or db.utc_now()
    conn.executemany(
        "INSERT INTO declared_profile (scope, dimension, value, source, declared_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, dimension) DO UPDATE SET"
        " value = excluded.value, source = excluded.source, synthetic = 0,"
        " declared_at = excluded.declared_at",
        [(db.GLOBAL_SCOPE, d, float(v), source, now) for d, v in values.items()],
    )


def replace_declared(conn, values, source, now=None):
    """Make the declared profile exactly ``values`` (caller holds the transaction)."""
    current = declared(conn)
    gone = [d for d in current if d not in values]
    if gone:
        conn.executemany(
            "DELETE FROM declared_profile WHERE scope = ? AND dimension = ?",
            [(db.GLOBAL_SCOPE, d) for d in gone],
        )
    changed = {d: v for d, v in values.items() if current.get(d) != v}
    if changed:
        set_declared(conn, changed, source, now)
    return bool(gone or changed)


def setup_answers(text):
    """``"a,b,c,b,a"`` → ``{dim: value}``; one letter per dimension in dimension order."""
    letters = [x.strip().lower() for x in (text or "").split(",")]
    if len(letters) != len(DIMENSIONS) or any(x not in SETUP_VALUES for x in letters):
        raise ProfileError(
            f"--answers needs {len(DIMENSIONS)} comma-separated letters A, B or C "
            f"(one per dimension), got '{text}'"
        )
    return {d: SETUP_VALUES[x] for d, x in zip(DIMENSIONS, letters)}


# --------------------------------------------------------------------------
# office-hours sessions


def _text(v):
    if v is None:
        return None
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _list_json(v):
    return json.dumps(v if isinstance(v, list) else [], ensure_ascii=False)


def sha1_hex(data):
    """Hex SHA-1 of bytes (``toolkit.store.digest``)."""
    from toolkit.store.digest import sha1_hex

    return sha1_hex(data)


def _session_hash(session):
    return sha1_hex(canonical_json(session).encode("utf-8"))


def _existing_copies(conn, digest):
    # Keys are "<sha1>:<n>"; ':' < ';' so this is an index range over one digest.
    return conn.execute(
        "SELECT count(*) FROM office_hours_sessions WHERE session_key >= ? AND session_key < ?",
        (digest + ":", digest + ";"),
    ).fetchone()[0]


def add_sessions(conn, sessions, origin, snapshot=False):
    """Store office-hours sessions in order; returns how many were new.

    A session's key is the hash of its canonical JSON plus how many identical sessions
    come before it in the profile's ordered list, so the same list imported twice adds
    nothing while two genuinely identical sessions are both kept. ``snapshot=True`` means
    ``sessions`` is a whole list (developer-profile.json), so earlier copies are counted
    inside it; otherwise the sessions are appended after those already stored.
    """
    seen = {}
    added = 0
    now = db.utc_now()
    for s in sessions:
        digest = _session_hash(s)
        if digest not in seen:
            seen[digest] = 0 if snapshot else _existing_copies(conn, digest)
        n = seen[digest]
        seen[digest] += 1
        cur = conn.execute(
            "INSERT OR IGNORE INTO office_hours_sessions (session_key, ts, date, mode, project_slug,"
            " signals_json, resources_json, topics_json, design_doc, assignment, raw_json, origin,"
            " recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                f"{digest}:{n}",
                _text(s.get("ts")),
                _text(s.get("date")),
                _text(s.get("mode")),
                _text(s.get("project_slug")),
                _list_json(s.get("signals")),
                _list_json(s.get("resources_shown")),
                _list_json(s.get("topics")),
                _text(s.get("design_doc")),
                _text(s.get("assignment")),
                json.dumps(s, ensure_ascii=False),
                origin,
                now,
            ),
        )
        added += cur.rowcount
    return added


def sessions(conn):
    """Every office-hours session of this database's user as stored, in order (sessions
    merged from other developers' databases are theirs, not this profile's)."""
    return [
        json.loads(r[0])
        for r in conn.execute(
            "SELECT raw_json FROM office_hours_sessions WHERE merged_from IS NULL ORDER BY id"
        )
    ]


def accumulate(session_list):
    """``(signals_accumulated, resources_shown, topics)`` folded over sessions in order."""
    signals = {}
    resources, topics = [], []
    seen_r, seen_t = set(), set()
    for s in session_list:
        sig = s.get("signals")
        if isinstance(sig, list):
            for x in sig:
                key = _string(x)
                signals[key] = signals.get(key, 0) + 1
        for src, out, seen in (
            (s.get("resources_shown"), resources, seen_r),
            (s.get("topics"), topics, seen_t),
        ):
            if isinstance(src, list):
                for x in src:
                    k = canonical_json(x)
                    if k not in seen:
                        seen.add(k)
                        out.append(x)
    return in_property_order(signals), resources, topics


def tier(count):
    if count >= 8:
        return "inner_circle"
    if count >= 4:
        return "regular"
    if count >= 1:
        return "welcome_back"
    return "introduction"


def builder_summary(session_list):
    """The 14 ``KEY: VALUE`` pairs of gstack's legacy ``--read`` (gstack-builder-profile)."""
    signals, resources, topics = accumulate(session_list)
    real = [s for s in session_list if s.get("mode") != "resources"]
    last = real[-1] if real else {}

    def field(s, name):
        v = s.get(name)
        return _string(v) if not is_falsy(v) else ""

    designs = [s for s in real if not is_falsy(s.get("design_doc"))]
    total = sum(signals.values())
    cross = (
        len(real) >= 2
        and not is_falsy(real[-1].get("project_slug"))
        and not is_falsy(real[-2].get("project_slug"))
        and real[-1].get("project_slug") != real[-2].get("project_slug")
    )
    builders = sum(1 for s in real if s.get("mode") == "builder")
    return [
        ("SESSION_COUNT", str(len(real))),
        ("TIER", tier(len(real))),
        ("LAST_PROJECT", field(last, "project_slug")),
        ("LAST_ASSIGNMENT", field(last, "assignment")),
        ("LAST_DESIGN_TITLE", field(last, "design_doc")),
        ("DESIGN_COUNT", str(len(designs))),
        (
            "DESIGN_TITLES",
            stringify_plain(
                [
                    s.get("project_slug") if not is_falsy(s.get("project_slug")) else "unknown"
                    for s in designs
                ]
            ),
        ),
        ("ACCUMULATED_SIGNALS", ",".join(f"{k}:{v}" for k, v in signals.items())),
        ("TOTAL_SIGNAL_COUNT", str(total)),
        ("CROSS_PROJECT", "true" if cross else "false"),
        ("NUDGE_ELIGIBLE", "true" if builders >= 3 and total >= 5 else "false"),
        ("RESOURCES_SHOWN", ",".join("" if x is None else _string(x) for x in resources)),
        ("RESOURCES_SHOWN_COUNT", str(len(resources))),
        ("TOPICS", ",".join("" if x is None else _string(x) for x in topics)),
    ]


# --------------------------------------------------------------------------
# small facts kept in plantune_meta


def get_meta(conn, key, default=None):
    row = conn.execute("SELECT value FROM plantune_meta WHERE key = ?", (key,)).fetchone()
    return default if row is None else row[0]


def set_meta(conn, key, value):
    if value is None:
        conn.execute("DELETE FROM plantune_meta WHERE key = ?", (key,))
    else:
        conn.execute(
            "INSERT OR REPLACE INTO plantune_meta (key, value) VALUES (?, ?)", (key, value)
        )


META_EXTRA = "profile_extra_json"  # identity, overrides and unknown keys of the JSON file
META_DERIVED_AT = "profile_derived_at"
META_MIGRATED_AT = "profile_migrated_at"


def extras(conn):
    try:
        value = json.loads(get_meta(conn, META_EXTRA, "{}"))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# --------------------------------------------------------------------------
# the unified profile document (gstack's developer-profile.json shape)

# Keys plantune rebuilds from rows; anything else in the file is kept as an extra.
DOCUMENT_KEYS = (
    "identity",
    "declared",
    "inferred",
    "gap",
    "overrides",
    "sessions",
    "signals_accumulated",
    "resources_shown",
    "topics",
    "migrated_at",
    "derived_at",
    "declared_at",
    "schema_version",
)


def document(conn, project, synthetic=0):
    """The profile as gstack's ``developer-profile.json`` holds it, built from the database.

    ``inferred`` is computed for ``project`` now (gstack stores whatever the last derive
    wrote, for whichever project ran it).
    """
    extra = extras(conn)
    dec = declared(conn)
    inf = inferred(conn, project, synthetic)
    div = diversity(conn, project, synthetic)
    session_list = sessions(conn)
    signals, resources, topics = accumulate(session_list)
    doc = {
        "identity": extra.get("identity", {}),
        "declared": dec,
        "inferred": {
            "values": inf["values"],
            "sample_size": div["sample_size"],
            "diversity": {
                "skills_covered": div["skills_covered"],
                "question_ids_covered": div["question_ids_covered"],
                "days_span": div["distinct_days"],
            },
        },
        "gap": gap(dec, inf["values"]),
        "overrides": extra.get("overrides", {}),
        "sessions": session_list,
        "signals_accumulated": signals,
    }
    migrated_at = get_meta(conn, META_MIGRATED_AT)
    if session_list or migrated_at:
        doc["resources_shown"] = resources
        doc["topics"] = topics
    if migrated_at:
        doc["migrated_at"] = migrated_at
    derived_at = get_meta(conn, META_DERIVED_AT)
    if derived_at:
        doc["derived_at"] = derived_at
    when = declared_at(conn) or extra.get("declared_at")
    if when:
        doc["declared_at"] = when
    doc["schema_version"] = 1
    for k, v in extra.items():
        if k not in DOCUMENT_KEYS and k not in doc:
            doc[k] = v
    return doc


def export(conn, path, project, force=False):
    """Write the unified profile to ``path`` (mode 0600); never overwrites unless ``force``."""
    doc = document(conn, project)
    doc["plantune"] = {
        "exported_at": db.utc_now(),
        "project": project,
        "inferred_by_project": {
            r[0]: inferred(conn, r[0])["values"]
            for r in conn.execute(
                "SELECT DISTINCT project FROM inferred_profile WHERE synthetic = 0 ORDER BY project"
            )
        },
    }
    if os.path.isdir(path):
        raise ProfileError(f"{path} is a folder; give a file name")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ProfileError(f"folder {parent} does not exist")
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if force else os.O_EXCL)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        raise ProfileError(f"{path} already exists (use --force to overwrite)") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(stringify_indented(doc) + "\n")
    os.chmod(path, 0o600)
    return doc


# --------------------------------------------------------------------------
# delete


def _scoped(sql, project, column="project"):
    """``sql`` limited to ``project`` (None: every row), and its parameters."""
    if project is None:
        return sql, ()
    joiner = " AND " if " WHERE " in sql else " WHERE "
    return f"{sql}{joiner}{column} = ?", (project,)


def delete_counts(conn, project=None):
    """How many rows ``delete`` would remove (``project=None`` means everything)."""

    def n(sql, column="project"):
        return conn.execute(*_scoped(f"SELECT count(*) FROM {sql}", project, column)).fetchone()[0]

    counts = {"question_log": n("question_log")}
    if project is None:
        counts["declared_profile"] = n("declared_profile")
    counts["office_hours_sessions"] = n("office_hours_sessions", "project_slug")
    # Pacing history and typed preference text are named only when there is some.
    extra = {
        "findings": n("findings"),
        "pacing_runs": n("pacing_runs"),
    }
    if project is None:
        extra["preference_events"] = n("preference_events")
    else:
        extra["preference_free_text"] = n(
            "preference_events WHERE free_text IS NOT NULL AND free_text != ''", "scope"
        )
    counts.update((k, v) for k, v in extra.items() if v)
    return counts


def deleted_texts(conn, project=None):
    """The free text the delete removes (summaries, answers, typed text), to find the
    lines about it elsewhere (hook-errors.log)."""
    queries = [
        ("SELECT question_summary FROM question_log", "project"),
        ("SELECT free_text FROM question_log WHERE free_text IS NOT NULL", "project"),
        ("SELECT summary FROM findings", "project"),
        ("SELECT free_text FROM preference_events WHERE free_text IS NOT NULL", "scope"),
    ]
    texts = set()
    for sql, column in queries:
        texts.update(r[0] for r in conn.execute(*_scoped(sql, project, column)) if r[0])
    return texts


def delete(conn, project=None):
    """Remove the profile's rows and VACUUM so the deleted bytes leave the file.

    ``project=None`` removes every question event, the declared profile, every
    office-hours session and the profile's bookkeeping; a project removes that project's
    question events and the office-hours sessions about it. Either way the pacing
    findings and ranked runs (their summaries and answers) of the scope go, and the typed
    free text of its preference events (for everything: every preference event, the
    history of the preferences; the preferences themselves stay). Deleted
    events leave a tombstone (their key), so no copy of their line is imported again.
    ``secure_delete`` zeroes freed pages, VACUUM rebuilds the file and a TRUNCATE
    checkpoint empties the WAL, so no copy survives in either file.
    """
    counts = delete_counts(conn, project)
    conn.execute("PRAGMA secure_delete = ON")
    with db.transaction(conn):
        db.tombstone(
            conn,
            [r[0] for r in conn.execute(*_scoped("SELECT event_key FROM question_log", project))],
            "question-log",
        )
        # Everything: every preference event; a project: those with typed text.
        events = "preference_events" + (
            "" if project is None else " WHERE free_text IS NOT NULL AND free_text != ''"
        )
        free = _scoped(f"SELECT event_key FROM {events}", project, "scope")
        db.tombstone(conn, [r[0] for r in conn.execute(*free)], "question-events")
        conn.execute(*_scoped(f"DELETE FROM {events}", project, "scope"))
        conn.execute(
            *_scoped(
                "UPDATE preferences SET free_text = NULL WHERE free_text IS NOT NULL",
                project,
                "scope",
            )
        )
        conn.execute(*_scoped("DELETE FROM pacing_runs", project))
        conn.execute(*_scoped("DELETE FROM findings", project))
        conn.execute(*_scoped("DELETE FROM pacing_chains", project))
        if project is None:
            conn.execute(
                "UPDATE findings SET answer_event_id = NULL WHERE answer_event_id IS NOT NULL"
            )
            conn.execute("DELETE FROM question_log")
            conn.execute("DELETE FROM declared_profile")
            conn.execute("DELETE FROM office_hours_sessions")
            for key in (META_EXTRA, META_DERIVED_AT, META_MIGRATED_AT):
                set_meta(conn, key, None)
            conn.execute(
                "DELETE FROM ingest_state WHERE kind IN ('developer-profile', 'builder-profile')"
            )
        else:
            conn.execute(
                "UPDATE findings SET answer_event_id = NULL WHERE answer_event_id IN"
                " (SELECT id FROM question_log WHERE project = ?)",
                (project,),
            )
            conn.execute("DELETE FROM question_log WHERE project = ?", (project,))
            conn.execute("DELETE FROM office_hours_sessions WHERE project_slug = ?", (project,))
    return counts


def vacuum(conn):
    """Rebuild the file and empty the WAL, so deleted bytes survive in neither. Returns
    False when a reader kept the WAL from being emptied (it is emptied later)."""
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("VACUUM")
    return db.empty_wal(conn)
