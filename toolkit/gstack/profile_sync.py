"""gstack's profile files as shared state: developer-profile.json and builder-profile.jsonl.

The database is the record; gstack's files are kept current for gstack's own skill
scripts (the mirror) and are read back because other writers touch them: the /plan-tune
skill edits ``declared`` inside developer-profile.json, gstack's own bins may still run
during a switch-over, and /office-hours may drop a legacy builder-profile.jsonl at any
time. Before answering, a compat command stats both files (two syscalls when nothing
changed) and imports what changed since plantune last wrote or read them.

The mirror is written under the database write lock, so concurrent commands cannot
leave an older picture on disk after a newer one. A failed mirror write never fails the
command: the change is in the database and the next write repairs the file.

Standard library only: the compat console script imports this.
"""

import os
import sys
import time

from toolkit.core import jscompat, profile
from toolkit.gstack import file_state
from toolkit.store import db, safe_io
from toolkit.store import json_lite as json

PROFILE_FILE = "developer-profile.json"
LEGACY_FILE = "builder-profile.jsonl"
KIND_PROFILE = "developer-profile"
KIND_LEGACY = "builder-profile"


def mirror_enabled(env=None):
    from toolkit.gstack import mirror

    return mirror.enabled(env)


def profile_path(root):
    return os.path.join(root, PROFILE_FILE)


def legacy_path(root):
    return os.path.join(root, LEGACY_FILE)


def _warn(message):
    print(message, file=sys.stderr)


