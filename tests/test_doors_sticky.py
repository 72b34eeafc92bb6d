"""One-way is sticky and ids are canonical, for every caller: check, the pre-tool-use hook,
pacing, guidance, preferences, registry sync, and the one_way_audit view / doors audit."""

import json

import pytest
from click.testing import CliRunner

from tests.helpers.hooks import make_repo, payload, question
from tests.helpers.hotpath import SLUG, plant, pref, run
from toolkit.claude import hooks
from toolkit.cli.app import cli
from toolkit.core import audit as audits
from toolkit.core import door_checks, doors, preferences, questions, seeded_db
from toolkit.guidance import proposals as guidance
from toolkit.pacing import rank as pacing
from toolkit.store import db, paths

VARIANTS = [
    "land-and-deploy-rollback",
    "LAND-AND-DEPLOY-ROLLBACK",
    " land-and-deploy-rollback ",
    "land_and_deploy_rollback",
    "Land_And-Deploy_ROLLBACK\t",
]


def invoke(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def record(conn, project="proj", **fields):
    rec = {
        "skill": "ship",
        "question_id": "adhoc-thing",
        "question_summary": "Tidy the notes?",
        "user_choice": "yes",
    }
    rec.update(fields)
    rec = questions.validate_event(rec, allow_phase=True)
    if "source" in fields:
        rec["source"] = fields["source"]
    return questions.record_event(conn, rec, project)


def audit_ids(conn):
    return [r["id"] for r in audits.audit(conn)]


def fnd(fid, summary="Roll back the deploy?", **kw):
    f = {
        "id": fid,
        "summary": summary,
        "severity": 0,
        "irreversibility": 0,
        "decision_matters": 0,
        "door_type": "two-way",
        "recommended": "yes",
        "options": ["yes", "no"],
    }
    f.update(kw)
    return f


# --- pacing: every id variant surfaces as one-way ---------------------------------------------


@pytest.mark.parametrize("fid", VARIANTS[1:4])
@pytest.mark.parametrize("summary", ["Roll back the deploy?", "Tidy up the wording?"])
def test_pacing_id_variants_surface_one_way(conn, fid, summary):
    out = pacing.rank(
        conn, {"session_id": "s1", "phase": "eng", "findings": [fnd(fid, summary)]}, "proj"
    ).output
    assert [s["id"] for s in out["surface"]] == [fid]
    assert out["surface"][0]["reason"] == "one-way"
    assert out["silent_decisions"] == []
    assert audits.audit(conn) == []


def test_pacing_reads_the_whole_summary(conn):
    padded = "Some context about the layout. " * 40 + "drop table users"
    assert len(padded) > 1200
    out = pacing.rank(
        conn, {"session_id": "s1", "phase": "eng", "findings": [fnd("eng-cleanup", padded)]}, "proj"
    ).output
    assert out["surface"][0]["reason"] == "one-way"
    assert out["surface"][0]["door_reason"] == "keyword:sql-destructive"


def test_a_one_way_finding_makes_the_question_one_way_everywhere(conn):
    pacing.rank(
        conn,
        {
            "session_id": "s1",
            "phase": "eng",
            "findings": [fnd("eng-ledger", "Tidy up?", door_type="one-way")],
        },
        "proj",
    )
    verdict = door_checks.door_for(conn, "ENG_LEDGER")
    assert verdict == doors.Classification(True, "recorded:finding")
    # later, in another session, the same finding sent as two-way still surfaces
    out = pacing.rank(
        conn,
        {"session_id": "s2", "phase": "eng", "findings": [fnd("eng-ledger", "Tidy up?")]},
        "proj",
    ).output
    assert out["surface"][0]["door_reason"] == "recorded:finding"


# --- check: logged one-way, canonical registry, unreadable stdin ---------------------------------


def test_a_logged_one_way_door_is_respected_by_check(state_root):
    conn = seeded_db.connect(str(state_root / "plantune.db"))
    record(conn, project=SLUG, question_id="adhoc-thing", door_type="one-way")
    conn.close()
    plant(state_root, {"adhoc-thing": "never-ask"})
    p = pref("--check", "adhoc-thing")
    assert p.stdout.splitlines() == [
        "ASK_NORMALLY",
        "NOTE: one-way door overrides your never-ask preference for safety.",
    ]
    p = run("plantune", "check", "ADHOC_THING", "--json")
    assert json.loads(p.stdout)["door_reason"] == "recorded:logged"


def test_check_canonical_ids_of_a_registered_one_way_question(state_root):
    for variant in VARIANTS[1:]:
        p = run("plantune", "check", variant, "--json")
        data = json.loads(p.stdout)
        assert (data["door_type"], data["door_reason"]) == ("one-way", "registry"), variant


def test_check_with_unreadable_stdin_is_one_way(state_root):
    plant(state_root, {"adhoc-thing": "never-ask"})
    p = run(
        "plantune",
        "check",
        "adhoc-thing",
        "--summary-stdin",
        "--json",
        input=b"rename \xff\xfe the helper",
    )
    data = json.loads(p.stdout)
    assert (data["decision"], data["door_reason"]) == ("ASK_NORMALLY", "unreadable")


def test_check_json_names_the_rule(state_root):
    p = run(
        "plantune",
        "check",
        "adhoc-thing",
        "--summary-stdin",
        "--json",
        input="Make the S3 bucket public?",
    )
    data = json.loads(p.stdout)
    assert data["door_reason"] == "keyword:security-posture"
    assert data["matched"] == "security-posture"


# --- preferences -------------------------------------------------------------------------------


def test_never_ask_refused_on_a_question_logged_one_way(conn):
    record(conn, question_id="adhoc-ledger", door_type="one-way")
    with pytest.raises(preferences.PreferenceError) as e:
        preferences.validate_write(
            conn, {"question_id": "adhoc-ledger", "preference": "never-ask", "source": "plan-tune"}
        )
    assert "cannot set never-ask on one-way question" in e.value.message


def test_stats_count_never_ask_on_a_recorded_one_way_as_inert(conn):
    record(conn, question_id="adhoc-ledger", question_summary="Purge the ledger table?")
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
            " VALUES ('proj', 'adhoc-ledger', 'never-ask', 'plan-tune', 'x')"
        )
    assert preferences.stats(conn, "proj")["INERT_ONE_WAY"] == 1


