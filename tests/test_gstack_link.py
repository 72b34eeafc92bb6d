"""`plantune gstack link | unlink | status` and the SessionStart hook that links again.

Every test builds a gstack-shaped git tree (gstack's bin names, bash bins that find their
siblings through $0 as gstack's do) and runs the installed commands as a user, a skill
(by absolute path) and Claude Code would. PLANTUNE_GSTACK_SRC names a real gstack checkout
for the end-to-end run on a clone of it.
"""

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.helpers import REPO_ROOT, query, script
from tests.helpers.hooks import started
from toolkit.cli.app import cli
from toolkit.gstack import link as gl

BINS = gl.BINS
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}
EVENT = {
    "skill": "ship",
    "question_id": "ship-changelog-voice-polish",
    "question_summary": "Polish the changelog voice?",
    "user_choice": "accept",
    "recommended": "accept",
    "session_id": "s-link",
}


def fake_bin(name, flavour="1"):
    """A bash bin shaped like gstack's: finds its folder through $0, reads stdin on --stdin."""
    return (
        "#!/usr/bin/env bash\n"
        f"# {name} (gstack-shaped test bin {flavour})\n"
        "set -euo pipefail\n"
        'SCRIPT_DIR="$(cd "$(dirname "$0")" && pwd)"\n'
        'eval "$("$SCRIPT_DIR/gstack-slug")"\n'
        f'echo "gstack {name} in $SCRIPT_DIR slug=$SLUG args=$*"\n'
        'if [ "${1:-}" = "--stdin" ]; then cat; fi\n'
    )


def git(tree, *args, check=True):
    return subprocess.run(
        ["git", "-C", str(tree), *args],
        capture_output=True,
        text=True,
        check=check,
        env={**os.environ, **GIT_ENV},
    )


def make_tree(path, version="1.68.3.0"):
    """A committed gstack-shaped tree at ``path``."""
    (path / "bin").mkdir(parents=True)
    (path / "lib").mkdir()
    (path / "VERSION").write_text(version + "\n")
    (path / "lib" / "jsonl-store.ts").write_text("export const x = 1;\n")
    for name in BINS:
        (path / "bin" / name).write_text(fake_bin(name))
        os.chmod(path / "bin" / name, 0o755)
    (path / "bin" / "gstack-slug").write_text("#!/usr/bin/env bash\necho SLUG=test-slug\n")
    os.chmod(path / "bin" / "gstack-slug", 0o755)
    os.chmod(path / "bin" / "gstack-builder-profile", 0o700)  # modes are kept per bin
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "gstack")
    return path


def snapshot(root):
    """Every file under ``root`` but .git: bytes and mode."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for f in files:
            p = os.path.join(folder, f)
            out[os.path.relpath(p, root)] = (
                open(p, "rb").read(),
                stat.S_IMODE(os.lstat(p).st_mode),
            )
    return out


def run(*args, env=None, input=None):
    return subprocess.run(
        [script("plantune"), *args],
        capture_output=True,
        text=True,
        input=input,
        env={**os.environ, **(env or {})},
    )


def session_start(env=None):
    payload = json.dumps(
        {"hook_event_name": "SessionStart", "source": "startup", "session_id": "s"}
    )
    return run("hook", "session-start", input=payload, env=env)


@pytest.fixture(autouse=True)
def no_claude_config_dir(monkeypatch):
    """`gstack status` reads Claude's settings from $CLAUDE_CONFIG_DIR when it is set."""
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)


@pytest.fixture
def tree(tmp_path):
    return make_tree(tmp_path / "home" / ".claude" / "skills" / "gstack")


@pytest.fixture
def other_plantune(tmp_path):
    """Another plantune install: a bin folder of links to this one's commands."""
    folder = tmp_path / "other plantune" / "bin"
    folder.mkdir(parents=True)
    for name in ("plantune", *BINS):
        (folder / name).symlink_to(script(name))
    return folder


