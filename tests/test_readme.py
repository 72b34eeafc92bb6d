"""Every shell example in the README and in every page of docs/ works as written.

Each page is read on its own, as a new user would follow it: its ```bash blocks are run in
order, each as one bash script (``set -euo pipefail``), in a fresh HOME (so ``~/.gstack``
is a temp state root), with the console scripts on PATH and a project folder as the
working directory. Blocks fenced as ``text`` are synopses, not examples, and are not run.

A few commands cannot run inside a test; the prelude replaces them with shell functions
that record the call, and the test checks they are exactly the expected ones:
installing plantune (CI installs the built wheel and tests that copy instead), the
contributor ``make`` targets (CI runs ``make test-full``; ``make demo`` has its own test),
and a server that runs until Ctrl-C (started on a free port, asked for one page,
stopped).
"""

import os
import re
import shutil
import subprocess

import pytest

from tests.helpers import BIN_DIR, REPO_ROOT

DOCS = os.path.join(REPO_ROOT, "docs")
PAGES = ["README.md"] + sorted(
    os.path.join("docs", name) for name in os.listdir(DOCS) if name.endswith(".md")
)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)

PRELUDE = r"""
set -euo pipefail
skipped() { printf '%s\n' "$*" >> "$README_SKIPPED"; }
pipx() { skipped pipx "$@"; }
uv() { skipped uv "$@"; }
pip() { skipped pip "$@"; }
make() { skipped make "$@"; }
serve_briefly() {
  local log; log=$(mktemp)
  command plantune "$@" --port 0 > "$log" 2>&1 &
  local pid=$! url=""
  for _ in $(seq 1 150); do
    url=$(sed -n 's/^ *\(http[^ ]*\/-\/sign-in?token=[^ ]*\)$/\1/p' "$log")
    if [ -z "$url" ] && grep -q '^No sign-in' "$log"; then
      url=$(sed -n 's/.* at \(http[^ ]*\) .*/\1/p' "$log")
    fi
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; return 1; }
    sleep 0.2
  done
  [ -n "$url" ] || { kill "$pid"; cat "$log" >&2; return 1; }
  # Signing in redirects to the database page: a browser's cookie jar follows it.
  python3 -c "import sys, urllib.request as u, http.cookiejar as c
u.build_opener(u.HTTPCookieProcessor(c.CookieJar())).open(sys.argv[1], timeout=30)" "$url"
  kill -INT "$pid"; wait "$pid" || true
  skipped "served $*"
}
plantune() {
  if [ "${1:-}" = serve ] && ! printf '%s\n' "$@" | grep -qx -- --get; then
    serve_briefly "$@"
  else
    command plantune "$@"
  fi
}
"""

# What the prelude stands in for, per page, in page order.
EXPECTED_SKIPPED = {
    "README.md": [
        "pipx install .",
        "uv tool install .",
        "pip install .",
        "served serve --db ~/demo.db",
        "make demo",
        "make test",
    ],
    "docs/installation.md": ["pipx install .", "uv tool install .", "pip install ."],
    "docs/calibration.md": [
        "make notebooks",
        "make notebooks NOTEBOOK_DB=~/.gstack/plantune.db NOTEBOOK_SYNTHETIC=0",
        "make notebooks-run NOTEBOOK_PARAMS=project=acme-storefront target=0.3",
    ],
    "docs/datasette.md": [
        "served serve",
        "served serve --port 9000 --db ~/pt-copy.db",
        "served serve --no-auth",
        "make serve",
    ],
}


def page_blocks(page):
    with open(os.path.join(REPO_ROOT, page), encoding="utf-8") as f:
        text = f.read()
    return [(lang, body) for lang, body in FENCE.findall(text)]


def test_shell_examples_are_fenced_as_bash_and_synopses_as_text():
    for page in PAGES:
        langs = {lang for lang, _ in page_blocks(page)}
        assert langs <= {"bash", "text", "json"}, (page, langs)
    assert sum(1 for lang, _ in page_blocks("README.md") if lang == "bash") >= 5
    assert sum(1 for page in PAGES for lang, _ in page_blocks(page) if lang == "bash") >= 25


@pytest.fixture
def user_home(tmp_path, monkeypatch):
    """A new user's machine: empty HOME, a project checkout, Claude Code's folders."""
    home = tmp_path / "home"
    project = home / "src" / "acme-web"
    project.mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'acme-web'\n")
    claude = home / ".claude"
    shutil.copytree(
        os.path.join(REPO_ROOT, "tests", "fixtures", "transcripts"), claude / "projects"
    )
    scripts_dir = claude / "skills" / "gstack" / "scripts"
    scripts_dir.mkdir(parents=True)
    registry_ts = os.path.join(REPO_ROOT, "tests", "fixtures", "question-registry.ts")
    shutil.copy(registry_ts, scripts_dir / "question-registry.ts")
    # gstack's skill templates, each naming the registered questions of its skill.
    from toolkit.core import registry as reg

    signal_keys = set(reg.bundled_signal_map()["map"])
    for entry in reg.validate_source(reg.load_source(registry_ts), signal_keys):
        template = claude / "skills" / "gstack" / entry["skill"] / "SKILL.md.tmpl"
        template.parent.mkdir(parents=True, exist_ok=True)
        with open(template, "a", encoding="utf-8") as f:
            f.write(f"question_id: {entry['id']}\n")
    return home, project


@pytest.mark.parametrize("page", [p for p in PAGES if any(b[0] == "bash" for b in page_blocks(p))])
def test_every_shell_example_runs(page, user_home, tmp_path):
    home, project = user_home
    skipped_file = tmp_path / "skipped.txt"
    env = {
        "HOME": str(home),
        "PATH": f"{BIN_DIR}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "README_SKIPPED": str(skipped_file),
        "GSTACK_QUESTION_LOG_NO_DERIVE": "1",
    }
    for n, (lang, body) in enumerate(page_blocks(page), 1):
        if lang != "bash":
            continue
        p = subprocess.run(
            ["bash", "-c", PRELUDE + body],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert p.returncode == 0, (
            f"{page} block {n} failed (exit {p.returncode}):\n{body}\n--- stdout\n"
            f"{p.stdout[-3000:]}\n--- stderr\n{p.stderr[-3000:]}"
        )
        assert "Traceback" not in p.stderr, body
    skipped = skipped_file.read_text() if skipped_file.exists() else ""
    assert skipped.replace(str(home), "~").splitlines() == EXPECTED_SKIPPED.get(page, [])
