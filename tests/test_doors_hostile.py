"""Promise 2 under attack in the layers that decide on top of the door classifier: the
pre-tool-use hook, ``--check``, pacing, guidance, hand-written preferences and the order in
which facts arrive. Each test is an attack; none may end in an auto-decision (or a Silent
Decision) of a one-way door."""

import io
import json
import sys

import pytest

from tests.helpers.hooks import make_repo, payload, question
from toolkit.claude import hooks
from toolkit.core import audit as audits
from toolkit.core import door_checks, preferences, questions
from toolkit.gstack import compat
from toolkit.pacing import rank as pacing
from toolkit.store import db, paths

ONE_WAY_NOTE = "NOTE: one-way door overrides your never-ask preference for safety."
DROP = "Drop the users table in production"
CALM = "Tidy up the wording of the notes?"


def _pref(conn, scope, qid, value="never-ask"):
    known = value in preferences.PREFERENCES
    with db.transaction(conn):
        conn.execute(
            "INSERT OR REPLACE INTO preferences (scope, question_id, preference, raw_value,"
            " source, updated_at) VALUES (?, ?, ?, ?, 'plan-tune', 'x')",
            (scope, qid, value if known else "unknown", None if known else value),
        )


def _record(conn, project="proj", **fields):
    rec = {
        "skill": "ship",
        "question_id": "adhoc-thing",
        "question_summary": CALM,
        "user_choice": "yes",
    }
    rec.update(fields)
    rec = questions.validate_event(rec, allow_phase=True)
    return questions.record_event(conn, rec, project)


def _check(monkeypatch, capsys, *argv, stdin=b""):
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", "proj")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = compat.question_preference_main(["--check", *argv])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out.splitlines()


# --- the pre-tool-use hook ------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path)


def _slug(repo):
    return paths.resolve_slug(cwd=str(repo))


def _pre(repo, db_file, qs, tool_use_id="tu-1"):
    data = payload(qs, cwd=repo, event="PreToolUse", tool_use_id=tool_use_id)
    return hooks.pre_tool_use(data, db_path=db_file)


def _calm(qid, text=CALM, labels=("Yes (Recommended)", "No"), **extra):
    return question(f"{text} <gstack-qid:{qid}>", list(labels), **extra)


def test_the_hook_decides_a_calm_call_so_the_attacks_below_mean_something(repo, conn, db_file):
    _pref(conn, _slug(repo), "adhoc-notes")
    assert "auto-decide" in _pre(repo, db_file, [_calm("adhoc-notes")])


def test_a_second_marker_naming_a_one_way_id_is_not_auto_decided(repo, conn, db_file):
    # The first marker names a harmless id with never-ask; the second names the registry's
    # one-way investigate-fix-apply. Which question is it? Not one to decide for the user.
    _pref(conn, _slug(repo), "adhoc-notes")
    q = question(
        f"{CALM} <gstack-qid:adhoc-notes> <gstack-qid:investigate-fix-apply>", ["Yes (Recommended)"]
    )
    assert _pre(repo, db_file, [q]) is None


def test_danger_in_the_fourth_question_of_a_call_stops_the_whole_call(repo, conn, db_file):
    slug = _slug(repo)
    ids = ["adhoc-a", "adhoc-b", "adhoc-c", "adhoc-d"]
    for qid in ids:
        _pref(conn, slug, qid)
    qs = [_calm(qid) for qid in ids]
    qs[3]["options"][1]["description"] = "drops the users table in production"
    assert _pre(repo, db_file, qs) is None


def test_a_multi_select_question_with_one_destructive_option_is_asked(repo, conn, db_file):
    _pref(conn, _slug(repo), "adhoc-notes")
    q = _calm("adhoc-notes", labels=("Fix typos (Recommended)", DROP, "Reflow"), multiSelect=True)
    assert _pre(repo, db_file, [q]) is None


def test_danger_only_in_the_recommendation_is_asked(repo, conn, db_file):
    _pref(conn, _slug(repo), "adhoc-notes")
    q = _calm("adhoc-notes", text=f"Which cleanup now? Recommendation: {DROP}.")
    assert _pre(repo, db_file, [q]) is None


