"""Guidance files: where a project's guidance lives, reading and merging its layers, writing it.

Guidance lives in ``<project>/.plantune/local_guidance.md`` (project) and
``<state root>/guidance-preferences.md`` (optional global defaults, never written here);
project guidance overrides global. The project folder is the outermost ancestor of the
working directory holding a ``.git`` entry or a strong marker (pyproject.toml,
package.json, ...), else the outermost one with a weak marker (README, LICENSE), else the
working directory itself: the same walk that ``paths.resolve_slug`` uses, so one slug maps
to one ``.plantune`` folder. Nothing here writes outside ``<project>/.plantune/``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import OrderedDict, namedtuple

from toolkit.core.screening import has_injection
from toolkit.core.vocabulary import SILENCING_PREFERENCES
from toolkit.store import db, paths, safe_io
from toolkit.store.safe_io import write_atomic

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
SECTIONS = (
    "Scope",
    "Active Guidance",
    "Artifact Policy",
    "Project Preferences",
    "Trace Anchors",
    "Revision History",
)
# Sections that go into the context an agent sees; the history is for people.
CONTEXT_EXCLUDED = ("Revision History",)
MAX_GUIDANCE_BYTES = 256 * 1024
OPTIONAL_OUTPUTS = ("review.md", "draft.md", "merged_analysis.md")


_PREF_LINE = re.compile(r"^- `([a-z0-9-]{1,64})`: (never-ask|always-ask|ask-only-for-one-way)\b")


class GuidanceError(Exception):
    """A refused guidance operation, explained in one line; nothing was changed."""


class Malformed(ValueError):
    pass


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical(obj) -> str:
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
        raise Malformed(
            "missing section"
            + ("s " if len(missing) > 1 else " ")
            + ", ".join(f"'{s}'" for s in missing)
        )
    return sections


def _read_bytes(path):
    try:
        data = safe_io.read_bytes(path, limit=MAX_GUIDANCE_BYTES + 1)
    except FileNotFoundError:
        return None
    except safe_io.UnsafeFile as e:
        raise Malformed(
            "is a folder, not a file"
            if "directory" in e.reason
            else e.reason.replace("; refused", "")
        ) from None
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
        return Layer(
            kind,
            path,
            True,
            None,
            f"{kind} guidance {path} is malformed ({e}); continuing without it",
            None,
        )
    return Layer(kind, path, True, sections, None, sha256_hex(data))


def file_hash(path):
    """sha256 of a file's bytes, or None when it does not exist (absence is a state too)."""
    try:
        return sha256_hex(safe_io.read_bytes(path))
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
    layers = [
        read_layer(global_guidance_file(env), "global"),
        read_layer(layout.local_file, "project"),
    ]
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
                        "content"
                    )
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


def append_to_section(lines, name, new_line):
    start, end = _section_bounds(lines, name)
    pos = end
    while pos > start + 1 and not lines[pos - 1].strip():
        pos -= 1
    lines.insert(pos, new_line)
    # Keep one blank line before the next heading.
    if pos + 1 < len(lines) and lines[pos + 1].startswith("## "):
        lines.insert(pos + 1, "")


def section_lines(lines, name):
    start, end = _section_bounds(lines, name)
    return [(i, lines[i]) for i in range(start + 1, end)]


def preference_index(lines):
    """``{qid: [(line index, preference), ...]}`` for the lines under Project Preferences."""
    out = {}
    for i, line in section_lines(lines, "Project Preferences"):
        m = _PREF_LINE.match(line)
        if m:
            out.setdefault(m.group(1), []).append((i, m.group(2)))
    return out


def preference_lines(lines):
    """``{qid: (first line index, preference)}``; a suppressing line wins over others,
    so the safety checks see it even when the id is listed twice."""
    out = {}
    for qid, entries in preference_index(lines).items():
        pref = next((p for _, p in entries if p in SILENCING_PREFERENCES), entries[0][1])
        out[qid] = (entries[0][0], pref)
    return out
