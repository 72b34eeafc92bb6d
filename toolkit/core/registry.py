"""The question registry and the signal map: bundled data, loading and listing."""

import json
import os
import re

from toolkit.core.jscompat import utf16_len
from toolkit.core.vocabulary import CATEGORIES, DOOR_TYPES, is_kebab
from toolkit.store import safe_io
from toolkit.store.db import utc_now

DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
REGISTRY_FILE = os.path.join(DATA_DIR, "registry.json")
SIGNAL_MAP_FILE = os.path.join(DATA_DIR, "signal-map.json")


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
        "INSERT INTO signal_map (signal_key, user_choice, dimension, delta) VALUES (?, ?, ?, ?)",
        rows,
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


# ===========================================================================
# Sync: load a gstack scripts/question-registry.ts (or a JSON array) into the database.
# ===========================================================================

FIELDS = ("id", "skill", "category", "door_type", "options", "signal_key", "description")
COMPARED_FIELDS = ("skill", "category", "door_type", "options", "signal_key", "description")
DESCRIPTION_MAX = 200


class RegistryError(ValueError):
    """A registry source we refuse; ``problems`` lists each entry and why."""

    def __init__(self, message, problems=()):
        super().__init__(message)
        self.message = message
        self.problems = list(problems)


class _Token:
    __slots__ = ("kind", "value", "line", "col")

    def __init__(self, kind, value, line, col):
        self.kind, self.value, self.line, self.col = kind, value, line, col


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_IDENT_START = re.compile(r"[A-Za-z_$]")
_IDENT = re.compile(r"[A-Za-z0-9_$]*")
_NUMBER = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)")


def _tokenize(text):
    """Tokens of a TypeScript source: strings, identifiers, numbers, punctuation.

    Comments and whitespace are skipped. Enough of the language for an object literal
    and the declarations around it; template literals with ``${`` are refused.
    """
    i, n, line, line_start = 0, len(text), 1, 0
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            line_start = i + 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise RegistryError(f"line {line}: unterminated comment")
            line += text.count("\n", i, j)
            if "\n" in text[i:j]:
                line_start = text.rfind("\n", i, j) + 1
            i = j + 2
        elif c in "'\"`":
            col = i - line_start + 1
            start_line = line
            out, i = [], i + 1
            while True:
                if i >= n:
                    raise RegistryError(f"line {start_line}: unterminated string")
                ch = text[i]
                if ch == c:
                    i += 1
                    break
                if ch == "\\":
                    nxt = text[i + 1] if i + 1 < n else ""
                    if nxt == "u" and text[i + 2 : i + 3] == "{":
                        j = text.index("}", i)
                        out.append(chr(int(text[i + 3 : j], 16)))
                        i = j + 1
                    elif nxt == "u":
                        out.append(chr(int(text[i + 2 : i + 6], 16)))
                        i += 6
                    elif nxt == "x":
                        out.append(chr(int(text[i + 2 : i + 4], 16)))
                        i += 4
                    elif nxt == "\n":  # line continuation
                        line += 1
                        line_start = i + 2
                        i += 2
                    else:
                        out.append(_ESCAPES.get(nxt, nxt))
                        i += 2
                    continue
                if ch == "\n":
                    if c != "`":
                        raise RegistryError(f"line {line}: newline inside a string")
                    line += 1
                    line_start = i + 1
                if c == "`" and text.startswith("${", i):
                    raise RegistryError(f"line {line}: template expressions are not supported")
                out.append(ch)
                i += 1
            yield _Token("str", "".join(out), start_line, col)
        elif _IDENT_START.match(c):
            m = _IDENT.match(text, i + 1)
            yield _Token("ident", text[i : m.end()], line, i - line_start + 1)
            i = m.end()
        elif c.isdigit() or (c == "-" and i + 1 < n and text[i + 1].isdigit()):
            m = _NUMBER.match(text, i)
            yield _Token("num", m.group(), line, i - line_start + 1)
            i = m.end()
        elif text.startswith("...", i):
            yield _Token("punct", "...", line, i - line_start + 1)
            i += 3
        else:
            yield _Token("punct", c, line, i - line_start + 1)
            i += 1