@pytest.mark.parametrize(
    "value", ["Never-Ask", " never-ask ", "NEVER-ASK", "never\u2010ask", "never_ask", "nevеr-ask"]
)
def test_a_hand_written_preference_value_that_is_not_exact_never_decides(
    repo, conn, db_file, value
):
    _pref(conn, _slug(repo), "adhoc-notes", value)
    assert _pre(repo, db_file, [_calm("adhoc-notes")]) is None


def test_a_never_ask_written_before_the_question_was_seen_asks_a_dangerous_text(
    repo, conn, db_file
):
    _pref(conn, _slug(repo), "adhoc-later")
    assert _pre(repo, db_file, [_calm("adhoc-later", text=f"{DROP}?")]) is None


def test_a_question_logged_harmless_then_asked_dangerous_under_its_id_is_asked(repo, conn, db_file):
    slug = _slug(repo)
    _pref(conn, slug, "adhoc-notes")
    _record(conn, project=slug, question_id="adhoc-notes")
    assert "auto-decide" in _pre(repo, db_file, [_calm("adhoc-notes")])
    assert _pre(repo, db_file, [_calm("adhoc-notes", text=f"{DROP}?")], "tu-2") is None


# --- --check ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        {"question": CALM, "summary": f"{DROP}?"},
        {"question": CALM, "recommendation": "Keep it", "recommended": DROP},
        {"question": CALM, "options": [{"label": "Go", "preview": f"{DROP}"}]},
        {"question": CALM, "options": [{"label": "Go", "description": [DROP]}]},
        {"question_summary": CALM, "question": f"{DROP}?"},
        {"question": CALM, "multiSelect": True, "options": ["Skip", {"label": DROP}]},
    ],
    ids=[
        "summary-key",
        "both-recommendations",
        "preview",
        "list-description",
        "two-texts",
        "multi",
    ],
)
def test_check_reads_every_text_of_a_json_question(conn, monkeypatch, capsys, data):
    _pref(conn, "proj", "adhoc-cleanup")
    got = _check(
        monkeypatch, capsys, "adhoc-cleanup", "--question-stdin", stdin=json.dumps(data).encode()
    )
    assert got == ["ASK_NORMALLY", ONE_WAY_NOTE]


def test_check_reads_both_values_of_a_duplicated_key(conn, monkeypatch, capsys):
    _pref(conn, "proj", "adhoc-cleanup")
    data = f'{{"question": "{DROP}?", "question": "{CALM}"}}'.encode()
    got = _check(monkeypatch, capsys, "adhoc-cleanup", "--question-stdin", stdin=data)
    assert got == ["ASK_NORMALLY", ONE_WAY_NOTE]


def test_check_registry_two_way_with_a_one_way_text_asks(conn, monkeypatch, capsys):
    _pref(conn, "proj", "ship-changelog-voice-polish")
    stdin = f"{DROP}?".encode()
    got = _check(monkeypatch, capsys, "ship-changelog-voice-polish", "--summary-stdin", stdin=stdin)
    assert got == ["ASK_NORMALLY", ONE_WAY_NOTE]


def test_check_registry_one_way_with_a_calm_text_asks(conn, monkeypatch, capsys):
    _pref(conn, "proj", "investigate-fix-apply")
    got = _check(
        monkeypatch, capsys, "investigate-fix-apply", "--summary-stdin", stdin=CALM.encode()
    )
    assert got == ["ASK_NORMALLY", ONE_WAY_NOTE]


@pytest.mark.parametrize(
    "spelling",
    [
        "investigate\u200b-fix-apply",
        "ｉｎｖｅｓｔｉｇａｔｅ-fix-apply",
        "investigate-fix-apply...",
        "InvestigateFixApply",
        "investigаte-fix-apply",  # Cyrillic a
        "investigate\u2011fix\u2011apply",
    ],
)
def test_check_asks_every_spelling_of_a_one_way_id(conn, monkeypatch, capsys, spelling):
    _pref(conn, "proj", spelling)
    assert _check(monkeypatch, capsys, spelling, "--summary-stdin", stdin=CALM.encode()) == [
        "ASK_NORMALLY",
        ONE_WAY_NOTE,
    ]


