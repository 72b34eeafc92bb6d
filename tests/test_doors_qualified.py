"""English doors: a qualifier ("local", "test", "sample") or a merge the question states
softens a danger only when nothing in the question points at shared, remote or
production things, or at the only copy."""

import pytest

from toolkit.core.doors import classify

TWO_WAY = [
    # a local branch the question shows merged
    "My local branch feature/login-form was never pushed and is already merged. Delete it?",
    "Delete the local branch fix-typo? It was merged into main yesterday.",
    "Delete the feature branch locally now that the PR is merged?",
    # test and scratch things named before "overwrite it"
    "The Jest snapshot is out of date after the button change. Should I overwrite it?",
    "The test fixture users.json has stale sample data. Overwrite it with new sample records?",
    "The golden file for the parser test no longer matches. Regenerate and overwrite it?",
    "Remove the obsolete snapshot files for the deleted component tests?",
    # a strong verb aimed at a throwaway thing
    "Delete the throwaway SQLite database in /tmp?",
    "Reset the local Postgres database in docker so the tests start clean?",
    "Delete the coverage report directory?",
    # the issue's own
    "Delete the empty line?",
    "Overwrite the snapshot file for the updated test?",
    "Revert my local uncommitted change?",
]

ONE_WAY = [
    # the merge is denied, or the branch is remote
    "Delete my local branch? It has three days of commits that were never merged.",
    "The local branch is not merged yet. Delete it anyway?",
    "Delete the merged branch from GitHub?",
    "The merged branch still exists on origin. Delete it there too?",
    "My local branch is merged, so force-push it over main?",
    # a qualifier in a question pointing at shared things or the only copy
    "Wipe the shared test database that QA is using right now?",
    "The test database holds the only copy of the benchmark results. Drop it?",
    "The sample data in the customers table looks wrong. Overwrite it?",
    "Overwrite the local backup with tonight's dump?",
    "Overwrite the golden file in the shared release bucket?",
    "Delete the dev database? The demo for the investors runs on it tomorrow.",
    # public stores, production data, the held-out paraphrases
    "Make the bucket with the customer exports public?",
    "Load the test fixtures into the production database?",
    "Revert main to last week's state and push?",
    "Make the repo visible to the world?",
]


@pytest.mark.parametrize("text", TWO_WAY)
def test_a_qualified_or_settled_thing_is_two_way(text):
    assert classify(text).door == "two-way", text


@pytest.mark.parametrize("text", ONE_WAY)
def test_a_pointing_or_denied_question_stays_one_way(text):
    assert classify(text).door == "one-way", text


def test_an_english_button_is_no_italian_verb():
    # "butt" was read as the start of "buttare" (to throw away) in "button"
    text = "The Jest snapshot is out of date after the button change."
    assert classify(text).door == "two-way"
    assert classify("Buttiamo via gli snapshot del database di produzione?").door == "one-way"
