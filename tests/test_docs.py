"""The docs pages: they build without a warning, every page is in the navigation, the README
stays short, and the generated pages (CLI reference, schema) are what cog writes today.

The shell examples of every page are run by tests/test_readme.py.
"""

import os
import shutil

import pytest
import yaml

from tests.helpers import REPO_ROOT

DOCS = os.path.join(REPO_ROOT, "docs")
# Pages whose body cog writes from the code: `make docs` regenerates them.
GENERATED = ["cli.md", "schema.md"]


def nav_pages(entries):
    for entry in entries:
        for value in entry.values():
            if isinstance(value, list):
                yield from nav_pages(value)
            else:
                yield value


def test_every_page_is_in_the_navigation_and_every_entry_is_a_page():
    with open(os.path.join(REPO_ROOT, "mkdocs.yml"), encoding="utf-8") as f:
        config = yaml.safe_load(f)
    pages = sorted(name for name in os.listdir(DOCS) if name.endswith(".md"))
    assert sorted(nav_pages(config["nav"])) == pages


def test_the_docs_build_without_a_warning(tmp_path):
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    config = load_config(
        os.path.join(REPO_ROOT, "mkdocs.yml"), site_dir=str(tmp_path / "site"), strict=True
    )
    build(config)  # --strict: any warning aborts the build with an exception
    assert (tmp_path / "site" / "cli" / "index.html").exists()


@pytest.mark.parametrize("page", GENERATED)
def test_the_generated_page_is_current(page, tmp_path, monkeypatch):
    """cog writes the page again in a temporary copy; the committed page must equal it."""
    from cogapp import Cog

    committed = os.path.join(DOCS, page)
    fresh = tmp_path / page
    shutil.copyfile(committed, fresh)
    monkeypatch.chdir(REPO_ROOT)  # the generators read datasette-metadata.json from here
    assert Cog().main(["cog", "-r", "--verbosity=0", str(fresh)]) == 0
    with open(committed, encoding="utf-8") as f:
        assert fresh.read_text(encoding="utf-8") == f.read(), (
            f"docs/{page} is stale: run `make docs` and commit the result"
        )


def test_the_staleness_check_notices_a_stale_page(tmp_path, monkeypatch):
    from cogapp import Cog

    stale = tmp_path / "cli.md"
    text = open(os.path.join(DOCS, "cli.md"), encoding="utf-8").read()
    stale.write_text(text.replace("Show this message and exit.", "Show help."), encoding="utf-8")
    monkeypatch.chdir(REPO_ROOT)
    Cog().main(["cog", "-r", "--verbosity=0", str(stale)])
    assert stale.read_text(encoding="utf-8") == text


def test_the_schema_page_names_every_table_and_view(conn):
    text = open(os.path.join(DOCS, "schema.md"), encoding="utf-8").read()
    names = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
            " AND name NOT LIKE 'sqlite_%'"
        )
    ]
    assert names and [n for n in names if f"\n### {n}\n" not in text] == []


def test_the_readme_is_short_and_links_into_the_docs():
    with open(os.path.join(REPO_ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    assert len(text.splitlines()) <= 250
    linked = {name for name in os.listdir(DOCS) if f"(docs/{name})" in text}
    assert {"index.md", "installation.md", "switching.md", "cli.md"} <= linked
