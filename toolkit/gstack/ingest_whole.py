"""Importing gstack's whole-file JSON stores: question-preferences.json and
developer-profile.json, made to match the file whenever the file changed.
"""

from __future__ import annotations

import json
import re

from toolkit.core import identity
from toolkit.core.vocabulary import DIMENSIONS
from toolkit.core.vocabulary import PREFERENCES as PREFERENCE_VALUES
from toolkit.gstack import file_state
from toolkit.gstack.file_state import DEVELOPER_PROFILE
from toolkit.gstack.ingest_base import (
    PREFERENCE_FILE_SOURCE,
    PROFILE_SOURCE,
    StrictError,
    decode_json,
    mtime_ts,
)
from toolkit.gstack.ingest_jsonl import LONE_SURROGATE, SESSION_SQL, session_row, storable
from toolkit.gstack.ingest_tx import Tx
from toolkit.store import db, json_lite
from toolkit.store.digest import sha1 as _sha1

# ---------------------------------------------------------------------------
# Whole-file JSON stores


def _line_of(text, needle, start=0):
    """1-based line of the first ``needle`` at or after ``start`` (for file:line reports)."""
    i = text.find(needle, start)
    return text.count("\n", 0, i) + 1 if i >= 0 else None


_BAD_NUMBER = re.compile(r"[0-9][eE]\+?[0-9]{3}|[0-9]{300}|NaN|Infinity")


def _line_of_bad_value(text):
    """The line of the first number a whole-file store cannot hold (1 when not found)."""
    m = _BAD_NUMBER.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else 1


def _load_object(report, data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        report.skip(1, "not valid UTF-8")
        return None, None
    try:
        obj = decode_json(text)
    except json_lite.BadValue as e:
        report.skip(_line_of_bad_value(text), str(e))
        return None, text
    except json.JSONDecodeError as e:
        report.skip(e.lineno, f"invalid JSON ({e.msg})")
        return None, text
    except (ValueError, RecursionError):
        report.skip(1, "invalid JSON")
        return None, text
    if not isinstance(obj, dict):
        report.skip(1, "not a JSON object")
        return None, text
    return obj, text


def _apply_preferences(conn, report, obj, text, scope, st):
    """Make the scope's real preference rows say what the file says.

    The file is real: a row it sets is real (synthetic = 0) even where a simulated one was,
    and simulated rows it does not mention are left alone (they never reach the file).
    """
    current = {
        r[0]: (r[1], r[2])
        for r in conn.execute(
            "SELECT question_id, preference, raw_value FROM preferences WHERE scope = ?"
            " AND synthetic = 0",
            (scope,),
        )
    }
    file_ts = mtime_ts(st)
    seen = set()
    for qid, value in obj.items():
        qid = LONE_SURROGATE.sub("\ufffd", qid)
        if isinstance(value, str):
            value = LONE_SURROGATE.sub("\ufffd", value)
        if not qid:
            report.skip(_line_of(text, '""'), "empty question id")
            continue
        seen.add(qid)
        if isinstance(value, str) and value in PREFERENCE_VALUES:
            pref, raw = value, None
        else:
            # gstack keeps such values (and `--check` answers ASK_NORMALLY with a NOTE); so do we.
            pref = "unknown"
            raw = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if current.get(qid) == (pref, raw):
            report.duplicate += 1
            continue
        event = conn.execute(
            "SELECT source, free_text, ts FROM preference_events WHERE scope = ?"
            " AND question_id = ? AND event_type = 'preference-set' AND preference IS ?"
            " ORDER BY ts DESC, id DESC LIMIT 1",
            (scope, qid, value if isinstance(value, str) else None),
        ).fetchone()
        source, free_text, ts = event if event else (PREFERENCE_FILE_SOURCE, None, file_ts)
        conn.execute(
            "INSERT INTO preferences (scope, question_id, preference, raw_value, source,"
            " free_text, updated_at, developer) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (scope, question_id) DO UPDATE SET preference = excluded.preference,"
            " raw_value = excluded.raw_value, source = excluded.source,"
            " free_text = excluded.free_text, synthetic = 0, updated_at = excluded.updated_at,"
            " developer = excluded.developer",
            storable(
                (
                    scope,
                    qid,
                    pref,
                    raw,
                    source or PREFERENCE_FILE_SOURCE,
                    free_text,
                    ts or file_ts,
                    identity.developer(),
                )
            ),  # raw may be JSON text
        )
        if qid in current:
            report.updated += 1
        else:
            report.imported += 1
    gone = [qid for qid in current if qid not in seen]
    for qid in gone:
        conn.execute(
            "DELETE FROM preferences WHERE scope = ? AND question_id = ? AND synthetic = 0",
            (scope, qid),
        )
    report.removed += len(gone)


def _apply_profile(conn, report, obj, text, st):
    """Declared values -> declared_profile ('__global__'); sessions -> office_hours_sessions."""
    declared = obj.get("declared")
    if declared is not None and not isinstance(declared, dict):
        report.skip(_line_of(text, '"declared"'), "declared must be an object")
    elif isinstance(declared, dict):
        at = obj.get("declared_at")
        at = at if isinstance(at, str) and at else mtime_ts(st)
        start = text.find('"declared"')
        current = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT dimension, value FROM declared_profile WHERE scope = ? AND synthetic = 0",
                (db.GLOBAL_SCOPE,),
            )
        }
        keep = set()
        for dim, value in declared.items():
            line = _line_of(text, json.dumps(dim), max(start, 0))
            if dim not in DIMENSIONS:
                report.skip(line, f"declared.{dim}: unknown dimension")
                continue
            keep.add(dim)  # an invalid value leaves the stored one alone
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not (ok and 0 <= value <= 1):
                report.skip(line, f"declared.{dim}: must be a number between 0 and 1")
                continue
            if current.get(dim) == float(value):
                report.duplicate += 1
                continue
            conn.execute(
                "INSERT INTO declared_profile (scope, dimension, value, source, declared_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, dimension) DO UPDATE SET"
                " value = excluded.value, source = excluded.source, synthetic = 0,"
                " declared_at = excluded.declared_at",
                (db.GLOBAL_SCOPE, dim, float(value), PROFILE_SOURCE, at),
            )
            if dim in current:
                report.updated += 1
            else:
                report.imported += 1
        gone = [d for d in current if d not in keep]
        for dim in gone:
            conn.execute(
                "DELETE FROM declared_profile WHERE scope = ? AND dimension = ? AND synthetic = 0",
                (db.GLOBAL_SCOPE, dim),
            )
        report.removed += len(gone)

    sessions = obj.get("sessions")
    if sessions is None:
        return
    if not isinstance(sessions, list):
        report.skip(_line_of(text, '"sessions"'), "sessions must be an array")
        return
    recorded_at = db.utc_now()
    rows = []
    for i, session in enumerate(sessions):
        if not isinstance(session, dict):
            report.skip(_line_of(text, '"sessions"'), f"sessions[{i}]: not a JSON object")
            continue
        rows.append(storable(session_row(session, DEVELOPER_PROFILE, recorded_at)))
    inserted = conn.executemany(SESSION_SQL, rows).rowcount if rows else 0
    report.imported += inserted
    report.duplicate += len(rows) - inserted


