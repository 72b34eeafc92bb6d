"""Putting plantune where gstack's skills call it: ``plantune gstack link`` and its undoing.

gstack's skill templates run its plan-tune bins by absolute path
(``~/.claude/skills/gstack/bin/gstack-question-preference`` and friends; other hosts use
their own root's ``bin``), so a plantune on PATH is never asked. Linking replaces those
four bins in a gstack tree with a small shell shim that runs plantune's command of the
same name by absolute path.

Where gstack's originals go. A gstack install is a git checkout that gstack upgrades with
``git pull --ff-only --autostash`` (or ``git reset --hard``). The originals, byte for byte
with their modes, are kept in the tree's git folder (``.git/plantune/``): git never lists
or touches its own folder, so neither ``git status`` nor ``git stash``, ``reset --hard`` or
``clean -fdx`` see or remove them, and deleting the tree takes them along. A tree without
a git folder (a vendored copy) keeps them under the state root instead. The shims
themselves show as modified files, which is what they are: gstack's autostash carries
them over a pull that leaves the bins alone, and when a pull or reset does overwrite them
the SessionStart hook links again (``relink_recorded``), never an install the user did not
link. Unlinking puts every original back and removes what was kept, so the tree is
byte-identical to before and ``git status`` is clean.

A shim whose command is plantune's own launcher (or a symlink to it, as pipx and uv tool
make), with the launcher's Python beside it, starts that Python itself exactly as the
launcher would (``python -I -S <command>``), saving the launcher's own ``/bin/sh`` start
(and for a symlink its ``readlink``) on every call, for as long as the command is still
that file and still begins as the launcher does; any other command is run as it is. A
shim whose plantune is gone (uninstalled, venv deleted, its Python removed) runs gstack's
original with the same arguments and stdin.
The originals find their siblings through ``$0``, so the shim hands a bash original its
own text with ``$0`` still naming the shim in ``bin/``.

Only bins this plantune knows are replaced: the SHA-256 of each of gstack's four bins per
known release, or the ones the user already linked with ``--force`` (kept in the link's
manifest), so an upgrade to bins nobody checked is reported, never linked silently.

Stdlib only: the SessionStart hook runs this on the hot path, so what only linking needs
(hashlib, shlex, the json package) is imported where it is used.
"""

import os

from toolkit.store import json_lite, paths, safe_io

BINS = (
    "gstack-question-log",
    "gstack-question-preference",
    "gstack-developer-profile",
    "gstack-builder-profile",
)
# SHA-256 of each bin as gstack released it. A release whose bins differ is refused
# unless forced: plantune answers gstack's protocol as of these scripts.
KNOWN_BINS = {
    "1.68.3.0": {
        "gstack-question-log": "ca41a641146b7db581a9b21d7c88bc001d288e33c841a1e169e16477b4f44f22",
        "gstack-question-preference": "be38bab0f5750cc47d57f13f584c12ac942fe8ffa7b9f8695d934932c1163fa6",
        "gstack-developer-profile": "acc8c1a0615322a3b8d72220f2ff85b38beb2676c0118f31df38695a416586d2",
        "gstack-builder-profile": "11e99f40f65190986b6c95a93db9058b16e9556227e23f99adf03a9f915b9ae7",
    },
}
SHIM_MARK = b"# plantune-shim 1"
SHIM_START = b"#!/bin/sh\n" + SHIM_MARK
STORE = "plantune"  # inside the tree's git folder
MANIFEST = "link.json"
RECORD = "gstack-links.json"  # under the state root: the installs the user linked
SHIM_LIMIT = 4096
# How plantune's launcher (launchers/plantune, installed as every console command) begins.
LAUNCHER_START = b'#!/bin/sh\n"""true"\n# plantune\'s launcher'
READ_LIMIT = 1 << 20


class LinkError(ValueError):
    """A tree we refuse to link or unlink; ``str()`` is the one-line reason (nothing changed)."""


# --------------------------------------------------------------------------
# Finding installs


def install_candidates(home=None):
    """Where gstack installs itself under a home: Claude Code's root, every other host's
    ``~/.<host>/skills/gstack``, opencode's ``~/.config/opencode/skills/gstack`` and the
    checkout gstack's upgrade also knows, ``~/.gstack/repos/gstack``."""
    home = home or os.path.expanduser("~")
    found = [os.path.join(home, ".claude", "skills", "gstack")]
    try:
        names = sorted(os.listdir(home))
    except OSError:
        names = []
    for name in names:
        if name.startswith(".") and name not in (".", "..", ".claude"):
            found.append(os.path.join(home, name, "skills", "gstack"))
    found.append(os.path.join(home, ".config", "opencode", "skills", "gstack"))
    found.append(os.path.join(home, ".gstack", "repos", "gstack"))
    return found


