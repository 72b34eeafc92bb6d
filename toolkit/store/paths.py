"""State root, database path and project slug resolution, by gstack's rules (gstack-slug).

This module is imported by every hook invocation, so it stays stdlib-only, never
spawns a subprocess (git config is read straight from disk) and does no work at
import time. A cache hit in :func:`resolve_slug` costs a couple of syscalls.

There is exactly one slug implementation in plantune on purpose: upstream issue
#2901 came from the hook and the bins resolving the slug in two different ways.
"""

import os

from toolkit.store import safe_io

__all__ = [
    "state_root",
    "gstack_home",
    "db_path",
    "is_own_database",
    "project_dir",
    "sanitize_slug",
    "is_valid_slug",
    "slug_cache_file",
    "slug_from_remote_url",
    "origin_url",
    "git_user_email",
    "resolve_slug",
    "resolve_slug_with_reason",
    "SLUG_REASONS",
]

# Same as gstack's walk cap: protects against pathological or looping paths.
MAX_WALK_DEPTH = 64

STRONG_MARKERS = (
    ".project.yaml",
    "package.json",
    "pyproject.toml",
    "Cargo.toml",
    "Gemfile",
    "go.mod",
)
WEAK_MARKERS = ("README.md", "README", "README.rst", "LICENSE", "LICENSE.md")

# Values a slug source may produce that must never name a directory under
# projects/: "." and ".." would escape it, "" would collapse into it.
_BAD_SLUGS = frozenset(("", ".", ".."))

# What resolve_slug_with_reason reports, in rule order.
SLUG_REASONS = ("env", "cache", "remote", "strong-marker", "weak-marker", "cwd", "unknown")

# What a slug keeps (gstack's ``tr -cd 'a-zA-Z0-9._-'``).
# Plain string checks, not regexes: importing ``re`` costs a hook process several ms.
_SLUG_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"


def _env(env):
    return os.environ if env is None else env


def _home(env) -> str:
    home = env.get("HOME")
    return home if home else os.path.expanduser("~")


def state_root(env=None) -> str:
    """``$GSTACK_STATE_ROOT``, else ``$GSTACK_HOME``, else ``~/.gstack``.

    Empty values count as unset, as in gstack's ``${VAR:-}`` chains.
    """
    env = _env(env)
    for name in ("GSTACK_STATE_ROOT", "GSTACK_HOME"):
        value = env.get(name)
        if value:
            return value
    return os.path.join(_home(env), ".gstack")


def gstack_home(env=None) -> str:
    """``$GSTACK_HOME`` else ``~/.gstack``, ignoring ``GSTACK_STATE_ROOT``.

    gstack-slug keeps its slug cache here rather than under the state root;
    sharing the location keeps our cache and gstack's in agreement.
    """
    env = _env(env)
    value = env.get("GSTACK_HOME")
    return value if value else os.path.join(_home(env), ".gstack")


def db_path(explicit=None, env=None) -> str:
    """``--db`` value, else ``$PLANTUNE_DB``, else ``<state_root>/plantune.db``."""
    if explicit:
        return os.fspath(explicit)
    env = _env(env)
    value = env.get("PLANTUNE_DB")
    if value:
        return value
    return os.path.join(state_root(env), "plantune.db")


def is_own_database(path, env=None) -> bool:
    """True when ``path`` is the database this environment uses by default (same file)."""
    own = db_path(None, env)
    if os.path.abspath(path) == os.path.abspath(own):
        return True
    try:
        return os.path.samefile(path, own)
    except OSError:
        return False


def sanitize_slug(s) -> str:
    """Drop every character outside ``[a-zA-Z0-9._-]`` (gstack's ``tr -cd``)."""
    s = s or ""
    if not s.strip(_SLUG_CHARS):
        return s  # nothing to drop (the common case)
    return "".join(c for c in s if c in _SLUG_CHARS)


def is_valid_slug(s) -> bool:
    """True when ``s`` is already sanitised and safe as a single path component."""
    return bool(s) and s not in _BAD_SLUGS and sanitize_slug(s) == s


