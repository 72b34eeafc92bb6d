"""Many agents at once on one project: no error, no lost write, files and rows in step."""

import os
import subprocess
import sys
import textwrap

import pytest

from tests.helpers import script
from tests.helpers.hotpath import SLUG, db_rows, env, events, log_lines, prefs_file

# A worker process: waits for the start signal, then calls the compat command N times in a
# row, each call opening its own connection exactly as a separate process would.
WORKER = textwrap.dedent("""
    import json, os, sys, time
    from toolkit.gstack import compat
    worker, n, go, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    while not os.path.exists(go):
        time.sleep(0.001)
    failures = 0
    for i in range(n):
        if kind == "log":
            event = {"skill": "ship", "question_id": "ship-changelog-voice-polish",
                     "question_summary": f"worker {worker} call {i}", "user_choice": "accept",
                     "source": "hook", "tool_use_id": f"w{worker}-{i}"}
            code = compat.question_log_main([json.dumps(event)])
        else:
            payload = {"question_id": f"q-{worker}-{i}", "preference": "never-ask",
                       "source": "plan-tune"}
            code = compat.question_preference_main(["--write", json.dumps(payload)])
        failures += code != 0
    sys.exit(failures)
""")


def _run_workers(tmp_path, kind, workers, calls):
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(w), str(calls), str(go), kind],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env(),
        )
        for w in range(workers)
    ]
    go.touch()
    results = [(p.wait(timeout=600), p.stdout.read(), p.stderr.read()) for p in procs]
    for code, out, err in results:
        assert code == 0 and err == "", (code, err[-2000:])
    return [out for _, out, _ in results]


def _check_log(state_root, expected):
    rows = db_rows(
        "SELECT project, tool_use_id, question_summary, raw_json FROM question_log ORDER BY id"
    )
    assert len(rows) == len(expected)
    assert {r["tool_use_id"] for r in rows} == expected
    assert {r["project"] for r in rows} == {SLUG}
    lines = log_lines(state_root)  # json.loads of every line: all valid
    assert len(lines) == len(expected)
    # Each line is appended once its row committed, so two writers' lines may swap places;
    # every row has exactly its line, byte for byte, and no line lacks a row.
    with open(os.path.join(str(state_root), "projects", SLUG, "question-log.jsonl")) as f:
        assert sorted(l.rstrip("\n") for l in f) == sorted(r["raw_json"] for r in rows)


@pytest.mark.slow(reason="2,000 calls from 8 processes, about 12 s")
def test_8_processes_x_250_logs(tmp_path, state_root):
    outputs = _run_workers(tmp_path, "log", 8, 250)
    assert all(o == "" for o in outputs)  # no DEDUP: every tool_use_id is distinct
    _check_log(state_root, {f"w{w}-{i}" for w in range(8) for i in range(250)})


def test_concurrent_preference_writes_keep_file_and_rows_in_step(tmp_path, state_root):
    _run_workers(tmp_path, "pref", 8, 25)
    ids = {f"q-{w}-{i}" for w in range(8) for i in range(25)}
    assert {r["question_id"] for r in db_rows("SELECT question_id FROM preferences")} == ids
    assert set(prefs_file(state_root)) == ids
    assert len(events(state_root)) == 200
    assert len(db_rows("SELECT id FROM preference_events")) == 200


SHELL_LOOP = (
    'for i in $(seq 1 {n}); do "{bin}" "$(printf \'{tmpl}\' {w} $i {w} $i)" || exit 1; done'
)
TEMPLATE = (
    '{"skill":"qa","question_id":"qa-tier","question_summary":"shell %s run %s",'
    '"user_choice":"quick","source":"hook","tool_use_id":"s%s-%s"}'
)


def _script_launches(tmp_path, state_root, workers, calls):
    procs = [
        subprocess.Popen(
            [
                "sh",
                "-c",
                SHELL_LOOP.format(n=calls, bin=script("gstack-question-log"), tmpl=TEMPLATE, w=w),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env(),
        )
        for w in range(workers)
    ]
    for p in procs:
        out, err = p.communicate(timeout=1800)
        assert p.returncode == 0 and out == "" and err == "", err[-2000:]
    _check_log(state_root, {f"s{w}-{i}" for w in range(workers) for i in range(1, calls + 1)})


def test_8_parallel_shells_launching_the_script(tmp_path, state_root):
    # the same, with every call a real process start as hooks do (fewer calls: ~40 ms each)
    _script_launches(tmp_path, state_root, 8, 12)


@pytest.mark.slow(reason="2,000 process starts")
def test_8_parallel_shells_x_250_script_launches(tmp_path, state_root):
    _script_launches(tmp_path, state_root, 8, 250)
