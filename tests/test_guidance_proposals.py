"""Guidance proposals: evidence rules, safety, apply and its fail-closed checks."""

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.guidance import (
    ONE_WAY,
    TWO_WAY,
    counts,
    file_sha,
    log,
    repeated,
    slug_of,
    write_local,
)
from toolkit.guidance import apply, files
from toolkit.guidance import proposals as g
from toolkit.store import db

TABLES = ("preferences", "preference_events", "guidance_proposals", "trace_runs")


def propose(conn, project, **kw):
    return g.build_proposal(conn, files.Layout(project), **kw)


def by_id(p):
    return {i["id"]: i for i in p["items"]}


def rejected(p, subject):
    return [r for r in p["rejected"] if r["subject"] == subject]


def save(conn, project, p):
    lay = files.Layout(project)
    apply.save_proposal(conn, p, os.path.join(lay.proposals_dir, f"{p['id']}.md"), lay)
    return p


# ---------------------------------------------------------------------------
# never-ask


def test_five_same_recommended_answers_in_two_sessions_propose_never_ask(conn, project):
    slug = slug_of(project)
    ids = repeated(conn, slug, n=5)
    p = propose(conn, project)
    item = by_id(p)[f"never-ask:{TWO_WAY}"]
    assert item["preference"] == "never-ask" and item["action"] == "add"
    assert item["evidence"]["question_events"] == ids
    assert item["evidence"]["sessions"] == ["s1", "s2"]
    assert item["future_behaviour"] and item["rejected_alternatives"]
    assert p["affected_question_ids"] == [TWO_WAY]


def test_four_answers_are_not_enough(conn, project):
    repeated(conn, slug_of(project), n=4)
    assert propose(conn, project)["items"] == []


def test_a_single_session_is_never_enough(conn, project):
    repeated(conn, slug_of(project), n=8, sessions=("only",))
    p = propose(conn, project)
    assert p["items"] == []
    assert "all in one session" in rejected(p, TWO_WAY)[0]["reason"]


def test_streak_counts_only_answers_since_the_last_different_one(conn, project):
    slug = slug_of(project)
    repeated(conn, slug, n=4)
    log(conn, slug, choice="skip", session="s3")
    repeated(conn, slug, n=4)
    assert f"never-ask:{TWO_WAY}" not in by_id(propose(conn, project))
    log(conn, slug, session="s4")
    assert f"never-ask:{TWO_WAY}" in by_id(propose(conn, project))


def test_repeated_non_recommended_answer_is_not_never_ask(conn, project):
    repeated(conn, slug_of(project), n=6, choice="skip", recommended="accept")
    p = propose(conn, project)
    assert f"never-ask:{TWO_WAY}" not in by_id(p)
    assert f"always-ask:{TWO_WAY}" in by_id(p)  # overriding the recommendation is evidence


@pytest.mark.parametrize("source", ["auto-decided", "codex-import-marker", "flip"])
def test_non_user_sources_are_not_evidence(conn, project, source):
    repeated(conn, slug_of(project), n=10, source=source)
    assert propose(conn, project)["items"] == []


def test_unknown_answers_and_synthetic_rows_are_not_evidence(conn, project):
    slug = slug_of(project)
    repeated(conn, slug, n=6, choice="__unknown__")
    assert propose(conn, project)["items"] == []
    repeated(conn, slug, n=6)
    conn.execute("UPDATE question_log SET synthetic = 1")
    assert propose(conn, project)["items"] == []


def test_transcript_import_answers_count(conn, project):
    repeated(conn, slug_of(project), n=5, source="transcript-import")
    assert f"never-ask:{TWO_WAY}" in by_id(propose(conn, project))


def test_registry_one_way_is_never_suppressed(conn, project):
    repeated(
        conn,
        slug_of(project),
        qid=ONE_WAY,
        n=12,
        sessions=("a", "b", "c"),
        summary="Fix the SQL injection?",
        choice="fix-now",
        recommended="fix-now",
    )
    p = propose(conn, project)
    assert p["items"] == []
    assert "one-way door" in rejected(p, ONE_WAY)[0]["reason"]


