"""Guidance test data: question events logged for a project, hashes of a project's files."""

import hashlib
import os

from toolkit.core import questions
from toolkit.guidance import files

TWO_WAY = "ship-changelog-voice-polish"  # registry: two-way, options accept|skip


ONE_WAY = "review-sql-safety"  # registry: one-way


def slug_of(project):
    return files.Layout(project).slug()


_clock = [0]


def ts(n=None):
    """Strictly increasing timestamps (never compared with the wall clock)."""
    _clock[0] += 1
    n = _clock[0] if n is None else n
    return f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}.000Z"


def log(
    conn,
    slug,
    qid=TWO_WAY,
    choice="accept",
    recommended="accept",
    session="s1",
    source="agent",
    summary="Polish the changelog voice?",
    **extra,
):
    rec = {
        "skill": "ship",
        "question_id": qid,
        "question_summary": summary,
        "user_choice": choice,
        "source": source,
        "session_id": session,
        "ts": ts(),
    }
    if recommended is not None:
        rec["recommended"] = recommended
    rec.update(extra)
    if source not in questions.SOURCES:  # plantune-only sources (transcript-import, flip)
        rec.pop("source")
        rec = questions.validate_event(rec, allow_phase=True)
        rec["source"] = source
    else:
        rec = questions.validate_event(rec, allow_phase=True)
    r = questions.record_event(conn, rec, slug)
    assert r.status == "inserted"
    return r.id


def repeated(conn, slug, qid=TWO_WAY, n=5, sessions=("s1", "s2"), **kw):
    return [log(conn, slug, qid=qid, session=sessions[i % len(sessions)], **kw) for i in range(n)]


def tree_hashes(root, skip_dir=".plantune"):
    """sha256 of every file under ``root`` except those inside ``skip_dir``."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if skip_dir in dirnames:
            dirnames.remove(skip_dir)
        for name in filenames:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


def counts(conn, *tables):
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def file_sha(path):
    return files.file_hash(str(path))


def write_local(project, active="- Prefer small commits.", prefs="", extra=""):
    lay = files.Layout(project)
    files.init_guidance(lay, slug="proj", now="2026-01-01T00:00:00.000Z")
    with open(lay.local_file, encoding="utf-8") as f:
        text = f.read()
    text = text.replace("## Active Guidance\n", f"## Active Guidance\n{active}\n")
    if prefs:
        text = text.replace("## Project Preferences\n", f"## Project Preferences\n{prefs}\n")
    with open(lay.local_file, "w") as f:
        f.write(text + extra)
    return lay
