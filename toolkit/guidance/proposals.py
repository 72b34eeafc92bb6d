"""Project-local guidance: run traces, merged guidance, evidence-backed proposals, apply.

A *run* is one agent session end. Each run leaves a bundle under
``<project>/.plantune/trace/runs/<run_id>/``, one line in ``.plantune/trace/index.jsonl`` and
the same record in ``trace_runs``. Guidance lives in ``<project>/.plantune/local_guidance.md``
(project) and ``<state root>/guidance-preferences.md`` (optional global defaults, never
written here). Proposals turn repeated, user-originated evidence from the database into
reviewable changes; ``apply_proposal`` writes them only if nothing they depend on moved.

The project folder is the outermost ancestor of the working directory holding a ``.git``
entry or a strong marker (pyproject.toml, package.json, ...), else the outermost one with a
weak marker (README, LICENSE), else the working directory itself: the same walk that
``paths.resolve_slug`` uses, so one slug maps to one ``.plantune`` folder.

Nothing in this module writes outside ``<project>/.plantune/`` and the database.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import OrderedDict, namedtuple

from toolkit.store import db, paths, safe_io
from toolkit.core import doors, identity
from toolkit.gstack import mirror
from toolkit.store.safe_io import append_line, write_atomic
from toolkit.core.questions import UNKNOWN_CHOICE, normalize_choice
from toolkit.core.screening import has_injection

__all__ = [
    "MODES", "MODE_TABLE", "DEFAULT_MODE", "SECTIONS", "GuidanceError", "Layout",
    "project_root", "layout_for", "unsafe_ids", "global_guidance_file", "read_layer", "load_guidance",
    "init_guidance", "session_questions", "validator_gate", "build_proposal",
    "save_proposal", "render_proposal", "find_proposal", "apply_proposal", "run_session",
    "read_index", "ingest_index",
]

# ---------------------------------------------------------------------------
# Modes: exactly the seed's table.

Mode = namedtuple("Mode", "reads_guidance writes_bundle writes_proposal updates_guidance")
MODE_TABLE = OrderedDict(
    off=Mode(False, True, False, False),
    read=Mode(True, True, False, False),
    propose=Mode(True, True, True, False),
    apply=Mode(True, True, True, True),
)
MODES = tuple(MODE_TABLE)
DEFAULT_MODE = "propose"

# ---------------------------------------------------------------------------
# Files.

GUIDANCE_DIRNAME = ".plantune"
LOCAL_FILENAME = "local_guidance.md"
GLOBAL_FILENAME = "guidance-preferences.md"
TITLE = "# plantune Local Guidance"
SECTIONS = ("Scope", "Active Guidance", "Artifact Policy", "Project Preferences",
            "Trace Anchors", "Revision History")
# Sections that go into the context an agent sees; the history is for people.
CONTEXT_EXCLUDED = ("Revision History",)
MAX_GUIDANCE_BYTES = 256 * 1024
OPTIONAL_OUTPUTS = ("review.md", "draft.md", "merged_analysis.md")

# ---------------------------------------------------------------------------
# Evidence rules. Conservative on purpose: each needs repetition across sessions.

USER_SOURCES = ("agent", "hook", "auq-other", "transcript-import")
USER_PREFERENCE_SOURCES = ("plan-tune", "inline-user")
NEVER_ASK_MIN_EVENTS = 5
NEVER_ASK_MIN_SESSIONS = 2
ALWAYS_ASK_MIN_OVERRIDES = 3
ALWAYS_ASK_MIN_SESSIONS = 2
ALWAYS_ASK_MIN_SHARE = 0.5
ARTIFACT_MIN_RUNS = 3
ARTIFACT_MIN_SESSIONS = 2
THRESHOLDS = {
    "never_ask_min_events": NEVER_ASK_MIN_EVENTS,
    "never_ask_min_sessions": NEVER_ASK_MIN_SESSIONS,
    "always_ask_min_overrides": ALWAYS_ASK_MIN_OVERRIDES,
    "always_ask_min_sessions": ALWAYS_ASK_MIN_SESSIONS,
    "always_ask_min_share": ALWAYS_ASK_MIN_SHARE,
    "artifact_min_runs": ARTIFACT_MIN_RUNS,
    "artifact_min_sessions": ARTIFACT_MIN_SESSIONS,
}
SUPPRESSING = ("never-ask", "ask-only-for-one-way")

_PREF_LINE = re.compile(r"^- `([a-z0-9-]{1,64})`: (never-ask|always-ask|ask-only-for-one-way)\b")


class GuidanceError(Exception):
    """A refused guidance operation, explained in one line; nothing was changed."""


class Malformed(ValueError):
    pass


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------
# Paths


def project_root(cwd=None) -> str:
    """The project folder for ``cwd`` (see the module docstring for the rule)."""
    cwd = os.path.abspath(os.fspath(cwd) if cwd else os.getcwd())
    strong = weak = ""
    for d in paths.ancestors(cwd):
        if os.path.lexists(os.path.join(d, ".git")) or any(
            os.path.isfile(os.path.join(d, m)) for m in paths.STRONG_MARKERS
        ):
            strong = d
        elif any(os.path.isfile(os.path.join(d, m)) for m in paths.WEAK_MARKERS):
            weak = d
    return strong or weak or cwd


class Layout:
    """Where one project's guidance files live."""

    def __init__(self, project_dir):
        self.project_dir = os.path.abspath(os.fspath(project_dir))
        self.base = os.path.join(self.project_dir, GUIDANCE_DIRNAME)
        self.local_file = os.path.join(self.base, LOCAL_FILENAME)
        self.trace_dir = os.path.join(self.base, "trace")
        self.index_file = os.path.join(self.trace_dir, "index.jsonl")
        self.runs_dir = os.path.join(self.trace_dir, "runs")
        self.proposals_dir = os.path.join(self.base, "proposals")

    def rel(self, path) -> str:
        """``path`` relative to the project folder (the form stored in the index)."""
        return os.path.relpath(path, self.project_dir)

    def run_dir(self, run_id) -> str:
        return os.path.join(self.runs_dir, run_id)

    def slug(self) -> str:
        return paths.resolve_slug(self.project_dir)


def layout_for(project_dir=None, cwd=None) -> Layout:
    return Layout(project_dir if project_dir else project_root(cwd))


def global_guidance_file(env=None) -> str:
    """``<state root>/guidance-preferences.md``: optional user defaults, read-only for runs."""
    return os.path.join(paths.state_root(env), GLOBAL_FILENAME)


# ---------------------------------------------------------------------------
# Reading and merging guidance

Layer = namedtuple("Layer", "kind path exists sections warning sha256")


def parse_guidance(text: str, required=()):
    """Split markdown into ``{section: [lines]}`` by ``## `` headings (outside code fences).

    Raises Malformed when a required section is missing or a section appears twice.
    """
    sections = OrderedDict()
    current = None
    fenced = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            current = line[3:].strip()
            if current in sections:
                raise Malformed(f"section '{current}' appears twice")
            sections[current] = []
            continue
        if not fenced and line.startswith("# "):
            continue
        if current is not None:
            sections[current].append(line)
        elif stripped:
            sections.setdefault("", []).append(line)
    missing = [s for s in required if s not in sections]
    if missing:
        raise Malformed("missing section" + ("s " if len(missing) > 1 else " ")
                        + ", ".join(f"'{s}'" for s in missing))
    return sections


def _read_bytes(path):
    try:
        data = safe_io.read_bytes(path, limit=MAX_GUIDANCE_BYTES + 1)
    except FileNotFoundError:
        return None
    except safe_io.UnsafeFile as e:
        raise Malformed("is a folder, not a file" if "directory" in e.reason
                        else e.reason.replace("; refused", "")) from None
    except OSError as e:
        raise Malformed(f"cannot be read ({e.strerror or e})") from None
    return data


