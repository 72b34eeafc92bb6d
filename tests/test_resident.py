"""The resident server (toolkit/resident.py) and the launcher's hand-off to it.

Every test runs the installed commands as agents do, with the server on (conftest turns
it off for the rest of the suite) in a runtime folder of the test's own, and stops the
server at the end. The server must be invisible: the same output, exit codes and stored
rows as a process of its own, in the caller's folder and environment; a command runs
exactly once whatever happens to the server; a database replaced under it is never
written through an old connection.
"""

import contextlib
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import threading
import time

import pytest

from tests.helpers import BIN_DIR, script
from tests.helpers.hooks import make_repo, payload, question
from tests.helpers.hotpath import env as hot_env
from tests.helpers.hotpath import run
from toolkit import resident

TWO_WAY = "ship-changelog-voice-polish"
NEVER_ASK = json.dumps({"question_id": TWO_WAY, "preference": "never-ask", "source": "plan-tune"})


def _event(i, **extra):
    e = {
        "skill": "ship",
        "question_id": TWO_WAY,
        "question_summary": f"Polish the changelog voice? ({i})",
        "category": "approval",
        "door_type": "two-way",
        "options_count": 2,
        "user_choice": "accept",
        "recommended": "accept",
        "session_id": f"s{i}",
    }
    e.update(extra)
    return e


PYTHON = os.path.join(BIN_DIR, "python")  # the installed commands' Python


def _server_path():
    """The socket of the running server of the installed commands (None: none runs)."""
    return resident.wait_for_server(executable=PYTHON)


def _served(path):
    info = resident.server_info(path)
    return None if info is None else info[1]