# --- the pre-tool-use hook -----------------------------------------------------------------------


def _hook_setup(tmp_path, conn, qid, text):
    repo = make_repo(tmp_path)
    slug = paths.resolve_slug(cwd=str(repo))
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
            " VALUES (?, ?, 'never-ask', 'plan-tune', 'x')",
            (slug, qid),
        )
    q = question(f"<gstack-qid:{qid}> {text}", ["Yes (recommended)", "No"])
    return payload([q], cwd=repo, event="PreToolUse"), slug


def test_the_hook_respects_a_logged_one_way_door(tmp_path, conn, db_file):
    data, slug = _hook_setup(tmp_path, conn, "adhoc-ledger", "Tidy up the notes?")
    assert hooks.pre_tool_use(data, db_path=db_file) is not None  # two-way: auto-decided
    record(conn, project=slug, question_id="adhoc-ledger", door_type="one-way")
    data["tool_use_id"] = "tu-2"
    assert hooks.pre_tool_use(data, db_path=db_file) is None  # now asked


def test_the_hook_reads_marker_ids_canonically(tmp_path, conn, db_file):
    data, _ = _hook_setup(tmp_path, conn, "LAND-AND-DEPLOY-ROLLBACK", "Tidy up the notes?")
    assert hooks.pre_tool_use(data, db_path=db_file) is None


def test_the_hook_reads_the_question_text(tmp_path, conn, db_file):
    data, _ = _hook_setup(tmp_path, conn, "ship-changelog-voice-polish", "Force-push to main?")
    assert hooks.pre_tool_use(data, db_path=db_file) is None


# --- guidance ----------------------------------------------------------------------------------


def test_guidance_unsafe_ids_use_every_source(conn):
    record(conn, question_id="adhoc-ledger", door_type="one-way")
    record(conn, question_id="adhoc-notes")
    unsafe = guidance.unsafe_ids(conn, ["ADHOC_LEDGER", "land_and_deploy_rollback", "adhoc-notes"])
    assert unsafe == {"ADHOC_LEDGER", "land_and_deploy_rollback"}


# --- registry sync floor ------------------------------------------------------------------------