def test_a_one_way_fact_survives_the_deletion_of_its_rows(conn, monkeypatch, capsys):
    _record(conn, question_id="adhoc-ledger", door_type="one-way")
    _pref(conn, "proj", "adhoc-ledger")
    with db.transaction(conn):
        conn.execute("DELETE FROM question_log WHERE question_id = 'adhoc-ledger'")
    assert _check(monkeypatch, capsys, "adhoc-ledger") == ["ASK_NORMALLY", ONE_WAY_NOTE]


# --- pacing -------------------------------------------------------------------------------


def _finding(fid, summary=CALM, **kw):
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


def _rank(conn, findings, session="s1", phase="eng", **extra):
    req = {"session_id": session, "phase": phase, "findings": findings}
    req.update(extra)
    return pacing.rank(conn, req, "proj").output


def test_a_flood_of_two_way_findings_does_not_push_a_one_way_one_out(conn):
    flood = [_finding(f"adhoc-calm-{i}", severity=2, decision_matters=2) for i in range(40)]
    out = _rank(conn, flood + [_finding("adhoc-last", f"{DROP}?")], budget=1)
    surfaced = [s["id"] for s in out["surface"]]
    assert "adhoc-last" in surfaced
    assert "adhoc-last" not in [s["id"] for s in out["silent_decisions"]]


def test_a_one_way_finding_never_spends_the_budget_or_the_chain(conn):
    out = _rank(conn, [_finding("adhoc-a", f"{DROP}?"), _finding("adhoc-b", severity=2)], budget=1)
    assert {s["id"] for s in out["surface"]} >= {"adhoc-a"}


def test_a_replayed_ranking_never_silences_a_question_one_way_since(conn):
    f = _finding("adhoc-ledger")
    first = _rank(conn, [f])
    assert [s["id"] for s in first["silent_decisions"]] == ["adhoc-ledger"]
    # The question is then logged one-way; the agent retries the same call.
    _record(conn, question_id="adhoc-ledger", door_type="one-way")
    again = _rank(conn, [f])
    assert [s["id"] for s in again["silent_decisions"]] == []
    assert [s["id"] for s in again["surface"]] == ["adhoc-ledger"]


def test_the_audit_sees_a_silent_decision_whose_question_turned_one_way(conn):
    _rank(conn, [_finding("adhoc-ledger")])
    _record(conn, question_id="adhoc-ledger", door_type="one-way")
    assert [r["id"] for r in audits.audit(conn)]


# --- guidance -----------------------------------------------------------------------------


def test_a_promotion_never_registers_an_id_whose_words_are_one_way_as_two_way(conn):
    # Registered as two-way, the id would lose the second look at its own words that keeps
    # `--check drop-users-table` with a never-ask asked.
    from toolkit.guidance import promote

    for project in ("p1", "p2", "p3"):
        _record(conn, project=project, question_id="drop-users-table")
    items = [i for i in promote.build(conn)["items"] if i["question_id"] == "drop-users-table"]
    assert [i["door_type"] for i in items] == ["one-way"]


def test_guidance_calls_an_id_whose_words_are_one_way_unsafe(conn):
    from toolkit.guidance import proposals

    _record(conn, question_id="drop-users-table")
    assert proposals.unsafe_ids(conn, ["drop-users-table", "adhoc-thing"]) == {"drop-users-table"}


def test_guidance_apply_refuses_a_never_ask_on_a_question_one_way_since_the_proposal(conn):
    from toolkit.guidance import proposals

    _record(conn, question_id="adhoc-ledger")
    assert proposals.unsafe_ids(conn, ["adhoc-ledger"]) == set()
    _record(conn, question_id="adhoc-ledger", question_summary=f"{DROP}?")
    assert proposals.unsafe_ids(conn, ["adhoc-ledger"]) == {"adhoc-ledger"}


# --- order: facts lost by a restore or a delete ----------------------------------------------