def project_dir(slug, env=None) -> str:
    """``<state_root>/projects/<slug>``.

    Raises ValueError for a slug that could escape ``projects/`` (it may come
    straight from hook stdin or a JSON record).
    """
    if not is_valid_slug(slug):
        raise ValueError(f"unsafe project slug: {slug!r}")
    return os.path.join(state_root(env), "projects", slug)


def slug_cache_file(cwd, env=None) -> str:
    """gstack-slug's per-directory cache file for ``cwd``."""
    return os.path.join(gstack_home(env), "slug-cache", cwd.replace("/", "_"))


# --------------------------------------------------------------------------
# git config reading (no subprocess: hooks must stay fast and must not depend
# on git being installed or on PATH).

# The grammar of a section header and of a key line, as patterns. The reader below follows
# them with string methods (a test keeps the two equal): every question logged in a git
# checkout reads its config for the developer's email, and importing ``re`` would cost
# that call several milliseconds.
_SECTION_RE = r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$'
_KEY_RE = r"^([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$"
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_KEY_CHARS = _LETTERS | frozenset("0123456789-")
_SECTION_CHARS = _KEY_CHARS | frozenset(".")


def _skip_space(line, i):
    while i < len(line) and line[i].isspace():
        i += 1
    return i


def _section_header(line):
    """``(name, subsection or None, rest)`` as ``_SECTION_RE`` matches ``line``, or None."""
    if line[:1] != "[":
        return None
    i = _skip_space(line, 1)
    j = i
    while j < len(line) and line[j] in _SECTION_CHARS:
        j += 1
    if j == i:
        return None
    sub, end = None, j
    k = _skip_space(line, j)
    if k > j and line[k : k + 1] == '"':  # \s+"((?:[^"\\]|\\.)*)"
        m = k + 1
        while m < len(line) and line[m] != '"':
            if line[m] == "\\":
                if m + 1 == len(line):
                    break
                m += 1
            m += 1
        if m < len(line) and line[m] == '"':
            sub, end = line[k + 1 : m], m + 1
    end = _skip_space(line, end)
    if line[end : end + 1] != "]":
        return None
    return line[i:j], sub, line[end + 1 :]