def test_keyword_one_way_summary_blocks_an_adhoc_id(conn, project):
    slug = slug_of(project)
    repeated(conn, slug, qid="adhoc-cleanup", n=6, summary="Tidy the notes?")
    log(conn, slug, qid="adhoc-cleanup", summary="Force-push the cleanup branch?")
    assert "never-ask:adhoc-cleanup" not in by_id(propose(conn, project))


def test_door_class_column_blocks_even_when_registry_says_two_way(conn, project):
    slug = slug_of(project)
    repeated(conn, slug, n=6)
    conn.execute("UPDATE question_log SET door_class = 'one-way' WHERE id = 1")
    assert propose(conn, project)["items"] == []
    conn.execute(
        "UPDATE question_log SET door_class = 'two-way', door_type = 'one-way' WHERE id = 1"
    )
    assert propose(conn, project)["items"] == []


def test_rows_without_door_class_are_classified_now(conn, project):
    slug = slug_of(project)
    repeated(conn, slug, qid="adhoc-cleanup", n=6, summary="Tidy the notes?")
    assert "never-ask:adhoc-cleanup" in by_id(propose(conn, project))
    # A foreign writer stored a destructive summary without plantune's classification.
    conn.execute(
        "UPDATE question_log SET door_class = NULL, question_summary = 'Wipe the"
        " staging bucket?' WHERE id = 1"
    )
    assert "never-ask:adhoc-cleanup" not in by_id(propose(conn, project))


def test_one_way_event_in_another_project_blocks_too(conn, project):
    repeated(conn, slug_of(project), n=6)
    log(conn, "elsewhere", door_type="one-way")
    assert propose(conn, project)["items"] == []


def test_split_chain_ids_are_not_proposed(conn, project):
    repeated(conn, slug_of(project), qid="plan-split-option-a", n=6)
    p = propose(conn, project)
    assert p["items"] == [] and "split-chain" in rejected(p, "plan-split-option-a")[0]["reason"]


def test_existing_explicit_preference_is_not_overridden(conn, project):
    slug = slug_of(project)
    repeated(conn, slug, n=6)
    conn.execute(
        "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
        " VALUES (?, ?, 'always-ask', 'inline-user', 't')",
        (slug, TWO_WAY),
    )
    p = propose(conn, project)
    assert f"never-ask:{TWO_WAY}" not in by_id(p)
    conn.execute("DELETE FROM preferences")
    conn.execute(
        "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
        " VALUES (?, ?, 'always-ask', 'plan-tune', 't')",
        (db.GLOBAL_SCOPE, TWO_WAY),
    )
    assert f"never-ask:{TWO_WAY}" not in by_id(propose(conn, project))


def test_other_projects_history_is_not_evidence(conn, project):
    repeated(conn, "another-project", n=10)
    assert propose(conn, project)["items"] == []


# ---------------------------------------------------------------------------
# always-ask, explicit preferences, artifact policy, removals


def test_overrides_across_sessions_propose_always_ask_as_an_edit(conn, project):
    slug = slug_of(project)
    ids = [log(conn, slug, choice="skip", session=s) for s in ("a", "b", "b")]
    log(conn, slug, session="c")
    conn.execute(
        "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
        " VALUES (?, ?, 'never-ask', 'inline-user', 't')",
        (slug, TWO_WAY),
    )
    item = by_id(propose(conn, project))[f"always-ask:{TWO_WAY}"]
    assert item["action"] == "edit" and item["previous_preference"] == "never-ask"
    assert item["evidence"]["question_events"] == ids


def test_overrides_below_half_are_rejected(conn, project):
    slug = slug_of(project)
    for s in ("a", "b", "c"):
        log(conn, slug, choice="skip", session=s)
    for s in ("a", "b", "c", "d"):
        log(conn, slug, qid=TWO_WAY, session=s, choice="accept")
    p = propose(conn, project)
    assert f"always-ask:{TWO_WAY}" not in by_id(p)
    assert "under 50%" in rejected(p, TWO_WAY)[0]["reason"]