class _Parser:
    def __init__(self, tokens):
        self.tokens = list(tokens)
        self.pos = 0

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def next(self):
        tok = self.peek()
        if tok is None:
            last = self.tokens[-1].line if self.tokens else 1
            raise RegistryError(f"line {last}: unexpected end of file")
        self.pos += 1
        return tok

    def expect(self, value):
        tok = self.next()
        if tok.value != value or tok.kind != "punct":
            raise RegistryError(f"line {tok.line}: expected '{value}', found {tok.value!r}")
        return tok

    def value(self):
        tok = self.next()
        if tok.kind == "punct" and tok.value == "{":
            val = self.obj(tok)
        elif tok.kind == "punct" and tok.value == "[":
            val = self.array()
        elif tok.kind == "str":
            val = tok.value
            while (
                self.peek() is not None and self.peek().value == "+" and self.peek().kind == "punct"
            ):
                self.next()
                nxt = self.next()
                if nxt.kind != "str":
                    raise RegistryError(f"line {nxt.line}: only strings can be joined with '+'")
                val += nxt.value
        elif tok.kind == "num":
            val = (
                float(tok.value)
                if any(ch in tok.value for ch in ".eE") and "x" not in tok.value.lower()
                else int(tok.value, 0)
            )
        elif tok.kind == "ident" and tok.value in ("true", "false", "null", "undefined"):
            val = {"true": True, "false": False, "null": None, "undefined": None}[tok.value]
        else:
            raise RegistryError(f"line {tok.line}: unsupported value {tok.value!r}")
        # `'one-way' as DoorType`, `[...] as const`
        nxt = self.peek()
        if nxt is not None and nxt.kind == "ident" and nxt.value == "as":
            self.next()
            self.next()
        return val

    def obj(self, open_tok):
        """An object literal as a list of ``(key, value, line)`` (duplicates kept for the caller)."""
        items = []
        while True:
            tok = self.next()
            if tok.kind == "punct" and tok.value == "}":
                return _Object(items, open_tok.line)
            if tok.kind not in ("str", "ident", "num"):
                raise RegistryError(
                    f"line {tok.line}: expected a property name, found {tok.value!r}"
                )
            self.expect(":")
            items.append((str(tok.value), self.value(), tok.line))
            tok = self.next()
            if tok.kind == "punct" and tok.value == "}":
                return _Object(items, open_tok.line)
            if not (tok.kind == "punct" and tok.value == ","):
                raise RegistryError(f"line {tok.line}: expected ',' or '}}', found {tok.value!r}")

    def array(self):
        out = []
        while True:
            tok = self.peek()
            if tok is not None and tok.kind == "punct" and tok.value == "]":
                self.next()
                return out
            out.append(self.value())
            tok = self.next()
            if tok.kind == "punct" and tok.value == "]":
                return out
            if not (tok.kind == "punct" and tok.value == ","):
                raise RegistryError(f"line {tok.line}: expected ',' or ']', found {tok.value!r}")


class _Object(list):
    """Object literal properties in source order: ``[(key, value, line), …]``."""

    def __init__(self, items, line):
        super().__init__(items)
        self.line = line

    def as_dict(self):
        return {k: (v.as_dict() if isinstance(v, _Object) else v) for k, v, _ in self}


def parse_registry_ts(text: str) -> list:
    """Entries of ``export const QUESTIONS = { … }`` as ``[(key, entry or value, line)]``.

    Single- or double-quoted (or backtick) strings, comments, trailing commas, ``as
    const`` / ``satisfies`` and type annotations are understood. Raises RegistryError
    with a line number when the literal cannot be read.
    """
    p = _Parser(_tokenize(text))
    while p.peek() is not None:
        tok = p.next()
        if not (tok.kind == "ident" and tok.value == "QUESTIONS"):
            continue
        # `QUESTIONS`, an optional type annotation, then `= {`; anything else (an import,
        # `typeof QUESTIONS`) is not the declaration.
        start = p.pos
        while p.peek() is not None and not (p.peek().kind == "punct" and p.peek().value in "=;{})"):
            p.next()
        nxt = p.peek()
        if (
            nxt is not None
            and nxt.value == "="
            and p.pos + 1 < len(p.tokens)
            and p.tokens[p.pos + 1].value == "{"
            and p.tokens[p.pos + 1].kind == "punct"
        ):
            p.next()
            open_tok = p.next()
            top = p.obj(open_tok)
            return [(k, v.as_dict() if isinstance(v, _Object) else v, line) for k, v, line in top]
        p.pos = start
    raise RegistryError("no `QUESTIONS = { … }` object literal found")