def test_a_one_way_fact_outlives_a_profile_delete(conn, monkeypatch, capsys):
    from toolkit.core import profile

    _record(conn, question_id="adhoc-ledger", door_type="one-way")
    _pref(conn, "proj", "adhoc-ledger")
    profile.delete(conn, "proj")
    assert conn.execute("SELECT count(*) FROM question_log").fetchone()[0] == 0
    assert _check(monkeypatch, capsys, "adhoc-ledger") == ["ASK_NORMALLY", ONE_WAY_NOTE]


def test_a_one_way_fact_outlives_a_restore_of_an_older_backup(
    conn, db_file, tmp_path, monkeypatch, capsys
):
    import sqlite3

    from click.testing import CliRunner

    from toolkit.cli.app import cli

    monkeypatch.setenv("PLANTUNE_MIRROR", "0")
    _pref(conn, "proj", "adhoc-ledger")
    backup = str(tmp_path / "older.db")
    with sqlite3.connect(db_file) as live, sqlite3.connect(backup) as copy:
        live.backup(copy)
    assert _check(monkeypatch, capsys, "adhoc-ledger") == ["AUTO_DECIDE"]
    _record(conn, question_id="adhoc-ledger", door_type="one-way")
    conn.close()
    r = CliRunner().invoke(cli, ["restore", backup, "--yes"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "Kept 1 one-way door facts" in r.output
    assert _check(monkeypatch, capsys, "adhoc-ledger") == ["ASK_NORMALLY", ONE_WAY_NOTE]
    # Its evidence named a row the restored database does not hold: marked as carried.
    with sqlite3.connect(db_file) as restored:
        rows = restored.execute("SELECT source, evidence FROM door_knowledge").fetchall()
    assert [(s, e.partition(":")[0]) for s, e in rows] == [("logged", "restored")]


# --- allows: only the user's, only readings, and only what was read --------------------------


def _cli(*args):
    from tests.helpers.team import invoke

    return invoke(list(args))


@pytest.mark.parametrize(
    "source", ["Plan-Tune", " plan-tune", "plan-tune ", "PLAN-TUNE", "plаn-tune"]
)
def test_an_allow_from_a_look_alike_source_is_refused(conn, source):
    r = _cli("doors", "allow", "adhoc-snapshot", "--source", source)
    assert r.exit_code == 2, r.output
    assert conn.execute("SELECT count(*) FROM door_allow_events").fetchone()[0] == 0


@pytest.mark.parametrize(
    "spelling", ["investigateFixApply", "INVESTIGATE_FIX_APPLY", "investigate--fix-apply."]
)
def test_a_spelling_of_a_registry_one_way_id_can_never_be_allowed(conn, spelling):
    r = _cli("doors", "allow", spelling, "--source", "plan-tune")
    assert r.exit_code == 1, r.output
    assert conn.execute("SELECT count(*) FROM door_allow_events").fetchone()[0] == 0


def test_a_logged_one_way_fact_cannot_be_allowed_under_another_spelling(conn, monkeypatch, capsys):
    _record(conn, question_id="adhoc-ledger", door_type="one-way")
    r = _cli("doors", "allow", "ADHOC_LEDGER", "--source", "plan-tune")
    assert r.exit_code == 1, r.output
    _pref(conn, "proj", "adhoc-ledger")
    assert _check(monkeypatch, capsys, "adhoc-ledger") == ["ASK_NORMALLY", ONE_WAY_NOTE]


def test_an_allow_of_one_spelling_does_not_open_a_new_dangerous_text(conn, monkeypatch, capsys):
    _record(conn, question_id="adhoc-snapshot", question_summary=f"{DROP}?")
    assert _cli("doors", "allow", "adhoc-snapshot", "--source", "plan-tune").exit_code == 0
    _pref(conn, "proj", "adhoc-snapshot")
    other = "Delete every customer record in the billing database?"
    got = _check(monkeypatch, capsys, "adhoc-snapshot", "--summary-stdin", stdin=other.encode())
    assert got == ["ASK_NORMALLY", ONE_WAY_NOTE]


# --- a teammate's database -------------------------------------------------------------------


def test_a_merged_teammate_s_one_way_fact_is_known_and_their_never_ask_is_not_in_force(
    tmp_path, monkeypatch, capsys
):
    from tests.helpers.team import ok

    mate = str(tmp_path / "mate.db")
    ok(["init", "--db", mate])
    event = {
        "skill": "ship",
        "question_id": "adhoc-ledger",
        "question_summary": CALM,
        "user_choice": "yes",
        "door_type": "one-way",
    }
    ok(
        ["pref", "set", "adhoc-ledger", "never-ask", "--source", "plan-tune", "--project", "proj"]
        + ["--db", mate],
        developer="mate@x.io",
    )  # set while the question was still two-way for them, then logged one-way
    ok(["log", json.dumps(event), "--project", "proj", "--db", mate], developer="mate@x.io")
    team = str(tmp_path / "team.db")
    ok(["merge", mate, "--db", team])
    monkeypatch.setenv("PLANTUNE_DB", team)
    from toolkit.core import seeded_db

    conn = seeded_db.connect(team)
    try:
        assert door_checks.door_for(conn, "adhoc-ledger").one_way
    finally:
        conn.close()
    assert _check(monkeypatch, capsys, "adhoc-ledger") == ["ASK_NORMALLY"]


# --- preferences written by hand into gstack's file --------------------------------------------

HAND_WRITTEN = [
    '\ufeff{"investigate-fix-apply": "never-ask", "adhoc-ledger": "never-ask"}',
    '{"investigate-fix-apply": "always-ask", "investigate-fix-apply": "never-ask",'
    ' "adhoc-ledger": "never-ask"}',
    '{"Investigate-Fix-Apply": "Never-Ask", "adhoc-ledger": " never-ask "}',
    '{"prefs": {"investigate-fix-apply": "never-ask"}, "adhoc-ledger": "never-ask"}',
    '{"investigate\u200b-fix-apply": "never-ask", "adhoc-ledger": "never-ask"}',
    '{"investigate-fix-apply": "ask-only-for-one-way", "adhoc-ledger": "ask-only-for-one-way"}',
]


@pytest.mark.parametrize("text", HAND_WRITTEN)
def test_a_hand_edited_preferences_file_never_decides_a_one_way_question(
    conn, state_root, monkeypatch, capsys, text
):
    folder = state_root / "projects" / "proj"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "question-preferences.json").write_text(text, encoding="utf-8")
    for qid in ("investigate-fix-apply", "Investigate-Fix-Apply", "investigate\u200b-fix-apply"):
        assert _check(monkeypatch, capsys, qid)[0] == "ASK_NORMALLY"
    drop = f"{DROP}?".encode()
    assert _check(monkeypatch, capsys, "adhoc-ledger", "--summary-stdin", stdin=drop)[0] == (
        "ASK_NORMALLY"
    )


def test_the_hand_edited_file_is_read_so_the_attacks_above_mean_something(
    conn, state_root, monkeypatch, capsys
):
    folder = state_root / "projects" / "proj"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "question-preferences.json").write_text(
        '{"adhoc-ledger": "never-ask"}', encoding="utf-8"
    )
    calm = CALM.encode()
    assert _check(monkeypatch, capsys, "adhoc-ledger", "--summary-stdin", stdin=calm) == [
        "AUTO_DECIDE"
    ]


