"""The door net's classes: shell and git command lines, code calls, prose about sending
data out, legal terms, mass notices, slang deletion, disguised spellings, and ids.

Each class is tested through the classifier and, for the reviewer's cases, through
``gstack-question-preference --check`` with a never-ask preference, as an agent runs it.
Harmless near-misses of every class stay two-way. ``fixtures/doors_heldout.jsonl`` is
scored but never tuned against (see ``test_held_out_set``).
"""

import json
import os

import pytest

from tests.helpers import door_corpus
from tests.helpers.hotpath import plant, pref
from toolkit.core import door_checks, doors, preferences
from toolkit.core.doors import canonical_id, classify, explain

REVIEWER = [
    "find . -name '*.db' -delete",
    "rsync -a --delete src/ prod:/srv/app/",
    "cat /dev/null > prod.db",
    "> /var/log/app.log",
    "mv prod.db /dev/null",
    "git restore --source=HEAD~5 .",
    "git push origin +HEAD:main",
    "gh repo edit --visibility public",
    "gh repo edit --visibility=public",
    "db.users.drop()",
    "dropTable('users')",
    "Forward the customer list to the vendor?",
    "Share the doc with anyone who has the link?",
    "Accept the vendor's terms of service for the company?",
    "Reply-all to the whole company with the salary sheet?",
    "Unsubscribe all users from notifications?",
    "Bin the old customers table?",
    "\u13a0rop the users table?",
    "\u0257rop the users table?",
    "dr\u0e4fp the users table?",
    "Dr0p the users table?",
    "d r o p the users table",
    "dr-op the users table",
]

# One more of each class, in words the reviewer did not use.
CLASSES = {
    "delete flag": "rsync -r --delete-before ./out/ backup-host:/mnt/backups/",
    "empty redirect": "printf '' > /etc/app/config.yml",
    "null copy": "cp /dev/null users.sqlite",
    "move to null": "mv data/ /dev/null",
    "checkout over worktree": "git checkout v1.2 -- .",
    "restore from revision": "git restore -s main~3 -W src/",
    "forced refspec": "git push upstream +refs/heads/dev:refs/heads/main",
    "public repo": "gh repo create secret-tool --public --source=.",
    "code call": "await db.collection('orders').deleteMany({})",
    "ruby bang": "account.destroy!",
    "camel call": "purgeBucket(prodBucket)",
    "method on receiver": "table.truncate()",
    "sensitive data out": "Email the patient records to my personal address?",
    "legal terms": "Agree to the vendor contract for our organisation?",
    "mass notice": "Mass unsubscribe the mailing list?",
    "slang deletion": "Junk the old invoices table?",
    "small capital": "D\u0280op the users table?",
    "script letter": "De\u2113ete the orders table?",
    "digits for letters": "Trunc4te the orders table?",
    "spaced letters": "d e l e t e the customer records",
    "hyphenated letters": "w-i-p-e the production database",
    "split word": "del ete the users table",
}

NEAR_MISSES = [
    "Delete the typo in the README?",
    "Drop a comment on the PR?",
    "find . -name '*.pyc'",
    "Share your screen?",
    "Forward the bug report to the frontend team?",
    "Accept the code review suggestion?",
    "Unsubscribe the event listener on unmount?",
    "Bin the unused CSS classes?",
    "Get rid of the trailing comma?",
    "rsync -a src/ build/",
    "echo hello > greeting.txt",
    "python gen.py > output.json",
    "cmd 2>&1 | tee build.log",
    "Redirect stderr to /dev/null in the test script?",
    "git restore --staged README.md",
    "git push origin feature-x",
    "gh repo edit --description 'A small tool'",
    "cache.clear()",
    "onDeleteClick handler should confirm?",
    "Use dropTarget for the drag layer?",
    "Upgrade to python3.12?",
    "Set k8s replicas to 3 in dev?",
    "Should it be utf8 or utf-8?",
    "Send a test email to myself?",
    "Share the staging URL with QA?",
]