def read_layer(path, kind) -> Layer:
    """Read one guidance file. Missing is not an error; malformed gives a warning."""
    try:
        data = _read_bytes(path)
        if data is None:
            return Layer(kind, path, False, None, None, None)
        if len(data) > MAX_GUIDANCE_BYTES:
            raise Malformed(f"is larger than {MAX_GUIDANCE_BYTES // 1024} KB")
        if b"\x00" in data:
            raise Malformed("contains NUL bytes")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise Malformed("is not UTF-8 text") from None
        sections = parse_guidance(text, SECTIONS if kind == "project" else ())
    except Malformed as e:
        return Layer(kind, path, True, None,
                     f"{kind} guidance {path} is malformed ({e}); continuing without it", None)
    return Layer(kind, path, True, sections, None, _sha256(data))


def file_hash(path):
    """sha256 of a file's bytes, or None when it does not exist (absence is a state too)."""
    try:
        return _sha256(safe_io.read_bytes(path))
    except FileNotFoundError:
        return None


def _meaningful(lines):
    """Section lines worth injecting: trimmed, without HTML comments and blank runs."""
    out = []
    in_comment = False
    for line in lines:
        s = line.rstrip()
        if in_comment:
            if "-->" in s:
                in_comment = False
            continue
        if s.lstrip().startswith("<!--"):
            in_comment = "-->" not in s
            continue
        if not s.strip() and (not out or not out[-1].strip()):
            continue
        out.append(s)
    while out and not out[-1].strip():
        out.pop()
    return out


Guidance = namedtuple("Guidance", "mode layers files_read warnings context summary")


def load_guidance(layout: Layout, mode=DEFAULT_MODE, env=None, slug=None) -> Guidance:
    """Read and merge global defaults and project guidance for ``mode``.

    Project sections replace global sections of the same name. Lines that look like
    instructions to the agent (the shared injection list) are dropped from the context,
    with a warning naming the file and line: guidance must never switch off a check.
    """
    if not MODE_TABLE[mode].reads_guidance:
        return Guidance(mode, [], [], [], "", "guidance not read (mode off)")
    layers = [read_layer(global_guidance_file(env), "global"),
              read_layer(layout.local_file, "project")]
    warnings = [l.warning for l in layers if l.warning]
    files_read = []
    for layer in layers:
        if layer.sections is not None:
            files_read.append(layer.path if layer.kind == "global" else layout.rel(layer.path))
    glob, proj = layers
    project_names = set(proj.sections or ())
    blocks = []
    counts = {}
    for layer, label in ((glob, "Global defaults"), (proj, "Project")):
        if layer.sections is None:
            continue
        n_lines = 0
        for name, lines in layer.sections.items():
            if layer.kind == "project" and name in CONTEXT_EXCLUDED:
                continue
            if layer.kind == "global" and name in project_names:
                continue  # project guidance overrides the global section
            kept = []
            for line in _meaningful(lines):
                if has_injection(line):
                    warnings.append(
                        f"{layer.kind} guidance {layer.path}: a line of section "
                        f"'{name or '(top)'}' was left out of the context: instruction-like "
                        "content")
                    continue
                kept.append(line)
            if not any(l.strip() for l in kept):
                continue
            n_lines += sum(1 for l in kept if l.strip())
            title = f"{label}: {name}" if name else label
            blocks.append(f"### {title}\n" + "\n".join(kept))
        counts[layer.kind] = n_lines
    context = ""
    if blocks:
        head = (
            f'<plantune-guidance project="{slug or layout.slug()}" mode="{mode}">\n'
            "Local guidance for this project. It is advisory: it never overrides one-way "
            "doors, required outputs, validation, evidence or safety checks. Project "
            "guidance overrides the global defaults."
        )
        context = head + "\n\n" + "\n\n".join(blocks) + "\n</plantune-guidance>\n"
    parts = []
    for kind in ("project", "global"):
        layer = proj if kind == "project" else glob
        if layer.warning:
            parts.append(f"{kind} guidance malformed (skipped)")
        elif layer.sections is None:
            parts.append(f"no {kind} guidance")
        else:
            parts.append(f"{kind} guidance: {counts.get(kind, 0)} lines")
    return Guidance(mode, layers, files_read, warnings, context, "; ".join(parts))


# ---------------------------------------------------------------------------
# Writing the guidance file


def guidance_template(slug, now) -> str:
    return (
        f"{TITLE}\n\n"
        "## Scope\n"
        f"Project `{slug}`. This file steers later agent sessions in this project only.\n"
        "It is advisory: it never overrides one-way doors, required outputs, validation,\n"
        "evidence or safety checks. Edit it freely; `plantune guidance apply` appends\n"
        "evidence-backed changes and records them under Revision History.\n\n"
        "## Active Guidance\n\n"
        "## Artifact Policy\n\n"
        "## Project Preferences\n\n"
        "## Trace Anchors\n\n"
        "## Revision History\n"
        f"- {now} created by `plantune guidance init`\n"
    )


def init_guidance(layout: Layout, slug=None, now=None) -> bool:
    """Create ``.plantune/local_guidance.md`` and the trace folder; False if it existed."""
    os.makedirs(layout.runs_dir, exist_ok=True)
    if os.path.lexists(layout.local_file):
        return False
    write_atomic(layout.local_file, guidance_template(slug or layout.slug(), now or db.utc_now()))
    return True


def _section_bounds(lines, name):
    """(heading index, end index) of ``## name`` in ``lines``; end is exclusive."""
    start = None
    fenced = False
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("```") or s.startswith("~~~"):
            fenced = not fenced
            continue
        if fenced or not line.startswith("## "):
            continue
        if start is not None:
            return start, i
        if line[3:].strip() == name:
            start = i
    if start is None:
        raise Malformed(f"missing section '{name}'")
    return start, len(lines)


def _append_to_section(lines, name, new_line):
    start, end = _section_bounds(lines, name)
    pos = end
    while pos > start + 1 and not lines[pos - 1].strip():
        pos -= 1
    lines.insert(pos, new_line)
    # Keep one blank line before the next heading.
    if pos + 1 < len(lines) and lines[pos + 1].startswith("## "):
        lines.insert(pos + 1, "")


def _section_lines(lines, name):
    start, end = _section_bounds(lines, name)
    return [(i, lines[i]) for i in range(start + 1, end)]


def _preference_index(lines):
    """``{qid: [(line index, preference), ...]}`` for the lines under Project Preferences."""
    out = {}
    for i, line in _section_lines(lines, "Project Preferences"):
        m = _PREF_LINE.match(line)
        if m:
            out.setdefault(m.group(1), []).append((i, m.group(2)))
    return out


def _preference_lines(lines):
    """``{qid: (first line index, preference)}``; a suppressing line wins over others,
    so the safety checks see it even when the id is listed twice."""
    out = {}
    for qid, entries in _preference_index(lines).items():
        pref = next((p for _, p in entries if p in SUPPRESSING), entries[0][1])
        out[qid] = (entries[0][0], pref)
    return out


# ---------------------------------------------------------------------------
# What happened in a session (from the database)


