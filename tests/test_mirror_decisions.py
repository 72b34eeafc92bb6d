"""What plantune decides reaches gstack's own files: pacing's Silent Decisions and flips in
question-log.jsonl, applied guidance in question-preferences.json and question-events.jsonl,
each line marked as read so the importer never takes it for someone else's."""

import json
import os
import sqlite3
import subprocess

import pytest

from tests.helpers import hotpath as hp
from tests.helpers import script
from toolkit.core import questions
from toolkit.gstack import history, pickup
from toolkit.guidance import apply, files
from toolkit.guidance import proposals as g
from toolkit.pacing import decisions
from toolkit.pacing import rank as pacing

PROJECT = "pacing-proj"
TWO_WAY = "ship-changelog-voice-polish"  # registry: two-way, options accept|skip

REQUEST = {
    "session_id": "s1",
    "chain_id": "c1",
    "phase": "eng",
    "budget": 6,
    "skill": "plan-eng-review",
    "findings": [
        {
            "id": "eng-missing-index",
            "summary": "Add an index on orders.user_id",
            "severity": 2,
            "irreversibility": 0,
            "decision_matters": 2,
            "recommended": "fix-now",
            "options": ["fix-now", "defer"],
        },
        {
            "id": "test-coverage-bookclub-form",
            "summary": "Bookclub form has no tests",
            "severity": 1,
            "irreversibility": 1,
            "decision_matters": 0,
            "recommended": "defer",
            "options": ["add-tests", "defer"],
        },
        {
            "id": "eng-cache-ttl",
            "summary": "Cache TTL is short",
            "severity": 0,
            "irreversibility": 1,
            "decision_matters": 1,
            "recommended": "defer",
            "options": ["fix-now", "defer"],
        },
    ],
}


def log_path(root, slug=PROJECT):
    return os.path.join(str(root), "projects", slug, "question-log.jsonl")