def test_link_status_unlink_round_trip(tree, state_root):
    before = snapshot(tree)
    r = run("gstack", "link", "--gstack-dir", str(tree), "--force")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{tree}: linked to {os.path.dirname(script('plantune'))} (4 bins)\n"
    # The shims are what git sees; the originals, in git's own folder, are not.
    assert sorted(git(tree, "status", "--porcelain").stdout.splitlines()) == sorted(
        f" M bin/{n}" for n in BINS
    )
    for name in BINS:
        kept = tree / ".git" / "plantune" / "bin" / name
        assert kept.read_bytes() == before[f"bin/{name}"][0]
        assert stat.S_IMODE(kept.stat().st_mode) == before[f"bin/{name}"][1]
        assert stat.S_IMODE((tree / "bin" / name).stat().st_mode) == before[f"bin/{name}"][1]
    r = run("gstack", "status", "--gstack-dir", str(tree), "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(r.stdout)
    (install,) = data["installs"]
    assert install["linked_to_this_plantune"] and install["version"] == "1.68.3.0"
    assert {n: b["runs"] for n, b in install["bins"].items()} == {n: script(n) for n in BINS}
    assert data["gstack_hooks"] == [] and data["ok"] is True
    assert install["remembered"]  # the SessionStart hook's record, private to the user
    assert stat.S_IMODE((state_root / gl.RECORD).stat().st_mode) == 0o600
    # Linking again changes nothing.
    again = run("gstack", "link", "--gstack-dir", str(tree))
    assert again.returncode == 0 and "already linked" in again.stdout
    r = run("gstack", "unlink", "--gstack-dir", str(tree))
    assert (r.returncode, r.stdout) == (0, f"{tree}: 4 gstack bins restored\n")
    assert snapshot(tree) == before
    assert git(tree, "status", "--porcelain").stdout == ""
    assert not (tree / ".git" / "plantune").exists()
    assert str(tree) not in json.loads((state_root / gl.RECORD).read_text())["installs"]
    r = run("gstack", "status", "--gstack-dir", str(tree))
    assert r.returncode == 1 and "not linked" in r.stdout
    assert run("gstack", "unlink", "--gstack-dir", str(tree)).stdout == f"{tree}: was not linked\n"


def test_a_skill_calling_the_bin_by_absolute_path_lands_in_the_database(tree, state_root):
    assert run("gstack", "link", "--gstack-dir", str(tree), "--force").returncode == 0
    env = {**os.environ, "GSTACK_PROJECT_SLUG": "linked"}
    p = subprocess.run(
        [str(tree / "bin" / "gstack-question-log"), json.dumps(EVENT)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    assert (p.returncode, p.stderr) == (0, "")
    rows = query(state_root / "plantune.db", "SELECT project, question_id FROM question_log")
    assert rows == [("linked", "ship-changelog-voice-polish")]
    p = subprocess.run(
        [str(tree / "bin" / "gstack-question-preference"), "--check", "ship-test-failure-triage"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert p.returncode == 0 and p.stdout.startswith("ASK_NORMALLY")


def test_reset_hard_then_session_start_links_again(tree, state_root):
    assert run("gstack", "link", "--gstack-dir", str(tree), "--force").returncode == 0
    linked = snapshot(tree)
    git(tree, "reset", "-q", "--hard")  # gstack's upgrade fallback
    assert git(tree, "status", "--porcelain").stdout == ""
    reset = snapshot(tree)
    r = session_start()
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    # The same shims, with the modes git gave the bins (it keeps only 644 or 755).
    assert snapshot(tree) == {k: (linked[k][0], reset[k][1]) for k in linked}
    # Nothing changed since: a stat per bin, nothing written.
    inodes = [os.stat(tree / "bin" / n).st_ino for n in BINS]
    assert session_start().stdout == ""
    assert [os.stat(tree / "bin" / n).st_ino for n in BINS] == inodes
    assert not (state_root / "hook-errors.log").exists()


def test_session_start_links_again_to_the_plantune_it_was_linked_to(tree, other_plantune):
    other = str(other_plantune / "plantune")
    assert (
        run(
            "gstack", "link", "--gstack-dir", str(tree), "--force", "--executable", other
        ).returncode
        == 0
    )
    git(tree, "reset", "-q", "--hard")
    assert session_start().stdout == ""
    shim = (tree / "bin" / "gstack-question-log").read_bytes()
    assert gl.shim_target(shim) == str(other_plantune / "gstack-question-log")
    # That install removed: the plantune running the hook takes over.
    shutil.rmtree(other_plantune)
    git(tree, "reset", "-q", "--hard")
    assert session_start().stdout == ""
    shim = (tree / "bin" / "gstack-question-log").read_bytes()
    assert gl.shim_target(shim) == script("gstack-question-log")


def test_autostash_pull_keeps_the_link_when_the_bins_did_not_change(tree, tmp_path):
    """gstack's ordinary upgrade: `git pull --ff-only --autostash` over the shims."""
    upstream = tmp_path / "upstream"
    git(tmp_path, "clone", "-q", str(tree), str(upstream))
    clone = tmp_path / "home" / ".codex" / "skills" / "gstack"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    assert run("gstack", "link", "--gstack-dir", str(clone), "--force").returncode == 0
    (upstream / "README.md").write_text("new release\n")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-q", "-m", "release")
    git(clone, "pull", "-q", "--ff-only", "--autostash")
    assert (clone / "README.md").exists()
    assert session_start().stdout == ""
    assert run("gstack", "status", "--gstack-dir", str(clone)).returncode == 0
    assert run("gstack", "unlink", "--gstack-dir", str(clone)).returncode == 0
    assert git(clone, "status", "--porcelain").stdout == ""


def test_autostash_pull_that_changes_a_bin_gives_gstack_its_own_back(tree, tmp_path):
    """A pull that changes a shimmed bin 'succeeds' with conflict markers in that bin; the
    next session start checks gstack's new bin out and links the bins it knows."""
    upstream = tmp_path / "upstream"
    git(tmp_path, "clone", "-q", str(tree), str(upstream))
    clone = tmp_path / "home" / ".codex" / "skills" / "gstack"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    assert run("gstack", "link", "--gstack-dir", str(clone), "--force").returncode == 0
    (upstream / "bin" / "gstack-question-log").write_text(fake_bin("gstack-question-log", "2"))
    git(upstream, "commit", "-q", "-am", "release with a new bin")
    git(clone, "pull", "-q", "--ff-only", "--autostash", check=False)
    assert (clone / "bin" / "gstack-question-log").read_bytes().startswith(b"<<<<<<< ")
    r = session_start()
    assert r.returncode == 0
    assert (
        "could not link gstack at"
        in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    )
    # gstack's new bin is whole again and runs; git sees no conflict.
    assert (clone / "bin" / "gstack-question-log").read_text() == fake_bin(
        "gstack-question-log", "2"
    )
    assert " M bin/gstack-question-log" not in git(clone, "status", "--porcelain").stdout
    assert "UU" not in git(clone, "status", "--porcelain").stdout
    p = subprocess.run(
        [str(clone / "bin" / "gstack-question-log"), "x"], capture_output=True, text=True
    )
    assert p.returncode == 0 and "(gstack-shaped test bin 2)" not in p.stdout
    assert p.stdout.startswith(f"gstack gstack-question-log in {clone}/bin")
    # Linking it on purpose (the user's call for a release plantune does not know) works.
    r = run("gstack", "link", "--gstack-dir", str(clone), "--force")
    assert r.returncode == 0, r.stderr
    assert run("gstack", "unlink", "--gstack-dir", str(clone)).returncode == 0
    assert git(clone, "status", "--porcelain").stdout == ""


def test_session_start_reports_bins_it_does_not_know_and_leaves_them(tree):
    assert run("gstack", "link", "--gstack-dir", str(tree), "--force").returncode == 0
    # An upgrade brings bins nobody checked: gstack's own must answer, plantune says so.
    git(tree, "checkout", "-q", "--", "bin")
    (tree / "bin" / "gstack-question-log").write_text(fake_bin("gstack-question-log", "2"))
    git(tree, "commit", "-q", "-am", "upgrade")
    before = snapshot(tree)
    r = session_start()
    assert r.returncode == 0 and r.stderr == ""
    out = json.loads(r.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    assert "\n" not in out["additionalContext"]
    assert out["additionalContext"].startswith(
        f"plantune could not link gstack at {tree} again after it changed (gstack 1.68.3.0 at "
    )
    assert "--force" in out["additionalContext"]
    assert snapshot(tree) == before


def test_session_start_never_links_an_install_the_user_did_not_link(tree, tmp_path):
    other = make_tree(tmp_path / "home" / ".cursor" / "skills" / "gstack")
    assert run("gstack", "link", "--gstack-dir", str(tree), "--force").returncode == 0
    assert run("gstack", "unlink", "--gstack-dir", str(tree)).returncode == 0
    untouched = snapshot(tree), snapshot(other)
    r = session_start()
    assert (r.returncode, r.stdout) == (0, "")
    assert (snapshot(tree), snapshot(other)) == untouched
    # No record at all: nothing to do either.
    shutil.rmtree(tmp_path / "state")
    assert session_start().stdout == ""


def test_a_removed_plantune_falls_back_to_gstacks_original(tree, other_plantune):
    expected = subprocess.run(
        [str(tree / "bin" / "gstack-question-preference"), "--stdin", "a b"],
        input="piped stdin\n",
        capture_output=True,
        text=True,
    )
    r = run(
        "gstack",
        "link",
        "--gstack-dir",
        str(tree),
        "--force",
        "--executable",
        str(other_plantune / "plantune"),
    )
    assert r.returncode == 0, r.stderr
    shutil.rmtree(other_plantune)  # uninstalled, venv deleted
    r = run("gstack", "status", "--gstack-dir", str(tree))
    assert r.returncode == 1 and f"{tree}: linked to another plantune" in r.stdout
    assert f"runs {other_plantune}/gstack-question-log (gone: gstack's own answers)" in r.stdout
    for name in BINS:
        got = subprocess.run(
            [str(tree / "bin" / name), "--stdin", "a b"],
            input="piped stdin\n",
            capture_output=True,
            text=True,
        )
        assert (got.returncode, got.stdout, got.stderr) == (
            0,
            expected.stdout.replace("gstack-question-preference", name),
            "",
        )
    assert f"gstack gstack-question-preference in {tree}/bin slug=test-slug" in expected.stdout


def test_a_plantune_whose_python_is_gone_falls_back_too(tree, tmp_path):
    """A venv whose base interpreter was removed keeps its commands but cannot run them."""
    folder = tmp_path / "venv" / "bin"
    folder.mkdir(parents=True)
    interpreter = tmp_path / "base-python"
    interpreter.write_text("#!/bin/sh\n")
    interpreter.chmod(0o755)
    (folder / "python").symlink_to(interpreter)
    for name in ("plantune", *BINS):
        (folder / name).write_text(f"#!/bin/sh\necho plantune {name}\n")
        (folder / name).chmod(0o755)
    r = run(
        "gstack",
        "link",
        "--gstack-dir",
        str(tree),
        "--force",
        "--executable",
        str(folder / "plantune"),
    )
    assert r.returncode == 0, r.stderr
    shim = tree / "bin" / "gstack-question-log"
    assert subprocess.run([str(shim)], capture_output=True, text=True).stdout == (
        "plantune gstack-question-log\n"
    )
    interpreter.unlink()
    got = subprocess.run([str(shim), "x"], capture_output=True, text=True)
    assert got.stdout == f"gstack gstack-question-log in {tree}/bin slug=test-slug args=x\n"


def launcher_venv(tmp_path):
    """A venv-shaped bin folder holding copies of the launcher, this Python beside them and
    the source tree named in a .pth file (as an editable install)."""
    folder = tmp_path / "venv" / "bin"
    site = tmp_path / "venv" / "lib" / ("python%d.%d" % sys.version_info[:2]) / "site-packages"
    folder.mkdir(parents=True)
    site.mkdir(parents=True)
    (folder / "python").symlink_to(sys.executable)
    (site / "_plantune_test.pth").write_text(REPO_ROOT + "\n")
    for name in ("plantune", *BINS):
        shutil.copy(os.path.join(REPO_ROOT, "launchers", "plantune"), folder / name)
    return folder


def test_a_shim_starts_the_launchers_python_itself_and_still_falls_back(tree, tmp_path, state_root):
    """Linked to the launcher in a venv's bin, the shim starts that venv's Python as the
    launcher would (no second /bin/sh); under PYTHONPATH it leaves the start to the
    launcher; with the Python removed it runs gstack's original."""
    folder = launcher_venv(tmp_path)
    r = run(
        "gstack",
        "link",
        "--gstack-dir",
        str(tree),
        "--force",
        "--executable",
        str(folder / "plantune"),
    )
    assert r.returncode == 0, r.stderr
    shim = tree / "bin" / "gstack-question-log"
    assert '"$python" -I -S "$plantune"' in shim.read_text()
    for i, extra in enumerate(({}, {"PYTHONPATH": REPO_ROOT})):
        event = dict(EVENT, question_summary=f"Polish the changelog voice? ({i})")
        p = subprocess.run(
            [str(shim), json.dumps(event)],
            capture_output=True,
            text=True,
            env={**os.environ, "GSTACK_PROJECT_SLUG": "linked", **extra},
        )
        assert (p.returncode, p.stderr) == (0, "")
    rows = query(state_root / "plantune.db", "SELECT question_summary FROM question_log")
    assert sorted(rows) == [
        ("Polish the changelog voice? (0)",),
        ("Polish the changelog voice? (1)",),
    ]
    # stdin reaches plantune: the same answer as the command run directly
    argv = ["--check", "ship-changelog-voice-polish", "--question-stdin"]
    pref = [
        subprocess.run([cmd, *argv], input="not json", capture_output=True, text=True)
        for cmd in (str(tree / "bin" / "gstack-question-preference"), script(BINS[1]))
    ]
    assert pref[0].returncode == 1 and pref[0].stderr
    assert (pref[0].returncode, pref[0].stdout, pref[0].stderr) == (
        pref[1].returncode,
        pref[1].stdout,
        pref[1].stderr,
    )
    # A reinstall that makes the command something else: the shim runs it as it is.
    replaced = folder / "gstack-question-log"
    replaced.write_text('#!/bin/sh\necho "replaced $*"\ncat\n')
    got = subprocess.run([str(shim), "x"], input="piped\n", capture_output=True, text=True)
    assert (got.returncode, got.stdout) == (0, "replaced x\npiped\n")
    (folder / "python").unlink()
    got = subprocess.run([str(shim), "x"], capture_output=True, text=True)
    assert got.stdout == f"gstack gstack-question-log in {tree}/bin slug=test-slug args=x\n"


def test_a_shim_over_a_symlinked_launcher_starts_python_until_the_link_moves(
    tree, tmp_path, state_root
):
    """pipx and uv tool put symlinks on PATH: the shim starts the Python beside the file
    they point to while they still point there, and runs whatever they point to after."""
    folder = launcher_venv(tmp_path)
    links = tmp_path / "links"
    links.mkdir()
    for name in ("plantune", *BINS):
        (links / name).symlink_to(folder / name)
    r = run(
        "gstack",
        "link",
        "--gstack-dir",
        str(tree),
        "--force",
        "--executable",
        str(links / "plantune"),
    )
    assert r.returncode == 0, r.stderr
    shim = tree / "bin" / "gstack-question-log"
    assert '"$python" -I -S "$plantune"' in shim.read_text()
    p = subprocess.run(
        [str(shim), json.dumps(EVENT)],
        capture_output=True,
        text=True,
        env={**os.environ, "GSTACK_PROJECT_SLUG": "linked"},
    )
    assert (p.returncode, p.stderr) == (0, "")
    rows = query(state_root / "plantune.db", "SELECT project FROM question_log")
    assert rows == [("linked",)]
    other = tmp_path / "other-command"
    other.write_text('#!/bin/sh\necho "moved $*"\n')
    other.chmod(0o755)
    (links / "gstack-question-log").unlink()
    (links / "gstack-question-log").symlink_to(other)
    got = subprocess.run([str(shim), "x"], capture_output=True, text=True)
    assert (got.returncode, got.stdout) == (0, "moved x\n")
    shutil.rmtree(links)
    got = subprocess.run([str(shim), "x"], capture_output=True, text=True)
    assert got.stdout == f"gstack gstack-question-log in {tree}/bin slug=test-slug args=x\n"


def test_linking_over_another_plantunes_link_keeps_one_shim_and_the_true_originals(
    tree, other_plantune
):
    before = snapshot(tree)
    other = str(other_plantune / "plantune")
    assert (
        run(
            "gstack", "link", "--gstack-dir", str(tree), "--force", "--executable", other
        ).returncode
        == 0
    )
    shutil.rmtree(other_plantune)  # that install is gone; this one links over it
    r = run("gstack", "link", "--gstack-dir", str(tree))
    assert r.returncode == 0, r.stderr
    for name in BINS:
        shim = (tree / "bin" / name).read_bytes()
        assert gl.shim_target(shim) == script(name) and shim.count(b"plantune-shim") == 1
        assert (tree / ".git" / "plantune" / "bin" / name).read_bytes() == before[f"bin/{name}"][0]
    assert sorted(os.listdir(tree / ".git" / "plantune" / "bin")) == sorted(BINS)
    assert run("gstack", "status", "--gstack-dir", str(tree)).returncode == 0
    assert run("gstack", "unlink", "--gstack-dir", str(tree)).returncode == 0
    assert snapshot(tree) == before and git(tree, "status", "--porcelain").stdout == ""


def test_refusals_are_one_line_and_change_nothing(tree, tmp_path, state_root):
    plain = tmp_path / "plain"
    plain.mkdir()
    r = run("gstack", "link", "--gstack-dir", str(plain))
    assert (r.returncode, r.stdout) == (1, "")
    assert (
        r.stderr
        == f"Error: {plain} is not a gstack tree (no VERSION and bin/gstack-question-log)\n"
    )
    for command in ("unlink", "status"):
        r = run("gstack", command, "--gstack-dir", str(plain))
        assert r.returncode == 1
        assert r.stderr.endswith("is not a gstack tree (no VERSION and bin/gstack-question-log)\n")
    before = snapshot(tree)
    r = run("gstack", "link", "--gstack-dir", str(tree))
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith(f"Error: gstack 1.68.3.0 at {tree}: its bin/gstack-question-log, ")
    assert (
        "differ from gstack 1.68.3.0's; nothing was changed (link anyway with --force" in r.stderr
    )
    (tree / "VERSION").write_text("9.9.9.9\n")
    r = run("gstack", "link", "--gstack-dir", str(tree))
    assert r.returncode == 1
    assert f"gstack 9.9.9.9 at {tree}: plantune knows the bins of gstack 1.68.3.0 only" in r.stderr
    git(tree, "checkout", "-q", "--", "VERSION")
    # Two trees, one refused: the other is not linked either.
    r = run("gstack", "link", "--gstack-dir", str(tree), "--gstack-dir", str(plain), "--force")
    assert r.returncode == 1
    assert snapshot(tree) == before and not (tree / ".git" / "plantune").exists()
    assert not (state_root / gl.RECORD).exists()
    # A shim whose original was not kept is refused too.
    assert run("gstack", "link", "--gstack-dir", str(tree), "--force").returncode == 0
    shutil.rmtree(tree / ".git" / "plantune")
    linked = snapshot(tree)
    for args in (["link", "--force"], ["unlink"]):
        r = run("gstack", *args, "--gstack-dir", str(tree))
        assert (
            r.returncode == 1 and "is a plantune shim but gstack's original is not kept" in r.stderr
        )
        assert f"git -C {tree} checkout -- bin/gstack-question-log" in r.stderr
        assert snapshot(tree) == linked


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any folder")
def test_an_unwritable_tree_is_refused(tree):
    before = snapshot(tree)
    os.chmod(tree / "bin", 0o555)
    try:
        r = run("gstack", "link", "--gstack-dir", str(tree), "--force")
    finally:
        os.chmod(tree / "bin", 0o755)
    assert (
        r.returncode == 1 and r.stderr == f"Error: cannot write {tree}/bin; nothing was changed\n"
    )
    assert snapshot(tree) == before


def test_finds_every_install_under_home_once(tree, tmp_path):
    home = tmp_path / "home"
    codex = home / ".codex" / "skills" / "gstack"
    codex.mkdir(parents=True)
    (codex / "bin").symlink_to(tree / "bin")  # gstack's Codex root shares the bins
    (codex / "VERSION").write_text("1.68.3.0\n")
    cursor = home / ".cursor" / "skills"
    cursor.mkdir(parents=True)
    (cursor / "gstack").symlink_to(tree)
    opencode = make_tree(home / ".config" / "opencode" / "skills" / "gstack")
    assert gl.find_installs(str(home)) == [str(tree), str(opencode)]
    r = run("gstack", "link", "--force")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 2, r.stderr
    r = run("gstack", "status", "--json")
    assert r.returncode == 0
    assert [i["root"] for i in json.loads(r.stdout)["installs"]] == [str(tree), str(opencode)]


def test_no_install_found(tmp_path):
    r = run("gstack", "link")
    assert r.returncode == 1
    assert (
        r.stderr == "Error: no gstack install found under your home; name one with --gstack-dir\n"
    )
    r = run("gstack", "status")
    assert (r.returncode, r.stdout) == (1, "no gstack install found under your home\n")


def test_a_known_release_links_without_force(tree, monkeypatch):
    hashes = {n: gl._sha((tree / "bin" / n).read_bytes()) for n in BINS}
    monkeypatch.setitem(gl.KNOWN_BINS, "1.68.3.0", hashes)
    r = CliRunner().invoke(cli, ["gstack", "link", "--gstack-dir", str(tree)])
    assert r.exit_code == 0, r.output
    assert gl.status(str(tree), os.path.dirname(script("plantune")))["linked"]


def test_status_names_gstacks_hooks_left_in_the_settings(tree, tmp_path):
    settings = tmp_path / "home" / ".claude" / "settings.json"
    settings.write_text(json.dumps(gstack_settings(str(tree))))
    assert run("gstack", "link", "--gstack-dir", str(tree), "--force").returncode == 0
    r = run("gstack", "status", "--gstack-dir", str(tree), "--json")
    assert r.returncode == 0  # linked; the hooks are reported, they are not the link
    assert json.loads(r.stdout)["gstack_hooks"] == [
        f"{tree}/hosts/claude/hooks/question-preference-hook",
        f"{tree}/hosts/claude/hooks/question-log-hook",
    ]
    r = run("gstack", "status", "--gstack-dir", str(tree))
    assert "gstack's own plan-tune hooks are also registered" in r.stdout


# --- one handler per event: hook install and uninstall next to gstack's hooks -------------

MATCHER = "(AskUserQuestion|mcp__.*__AskUserQuestion)"


def gstack_settings(root):
    """Settings as gstack's setup leaves them (gstack-settings-hook ensure-event)."""

    def entry(source, command):
        return {
            "_gstack_source": source,
            "matcher": MATCHER,
            "hooks": [{"type": "command", "command": command, "timeout": 5}],
        }

    return {
        "model": "opus",
        "hooks": {
            "SessionStart": [
                {
                    "_gstack_source": "session-update",
                    "hooks": [{"type": "command", "command": f"{root}/bin/gstack-session-update"}],
                }
            ],
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]},
                entry("plan-tune-cathedral", f"{root}/hosts/claude/hooks/question-preference-hook"),
            ],
            "PostToolUse": [
                entry("plan-tune-cathedral", f"{root}/hosts/claude/hooks/question-log-hook"),
                entry("auq-error-fallback", f"{root}/hosts/claude/hooks/auq-error-fallback-hook"),
            ],
        },
    }


def commands(settings, event):
    return [h["command"] for g in settings["hooks"].get(event, []) for h in g["hooks"]]


def test_hook_install_replaces_gstacks_question_hooks_and_uninstall_puts_them_back(tmp_path):
    path = tmp_path / "settings.json"
    before = gstack_settings("/g")
    path.write_text(json.dumps(before))
    plantune = started(script("plantune"))
    r = run("hook", "install", "--settings", str(path))
    assert r.returncode == 0, r.stderr
    assert (
        "PreToolUse: replaced gstack's /g/hosts/claude/hooks/question-preference-hook" in r.stdout
    )
    assert "PostToolUse: replaced gstack's /g/hosts/claude/hooks/question-log-hook" in r.stdout
    assert f"SessionStart: added ({plantune} hook session-start)" in r.stdout
    assert "still runs gstack's own" not in r.stderr
    after = json.loads(path.read_text())
    assert commands(after, "PreToolUse") == ["guard.sh", f"{plantune} hook pre-tool-use"]
    assert commands(after, "PostToolUse") == [
        "/g/hosts/claude/hooks/auq-error-fallback-hook",
        f"{plantune} hook post-tool-use",
    ]
    assert commands(after, "SessionStart") == [
        "/g/bin/gstack-session-update",
        f"{plantune} hook session-start",
    ]
    assert "matcher" not in after["hooks"]["SessionStart"][1]
    assert after["model"] == "opus"
    # Installing again: nothing more replaced, nothing duplicated.
    r = run("hook", "install", "--settings", str(path))
    assert "replaced" not in r.stdout and json.loads(path.read_text()) == after
    r = run("hook", "uninstall", "--settings", str(path))
    assert r.returncode == 0, r.stderr
    assert "put back gstack's /g/hosts/claude/hooks/question-log-hook" in r.stdout
    restored = json.loads(path.read_text())
    for event in ("PreToolUse", "PostToolUse", "SessionStart"):
        assert sorted(commands(restored, event)) == sorted(commands(before, event))
        assert sorted(map(json.dumps, restored["hooks"][event])) == sorted(
            map(json.dumps, before["hooks"][event])
        )
    assert run("hook", "uninstall", "--settings", str(path)).stdout.endswith(
        "no plantune hook entries\n"
    )


def test_keep_gstack_hooks_leaves_them_and_says_answers_count_twice(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(gstack_settings("/g")))
    r = run("hook", "install", "--settings", str(path), "--keep-gstack-hooks")
    assert r.returncode == 0 and "replaced" not in r.stdout
    assert "still runs gstack's own question hooks" in r.stderr
    after = json.loads(path.read_text())
    assert "/g/hosts/claude/hooks/question-log-hook" in commands(after, "PostToolUse")
    assert run("hook", "uninstall", "--settings", str(path)).returncode == 0
    assert json.loads(path.read_text()) == gstack_settings("/g")


# --- the real gstack, end to end ---------------------------------------------------------

GSTACK_SRC = os.environ.get("PLANTUNE_GSTACK_SRC")


def clone_gstack(source, target):
    """A clone of a gstack checkout; files whose contents the source lacks (a partial
    mirror) are left out of the checkout, so `git status` is still clean."""
    git(target.parent, "clone", "-q", "--no-checkout", source, str(target))
    listing = git(target, "ls-tree", "-r", "HEAD").stdout.splitlines()
    entries = [(line.split()[2], line.split("\t", 1)[1]) for line in listing]
    p = subprocess.run(
        ["git", "-C", str(target), "cat-file", "--batch-check"],
        input="".join(sha + "\n" for sha, _ in entries),
        capture_output=True,
        text=True,
    )
    missing = [path for (_, path), out in zip(entries, p.stdout.splitlines()) if "missing" in out]
    if missing:
        git(target, "sparse-checkout", "set", "--no-cone", "/*", *("!/" + m for m in missing))
    git(target, "checkout", "-q", "HEAD", check=False)
    assert git(target, "status", "--porcelain").stdout == ""
    return target


@pytest.mark.skipif(not GSTACK_SRC, reason="PLANTUNE_GSTACK_SRC names no gstack checkout")
def test_the_real_gstack_end_to_end(tmp_path, state_root, other_plantune):
    home = tmp_path / "home"
    (home / ".claude" / "skills").mkdir(parents=True)
    root = clone_gstack(GSTACK_SRC, home / ".claude" / "skills" / "gstack")
    before = snapshot(root / "bin")
    env = {**os.environ, "GSTACK_PROJECT_SLUG": "real-gstack"}

    def bin_run(name, *args):
        return subprocess.run(
            [str(root / "bin" / name), *args], capture_output=True, text=True, env=env, cwd=root
        )

    gstack_read = bin_run("gstack-question-preference", "--read")
    assert gstack_read.returncode == 0
    # A known release: no --force; every install under the home, found on its own.
    r = run("gstack", "link")
    assert (r.returncode, r.stdout) == (
        0,
        f"{root}: linked to {os.path.dirname(script('plantune'))} (4 bins)\n",
    )
    assert run("gstack", "status").returncode == 0
    # As a skill calls it: by absolute path.
    assert bin_run("gstack-question-log", json.dumps(EVENT)).returncode == 0
    rows = query(state_root / "plantune.db", "SELECT project, question_id FROM question_log")
    assert rows == [("real-gstack", "ship-changelog-voice-polish")]
    check = bin_run("gstack-question-preference", "--check", "ship-changelog-voice-polish")
    assert check.returncode == 0 and check.stdout.startswith("ASK_NORMALLY")
    # gstack's upgrade fallback undoes the link; the next session start redoes it.
    git(root, "reset", "-q", "--hard")
    assert session_start().stdout == ""
    assert run("gstack", "status").returncode == 0
    # Linked to a plantune that is then removed: gstack's own scripts answer.
    assert run("gstack", "link", "--executable", str(other_plantune / "plantune")).returncode == 0
    shutil.rmtree(other_plantune)
    fallback = bin_run("gstack-question-preference", "--read")
    assert (fallback.returncode, fallback.stdout) == (0, gstack_read.stdout)
    assert bin_run("gstack-builder-profile").returncode == 0
    assert run("gstack", "unlink").returncode == 0
    assert snapshot(root / "bin") == before
    assert git(root, "status", "--porcelain").stdout == ""


def test_session_start_says_when_gstacks_setup_put_its_hooks_back(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(gstack_settings("/g")))
    assert run("hook", "install", "--settings", str(path)).returncode == 0
    assert session_start().stdout == ""
    # Another writer (Claude Code itself) changes the file: read once, then quiet.
    settings = json.loads(path.read_text())
    settings["model"] = "sonnet"
    path.write_text(json.dumps(settings))
    assert session_start().stdout == ""
    # gstack's setup at an upgrade registers its question hook again.
    settings["hooks"]["PostToolUse"].append(gstack_settings("/g")["hooks"]["PostToolUse"][0])
    path.write_text(json.dumps(settings))
    for _ in range(2):  # said at every session start until it is fixed
        r = session_start()
        assert r.returncode == 0 and r.stderr == ""
        context = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
        assert context == (
            f"plantune: gstack's own question hooks are registered again in {path} (gstack's "
            "setup adds them back when its plan_tune_hooks setting is yes), so questions are "
            f"judged and logged twice; `plantune hook install --settings {path}` replaces them"
        )
    assert run("hook", "install", "--settings", str(path)).returncode == 0
    assert session_start().stdout == ""
    # Kept on purpose: never said.
    assert run("hook", "install", "--settings", str(path), "--keep-gstack-hooks").returncode == 0
    settings = json.loads(path.read_text())
    settings["hooks"]["PostToolUse"].append(gstack_settings("/g")["hooks"]["PostToolUse"][0])
    path.write_text(json.dumps(settings))
    assert session_start().stdout == ""
    # Uninstalled: that settings file is no longer plantune's concern.
    assert run("hook", "uninstall", "--settings", str(path)).returncode == 0
    assert session_start().stdout == ""