def _one_entry(tmp_path, door="two-way", qid="land-and-deploy-rollback"):
    path = tmp_path / "one-entry.json"
    path.write_text(
        json.dumps(
            [
                {
                    "id": qid,
                    "skill": "land-and-deploy",
                    "category": "approval",
                    "door_type": door,
                    "options": ["yes", "no"],
                    "description": "Roll back?",
                }
            ]
        )
    )
    return str(path)


def test_registry_sync_that_drops_one_way_ids_is_refused(tmp_path, conn, db_file):
    registry = "SELECT * FROM registry_questions ORDER BY id"
    before = [tuple(r) for r in conn.execute(registry)]
    r = invoke("registry", "sync", _one_entry(tmp_path), "--db", db_file)
    assert r.exit_code == 1
    assert "registry refused: 12 one-way questions would be dropped or downgraded" in r.output
    assert "land-and-deploy-rollback: one-way question would be made two-way" in r.output
    assert "ship-test-failure-triage: one-way question would be removed" in r.output
    assert [tuple(r) for r in conn.execute(registry)] == before
    # and the safety that rests on it still holds
    r = invoke(
        "pref",
        "set",
        "land-and-deploy-rollback",
        "never-ask",
        "--source",
        "plan-tune",
        "--db",
        db_file,
    )
    assert r.exit_code == 1
    r = invoke("check", "land-and-deploy-rollback", "--db", db_file)
    assert r.output.splitlines()[0] == "ASK_NORMALLY"


def test_registry_sync_dry_run_refuses_too(tmp_path, db_file):
    r = invoke("registry", "sync", _one_entry(tmp_path), "--dry-run", "--db", db_file)
    assert r.exit_code == 1


def test_allow_downgrade_names_each_id_and_is_recorded(tmp_path, conn, db_file):
    floor = sorted(doors.bundled_one_way_ids())
    partial = ["--allow-downgrade", floor[0]]
    r = invoke("registry", "sync", _one_entry(tmp_path), *partial, "--db", db_file)
    assert r.exit_code == 1  # the other eleven are still refused
    args = [a for qid in floor for a in ("--allow-downgrade", qid.upper().replace("-", "_"))]
    r = invoke("registry", "sync", _one_entry(tmp_path), *args, "--db", db_file)
    assert r.exit_code == 0, r.output
    rows = conn.execute(
        "SELECT question_id, from_door, to_door FROM registry_downgrades ORDER BY question_id"
    ).fetchall()
    assert [tuple(x) for x in rows] == [
        (q, "one-way", "two-way" if q == "land-and-deploy-rollback" else None) for q in floor
    ]


def test_a_synced_one_way_entry_joins_the_floor(tmp_path, conn, db_file):
    path = tmp_path / "reg.json"
    entries = [dict(e, description=f"About {e['id']}.") for e in doors.load_bundled_registry()]
    entries.append(
        {
            "id": "ship-wipe-cache",
            "skill": "ship",
            "category": "approval",
            "door_type": "one-way",
            "options": ["yes", "no"],
            "description": "Wipe?",
        }
    )
    path.write_text(json.dumps(entries))
    assert invoke("registry", "sync", str(path), "--db", db_file).exit_code == 0
    path.write_text(json.dumps(entries[:-1]))
    r = invoke("registry", "sync", str(path), "--db", db_file)
    assert r.exit_code == 1 and "ship-wipe-cache" in r.output


# --- the audit ----------------------------------------------------------------------------------


def test_audit_catches_a_late_one_way(conn, db_file):
    record(conn, question_id="adhoc-ledger", source="auto-decided")
    assert audit_ids(conn) == []
    assert invoke("doors", "audit", "--db", db_file).exit_code == 0
    # later, another writer logs the same question (other spelling) as one-way
    rec = questions.validate_event(
        {
            "skill": "ship",
            "question_id": "adhoc-ledger",
            "question_summary": "Tidy?",
            "user_choice": "no",
            "door_type": "one-way",
        }
    )
    rec["question_id"] = "ADHOC_LEDGER"
    questions.record_event(conn, rec, "proj")
    (row,) = audits.audit(conn)
    assert row["question_id"] == "adhoc-ledger" and row["flagged_by"] == "recorded-logged"
    r = invoke("doors", "audit", "--db", db_file)
    assert r.exit_code == 1 and "adhoc-ledger" in r.output


