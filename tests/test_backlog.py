"""A large backlog of gstack lines never stalls a hook or compat call.

Past a small budget the rest of the backlog goes to one detached background ingest (under
a lock file), the call answers at once from what is imported, and the background ingest
ends with every line imported exactly once.
"""

import json
import os
import subprocess
import sys
import time

import pytest

from tests.helpers.hotpath import SLUG, count, db_rows, env, log, pref, project_dir, run
from toolkit.core import questions, seeded_db
from toolkit.gstack import backlog, ingest, log_tail, mirror, pickup
from toolkit.store import db

TWO_WAY = "ship-changelog-voice-polish"
LINES = 20000


def _write_backlog(root, n=LINES, slug=SLUG, start=0):
    os.makedirs(project_dir(root, slug), exist_ok=True)
    path = os.path.join(project_dir(root, slug), "question-log.jsonl")
    with open(path, "a", encoding="utf-8") as f:
        for i in range(start, start + n):
            f.write(
                json.dumps(
                    {
                        "skill": "ship",
                        "question_id": TWO_WAY,
                        "question_summary": f"Polish the changelog voice? ({i})",
                        "user_choice": "accept",
                        "recommended": "accept",
                        "session_id": f"s{i % 50}",
                        "ts": f"2026-0{1 + i % 9}-{1 + i % 28:02d}T10:00:00.000Z",
                    }
                )
                + "\n"
            )
    return path


def _wait_for_background(db_file, timeout=240):
    deadline = time.monotonic() + timeout
    while backlog.running(db_file):
        assert time.monotonic() < deadline, "background ingest did not finish"
        time.sleep(0.1)


def _db_file():
    return os.environ["PLANTUNE_DB"]


def test_first_check_hands_the_backlog_off_and_the_count_ends_exact(state_root):
    assert pref("--check", TWO_WAY).returncode == 0  # database and files exist
    _write_backlog(state_root)
    started = time.monotonic()
    first = pref("--check", TWO_WAY)
    assert first.returncode == 0 and first.stdout == "ASK_NORMALLY\n"
    # The answer did not wait for 20,000 lines: the import runs on in the background.
    assert count("question_log") < LINES
    assert backlog.running(_db_file()) or count("question_log") == LINES
    _wait_for_background(_db_file())
    assert count("question_log") == LINES
    assert db_rows("SELECT count(DISTINCT event_key) AS n FROM question_log")[0]["n"] == LINES
    # Nothing is left over and nothing is read twice by the next call.
    assert pref("--check", TWO_WAY).returncode == 0
    assert count("question_log") == LINES
    assert time.monotonic() - started < 300


def test_a_second_call_does_not_start_a_second_ingest(state_root, conn):
    _write_backlog(state_root)
    db_file = _db_file()
    # Hold the lock as a running background ingest would.
    fd = os.open(backlog.lock_path(db_file), os.O_RDWR | os.O_CREAT, 0o600)
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert backlog.running(db_file)
        assert not backlog.start(db_file, str(state_root), SLUG)
        for _ in range(2):
            assert pref("--check", TWO_WAY).returncode == 0
        # The calls left the lines to the running ingest and imported none themselves.
        assert count("question_log") == 0
    finally:
        os.close(fd)
    assert not backlog.running(db_file)


def test_only_one_background_ingest_for_concurrent_callers(state_root, conn):
    _write_backlog(state_root)
    db_file = _db_file()
    c = seeded_db.connect(db_file)
    started = [backlog.start(db_file, str(state_root), SLUG) for _ in range(5)]
    assert started.count(True) == 1
    _wait_for_background(db_file)
    c.close()
    assert count("question_log") == LINES