def _wait(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def server(monkeypatch):
    """A running server for the installed commands; stopped afterwards."""
    monkeypatch.setenv("PLANTUNE_SERVER", "on")
    r = run("gstack-question-preference", "--check", TWO_WAY)  # starts it
    assert r.returncode == 0, r.stderr
    path = _server_path()
    assert path is not None, "no server started"
    yield path
    resident.stop(path)
    assert resident.server_info(path) is None


def _count(db, table="question_log"):
    if not os.path.exists(db):
        return 0
    conn = sqlite3.connect(db)
    try:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        conn.close()


def _roots(tmp_path, name):
    root = tmp_path / name
    root.mkdir()
    return {
        "GSTACK_STATE_ROOT": str(root),
        "GSTACK_HOME": str(root),
        "PLANTUNE_DB": str(root / "plantune.db"),
    }


# --------------------------------------------------------------------------
# Served calls are indistinguishable from calls in a process of their own


def _session(tmp_path):
    """A varied agent session: (command, args, stdin) for each call."""
    one_way = "Drop the production users table and restore it from last week's backup?"
    pre = payload([question(one_way, ["Yes", "No"])], cwd=tmp_path, event="PreToolUse")
    post = payload(
        [question("Polish the changelog voice?", ["accept", "skip"])],
        {"answers": {"Polish the changelog voice?": "accept"}},
        cwd=tmp_path,
        tool_use_id="tu-9",
    )
    return [
        ("gstack-question-log", [json.dumps(_event(1))], None),
        ("gstack-question-log", [json.dumps(_event(1))], None),  # the same event again
        ("gstack-question-log", ["{not json"], None),
        ("gstack-question-log", [json.dumps(_event(2, door_type="sideways"))], None),
        ("gstack-question-log", [], None),
        ("gstack-question-preference", ["--check", TWO_WAY], None),
        ("gstack-question-preference", ["--write", NEVER_ASK], None),
        ("gstack-question-preference", ["--check", TWO_WAY], None),
        ("gstack-question-preference", ["--check", TWO_WAY, "--summary-stdin"], one_way),
        ("gstack-question-preference", ["--check", "review-sql-safety"], None),
        ("gstack-question-preference", ["--read"], None),
        ("gstack-question-preference", ["--stats"], None),
        ("gstack-question-preference", ["--frobnicate"], None),
        ("plantune", ["hook", "pre-tool-use"], json.dumps(pre)),
        ("plantune", ["hook", "post-tool-use"], json.dumps(post)),
        ("plantune", ["hook", "pre-tool-use"], "{broken"),
        ("plantune", ["hook", "session-start"], '{"hook_event_name": "SessionStart"}'),
        ("plantune", ["check", TWO_WAY], None),
        ("plantune", ["log", json.dumps(_event(3))], None),
        ("plantune", ["log", "-"], json.dumps(_event(4))),
        ("plantune", ["check"], None),
        ("plantune", ["check", TWO_WAY, "--db", "a-folder"], None),
        ("gstack-developer-profile", ["--derive"], None),
        ("gstack-developer-profile", ["--profile"], None),
        ("gstack-pacing-rank", [], "{}"),
        ("gstack-question-preference", ["--clear", TWO_WAY], None),
        ("gstack-question-preference", ["--check", TWO_WAY], None),
    ]


def _normalise(text, root=None):
    if root:
        text = text.replace(root, "<root>")
    return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z?", "<ts>", text)


def _table_rows(db, table, skip=("id", "ts", "event_key", "changed_at", "updated_at")):
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute(f"SELECT * FROM {table}").fetchall()
    finally:
        conn.close()
    return sorted(
        _normalise(json.dumps({k: r[k] for k in r.keys() if k not in skip}, sort_keys=True))
        for r in rows
    )


def test_a_session_through_the_server_matches_one_process_per_call(server, tmp_path):
    served, direct = _roots(tmp_path, "served"), _roots(tmp_path, "direct")
    (tmp_path / "a-folder").mkdir()
    before = _served(server)
    calls = _session(tmp_path)
    for name, args, stdin in calls:
        a = run(name, *args, input=stdin, cwd=tmp_path, **served)
        b = run(name, *args, input=stdin, cwd=tmp_path, PLANTUNE_SERVER="off", **direct)
        where = f"{name} {' '.join(args)[:60]}"
        assert a.returncode == b.returncode, where
        assert _normalise(a.stdout, served["GSTACK_STATE_ROOT"]) == _normalise(
            b.stdout, direct["GSTACK_STATE_ROOT"]
        ), where
        assert _normalise(a.stderr, served["GSTACK_STATE_ROOT"]) == _normalise(
            b.stderr, direct["GSTACK_STATE_ROOT"]
        ), where
    # Every call but the two `plantune check` command lines click answers was served (all
    # of them unless the machine was so loaded that one ran alone after 0.25 s).
    served_calls = _served(server) - before
    assert 0.8 * (len(calls) - 2) <= served_calls <= len(calls) - 2
    for table in (
        "question_log",
        "preferences",
        "preference_events",
        "profile_sums",
        "profile_totals",
        "rollup_question",
        "rollup_choice",
        "tombstones",
    ):
        assert _table_rows(served["PLANTUNE_DB"], table) == _table_rows(
            direct["PLANTUNE_DB"], table
        ), table
    for name in ("question-log.jsonl", "question-preferences.json"):
        a = (tmp_path / "served" / "projects" / "test-project" / name).read_text()
        b = (tmp_path / "direct" / "projects" / "test-project" / name).read_text()
        assert _normalise(a) == _normalise(b), name


def test_each_call_runs_in_its_callers_folder_environment_and_umask(server, tmp_path):
    repo = make_repo(tmp_path, "acme/shop", "shop")
    one, two = _roots(tmp_path, "one"), _roots(tmp_path, "two")
    before = _served(server)
    assert (
        run(
            "gstack-question-log", json.dumps(_event(1)), cwd=repo, GSTACK_PROJECT_SLUG=None, **one
        ).returncode
        == 0
    )
    assert run("gstack-question-log", json.dumps(_event(2)), cwd=tmp_path, **two).returncode == 0
    assert _served(server) - before == 2
    conn = sqlite3.connect(one["PLANTUNE_DB"])
    assert conn.execute("SELECT project FROM question_log").fetchall() == [("acme-shop",)]
    conn = sqlite3.connect(two["PLANTUNE_DB"])
    assert conn.execute("SELECT project FROM question_log").fetchall() == [("test-project",)]
    # The files it creates are private whatever the server's own umask (the caller's 077).
    log = tmp_path / "one" / "projects" / "acme-shop" / "question-log.jsonl"
    assert log.exists()
    r = subprocess.run(
        [
            "sh",
            "-c",
            'umask 077; exec "$0" "$@"',
            script("gstack-question-log"),
            json.dumps(_event(3, question_id="ship-new-thing")),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=hot_env(GSTACK_PROJECT_SLUG="umask-project", **two),
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    made = tmp_path / "two" / "projects" / "umask-project"
    assert made.stat().st_mode & 0o077 == 0
    assert _served(server) - before == 3


def test_no_one_way_door_is_auto_decided_through_the_server(server, tmp_path):
    roots = _roots(tmp_path, "r")
    w = run("gstack-question-preference", "--write", NEVER_ASK, **roots)
    assert w.returncode == 0, w.stderr
    assert run("gstack-question-preference", "--check", TWO_WAY, **roots).stdout.startswith(
        "AUTO_DECIDE"
    )
    for text in (
        "Force-push over main and delete the release branch?",
        "Rotate the production signing keys now?",
    ):
        r = run(
            "gstack-question-preference", "--check", TWO_WAY, "--summary-stdin", input=text, **roots
        )
        assert r.stdout.splitlines()[0] == "ASK_NORMALLY", text


# --------------------------------------------------------------------------
# A command runs exactly once, whatever happens to the server


def test_a_server_that_does_not_answer_in_time_leaves_the_call_to_the_launcher(server, tmp_path):
    roots = _roots(tmp_path, "r")
    pid = resident.server_info(server)[0]
    before = _served(server)
    os.kill(pid, signal.SIGSTOP)
    try:
        r = run("gstack-question-log", json.dumps(_event(1)), **roots)
        assert r.returncode == 0, r.stderr
        assert _count(roots["PLANTUNE_DB"]) == 1
    finally:
        os.kill(pid, signal.SIGCONT)
    # The server reads the abandoned request later and runs nothing: still one row.
    r = run("gstack-question-preference", "--check", TWO_WAY, **roots)
    assert r.returncode == 0
    assert _served(server) == before + 1  # only the check
    assert _count(roots["PLANTUNE_DB"]) == 1
    lines = (tmp_path / "r" / "projects" / "test-project" / "question-log.jsonl").read_text()
    assert len(lines.splitlines()) == 1


def test_a_server_killed_during_a_call_is_reported_and_the_call_not_repeated(server, tmp_path):
    roots = _roots(tmp_path, "r")
    assert run("gstack-question-log", json.dumps(_event(1)), **roots).returncode == 0
    pid = resident.server_info(server)[0]
    with _write_lock_held(roots["PLANTUNE_DB"]):  # the served log call waits for this lock
        p = _start_log(2, roots)
        time.sleep(0.6)
        assert p.poll() is None
        os.kill(pid, signal.SIGKILL)
        out, err = p.communicate(timeout=30)
    assert p.returncode == 1
    assert "whether it took effect is unknown" in err
    assert _count(roots["PLANTUNE_DB"]) == 1  # the killed call committed nothing, ran once
    # The next calls run in their own process (no server) and work.
    assert run("gstack-question-log", json.dumps(_event(3)), **roots).returncode == 0
    assert _count(roots["PLANTUNE_DB"]) == 2


def _start_log(i, roots):
    """``gstack-question-log`` of event ``i``, started (not waited for)."""
    return subprocess.Popen(
        [script("gstack-question-log"), json.dumps(_event(i))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=hot_env(**roots),
    )


@contextlib.contextmanager
def _write_lock_held(db_file):
    """The database's write lock, held by another connection for the block."""
    holder = sqlite3.connect(db_file, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def _held_by_server(server, roots):
    """Have the server open the database of ``roots`` (a check it serves): a test about
    what a server holding a database does must not start from a call that timed out and
    ran on its own, as calls may on a loaded machine."""
    for _ in range(20):
        before = _served(server)
        assert run("gstack-question-preference", "--check", TWO_WAY, **roots).returncode == 0
        if _served(server) > before:
            return
    raise AssertionError("no call was served")


def _summaries(db):
    conn = sqlite3.connect(db)
    try:
        return " ".join(r[0] for r in conn.execute("SELECT question_summary FROM question_log"))
    finally:
        conn.close()


def _start_again(path):
    assert run("gstack-question-preference", "--check", TWO_WAY).returncode == 0
    assert _server_path() == path


def test_a_hook_whose_server_is_killed_exits_0_and_its_redelivery_counts_once(server, tmp_path):
    roots = _roots(tmp_path, "r")
    post = payload(
        [question("Polish the changelog voice?", ["accept", "skip"])],
        {"answers": {"Polish the changelog voice?": "accept"}},
        cwd=tmp_path,
        tool_use_id="tu-kill",
    )
    assert run("gstack-question-log", json.dumps(_event(1)), **roots).returncode == 0
    pid = resident.server_info(server)[0]
    with _write_lock_held(roots["PLANTUNE_DB"]):  # the served hook waits for this lock
        p = subprocess.Popen(
            [script("plantune"), "hook", "post-tool-use"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=hot_env(**roots),
        )
        p.stdin.write(json.dumps(post).encode())
        p.stdin.close()
        time.sleep(0.6)
        os.kill(pid, signal.SIGKILL)
        p.wait(timeout=60)
    out, err = p.stdout.read(), p.stderr.read()
    assert p.returncode == 0 and out == b""  # hooks always exit 0
    assert b"whether it took effect is unknown" in err
    for _ in range(2):  # delivered again (twice): recorded once
        again = subprocess.run(
            [script("plantune"), "hook", "post-tool-use"],
            input=json.dumps(post).encode(),
            capture_output=True,
            env=hot_env(**roots),
            timeout=60,
        )
        assert again.returncode == 0
    assert _count(roots["PLANTUNE_DB"]) == 2


def test_a_database_deleted_under_the_server_gets_the_next_writes(server, tmp_path):
    roots = _roots(tmp_path, "r")
    db = roots["PLANTUNE_DB"]
    _held_by_server(server, roots)
    assert run("gstack-question-log", json.dumps(_event(1)), **roots).returncode == 0
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    # The server no longer serves a database it holds a deleted file of: the call runs in
    # its own process, and the server leaves without closing (and so checkpointing) it.
    r = run("gstack-question-log", json.dumps(_event(2)), **roots)
    assert r.returncode == 0, r.stderr
    assert "(2)" in _summaries(db)
    assert _wait(lambda: resident.server_info(server) is None)
    _start_again(server)
    assert run("gstack-question-log", json.dumps(_event(3)), **roots).returncode == 0
    assert "(3)" in _summaries(db)


def test_a_database_replaced_under_the_server_is_never_written_through_the_old_file(
    server, tmp_path
):
    roots, other = _roots(tmp_path, "r"), _roots(tmp_path, "other")
    db = roots["PLANTUNE_DB"]
    _held_by_server(server, roots)
    assert run("gstack-question-log", json.dumps(_event(1)), **roots).returncode == 0
    assert (
        run("gstack-question-log", json.dumps(_event(7)), PLANTUNE_SERVER="off", **other).returncode
        == 0
    )
    os.replace(other["PLANTUNE_DB"], db)  # a restore by rename, while the server holds db
    for suffix in ("-wal", "-shm"):
        if os.path.exists(other["PLANTUNE_DB"] + suffix):
            os.replace(other["PLANTUNE_DB"] + suffix, db + suffix)
    r = run("gstack-question-log", json.dumps(_event(8)), **roots)
    assert r.returncode == 0, r.stderr
    summaries = _summaries(db)
    assert "(7)" in summaries and "(8)" in summaries
    assert _wait(lambda: resident.server_info(server) is None)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


def test_concurrent_calls_through_the_server_and_beside_it_are_each_recorded_once(server, tmp_path):
    roots = _roots(tmp_path, "r")
    procs = []
    for i in range(24):
        extra = {"PLANTUNE_SERVER": "off"} if i % 4 == 0 else {}
        procs.append(
            subprocess.Popen(
                [script("gstack-question-log"), json.dumps(_event(i))],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=hot_env(**roots, **extra),
            )
        )
    for p in procs:
        p.communicate(timeout=60)
        assert p.returncode == 0
    assert _count(roots["PLANTUNE_DB"]) == 24
    lines = (tmp_path / "r" / "projects" / "test-project" / "question-log.jsonl").read_text()
    assert len(lines.splitlines()) == 24


# --------------------------------------------------------------------------
# Lifecycle and trust


def test_a_changed_install_is_never_served_by_the_old_server(server, tmp_path):
    roots = _roots(tmp_path, "r")
    # The module file the server loaded: the installed copy's, or the checkout's.
    target = subprocess.run(
        [os.path.join(BIN_DIR, "python"), "-c", "import toolkit.resident as r; print(r.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        env=hot_env(),
        cwd="/",
    ).stdout.strip()
    st = os.stat(target)
    try:
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        r = run("gstack-question-log", json.dumps(_event(1)), **roots)
        assert r.returncode == 0, r.stderr
        assert _count(roots["PLANTUNE_DB"]) == 1
        assert _wait(lambda: resident.server_info(server) is None), "the old server stayed"
    finally:
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_the_server_leaves_when_idle(monkeypatch, tmp_path):
    monkeypatch.setenv("PLANTUNE_SERVER", "on")
    monkeypatch.setenv("PLANTUNE_SERVER_IDLE", "0.3")
    assert run("gstack-question-preference", "--check", TWO_WAY).returncode == 0
    path = _server_path()
    assert path is not None
    assert _wait(lambda: resident.server_info(path) is None and not os.path.exists(path))


def test_off_starts_no_server(tmp_path):
    assert run("gstack-question-preference", "--check", TWO_WAY).returncode == 0
    time.sleep(0.3)
    assert not os.path.exists(os.environ["PLANTUNE_RUNTIME_DIR"])


def test_a_runtime_folder_others_can_enter_is_never_used(server, tmp_path):
    folder = os.path.dirname(server)
    resident.stop(server)
    os.chmod(folder, 0o755)  # now anyone may plant a socket there
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(server)  # where the launcher would look
    listener.listen(5)
    listener.settimeout(0.5)
    seen = []

    def watch():
        try:
            seen.append(listener.accept())
        except OSError:
            pass

    t = threading.Thread(target=watch)
    t.start()
    r = run("gstack-question-preference", "--check", TWO_WAY)
    t.join()
    listener.close()
    assert r.returncode == 0 and r.stdout == "ASK_NORMALLY\n"
    assert seen == []
    os.unlink(server)
    os.chmod(folder, 0o700)


def test_malformed_requests_do_not_stop_the_server(server, tmp_path):
    for data in (b"", b"\xff\xff\xff\x7f", b"\x05\x00\x00\x00hello", b"\x03\x00\x00\x00abc"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(server)
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        answer = s.recv(1)
        s.close()
        assert answer in (b"", b"D")
    before = _served(server)
    assert run("gstack-question-preference", "--check", TWO_WAY).returncode == 0
    assert _served(server) == before + 1


def test_the_launcher_imports_only_builtin_modules_when_served(server):
    r = subprocess.run(
        [
            os.path.join(BIN_DIR, "python"),
            "-I",
            "-S",
            "-X",
            "importtime",
            script("gstack-question-preference"),
            "--check",
            TWO_WAY,
        ],
        capture_output=True,
        text=True,
        env=hot_env(),
        timeout=60,
    )
    assert r.returncode == 0 and r.stdout == "ASK_NORMALLY\n"
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in r.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    bare = subprocess.run(
        [os.path.join(BIN_DIR, "python"), "-I", "-S", "-X", "importtime", "-c", "pass"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    floor = {
        line.rsplit("|", 1)[1].strip()
        for line in bare.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert imported - floor - {"imported package"} <= {"posix", "_socket", "time"}


def test_status_and_stop(server):
    r = run("plantune", "resident", "status")
    assert r.returncode == 0 and r.stdout.startswith("running: pid ")
    r = run("plantune", "resident", "stop")
    assert r.returncode == 0 and r.stdout.startswith("stopped")
    r = run("plantune", "resident", "status")
    assert r.stdout.startswith("not running")
    assert run("plantune", "resident", "stop").stdout == "not running\n"


def test_the_server_keeps_a_bounded_number_of_databases_open(server, tmp_path):
    from toolkit.store import kept

    pid = resident.server_info(server)[0]

    def log_to(n):
        roots = _roots(tmp_path, f"r{n}")
        assert run("gstack-question-log", json.dumps(_event(n)), **roots).returncode == 0
        return roots

    first = [log_to(n) for n in range(kept.KEPT_MAX)]
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    rest = [log_to(n) for n in range(kept.KEPT_MAX, 3 * kept.KEPT_MAX)]
    assert len(os.listdir(f"/proc/{pid}/fd")) <= fds + 3
    assert resident.server_info(server)[0] == pid  # still the same server
    for roots in first + rest:
        assert _count(roots["PLANTUNE_DB"]) == 1
    # A database closed to make room is opened again when a call needs it.
    assert run("gstack-question-log", json.dumps(_event(99)), **first[0]).returncode == 0
    assert _count(first[0]["PLANTUNE_DB"]) == 2


# --------------------------------------------------------------------------
# Found by a hostile review: each would fail on the server as it first was


def test_a_database_restored_in_place_loses_no_write_and_brings_no_preference_back(
    server, tmp_path
):
    roots = _roots(tmp_path, "r")
    db_file = roots["PLANTUNE_DB"]
    quiet = dict(roots, PLANTUNE_MIRROR="0")  # gstack's files cannot restore anything
    _held_by_server(server, quiet)
    assert run("gstack-question-log", json.dumps(_event(1)), **quiet).returncode == 0
    backup = str(tmp_path / "backup.db")
    src = sqlite3.connect(db_file)
    dst = sqlite3.connect(backup)
    src.backup(dst)
    src.close()
    dst.close()
    assert run("gstack-question-preference", "--write", NEVER_ASK, **quiet).returncode == 0
    assert run("gstack-question-preference", "--check", TWO_WAY, **quiet).stdout.startswith(
        "AUTO_DECIDE"
    )
    # Restored by hand: the same inode, new content, the old -wal and -shm removed.
    with open(backup, "rb") as f, open(db_file, "r+b") as g:
        g.truncate(0)
        g.write(f.read())
    for suffix in ("-wal", "-shm"):
        os.unlink(db_file + suffix)
    old_pid = resident.server_info(server)[0]
    check = run("gstack-question-preference", "--check", TWO_WAY, **quiet)
    assert check.stdout.startswith("ASK_NORMALLY")  # the restored file has no preference
    for i in (2, 3, 4):
        assert run("gstack-question-log", json.dumps(_event(i)), **quiet).returncode == 0
    summaries = _summaries(db_file)
    assert all(f"({i})" in summaries for i in (1, 2, 3, 4))
    # The server that held the old files left (a new one may have started since).
    assert _wait(lambda: (resident.server_info(server) or (old_pid,))[0] != old_pid)


def test_a_caller_with_stdin_closed_runs_itself_and_leaves_the_server_usable(server, tmp_path):
    before = _served(server)
    r = subprocess.run(
        [
            "sh",
            "-c",
            'exec 0<&-; exec "$0" "$@"',
            script("gstack-question-preference"),
            "--check",
            TWO_WAY,
            "--summary-stdin",
        ],
        capture_output=True,
        text=True,
        env=hot_env(),
        timeout=30,
    )
    assert r.returncode == 0 and r.stdout.startswith("ASK_NORMALLY"), r.stderr
    assert _served(server) == before
    assert run("gstack-question-preference", "--check", TWO_WAY).returncode == 0
    assert _served(server) == before + 1


def test_a_caller_killed_during_its_call_is_interrupted_like_its_own_process(server, tmp_path):
    roots = _roots(tmp_path, "r")
    assert run("gstack-question-log", json.dumps(_event(1)), **roots).returncode == 0
    with _write_lock_held(roots["PLANTUNE_DB"]):
        p = _start_log(2, roots)
        time.sleep(0.6)
        p.kill()  # a hook runner's time-out
        p.wait(timeout=30)
        time.sleep(0.2)
    pid = resident.server_info(server)[0]
    assert run("gstack-question-preference", "--check", TWO_WAY, **roots).returncode == 0
    assert resident.server_info(server)[0] == pid  # the same server, free again
    assert _count(roots["PLANTUNE_DB"]) == 1  # the killed call recorded nothing
    lines = (tmp_path / "r" / "projects" / "test-project" / "question-log.jsonl").read_text()
    assert len(lines.splitlines()) == 1


def test_a_connection_setting_one_call_changed_is_put_back_for_the_next(tmp_path):
    from toolkit.core import database
    from toolkit.store import db, kept

    path = str(tmp_path / "kept.db")
    kept.keep_connections(True)
    try:
        conn = database.connect(path)
        defaults = [conn.execute(f"PRAGMA {name}").fetchone()[0] for name in kept.SETTINGS]
        conn.execute("PRAGMA busy_timeout = 3000")  # as a hook sets it
        conn.execute("PRAGMA cache_size = -64000")  # as an import sets it
        conn.execute("PRAGMA secure_delete = ON")
        conn.row_factory = None
        conn.close()
        again = database.connect(path)
        assert again is conn  # kept
        assert [again.execute(f"PRAGMA {n}").fetchone()[0] for n in kept.SETTINGS] == defaults
        assert defaults[0] == int(db.BUSY_TIMEOUT_SECONDS * 1000)
        assert again.row_factory is sqlite3.Row
    finally:
        kept.keep_connections(False)


def test_callers_in_another_context_get_a_server_of_their_own(server, tmp_path):
    import resource

    def smaller_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000_000, 50_000_000))

    before = _served(server)
    for _ in range(3):
        r = subprocess.run(
            [script("gstack-question-preference"), "--check", TWO_WAY],
            capture_output=True,
            text=True,
            env=hot_env(),
            preexec_fn=smaller_files,
            timeout=30,
        )
        assert r.returncode == 0 and r.stdout == "ASK_NORMALLY\n"
        time.sleep(0.3)
    assert _served(server) == before  # never this server
    assert _wait(lambda: len(resident.servers(executable=PYTHON)) == 2)
    for path, _pid, _served_calls in resident.servers(executable=PYTHON):
        if path != server:
            resident.stop(path)


def test_the_server_keeps_none_of_its_starters_other_descriptors(monkeypatch, tmp_path):
    monkeypatch.setenv("PLANTUNE_SERVER", "on")
    r_end, w_end = os.pipe()
    try:
        # This call starts the server, with a pipe open besides stdio (a test runner's).
        subprocess.run(
            [script("gstack-question-preference"), "--check", TWO_WAY],
            capture_output=True,
            env=hot_env(),
            pass_fds=(w_end,),
            timeout=30,
        )
        os.close(w_end)
        path = _server_path()
        assert path is not None
        ready = select_readable(r_end, 10)
        assert ready and os.read(r_end, 1) == b""  # end of file: no one else holds it
    finally:
        os.close(r_end)
        if _server_path() is not None:
            resident.stop(_server_path())


def select_readable(fd, timeout):
    import select

    return select.select([fd], [], [], timeout)[0]


def test_detached_derives_leave_no_zombie_in_the_server(server, tmp_path):
    roots = _roots(tmp_path, "r")
    pid = resident.server_info(server)[0]
    for i in range(8):
        r = run(
            "gstack-question-log",
            json.dumps(_event(i)),
            GSTACK_QUESTION_LOG_NO_DERIVE=None,
            **roots,
        )
        assert r.returncode == 0
        time.sleep(0.15)
    run("gstack-question-preference", "--check", TWO_WAY, **roots)
    zombies = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == "Z" and int(fields[1]) == pid:
                zombies += 1
    assert zombies <= 1


def test_bad_idle_values_fall_back_to_the_default():
    for text in ("abc", "0", "-1", "inf", "nan", "", None):
        assert resident.idle_seconds(text) == resident.IDLE_SECONDS, text
    assert resident.idle_seconds("0.3") == 0.3
    assert resident.idle_seconds("1e12") == 86400.0


def test_a_relative_runtime_folder_is_not_used(monkeypatch, tmp_path):
    monkeypatch.setenv("PLANTUNE_SERVER", "on")
    monkeypatch.setenv("PLANTUNE_RUNTIME_DIR", "relative/run")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "xdg"))
    (tmp_path / "xdg").mkdir(mode=0o700)
    assert run("gstack-question-preference", "--check", TWO_WAY, cwd=tmp_path).returncode == 0
    assert resident.runtime_dir() == str(tmp_path / "xdg" / "plantune")
    path = _server_path()
    try:
        assert path is not None and path.startswith(str(tmp_path / "xdg" / "plantune"))
        assert not (tmp_path / "relative").exists()
    finally:
        if path:
            resident.stop(path)


def test_ctrl_c_interrupts_a_served_command_as_its_own_process(server, tmp_path):
    results = {}
    for mode in ("off", "on"):
        # The command waits for a summary on a stdin that never ends (a terminal's).
        p = subprocess.Popen(
            [script("gstack-question-preference"), "--check", TWO_WAY, "--summary-stdin"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=hot_env(PLANTUNE_SERVER=mode),
        )
        time.sleep(0.8)
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
        results[mode] = (p.returncode, p.stdout.read(), p.stderr.read())
        p.stdin.close()
    assert results["on"] == results["off"]
    assert results["on"][0] == 130 and b"interrupted" in results["on"][2]


def test_the_launcher_and_the_server_agree_on_the_exchange():
    # The launcher cannot import the server's module (it must stay cheap): its copies of
    # the protocol number, the socket name and the answer wait are held to the module's.
    from tests.helpers import REPO_ROOT

    with open(os.path.join(REPO_ROOT, "launchers", "plantune"), encoding="utf-8") as f:
        source = f.read()
    assert f'b"plantune-resident {resident.PROTOCOL}"' in source
    assert f'-{resident.PROTOCOL}.sock"' in source
    assert f"s.settimeout({resident.ACCEPT_WAIT})" in source
    assert f'b"{resident.SERVE_VAR}"' in source and f'b"{resident.CONTEXT_VAR}"' in source
    from toolkit import launch

    with open(launch.__file__, encoding="utf-8") as f:
        assert f'os.environ.get("{resident.SERVE_VAR}")' in f.read()


# --------------------------------------------------------------------------
# Found by a second hostile review


def _server_context(path):
    """The context the server at ``path`` was started for (its starter's, from the start
    environment the server keeps in /proc)."""
    pid = resident.server_info(path)[0]
    with open(f"/proc/{pid}/environ", "rb") as f:
        for item in f.read().split(b"\0"):
            if item.startswith(resident.CONTEXT_VAR.encode() + b"="):
                return item.split(b"=", 1)[1]
    raise AssertionError("no context")


def _request(python, context, argv):
    body = b"\0".join(
        [
            b"plantune-resident %d" % resident.PROTOCOL,
            b"18",
            os.getcwdb(),
            python,
            context,
            b"%d" % len(argv),
            *[a.encode() for a in argv],
            *[k.encode() + b"=" + v.encode() for k, v in hot_env().items()],
        ]
    )
    return len(body).to_bytes(4, "little") + body


def _answer(path, request):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    s.sendall(request)
    answer = s.recv(1)
    s.close()
    return answer


def test_the_server_serves_only_its_own_install_and_context_whatever_the_socket_name(server):
    context = _server_context(server)
    argv = [script("gstack-question-preference"), "--check", TWO_WAY]
    python = PYTHON.encode()
    assert _answer(server, _request(python, context, argv)) == b"A"  # then dropped: no G
    assert _answer(server, _request(python + b"x", context, argv)) == b"D"
    assert _answer(server, _request(python, context.replace(b"Max", b"Mix", 1), argv)) == b"D"
    before = _served(server)
    assert run("gstack-question-preference", "--check", TWO_WAY).returncode == 0
    assert _served(server) == before + 1  # nothing above ran


def _launcher_functions():
    from tests.helpers import REPO_ROOT

    with open(os.path.join(REPO_ROOT, "launchers", "plantune"), encoding="utf-8") as f:
        source = f.read()
    namespace = {}
    exec(source[source.index("def _digest") : source.index("def _spawn")], namespace)
    return namespace


def test_without_proc_a_caller_has_no_context_and_runs_in_its_own_process():
    class NoProc:
        O_RDONLY = os.O_RDONLY

        def readlink(self, path):
            raise FileNotFoundError(path)

        def open(self, path, flags):
            raise FileNotFoundError(path)

    functions = _launcher_functions()
    assert functions["_context"](NoProc(), {}) is None
    import posix

    base = functions["_context"](posix, {})
    assert base is not None
    for name in (b"LANG", b"LC_ALL", b"TZ", b"LD_PRELOAD"):  # read once at start-up
        assert functions["_context"](posix, {name: b"x"}) != base, name


def test_stopping_a_server_lets_a_call_waiting_for_the_lock_finish(server, tmp_path):
    roots = _roots(tmp_path, "r")
    assert run("gstack-question-log", json.dumps(_event(1)), **roots).returncode == 0
    outcome = []
    with _write_lock_held(roots["PLANTUNE_DB"]):
        p = _start_log(2, roots)
        time.sleep(0.6)
        stopper = threading.Thread(target=lambda: outcome.append(resident.stop(server)))
        stopper.start()
        time.sleep(2.0)
    stopper.join(timeout=30)
    assert p.wait(timeout=30) == 0
    assert outcome == ["stopped"]
    assert _count(roots["PLANTUNE_DB"]) == 2


def test_status_lists_only_servers_whose_pids_this_process_can_see(tmp_path):
    import fcntl

    folder = tmp_path / "locks"
    folder.mkdir(mode=0o700)
    for name, namespace in (("here", resident.pid_namespace()), ("there", "pid:[1]")):
        fd = os.open(folder / f"{name}.sock.lock", os.O_RDWR | os.O_CREAT, 0o600)
        os.write(fd, f"{os.getpid()} 3 {namespace} {PYTHON}\n".encode())
        fcntl.flock(fd, fcntl.LOCK_EX)  # held, as by a running server
    found = resident.servers(executable=PYTHON, folder=str(folder))
    assert [os.path.basename(p) for p, _pid, _n in found] == ["here.sock"]


@pytest.mark.parametrize("locale", ["C", "C.UTF-8"])
def test_output_is_encoded_as_the_callers_locale_would_have_it(server, tmp_path, locale):
    roots = _roots(tmp_path, "r")
    calls = [
        (
            "gstack-question-preference",
            ["--check", TWO_WAY, "--summary-stdin"],
            "Supprimer définitivement la base « clients » ?".encode(),
        ),
        (
            "gstack-question-log",
            ['{"skill":"ship","question_id":"é","question_summary":"ünï"}'],
            None,
        ),
        ("gstack-question-log", ['{"skill":"ship", "question_summary": "\udcff"'], None),
    ]
    for name, args, stdin in calls:
        a = run(name, *args, input=stdin, LC_ALL=locale, **roots)
        b = run(name, *args, input=stdin, LC_ALL=locale, PLANTUNE_SERVER="off", **roots)
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), name
    assert len(resident.servers(executable=PYTHON)) == 2  # this locale's server and the first


def test_servers_for_many_contexts_are_capped(server, tmp_path):
    import resource

    def limit(n):
        return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (10**9 + n, 10**9 + n))

    for n in range(resident.MAX_SERVERS + 2):
        for _ in range(2):
            r = subprocess.run(
                [script("gstack-question-preference"), "--check", TWO_WAY],
                capture_output=True,
                env=hot_env(),
                preexec_fn=limit(n),
                timeout=30,
            )
            assert r.returncode == 0
            time.sleep(0.25)
    assert len(resident.servers(executable=PYTHON)) <= resident.MAX_SERVERS
    for path, _pid, _n in resident.servers(executable=PYTHON):
        resident.stop(path)