def session_questions(conn, session_id):
    """Questions asked, auto-decided and flipped in ``session_id``, and its pacing findings."""
    events = [dict(r) for r in conn.execute(
        "SELECT id, ts, phase, skill, question_id, question_summary, door_type, door_class,"
        " user_choice, recommended, followed_recommendation, source FROM question_log"
        " WHERE session_id = ? ORDER BY ts, id", (session_id,))]
    findings = [dict(r) for r in conn.execute(
        "SELECT id, phase, finding_id, summary, door_type, disposition, surface_reason,"
        " recommended, choice, flipped_at FROM findings WHERE session_id = ?"
        " ORDER BY created_at, id", (session_id,))]
    return {
        "asked": [e for e in events if e["source"] not in ("auto-decided", "flip")],
        "auto_decided": [e for e in events if e["source"] == "auto-decided"],
        "flip_events": [e for e in events if e["source"] == "flip"],
        "silent": [f for f in findings if f["disposition"] == "silent"],
        "flipped": [f for f in findings if f["flipped_at"]],
        "findings": findings,
    }


def _cell(v) -> str:
    s = "" if v is None else str(v)
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_questions(session_id, q) -> str:
    out = [f"# Questions in session {session_id}", ""]
    out.append(f"{len(q['asked'])} asked, {len(q['auto_decided'])} auto-decided by preference, "
               f"{len(q['silent'])} silent pacing decisions, {len(q['flipped'])} flipped.")
    out.append("")
    out.append("## Asked")
    if q["asked"]:
        out.append("| event | ts | phase | question | door | summary | answer | recommended | source |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for e in q["asked"]:
            door = e["door_class"] or e["door_type"] or ""
            out.append("| " + " | ".join(_cell(x) for x in (
                e["id"], e["ts"], e["phase"], e["question_id"], door, e["question_summary"],
                e["user_choice"], e["recommended"], e["source"])) + " |")
    else:
        out.append("None recorded for this session.")
    out.append("")
    out.append("## Auto-decided")
    if q["auto_decided"] or q["silent"]:
        for e in q["auto_decided"]:
            out.append(f"- event {e['id']}: `{e['question_id']}` → {_cell(e['user_choice'])} "
                       "(never-ask preference)")
        for f in q["silent"]:
            out.append(f"- finding `{f['finding_id']}` ({f['phase']}): silently accepted "
                       f"{_cell(f['recommended'])}")
    else:
        out.append("None.")
    out.append("")
    out.append("## Flipped")
    if q["flipped"] or q["flip_events"]:
        for f in q["flipped"]:
            out.append(f"- finding `{f['finding_id']}` ({f['phase']}): flipped at "
                       f"{f['flipped_at']} to {_cell(f['choice'])}")
        for e in q["flip_events"]:
            out.append(f"- event {e['id']}: `{e['question_id']}` → {_cell(e['user_choice'])}")
    else:
        out.append("None.")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# Validator gate


def validator_gate(layout: Layout, required) -> dict:
    """Which required outputs exist on disk (relative paths are from the project folder)."""
    found, missing, details = [], [], []
    for p in required:
        full = p if os.path.isabs(p) else os.path.join(layout.project_dir, p)
        try:
            st = os.stat(full)
            ok = True
            size = st.st_size
        except OSError:
            ok, size = False, None
        (found if ok else missing).append(p)
        details.append({"path": p, "found": ok, "size": size})
    return {
        "passed": not missing,
        "required_outputs": list(required),
        "found_outputs": found,
        "missing_outputs": missing,
        "checks": details,
    }


# ---------------------------------------------------------------------------
# Proposals


def _registry(conn):
    return dict(conn.execute("SELECT id, door_type FROM registry_questions"))


def unsafe_ids(conn, candidates, registry=None):
    """The ids among ``candidates`` that any safety signal calls one-way.

    ``doors.door_for`` on each id (the registry and every recorded fact, in canonical form:
    a logged door_type or door_class, a one-way pacing finding), plus the classifier over
    the summaries of events logged without a door_class (older or foreign writers). One
    signal is enough: suppression is never proposed or applied on a doubtful id.
    ``registry`` (id -> door type) is consulted too when given.
    """
    candidates = sorted({c for c in candidates if isinstance(c, str)})
    unsafe = {c for c in candidates if registry and doors.decide(c, registry=registry).one_way}
    unsafe.update(c for c in candidates if c not in unsafe and doors.door_for(conn, c).one_way)
    for i in range(0, len(candidates), 500):
        chunk = [c for c in candidates[i:i + 500] if c not in unsafe]
        if not chunk:
            continue
        marks = ",".join("?" * len(chunk))
        for qid, skill, category, summary in conn.execute(
                "SELECT DISTINCT question_id, skill, category, question_summary FROM question_log"
                f" WHERE question_id IN ({marks}) AND door_class IS NULL", chunk):
            if qid not in unsafe and doors.decide(qid, skill, category, summary, {}).one_way:
                unsafe.add(qid)
    return unsafe


class _UnsafeCheck:
    """``qid in check`` answers unsafe_ids for one id at a time, cached."""

    def __init__(self, conn, registry):
        self.conn, self.registry, self.known = conn, registry, {}

    def prime(self, ids):
        todo = [i for i in ids if i not in self.known]
        bad = unsafe_ids(self.conn, todo, self.registry)
        self.known.update((i, i in bad) for i in todo)

    def __contains__(self, qid):
        if qid not in self.known:
            self.prime([qid])
        return self.known[qid]


def preferences_hash(conn, slug, question_ids) -> str:
    """Hash of the project and global preference rows of ``question_ids`` (absent rows too)."""
    qids = sorted(set(question_ids))
    rows = []
    if qids:
        marks = ",".join("?" * len(qids))
        rows = [list(r) for r in conn.execute(
            "SELECT scope, question_id, preference, raw_value, source, updated_at"
            f" FROM preferences WHERE scope IN (?, ?) AND question_id IN ({marks})"
            " AND " + db.real_rows() + " ORDER BY scope, question_id", (slug, db.GLOBAL_SCOPE, *qids))]
    return _sha256(_canonical([qids, rows]).encode())


def _preference(conn, scope, qid):
    # A simulated preference never shapes a real proposal (only in a demo database).
    r = conn.execute("SELECT preference, source FROM preferences WHERE scope = ? AND question_id = ?"
                     " AND " + db.real_rows(), (scope, qid)).fetchone()
    return (r[0], r[1]) if r else (None, None)


def _runs_of_sessions(conn, slug, sessions):
    sessions = sorted(s for s in sessions if s)
    if not sessions:
        return []
    marks = ",".join("?" * len(sessions))
    return [r[0] for r in conn.execute(
        f"SELECT run_id FROM trace_runs WHERE project = ? AND session_id IN ({marks})"
        " ORDER BY created_at, run_id", (slug, *sessions))]


def _pref_line(qid, pref, reason):
    return f"- `{qid}`: {pref} — {reason}"


def build_proposal(conn, layout: Layout, slug=None, run_id=None, now=None) -> dict:
    """Compute a proposal from the project's history; nothing is written.

    Returns a dict with ``items`` (each naming its evidence, rule, future behaviour and
    rejected alternatives), ``rejected`` candidates with reasons, and the hashes that
    ``apply_proposal`` re-checks.
    """
    slug = slug or layout.slug()
    now = now or db.utc_now()
    registry = _registry(conn)
    layer = read_layer(layout.local_file, "project")
    guidance_lines = None
    if layer.sections is not None:
        guidance_lines = safe_io.read_text(layout.local_file).splitlines()
    existing_prefs = _preference_lines(guidance_lines) if guidance_lines else {}
    artifact_text = ("\n".join(l for _, l in _section_lines(guidance_lines, "Artifact Policy"))
                     if guidance_lines else "")

    # Plain tuples: this reads the project's whole answer history.
    cur = conn.cursor()
    cur.row_factory = None
    marks = ",".join("?" * len(USER_SOURCES))
    cur.execute(
        "SELECT id, session_id, question_id, user_choice, recommended, followed_recommendation"
        f" FROM question_log WHERE project = ? AND {db.real_rows()} AND source IN ({marks})"
        " AND user_choice != ? ORDER BY ts, id", (slug, *USER_SOURCES, UNKNOWN_CHOICE))
    by_qid = OrderedDict()
    for eid, session, qid, choice, rec, followed in cur:
        by_qid.setdefault(qid, []).append({
            "id": eid, "session_id": session, "user_choice": choice, "recommended": rec,
            "followed_recommendation": followed})
    # Checked lazily: only ids that reach a threshold pay for the one-way lookups.
    unsafe = _UnsafeCheck(conn, registry)

    items, rejected = [], []

    def reject(subject, rule, reason, evidence=None):
        rejected.append({"subject": subject, "rule": rule, "reason": reason,
                         "evidence": evidence or {}})

    # Flips of silent pacing decisions are overrides by the user, keyed by the question
    # that answered the finding when known, else by the finding id.
    flips = {}
    for r in conn.execute(
            "SELECT f.id, f.session_id, COALESCE(q.question_id, f.finding_id) AS qid"
            " FROM findings f LEFT JOIN question_log q ON q.id = f.answer_event_id"
            " WHERE f.project = ? AND " + db.real_rows("f") + " AND f.disposition = 'silent'"
            " AND f.flipped_at IS NOT NULL ORDER BY f.id", (slug,)):
        flips.setdefault(r["qid"], []).append((r["id"], r["session_id"]))

    always_ask = set()
    for qid in list(by_qid) + [q for q in flips if q not in by_qid]:
        evs = by_qid.get(qid, [])
        with_rec = [e for e in evs if e["recommended"] is not None
                    and e["followed_recommendation"] is not None]
        overrides = [e for e in with_rec if e["followed_recommendation"] == 0]
        flip_rows = flips.get(qid, [])
        n_over = len(overrides) + len(flip_rows)
        sessions = {e["session_id"] for e in overrides if e["session_id"]}
        sessions |= {s for _, s in flip_rows if s}
        total = len(with_rec) + len(flip_rows)
        if n_over < ALWAYS_ASK_MIN_OVERRIDES:
            continue
        evidence = {"question_events": [e["id"] for e in overrides],
                    "findings": [i for i, _ in flip_rows],
                    "sessions": sorted(sessions),
                    "trace_runs": _runs_of_sessions(conn, slug, sessions)}
        if len(sessions) < ALWAYS_ASK_MIN_SESSIONS:
            reject(qid, "always-ask", f"{n_over} overrides, but all in one session", evidence)
            continue
        if n_over / total < ALWAYS_ASK_MIN_SHARE:
            reject(qid, "always-ask", f"overrides are {n_over} of {total} answers, under "
                   f"{ALWAYS_ASK_MIN_SHARE:.0%}", evidence)
            continue
        if qid in unsafe:
            reject(qid, "always-ask", "one-way doors are always asked already", evidence)
            continue
        current, _ = _preference(conn, slug, qid)
        glob, _ = _preference(conn, db.GLOBAL_SCOPE, qid)
        if current == "always-ask" or (current is None and glob == "always-ask"):
            reject(qid, "always-ask", "already always-ask", evidence)
            continue
        always_ask.add(qid)
        line = _pref_line(qid, "always-ask", f"the recommendation was overridden {n_over} "
                          f"times in {len(sessions)} sessions")
        items.append({
            "id": f"always-ask:{qid}",
            "action": "edit" if current or qid in existing_prefs else "add",
            "kind": "preference",
            "section": "Project Preferences",
            "question_id": qid,
            "preference": "always-ask",
            "previous_preference": current,
            "line": line,
            "rule": (f"recommendation overridden in >= {ALWAYS_ASK_MIN_OVERRIDES} answers across "
                     f">= {ALWAYS_ASK_MIN_SESSIONS} sessions and >= {ALWAYS_ASK_MIN_SHARE:.0%} "
                     "of answers with a recommendation"),
            "evidence": evidence,
            "future_behaviour": f"`{qid}` is always asked in this project, never auto-decided "
                                "or paced silently.",
            "rejected_alternatives": [
                "never-ask: would auto-pick the recommendation this user keeps overriding",
                "leave as is: the recommendation keeps being overridden",
            ],
        })

    for qid, evs in by_qid.items():
        last = normalize_choice(evs[-1]["user_choice"])
        streak = []
        for e in reversed(evs):
            if normalize_choice(e["user_choice"]) != last:
                break
            streak.append(e)
        streak.reverse()
        sessions = sorted({e["session_id"] for e in streak if e["session_id"]})
        if len(streak) < NEVER_ASK_MIN_EVENTS:
            continue
        evidence = {"question_events": [e["id"] for e in streak], "sessions": sessions,
                    "trace_runs": _runs_of_sessions(conn, slug, sessions)}
        if qid in unsafe:
            reject(qid, "never-ask", f"same answer {len(streak)} times, but it is a one-way "
                   "door: never suppressed", evidence)
            continue
        if "-split-" in qid:
            reject(qid, "never-ask", "split-chain questions are always asked; a preference "
                   "would not apply", evidence)
            continue
        if len(sessions) < NEVER_ASK_MIN_SESSIONS:
            reject(qid, "never-ask", f"same answer {len(streak)} times, but all in one "
                   "session", evidence)
            continue
        if not all(e["followed_recommendation"] == 1 for e in streak):
            reject(qid, "never-ask", "the repeated answer is not always the recommended "
                   "option, so auto-deciding would not reproduce it", evidence)
            continue
        if qid in always_ask:
            reject(qid, "never-ask", "conflicting evidence: the recommendation was also "
                   "often overridden (always-ask proposed instead)", evidence)
            continue
        current, csource = _preference(conn, slug, qid)
        glob, _ = _preference(conn, db.GLOBAL_SCOPE, qid)
        if current is not None:
            reject(qid, "never-ask", f"the project already has a {current} preference "
                   f"(source {csource}); an explicit choice is not overridden", evidence)
            continue
        if glob is not None:
            reject(qid, "never-ask", f"the global preference is {glob}; not overridden for "
                   "one project", evidence)
            continue
        line = _pref_line(qid, "never-ask", f"answered \"{_one_line(last)}\" (the "
                          f"recommendation) {len(streak)} times in {len(sessions)} sessions")
        items.append({
            "id": f"never-ask:{qid}",
            "action": "edit" if qid in existing_prefs else "add",
            "kind": "preference",
            "section": "Project Preferences",
            "question_id": qid,
            "preference": "never-ask",
            "previous_preference": None,
            "line": line,
            "rule": (f"same recommended answer to a two-way question in >= "
                     f"{NEVER_ASK_MIN_EVENTS} events across >= {NEVER_ASK_MIN_SESSIONS} "
                     "sessions, with no different answer since"),
            "evidence": evidence,
            "future_behaviour": f"`{qid}` is auto-decided to the recommended option in this "
                                "project (one-way safety checks still apply).",
            "rejected_alternatives": [
                "global never-ask: evidence comes from this project only",
                "ask-only-for-one-way: same effect on a two-way question, less clear",
            ],
        })

    # Explicit preferences the user stated (tune: replies, /plan-tune): restate the ones
    # in force in the guidance file so the agent sees them with their reason.
    seen = set()
    for r in conn.execute(
            "SELECT e.id, e.question_id, e.preference, e.source, e.free_text, e.extra_json,"
            " p.preference AS current FROM preference_events e"
            " JOIN preferences p ON p.scope = e.scope AND p.question_id = e.question_id"
            " WHERE e.scope = ? AND e.event_type = 'preference-set' AND " + db.real_rows("e") +
            " ORDER BY e.ts DESC, e.id DESC", (slug,)):
        qid = r["question_id"]
        if qid in seen or qid is None:
            continue
        seen.add(qid)
        if r["source"] not in USER_PREFERENCE_SOURCES:
            continue
        try:
            extra = json.loads(r["extra_json"])
        except ValueError:
            extra = {}
        if extra.get("proposal_id"):
            continue  # written by an earlier apply, already in the file
        if r["preference"] != r["current"] or any(i.get("question_id") == qid for i in items):
            continue
        if r["preference"] in SUPPRESSING and qid in unsafe:
            reject(qid, "explicit-preference", f"{r['preference']} is inert on a one-way door; "
                   "not restated", {"preference_events": [r["id"]]})
            continue
        if existing_prefs.get(qid, (None, None))[1] == r["preference"]:
            continue
        reason = f"stated by the user (source {r['source']})"
        if r["free_text"] and not has_injection(r["free_text"]):
            reason += f": \"{_one_line(r['free_text'])}\""
        items.append({
            "id": f"explicit:{qid}",
            "action": "edit" if qid in existing_prefs else "add",
            "kind": "preference-note",
            "section": "Project Preferences",
            "question_id": qid,
            "preference": r["preference"],
            "previous_preference": r["preference"],
            "line": _pref_line(qid, r["preference"], reason),
            "rule": "explicit user preference (tune: reply or /plan-tune); restated as written",
            "evidence": {"preference_events": [r["id"]]},
            "future_behaviour": f"the guidance context shows the {r['preference']} preference "
                                f"for `{qid}` and why; the preference itself is unchanged.",
            "rejected_alternatives": ["changing the preference: the user set it explicitly"],
        })

    # Artifact policy: a required output missing again and again.
    missing_runs = OrderedDict()
    last_seen = {}
    for r in conn.execute(
            "SELECT run_id, session_id, created_at, required_outputs_json, missing_outputs_json"
            " FROM trace_runs WHERE project = ? ORDER BY created_at, run_id", (slug,)):
        try:
            required = json.loads(r["required_outputs_json"])
            missing = set(json.loads(r["missing_outputs_json"]))
        except ValueError:
            continue
        for p in required:
            if not isinstance(p, str):
                continue
            last_seen[p] = p in missing
            if p in missing:
                missing_runs.setdefault(p, []).append((r["run_id"], r["session_id"] or r["run_id"]))
    for p, runs in missing_runs.items():
        if len(runs) < ARTIFACT_MIN_RUNS:
            continue
        sessions = sorted({s for _, s in runs})
        evidence = {"trace_runs": [rid for rid, _ in runs], "sessions": sessions}
        if len(sessions) < ARTIFACT_MIN_SESSIONS:
            reject(p, "artifact-policy", f"missing in {len(runs)} runs of one session", evidence)
            continue
        if not last_seen.get(p):
            reject(p, "artifact-policy", "found in the latest run that required it", evidence)
            continue
        if has_injection(p) or "`" in p or "\n" in p or len(p) > 200:
            reject(_one_line(p)[:80], "artifact-policy", "the path is not plain text", evidence)
            continue
        if f"`{p}`" in artifact_text:
            continue
        items.append({
            "id": f"artifact:{p}",
            "action": "add",
            "kind": "artifact-policy",
            "section": "Artifact Policy",
            "path": p,
            "line": f"- Produce `{p}` before the session ends: it was required but missing in "
                    f"{len(runs)} runs across {len(sessions)} sessions.",
            "rule": (f"required output missing in >= {ARTIFACT_MIN_RUNS} runs across >= "
                     f"{ARTIFACT_MIN_SESSIONS} sessions, and in the latest one"),
            "evidence": evidence,
            "future_behaviour": f"agents are reminded to write `{p}`; the validator gate "
                                "still checks it.",
            "rejected_alternatives": [
                "dropping the requirement: guidance never relaxes a required output",
            ],
        })

    # Removals: a suppressing preference line in the file for an id now known one-way.
    for qid, (_, pref) in existing_prefs.items():
        if pref in SUPPRESSING and qid in unsafe and not any(
                i.get("question_id") == qid for i in items):
            items.append({
                "id": f"remove:{qid}",
                "action": "remove",
                "kind": "preference-note",
                "section": "Project Preferences",
                "question_id": qid,
                "preference": None,
                "previous_preference": pref,
                "line": None,
                "rule": "guidance must not suggest suppressing a one-way door",
                "evidence": {"registry": {qid: registry.get(qid, "classified one-way")}},
                "future_behaviour": f"the guidance no longer lists {pref} for `{qid}`; it is "
                                    "asked every time (one-way).",
                "rejected_alternatives": ["keeping the line: it would mislead the agent"],
            })

    items = [i for i in items if _safe(i, unsafe)]
    affected = sorted({i["question_id"] for i in items if i.get("question_id")})
    proposal = {
        "project": slug,
        "project_dir": layout.project_dir,
        "run_id": run_id,
        "created_at": now,
        "guidance_file": layout.rel(layout.local_file),
        "guidance_hash": file_hash(layout.local_file),
        "guidance_malformed": layer.warning,
        "affected_question_ids": affected,
        "preferences_hash": preferences_hash(conn, slug, affected),
        "items": items,
        "rejected": rejected,
        "thresholds": THRESHOLDS,
    }
    proposal["id"] = "gp-" + _sha256(_canonical(
        [slug, layout.project_dir, run_id, now, items, proposal["guidance_hash"]]).encode())[:12]
    return proposal


def _safe(item, unsafe) -> bool:
    """Last line of defence: no item may suppress a one-way door."""
    if item.get("preference") in SUPPRESSING and item.get("question_id") in unsafe:
        return False
    return True


def _one_line(s) -> str:
    return " ".join(str(s).split()).replace("`", "'")


def render_proposal(p, status="proposed", applied_at=None) -> str:
    applied = f"yes, at {applied_at}" if status == "applied" else "no"
    out = [f"# Guidance update proposal {p['id']}", ""]
    out.append(f"- Project: `{p['project']}`")
    out.append(f"- Created: {p['created_at']}")
    out.append(f"- Run: {p['run_id'] or '(none: `plantune guidance propose`)'}")
    gh = p["guidance_hash"]
    out.append(f"- Guidance file: `{p['guidance_file']}` "
               + (f"(sha256 {gh[:16]}… when proposed)" if gh else "(absent when proposed)"))
    out.append("- Affected preferences: "
               + (", ".join(f"`{q}`" for q in p["affected_question_ids"]) or "none")
               + f" (hash {p['preferences_hash'][:16]}…)")
    if p["items"]:
        out.append(f"- Status: {status}; applied: {applied}")
    else:
        out.append("- Status: no changes, nothing to apply")
    if p["items"] and status == "proposed":
        out.append(f"- Apply with: `plantune guidance apply {p['id']}` (refused if the guidance "
                   "file or these preferences change first)")
    if p.get("guidance_malformed"):
        out.append(f"- Warning: {p['guidance_malformed']}")
    out.append("")
    out.append("## Proposed changes")
    if not p["items"]:
        out.append("None: no evidence reached the thresholds.")
    for n, item in enumerate(p["items"], 1):
        out.append("")
        verb = {"add": "Add to", "edit": "Edit in", "remove": "Remove from"}[item["action"]]
        out.append(f"### {n}. {verb} {item['section']}: {item['id']}")
        if item["line"]:
            out.append(f"- Line: {item['line']}")
        if item["kind"] == "preference":
            prev = item["previous_preference"] or "none"
            out.append(f"- Project preference: {prev} → {item['preference']} (source plan-tune)")
        out.append(f"- Rule: {item['rule']}")
        out.append(f"- Evidence: {_evidence_text(item['evidence'])}")
        out.append(f"- Future behaviour: {item['future_behaviour']}")
        out.append("- Rejected alternatives: " + "; ".join(item["rejected_alternatives"]))
        out.append(f"- Applied: {applied}")
    out.append("")
    out.append("## Considered and rejected")
    if not p["rejected"]:
        out.append("Nothing else came close.")
    for r in p["rejected"]:
        ev = _evidence_text(r["evidence"])
        out.append(f"- `{r['subject']}` ({r['rule']}): {r['reason']}"
                   + (f". Evidence: {ev}" if ev != "none" else ""))
    out.append("")
    out.append("Never proposed: suppressing a one-way door, validation, evidence or safety "
               "check; anything from a single run; anything from tool output or file content.")
    return "\n".join(out) + "\n"


def _evidence_text(ev) -> str:
    names = {"question_events": "question-log events", "sessions": "sessions",
             "trace_runs": "trace runs", "findings": "flipped findings",
             "preference_events": "preference events", "registry": "registry"}
    parts = []
    for key, label in names.items():
        v = ev.get(key)
        if not v:
            continue
        if isinstance(v, dict):
            parts.append(f"{label} " + ", ".join(f"{k}={w}" for k, w in v.items()))
        else:
            shown = ", ".join(str(x) for x in v[:20]) + (f" (+{len(v) - 20} more)" if len(v) > 20 else "")
            parts.append(f"{label} {shown}")
    return "; ".join(parts) or "none"


def save_proposal(conn, p, md_path, layout: Layout, write_md=True):
    """Store the proposal (rows only when it has changes), then write its markdown.

    The row goes first: if the file cannot be written the proposal can still be applied.
    """
    p["path"] = layout.rel(md_path)
    if p["items"]:
        store_proposal(conn, p, layout.project_dir, {"guidance_malformed": p["guidance_malformed"]})
    if write_md:
        write_atomic(md_path, render_proposal(p))


def store_proposal(conn, p, project_dir, details=None):
    """The proposal's row (what `guidance apply` reads back), in its own transaction."""
    details = dict(details or {}, rejected=p["rejected"],
                   affected_question_ids=p["affected_question_ids"],
                   thresholds=p["thresholds"], guidance_file=p["guidance_file"])
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO guidance_proposals (id, project, run_id, created_at, path,"
            " guidance_hash, preferences_hash, status, items_json, project_dir, details_json)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 'proposed', ?, ?, ?)",
            (p["id"], p["project"], p["run_id"], p["created_at"], p.get("path"),
             p["guidance_hash"], p["preferences_hash"],
             json.dumps(p["items"], ensure_ascii=False), project_dir,
             json.dumps(details, ensure_ascii=False)))


def set_preference(conn, scope, question_id, preference, now, proposal_id, previous):
    """Write a preference an applied proposal sets, and its audit event (source plan-tune);
    returns the event record (what gstack's question-events.jsonl gets)."""
    conn.execute(
        "INSERT INTO preferences (scope, question_id, preference, source, updated_at,"
        " developer) VALUES (?, ?, ?, 'plan-tune', ?, ?) ON CONFLICT (scope, question_id)"
        " DO UPDATE SET preference = excluded.preference, raw_value = NULL,"
        " source = 'plan-tune', free_text = NULL, synthetic = 0,"
        " updated_at = excluded.updated_at, developer = excluded.developer",
        (scope, question_id, preference, now, identity.developer()))
    record = {"ts": now, "event_type": "preference-set", "question_id": question_id,
              "preference": preference, "source": "plan-tune", "proposal_id": proposal_id}
    conn.execute(
        "INSERT OR IGNORE INTO preference_events (event_key, scope, ts, event_type,"
        " question_id, preference, source, extra_json, developer) VALUES (?, ?, ?,"
        " 'preference-set', ?, ?, 'plan-tune', ?, ?)",
        (_pref_event_key(scope, record), scope, now, question_id, preference,
         json.dumps({"proposal_id": proposal_id, "previous": previous}),
         identity.developer()))
    return record


def _proposal_from_row(row) -> dict:
    details = json.loads(row["details_json"] or "{}")
    return {
        "id": row["id"], "project": row["project"], "project_dir": row["project_dir"],
        "run_id": row["run_id"], "created_at": row["created_at"], "path": row["path"],
        "guidance_file": details.get("guidance_file", os.path.join(GUIDANCE_DIRNAME, LOCAL_FILENAME)),
        "guidance_hash": row["guidance_hash"], "preferences_hash": row["preferences_hash"],
        "affected_question_ids": details.get("affected_question_ids", []),
        "items": json.loads(row["items_json"]), "rejected": details.get("rejected", []),
        "thresholds": details.get("thresholds", {}),
        "guidance_malformed": details.get("guidance_malformed"),
        "status": row["status"], "applied_at": row["applied_at"],
        "kind": details.get("kind", "project"),
        "merged_from": row["merged_from"], "developer": row["developer"],
    }


_PROPOSAL_HEADING = re.compile(r"^# Guidance update proposal (gp-[0-9a-f]{12})\s*$", re.M)


def find_proposal(conn, ref) -> dict:
    """A proposal by id, unique id prefix, or the path of its markdown file."""
    ref = (ref or "").strip()
    if not ref:
        raise GuidanceError("PROPOSAL is empty; give a proposal id or its .md file")
    pid = ref
    if os.sep in ref or ref.endswith(".md"):
        try:
            head = safe_io.read_bytes(ref, limit=4096).decode("utf-8", "replace")
            m = _PROPOSAL_HEADING.search(head)
        except OSError as e:
            raise GuidanceError(f"cannot read proposal file {ref}: {e.strerror or e}") from None
        if not m:
            raise GuidanceError(f"{ref} is not a plantune guidance proposal")
        pid = m.group(1)
    rows = conn.execute(
        "SELECT * FROM guidance_proposals WHERE id = ? OR (length(?) >= 6 AND id LIKE ? || '%')",
        (pid, pid, pid.replace("%", "").replace("_", ""))).fetchall()
    exact = [r for r in rows if r["id"] == pid]
    if exact:
        rows = exact
    if not rows:
        raise GuidanceError(f"no guidance proposal {pid} (or it proposed no changes)")
    if len(rows) > 1:
        raise GuidanceError(f"proposal prefix {pid} is ambiguous ({len(rows)} matches)")
    return _proposal_from_row(rows[0])


def _pref_event_key(scope, record) -> str:
    return hashlib.sha1(f"{scope}\0{_canonical(record)}".encode()).hexdigest()


def apply_proposal(conn, ref, now=None, env=None) -> dict:
    """Apply a proposal to the project guidance file and project preferences.

    Fails closed: raises GuidanceError (and changes nothing) when the proposal was already
    applied, when the guidance file or the affected preferences differ from what the
    proposal saw, or when a change would now suppress a one-way door.
    """
    now = now or db.utc_now()
    p = find_proposal(conn, ref)
    if p["status"] != "proposed":
        when = f" at {p['applied_at']}" if p["applied_at"] else ""
        raise GuidanceError(f"proposal {p['id']} is {p['status']}{when}; nothing applied")
    if not p["items"]:
        raise GuidanceError(f"proposal {p['id']} has no changes to apply")
    if p["merged_from"] is not None:
        raise GuidanceError(f"proposal {p['id']} was merged from another database; apply it"
                            " in the database it was made in")
    if p["kind"] == "promotion":
        from toolkit.guidance import promote

        return promote.apply(conn, p, now)
    if not p["project_dir"]:
        raise GuidanceError(f"proposal {p['id']} does not name its project folder")
    layout = Layout(p["project_dir"])
    # The hash is taken again right before writing, under the database write lock, so a
    # concurrent apply of another proposal cannot slip in between.
    mirroring = mirror.enabled(env)
    warnings = []
    with db.transaction(conn):
        if mirroring:
            # A hand edit of gstack's preferences file made a moment ago counts as a change
            # of the affected preferences (and is kept): picked up before the checks.
            mirror.pickup(conn, p["project"], env)
        current = file_hash(layout.local_file)
        if current != p["guidance_hash"]:
            raise GuidanceError(
                f"{layout.rel(layout.local_file)} changed after proposal {p['id']} was "
                "generated; nothing applied (run `plantune guidance propose` again)")
        if preferences_hash(conn, p["project"], p["affected_question_ids"]) != p["preferences_hash"]:
            raise GuidanceError(
                "preferences for " + ", ".join(p["affected_question_ids"]) + f" changed after "
                f"proposal {p['id']} was generated; nothing applied (run `plantune guidance "
                "propose` again)")
        unsafe = unsafe_ids(conn, p["affected_question_ids"])
        for item in p["items"]:
            if not _safe(item, unsafe):
                raise GuidanceError(
                    f"cannot set {item['preference']} on one-way question "
                    f"\"{item['question_id']}\"; nothing applied")
        if current is None:
            text = guidance_template(p["project"], now)
        else:
            text = safe_io.read_text(layout.local_file)
            layer = read_layer(layout.local_file, "project")
            if layer.warning:
                raise GuidanceError(layer.warning.replace("; continuing without it", "")
                                    + "; nothing applied")
        new_text = _edit_guidance(text, p, now)
        events = []
        for item in p["items"]:
            if item["kind"] != "preference":
                continue
            events.append(set_preference(conn, p["project"], item["question_id"],
                                         item["preference"], now, p["id"],
                                         item["previous_preference"]))
        conn.execute("UPDATE guidance_proposals SET status = 'applied', applied_at = ? WHERE id = ?",
                     (now, p["id"]))
        if p["run_id"]:
            conn.execute("UPDATE trace_runs SET applied_guidance_update = 1 WHERE run_id = ?",
                         (p["run_id"],))
        # Last step inside the transaction: if the file cannot be written, the database
        # changes roll back with the raised error.
        write_atomic(layout.local_file, new_text)
        # Then gstack's own files, by the writer `--write` uses: its preferences file and
        # events log say what the database says, so gstack's hook and skills follow the
        # applied guidance, and the next pickup of the file does not undo it.
        if events and mirroring:
            # Written once the transaction commits (never for a rolled-back apply).
            mirror.preferences_changed(conn, p["project"], events, env, warnings=warnings)
    if warnings:
        p["warning"] = warnings[0]
    p["status"], p["applied_at"] = "applied", now
    if p.get("path"):
        md = os.path.join(layout.project_dir, p["path"])
        if os.path.isfile(md):
            try:
                write_atomic(md, render_proposal(p, "applied", now))
            except OSError:
                pass  # the database and the revision history already say it was applied
    return p


def _edit_guidance(text, p, now) -> str:
    lines = text.splitlines()
    changes = []
    for item in p["items"]:
        if item["section"] == "Project Preferences":
            existing = _preference_index(lines)
            qid = item["question_id"]
            if qid in existing:
                indexes = [i for i, _ in existing[qid]]
                if item["line"] is not None:
                    lines[indexes.pop(0)] = item["line"]
                for idx in reversed(indexes):  # one line per id: drop the duplicates
                    del lines[idx]
            elif item["line"] is not None:
                _append_to_section(lines, "Project Preferences", item["line"])
            prev = item["previous_preference"] or "none"
            new = item["preference"] or "removed"
            changes.append(f"{qid} {prev} → {new}" if item["kind"] == "preference"
                           else f"{item['action']} note {qid}")
        else:
            _append_to_section(lines, item["section"], item["line"])
            changes.append(f"artifact policy {item['path']}")
    runs = []
    for item in p["items"]:
        for rid in item["evidence"].get("trace_runs", []):
            if rid not in runs:
                runs.append(rid)
    if p["run_id"] and p["run_id"] not in runs:
        runs.append(p["run_id"])
    anchors = "\n".join(l for _, l in _section_lines(lines, "Trace Anchors"))
    for rid in runs[-5:]:
        if rid not in anchors:
            _append_to_section(lines, "Trace Anchors",
                               f"- run {rid}: `{GUIDANCE_DIRNAME}/trace/runs/{rid}`")
    where = p.get("path") or "the database"
    _append_to_section(
        lines, "Revision History",
        f"- {now} applied proposal {p['id']} ({'; '.join(changes)}); evidence: `{where}`")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# Runs


def new_run_id(session_id, now) -> str:
    stamp = re.sub(r"[^0-9TZ]", "", now)[:15] + "Z"
    salt = f"{session_id}\0{now}\0{os.getpid()}\0{os.urandom(8).hex()}"
    return f"{stamp}-{hashlib.sha1(salt.encode()).hexdigest()[:8]}"


RunResult = namedtuple("RunResult", "record warnings errors proposal gate")


def run_session(conn, *, session_id, cwd=None, project_dir=None, mode=DEFAULT_MODE,
                required=(), provided=None, hook_event=None, transcript_path=None,
                topic=None, task_id=None, now=None, env=None) -> RunResult:
    """Trace one session end and, as ``mode`` allows, read, propose and apply guidance.

    Every stage is independent: the database row is written first, and a failure to
    write the bundle or the index is collected in ``errors`` (and stored in the row's
    raw_json), never raised, so nothing about the session is lost.
    """
    if mode not in MODE_TABLE:
        raise GuidanceError(f"invalid mode '{mode}', must be one of: " + ", ".join(MODES))
    if not isinstance(session_id, str) or not session_id.strip() or "\x00" in session_id:
        raise GuidanceError("session id is required (a non-empty string)")
    for pth in required:
        if not isinstance(pth, str) or not pth or "\x00" in pth:
            raise GuidanceError("required output paths must be non-empty strings")
    flags = MODE_TABLE[mode]
    now = now or db.utc_now()
    cwd = os.path.abspath(cwd or os.getcwd())
    layout = Layout(project_dir) if project_dir else Layout(project_root(cwd))
    slug = layout.slug()
    run_id = new_run_id(session_id, now)
    run_dir = layout.run_dir(run_id)
    warnings, errors = [], []
    provided = dict(provided or {})

    guidance = load_guidance(layout, mode, env, slug)
    warnings.extend(guidance.warnings)
    gate = validator_gate(layout, list(required))
    proposal_rel = layout.rel(os.path.join(run_dir, "guidance_update_proposal.md"))
    record = OrderedDict(
        run_id=run_id, created_at=now, task_id=task_id or session_id, topic=topic, cwd=cwd,
        guidance_mode=mode, run_dir=layout.rel(run_dir),
        required_outputs=gate["required_outputs"], found_outputs=gate["found_outputs"],
        missing_outputs=gate["missing_outputs"], guidance_files_read=guidance.files_read,
        guidance_proposal=proposal_rel if flags.writes_proposal else None,
        applied_guidance_update=False, project=slug, session_id=session_id,
    )

    def store_row():
        raw = dict(record)
        if errors:
            raw["errors"] = list(errors)
        with db.transaction(conn):
            conn.execute(
                "INSERT INTO trace_runs (run_id, project, session_id, created_at, task_id, topic,"
                " cwd, guidance_mode, run_dir, required_outputs_json, found_outputs_json,"
                " missing_outputs_json, guidance_files_read_json, guidance_proposal,"
                " applied_guidance_update, raw_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                " ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET"
                " applied_guidance_update = excluded.applied_guidance_update,"
                " raw_json = excluded.raw_json",
                (run_id, slug, session_id, now, record["task_id"], topic, cwd, mode,
                 record["run_dir"], json.dumps(record["required_outputs"]),
                 json.dumps(record["found_outputs"]), json.dumps(record["missing_outputs"]),
                 json.dumps(record["guidance_files_read"]), record["guidance_proposal"],
                 int(record["applied_guidance_update"]), json.dumps(raw, ensure_ascii=False)))

    try:
        store_row()
    except Exception as e:  # noqa: BLE001 - the bundle below still records the run
        errors.append(f"database: trace run not stored: {e}")

    proposal = None
    if flags.writes_proposal:
        try:
            proposal = build_proposal(conn, layout, slug, run_id, now)
            md = os.path.join(run_dir, "guidance_update_proposal.md")
            save_proposal(conn, proposal, md, layout, write_md=False)
        except Exception as e:  # noqa: BLE001
            errors.append(f"proposal: {e}")
            proposal = None
        if proposal and flags.updates_guidance and proposal["items"]:
            try:
                applied = apply_proposal(conn, proposal["id"], now, env)
                proposal.update(status=applied["status"], applied_at=applied["applied_at"])
                record["applied_guidance_update"] = True
            except GuidanceError as e:
                warnings.append(f"apply: {e}")
            except Exception as e:  # noqa: BLE001
                errors.append(f"apply: {e}")

    # The bundle. Written file by file so one failure does not hide the rest.
    packet = OrderedDict(
        run_id=run_id, created_at=now, session_id=session_id, project=slug,
        cwd=cwd, hook_event=hook_event, transcript_path=transcript_path, topic=topic,
        task_id=record["task_id"], required_outputs=list(required),
        local_guidance=OrderedDict(
            enabled=flags.reads_guidance, mode=mode,
            project_guidance_file=layout.rel(layout.local_file),
            global_preferences_file=global_guidance_file(env),
            trace_dir=record["run_dir"], summary=guidance.summary,
            guidance_context=guidance.context),
        warnings=warnings,
    )
    files = OrderedDict()
    files["task_packet.json"] = lambda: json.dumps(packet, indent=2, ensure_ascii=False) + "\n"
    files["guidance_context.md"] = lambda: _context_doc(guidance, flags)
    files["questions.md"] = lambda: render_questions(session_id, session_questions(conn, session_id))
    files["validator_gate.json"] = lambda: json.dumps(gate, indent=2, ensure_ascii=False) + "\n"
    for name in OPTIONAL_OUTPUTS:
        files[name] = _provided_reader(name, provided.get(name))
    if flags.writes_proposal:
        if proposal is not None:
            files["guidance_update_proposal.md"] = lambda: render_proposal(
                proposal, proposal.get("status", "proposed"), proposal.get("applied_at"))
        else:
            reason = "; ".join(e for e in errors if e.startswith("proposal")) or "unknown error"
            files["guidance_update_proposal.md"] = lambda: (
                f"# Guidance update proposal\n\nNot produced: {reason}\n")
    try:
        os.makedirs(run_dir, exist_ok=True)
    except OSError as e:
        errors.append(f"bundle: cannot create {record['run_dir']}: {e.strerror or e}")
    else:
        for name, make in files.items():
            try:
                write_atomic(os.path.join(run_dir, name), make())
            except Exception as e:  # noqa: BLE001
                errors.append(f"bundle: {name} not written: {getattr(e, 'strerror', None) or e}")
    try:
        append_line(layout.index_file, json.dumps(record, ensure_ascii=False))
    except OSError as e:
        errors.append(f"index: line not appended to {layout.rel(layout.index_file)}: "
                      f"{e.strerror or e}")
    if errors or record["applied_guidance_update"]:
        try:
            store_row()
        except Exception as e:  # noqa: BLE001
            errors.append(f"database: trace run not updated: {e}")
    return RunResult(record, warnings, errors, proposal, gate)


def _context_doc(guidance, flags) -> str:
    if not flags.reads_guidance:
        return "# Guidance context\n\nGuidance mode off: no guidance was read for this run.\n"
    out = ["# Guidance context", "", f"Summary: {guidance.summary}", ""]
    out.append("Files read: " + (", ".join(f"`{f}`" for f in guidance.files_read) or "none"))
    for w in guidance.warnings:
        out.append(f"Warning: {w}")
    out.append("")
    out.append(guidance.context or "No guidance in effect.")
    return "\n".join(out).rstrip("\n") + "\n"


def _provided_reader(name, source):
    def make():
        if source is None:
            return (f"# {name}\n\nNot produced: the caller provided no {name[:-3].replace('_', ' ')} "
                    "for this run.\n")
        return safe_io.read_text(source, errors="replace")
    return make


# ---------------------------------------------------------------------------
# Trace index

INDEX_FIELDS = ("run_id", "created_at", "task_id", "topic", "cwd", "guidance_mode", "run_dir",
                "required_outputs", "found_outputs", "missing_outputs", "guidance_files_read",
                "guidance_proposal", "applied_guidance_update")


def read_index(path):
    """``(records, bad)``: valid index records in file order, and (line_no, reason) skipped."""
    records, bad = [], []
    try:
        f = safe_io.open_text(path, errors="replace")
    except FileNotFoundError:
        return records, bad
    with f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                bad.append((n, "not JSON"))
                continue
            reason = _index_problem(rec)
            if reason:
                bad.append((n, reason))
                continue
            records.append(rec)
    return records, bad


def _index_problem(rec):
    if not isinstance(rec, dict):
        return "not a JSON object"
    for key in ("run_id", "created_at"):
        if not isinstance(rec.get(key), str) or not rec[key]:
            return f"missing {key}"
    if rec.get("guidance_mode") not in MODE_TABLE:
        return "guidance_mode is not one of " + ", ".join(MODES)
    for key in ("required_outputs", "found_outputs", "missing_outputs", "guidance_files_read"):
        if not isinstance(rec.get(key, []), list):
            return f"{key} is not a list"
    return None


def ingest_index(conn, layout: Layout, slug=None) -> dict:
    """Load ``.plantune/trace/index.jsonl`` into trace_runs; running it twice adds nothing.

    A run already in the database (written live by its run) is left as it is.
    """
    slug = slug or layout.slug()
    records, bad = read_index(layout.index_file)
    inserted = 0
    source = layout.rel(layout.index_file)
    with db.transaction(conn):
        for rec in records:
            cur = conn.execute(
                "INSERT INTO trace_runs (run_id, project, session_id, created_at, task_id, topic,"
                " cwd, guidance_mode, run_dir, required_outputs_json, found_outputs_json,"
                " missing_outputs_json, guidance_files_read_json, guidance_proposal,"
                " applied_guidance_update, raw_json, ingested_from) VALUES (?, ?, ?, ?, ?, ?, ?,"
                " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING",
                (rec["run_id"], _text(rec.get("project")) or slug, _text(rec.get("session_id")),
                 rec["created_at"], _text(rec.get("task_id")), _text(rec.get("topic")),
                 _text(rec.get("cwd")), rec["guidance_mode"], _text(rec.get("run_dir")),
                 json.dumps(rec.get("required_outputs", [])),
                 json.dumps(rec.get("found_outputs", [])),
                 json.dumps(rec.get("missing_outputs", [])),
                 json.dumps(rec.get("guidance_files_read", [])),
                 _text(rec.get("guidance_proposal")),
                 1 if rec.get("applied_guidance_update") is True else 0,
                 json.dumps(rec, ensure_ascii=False), source))
            inserted += cur.rowcount
    return {"records": len(records), "inserted": inserted,
            "already_present": len(records) - inserted,
            "bad_lines": [{"file": source, "line": n, "reason": r} for n, r in bad]}


def _text(v):
    return v if isinstance(v, str) else None