def test_flipped_silent_findings_count_as_overrides(conn, project):
    slug = slug_of(project)
    for i, s in enumerate(("a", "b", "c")):
        conn.execute(
            "INSERT INTO findings (project, session_id, chain_id, phase, finding_id, severity,"
            " irreversibility, decision_matters, door_type, door_reason, score, threshold,"
            " disposition, flipped_at, created_at, updated_at) VALUES (?, ?, 'c', 'eng',"
            " 'eng-finding-cache', 1, 0, 1, 'two-way', 'default', 0.2, 0.5, 'silent', 't', ?, ?)",
            (slug, s, f"t{i}", f"t{i}"),
        )
    item = by_id(propose(conn, project))["always-ask:eng-finding-cache"]
    assert item["evidence"]["findings"] == [1, 2, 3]
    assert item["evidence"]["sessions"] == ["a", "b", "c"]


def _pref_event(
    conn, scope, qid, pref, source, free_text=None, ts="2026-01-02T00:00:00.000Z", key=None
):
    conn.execute(
        "INSERT INTO preference_events (event_key, scope, ts, event_type, question_id,"
        " preference, source, free_text) VALUES (?, ?, ?, 'preference-set', ?, ?, ?, ?)",
        (key or f"{scope}-{qid}-{ts}", scope, ts, qid, pref, source, free_text),
    )
    conn.execute(
        "INSERT OR REPLACE INTO preferences (scope, question_id, preference, source,"
        " updated_at) VALUES (?, ?, ?, ?, ?)",
        (scope, qid, pref, source, ts),
    )


def test_explicit_tune_preference_is_restated_from_one_event(conn, project):
    slug = slug_of(project)
    _pref_event(conn, slug, TWO_WAY, "never-ask", "inline-user", "I never polish changelogs")
    _pref_event(conn, slug, "ship-x", "never-ask", "tool-output")  # not user-originated
    p = propose(conn, project)
    item = by_id(p)[f"explicit:{TWO_WAY}"]
    assert item["kind"] == "preference-note"
    assert item["evidence"] == {"preference_events": [1]}
    assert "I never polish changelogs" in item["line"]
    assert "explicit:ship-x" not in by_id(p)


def test_explicit_never_ask_on_one_way_is_not_restated(conn, project):
    _pref_event(conn, slug_of(project), ONE_WAY, "never-ask", "plan-tune")
    p = propose(conn, project)
    assert p["items"] == [] and "inert on a one-way door" in rejected(p, ONE_WAY)[0]["reason"]


def _run(conn, slug, run_id, session, missing, created):
    conn.execute(
        "INSERT INTO trace_runs (run_id, project, session_id, created_at, guidance_mode,"
        " required_outputs_json, missing_outputs_json) VALUES (?, ?, ?, ?, 'propose', ?, ?)",
        (run_id, slug, session, created, json.dumps(["docs/report.md"]), json.dumps(missing)),
    )


def test_output_missing_in_three_runs_proposes_artifact_policy(conn, project):
    slug = slug_of(project)
    for i, s in enumerate(("a", "a", "b")):
        _run(conn, slug, f"r{i}", s, ["docs/report.md"], f"2026-01-0{i + 1}")
    item = by_id(propose(conn, project))["artifact:docs/report.md"]
    assert item["section"] == "Artifact Policy"
    assert item["evidence"]["trace_runs"] == ["r0", "r1", "r2"]


def test_artifact_policy_needs_two_sessions_and_a_current_problem(conn, project):
    slug = slug_of(project)
    for i in range(3):
        _run(conn, slug, f"r{i}", "a", ["docs/report.md"], f"2026-01-0{i + 1}")
    p = propose(conn, project)
    assert p["items"] == [] and "one session" in rejected(p, "docs/report.md")[0]["reason"]
    _run(conn, slug, "r3", "b", ["docs/report.md"], "2026-01-04")
    _run(conn, slug, "r4", "c", [], "2026-01-05")
    p = propose(conn, project)
    assert p["items"] == [] and "latest run" in rejected(p, "docs/report.md")[0]["reason"]


def test_suppressing_line_for_a_one_way_id_is_proposed_for_removal(conn, project):
    write_local(project, prefs=f"- `{ONE_WAY}`: never-ask — hand-written")
    item = by_id(propose(conn, project))[f"remove:{ONE_WAY}"]
    assert item["action"] == "remove" and item["line"] is None