def test_killed_background_ingest_loses_nothing_and_counts_nothing_twice(state_root, conn):
    _write_backlog(state_root, n=3 * LINES)
    db_file = _db_file()
    fd = os.open(backlog.lock_path(db_file), os.O_RDWR | os.O_CREAT, 0o600)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            backlog._BOOT,
            backlog.package_parent(),
            str(fd),
            db_file,
            str(state_root),
            SLUG,
        ],
        pass_fds=(fd,),
        env=env(),
    )
    os.close(fd)
    deadline = time.monotonic() + 120
    while count("question_log") == 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    part = count("question_log")
    assert 0 < part < 3 * LINES
    assert not backlog.running(db_file)  # the lock went with the process
    # The next call starts a new background ingest that continues where the first stopped.
    assert pref("--check", TWO_WAY).returncode == 0
    _wait_for_background(db_file)
    assert count("question_log") == 3 * LINES
    assert db_rows("SELECT count(DISTINCT event_key) AS n FROM question_log")[0]["n"] == 3 * LINES


def test_log_and_hooks_do_not_wait_and_their_rows_are_kept(state_root):
    _write_backlog(state_root)
    event = {
        "skill": "ship",
        "question_id": TWO_WAY,
        "question_summary": "Live one",
        "user_choice": "skip",
    }
    r = run("gstack-question-log", json.dumps(event))
    assert r.returncode == 0
    assert count("question_log") < LINES + 1
    _wait_for_background(_db_file())
    # The live row and every backlog line, each once (the live line was appended to the
    # file and is read back by key, not counted again).
    assert count("question_log") == LINES + 1
    assert [
        r["user_choice"]
        for r in db_rows("SELECT user_choice FROM question_log WHERE question_summary = 'Live one'")
    ] == ["skip"]


def test_derive_answers_from_what_is_imported_with_a_note(state_root):
    _write_backlog(state_root)
    r = run("gstack-developer-profile", "--derive")
    assert r.returncode == 0
    assert r.stdout.startswith("DERIVE: ok")  # stdout stays gstack's format
    assert "still being imported in the background" in r.stderr
    _wait_for_background(_db_file())
    r = run("gstack-developer-profile", "--derive")
    assert r.stdout.startswith(f"DERIVE: ok — {LINES} events")
    assert "still being imported" not in r.stderr


def test_inline_read_stops_at_its_deadline_and_keeps_its_progress(state_root, conn):
    path = _write_backlog(state_root, n=5000)
    summary = ingest.sync_project(conn, str(state_root), SLUG, deadline=time.monotonic())
    assert summary["pending"] > 0
    got = count("question_log")
    assert got < 5000
    # A later run continues at the saved offset: exactly the rest, nothing twice.
    summary = ingest.sync_project(conn, str(state_root), SLUG)
    assert summary["pending"] == 0
    assert count("question_log") == 5000
    assert pickup.backlog_note(conn, SLUG) is None
    assert os.path.getsize(path) > pickup.INLINE_MAX_BYTES


def test_profile_notes_the_backlog_on_stderr_only(state_root):
    _write_backlog(state_root)
    r = run("gstack-developer-profile", "--profile")
    assert r.returncode == 0
    json.loads(r.stdout)  # stdout stays the profile JSON
    assert "still being imported in the background" in r.stderr
    _wait_for_background(_db_file())


def test_hook_install_imports_the_history_itself(state_root, tmp_path):
    _write_backlog(state_root, n=3000)
    settings = tmp_path / "settings.json"
    r = run("plantune", "hook", "install", "--settings", str(settings))
    assert r.returncode == 0, r.stderr
    assert "Importing gstack's history" in r.stderr
    assert "Imported 3,000 new entries" in r.stderr
    assert count("question_log") == 3000
    assert not backlog.running(_db_file())


# ---------------------------------------------------------------------------
# gstack's dedup window while lines wait for import