# --- text it cannot read: logged once, it stays one-way until the user allows it ---------------

UNREADABLE = "هل أحذف جدول المستخدمين في الإنتاج؟"


@pytest.mark.parametrize("source", ["auto-decided", "hook", "agent"])
def test_an_unreadable_text_logged_by_anyone_is_still_asked(conn, monkeypatch, capsys, source):
    rec = {
        "skill": "ship",
        "user_choice": "yes",
        "question_id": "adhoc-arabic",
        "question_summary": UNREADABLE,
        "source": source,
    }
    questions.record_event(conn, questions.validate_event(rec, allow_phase=True), "proj")
    _pref(conn, "proj", "adhoc-arabic")
    got = _check(monkeypatch, capsys, "adhoc-arabic", "--summary-stdin", stdin=UNREADABLE.encode())
    assert got == ["ASK_NORMALLY", ONE_WAY_NOTE]


def test_a_spent_chain_budget_never_silences_a_later_one_way_finding(conn):
    first = _rank(
        conn, [_finding("adhoc-a", severity=2, decision_matters=2)], chain_id="c1", budget=1
    )
    assert first["budget"]["remaining"] == 0
    later = _rank(
        conn,
        [_finding("adhoc-b", f"{DROP}?"), _finding("adhoc-c", severity=2, decision_matters=2)],
        phase="design",
        chain_id="c1",
    )
    assert [s["id"] for s in later["surface"]] == ["adhoc-b"]
    assert [s["id"] for s in later["silent_decisions"]] == ["adhoc-c"]


