"""Tests for toolkit.store.paths: state root, db path and gstack's slug rules (gstack-slug).

Repositories are real (`git init` + `git remote add`) so the config reader is
checked against what git actually writes. Every test sets the environment it
relies on itself, so the file passes with or without the shared conftest.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from toolkit.store import paths
from toolkit.store.paths import (
    MAX_WALK_DEPTH,
    STRONG_MARKERS,
    WEAK_MARKERS,
    db_path,
    project_dir,
    resolve_slug,
    resolve_slug_with_reason,
    sanitize_slug,
    slug_cache_file,
    slug_from_remote_url,
    state_root,
)

# ---------------------------------------------------------------- helpers


def _git_env(home):
    # Isolate from the developer's git config and from any GIT_DIR etc. leaked
    # by a surrounding git hook.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
    )
    return env


@pytest.fixture
def git(tmp_path):
    home = tmp_path / "githome"
    home.mkdir(exist_ok=True)
    genv = _git_env(home)

    def run(*args, cwd):
        subprocess.run(
            ["git", "-c", "init.defaultBranch=main", *args],
            cwd=str(cwd),
            env=genv,
            check=True,
            capture_output=True,
        )

    return run


@pytest.fixture
def init_repo(git):
    def make(path, origin=None):
        path.mkdir(parents=True, exist_ok=True)
        git("init", "-q", cwd=path)
        if origin is not None:
            git("remote", "add", "origin", origin, cwd=path)
        return path

    return make


@pytest.fixture
def slug_env(tmp_path, monkeypatch):
    """Clean slug-related environment; returns (gstack_home, state_root)."""
    home = tmp_path / "userhome"
    gh = tmp_path / "gstack-home"
    sr = tmp_path / "state-root"
    for d in (home, gh, sr):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GSTACK_HOME", str(gh))
    monkeypatch.setenv("GSTACK_STATE_ROOT", str(sr))
    monkeypatch.delenv("GSTACK_PROJECT_SLUG", raising=False)
    monkeypatch.delenv("PLANTUNE_DB", raising=False)
    return gh, sr


def _markers_above(path):
    hits = []
    for d in list(path.parents)[:-1]:  # the filesystem root is never walked
        for m in (".git",) + STRONG_MARKERS + WEAK_MARKERS:
            if os.path.lexists(d / m):
                hits.append(str(d / m))
    return hits


@pytest.fixture
def work(tmp_path, slug_env):
    """A scratch directory whose ancestors carry no project markers."""
    w = tmp_path / "w"
    w.mkdir()
    hits = _markers_above(w)
    if hits:
        pytest.skip(f"project markers above the temp dir would leak into the walk: {hits}")
    return w


def _cache_path(cwd):
    return slug_cache_file(str(cwd))


# ---------------------------------------------------------------- state root / db


def test_state_root_precedence(tmp_path):
    env = {"HOME": str(tmp_path), "GSTACK_STATE_ROOT": "/sr", "GSTACK_HOME": "/gh"}
    assert state_root(env) == "/sr"
    del env["GSTACK_STATE_ROOT"]
    assert state_root(env) == "/gh"
    del env["GSTACK_HOME"]
    assert state_root(env) == os.path.join(str(tmp_path), ".gstack")


def test_state_root_empty_string_is_unset(tmp_path):
    env = {"HOME": str(tmp_path), "GSTACK_STATE_ROOT": "", "GSTACK_HOME": "/gh"}
    assert state_root(env) == "/gh"
    env["GSTACK_HOME"] = ""
    assert state_root(env) == os.path.join(str(tmp_path), ".gstack")


def test_state_root_defaults_to_os_environ(tmp_path, monkeypatch):
    monkeypatch.delenv("GSTACK_STATE_ROOT", raising=False)
    monkeypatch.delenv("GSTACK_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert state_root() == os.path.join(str(tmp_path), ".gstack")
    monkeypatch.setenv("GSTACK_HOME", "/gh")
    assert state_root() == "/gh"
    monkeypatch.setenv("GSTACK_STATE_ROOT", "/sr")
    assert state_root() == "/sr"


def test_db_path_precedence(tmp_path):
    env = {"HOME": str(tmp_path), "GSTACK_STATE_ROOT": "/sr", "PLANTUNE_DB": "/x/env.db"}
    assert db_path("/x/explicit.db", env) == "/x/explicit.db"
    assert db_path(None, env) == "/x/env.db"
    env["PLANTUNE_DB"] = ""
    assert db_path(None, env) == os.path.join("/sr", "plantune.db")
    del env["GSTACK_STATE_ROOT"]
    assert db_path(env=env) == os.path.join(str(tmp_path), ".gstack", "plantune.db")


def test_db_path_accepts_pathlike(tmp_path):
    assert db_path(tmp_path / "a.db", {}) == str(tmp_path / "a.db")


def test_db_path_defaults_to_os_environ(monkeypatch):
    monkeypatch.setenv("PLANTUNE_DB", "/x/env.db")
    assert db_path() == "/x/env.db"


def test_project_dir():
    env = {"GSTACK_STATE_ROOT": "/sr"}
    assert project_dir("owner-repo", env) == os.path.join("/sr", "projects", "owner-repo")
    for bad in ("", ".", "..", "a/b", "../x"):
        with pytest.raises(ValueError):
            project_dir(bad, env)


def test_sanitize_slug():
    assert sanitize_slug("my proj!@#") == "myproj"
    assert sanitize_slug("a/b\\c;$(rm -rf)`x`") == "abcrm-rfx"
    assert sanitize_slug("Ok_1.2-3") == "Ok_1.2-3"
    assert sanitize_slug("héllo") == "hllo"
    assert sanitize_slug(None) == ""


# ---------------------------------------------------------------- rule 1: env override


def test_env_override_is_sanitised_and_never_cached(work, monkeypatch, init_repo):
    repo = init_repo(work / "r", origin="git@github.com:o/r.git")
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", "my proj/../x!")
    assert resolve_slug_with_reason(repo) == ("myproj..x", "env")
    assert not os.path.exists(_cache_path(repo))
    # Once the override is gone the real identity comes back: nothing stuck.
    monkeypatch.delenv("GSTACK_PROJECT_SLUG")
    assert resolve_slug(repo) == "o-r"


@pytest.mark.parametrize("value", ["", "..", ".", "/!!"])
def test_env_override_unusable_falls_through(work, monkeypatch, value):
    d = work / "plain"
    d.mkdir()
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", value)
    assert resolve_slug_with_reason(d) == ("plain", "cwd")


# ---------------------------------------------------------------- rule 2: cache


def test_cache_is_sticky_and_lives_under_gstack_home(work, slug_env, git):
    gh, sr = slug_env
    d = work / "proj"
    d.mkdir()
    assert resolve_slug_with_reason(d) == ("proj", "cwd")
    cache = gh / "slug-cache" / str(d).replace("/", "_")
    assert cache.read_text() == "proj"
    assert not (sr / "slug-cache").exists()

    # A remote added later does not move the project (gstack #2212 stickiness).
    git("init", "-q", cwd=d)
    git("remote", "add", "origin", "https://github.com/acme/widgets.git", cwd=d)
    assert resolve_slug_with_reason(d) == ("proj", "cache")
    assert resolve_slug_with_reason(d, use_cache=False) == ("acme-widgets", "remote")
    assert cache.read_text() == "proj"  # use_cache=False does not write either


def test_cache_uses_home_when_gstack_home_unset(work, monkeypatch, tmp_path):
    monkeypatch.delenv("GSTACK_HOME")
    d = work / "proj"
    d.mkdir()
    resolve_slug(d)
    expected = tmp_path / "userhome" / ".gstack" / "slug-cache" / str(d).replace("/", "_")
    assert expected.read_text() == "proj"


def test_cache_value_is_sanitised(work):
    d = work / "proj"
    d.mkdir()
    cache = _cache_path(d)
    os.makedirs(os.path.dirname(cache))
    with open(cache, "w") as fh:
        fh.write("  team/app!\n")
    assert resolve_slug_with_reason(d) == ("teamapp", "cache")


def test_cache_accepts_versioned_entries(work):
    d = work / "proj"
    d.mkdir()
    cache = _cache_path(d)
    os.makedirs(os.path.dirname(cache))
    with open(cache, "w") as fh:
        fh.write("v2:acme-widgets")
    assert resolve_slug_with_reason(d) == ("acme-widgets", "cache")


@pytest.mark.parametrize("bad", ["", "   \n", ".", "..", "unknown", "!!!", "v2:"])
def test_cache_self_heals_bad_values(work, init_repo, bad):
    repo = init_repo(work / "r", origin="https://github.com/acme/widgets")
    cache = _cache_path(repo)
    os.makedirs(os.path.dirname(cache))
    with open(cache, "w") as fh:
        fh.write(bad)
    assert resolve_slug_with_reason(repo) == ("acme-widgets", "remote")
    with open(cache) as fh:
        assert fh.read() == "acme-widgets"


# ---------------------------------------------------------------- rule 3: origin remote


def test_outermost_origin_wins_over_nested_repo(work, init_repo):
    outer = init_repo(work / "outer", origin="git@github.com:acme/outer.git")
    inner = init_repo(outer / "vendor" / "inner", origin="git@github.com:other/inner.git")
    sub = inner / "src"
    sub.mkdir()
    assert resolve_slug_with_reason(sub) == ("acme-outer", "remote")
    assert resolve_slug_with_reason(inner, use_cache=False) == ("acme-outer", "remote")


def test_outer_repo_without_origin_does_not_win(work, init_repo):
    # A stray `git init` in an ancestor (e.g. a dotfiles repo) has no origin,
    # so it must not steal the identity of a real clone below it.
    outer = init_repo(work / "stray")
    inner = init_repo(outer / "code" / "app", origin="https://gitlab.com/team/app.git")
    assert resolve_slug_with_reason(inner) == ("team-app", "remote")


@pytest.mark.parametrize(
    "url, expected",
    [
        ("git@github.com:owner/repo.git", "owner-repo"),
        ("git@github.com:owner/repo", "owner-repo"),
        ("https://github.com/owner/repo", "owner-repo"),
        ("https://github.com/owner/repo.git", "owner-repo"),
        ("https://github.com/owner/repo/", "owner-repo"),
        ("https://user@gitlab.example.com/group/sub/repo.git", "sub-repo"),
        ("ssh://git@host.example.com:22/owner/repo.git", "owner-repo"),
        ("ssh://git@host.example.com/owner/repo", "owner-repo"),
        ("file:///srv/git/project.git", "git-project"),
        ("/srv/git/project.git", "git-project"),
        ("https://host.example.com/repo", "host.example.com-repo"),
        ("https://github.com/own er/re$po.git", "owner-repo"),
    ],
)
def test_origin_url_forms(work, init_repo, url, expected):
    repo = init_repo(work / "clone", origin=url)
    assert resolve_slug_with_reason(repo) == (expected, "remote")


@pytest.mark.parametrize(
    "url, expected",
    [
        ("git@github.com:owner/repo.git", "owner-repo"),
        ("ssh://git@host:22/owner/repo.git", "owner-repo"),
        ("https://host/owner/repo.git/", "owner-repo"),
        ("  https://host/owner/repo\n", "owner-repo"),
        ("../sibling", "..-sibling"),
        ("repo", "repo"),
        (".", "."),
        ("..", ".."),
        ("/", ""),
        ("", ""),
        (".git", ""),
    ],
)
def test_slug_from_remote_url(url, expected):
    assert slug_from_remote_url(url) == expected


@pytest.mark.parametrize("url", [".", "..", "/", ".git"])
def test_degenerate_origin_is_rejected(work, init_repo, url):
    repo = init_repo(work / "myrepo", origin=url)
    sub = repo / "pkg"
    sub.mkdir()
    # Falls through to rule 4: the repo's .git is a strong marker.
    assert resolve_slug_with_reason(sub) == ("myrepo", "strong-marker")


def test_degenerate_outer_origin_does_not_fall_back_to_inner_remote(work, init_repo):
    outer = init_repo(work / "outer", origin="..")
    inner = init_repo(outer / "inner", origin="git@github.com:o/inner.git")
    assert resolve_slug_with_reason(inner) == ("outer", "strong-marker")


def test_worktree_git_file_reads_main_repo_config(work, init_repo, git):
    main = init_repo(work / "main", origin="git@github.com:acme/main-repo.git")
    (main / "f").write_text("x")
    git("add", "f", cwd=main)
    git("commit", "-q", "-m", "init", cwd=main)
    wt = work / "elsewhere" / "feature-wt"
    git("worktree", "add", "-q", "-b", "feature", str(wt), cwd=main)
    assert (wt / ".git").is_file()
    sub = wt / "deep"
    sub.mkdir()
    assert resolve_slug_with_reason(sub) == ("acme-main-repo", "remote")


def test_relative_gitdir_file_without_commondir(work, git):
    # Submodule / --separate-git-dir layout: `.git` is a file pointing at a
    # gitdir (relative path) that has its own config and no commondir.
    store = work / "store" / "mod.git"
    store.mkdir(parents=True)
    git("init", "-q", "--bare", cwd=store)
    git("remote", "add", "origin", "https://github.com/acme/module.git", cwd=store)
    checkout = work / "checkout"
    checkout.mkdir()
    (checkout / ".git").write_text("gitdir: ../store/mod.git\n")
    assert resolve_slug_with_reason(checkout) == ("acme-module", "remote")


def test_config_parsing_edge_cases(work):
    repo = work / "hand"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(
        "# comment\n"
        "[core]\n\tbare = false\n"
        '[remote "upstream"]\n\turl = git@github.com:wrong/one.git\n'
        '[Remote "origin"] ; section names are case-insensitive\n'
        "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
        '\tURL = "git@github.com:right/one.git" # trailing comment\n'
        "\turl = git@github.com:second/url.git\n"
    )
    assert resolve_slug_with_reason(repo) == ("right-one", "remote")


def test_origin_subsection_is_case_sensitive(work):
    repo = work / "hand"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text('[remote "Origin"]\n\turl = git@github.com:o/r.git\n')
    assert resolve_slug_with_reason(repo) == ("hand", "strong-marker")


def test_unreadable_gitdir_file_is_not_fatal(work):
    repo = work / "broken"
    repo.mkdir()
    (repo / ".git").write_text("not a gitdir line\n")
    assert resolve_slug_with_reason(repo) == ("broken", "strong-marker")


# ---------------------------------------------------------------- rule 4: markers


def test_strong_marker_beats_outer_weak_marker(work):
    outer = work / "docs"
    inner = outer / "app"
    cwd = inner / "src" / "mod"
    cwd.mkdir(parents=True)
    (outer / "README.md").write_text("x")
    (inner / "pyproject.toml").write_text("x")
    assert resolve_slug_with_reason(cwd) == ("app", "strong-marker")


def test_outermost_strong_marker_wins(work):
    outer = work / "mono"
    inner = outer / "packages" / "web"
    inner.mkdir(parents=True)
    (outer / "package.json").write_text("{}")
    (inner / "Cargo.toml").write_text("")
    assert resolve_slug_with_reason(inner) == ("mono", "strong-marker")


@pytest.mark.parametrize("marker", STRONG_MARKERS)
def test_each_strong_marker(work, marker):
    root = work / "root"
    cwd = root / "a"
    cwd.mkdir(parents=True)
    (root / marker).write_text("")
    assert resolve_slug_with_reason(cwd) == ("root", "strong-marker")


def test_marker_directory_does_not_count(work):
    # Markers other than .git must be files (gstack tests `-f`).
    root = work / "root"
    (root / "package.json").mkdir(parents=True)
    cwd = root / "a"
    cwd.mkdir()
    assert resolve_slug_with_reason(cwd) == ("a", "cwd")


@pytest.mark.parametrize("marker", WEAK_MARKERS)
def test_weak_marker_fallback(work, marker):
    outer = work / "notes"
    inner = outer / "chapter"
    cwd = inner / "images"
    cwd.mkdir(parents=True)
    (outer / marker).write_text("")
    (inner / "README.md").write_text("")
    assert resolve_slug_with_reason(cwd) == ("notes", "weak-marker")


# ---------------------------------------------------------------- rule 5 and sanitising


def test_basename_fallback(work):
    cwd = work / "a" / "plain-dir"
    cwd.mkdir(parents=True)
    assert resolve_slug_with_reason(cwd) == ("plain-dir", "cwd")
    with open(_cache_path(cwd)) as fh:
        assert fh.read() == "plain-dir"


def test_weird_characters_are_sanitised(work):
    cwd = work / "my proj!@#"
    cwd.mkdir()
    assert resolve_slug_with_reason(cwd) == ("myproj", "cwd")
    with open(_cache_path(cwd)) as fh:
        assert fh.read() == "myproj"


def test_marker_root_name_is_sanitised(work):
    root = work / "Über App (v2)"
    cwd = root / "src"
    cwd.mkdir(parents=True)
    (root / "go.mod").write_text("")
    assert resolve_slug_with_reason(cwd) == ("berAppv2", "strong-marker")


def test_unusable_names_everywhere_give_unknown(work, slug_env):
    gh, _ = slug_env
    cwd = work / "!!!"
    cwd.mkdir()
    assert resolve_slug_with_reason(cwd) == ("unknown", "unknown")
    # "unknown" is not an identity: it must not be cached.
    assert not os.path.exists(_cache_path(cwd))


def test_root_directory_gives_unknown(slug_env):
    assert resolve_slug_with_reason("/", use_cache=False) == ("unknown", "unknown")


# ---------------------------------------------------------------- walk depth cap


def _deep(base, levels):
    p = base
    for _ in range(levels):
        p = p / "d"
    p.mkdir(parents=True)
    return p


def test_depth_cap_seventy_levels(work, init_repo):
    top = init_repo(work / "top", origin="git@github.com:acme/too-far.git")
    (top / "pyproject.toml").write_text("")
    cwd = _deep(top, 70)
    # Everything above the cap is invisible; the result is still sane.
    assert resolve_slug_with_reason(cwd) == ("d", "cwd")


def test_depth_cap_boundary(work):
    root = work / "root"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    within = _deep(root, MAX_WALK_DEPTH - 1)
    assert resolve_slug_with_reason(within, use_cache=False) == ("root", "strong-marker")
    beyond = within / "d"
    beyond.mkdir()
    assert resolve_slug_with_reason(beyond, use_cache=False) == ("d", "cwd")


def test_over_long_cache_key_is_not_fatal(work):
    # The cache file name is the whole cwd; past NAME_MAX the write fails and
    # must be ignored.
    cwd = work
    for _ in range(5):
        cwd = cwd / ("x" * 60)
    cwd.mkdir(parents=True)
    assert resolve_slug(cwd) == "x" * 60
    assert resolve_slug(cwd) == "x" * 60


# ---------------------------------------------------------------- defaults and hot-path guarantees


def test_default_cwd_is_process_cwd(work, monkeypatch):
    d = work / "here"
    d.mkdir()
    monkeypatch.chdir(d)
    monkeypatch.setenv("PWD", str(d))
    assert resolve_slug_with_reason() == ("here", "cwd")


def test_default_cwd_prefers_logical_pwd(work, monkeypatch):
    # bash `pwd` keeps symlinked paths, and gstack keys its cache on that form.
    real = work / "real"
    real.mkdir()
    link = work / "link"
    link.symlink_to(real)
    monkeypatch.chdir(link)
    monkeypatch.setenv("PWD", str(link))
    assert resolve_slug() == "link"
    assert os.path.exists(_cache_path(link))


def test_stale_pwd_is_ignored(work, monkeypatch):
    d = work / "actual"
    d.mkdir()
    monkeypatch.chdir(d)
    monkeypatch.setenv("PWD", str(work))
    assert resolve_slug() == "actual"


def test_explicit_env_mapping_is_used_instead_of_os_environ(work, monkeypatch, tmp_path):
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", "from-os-environ")
    gh = tmp_path / "other-gh"
    d = work / "proj"
    d.mkdir()
    assert resolve_slug(d, env={"GSTACK_HOME": str(gh)}) == "proj"
    assert (gh / "slug-cache" / str(d).replace("/", "_")).exists()


def test_resolution_never_spawns_a_subprocess(work, init_repo, monkeypatch):
    repo = init_repo(work / "r", origin="git@github.com:o/r.git")

    def boom(*a, **k):
        raise AssertionError("toolkit.store.paths must not spawn processes")

    monkeypatch.setattr(subprocess, "Popen", boom)
    monkeypatch.setattr(os, "system", boom)
    if hasattr(os, "posix_spawn"):
        monkeypatch.setattr(os, "posix_spawn", boom)
    assert resolve_slug(repo) == "o-r"
    assert resolve_slug(repo) == "o-r"


def test_module_imports_stay_minimal():
    code = (
        "import sys; import toolkit.store.paths; "
        "heavy = {'subprocess', 'pathlib', 'hashlib', 'json'} & set(sys.modules); "
        "print(sorted(heavy))"
    )
    # Run in a fresh interpreter: this test process has already imported them.
    out = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    ).stdout.strip()
    assert out == "[]"


def test_reasons_are_documented():
    assert set(paths.SLUG_REASONS) == {
        "env",
        "cache",
        "remote",
        "strong-marker",
        "weak-marker",
        "cwd",
        "unknown",
    }