def load_source(path: str) -> list:
    """``[(key or None, entry, line or index)]`` from a registry.ts or a JSON file.

    JSON may be an array of entries or an object keyed by id. Raises RegistryError.
    """
    try:
        text = safe_io.read_text(path)
    except FileNotFoundError:
        raise RegistryError(f"{path}: no such file") from None
    except safe_io.UnsafeFile as e:
        raise RegistryError(str(e)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise RegistryError(f"{path}: cannot read ({e})") from None
    stripped = text.lstrip("\ufeff \t\r\n")
    if path.endswith(".json") or stripped.startswith(("[", "{")):
        try:
            data = json.loads(stripped)
        except ValueError as e:
            raise RegistryError(f"{path}: not valid JSON ({e})") from None
        if isinstance(data, list):
            return [(None, e, f"entry {i + 1}") for i, e in enumerate(data)]
        if isinstance(data, dict):
            return [(k, e, f"entry {i + 1}") for i, (k, e) in enumerate(data.items())]
        raise RegistryError(f"{path}: expected a JSON array of entries")
    try:
        return [(k, e, f"line {line}") for k, e, line in parse_registry_ts(text)]
    except RegistryError as e:
        raise RegistryError(f"{path}: {e.message}") from None


def entry_problems(key, entry, signal_keys) -> list:
    """The rules of gstack's question-registry.ts that ``entry`` breaks, as short reasons
    (empty when it is valid)."""
    if not isinstance(entry, dict):
        return ["must be an object"]
    out = []
    eid = entry.get("id")
    skill = entry.get("skill")
    if not isinstance(eid, str) or not is_kebab(eid) or len(eid) > 64:
        out.append("id must be kebab-case (a-z, 0-9, -) and at most 64 characters")
    elif key is not None and eid != key:
        out.append(f"id {eid!r} differs from its key {key!r}")
    if not isinstance(skill, str) or not is_kebab(skill):
        out.append("skill must be a kebab-case skill name")
    elif isinstance(eid, str) and not eid.startswith(skill + "-"):
        out.append(f"id must start with its skill followed by '-' ({skill}-…)")
    if entry.get("category") not in CATEGORIES:
        out.append(
            f"category must be one of {', '.join(CATEGORIES)} (got {entry.get('category')!r})"
        )
    if entry.get("door_type") not in DOOR_TYPES:
        out.append(f"door_type must be one-way or two-way (got {entry.get('door_type')!r})")
    options = entry.get("options")
    if options is not None:
        if not isinstance(options, list) or not options:
            out.append("options must be a non-empty list of option keys")
        elif not all(isinstance(o, str) and o for o in options):
            out.append("options must all be non-empty strings")
        elif len(set(options)) != len(options):
            dupes = sorted({o for o in options if options.count(o) > 1})
            out.append(f"options repeat {', '.join(dupes)}")
    sk = entry.get("signal_key")
    if sk is not None:
        if not isinstance(sk, str) or not is_kebab(sk):
            out.append("signal_key must be kebab-case")
        elif sk not in signal_keys:
            out.append(f"signal_key {sk!r} is not in the signal map")
    desc = entry.get("description")
    if not isinstance(desc, str) or not desc.strip():
        out.append("description is required")
    elif utf16_len(desc) > DESCRIPTION_MAX:
        out.append(f"description is {utf16_len(desc)} characters (at most {DESCRIPTION_MAX})")
    elif "\n" in desc or "\r" in desc:
        out.append("description must be one line")
    return out


def validate_source(items, signal_keys) -> list:
    """Clean entries (only the registry fields) from ``load_source`` output; RegistryError otherwise."""
    problems, entries, seen = [], [], {}
    for key, entry, where in items:
        name = key if key is not None else (entry.get("id") if isinstance(entry, dict) else None)
        label = f"{where}: entry {name!r}" if name else f"{where}: entry"
        for reason in entry_problems(key, entry, signal_keys):
            problems.append(f"{label}: {reason}")
        if name in seen:
            problems.append(f"{label}: duplicate id (first at {seen[name]})")
        elif name:
            seen[name] = where
        if isinstance(entry, dict):
            entries.append({f: entry.get(f) for f in FIELDS})
    if not items:
        problems.append("no entries")
    if problems:
        n = len(problems)
        raise RegistryError(
            f"registry refused: {n} problem{'s' if n != 1 else ''}, nothing changed", problems
        )
    return entries


def diff_registry(old: list, new: list) -> dict:
    """``{added, changed, removed, unchanged}``; changed items name their changed fields."""
    before = {e["id"]: e for e in old}
    after = {e["id"]: e for e in new}
    changed = []
    for eid in sorted(set(before) & set(after)):
        fields = [
            f
            for f in COMPARED_FIELDS
            if (before[eid].get(f) or None) != (after[eid].get(f) or None)
        ]
        if fields:
            changed.append({"id": eid, "fields": fields})
    return {
        "added": sorted(set(after) - set(before)),
        "changed": changed,
        "removed": sorted(set(before) - set(after)),
        "unchanged": len(set(before) & set(after)) - len(changed),
    }


def one_way_floor(conn) -> dict:
    """``{canonical id: id}`` a sync must keep one-way: the bundled one-way ids and every
    one-way entry of the registry in the database."""
    from toolkit.core import doors

    floor = {
        doors.canonical_id(k): k for k, v in doors.bundled_door_types().items() if v == "one-way"
    }
    for (qid,) in conn.execute("SELECT id FROM registry_questions WHERE door_type = 'one-way'"):
        floor.setdefault(doors.canonical_id(qid), qid)
    return floor


def downgrades(conn, entries) -> list:
    """One-way ids the new ``entries`` would drop or make two-way: ``[{id, to_door}]``."""
    from toolkit.core import doors

    new = {}
    for e in entries:
        key = doors.canonical_id(e["id"])
        if new.get(key) != "one-way":
            new[key] = e["door_type"]
    out = []
    for key, qid in sorted(one_way_floor(conn).items()):
        if new.get(key) != "one-way":
            out.append({"id": qid, "to_door": new.get(key)})
    return out


def sync(conn, path: str, dry_run: bool = False, allow_downgrade=()) -> dict:
    """Replace the database registry with the entries of ``path`` (all or nothing).

    Returns the diff against the previous registry plus ``total``. RegistryError
    (with ``problems``) when any entry breaks the registry rules, or when the file would
    drop or downgrade a one-way id (bundled, or one-way in the database) that
    ``allow_downgrade`` does not name; each allowed downgrade is recorded in
    ``registry_downgrades``.
    """
    from toolkit.core import doors
    from toolkit.store import db

    signal_keys = {r[0] for r in conn.execute("SELECT DISTINCT signal_key FROM signal_map")}
    entries = validate_source(load_source(path), signal_keys)
    allowed = {doors.canonical_id(a) for a in allow_downgrade}
    lost = downgrades(conn, entries)
    refused = [d for d in lost if doors.canonical_id(d["id"]) not in allowed]
    if refused:
        problems = [
            f"{d['id']}: one-way question would be "
            + ("removed" if d["to_door"] is None else "made two-way")
            + f" (allow it with --allow-downgrade {d['id']})"
            for d in refused
        ]
        n = len(refused)
        raise RegistryError(
            f"registry refused: {n} one-way question{'s' if n != 1 else ''} would be dropped "
            "or downgraded, nothing changed",
            problems,
        )
    report = diff_registry(list_questions(conn), entries)
    report["total"] = len(entries)
    report["dry_run"] = dry_run
    report["downgraded"] = [d["id"] for d in lost]
    if not dry_run:
        with db.transaction(conn):
            replace_registry(conn, entries, origin="synced")
            now = utc_now()
            conn.executemany(
                "INSERT INTO registry_downgrades (question_id, from_door, to_door, registry_file,"
                " allowed_at) VALUES (?, 'one-way', ?, ?, ?)",
                [(d["id"], d["to_door"], os.path.abspath(path), now) for d in lost],
            )
    return report


# ===========================================================================
# Lint: question ids used in skill templates versus the registry.
# ===========================================================================

TEMPLATE_NAMES = ("SKILL.md.tmpl", "SKILL.md")
_SKIP_DIRS = {".git", "node_modules", ".venv", "__pycache__"}
_MARKER_RE = re.compile(r"<gstack-qid:([a-z0-9-]{1,64})>", re.IGNORECASE)
# Registry-style ids always have a skill prefix, so they contain at least one '-'.
_ID = r"([a-z0-9]+(?:-[a-z0-9]+)+)(?![\w-])"
_QID_REF_RE = re.compile(r"""question_id["'`]?\s*[:=]\s*["'`]?""" + _ID)
_BACKTICK_RE = re.compile(r"`" + _ID + "`")
_CODE_SPAN_RE = re.compile(r"`[^`]*`")


def _in_code_span(spans, start) -> bool:
    return any(a < start < b for a, b in spans)


def template_files(root: str) -> list:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        found.extend(os.path.join(folder, f) for f in sorted(files) if f in TEMPLATE_NAMES)
    return found


def lint(root: str, entries: list) -> dict:
    """Compare the ids used under ``root`` with the registry ``entries``.

    References are ``<gstack-qid:ID>`` markers and ``question_id: ID`` mentions; a
    backticked registered id also counts as a reference. Inside a backtick code span
    (prose quoting an example, as plan-tune's "no `<gstack-qid:foo>` marker") only a
    registered id counts: prose is not an id. Reports ``unregistered``
    (id, file:line list), ``unreferenced`` registry ids and ``duplicates``: an id
    marked in the templates of more than one skill (preamble ids are shared by design).
    """
    registered = {e["id"]: e for e in entries}
    files = template_files(root)
    refs: dict = {}  # id -> [(where, skill_dir)]
    marked: dict = {}  # id -> {skill_dir}
    for path in files:
        rel = os.path.relpath(path, root)
        skill_dir = os.path.dirname(rel) or "."
        try:
            lines = safe_io.read_text(path, errors="replace").splitlines()
        except safe_io.UnsafeFile as e:
            raise RegistryError(str(e)) from None
        except OSError as e:
            raise RegistryError(f"{path}: cannot read ({e.strerror or e})") from None
        for no, line in enumerate(lines, 1):
            where = f"{rel}:{no}"
            spans = [m.span() for m in _CODE_SPAN_RE.finditer(line)] if "`" in line else ()
            for m in _MARKER_RE.finditer(line):
                qid = m.group(1).lower()
                if qid not in registered and _in_code_span(spans, m.start()):
                    continue
                refs.setdefault(qid, []).append(where)
                marked.setdefault(qid, set()).add(skill_dir)
            for m in _QID_REF_RE.finditer(line):
                if m.group(1) not in registered and _in_code_span(spans, m.start()):
                    continue
                refs.setdefault(m.group(1), []).append(where)
            for m in _BACKTICK_RE.finditer(line):
                if m.group(1) in registered:
                    refs.setdefault(m.group(1), []).append(where)
    unregistered = [
        {"id": q, "where": sorted(set(w))} for q, w in sorted(refs.items()) if q not in registered
    ]
    unreferenced = sorted(set(registered) - set(refs))
    duplicates = [
        {"id": q, "skills": sorted(dirs)}
        for q, dirs in sorted(marked.items())
        if len(dirs) > 1 and registered.get(q, {}).get("skill") != "preamble"
    ]
    return {
        "files": len(files),
        "referenced": len(refs),
        "unregistered": unregistered,
        "unreferenced": unreferenced,
        "duplicates": duplicates,
    }


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
    return {
        "total": len(entries),
        "one_way": one_way,
        "two_way": len(entries) - one_way,
        "by_skill": by_skill,
        "by_category": by_category,
    }


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

    from toolkit.core.jscompat import round3

    try:
        value = 1.0 / (1.0 + math.exp(-3.0 * total))
    except OverflowError:  # a hugely negative total
        value = 0.0
    return round3(value)