def _hold_backlog_lock(db_file):
    """Hold the lock as a running background ingest would (calls leave the file to it)."""
    import fcntl

    fd = os.open(backlog.lock_path(db_file), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _append_line(path, record):
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _event(summary, tool_use_id, source="hook", **extra):
    return {
        "skill": "ship",
        "question_id": TWO_WAY,
        "question_summary": summary,
        "user_choice": "accept",
        "source": source,
        "tool_use_id": tool_use_id,
        **extra,
    }


def _import_everything(state_root):
    c = seeded_db.connect(_db_file())
    try:
        while ingest.sync_project(c, str(state_root), SLUG)["pending"]:
            pass
    finally:
        c.close()


def test_log_dedups_against_the_lines_still_waiting_for_import(state_root):
    assert pref("--check", TWO_WAY).returncode == 0
    path = _write_backlog(state_root)
    # gstack logged this answer before the switch; plantune has not imported it yet.
    _append_line(path, _event("Pick the release channel?", "toolu_01", ts="2026-03-01T10:00:00Z"))
    _write_backlog(state_root, n=40, start=LINES)  # still within the last 100 lines
    fd = _hold_backlog_lock(_db_file())
    try:
        twin = log(_event("Pick the release channel? (asked again)", "toolu_01"))
        other = log(_event("Pick the release channel?", "toolu_02"))
        # The same source and tool_use_id with another position is another question.
        second = log(_event("Second question of the call", "toolu_01", question_index=1))
        assert count("question_log") == 2  # nothing of the backlog was imported meanwhile
    finally:
        os.close(fd)
    assert twin.returncode == 0
    assert twin.stdout == "DEDUP: skipped (source=hook, tool_use_id duplicate)\n"
    assert other.returncode == 0 and other.stdout == ""
    assert second.returncode == 0 and second.stdout == ""
    _import_everything(state_root)
    # The backlog's line counted once, the two new events once each.
    assert count("question_log") == LINES + 41 + 2
    rows = db_rows("SELECT count(*) AS n FROM question_log WHERE tool_use_id = 'toolu_01'")
    assert rows[0]["n"] == 2


def test_a_twin_older_than_the_window_is_not_a_duplicate(state_root):
    assert pref("--check", TWO_WAY).returncode == 0
    path = _write_backlog(state_root, n=10)
    _append_line(path, _event("Pick the release channel?", "toolu_old"))
    _write_backlog(state_root, n=150, start=10)  # pushes it out of gstack's last 100 lines
    fd = _hold_backlog_lock(_db_file())
    try:
        r = log(_event("Pick the release channel?", "toolu_old", ts="2026-04-01T10:00:00Z"))
    finally:
        os.close(fd)
    assert r.returncode == 0 and r.stdout == ""  # gstack itself would log it again
    _import_everything(state_root)
    assert count("question_log") == 10 + 1 + 150 + 1


def test_post_tool_use_hook_dedups_against_unimported_lines(state_root, tmp_path):
    from tests.helpers.hooks import payload, question, run_hook

    assert pref("--check", TWO_WAY).returncode == 0
    path = _write_backlog(state_root)
    q = question("Which release channel should ship first?", ["Stable", "Beta"])
    # gstack's own hook logged this call (same tool_use_id, source hook) before the switch.
    _append_line(path, _event("Which release channel should ship first?", "toolu_hook"))
    _write_backlog(state_root, n=30, start=LINES)
    fd = _hold_backlog_lock(_db_file())
    try:
        call = payload(
            [q], {"answers": {q["question"]: "Stable"}}, cwd=tmp_path, tool_use_id="toolu_hook"
        )
        r = run_hook("post-tool-use", call, env=env())
        assert r.returncode == 0, r.stderr
        assert count("question_log") == 0
        # Another call is recorded, and its line is appended to gstack's file.
        call = payload(
            [q], {"answers": {q["question"]: "Beta"}}, cwd=tmp_path, tool_use_id="toolu_new"
        )
        assert run_hook("post-tool-use", call, env=env()).returncode == 0
        assert count("question_log") == 1
    finally:
        os.close(fd)
    # The background ingest meets the hook's own line again and does not count it twice.
    _import_everything(state_root)
    assert count("question_log") == LINES + 1 + 30 + 1
    got = db_rows("SELECT tool_use_id, count(*) AS n FROM question_log GROUP BY tool_use_id")
    assert {r["tool_use_id"]: r["n"] for r in got if r["tool_use_id"]} == {
        "toolu_hook": 1,
        "toolu_new": 1,
    }


def _line(tool_use_id, source="hook", **extra):
    return json.dumps(_event("Pick the release channel?", tool_use_id, source=source, **extra))


def test_twin_search_reads_escaped_ids_and_skips_broken_lines(state_root, conn):
    path = os.path.join(project_dir(state_root), "question-log.jsonl")
    os.makedirs(project_dir(state_root), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        # The id spelled with escapes, a torn line, then a line without a newline yet.
        f.write(_line("toolu_esc").replace('"toolu_esc"', '"\\u0074oolu_esc"') + "\n")
        f.write('{"source":"hook","tool_use_id":"toolu_torn"\n')
        f.write(_line("toolu_tail", source="agent"))
    twin = mirror.backlog_twin(SLUG)
    assert twin(conn, "hook", "toolu_esc", 0)
    assert not twin(conn, "agent", "toolu_esc", 0)  # another source
    # unparseable: never a twin (as gstack)
    assert not twin(conn, "hook", "toolu_torn", 0)
    assert twin(conn, "agent", "toolu_tail", 0)
    assert not twin(conn, "hook", "toolu_esc", 1)


def test_twin_search_reads_only_what_is_not_imported(state_root, conn):
    path = _write_backlog(state_root, n=5)
    _append_line(path, _event("Pick the release channel?", "toolu_1"))
    twin = mirror.backlog_twin(SLUG)
    assert twin(conn, "hook", "toolu_1", 0)
    ingest.sync_project(conn, str(state_root), SLUG)
    assert count("question_log") == 6
    # The line is in the database now: the window is the table's newest rows.
    assert twin(conn, "hook", "toolu_1", 0)
    assert not twin(conn, "hook", "toolu_2", 0)
    _write_backlog(state_root, n=3, start=5)
    # Three unread lines and the table's newest 97 rows.
    assert twin(conn, "hook", "toolu_1", 0)
    with open(path, "rb") as f:
        got = log_tail.unimported_twin(conn, f.fileno(), path, SLUG, ("hook", "toolu_1", 0), 100)
    assert got == (False, 3)  # only the three new lines are read


def test_odd_files_are_never_read_for_the_dedup_window(state_root, tmp_path):
    assert pref("--check", TWO_WAY).returncode == 0
    path = os.path.join(project_dir(state_root), "question-log.jsonl")
    # A symlink leading out of the state root: the importer refuses it, so its lines are
    # not history and a twin there does not make a duplicate.
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(json.dumps(_event("Pick the release channel?", "toolu_out")) + "\n")
    os.symlink(outside, path)
    r = log(_event("Pick the release channel?", "toolu_out"))
    assert r.returncode == 0 and "DEDUP" not in r.stdout
    assert count("question_log") == 1
    # A FIFO: never opened in a way that blocks; the answer is recorded.
    os.unlink(path)
    os.mkfifo(path)
    r = log(_event("Pick the release channel?", "toolu_fifo"))
    assert r.returncode == 0 and "DEDUP" not in r.stdout
    assert count("question_log") == 2


# ---------------------------------------------------------------------------
# gstack's dedup window stays exact while gstack lines wait for import, and after.
#
# gstack skips an event when a line with the same source and tool_use_id (both present) is
# among the last 100 lines of the project's question-log.jsonl. Lines still waiting for
# import count only when the importer will import them; after a backlog import the window
# follows the file's order, not the rows' ids. Each test runs the real commands against
# real files, with the background-ingest lock held as a running ingest holds it.

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
    c = seeded_db.connect(_db_file())
    try:
        _append_line(path, {k: v for k, v in _event("Bare", "toolu_bare").items() if k != "source"})
        ingest.sync_project(c, str(state_root), SLUG)
    finally:
        c.close()
    r = log(_event("The real one", "toolu_bare", source="agent"))
    assert r.returncode == 0 and r.stdout == ""
    assert len(_rows("toolu_bare")) == 2


def _gstack_lines(path, n, prefix):
    with open(path, "a", encoding="utf-8") as f:
        for i in range(n):
            record = _event(f"gstack line {i}", f"{prefix}{i}", source="agent")
            f.write(json.dumps(record) + "\n")


@pytest.mark.parametrize(
    "tool_use_id, expect_dedup",
    [("toolu_L10", True), ("toolu_L49", True), ("toolu_g60", False), ("toolu_g120", True)],
)
def test_after_a_backlog_import_the_window_follows_the_files_order(
    state_root, tool_use_id, expect_dedup
):
    path = _start(state_root)
    fd = _hold_backlog_lock(_db_file())
    try:
        # gstack wrote 150 lines the database has not seen; meanwhile 50 events are logged
        # live: their rows come first, their lines after the backlog's.
        _gstack_lines(path, 150, "toolu_g")
        for i in range(50):
            r = log(_event(f"Live answer {i}", f"toolu_L{i}", source="agent"))
            assert r.returncode == 0 and r.stdout == ""
    finally:
        os.close(fd)
    _import_everything(state_root)
    assert count("question_log") == 1 + 150 + 50
    # gstack's window is the file's last 100 lines: the 50 live events and the backlog's
    # last 50 lines (toolu_g100..g149). toolu_g60 is older, though its row is among the newest 100.
    r = log(_event("The same call again", tool_use_id, source="agent"))
    assert r.returncode == 0
    assert r.stdout == (DEDUP.format("agent") if expect_dedup else "")
    assert len(_rows(tool_use_id)) == (1 if expect_dedup else 2)


# ---------------------------------------------------------------------------
# Random interleavings, checked against gstack's rule on a model of its file


def _gstack_twin(lines, source, tool_use_id):
    """gstack's rule over its file: a line among the last 100 with this source and id."""
    return any(s == source and t == tool_use_id for s, t in lines[-questions.DEDUP_WINDOW :])


@pytest.mark.parametrize("seed", range(6))
def test_random_interleavings_follow_gstacks_rule(state_root, conn, seed):
    import random

    rng = random.Random(seed)
    path = _log_file(state_root)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").close()
    model = []  # (source or None, tool_use_id) of each line of the file
    held = None
    try:
        for step in range(600):
            op = rng.random()
            source = rng.choice(["hook", "agent"])
            tool_use_id = f"toolu_{rng.randrange(120)}"
            record = _event(f"Step {step}", tool_use_id, source=source)
            if op < 0.03:
                # The background ingest starts or ends.
                if held is None:
                    held = _hold_backlog_lock(_db_file())
                else:
                    os.close(held)
                    held = None
            elif op < 0.07:
                ingest.sync_project(conn, str(state_root), SLUG)
            elif op < 0.45:
                # gstack's own bin: its rule over its file, then the line.
                if not _gstack_twin(model, source, tool_use_id):
                    if rng.random() < 0.15:
                        del record["source"]  # as gstack's bin never writes, but a line may
                    _append_line(path, record)
                    model.append((record.get("source"), tool_use_id))
            else:
                rec, _ = mirror.log_question(conn, questions.validate_event(record), SLUG)
                expected = _gstack_twin(model, source, tool_use_id)
                assert (rec.status == "dedup") == expected, (seed, step, rec.status)
                if rec.status == "inserted":
                    model.append((source, tool_use_id))
            assert not backlog.running(_db_file()) or held is not None
    finally:
        if held is not None:
            os.close(held)
    _import_everything(state_root)
    # Every event of the file is recorded once, and nothing else.
    want = {}
    for s, t in model:
        want[(s or "agent", t)] = want.get((s or "agent", t), 0) + 1
    got = db_rows(
        "SELECT source, tool_use_id, count(*) AS n FROM question_log"
        " WHERE tool_use_id IS NOT NULL GROUP BY source, tool_use_id"
    )
    assert {(r["source"], r["tool_use_id"]): r["n"] for r in got} == want
