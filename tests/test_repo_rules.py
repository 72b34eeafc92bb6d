"""Rules about the repository's own files."""

import os
import re

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Folders that are not the project's own files: environments, caches, build output.
SKIPPED_DIRS = {"__pycache__", "node_modules", "build", "dist", "htmlcov"}

# gstack's behaviour is described in words, or by naming gstack's own file; a citation of
# a private specification (its name, or its section numbers) means nothing to a reader of
# this repository. This file spells out examples, so it is the one file not scanned.
SPEC_CITATION = re.compile(r"SPEC-gstack|\bSPEC\s*(?:§|section\s*)?\d", re.IGNORECASE)


def repo_text_files():
    """``(relative path, text)`` of every text file of the repository."""
    for top, dirs, files in os.walk(REPO_ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info")
                         and (not d.startswith(".") or d == ".ci"))
        for name in sorted(files):
            path = os.path.join(top, name)
            try:
                if os.path.getsize(path) > 5_000_000:
                    continue
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError):
                continue  # binary files, sockets, unreadable files
            yield os.path.relpath(path, REPO_ROOT), text


def test_no_file_cites_the_private_gstack_specification():
    here = os.path.relpath(os.path.abspath(__file__), REPO_ROOT)
    found = [f"{path}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
             for path, text in repo_text_files() if path != here
             for m in SPEC_CITATION.finditer(text)]
    assert found == []


def test_the_citation_rule_catches_what_it_is_meant_to():
    for cited in ("per SPEC-gstack.md 1.1", "(SPEC 7.2)", "SPEC 11 #24", "spec section 3"):
        assert SPEC_CITATION.search(cited), cited
    for fine in ("gstack's question-log-hook.ts", "specification", "SPECIAL 2"):
        assert not SPEC_CITATION.search(fine), fine
    scanned = {path for path, _ in repo_text_files()}
    for path in ("README.md", "Makefile", os.path.join(".ci", "run"),
                 os.path.join("sql", "views", "inferred_profile.sql")):
        assert path in scanned, path