def is_gstack_tree(root) -> bool:
    return os.path.isfile(os.path.join(root, "VERSION")) and os.path.isfile(
        os.path.join(root, "bin", BINS[0])
    )


def find_installs(home=None):
    """The gstack trees under ``home``, each once: a root (or its ``bin``) that is a symlink
    to another install counts as that install (the real path of its bin folder)."""
    out, seen = [], set()
    for root in install_candidates(home):
        if not is_gstack_tree(root):
            continue
        real = os.path.realpath(os.path.join(root, "bin"))
        if real in seen:
            continue
        seen.add(real)
        out.append(os.path.dirname(real))
    return out


# --------------------------------------------------------------------------
# Reading a tree


def version_of(root) -> str:
    try:
        with open(os.path.join(root, "VERSION"), encoding="utf-8", errors="replace") as f:
            return f.readline().strip() or "unknown"
    except OSError:
        return "unknown"


def store_dir(root, env=None) -> str:
    """Where a tree's originals are kept: inside its git folder, else under the state root."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return os.path.join(dot_git, STORE)
    if os.path.isfile(dot_git):  # a worktree or submodule: "gitdir: <path>"
        try:
            with open(dot_git, encoding="utf-8") as f:
                line = f.readline().strip()
        except OSError:
            line = ""
        if line.startswith("gitdir:"):
            target = os.path.join(root, line[len("gitdir:") :].strip())
            if os.path.isdir(target):
                return os.path.join(os.path.realpath(target), STORE)
    import hashlib

    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return os.path.join(paths.state_root(env), "gstack-originals", digest)


def _sha(data) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def is_shim(data) -> bool:
    return data.startswith(SHIM_START)


def is_conflicted_shim(data) -> bool:
    """A bin git left with merge-conflict markers around a shim (see _undo_conflicted_shims)."""
    return data.startswith(b"<<<<<<< ") and SHIM_MARK in data


def shim_target(data):
    """The plantune command a shim runs, else None."""
    import shlex

    if not is_shim(data):
        return None
    for line in data[:SHIM_LIMIT].decode("utf-8", "replace").splitlines():
        if line.startswith("plantune="):
            try:
                words = shlex.split(line[len("plantune=") :])
            except ValueError:
                return None
            return words[0] if words else None
    return None


def _read_bin(path):
    """``(bytes, mode)`` of a bin, or None when missing; LinkError for anything odd."""
    import stat

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise LinkError(f"cannot read {path}: {safe_io.describe(e)}") from None
    if not stat.S_ISREG(st.st_mode):
        raise LinkError(f"{path} is not a regular file ({safe_io.kind_of(st.st_mode)})")
    try:
        with open(path, "rb") as f:
            data = f.read(READ_LIMIT + 1)
    except OSError as e:
        raise LinkError(f"cannot read {path}: {safe_io.describe(e)}") from None
    if len(data) > READ_LIMIT:
        raise LinkError(f"{path} is larger than any gstack bin")
    return data, stat.S_IMODE(st.st_mode)


def _load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json_lite.loads(f.read())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def manifest(root, env=None) -> dict:
    """``{name: {"sha256", "mode"}}`` of the originals kept for ``root``."""
    bins = _load_json(os.path.join(store_dir(root, env), MANIFEST)).get("bins")
    return bins if isinstance(bins, dict) else {}


def _kept_original(store, name, entry):
    """The kept original's bytes when they match the manifest, else None."""
    try:
        with open(os.path.join(store, "bin", name), "rb") as f:
            data = f.read(READ_LIMIT + 1)
    except OSError:
        return None
    if not isinstance(entry, dict) or _sha(data) != entry.get("sha256"):
        return None
    return data


# --------------------------------------------------------------------------
# Shims


def launcher_python(command):
    """The Python a plantune command starts, when it is the one beside its real path (as
    launchers/plantune picks it), else None: a venv whose Python is gone (a removed base
    interpreter) leaves the command in place but unable to run."""
    folder = os.path.dirname(os.path.realpath(command))
    for name in ("python", "python3"):
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def launcher_file(command):
    """The file of plantune's launcher (``launchers/plantune``) that ``command`` is or links
    to, when the Python it starts is beside it, else None: a shim may then start that
    Python the way the launcher does, without the launcher's own ``/bin/sh`` start."""
    if launcher_python(command) is None:
        return None
    real = os.path.realpath(command)
    try:
        with open(real, "rb") as f:
            start = f.read(len(LAUNCHER_START))
    except OSError:
        return None
    return real if start == LAUNCHER_START else None