def read_whole(job):
    """Make the store match the whole file of ``job`` (a :class:`FileRead`) when it changed;
    returns the job's report."""
    conn, path, kind, report, st = job.conn, job.path, job.kind, job.report, job.st
    state, strict, progress = job.state, job.strict, job.progress
    tx = Tx(conn)
    tx.begin()
    try:
        if tx.own:
            state = file_state.load(conn, [path]).get(path)
            if state is not None and state.unchanged(st):
                report.status = "unchanged"
                tx.commit()
                return report
        # Read under the write lock (see the module docstring).
        data = job.fh.read()
        digest = _sha1(data).hexdigest()
        report.bytes_read = len(data)
        if progress:
            progress(len(data))
        if state is not None and state.head == digest:
            # Touched but identical: remember the new stat so the next run is a stat again.
            file_state.save(conn, path, kind, st, len(data), 0, digest, digest)
            tx.commit()
            return report
        obj, text = _load_object(report, data)
        if obj is not None:
            if kind == "question-preferences":
                _apply_preferences(conn, report, obj, text, job.project, st)
            else:
                _apply_profile(conn, report, obj, text, st)
        if strict and report.skipped:
            bad = next(i for i in report.issues if i.skip)
            raise StrictError(report, bad.line, bad.message)
        if obj is not None:
            # A file we could not parse keeps no state: it is read (and reported) again next
            # time, and a half-written file is picked up once its writer finishes.
            file_state.save(conn, path, kind, st, len(data), 0, digest, digest)
        tx.commit()
    except BaseException:
        tx.rollback()
        raise
    finally:
        report.add_holds(tx.holds)
    return report