@pytest.mark.parametrize("text", REVIEWER + list(CLASSES.values()))
def test_destructive_forms_are_one_way(text):
    assert classify(text).door == "one-way", explain(text)
    assert explain(text)["door"] == "one-way"


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_stay_two_way(text):
    assert classify(text).door == "two-way", explain(text)


@pytest.mark.parametrize("text", REVIEWER)
def test_check_never_auto_decides_the_reviewers_cases(tmp_path, text):
    plant(os.environ["GSTACK_STATE_ROOT"], {"adhoc-x": "never-ask"})
    r = pref("--check", "adhoc-x", "--summary-stdin", input=text)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "ASK_NORMALLY",
        "NOTE: one-way door overrides your never-ask preference for safety.",
    ]


def test_check_still_auto_decides_a_harmless_summary():
    plant(os.environ["GSTACK_STATE_ROOT"], {"adhoc-x": "never-ask"})
    r = pref("--check", "adhoc-x", "--summary-stdin", input="Rename the helper?")
    assert r.stdout.splitlines() == ["AUTO_DECIDE"]


# --- ids ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given,canonical",
    [
        ("l\u0430nd-and-deploy-rollback", "land-and-deploy-rollback"),  # Cyrillic a
        ("drop\u2010users\u2010table", "drop-users-table"),  # Unicode hyphens
        ("drop\u2212users\u2014table", "drop-users-table"),  # minus sign, em dash
        ("LAND\uff3fAND\u2011DEPLOY-ROLLBACK", "land-and-deploy-rollback"),
        ("\u0410B", "ab"),
        ("caf\u00e9-menu", "cafe-menu"),
        ("\u65e5\u672c-x", "\u65e5\u672c-x"),  # letters that imitate nothing stay
    ],
)
def test_canonical_id_folds_look_alikes_and_dashes(given, canonical):
    assert canonical_id(given) == canonical


@pytest.mark.parametrize(
    "qid", ["l\u0430nd-and-deploy-rollback", "land\u2010and\u2010deploy\u2010rollback"]
)
def test_look_alike_ids_keep_the_registry_door(conn, qid):
    assert door_checks.door_for(conn, qid) == doors.Classification(True, "registry")


def test_id_words_are_read_before_auto_deciding(conn):
    for qid in ("drop-users-table", "dropUsersTable", "wipe_prod_database"):
        conn.execute(
            "INSERT INTO preferences (scope, question_id, preference, raw_value,"
            " source, updated_at) VALUES ('p', ?, 'never-ask', NULL, 'plan-tune',"
            " '2026-01-01T00:00:00Z')",
            (qid,),
        )
        d = preferences.check(conn, "p", qid)
        assert d.decision == "ASK_NORMALLY", qid
        assert d.door.reason.startswith("id-words:")
        assert d.notes == ["one-way door overrides your never-ask preference for safety."]
    conn.execute(
        "INSERT INTO preferences (scope, question_id, preference, raw_value, source,"
        " updated_at) VALUES ('p', 'tidy-imports', 'never-ask', NULL, 'plan-tune',"
        " '2026-01-01T00:00:00Z')"
    )
    assert preferences.check(conn, "p", "tidy-imports").decision == "AUTO_DECIDE"


@pytest.mark.parametrize("origin", ["synced", "promoted"])
def test_a_registered_two_way_id_whose_words_are_destructive_is_not_auto_decided(conn, origin):
    # A registry from another tree, a teammate or a promotion calls it two-way.
    conn.execute(
        "INSERT INTO registry_questions (id, skill, category, door_type, signal_key,"
        " description, origin, updated_at) VALUES ('wipe-production-database', 'ship',"
        " 'approval', 'two-way', NULL, '', ?, '2026-01-01T00:00:00Z')",
        (origin,),
    )
    conn.execute(
        "INSERT INTO preferences (scope, question_id, preference, raw_value, source,"
        " updated_at) VALUES ('p', 'wipe-production-database', 'never-ask', NULL,"
        " 'plan-tune', '2026-01-01T00:00:00Z')"
    )
    d = preferences.check(conn, "p", "wipe-production-database")
    assert d.decision == "ASK_NORMALLY" and d.door.reason.startswith("id-words:")