def lines(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def rescan(conn, root):
    """Forget what was read and import everything again: nothing may come in twice."""
    conn.execute("DELETE FROM ingest_state")
    return history.ingest_state_root(conn, str(root))


def test_silent_decisions_and_flips_reach_gstacks_question_log(state_root, conn):
    out = pacing.rank(conn, json.loads(json.dumps(REQUEST)), PROJECT).output
    silent = [d["id"] for d in out["silent_decisions"]]
    assert silent  # the request makes Silent Decisions
    got = lines(log_path(state_root))
    assert [
        (line["question_id"], line["source"], line["phase"], line["user_choice"]) for line in got
    ] == [(qid, "auto-decided", "eng", "defer") for qid in silent]
    for line in got:
        # gstack's own writer would accept each line as it is (its readers count them).
        assert questions.validate_event(line) == line
        assert line["session_id"] == "s1"
    # Marked as read: a pickup right after reads nothing.
    summary = history.ingest_state_root(conn, str(state_root))
    assert summary.imported == 0 and summary.skipped == 0

    # A flip is the user's answer: it follows as a line of its own.
    decision = decisions.find_decision(conn, silent[0], "s1", PROJECT)
    flipped = decisions.flip_choice(conn, decision, "add-tests")
    assert "warning" not in flipped
    last = lines(log_path(state_root))[-1]
    assert (last["question_id"], last["source"], last["user_choice"], last["phase"]) == (
        silent[0],
        "flip",
        "add-tests",
        "eng",
    )
    before = conn.execute("SELECT count(*) FROM question_log").fetchone()[0]
    assert history.ingest_state_root(conn, str(state_root)).imported == 0

    # Read again from byte 0 (a rewrite of the file would do this): every line is known.
    again = rescan(conn, state_root)
    assert (again.imported, again.skipped) == (0, 0)
    assert again.duplicate == len(silent) + 1
    assert conn.execute("SELECT count(*) FROM question_log").fetchone()[0] == before


def test_gstack_pacing_rank_mirrors_with_the_script(state_root, db_file):
    env = hp.env(GSTACK_PROJECT_SLUG=PROJECT)
    p = subprocess.run(
        [script("gstack-pacing-rank")],
        input=json.dumps(REQUEST),
        capture_output=True,
        text=True,
        env=env,
    )
    assert p.returncode == 0, p.stderr
    silent = json.loads(p.stdout)["silent_decisions"]
    got = lines(log_path(state_root))
    assert [line["question_id"] for line in got] == [d["id"] for d in silent]
    assert {line["source"] for line in got} == {"auto-decided"}


def test_mirror_off_writes_no_decision_lines(state_root, conn, monkeypatch):
    monkeypatch.setenv("PLANTUNE_MIRROR", "0")
    pacing.rank(conn, json.loads(json.dumps(REQUEST)), PROJECT)
    assert not os.path.exists(log_path(state_root))


def test_a_mirror_failure_is_a_note_and_the_decisions_stay(state_root, conn):
    os.makedirs(log_path(state_root))  # a folder where the file should be
    ranking = pacing.rank(conn, json.loads(json.dumps(REQUEST)), PROJECT)
    assert any("could not update" in n for n in ranking.notes), ranking.notes
    assert conn.execute("SELECT count(*) FROM question_log").fetchone()[0] == len(
        ranking.output["silent_decisions"]
    )


# ---------------------------------------------------------------------------
# guidance apply


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    return root


def _history(conn, slug, n=5):
    for i in range(n):
        rec = questions.validate_event(
            {
                "skill": "ship",
                "question_id": TWO_WAY,
                "question_summary": "Polish the voice?",
                "user_choice": "accept",
                "recommended": "accept",
                "session_id": f"s{i % 2}",
                "ts": f"2026-01-01T00:00:0{i}.000Z",
            }
        )
        assert questions.record_event(conn, rec, slug).status == "inserted"


def _apply(conn, project):
    lay = files.Layout(project)
    p = g.build_proposal(conn, lay)
    assert [i["preference"] for i in p["items"]] == ["never-ask"]
    apply.save_proposal(conn, p, os.path.join(lay.proposals_dir, f"{p['id']}.md"), lay)
    return apply.apply_proposal(conn, p["id"])


def test_guidance_apply_is_seen_by_gstacks_files(state_root, conn, project):
    slug = files.Layout(project).slug()
    _history(conn, slug)
    applied = _apply(conn, project)
    assert not applied.get("warning")
    prefs_path = os.path.join(str(state_root), "projects", slug, "question-preferences.json")
    with open(prefs_path) as f:
        assert json.load(f) == {TWO_WAY: "never-ask"}
    assert oct(os.stat(prefs_path).st_mode & 0o777) == "0o600"
    events = lines(os.path.join(str(state_root), "projects", slug, "question-events.jsonl"))
    assert [(e["event_type"], e["question_id"], e["preference"], e["source"]) for e in events] == [
        ("preference-set", TWO_WAY, "never-ask", "plan-tune")
    ]
    assert events[0]["proposal_id"] == applied["id"]

    # gstack's own check (here, the compat script reading through the database and the
    # files) answers from the applied preference.
    env = hp.env(GSTACK_PROJECT_SLUG=slug)
    check = subprocess.run(
        [script("gstack-question-preference"), "--check", TWO_WAY],
        capture_output=True,
        text=True,
        env=env,
    )
    assert check.stdout.splitlines()[0] == "AUTO_DECIDE", check.stdout + check.stderr

    # A later hand edit of the file (another id added) keeps the applied preference: the
    # file held it, so the pickup of the edit does not delete it.
    with open(prefs_path, "w") as f:
        json.dump({TWO_WAY: "never-ask", "qa-tier": "always-ask"}, f)
    read = subprocess.run(
        [script("gstack-question-preference"), "--read"], capture_output=True, text=True, env=env
    )
    assert json.loads(read.stdout) == {TWO_WAY: "never-ask", "qa-tier": "always-ask"}
    conn2 = sqlite3.connect(os.environ["PLANTUNE_DB"])
    assert dict(conn2.execute("SELECT question_id, preference FROM preferences")) == {
        TWO_WAY: "never-ask",
        "qa-tier": "always-ask",
    }
    conn2.close()

    # The events line is the database's own event: a rescan adds nothing.
    n = conn.execute("SELECT count(*) FROM preference_events").fetchone()[0]
    again = rescan(conn, state_root)
    assert again.skipped == 0
    assert conn.execute("SELECT count(*) FROM preference_events").fetchone()[0] == n


def test_guidance_apply_keeps_a_hand_edit_made_just_before(state_root, conn, project):
    # The file was edited (always-ask for the same id) after the proposal was made: the
    # apply picks it up, sees the preference moved, and fails closed instead of overwriting.
    slug = files.Layout(project).slug()
    _history(conn, slug)
    lay = files.Layout(project)
    p = g.build_proposal(conn, lay)
    apply.save_proposal(conn, p, os.path.join(lay.proposals_dir, f"{p['id']}.md"), lay)
    prefs_path = os.path.join(str(state_root), "projects", slug, "question-preferences.json")
    os.makedirs(os.path.dirname(prefs_path), exist_ok=True)
    with open(prefs_path, "w") as f:
        json.dump({TWO_WAY: "always-ask"}, f)
    with pytest.raises(files.GuidanceError, match="changed after proposal"):
        apply.apply_proposal(conn, p["id"])
    with open(prefs_path) as f:
        assert json.load(f) == {TWO_WAY: "always-ask"}
    # Nothing was applied (the pickup went with the refusal); the next pickup has the edit.
    assert pickup.pickup(conn, slug) is None
    assert dict(conn.execute("SELECT question_id, preference FROM preferences")) == {
        TWO_WAY: "always-ask"
    }