# ---------------------------------------------------------------------------
# apply


def test_apply_writes_guidance_preferences_events_and_history(conn, project):
    slug = slug_of(project)
    lay = write_local(project)
    repeated(conn, slug, n=5)
    p = save(conn, project, propose(conn, project, now="2026-03-01T00:00:00.000Z"))
    md = project / ".plantune" / "proposals" / f"{p['id']}.md"
    assert "Status: proposed; applied: no" in md.read_text()
    out = apply.apply_proposal(conn, p["id"], now="2026-03-02T00:00:00.000Z")
    assert out["status"] == "applied"
    pref = conn.execute("SELECT * FROM preferences").fetchone()
    assert (pref["scope"], pref["question_id"], pref["preference"], pref["source"]) == (
        slug,
        TWO_WAY,
        "never-ask",
        "plan-tune",
    )
    ev = conn.execute("SELECT * FROM preference_events").fetchone()
    assert (ev["scope"], ev["question_id"], ev["preference"], ev["source"]) == (
        slug,
        TWO_WAY,
        "never-ask",
        "plan-tune",
    )
    assert json.loads(ev["extra_json"])["proposal_id"] == p["id"]
    text = open(lay.local_file).read()
    assert f"- `{TWO_WAY}`: never-ask" in text
    history = text.split("## Revision History")[1]
    assert f"2026-03-02T00:00:00.000Z applied proposal {p['id']}" in history
    assert f"{TWO_WAY} none → never-ask" in history
    assert files.read_layer(lay.local_file, "project").warning is None  # still well-formed
    assert "Status: applied; applied: yes" in md.read_text()
    row = conn.execute("SELECT status, applied_at FROM guidance_proposals").fetchone()
    assert tuple(row) == ("applied", "2026-03-02T00:00:00.000Z")
    # The new preference line reaches the context of the next run.
    assert "never-ask" in files.load_guidance(lay, "read").context
    # Applied once; the same proposal again is refused and changes nothing.
    before = (file_sha(lay.local_file), counts(conn, *TABLES))
    with pytest.raises(files.GuidanceError, match=f"proposal {p['id']} is applied at 2026-03-02"):
        apply.apply_proposal(conn, p["id"])
    assert (file_sha(lay.local_file), counts(conn, *TABLES)) == before
    # A later proposal does not restate what the apply already wrote.
    assert propose(conn, project)["items"] == []


def test_apply_creates_a_missing_guidance_file(conn, project):
    repeated(conn, slug_of(project), n=5)
    p = save(conn, project, propose(conn, project))
    assert p["guidance_hash"] is None
    apply.apply_proposal(conn, p["id"])
    layer = files.read_layer(str(project / ".plantune" / "local_guidance.md"), "project")
    assert layer.warning is None and layer.sections is not None


def test_apply_by_md_path_and_by_prefix(conn, project):
    repeated(conn, slug_of(project), n=5)
    p = save(conn, project, propose(conn, project))
    md = project / ".plantune" / "proposals" / f"{p['id']}.md"
    assert apply.find_proposal(conn, str(md))["id"] == p["id"]
    assert apply.find_proposal(conn, p["id"][:8])["id"] == p["id"]
    with pytest.raises(files.GuidanceError, match="no guidance proposal gp-000000000000"):
        apply.find_proposal(conn, "gp-000000000000")
    other = project / "notes.md"
    other.write_text("# notes\n")
    with pytest.raises(files.GuidanceError, match="is not a plantune guidance proposal"):
        apply.find_proposal(conn, str(other))


