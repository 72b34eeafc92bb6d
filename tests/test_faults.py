"""Faults around gstack's files: full disks, FIFOs, symlinks, bad lines, deletes.

Each test sets up one hostile scenario with the real commands (installed console scripts
run as subprocesses, as agents run them) and checks the sync contract: the database commit
is the acknowledgement, no line without a committed row, nothing blocks, nothing half
written, nothing deleted comes back.
"""

import errno
import json
import os
import subprocess
import threading

import pytest

from tests.helpers.hotpath import (
    SLUG,
    count,
    db_rows,
    log,
    one_line_error,
    pref,
    project_dir,
    raw_log,
)
from toolkit.gstack import ingest_jsonl

RECORD = {
    "skill": "ship",
    "question_id": "ship-release-pr",
    "question_summary": "Ship it?",
    "user_choice": "yes",
}


def record(i, **extra):
    r = dict(RECORD, question_id=f"q-{i}", question_summary=f"question {i}")
    r.update(extra)
    return r


def _mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
            check=True,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return True


@pytest.fixture
def small_disk(tmp_path, monkeypatch):
    """A 4 MiB tmpfs as the state root (the database lives there too); skipped where
    mounting is not allowed (the injected-ENOSPC tests cover those machines)."""
    root = tmp_path / "small"
    if not _mount_tmpfs(root, "4m"):
        pytest.skip("cannot mount a tmpfs here (not root); injected ENOSPC tests cover it")
    monkeypatch.setenv("GSTACK_STATE_ROOT", str(root))
    monkeypatch.setenv("GSTACK_HOME", str(root))
    monkeypatch.setenv("PLANTUNE_DB", str(root / "plantune.db"))
    yield root
    subprocess.run(["umount", "-l", str(root)], capture_output=True, timeout=10, check=False)


