"""gstack's dedup window stays exact while gstack lines wait for import.

gstack skips an event when a line with the same source and tool_use_id (both present) is
among the last 100 lines of the project's question-log.jsonl. While a backlog is pending,
plantune's window is the file's unread lines among those 100 plus the database's newest
rows for the rest, and an unread line counts only if the importer will import it. Each
test runs the real commands against real files, with the background-ingest lock held as a
running ingest holds it.
"""

import json
import os

import pytest

from tests.helpers.hotpath import SLUG, count, db_rows, log, pref, project_dir
from tests.test_backlog import (
    TWO_WAY,
    _append_line,
    _db_file,
    _event,
    _hold_backlog_lock,
    _import_everything,
    _write_backlog,
)
from toolkit.core import database, questions
from toolkit.store import db

DEDUP = "DEDUP: skipped (source={}, tool_use_id duplicate)\n"


def _log_file(root):
    return os.path.join(project_dir(root), "question-log.jsonl")


def _rows(tool_use_id):
    return db_rows(
        "SELECT source, question_summary FROM question_log WHERE tool_use_id = ? ORDER BY id",
        (tool_use_id,),
    )


def _log_pending(record):
    """Log ``record`` while a background ingest holds the backlog (nothing is imported)."""
    fd = _hold_backlog_lock(_db_file())
    try:
        return log(record)
    finally:
        os.close(fd)


def _start(state_root):
    assert pref("--check", TWO_WAY).returncode == 0  # database and files exist
    first = log(_event("The first question", "toolu_first"))
    assert first.returncode == 0 and first.stdout == ""
    return _log_file(state_root)


@pytest.mark.parametrize(
    "bad",
    [
        {"question_id": "Q two!"},
        {"question_summary": None},
        {"options_count": 40},
    ],
    ids=["bad-question-id", "no-summary", "options-count"],
)
def test_a_pending_line_the_importer_rejects_is_no_twin(state_root, bad):
    path = _start(state_root)
    line = {k: v for k, v in {**_event("A rejected line", "toolu_bad"), **bad}.items() if v}
    _append_line(path, line)
    r = _log_pending(_event("The real answer", "toolu_bad"))
    assert r.returncode == 0 and r.stdout == ""  # recorded, as with nothing pending
    _import_everything(state_root)
    assert [x["question_summary"] for x in _rows("toolu_bad")] == ["The real answer"]


def test_a_pending_line_of_a_deleted_event_is_no_twin(state_root, conn):
    path = _start(state_root)
    deleted = _event("A deleted answer", "toolu_gone")
    _append_line(path, deleted)
    # Its event was deleted (the key is tombstoned): the importer will not bring it back.
    with db.transaction(conn):
        db.tombstone(conn, [questions.event_key(SLUG, deleted)], "question-log")
    r = _log_pending(_event("The real answer", "toolu_gone"))
    assert r.returncode == 0 and r.stdout == ""
    _import_everything(state_root)
    assert [x["question_summary"] for x in _rows("toolu_gone")] == ["The real answer"]


@pytest.mark.parametrize("newer, expect_dedup", [(99, True), (100, False), (150, False)])
def test_window_is_the_unread_lines_plus_the_newest_rows(state_root, newer, expect_dedup):
    path = _start(state_root)
    old = log(_event("An old answer", "toolu_old", source="agent"))
    assert old.stdout == ""
    # gstack appends lines the database has not seen: with 99 of them the recorded twin is
    # still gstack's 100th line from the end; with 100 it is out of the window.
    _write_backlog(state_root, n=newer, start=0)
    r = _log_pending(_event("A new answer reusing the id", "toolu_old", source="agent"))
    assert r.returncode == 0
    assert r.stdout == (DEDUP.format("agent") if expect_dedup else "")
    _import_everything(state_root)
    assert len(_rows("toolu_old")) == (1 if expect_dedup else 2)
    assert count("question_log") == 2 + newer + (0 if expect_dedup else 1)
    assert os.path.getsize(path) > 0


def test_a_huge_line_in_the_window_does_not_hide_a_twin(state_root):
    path = _start(state_root)
    _append_line(path, _event("The event", "toolu_T", ts="2026-12-01T00:00:00Z"))
    # A 1.2 MB line after it: gstack still reads both among its last 100 lines.
    _append_line(path, _event("A big one", "toolu_big", source="agent", free_text="x" * 1_200_000))
    r = _log_pending(_event("The event", "toolu_T"))
    assert r.returncode == 0 and r.stdout == DEDUP.format("hook")
    _import_everything(state_root)
    assert len(_rows("toolu_T")) == 1
    assert len(_rows("toolu_big")) == 1


def test_a_file_truncated_and_written_again_is_read_from_its_start(state_root):
    path = _start(state_root)
    for i in range(4):
        assert log(_event(f"Imported answer {i}", f"toolu_{i}")).stdout == ""
    imported = os.path.getsize(path)
    ino = os.stat(path).st_ino
    # Truncated in place (same inode), then gstack writes on past the old offset.
    with open(path, "r+", encoding="utf-8") as f:
        f.truncate(0)
        f.write(json.dumps(_event("The event", "toolu_T", ts="2026-12-01T01:00:00.000Z")) + "\n")
        for i in range(20):
            f.write(json.dumps(_event(f"New gstack line {i}", f"toolu_g{i}")) + "\n")
    assert os.stat(path).st_ino == ino and os.path.getsize(path) >= imported
    r = _log_pending(_event("The event", "toolu_T"))
    assert r.returncode == 0 and r.stdout == DEDUP.format("hook")
    _import_everything(state_root)
    assert len(_rows("toolu_T")) == 1


def test_only_lines_with_a_source_and_a_tool_use_id_count(state_root):
    path = _start(state_root)
    # As gstack: a line without a source never matches (it is imported as an agent event).
    no_source = {k: v for k, v in _event("No source", "toolu_ns").items() if k != "source"}
    _append_line(path, no_source)
    r = _log_pending(_event("The real answer", "toolu_ns", source="agent"))
    assert r.returncode == 0 and r.stdout == ""
    _import_everything(state_root)
    assert len(_rows("toolu_ns")) == 2
    # Imported now, the line is still one gstack does not match.
    again = log(_event("Asked again", "toolu_ns2", source="agent"))
    assert again.stdout == ""
    c = database.connect(_db_file())
    try:
        _append_line(path, {k: v for k, v in _event("Bare", "toolu_bare").items() if k != "source"})
        from toolkit.gstack import ingest

        ingest.sync_project(c, str(state_root), SLUG)
    finally:
        c.close()
    r = log(_event("The real one", "toolu_bare", source="agent"))
    assert r.returncode == 0 and r.stdout == ""
    assert len(_rows("toolu_bare")) == 2