def _stat_key(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


# --------------------------------------------------------------------------
# developer-profile.json → database


def _clean_declared(block):
    """Declared values from the file: numbers only, clamped to [0, 1] like the skill does."""
    out = {}
    if not isinstance(block, dict):
        return out
    for dim in profile.DIMENSIONS:
        v = block.get(dim)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
            if v is not None:
                _warn(f"{PROFILE_FILE}: declared.{dim} is not a number; ignored")
            continue
        out[dim] = min(1.0, max(0.0, float(v)))
    return out


def import_profile(conn, data):
    """Fold a developer-profile.json object into the database (caller holds the transaction).

    ``declared`` replaces the declared profile (the file is where the skill edits it);
    sessions are added as a snapshot (identical lists add nothing); identity, overrides
    and keys plantune does not model are kept so the mirror writes them back. ``inferred``
    and ``gap`` are ignored: they are derived from the question log.
    """
    changed = profile.replace_declared(
        conn,
        _clean_declared(data.get("declared")),
        source=PROFILE_FILE,
        now=data.get("declared_at") if isinstance(data.get("declared_at"), str) else None,
    )
    session_list = (
        [s for s in data.get("sessions") or [] if isinstance(s, dict)]
        if isinstance(data.get("sessions"), list)
        else []
    )
    changed = (
        profile.add_sessions(conn, session_list, origin=PROFILE_FILE, snapshot=True) > 0 or changed
    )
    extra = {
        k: v
        for k, v in data.items()
        if k in ("identity", "overrides") or k not in profile.DOCUMENT_KEYS
    }
    if extra != profile.extras(conn):
        profile.set_meta(conn, profile.META_EXTRA, json.dumps(extra, ensure_ascii=False))
        changed = True
    if isinstance(data.get("migrated_at"), str) and not profile.get_meta(
        conn, profile.META_MIGRATED_AT
    ):
        profile.set_meta(conn, profile.META_MIGRATED_AT, data["migrated_at"])
    return changed


def _pick_up_profile(conn, root):
    """Import developer-profile.json if it changed since plantune last saw it."""
    path = os.path.abspath(profile_path(root))
    key = _stat_key(path)
    if key is None:
        return False
    rec = file_state.whole_read(conn, path)
    if rec is not None and rec[:3] == key:
        return False
    try:
        raw = safe_io.read_bytes(path)
    except OSError as e:
        _warn(f"cannot read {PROFILE_FILE}: {safe_io.describe(e)}; using the database copy")
        return False
    digest = profile.sha1_hex(raw)
    if rec is not None and rec[3] == digest:
        file_state.save_whole_read(conn, path, KIND_PROFILE, key, digest)  # touched, not changed
        return False
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except ValueError as e:
        _warn(f"{PROFILE_FILE} is not valid JSON ({e}); using the database copy")
        file_state.save_whole_read(conn, path, KIND_PROFILE, key, digest)
        return True  # rewrite the file from the database
    changed = import_profile(conn, data)
    file_state.save_whole_read(conn, path, KIND_PROFILE, key, digest)
    return changed


# --------------------------------------------------------------------------
# builder-profile.jsonl → database (legacy migration)


def read_legacy(raw):
    """``(sessions, bad_line_numbers)`` from legacy JSONL bytes; blank lines are ignored."""
    session_list, bad = [], []
    for n, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            bad.append(n)
            continue
        if not isinstance(obj, dict):
            bad.append(n)
            continue
        session_list.append(obj)
    return session_list, bad


def _archive_name(path):
    stamp = time.strftime("%Y-%m-%d-%H%M%S", time.localtime())
    target = f"{path}.migrated-{stamp}"
    n = 1
    while os.path.exists(target):  # never overwrite an earlier archive
        n += 1
        target = f"{path}.migrated-{stamp}-{n}"
    return target


def migrate_legacy(conn, root):
    """Move builder-profile.jsonl into the database and archive it.

    Returns None when there is no legacy file, else ``{"sessions", "added", "bad_lines",
    "archive"}``. The sessions and a record of the file's content hash commit in one
    transaction before the rename, so a run killed in between is finished by the next one
    without importing the file twice.
    """
    path = os.path.abspath(legacy_path(root))
    try:
        raw = safe_io.read_bytes(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        _warn(f"cannot read {LEGACY_FILE}: {safe_io.describe(e)}")
        return None
    digest = profile.sha1_hex(raw)
    session_list, bad = read_legacy(raw)
    for n in bad:
        _warn(f"{LEGACY_FILE} line {n}: not a JSON object; skipped")
    key = _stat_key(path) or (None, len(raw), None)
    with db.transaction(conn):
        rec = file_state.whole_read(conn, path)
        added = 0
        if rec is None or rec[3] != digest:
            added = profile.add_sessions(conn, session_list, origin=LEGACY_FILE)
            if not profile.get_meta(conn, profile.META_MIGRATED_AT):
                profile.set_meta(conn, profile.META_MIGRATED_AT, db.utc_now())
            file_state.save_whole_read(conn, path, KIND_LEGACY, key, digest)
    archive = _archive_name(path)
    try:
        os.replace(path, archive)
    except FileNotFoundError:
        archive = None  # a concurrent command archived it after importing the same bytes
    except OSError as e:
        _warn(f"could not archive {LEGACY_FILE}: {e.strerror}")
        archive = None
    return {"sessions": len(session_list), "added": added, "bad_lines": bad, "archive": archive}


# --------------------------------------------------------------------------
# database → developer-profile.json (the mirror)


def write_mirror(conn, root, project, doc=None):
    """Rewrite developer-profile.json from the database (caller holds the write lock).

    ``doc`` is the document when the caller already built it. Returns True when
    written; on failure says so on stderr and returns False.
    """
    path = os.path.abspath(profile_path(root))
    try:
        if doc is None:
            doc = profile.document(conn, project)
        body = jscompat.stringify_indented(doc).encode("utf-8")
        safe_io.write_atomic(path, body, root=root)
    except OSError as e:
        _warn(
            f"could not update {PROFILE_FILE}: {safe_io.describe(e)} (the database has the change)"
        )
        return False
    key = _stat_key(path)
    if key is not None:
        file_state.save_whole_read(conn, path, KIND_PROFILE, key, profile.sha1_hex(body))
    return True


def publish(conn, root, project):
    """Rebuild developer-profile.json; returns the document (even when the mirror is off).

    The document is computed in a read snapshot, so hooks writing question events are
    not held up by the views; the file is then written under the write lock, recomputed
    first only if another connection committed in between.
    """
    conn.execute("BEGIN")
    try:
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        doc = profile.document(conn, project)
    finally:
        conn.execute("COMMIT")
    if not mirror_enabled():
        return doc
    with db.transaction(conn):
        if conn.execute("PRAGMA data_version").fetchone()[0] != version:
            doc = profile.document(conn, project)
        write_mirror(conn, root, project, doc)
    return doc


def sync(conn, root, project, legacy=True, force_mirror=False):
    """Pick up changed gstack files, then keep developer-profile.json current.

    The common case (nothing changed, file present, no legacy file) is two stats and one
    indexed read, with no write lock. Returns the legacy migration result, if any.
    """
    mirror = mirror_enabled()
    dev = os.path.abspath(profile_path(root))
    key = _stat_key(dev)
    rec = file_state.whole_read(conn, dev) if key is not None else None
    profile_changed = key is not None and (rec is None or rec[:3] != key)
    missing = key is None and mirror
    has_legacy = legacy and os.path.exists(legacy_path(root))
    if not (profile_changed or missing or has_legacy or force_mirror):
        return None
    result = None
    with db.transaction(conn):
        changed = _pick_up_profile(conn, root)
    if has_legacy:
        result = migrate_legacy(conn, root)
        changed = changed or bool(result and result["added"])
    if mirror and (changed or missing or force_mirror or (result is not None)):
        publish(conn, root, project)
    return result


def remove_files(root, project=None):
    """Delete gstack's profile files for a scope; returns the paths removed.

    ``project=None``: developer-profile.json, builder-profile.jsonl and its archives,
    and every project's question-log.jsonl. A project: that project's question-log.jsonl.
    """
    candidates = []
    projects_dir = os.path.join(root, "projects")
    if project is None:
        candidates.append(profile_path(root))
        candidates.append(legacy_path(root))
        try:
            for name in os.listdir(root):
                if name.startswith(LEGACY_FILE + ".migrated-"):
                    candidates.append(os.path.join(root, name))
        except OSError:
            pass
        try:
            slugs = os.listdir(projects_dir)
        except OSError:
            slugs = []
    else:
        slugs = [project]
    for slug in slugs:
        candidates.append(os.path.join(projects_dir, slug, "question-log.jsonl"))
    removed = []
    for path in candidates:
        try:
            os.unlink(path)
            removed.append(os.path.abspath(path))
        except FileNotFoundError:
            continue
    return removed


def forget_files(conn, paths):
    """Drop ingest offsets of removed files so a new file of that name is read from the start."""
    with db.transaction(conn):
        file_state.forget(conn, paths)
