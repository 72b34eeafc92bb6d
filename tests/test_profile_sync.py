"""gstack's profile files as shared state: pick-up before answering, legacy migration, mirror."""

import json
import os
import subprocess

import pytest

from tests.helpers import script
from tests.helpers.profile import PROJECT, dev, read_lines
from toolkit.core import jscompat, profile
from toolkit.gstack import profile_sync
from toolkit.store import db


@pytest.fixture(autouse=True)
def project_slug(monkeypatch):
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", PROJECT)


GSTACK_PROFILE = {
    "identity": {"email": "dev@example.com"},
    "declared": {"scope_appetite": 0.9, "autonomy": 0.3},
    "inferred": {"values": {"scope_appetite": 0.1}, "sample_size": 99, "diversity": {}},
    "gap": {},
    "overrides": {"note": "kept"},
    "sessions": [
        {"date": "2026-01-01", "mode": "builder", "project_slug": "x", "signals": ["taste"]},
        {"date": "2026-01-01", "mode": "builder", "project_slug": "x", "signals": ["taste"]},
        {"date": "2026-01-05", "mode": "startup", "project_slug": "y", "signals": ["agency"]},
    ],
    "signals_accumulated": {"taste": 2, "agency": 1},
    "resources_shown": [],
    "topics": [],
    "migrated_at": "2026-01-01T00:00:00.000Z",
    "schema_version": 1,
    "future_field": [1, 2],
}


def write_profile(root, doc):
    (root / "developer-profile.json").write_text(json.dumps(doc, indent=2))


def file_doc(root):
    return json.loads((root / "developer-profile.json").read_text())


def test_existing_gstack_profile_is_adopted_not_overwritten(state_root, conn):
    write_profile(state_root, GSTACK_PROFILE)
    for _ in range(3):  # repeated calls must not duplicate the identical sessions
        lines = read_lines(dev("--read").stdout)
        assert lines["SESSION_COUNT"] == "3" and lines["ACCUMULATED_SIGNALS"] == "taste:2,agency:1"
    doc = file_doc(state_root)
    assert doc["sessions"] == GSTACK_PROFILE["sessions"]
    assert doc["declared"] == {"scope_appetite": 0.9, "autonomy": 0.3}
    assert doc["identity"] == {"email": "dev@example.com"}
    assert doc["overrides"] == {"note": "kept"} and doc["future_field"] == [1, 2]
    assert doc["migrated_at"] == "2026-01-01T00:00:00.000Z"
    # inferred comes from the question log, never from the file.
    assert (
        doc["inferred"]["sample_size"] == 0 and doc["inferred"]["values"]["scope_appetite"] == 0.5
    )
    assert list(doc)[-1] == "future_field"
    assert conn.execute("SELECT count(*) FROM office_hours_sessions").fetchone()[0] == 3


def test_declared_edited_in_the_file_is_picked_up_before_answering(state_root):
    dev("--read")
    doc = file_doc(state_root)
    doc["declared"] = {"risk_tolerance": 0.7}
    doc["declared_at"] = "2026-06-01T00:00:00.000Z"
    write_profile(state_root, doc)
    assert json.loads(dev("--gap").stdout)["declared"] == {"risk_tolerance": 0.7}
    doc = file_doc(state_root)
    doc["declared"] = {}  # the skill cleared it
    write_profile(state_root, doc)
    assert json.loads(dev("--gap").stdout)["declared"] == {}


def test_declared_values_from_the_file_are_clamped_or_ignored(state_root, conn):
    write_profile(
        state_root,
        {
            "declared": {"scope_appetite": 1.4, "autonomy": "high", "risk_tolerance": -0.2},
            "sessions": [],
        },
    )
    r = dev("--gap")
    assert json.loads(r.stdout)["declared"] == {"scope_appetite": 1, "risk_tolerance": 0}
    assert "declared.autonomy is not a number; ignored" in r.stderr


def test_builder_profile_that_appears_later_is_picked_up(state_root):
    dev("--log-session", json.dumps({"date": "2026-03-01", "mode": "builder", "project_slug": "a"}))
    (state_root / "builder-profile.jsonl").write_text(
        json.dumps({"date": "2026-01-01", "mode": "startup", "project_slug": "old"}) + "\n"
    )
    lines = read_lines(dev("--read").stdout)
    assert lines["SESSION_COUNT"] == "2"
    assert lines["LAST_PROJECT"] == "old"  # appended after what was already there
    assert not (state_root / "builder-profile.jsonl").exists()
    assert len(file_doc(state_root)["sessions"]) == 2