def _unescape(text):
    """``re.sub(r"\\(.)", r"\1", text)``: a backslash keeps the character after it."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] != "\n":
            i += 1
        out.append(text[i])
        i += 1
    return "".join(out)


def _key_line(line):
    """``(key, value or None)`` as ``_KEY_RE`` matches ``line``, or None."""
    if line[:1] not in _LETTERS:
        return None
    j = 1
    while j < len(line) and line[j] in _KEY_CHARS:
        j += 1
    k = _skip_space(line, j)
    if k == len(line):
        return line[:j], None
    if line[k] == "=":
        return line[:j], line[k + 1 :]
    return None


_ESCAPES = {"n": "\n", "t": "\t", "b": "\b"}


def _config_value(raw: str) -> str:
    out = []
    quoted = False
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == '"':
            quoted = not quoted
        elif c == "\\" and i + 1 < len(raw):
            i += 1
            out.append(_ESCAPES.get(raw[i], raw[i]))
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip()


def _config_get(config_file: str, section: str, subsection, key: str) -> str:
    """First value of ``section[.subsection].key`` in one git config file, or "".

    Only the file itself is read: ``include``/``includeIf`` files and ``url.*.insteadOf``
    rewrites are not followed; none of those matter for ordinary set-ups, and honouring
    them would mean reading more files on every hook call.
    """
    try:
        with safe_io.open_text(config_file, errors="replace") as fh:
            text = fh.read()
    except OSError:
        return ""
    dotted = f"{section}.{subsection}" if subsection is not None else section
    inside = False
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        # Backslash-newline continues a value onto the next line.
        while line.endswith("\\") and i < len(lines):
            line = line[:-1] + lines[i].strip()
            i += 1
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            header = _section_header(line)
            if header is None:
                inside = False
                continue
            name, sub, line = header[0].lower(), header[1], header[2].strip()
            if sub is not None:
                inside = subsection is not None and name == section and _unescape(sub) == subsection
            else:
                # Deprecated "[remote.origin]" form; its subsection is case-insensitive.
                inside = name == dotted.lower()
            if not line:
                continue
        if not inside:
            continue
        found = _key_line(line)
        if found and found[0].lower() == key and found[1] is not None:
            value = _config_value(found[1])
            if value:
                return value
    return ""


def _config_origin_url(config_file: str) -> str:
    """First ``remote.origin.url`` in one git config file, or "" (as ``git remote get-url``
    for ordinary clones; global config is not consulted)."""
    return _config_get(config_file, "remote", "origin", "url")


def _read_first_line(path: str) -> str:
    try:
        with safe_io.open_text(path, errors="replace") as fh:
            return fh.readline().strip()
    except OSError:
        return ""


def _git_config_file(dot_git: str) -> str:
    """Path of the config file for a ``.git`` entry (directory or gitdir file)."""
    if os.path.isdir(dot_git):
        return os.path.join(dot_git, "config")
    line = _read_first_line(dot_git)
    if not line.startswith("gitdir:"):
        return ""
    gitdir = line[len("gitdir:") :].strip()
    if not gitdir:
        return ""
    gitdir = os.path.join(os.path.dirname(dot_git), gitdir)
    # Linked worktrees keep their remotes in the main repository's common dir;
    # submodules and plain --separate-git-dir checkouts have no commondir file.
    common = _read_first_line(os.path.join(gitdir, "commondir"))
    if common:
        gitdir = os.path.join(gitdir, common)
    return os.path.join(os.path.normpath(gitdir), "config")


def origin_url(repo_dir: str) -> str:
    """``origin`` url of the repository whose ``.git`` entry is in ``repo_dir``, or ""."""
    config = _git_config_file(os.path.join(repo_dir, ".git"))
    return _config_origin_url(config) if config else ""


def git_user_email(cwd=None, env=None) -> str:
    """``user.email`` as git would resolve it for ``cwd``, or "" (no subprocess).

    The nearest repository's own config wins, then ``$GIT_CONFIG_GLOBAL`` or
    ``~/.gitconfig``, then ``$XDG_CONFIG_HOME/git/config``: git's order for these files.
    """
    env = _env(env)
    cwd = os.path.abspath(os.fspath(cwd)) if cwd else _default_cwd(env)
    files = []
    for d in ancestors(cwd) if cwd else ():
        dot_git = os.path.join(d, ".git")
        if os.path.lexists(dot_git):
            config = _git_config_file(dot_git)
            if config:
                files.append(config)
            break
    home = _home(env)
    files.append(env.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"))
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files.append(os.path.join(xdg, "git", "config"))
    for config in files:
        email = _config_get(config, "user", None, "email")
        if email:
            return email
    return ""


def slug_from_remote_url(url: str) -> str:
    """``owner-repo`` from a remote url (scp-like, scheme or local path).

    The last two components separated by "/" or ":" are used, which is what
    gstack's ``sed 's|.*[:/]\\([^/]*/[^/]*\\)$|\\1|'`` yields for the forms seen
    in practice (a one-segment ``https://host/repo`` gives ``host-repo`` there
    too). Returns the sanitised result, which may be "", "." or "..": the caller
    decides what to reject.
    """
    u = (url or "").strip().rstrip("/")
    if u.endswith(".git"):
        u = u[:-4].rstrip("/")
    parts = [p for p in u.replace(":", "/").split("/") if p]
    return sanitize_slug("-".join(parts[-2:]))


# --------------------------------------------------------------------------
# slug resolution


def ancestors(cwd: str):
    """``cwd`` and its parents, innermost first, stopping before "/" and at the cap."""
    d = cwd
    for _ in range(MAX_WALK_DEPTH):
        if not d or d == os.sep:
            return
        yield d
        parent = os.path.dirname(d)
        if parent == d:
            return
        d = parent


def _default_cwd(env) -> str:
    # bash's `pwd` (what gstack keys its cache on) is the logical $PWD, which
    # differs from getcwd() under symlinked directories.
    try:
        real = os.getcwd()
    except OSError:
        real = ""
    logical = env.get("PWD") or ""
    if logical and os.path.isabs(logical):
        if not real:
            return logical
        try:
            if os.path.samefile(logical, real):
                return logical
        except OSError:
            pass
    return real


def _read_cache(path: str) -> str:
    try:
        with safe_io.open_text(path, errors="replace") as fh:
            raw = fh.read(4096).strip()
    except OSError:
        return ""
    # Newer gstack releases write versioned entries ("v2:<slug>"); without this
    # the prefix would be sanitised into the slug ("v2slug").
    if raw.startswith("v2:"):
        raw = raw[3:].strip()
    slug = sanitize_slug(raw)
    # Self-heal: "", ".", ".." are unusable, and "unknown" is the give-up value
    # of an earlier failed resolution (e.g. a hook run from a vanished cwd), not
    # a real identity, so pinning it forever would hide the project. Returning ""
    # makes the caller recompute and overwrite the entry.
    if slug in _BAD_SLUGS or slug == "unknown":
        return ""
    return slug


def _write_cache(path: str, slug: str) -> None:
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(slug)
        os.replace(tmp, path)
    except (OSError, ValueError):
        # Best effort: a read-only home or an over-long cwd key (NAME_MAX) must
        # not break a hook; the slug is simply recomputed next time.
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _resolve_uncached(cwd: str):
    dirs = list(ancestors(cwd))
    # Rule 3: outermost repository whose origin resolves. Only directories with
    # a .git entry get their config read, so this is one lstat per level.
    git_dirs = {d for d in dirs if os.path.lexists(os.path.join(d, ".git"))}
    for d in reversed(dirs):
        if d not in git_dirs:
            continue
        url = origin_url(d)
        if url:
            slug = slug_from_remote_url(url)
            if slug not in _BAD_SLUGS:
                return slug, "remote"
            # The outermost origin decides identity; a hostile or degenerate one
            # falls through to the markers rather than to an inner repo's remote.
            break
    # Rule 4: outermost strong marker, else outermost weak marker.
    strong = weak = ""
    for d in dirs:
        if d in git_dirs or any(os.path.isfile(os.path.join(d, m)) for m in STRONG_MARKERS):
            strong = d
        elif any(os.path.isfile(os.path.join(d, m)) for m in WEAK_MARKERS):
            weak = d
    for root, reason in ((strong, "strong-marker"), (weak, "weak-marker")):
        if root:
            slug = sanitize_slug(os.path.basename(root))
            if slug not in _BAD_SLUGS:
                return slug, reason
    # Rule 5.
    slug = sanitize_slug(os.path.basename(cwd))
    if slug not in _BAD_SLUGS:
        return slug, "cwd"
    return "", "unknown"


def resolve_slug_with_reason(cwd=None, env=None, use_cache=True):
    """``(slug, reason)``; ``reason`` is one of :data:`SLUG_REASONS`.

    ``use_cache=False`` neither reads nor writes the slug cache.
    """
    env = _env(env)

    # Rule 1. A value that sanitises to nothing usable falls through instead of
    # naming a directory like projects/.. .
    override = sanitize_slug(env.get("GSTACK_PROJECT_SLUG") or "")
    if override not in _BAD_SLUGS:
        return override, "env"

    cwd = os.path.abspath(os.fspath(cwd)) if cwd else _default_cwd(env)
    if not cwd:
        return "unknown", "unknown"

    cache = slug_cache_file(cwd, env) if use_cache else ""
    if cache:
        cached = _read_cache(cache)
        if cached:
            return cached, "cache"

    slug, reason = _resolve_uncached(cwd)
    if not slug:
        return "unknown", "unknown"
    if cache:
        _write_cache(cache, slug)
    return slug, reason


def resolve_slug(cwd=None, env=None, use_cache=True) -> str:
    """Project slug for ``cwd`` (default: the current directory), as gstack-slug finds it."""
    return resolve_slug_with_reason(cwd, env, use_cache)[0]