def test_audit_catches_a_late_pacing_finding_and_names_the_path(conn):
    record(conn, question_id="eng-ledger", source="auto-decided", tool_use_id="tu-9")
    pacing.rank(
        conn,
        {
            "session_id": "s1",
            "phase": "eng",
            "findings": [fnd("eng-ledger", "Tidy up?", door_type="one-way")],
        },
        "proj",
    )
    (row,) = audits.audit(conn)
    assert (row["decided_by"], row["flagged_by"]) == ("hook", "recorded-finding")


def test_audit_sees_registry_ids_in_any_spelling(conn):
    rec = questions.validate_event(
        {
            "skill": "ship",
            "question_id": "land-and-deploy-rollback",
            "question_summary": "Tidy?",
            "user_choice": "yes",
        }
    )
    rec["question_id"] = "LAND_AND_DEPLOY_ROLLBACK"  # as a foreign writer might store it
    rec["source"] = "auto-decided"
    questions.record_event(conn, rec, "proj", registry={})
    (row,) = audits.audit(conn)
    assert row["flagged_by"].startswith("registry")


def test_audit_reads_recorded_summaries_again(conn, db_file):
    record(
        conn,
        question_id="adhoc-old",
        source="auto-decided",
        question_summary="Make the S3 bucket public?",
    )
    # as a row written under older rules would be
    with db.transaction(conn):
        conn.execute(
            "UPDATE question_log SET door_class = 'two-way', door_reason = 'default-two-way'"
        )
        conn.execute("DELETE FROM door_knowledge")
    assert audit_ids(conn) == []
    assert audits.reclassify(conn) == 1
    assert audits.reclassify(conn) == 0  # incremental
    assert [r["flagged_by"] for r in audits.audit(conn)] == ["recorded-classifier"]
    r = invoke("doors", "audit", "--db", db_file, "--json")
    assert r.exit_code == 1 and json.loads(r.output)["count"] == 1


def test_synthetic_rows_teach_nothing(conn):
    rec = questions.validate_event(
        {
            "skill": "ship",
            "question_id": "adhoc-sim",
            "question_summary": "Drop the users table?",
            "user_choice": "yes",
            "door_type": "one-way",
        }
    )
    questions.record_event(conn, rec, "proj", synthetic=True)
    assert doors.known_one_way(conn, "adhoc-sim") is None


def test_migration_backfills_facts_from_older_rows(tmp_path):
    mig = tmp_path / "migrations"
    mig.mkdir()
    for name, path in db.default_schema().migrations:
        if name < "0009":
            (mig / name).write_text(open(path, encoding="utf-8").read())
    path = str(tmp_path / "old.db")
    (tmp_path / "no-views").mkdir()
    conn = seeded_db.connect(
        path, schema=db.Schema(migrations_dir=str(mig), views_dir=str(tmp_path / "no-views"))
    )
    with db.transaction(conn):  # a row as plantune wrote it before 0009
        conn.execute(
            "INSERT INTO question_log (event_key, project, ts, skill, question_id,"
            " question_summary, user_choice, source, door_type, raw_json, recorded_at)"
            " VALUES ('k1', 'proj', 't', 'ship', 'adhoc-old', 'Tidy?', 'yes', 'agent',"
            " 'one-way', '{}', 't')"
        )
    conn.close()
    conn = seeded_db.connect(path)
    assert doors.known_one_way(conn, "ADHOC_OLD") == "logged"


# --- doors explain ---------------------------------------------------------------------------


def test_doors_explain_text_and_json(db_file):
    r = invoke("doors", "explain", "Dr\u200bop the users table?")
    assert r.exit_code == 0
    assert r.output.splitlines() == [
        "decision:   one-way",
        "reason:     keyword:sql-destructive",
        "rule:       sql-destructive (en)",
        "normalised: drop the users table?",
    ]
    r = invoke(
        "doors",
        "explain",
        "-",
        "--id",
        "Land_And_Deploy_Rollback",
        "--json",
        "--db",
        db_file,
        input="rename the helper",
    )
    data = json.loads(r.output)
    assert (data["door"], data["question_door"], data["question_reason"], data["canonical_id"]) == (
        "two-way",
        "one-way",
        "registry",
        "land-and-deploy-rollback",
    )


def test_doors_explain_unreadable_stdin():
    r = CliRunner().invoke(cli, ["doors", "explain", "-", "--json"], input=b"\xff\xfe")
    assert json.loads(r.output)["reason"] == "unreadable"