def test_legacy_migration_finishes_after_a_crash_without_duplicates(state_root, conn, monkeypatch):
    legacy = state_root / "builder-profile.jsonl"
    legacy.write_text('{"date":"d","mode":"builder"}\n{"date":"d","mode":"builder"}\n')

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(profile_sync.os, "replace", boom)
    first = profile_sync.migrate_legacy(conn, str(state_root))
    assert first["added"] == 2 and first["archive"] is None and legacy.exists()
    monkeypatch.undo()
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", PROJECT)
    second = profile_sync.migrate_legacy(conn, str(state_root))
    assert second["added"] == 0 and second["archive"] and not legacy.exists()
    assert conn.execute("SELECT count(*) FROM office_hours_sessions").fetchone()[0] == 2
    # The same file restored by hand is recognised and not imported again.
    os.rename(second["archive"], legacy)
    third = profile_sync.migrate_legacy(conn, str(state_root))
    assert third["added"] == 0
    assert conn.execute("SELECT count(*) FROM office_hours_sessions").fetchone()[0] == 2


def test_unchanged_files_cost_no_write_lock(state_root, conn, monkeypatch):
    profile_sync.sync(conn, str(state_root), PROJECT)
    assert (state_root / "developer-profile.json").exists()

    def no_lock(conn):
        raise AssertionError("took the write lock although nothing changed")

    monkeypatch.setattr(profile_sync.db, "transaction", no_lock)
    assert profile_sync.sync(conn, str(state_root), PROJECT) is None


def test_mirror_off_writes_no_file(state_root, conn):
    env = {"PLANTUNE_MIRROR": "0"}
    assert dev("--read", env=env).returncode == 0
    dev("--log-session", json.dumps({"date": "2026-03-01", "mode": "builder"}), env=env)
    assert dev("--derive", env=env).returncode == 0
    assert not (state_root / "developer-profile.json").exists()
    assert read_lines(dev("--read", env=env).stdout)["SESSION_COUNT"] == "1"


def test_mirror_failure_still_succeeds_and_says_so(state_root, conn):
    (state_root / "developer-profile.json").mkdir()  # rename onto a folder fails
    r = dev(
        "--log-session", json.dumps({"date": "2026-03-01", "mode": "builder", "project_slug": "z"})
    )
    assert r.returncode == 0
    assert "could not update developer-profile.json" in r.stderr
    assert "the database has the change" in r.stderr
    assert "Traceback" not in r.stderr
    assert read_lines(dev("--read").stdout)["LAST_PROJECT"] == "z"


def test_corrupt_profile_file_is_rewritten_from_the_database(state_root):
    dev("--log-session", json.dumps({"date": "2026-03-01", "mode": "builder"}))
    (state_root / "developer-profile.json").write_text("{ not json")
    r = dev("--read")
    assert "developer-profile.json is not valid JSON" in r.stderr
    assert read_lines(r.stdout)["SESSION_COUNT"] == "1"
    assert len(file_doc(state_root)["sessions"]) == 1


def test_concurrent_derives_and_session_writes(state_root, conn):
    procs = []
    for i in range(6):
        args = (
            ["--derive"]
            if i % 2
            else ["--log-session", json.dumps({"date": "2026-03-01", "mode": "builder", "n": i})]
        )
        procs.append(
            subprocess.Popen(
                [script("gstack-developer-profile"), *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    results = [p.communicate(timeout=60) + (p.returncode,) for p in procs]
    assert all(code == 0 for _, _, code in results), results
    assert all(err == "" for _, err, _ in results), results
    doc = file_doc(state_root)
    assert sorted(s["n"] for s in doc["sessions"]) == [0, 2, 4]
    assert conn.execute("SELECT count(*) FROM office_hours_sessions").fetchone()[0] == 3


def test_identical_log_sessions_are_both_kept(conn):
    entry = {"date": "2026-03-01", "mode": "builder", "ts": "2026-03-01T00:00:00Z"}
    with db.transaction(conn):
        assert profile.add_sessions(conn, [entry], origin="t") == 1
        assert profile.add_sessions(conn, [entry], origin="t") == 1
        # ...while the same ordered list seen as a snapshot adds nothing.
        assert profile.add_sessions(conn, [entry, entry], origin="t", snapshot=True) == 0
    assert len(profile.sessions(conn)) == 2


def test_js_formatting_helpers():
    assert [
        jscompat.number_string_exact_ints(x) for x in (1.0, 0.5, -0.01, 1e-7, 1e21, 123456789.0, 5)
    ] == ["1", "0.5", "-0.01", "1e-7", "1e+21", "123456789", "5"]
    assert jscompat.in_property_order({"b": 1, "10": 2, "a": 3, "2": 4}) == {
        "2": 4,
        "10": 2,
        "b": 1,
        "a": 3,
    }
    assert list(jscompat.in_property_order({"b": 1, "10": 2, "a": 3, "2": 4})) == [
        "2",
        "10",
        "b",
        "a",
    ]
    assert jscompat.stringify_indented({"x": 1.0, "y": []}) == '{\n  "x": 1,\n  "y": []\n}'