# --- a never-ask that could never apply is refused with its reason ------------------------------


def test_a_never_ask_on_an_id_whose_words_read_one_way_is_refused_with_the_way_out(
    conn, monkeypatch, capsys
):
    monkeypatch.setenv("GSTACK_PROJECT_SLUG", "proj")
    write = {"question_id": "drop-users-table", "preference": "never-ask", "source": "plan-tune"}
    assert compat.question_preference_main(["--write", json.dumps(write)]) == 1
    err = capsys.readouterr().err
    assert err.startswith('gstack-question-preference: cannot set never-ask on one-way question "')
    assert "plantune doors allow drop-users-table --source plan-tune" in err
    assert conn.execute("SELECT count(*) FROM preferences").fetchone()[0] == 0
    # The user says the id's words are a false alarm: then it can be set, and it applies.
    assert _cli("doors", "allow", "drop-users-table", "--source", "plan-tune").exit_code == 0
    assert compat.question_preference_main(["--write", json.dumps(write)]) == 0
    capsys.readouterr()
    assert _check(monkeypatch, capsys, "drop-users-table") == ["AUTO_DECIDE"]


def test_an_allow_taken_back_after_the_backup_stays_taken_back_after_a_restore(
    conn, db_file, tmp_path, monkeypatch, capsys
):
    import sqlite3

    from click.testing import CliRunner

    from toolkit.cli.app import cli

    monkeypatch.setenv("PLANTUNE_MIRROR", "0")
    _record(conn, question_id="adhoc-snapshot", question_summary=f"{DROP}?")
    _pref(conn, "proj", "adhoc-snapshot")
    assert _cli("doors", "allow", "adhoc-snapshot", "--source", "plan-tune").exit_code == 0
    assert _check(monkeypatch, capsys, "adhoc-snapshot") == ["AUTO_DECIDE"]
    backup = str(tmp_path / "older.db")
    with sqlite3.connect(db_file) as live, sqlite3.connect(backup) as copy:
        live.backup(copy)
    assert _cli("doors", "allow", "--undo", "adhoc-snapshot").exit_code == 0
    conn.close()
    r = CliRunner().invoke(cli, ["restore", backup, "--yes"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert _check(monkeypatch, capsys, "adhoc-snapshot") == ["ASK_NORMALLY", ONE_WAY_NOTE]
    with sqlite3.connect(db_file) as restored:
        last = restored.execute(
            "SELECT action, source FROM door_allow_events ORDER BY id DESC LIMIT 1"
        ).fetchone()
    assert last == ("undo", "restore")


def test_stats_count_a_hand_written_never_ask_on_one_way_id_words_as_inert(conn):
    _pref(conn, "proj", "drop-users-table")
    _pref(conn, "proj", "adhoc-notes")
    counts = preferences.stats(conn, "proj")
    assert (counts["NEVER_ASK"], counts["INERT_ONE_WAY"]) == (1, 1)


def test_a_text_too_long_to_read_in_time_is_one_way_unread():
    # A danger after a megabyte of filler is never read in time: the text is one-way
    # unread, so neither a check nor a hook can auto-decide it; just under the limit is read.
    from toolkit.core import doors

    filler = "context " * (doors.READ_LIMIT // 8 + 1)
    assert doors.classify(filler + "Drop the users table?") == ("one-way", "unreadable")
    assert doors.classify(filler) == ("one-way", "unreadable")
    assert doors.explain(filler)["reason"] == "unreadable"
    short = "context " * (doors.READ_LIMIT // 8 - 10)
    assert doors.classify(short) == ("two-way", "no-match")
    assert doors.classify(short + "Drop the users table?").door == "one-way"