def fill(root):
    """Take every free byte of the filesystem holding ``root``."""
    fd = os.open(os.path.join(root, "filler"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 512)
    except OSError as e:
        assert e.errno == errno.ENOSPC
    finally:
        os.close(fd)


def leftovers(folder):
    return [n for n in os.listdir(folder) if ".tmp" in n]


# --------------------------------------------------------------------------
# 1 and 6. Order of writes; disk full


def test_disk_full_commit_fails_cleanly_and_leaves_no_line(small_disk):
    for i in range(3):
        assert log(record(i)).returncode == 0
    before = raw_log(small_disk)
    fill(small_disk)
    # A summary large enough that its row cannot fit in pages SQLite already holds.
    big = record(9, question_summary="x" * 190)
    fails = [log(dict(big, question_id=f"full-{i}", session_id="s" * 60)) for i in range(12)]
    for p in fails:
        if p.returncode == 0:
            continue  # fitted in space SQLite had already: then it is a row and a line
        err = one_line_error(p)
        assert err == "gstack-question-log: database or disk is full: nothing was recorded"
    rows = db_rows("SELECT raw_json FROM question_log ORDER BY id")
    assert any(p.returncode == 1 for p in fails)
    # Every line in the file has its row, and no line was glued or half written.
    text = raw_log(small_disk)
    assert text.startswith(before) and text.endswith("\n")
    lines = text.splitlines()
    assert sorted(lines) == sorted(r["raw_json"] for r in rows)
    assert leftovers(project_dir(small_disk)) == []
    os.unlink(os.path.join(small_disk, "filler"))
    # Space is back: the next call works, and pickup has no phantom to import.
    assert log(record(20)).returncode == 0
    assert count("question_log") == len(rows) + 1


def test_disk_full_preference_write_leaves_old_file_and_no_temp(small_disk):
    assert (
        pref(
            "--write",
            json.dumps({"question_id": "a", "preference": "never-ask", "source": "plan-tune"}),
        ).returncode
        == 0
    )
    prefs_path = os.path.join(project_dir(small_disk), "question-preferences.json")
    with open(prefs_path) as f:
        before = f.read()
    fill(small_disk)
    results = [
        pref(
            "--write",
            json.dumps(
                {
                    "question_id": f"b{i}",
                    "preference": "always-ask",
                    "source": "plan-tune",
                    "free_text": "y" * 250,
                }
            ),
        )
        for i in range(8)
    ]
    assert any(p.returncode == 1 for p in results)
    stored = {r["question_id"] for r in db_rows("SELECT question_id FROM preferences")}
    with open(prefs_path) as f:
        on_file = set(json.load(f))
    # Never a half-written file or a temp file; the file never claims what the database
    # does not hold.
    assert on_file <= stored
    assert json.loads(before).keys() <= on_file
    assert leftovers(project_dir(small_disk)) == []
    for p in results:
        if p.returncode:
            assert "Traceback" not in p.stderr and p.stderr.count("\n") == 1


def test_own_lines_are_marked_read_by_every_writer(state_root, tmp_path):
    """Hooks and compat scripts move ingest_state past the lines they append, so pickup
    never reads them back (and a delete has nothing stale to meet)."""
    from tests.helpers.hooks import make_repo, run_hook
    from tests.helpers.hotpath import env

    repo = make_repo(tmp_path)
    for i in range(3):
        assert (
            run_hook(
                "post-tool-use", _ask_payload(repo, i), env=env(GSTACK_PROJECT_SLUG=None)
            ).returncode
            == 0
        )
        assert log(record(i), GSTACK_PROJECT_SLUG="acme-web").returncode == 0
    path = os.path.join(project_dir(state_root, "acme-web"), "question-log.jsonl")
    st = os.stat(path)
    state = db_rows("SELECT size, offset, line_no, inode FROM ingest_state WHERE path = ?", (path,))
    assert state == [{"size": st.st_size, "offset": st.st_size, "line_no": 6, "inode": st.st_ino}]


def test_append_completes_a_partial_last_line(state_root):
    assert log(record(1)).returncode == 0
    path = os.path.join(project_dir(state_root), "question-log.jsonl")
    with open(path, "ab") as f:
        f.write(b'{"skill":"ship","question_id":"cut-off')  # a writer ran out of disk here
    assert log(record(2)).returncode == 0
    lines = raw_log(state_root).split("\n")
    assert lines[1] == '{"skill":"ship","question_id":"cut-off'
    assert json.loads(lines[2])["question_id"] == "q-2"  # whole, on a line of its own
    assert count("question_log") == 2


def test_append_waits_for_a_line_another_appender_is_writing(tmp_path):
    """A line half copied in by a concurrent appender is not a fragment to end early."""
    import fcntl
    import time

    from toolkit.store import safe_io

    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    fcntl.flock(fd, fcntl.LOCK_EX)
    t = threading.Thread(target=safe_io.append_line, args=(str(path), '{"c":3}'))
    t.start()
    time.sleep(0.2)
    os.write(fd, b"2}\n")
    os.close(fd)  # the other appender is done
    t.join(10)
    assert path.read_text() == '{"a":1}\n{"b":2}\n{"c":3}\n'


def test_failed_append_takes_its_bytes_back(tmp_path, monkeypatch):
    """An append that fails halfway (ENOSPC after a short write) leaves no fragment."""
    from toolkit.store import safe_io

    path = tmp_path / "f.jsonl"
    path.write_text('{"a":1}\n')
    real_write = os.write
    calls = []

    def short_then_full(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, data[:5])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(safe_io.os, "write", short_then_full)
    with pytest.raises(OSError) as e:
        safe_io.append_line(str(path), '{"b":2}')
    assert e.value.errno == errno.ENOSPC
    monkeypatch.undo()
    assert path.read_text() == '{"a":1}\n'


def test_failed_rewrite_removes_its_temp_file(tmp_path, monkeypatch):
    from toolkit.store import safe_io

    path = tmp_path / "prefs.json"
    path.write_text("{}\n")
    os.chmod(path, 0o600)

    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(safe_io.os, "fsync", no_space)
    with pytest.raises(OSError):
        safe_io.write_atomic(str(path), '{"a": "never-ask"}\n')
    monkeypatch.undo()
    assert path.read_text() == "{}\n" and leftovers(tmp_path) == []
    safe_io.write_atomic(str(path), "{}\n")
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_injected_full_database_fails_cleanly_and_leaves_no_line(state_root, monkeypatch, capsys):
    """Without a tmpfs: SQLite's own SQLITE_FULL (max_page_count reached) at commit."""
    from toolkit.gstack import compat
    from toolkit.store import db

    monkeypatch.setenv("GSTACK_PROJECT_SLUG", SLUG)
    assert compat.question_log_main([json.dumps(record(1))]) == 0
    before = raw_log(state_root)
    real_connect = db.connect

    def full(path, *a, **kw):
        conn = real_connect(path, *a, **kw)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        return conn

    monkeypatch.setattr(db, "connect", full)
    capsys.readouterr()
    big = record(2, question_summary="z" * 199, session_id="s" * 64)
    codes = [
        compat.question_log_main([json.dumps(dict(big, question_id=f"q{i}"))]) for i in range(40)
    ]
    assert 1 in codes
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert "database or disk is full: nothing was recorded" in err
    rows = db_rows("SELECT raw_json FROM question_log")
    assert sorted(raw_log(state_root).splitlines()) == sorted(r["raw_json"] for r in rows)
    assert raw_log(state_root).startswith(before)


# --------------------------------------------------------------------------
# 4. Only regular files


def _in_time(fn, seconds=20):
    """Run ``fn`` in a thread; fail (instead of hanging the suite) if it blocks."""
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("v", fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "blocked on a FIFO"
    return out.get("v")


def test_fifo_log_file_does_not_block_the_hot_path(state_root):
    os.makedirs(project_dir(state_root))
    fifo = os.path.join(project_dir(state_root), "question-log.jsonl")
    os.mkfifo(fifo)
    p = _in_time(lambda: log(record(1)))
    assert p.returncode == 0
    assert one_line_error(p).endswith("is a FIFO, not a regular file; refused")
    assert count("question_log") == 1  # the database has the answer
    # Other commands of the same project and other projects do not block either.
    assert _in_time(lambda: pref("--check", "q-1")).stdout.startswith("ASK_NORMALLY")
    other = _in_time(lambda: log(record(2), GSTACK_PROJECT_SLUG="other"))
    assert other.returncode == 0 and other.stderr == ""


def test_symlink_leaving_the_state_root_is_never_written(state_root, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    os.makedirs(project_dir(state_root))
    os.symlink(outside, os.path.join(project_dir(state_root), "question-log.jsonl"))
    p = log(record(1))
    assert p.returncode == 0
    assert "leads outside the state root" in one_line_error(p)
    assert outside.read_text() == "keep me\n"
    assert count("question_log") == 1


# --------------------------------------------------------------------------
# 2. Deletes propagate, and nothing deleted comes back

MARKER = "okapi-marmalade-51d7"


def _ask_payload(cwd, i):
    from tests.helpers.hooks import payload, question

    q = question(f"Which {MARKER} option for part {i}?", ["Alpha", "Beta"])
    return payload([q], {"answers": {q["question"]: "Alpha"}}, cwd=cwd, tool_use_id=f"tu-{i}")


def _all_bytes(root):
    """Every byte plantune keeps under the state root: database, WAL, gstack files, logs."""
    data = b""
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as f:
                    data += f.read()
    return data


def test_delete_leaves_no_bytes_and_nothing_comes_back(state_root, tmp_path):
    from tests.helpers.hooks import make_repo, run_hook
    from tests.helpers.hotpath import env, run
    from toolkit.claude import hook_entries

    repo = make_repo(tmp_path)
    slug = "acme-web"
    hook_env = env(GSTACK_PROJECT_SLUG=None)
    for i in range(5):
        p = run_hook("post-tool-use", _ask_payload(repo, i), env=hook_env)
        assert p.returncode == 0, p.stderr
    assert count("question_log") == 5
    # Typed free text through the compat scripts, a pacing run, a hook-errors.log line.
    assert (
        log(
            record(7, free_text=f"I typed {MARKER}", source="auq-other"), GSTACK_PROJECT_SLUG=slug
        ).returncode
        == 0
    )
    assert (
        pref(
            "--write",
            json.dumps(
                {
                    "question_id": "ship-release-pr",
                    "preference": "always-ask",
                    "source": "plan-tune",
                    "free_text": f"because {MARKER}",
                }
            ),
            GSTACK_PROJECT_SLUG=slug,
        ).returncode
        == 0
    )
    rank = {
        "session_id": "s1",
        "chain_id": "c1",
        "phase": "eng",
        "budget": 6,
        "findings": [
            {
                "id": "eng-cache",
                "summary": f"Cache {MARKER} is short",
                "severity": 0,
                "irreversibility": 1,
                "decision_matters": 1,
                "recommended": "defer",
                "options": ["fix-now", "defer"],
            }
        ],
    }
    p = run("plantune", "pacing", "rank", input=json.dumps(rank), GSTACK_PROJECT_SLUG=slug)
    assert p.returncode == 0, p.stderr
    hook_entries.log_error("hook post-tool-use", f"could not read answer {MARKER}")
    log_path = os.path.join(project_dir(state_root, slug), "question-log.jsonl")
    with open(log_path, encoding="utf-8") as f:
        old_lines = f.readlines()
    # five hook answers, the typed one, pacing's Silent Decision
    assert len(old_lines) == count("question_log") == 7
    assert MARKER.encode() in _all_bytes(state_root)

    p = run("plantune", "profile", "delete", "--all", "--yes", GSTACK_PROJECT_SLUG=slug)
    assert p.returncode == 0, p.stderr
    assert count("question_log") == 0
    assert MARKER.encode() not in _all_bytes(state_root)
    assert os.stat(log_path).st_mode & 0o777 == 0o600
    assert db_rows("SELECT preference FROM preferences") == [{"preference": "always-ask"}]
    assert leftovers(project_dir(state_root, slug)) == []

    # The next call records one event: nothing deleted is imported again...
    assert log(record(8), GSTACK_PROJECT_SLUG=slug).returncode == 0
    assert count("question_log") == 1
    # ...not even from a copy of the old lines put back into gstack's file.
    with open(log_path, "a", encoding="utf-8") as f:
        f.writelines(old_lines)
    p = run("plantune", "ingest", GSTACK_PROJECT_SLUG=slug)
    assert p.returncode == 0, p.stderr
    assert log(record(9), GSTACK_PROJECT_SLUG=slug).returncode == 0
    assert count("question_log") == 2
    assert MARKER not in json.dumps(db_rows("SELECT * FROM question_log"))


def test_delete_one_project_rewrites_only_its_files(state_root):
    for slug in ("keep-me", "drop-me"):
        assert (
            log(record(1, question_summary=f"{slug} {MARKER}"), GSTACK_PROJECT_SLUG=slug).returncode
            == 0
        )
    from tests.helpers.hotpath import run

    p = run("plantune", "profile", "delete", "--project", "drop-me", "--yes")
    assert p.returncode == 0, p.stderr
    assert raw_log(state_root, "drop-me") == ""
    assert MARKER in raw_log(state_root, "keep-me")
    assert [r["project"] for r in db_rows("SELECT project FROM question_log")] == ["keep-me"]
    # pickup of the kept project does not bring the other one back
    assert log(record(2), GSTACK_PROJECT_SLUG="drop-me").returncode == 0
    assert count("question_log") == 2


# --------------------------------------------------------------------------
# 3. One bad line never blocks anything

BAD_EVENT = (
    '{"ts":"2026-01-01T00:00:00.000Z","event_type":"preference-set",'
    '"question_id":"x","preference":"never-ask","source":"plan-tune","n":%s}'
)
BAD_VALUES = [
    (BAD_EVENT % "1e999", "number out of range"),
    (BAD_EVENT % "-1e999", "number out of range"),
    (BAD_EVENT % "NaN", "invalid JSON"),
    (BAD_EVENT % ("[" * 200 + "]" * 200), "nested deeper than 64 levels"),
]
GOOD_EVENT = (
    '{"ts":"2026-01-02T00:00:00.000Z","event_type":"preference-set",'
    '"question_id":"y","preference":"always-ask","source":"plan-tune"}'
)


@pytest.mark.parametrize("bad,reason", BAD_VALUES, ids=["1e999", "-1e999", "NaN", "deep"])
def test_bad_line_is_skipped_reported_and_blocks_nothing(state_root, bad, reason):
    from tests.helpers.hotpath import run

    events = os.path.join(project_dir(state_root), "question-events.jsonl")
    prefs = os.path.join(project_dir(state_root), "question-preferences.json")
    os.makedirs(project_dir(state_root))
    with open(events, "w", encoding="utf-8") as f:
        f.write(GOOD_EVENT + "\n" + bad + "\n" + GOOD_EVENT.replace('"y"', '"z"') + "\n")
    # A hand edit of the preferences file: always-ask for a two-way question.
    with open(prefs, "w", encoding="utf-8") as f:
        f.write('{"ship-changelog-voice-polish": "always-ask"}')
    other = os.path.join(project_dir(state_root, "other"), "question-log.jsonl")
    os.makedirs(os.path.dirname(other))
    with open(other, "w", encoding="utf-8") as f:
        f.write(json.dumps(record(1)) + "\n")

    # The hand edit is picked up: --check asks (and names the bad line), and the next
    # --write keeps the edit.
    c = pref("--check", "ship-changelog-voice-polish")
    assert c.stdout == "ASK_NORMALLY\n"
    assert f"{events}:2: {reason}" in one_line_error(c)
    p = pref(
        "--write",
        json.dumps(
            {"question_id": "ship-release-pr", "preference": "never-ask", "source": "plan-tune"}
        ),
    )
    assert p.returncode == 0
    with open(prefs, encoding="utf-8") as f:
        assert json.load(f) == {
            "ship-changelog-voice-polish": "always-ask",
            "ship-release-pr": "never-ask",
        }
    assert {r["question_id"] for r in db_rows("SELECT question_id FROM preference_events")} >= {
        "y",
        "z",
    }
    # plantune ingest imports every other project, and a full run names the line again.
    p = run("plantune", "ingest", str(state_root) + "/")
    assert p.returncode == 0, p.stderr
    assert count("question_log") == 1  # the other project
    # A later edit of the same file is still picked up.
    with open(events, "a", encoding="utf-8") as f:
        f.write(GOOD_EVENT.replace('"y"', '"w"') + "\n")
    assert run("plantune", "ingest").returncode == 0
    assert "w" in {r["question_id"] for r in db_rows("SELECT question_id FROM preference_events")}


def test_oversize_line_is_skipped_and_the_rest_imported(state_root):
    from tests.helpers.hotpath import run

    path = os.path.join(project_dir(state_root), "question-log.jsonl")
    os.makedirs(project_dir(state_root))
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(record(1)) + "\n")
        f.write('{"skill":"' + "x" * (ingest_jsonl.MAX_LINE_BYTES + 10) + '"}\n')
        f.write(json.dumps(record(2)) + "\n")
    p = run("plantune", "ingest")
    assert p.returncode == 0, p.stderr
    assert f"{path}:2: line longer than" in p.stderr
    assert count("question_log") == 2


@pytest.mark.parametrize(
    "field,reason",
    [
        ('"extra":1e999', "number out of range"),
        ('"extra":-1e999', "number out of range"),
        ('"extra":NaN', None),
        ('"extra":"\\ud800"', "lone surrogate in a string"),
        ('"extra":' + "[" * 100 + "]" * 100, "nested deeper than 64 levels"),
        ('"extra":' + "[" * 50000 + "]" * 50000, "nested deeper than 64 levels"),
    ],
)
def test_compat_commands_refuse_bad_values_in_one_line(state_root, field, reason):
    text = (
        '{"skill":"ship","question_id":"ship-x","question_summary":"s","user_choice":"y",'
        + field
        + "}"
    )
    p = log(text)
    assert p.returncode == 1
    expected = "gstack-question-log: invalid JSON" + (f": {reason}" if reason else "")
    assert one_line_error(p) == expected
    assert count("question_log") == 0
    assert not os.path.exists(os.path.join(project_dir(state_root), "question-log.jsonl"))
    w = pref(
        "--write",
        '{"question_id":"ship-x","preference":"never-ask","source":"plan-tune",' + field + "}",
    )
    assert w.returncode == 1
    assert one_line_error(w).startswith("gstack-question-preference: invalid JSON")
    assert count("preferences") == 0


# --------------------------------------------------------------------------
# 4. Only regular files (continued): every reader and writer, never blocking


def quick(*argv, input=None, timeout=30, **env_extra):
    """Run a console script with a hard timeout: a FIFO that blocks fails the test."""
    from tests.helpers import script
    from tests.helpers.hotpath import env

    return subprocess.run(
        [script(argv[0]), *argv[1:]],
        input=input,
        capture_output=True,
        text=True,
        env=env(**env_extra),
        timeout=timeout,
        check=False,
    )


@pytest.mark.parametrize("name", ["question-events.jsonl", "question-preferences.json"])
def test_fifo_gstack_files_block_no_command(state_root, name):
    os.makedirs(project_dir(state_root))
    os.mkfifo(os.path.join(project_dir(state_root), name))
    p = quick("gstack-question-preference", "--check", "ship-release-pr")
    assert p.stdout == "ASK_NORMALLY\n"
    assert "is a FIFO, not a regular file; refused" in one_line_error(p)
    w = quick(
        "gstack-question-preference",
        "--write",
        json.dumps(
            {"question_id": "ship-release-pr", "preference": "never-ask", "source": "plan-tune"}
        ),
    )
    assert w.returncode == 0 and "refused" in one_line_error(w)
    assert count("preferences") == 1
    assert quick("gstack-question-log", json.dumps(record(1))).returncode == 0
    i = quick("plantune", "ingest")
    assert i.returncode == 0
    assert f"{name}: is a FIFO, not a regular file; refused" in i.stderr
    assert stat_is_fifo(os.path.join(project_dir(state_root), name))


def stat_is_fifo(path):
    import stat

    return stat.S_ISFIFO(os.lstat(path).st_mode)


def test_socket_and_fifo_in_the_hooks_exit_0(state_root, tmp_path):
    import socket

    from tests.helpers.hooks import error_log, make_repo

    repo = make_repo(tmp_path)
    folder = project_dir(state_root, "acme-web")
    os.makedirs(folder)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(os.path.join(folder, "question-log.jsonl"))
    try:
        p = subprocess.run(
            [
                os.path.join(os.path.dirname(__import__("sys").executable), "plantune"),
                "hook",
                "post-tool-use",
            ],
            input=json.dumps(_ask_payload(repo, 1)),
            capture_output=True,
            text=True,
            timeout=30,
            env=dict(os.environ),
            check=False,
        )
    finally:
        sock.close()
    assert p.returncode == 0 and p.stdout == ""
    assert count("question_log") == 1
    assert "is a socket, not a regular file; refused" in error_log(state_root)


def test_fifos_block_no_reader_command(state_root, tmp_path):
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    os.mkfifo(transcripts / "session.jsonl")
    p = quick("plantune", "ingest-transcripts", str(transcripts))
    assert "session.jsonl" in p.stderr and "FIFO" in p.stderr and "Traceback" not in p.stderr

    skills = tmp_path / "skills" / "ship"
    skills.mkdir(parents=True)
    os.mkfifo(skills / "SKILL.md")
    p = quick("plantune", "registry", "lint", str(tmp_path / "skills"))
    assert p.returncode == 1 and "FIFO" in p.stderr and "Traceback" not in p.stderr

    proposal = tmp_path / "proposal.md"
    os.mkfifo(proposal)
    p = quick("plantune", "guidance", "apply", str(proposal))
    assert p.returncode == 1 and "FIFO" in p.stderr and "Traceback" not in p.stderr


def test_unreadable_preferences_file_is_reported_never_replaced(state_root):
    os.makedirs(project_dir(state_root))
    prefs = os.path.join(project_dir(state_root), "question-preferences.json")
    broken = '{"ship-release-pr": "always-ask",\n  "half an edit'
    with open(prefs, "w", encoding="utf-8") as f:
        f.write(broken)
    w = pref(
        "--write",
        json.dumps({"question_id": "ship-x", "preference": "never-ask", "source": "plan-tune"}),
    )
    assert w.returncode == 0
    assert "left as it is" in one_line_error(w)
    with open(prefs, encoding="utf-8") as f:
        assert f.read() == broken  # the user's entry is still there to fix by hand
    assert db_rows("SELECT question_id FROM preferences") == [{"question_id": "ship-x"}]
    c = pref("--clear")
    assert c.returncode == 0
    with open(prefs, encoding="utf-8") as f:
        assert f.read() == broken


def test_delete_takes_spooled_events_and_survives_a_fifo(state_root):
    """An event spooled while the database was busy is deleted with the rest, a set-aside
    spool entry goes too, and a FIFO where a gstack file belongs is reported without
    stopping the delete."""
    from tests.helpers.hotpath import run
    from toolkit.core import questions
    from toolkit.gstack import spool

    assert log(record(1, question_summary=f"logged {MARKER}")).returncode == 0
    spooled = questions.validate_event(record(2, question_summary=f"spooled {MARKER}"))
    spool.put_question(spooled, SLUG, os.environ["PLANTUNE_DB"])
    failed = os.path.join(spool.folder(), spool.FAILED_DIR)
    os.makedirs(failed)
    with open(os.path.join(failed, "old.json"), "w", encoding="utf-8") as f:
        json.dump({"project": SLUG, "record": {"question_summary": MARKER}}, f)
    os.mkfifo(os.path.join(project_dir(state_root), "question-events.jsonl"))
    p = quick("plantune", "profile", "delete", "--all", "--yes")
    assert p.returncode == 0, p.stderr
    assert "question-events.jsonl" in p.stderr and "FIFO" in p.stderr
    assert count("question_log") == 0
    assert spool.pending() == []
    assert MARKER.encode() not in _all_bytes(state_root)
    assert run("plantune", "ingest").returncode == 0
    assert count("question_log") == 0