def test_no_bundled_or_gstack_two_way_id_reads_one_way_by_its_words():
    # Reading a registered two-way id's words costs no registry question its auto-decision.
    for entry in doors.load_bundled_registry():
        if entry["door_type"] == "two-way":
            assert classify(doors.id_text(entry["id"]), prose=False).door == "two-way", entry


def test_check_reads_the_id_without_a_summary():
    plant(os.environ["GSTACK_STATE_ROOT"], {"drop-users-table": "never-ask"})
    r = pref("--check", "drop-users-table")
    assert r.stdout.splitlines()[0] == "ASK_NORMALLY"


def test_a_fact_recorded_under_a_look_alike_spelling_is_sticky(conn):
    look_alike = "adhoc-tidy\u2010step"
    conn.execute(
        "INSERT INTO door_knowledge (canonical_id, source, question_id, evidence,"
        " learned_at) VALUES (?, 'logged', ?, 'test', '2026-01-01T00:00:00Z')",
        (look_alike, look_alike),
    )
    conn.execute(
        "INSERT INTO preferences (scope, question_id, preference, raw_value, source,"
        " updated_at) VALUES ('p', 'adhoc-tidy-step', 'never-ask', NULL, 'plan-tune',"
        " '2026-01-01T00:00:00Z')"
    )
    d = preferences.check(conn, "p", "adhoc-tidy-step")
    assert d.decision == "ASK_NORMALLY" and d.door.reason == "recorded:logged"


# --- the held-out set ---------------------------------------------------------------------

HELD_OUT = os.path.join(os.path.dirname(door_corpus.CORPUS_DIR), "doors_heldout.jsonl")


def test_held_out_set():
    """Written before the classes above, never tuned against: a floor, not a target."""
    with open(HELD_OUT, encoding="utf-8") as f:
        items = [json.loads(line) for line in f if line.strip()]
    result = door_corpus.score(items, classify)
    assert result["one_way"] >= 60 and result["two_way"] >= 60
    assert result["recall"] >= 0.9
    assert result["false_alarm_rate"] <= 0.15


def test_pacing_never_silences_a_finding_whose_id_reads_one_way(conn):
    from toolkit.pacing import rank as pacing

    findings = [
        {
            "id": fid,
            "summary": "Tidy this up?",
            "severity": 0,
            "irreversibility": 0,
            "decision_matters": 0,
            "door_type": "two-way",
            "recommended": "yes",
            "options": ["yes", "no"],
        }
        for fid in ("drop-orders-table", "tidy-the-notes")
    ]
    out = pacing.rank(
        conn, {"session_id": "s1", "phase": "eng", "findings": findings}, "proj"
    ).output
    assert [s["id"] for s in out["surface"]] == ["drop-orders-table"]
    assert out["surface"][0]["reason"] == "one-way"
    assert [s["id"] for s in out["silent_decisions"]] == ["tidy-the-notes"]


@pytest.mark.parametrize(
    "qid,auto",
    [("drop-users-table", False), ("l\u0430nd-and-deploy-rollback", False), ("tidy-notes", True)],
)
def test_the_hook_reads_the_marker_ids_words(tmp_path, conn, db_file, qid, auto):
    from tests.helpers.hooks import make_repo, payload, question
    from toolkit.claude import hooks
    from toolkit.store import db, paths

    repo = make_repo(tmp_path)
    slug = paths.resolve_slug(cwd=str(repo))
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
            " VALUES (?, ?, 'never-ask', 'plan-tune', 'x')",
            (slug, qid),
        )
    q = question(f"<gstack-qid:{qid}> Tidy up the notes?", ["Yes (recommended)", "No"])
    data = payload([q], cwd=repo, event="PreToolUse")
    assert (hooks.pre_tool_use(data, db_path=db_file) is not None) is auto