def snapshot(conn, project):
    lay = files.Layout(project)
    rows = {t: [tuple(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY 1")] for t in TABLES}
    return file_sha(lay.local_file), rows


def test_apply_fails_closed_when_guidance_changed(conn, project):
    """Acceptance 2 (guidance file)."""
    lay = write_local(project)
    repeated(conn, slug_of(project), n=5)
    p = save(conn, project, propose(conn, project))
    with open(lay.local_file, "a") as f:
        f.write("- a hand edit\n")
    before = snapshot(conn, project)
    with pytest.raises(files.GuidanceError) as err:
        apply.apply_proposal(conn, p["id"])
    assert str(err.value) == (
        f".plantune/local_guidance.md changed after proposal {p['id']} was "
        "generated; nothing applied (run `plantune guidance propose` again)"
    )
    assert snapshot(conn, project) == before


def test_apply_fails_closed_when_guidance_file_appeared_or_vanished(conn, project):
    repeated(conn, slug_of(project), n=5)
    p = save(conn, project, propose(conn, project))
    write_local(project)
    before = snapshot(conn, project)
    with pytest.raises(files.GuidanceError, match="changed after proposal"):
        apply.apply_proposal(conn, p["id"])
    assert snapshot(conn, project) == before


@pytest.mark.parametrize("scope", ["project", "global"])
def test_apply_fails_closed_when_an_affected_preference_changed(conn, project, scope):
    """Acceptance 2 (preference)."""
    slug = slug_of(project)
    write_local(project)
    repeated(conn, slug, n=5)
    p = save(conn, project, propose(conn, project))
    conn.execute(
        "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
        " VALUES (?, ?, 'always-ask', 'inline-user', 't')",
        (slug if scope == "project" else db.GLOBAL_SCOPE, TWO_WAY),
    )
    before = snapshot(conn, project)
    with pytest.raises(
        files.GuidanceError, match=f"preferences for {TWO_WAY} changed after proposal"
    ):
        apply.apply_proposal(conn, p["id"])
    assert snapshot(conn, project) == before


def test_unrelated_preference_change_does_not_block_apply(conn, project):
    slug = slug_of(project)
    repeated(conn, slug, n=5)
    p = save(conn, project, propose(conn, project))
    conn.execute(
        "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
        " VALUES (?, 'ship-x', 'always-ask', 'inline-user', 't')",
        (slug,),
    )
    assert apply.apply_proposal(conn, p["id"])["status"] == "applied"


def test_apply_refuses_when_the_id_became_one_way(conn, project):
    repeated(conn, slug_of(project), n=5)
    p = save(conn, project, propose(conn, project))
    conn.execute("UPDATE registry_questions SET door_type = 'one-way' WHERE id = ?", (TWO_WAY,))
    before = snapshot(conn, project)
    with pytest.raises(
        files.GuidanceError, match=f'cannot set never-ask on one-way question "{TWO_WAY}"'
    ):
        apply.apply_proposal(conn, p["id"])
    assert snapshot(conn, project) == before


def test_apply_rolls_back_when_the_file_cannot_be_written(conn, project, monkeypatch):
    repeated(conn, slug_of(project), n=5)
    p = save(conn, project, propose(conn, project))
    before = snapshot(conn, project)

    def boom(path, text):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(apply, "write_atomic", boom)
    with pytest.raises(OSError):
        apply.apply_proposal(conn, p["id"])
    assert snapshot(conn, project) == before


def test_proposal_without_changes_is_not_stored(conn, project):
    p = save(conn, project, propose(conn, project))
    assert p["items"] == [] and counts(conn, "guidance_proposals")["guidance_proposals"] == 0


# ---------------------------------------------------------------------------
# property: no proposal ever suppresses a one-way id

QIDS = [
    TWO_WAY,
    ONE_WAY,
    "ship-pre-landing-review-fix",
    "land-and-deploy-rollback",
    "adhoc-notes",
    "adhoc-danger",
    "cso-finding-fix",
]
SUMMARIES = [
    "Polish it?",
    "Tidy the notes?",
    "Drop table users?",
    "Force-push main?",
    "Rotate the API keys?",
    "Rename the helper?",
]
event = st.fixed_dictionaries(
    {
        "qid": st.sampled_from(QIDS),
        "choice": st.sampled_from(["accept", "skip", "fix-now"]),
        "recommended": st.sampled_from(["accept", "fix-now", None]),
        "session": st.sampled_from(["s1", "s2", "s3"]),
        "source": st.sampled_from(
            ["agent", "hook", "auq-other", "transcript-import", "auto-decided"]
        ),
        "summary": st.sampled_from(SUMMARIES),
        "door_type": st.sampled_from([None, "one-way", "two-way"]),
    }
)
pref_event = st.tuples(
    st.sampled_from(QIDS),
    st.sampled_from(["never-ask", "ask-only-for-one-way", "always-ask"]),
    st.sampled_from(["plan-tune", "inline-user"]),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    events=st.lists(event, min_size=0, max_size=40),
    prefs=st.lists(pref_event, max_size=3),
    guidance_lines=st.lists(
        st.tuples(st.sampled_from(QIDS), st.sampled_from(["never-ask", "always-ask"])), max_size=3
    ),
)
def test_no_proposal_suppresses_a_one_way_id(conn, project, events, prefs, guidance_lines):
    for t in (
        "question_log",
        "preferences",
        "preference_events",
        "guidance_proposals",
        "trace_runs",
    ):
        conn.execute(f"DELETE FROM {t}")
    local = project / ".plantune" / "local_guidance.md"
    if local.exists():
        local.unlink()
    slug = slug_of(project)
    for i, e in enumerate(events):
        extra = {"door_type": e["door_type"]} if e["door_type"] else {}
        log(
            conn,
            slug,
            qid=e["qid"],
            choice=e["choice"],
            recommended=e["recommended"],
            session=e["session"],
            source=e["source"],
            summary=e["summary"],
            **extra,
        )
    for i, (qid, pref, source) in enumerate(prefs):
        _pref_event(conn, slug, qid, pref, source, ts=f"2026-02-01T00:00:{i:02d}.000Z", key=f"k{i}")
    if guidance_lines:
        write_local(project, prefs="\n".join(f"- `{q}`: {p} — x" for q, p in guidance_lines))

    registry = dict(conn.execute("SELECT id, door_type FROM registry_questions"))
    rows = conn.execute(
        "SELECT question_id, skill, category, question_summary, door_type,"
        " door_class FROM question_log"
    ).fetchall()

    def one_way(qid):
        if registry.get(qid) == "one-way":
            return True
        from toolkit.core import doors

        return any(
            r[0] == qid
            and ("one-way" in (r[4], r[5]) or doors.is_one_way(r[0], r[1], r[2], r[3], registry))
            for r in rows
        ) or doors.is_one_way(qid, registry=registry)

    p = propose(conn, project)
    for item in p["items"]:
        if (
            item.get("preference") in ("never-ask", "ask-only-for-one-way")
            and item["kind"] == "preference"
        ):
            assert not one_way(item["question_id"]), item
            ev = item["evidence"]
            assert len(ev["sessions"]) >= 2 and len(ev["question_events"]) >= 5
    before = {
        r[0]
        for r in conn.execute(
            "SELECT question_id FROM preferences WHERE preference IN ('never-ask',"
            " 'ask-only-for-one-way')"
        )
    }
    if p["items"]:
        save(conn, project, p)
        apply.apply_proposal(conn, p["id"])
    after = {
        r[0]
        for r in conn.execute(
            "SELECT question_id FROM preferences WHERE preference IN ('never-ask',"
            " 'ask-only-for-one-way')"
        )
    }
    assert not any(one_way(q) for q in after - before)
    if local.exists():
        # A hand-written suppressing line for a one-way id is proposed for removal, so
        # after apply no such line is left.
        for line in local.read_text().splitlines():
            for qid in QIDS:
                if line.startswith(f"- `{qid}`: never-ask"):
                    assert not one_way(qid), line


def test_apply_refuses_a_malformed_guidance_file(conn, project):
    (project / ".plantune").mkdir()
    (project / ".plantune" / "local_guidance.md").write_text("# notes\n\n## Scope\nmine\n")
    repeated(conn, slug_of(project), n=5)
    p = save(conn, project, propose(conn, project))
    assert "is malformed" in p["guidance_malformed"]
    before = snapshot(conn, project)
    with pytest.raises(
        files.GuidanceError, match=r"is malformed \(missing sections .*\); nothing applied"
    ):
        apply.apply_proposal(conn, p["id"])
    assert snapshot(conn, project) == before