def shim_text(name, command, original, original_data) -> bytes:
    """The shim for bin ``name``: run plantune's ``command``, else gstack's ``original``."""
    import shlex

    q = shlex.quote
    if original_data.startswith(b"#!/usr/bin/env bash") or original_data.startswith(b"#!/bin/bash"):
        # Its own text with $0 naming this shim: it finds its siblings as if in place.
        fallback = 'exec bash -c "$(cat -- "$gstack")" "$0" "$@"'
    else:
        fallback = f'exec {q(original)} "$@"'
    python = launcher_python(command)
    launcher = launcher_file(command) if python else None
    direct = []
    if launcher:
        # What the launcher's shell part does, minus its own /bin/sh start: while the
        # command is still that file and begins as the launcher does (a reinstall may
        # replace it or point the link elsewhere), and PYTHONPATH does not ask for
        # Python's normal start (which the launcher makes).
        first_lines = LAUNCHER_START.split(b"\n")
        same = launcher == os.path.abspath(command)
        direct = [
            *([] if same else [f"launcher={q(launcher)}"]),
            '[ -x "$plantune" ] && [ -x "$python" ] && [ -z "$PYTHONPATH" ] && '
            + ("" if same else '[ "$plantune" -ef "$launcher" ] && ')
            + "{ IFS= read -r a && IFS= read -r b; } 2>/dev/null < "
            + ('"$plantune"' if same else '"$launcher"')
            + f' && [ "$a$b" = {q((first_lines[0] + first_lines[1]).decode())} ] && '
            'exec "$python" -I -S "$plantune" "$@"',
        ]
    lines = [
        SHIM_START.decode() + f": gstack's {name}, answered by plantune (`plantune gstack link`).",
        "# gstack's own script is kept byte for byte in the file named below;",
        "# `plantune gstack unlink` puts it back. Without plantune, gstack's own runs.",
        f"plantune={q(command)}",
        *([f"python={q(python)}"] if python else []),
        f"gstack={q(original)}",
        *direct,
        '[ -x "$plantune" ] '
        + ('&& [ -x "$python" ] ' if python else "")
        + '&& exec "$plantune" "$@"',
        f'[ -r "$gstack" ] || {{ echo "{name}: plantune and gstack\'s own script are both '
        "gone; run: git checkout -- bin/" + name + '" >&2; exit 127; }',
        fallback,
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")


# --------------------------------------------------------------------------
# Link, unlink, status


def _plantune_commands(plantune_bin):
    commands = {}
    for name in BINS:
        command = os.path.join(plantune_bin, name)
        if not (os.path.isfile(command) and os.access(command, os.X_OK)):
            raise LinkError(f"this plantune has no {name} command in {plantune_bin}")
        commands[name] = command
    return commands


def _check_tree(root):
    if not os.path.isdir(root):
        raise LinkError(f"{root} is not a folder")
    if not is_gstack_tree(root):
        raise LinkError(f"{root} is not a gstack tree (no VERSION and bin/{BINS[0]})")


def _known(current, kept) -> bool:
    """Whether the originals ``{name: sha}`` are a known release's, or the ones linked before."""
    for hashes in KNOWN_BINS.values():
        if current == hashes:
            return True
    return bool(current) and all(
        isinstance(kept.get(n), dict) and kept[n].get("sha256") == h for n, h in current.items()
    )


def _writable(folder):
    probe = folder
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    return os.access(probe, os.W_OK | os.X_OK)


def _plan(root, plantune_bin, force, env, checking=False):
    """Everything ``link`` checks before it writes: ``(commands, store, kept, plan)``.

    ``checking``: a bin half-merged with a shim is not judged (link checks it out first).
    """
    import shlex

    _check_tree(root)
    commands = _plantune_commands(plantune_bin)
    store = store_dir(root, env)
    kept = manifest(root, env)
    plan, conflicted = {}, False
    for name in BINS:
        path = os.path.join(root, "bin", name)
        found = _read_bin(path)
        if found is None:
            continue
        data, mode = found
        if is_conflicted_shim(data):
            if checking:
                conflicted = True
                continue
            raise LinkError(
                f"{path} holds git merge-conflict markers around a plantune shim; "
                f"`git -C {shlex.quote(root)} checkout HEAD -- bin/{name}` gives gstack its own"
            )
        if is_shim(data):
            original = _kept_original(store, name, kept.get(name))
            if original is None:
                raise LinkError(
                    f"{path} is a plantune shim but gstack's original is not kept in {store}; "
                    f"restore it with `git -C {shlex.quote(root)} checkout -- bin/{name}` "
                    "and link again"
                )
            plan[name] = (data, mode, original, kept[name].get("mode", mode), False)
        else:
            plan[name] = (data, mode, data, mode, True)
    current = {n: _sha(p[2]) for n, p in plan.items()}
    if not force and not conflicted and not _known(current, kept):
        version = version_of(root)
        if version in KNOWN_BINS:
            odd = [n for n in BINS if current.get(n) != KNOWN_BINS[version][n]]
            why = f"its {', '.join('bin/' + n for n in odd)} differ from gstack {version}'s"
        else:
            why = f"plantune knows the bins of gstack {', '.join(KNOWN_BINS)} only"
        raise LinkError(
            f"gstack {version} at {root}: {why}; nothing was changed "
            "(link anyway with --force if plantune answers these bins' protocol)"
        )
    for folder in (os.path.join(root, "bin"), store):
        if not _writable(folder):
            raise LinkError(f"cannot write {folder}; nothing was changed")
    return commands, store, kept, plan


def _undo_conflicted_shims(root):
    """Give gstack back a bin that its upgrade left half-merged with a shim.

    ``git pull --autostash`` over a shim whose bin the pull changed succeeds, but puts the
    shim back as a merge conflict: conflict markers in a script gstack runs. The shim is
    ours and regenerable (git's stash still holds it), so the bin is checked out as the
    upgrade left it in HEAD; linking then goes on as over any other gstack bin.
    """
    import subprocess

    conflicted = []
    for name in BINS:
        try:
            with open(os.path.join(root, "bin", name), "rb") as f:
                if is_conflicted_shim(f.read(READ_LIMIT)):
                    conflicted.append(f"bin/{name}")
        except OSError:
            continue
    if not conflicted:
        return
    git = ["git", "-C", root]
    subprocess.run(
        [*git, "checkout", "-q", "HEAD", "--", *conflicted], capture_output=True, timeout=30
    )
    # The pull also staged the shims it could merge; the index goes back to HEAD's bins
    # (the working files, the shims, stay), as after any link.
    subprocess.run(
        [*git, "reset", "-q", "HEAD", "--", *(f"bin/{n}" for n in BINS)],
        capture_output=True,
        timeout=30,
    )


def check_linkable(root, plantune_bin, force=False, env=None) -> None:
    """Raise LinkError when ``link`` would refuse ``root``; writes nothing."""
    _plan(os.path.realpath(root), plantune_bin, force, env, checking=True)


def link(root, plantune_bin, force=False, env=None) -> dict:
    """Link one gstack tree to the plantune commands in ``plantune_bin``.

    Returns ``{name: "linked" | "already linked" | "repointed"}``. Refuses (LinkError,
    nothing changed) a folder that is not a gstack tree, bins it does not know (unless
    ``force``), a shim whose original was not kept, and a tree it cannot write.
    """
    root = os.path.realpath(root)
    _check_tree(root)
    _undo_conflicted_shims(root)
    commands, store, kept, plan = _plan(root, plantune_bin, force, env)
    bin_dir = os.path.join(root, "bin")
    # Originals first: a link cut short leaves kept originals, never a shim without one.
    entries = dict(kept)
    for name, (_data, _mode, original, original_mode, fresh) in plan.items():
        if fresh:
            target = os.path.join(store, "bin", name)
            safe_io.write_atomic(target, original, mode=original_mode)
            os.chmod(target, original_mode)
            entries[name] = {"sha256": _sha(original), "mode": original_mode}
    safe_io.write_atomic(
        os.path.join(store, MANIFEST),
        json_lite.dumps({"root": root, "version": version_of(root), "bins": entries}, indent=2)
        + "\n",
    )
    outcome = {}
    for name, (data, mode, original, _original_mode, fresh) in plan.items():
        wanted = shim_text(name, commands[name], os.path.join(store, "bin", name), original)
        if data == wanted:
            outcome[name] = "already linked"
            continue
        path = os.path.join(bin_dir, name)
        safe_io.write_atomic(path, wanted, mode=mode)
        os.chmod(path, mode)
        outcome[name] = "linked" if fresh else "repointed"
    _remember(root, plantune_bin, env)
    return outcome


def unlink(root, env=None) -> dict:
    """Put gstack's originals back in one tree and drop what the link kept.

    Returns ``{name: "restored" | "not linked"}``. A shim whose original was not kept is
    refused before anything changes.
    """
    import shlex
    import shutil

    root = os.path.realpath(root)
    _check_tree(root)
    store = store_dir(root, env)
    kept = manifest(root, env)
    plan = {}
    for name in BINS:
        path = os.path.join(root, "bin", name)
        found = _read_bin(path)
        if found is None or not is_shim(found[0]):
            continue
        original = _kept_original(store, name, kept.get(name))
        if original is None:
            raise LinkError(
                f"{path} is a plantune shim but gstack's original is not kept in {store}; "
                f"restore it with `git -C {shlex.quote(root)} checkout -- bin/{name}`"
            )
        plan[name] = (original, kept[name].get("mode", found[1]))
    if plan and not _writable(os.path.join(root, "bin")):
        raise LinkError(f"cannot write {os.path.join(root, 'bin')}; nothing was changed")
    outcome = {name: "not linked" for name in BINS}
    for name, (original, mode) in plan.items():
        path = os.path.join(root, "bin", name)
        safe_io.write_atomic(path, original, mode=mode)
        os.chmod(path, mode)
        outcome[name] = "restored"
    shutil.rmtree(store, ignore_errors=True)
    _forget(root, env)
    return outcome


def status(root, plantune_bin, env=None) -> dict:
    """One install's link state: its version and, per bin, what runs it."""
    root = os.path.realpath(root)
    bins = {}
    for name in BINS:
        path = os.path.join(root, "bin", name)
        try:
            found = _read_bin(path)
        except LinkError:
            found = (b"", 0)
        if found is None:
            bins[name] = {"state": "missing", "runs": None}
        elif is_shim(found[0]):
            bins[name] = {"state": "plantune", "runs": shim_target(found[0])}
        else:
            bins[name] = {"state": "gstack", "runs": path}
    present = [b for b in bins.values() if b["state"] != "missing"]
    linked = bool(present) and all(b["state"] == "plantune" for b in present)
    ours = linked and all(
        b["runs"] == os.path.join(plantune_bin, n)
        for n, b in bins.items()
        if b["state"] == "plantune"
    )
    return {
        "root": root,
        "version": version_of(root),
        "linked": linked,
        "linked_to_this_plantune": ours,
        "remembered": root in _record(env).get("installs", {}),
        "bins": bins,
    }


# --------------------------------------------------------------------------
# The record of linked installs, and re-linking after gstack's upgrade


def _record_path(env=None):
    return os.path.join(paths.state_root(env), RECORD)


def _record(env=None) -> dict:
    data = _load_json(_record_path(env))
    if not isinstance(data.get("installs"), dict):
        data["installs"] = {}
    return data


def stamp(path):
    """What a stat tells of a file, enough to see that something wrote it since (None
    when it is missing)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def _stamps(root):
    return {name: stamp(os.path.join(root, "bin", name)) for name in BINS}


def _write_record(data, env):
    safe_io.write_atomic(_record_path(env), json_lite.dumps(data, indent=2) + "\n", mode=0o600)


def _remember(root, plantune_bin, env):
    data = _record(env)
    data["installs"][root] = {"bins": _stamps(root), "plantune": plantune_bin}
    _write_record(data, env)


def _forget(root, env):
    data = _record(env)
    if data["installs"].pop(root, None) is not None:
        _write_record(data, env)


def _relink_plantune(entry, find_plantune_bin):
    """The plantune an install was linked to, while its commands are there; else this one."""
    recorded = entry.get("plantune") if isinstance(entry, dict) else None
    if isinstance(recorded, str):
        try:
            _plantune_commands(recorded)
            return recorded
        except LinkError:
            pass
    return find_plantune_bin()


def relink_recorded(find_plantune_bin, env=None) -> list:
    """Link again every install the user linked whose bins gstack has written since, to
    the plantune it was linked to while that one is installed, else to this one.

    A stat per bin when nothing changed (``find_plantune_bin`` is called only when there
    is something to link). Returns one line per install that could not be linked again
    (empty when all is well); an install whose tree is gone is left alone.
    """
    try:
        with open(_record_path(env), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return []
    try:
        installs = json_lite.loads(raw.decode("utf-8")).get("installs")
    except (ValueError, AttributeError, UnicodeDecodeError):
        return [f"plantune: {_record_path(env)} is not valid JSON; run `plantune gstack link`"]
    problems = []
    for root, entry in installs.items() if isinstance(installs, dict) else []:
        stamps = _stamps(root)
        if isinstance(entry, dict) and entry.get("bins") == stamps:
            continue
        if not os.path.isdir(root):
            continue
        try:
            link(root, _relink_plantune(entry, find_plantune_bin), env=env)
        except (LinkError, OSError, ValueError) as e:
            problems.append(
                f"plantune could not link gstack at {root} again after it changed ({e}); "
                "the bins it changed run gstack's own until `plantune gstack link` succeeds"
            )
    return problems
