"""`plantune registry sync PATH` and `plantune registry lint DIR`."""

import importlib.util
import json
import os
import sqlite3

import pytest
from click.testing import CliRunner

from toolkit.cli.app import cli
from toolkit.core import registry as reg
from toolkit.core import seeded_db

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
REGISTRY_TS = os.path.join(FIXTURES, "question-registry.ts")
IDENTITY = ("id", "skill", "category", "door_type", "options", "signal_key")


def invoke(*args):
    return CliRunner().invoke(cli, ["registry", *args])


def db_registry(db_file):
    conn = sqlite3.connect(db_file)
    conn.row_factory = sqlite3.Row
    try:
        out = {}
        for r in conn.execute("SELECT * FROM registry_questions"):
            d = dict(r)
            d["options"] = json.loads(d.pop("options_json")) if d["options_json"] else None
            out[d["id"]] = d
        return out
    finally:
        conn.close()


def identity(entry):
    return tuple(entry.get(k) for k in IDENTITY)


@pytest.fixture
def ts_text():
    with open(REGISTRY_TS, encoding="utf-8") as f:
        return f.read()


def write(tmp_path, text, name="question-registry.ts"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# --- sync -------------------------------------------------------------------


def test_committed_fixture_is_what_the_generator_writes(tmp_path, ts_text):
    spec = importlib.util.spec_from_file_location(
        "make_ts", os.path.join(FIXTURES, "make_question_registry_ts.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(out=str(tmp_path / "out.ts"))
    assert (tmp_path / "out.ts").read_text(encoding="utf-8") == ts_text


def test_fixture_uses_the_real_file_format(ts_text):
    # the features the parser must cope with are really there
    for needle in (
        "export const QUESTIONS = {",
        "} as const satisfies Record<string, QuestionDef>;",
        '  "ship-greptile-comment-valid": {',
        "'There\\'s ' +",
        "/* always asked */",
        "// psychographic hook",
        "'skip',],",
        "export type DoorType",
    ):
        assert needle in ts_text, needle


def test_sync_loads_53_entries_identical_to_the_bundled_registry(db_file):
    r = invoke("sync", REGISTRY_TS)
    assert r.exit_code == 0, r.output
    bundled = {e["id"]: e for e in reg.bundled_registry()}
    synced = db_registry(db_file)
    assert len(synced) == 53
    assert {k: identity(v) for k, v in synced.items()} == {
        k: identity(v) for k, v in bundled.items()
    }
    assert all(v["description"] and v["origin"] == "synced" for v in synced.values())
    assert synced["ship-todos-create"]["description"] == "There's no TODOS.md yet — create one?"
    assert (
        synced["qa-tier"]["description"] == 'How deep should QA go: "quick", "standard" or "deep"?'
    )
    # only descriptions differ from the bundled copy (which has none)
    assert r.output.strip().splitlines()[-1] == (
        f"Synced 53 questions from {REGISTRY_TS}: 0 added, 53 changed, 0 removed, 0 unchanged."
    )
    assert "~ qa-tier (description)" in r.output


def test_sync_twice_changes_nothing(db_file):
    invoke("sync", REGISTRY_TS)
    r = invoke("sync", REGISTRY_TS, "--json")
    report = json.loads(r.stdout)
    assert report == {
        "added": [],
        "changed": [],
        "removed": [],
        "unchanged": 53,
        "total": 53,
        "dry_run": False,
        "downgraded": [],
    }


def test_sync_reports_added_changed_removed(db_file, tmp_path, ts_text):
    invoke("sync", REGISTRY_TS)
    text = ts_text.replace(
        "  'qa-tier': {",
        "  'qa-smoke-first': {\n    id: 'qa-smoke-first',\n    skill: 'qa',\n"
        "    category: 'routing',\n    door_type: 'two-way',\n    description: 'Smoke test first?',\n"
        "  },\n  'qa-tier': {",
    )
    start = text.index("  'autoplan-taste-decision': {")
    text = text[:start] + text[text.index("  },\n", start) + 5 :]
    block = text.index("  'ship-todos-reorganize': {")
    text = text[:block] + text[block:].replace("door_type: 'two-way',", "door_type: 'one-way',", 1)
    r = invoke("sync", write(tmp_path, text))
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[:3] == [
        "+ qa-smoke-first",
        "~ ship-todos-reorganize (door_type)",
        "- autoplan-taste-decision",
    ]
    assert lines[-1].endswith(
        "53 questions from "
        + str(tmp_path / "question-registry.ts")
        + ": 1 added, 1 changed, 1 removed, 51 unchanged."
    )
    synced = db_registry(db_file)
    assert synced["ship-todos-reorganize"]["door_type"] == "one-way"
    assert "autoplan-taste-decision" not in synced and synced["qa-smoke-first"]["options"] is None


def test_synced_door_type_is_what_the_hooks_enforce(db_file, tmp_path, ts_text):
    """A question made one-way by sync is no longer auto-decided."""
    from toolkit.claude import hooks
    from toolkit.store import db

    text = ts_text.replace("door_type: 'two-way',", "door_type: 'one-way',")
    assert invoke("sync", write(tmp_path, text)).exit_code == 0
    conn = seeded_db.connect(db_file)
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO preferences (scope, question_id, preference, source, updated_at)"
            " VALUES ('__global__', 'ship-todos-create', 'never-ask', 'plan-tune', 'x')"
        )
    conn.close()
    q = {
        "question": "Create TODOS.md? <gstack-qid:ship-todos-create>",
        "options": [{"label": "Yes (recommended)"}, {"label": "No"}],
    }
    p = {"tool_name": "AskUserQuestion", "cwd": str(tmp_path), "tool_input": {"questions": [q]}}
    assert hooks.pre_tool_use(p) is None


def test_dry_run_writes_nothing(db_file):
    r = invoke("sync", REGISTRY_TS, "--dry-run")
    assert r.exit_code == 0
    assert "Would sync 53 questions" in r.output
    assert all(
        v["origin"] == "bundled" and v["description"] == "" for v in db_registry(db_file).values()
    )


def test_json_array_with_descriptions_is_accepted(db_file, tmp_path):
    entries = [dict(e, description=f"About {e['id']}") for e in reg.bundled_registry()]
    r = invoke("sync", write(tmp_path, json.dumps(entries), "r.json"))
    assert r.exit_code == 0, r.output
    assert db_registry(db_file)["qa-tier"]["description"] == "About qa-tier"


def test_json_without_descriptions_is_refused(db_file, tmp_path):
    path = write(tmp_path, json.dumps(reg.bundled_registry()), "r.json")
    r = invoke("sync", path)
    assert r.exit_code == 1
    assert (
        f"{path}: entry 1: entry 'ship-release-pipeline-missing': description is required"
        in r.stderr
    )
    assert (
        r.stderr.strip().splitlines()[-1]
        == f"Error: {path}: registry refused: 53 problems, nothing changed"
    )


BAD_ENTRIES = [
    (
        "door_type: 'two-way',",
        "door_type: 'maybe',",
        "door_type must be one-way or two-way (got 'maybe')",
    ),
    (
        "category: 'routing',",
        "category: 'chat',",
        "category must be one of approval, clarification, routing, cherry-pick, feedback-loop (got 'chat')",
    ),
    ("id: 'qa-tier',", "id: 'qa-tiers',", "id 'qa-tiers' differs from its key 'qa-tier'"),
    ("skill: 'qa',", "skill: 'ship',", "id must start with its skill followed by '-' (ship-…)"),
    (
        "options: ['quick', 'standard', 'deep'],",
        "options: [],",
        "options must be a non-empty list of option keys",
    ),
    (
        "options: ['quick', 'standard', 'deep'],",
        "options: ['quick', 'quick'],",
        "options repeat quick",
    ),
    (
        "options: ['quick', 'standard', 'deep'],",
        "signal_key: 'qa-care',",
        "signal_key 'qa-care' is not in the signal map",
    ),
    # qa-tier's description is the single-quoted 53-character one
    ("description: 'How deep", "description: '',\n    x: 'How deep", "description is required"),
    (
        "description: 'How deep",
        "description: '" + "x" * 201 + "' + 'How deep",
        "description is 254 characters (at most 200)",
    ),
    (
        "description: 'How deep",
        "description: 'two\\nlines ' + 'How deep",
        "description must be one line",
    ),
]


@pytest.mark.parametrize("old,new,reason", BAD_ENTRIES, ids=[b[2][:30] for b in BAD_ENTRIES])
def test_entries_breaking_the_rules_are_refused(db_file, tmp_path, ts_text, old, new, reason):
    start = ts_text.index("  'qa-tier': {")
    end = ts_text.index("  },\n", start)
    block = ts_text[start:end]
    assert old in block, old
    block = block.replace(old, new, 1)
    path = write(tmp_path, ts_text[:start] + block + ts_text[end:])
    line = ts_text[:start].count("\n") + 1
    r = invoke("sync", path)
    assert r.exit_code == 1, r.output
    assert f"{path}: line {line}: entry 'qa-tier': {reason}" in r.stderr
    assert "nothing changed" in r.stderr
    assert all(v["origin"] == "bundled" for v in db_registry(db_file).values())


def test_duplicate_ids_are_refused(db_file, tmp_path, ts_text):
    start = ts_text.index("  'qa-tier': {")
    end = ts_text.index("  },\n", start) + 5
    path = write(tmp_path, ts_text[:end] + ts_text[start:end] + ts_text[end:])
    r = invoke("sync", path)
    assert r.exit_code == 1
    line = ts_text[:start].count("\n") + 1
    second = line + ts_text[start:end].count("\n")
    assert f"line {second}: entry 'qa-tier': duplicate id (first at line {line})" in r.stderr


@pytest.mark.parametrize(
    "text,message",
    [
        ("export const QUESTIONS = {\n  'a-b': { id: 'a-b\n", "line 2: newline inside a string"),
        (
            "export const QUESTIONS = {\n  'a-b': { id: `a-${x}` },\n};",
            "line 2: template expressions are not supported",
        ),
        ("export const OTHER = {};", "no `QUESTIONS = { … }` object literal found"),
        (
            "export const QUESTIONS = {\n  'a-b': { id: someVar },\n};",
            "line 2: unsupported value 'someVar'",
        ),
        (
            "export const QUESTIONS = {\n  'a-b': { id: 'a-b' }\n  'c-d': {},\n};",
            "line 3: expected ',' or '}', found 'c-d'",
        ),
        ("/* never closed\nexport const QUESTIONS = {};", "line 1: unterminated comment"),
        ("export const QUESTIONS = {}", "no entries"),
    ],
)
def test_unreadable_sources_are_refused_with_a_line(db_file, tmp_path, text, message):
    path = write(tmp_path, text)
    r = invoke("sync", path)
    assert r.exit_code == 1
    assert message in r.stderr
    assert all(v["origin"] == "bundled" for v in db_registry(db_file).values())


def test_missing_file_is_an_error(db_file, tmp_path):
    r = invoke("sync", str(tmp_path / "nope.ts"))
    assert r.exit_code == 1
    assert r.stderr.strip() == f"Error: {tmp_path / 'nope.ts'}: no such file"


def test_parser_understands_typescript_around_the_literal():
    text = """
import { QUESTIONS as OLD } from './old';
type X = keyof typeof QUESTIONS;
export const QUESTIONS: Record<string, QuestionDef> = {
  // comment
  "a-b": { id: "a-b", skill: 'a', options: ['x', "y",] as const, n: 0x1F, f: 1.5, t: true, u: undefined },
  c: { id: `c`, s: 'it\\'s' + " \\u00e9" },
};
"""
    items = reg.parse_registry_ts(text)
    assert items == [
        (
            "a-b",
            {
                "id": "a-b",
                "skill": "a",
                "options": ["x", "y"],
                "n": 31,
                "f": 1.5,
                "t": True,
                "u": None,
            },
            6,
        ),
        ("c", {"id": "c", "s": "it's é"}, 7),
    ]


# --- lint -------------------------------------------------------------------


def skill_tree(tmp_path):
    root = tmp_path / "skills"
    (root / "ship").mkdir(parents=True)
    (root / "review").mkdir()
    (root / "qa" / "node_modules" / "x").mkdir(parents=True)
    (root / "ship" / "SKILL.md.tmpl").write_text(
        "# ship\nAsk <gstack-qid:ship-test-failure-triage> when tests fail.\n"
        'Log it with question_id: "ship-made-up-question".\n'
        "Preamble: <gstack-qid:preamble-telemetry-consent>\n"
    )
    (root / "ship" / "SKILL.md").write_text(
        "generated\n<gstack-qid:ship-test-failure-triage>\n<gstack-qid:review-finding-fix>\n"
        "<gstack-qid:{question_id}> is the template\n"
    )
    (root / "review" / "SKILL.md.tmpl").write_text(
        "Mark it <GSTACK-QID:Review-Finding-Fix>.\nSee `qa-tier` too; `plan-eng-review` is a skill.\n"
        "Preamble: <gstack-qid:preamble-telemetry-consent>\n"
    )
    (root / "qa" / "node_modules" / "x" / "SKILL.md").write_text("<gstack-qid:qa-ignored-here>\n")
    return root


def small_registry(tmp_path, ids):
    entries = [
        {
            "id": i,
            "skill": skill,
            "category": "approval",
            "door_type": "two-way",
            "description": f"About {i}",
        }
        for i, skill in ids
    ]
    return write(tmp_path, json.dumps(entries), "reg.json")


def test_lint_reports_drift_and_exits_1(db_file, tmp_path):
    root = skill_tree(tmp_path)
    path = small_registry(
        tmp_path,
        [
            ("ship-test-failure-triage", "ship"),
            ("review-finding-fix", "review"),
            ("qa-tier", "qa"),
            ("cso-finding-fix", "cso"),
            ("preamble-telemetry-consent", "preamble"),
        ],
    )
    r = invoke("lint", str(root), "--registry", path)
    assert r.exit_code == 1, r.output
    assert r.output.splitlines() == [
        "unregistered  ship-made-up-question  ship/SKILL.md.tmpl:3",
        "duplicate     review-finding-fix  marked in review, ship",
        "unreferenced  cso-finding-fix",
        "3 template files, 5 ids referenced: 1 unregistered, 1 duplicate, 1 unreferenced.",
    ]


def test_lint_json_and_allow_unreferenced(db_file, tmp_path):
    root = skill_tree(tmp_path)
    (root / "ship" / "SKILL.md").write_text("<gstack-qid:ship-test-failure-triage>\n")
    (root / "ship" / "SKILL.md.tmpl").write_text("<gstack-qid:ship-test-failure-triage>\n")
    path = small_registry(
        tmp_path,
        [
            ("ship-test-failure-triage", "ship"),
            ("review-finding-fix", "review"),
            ("qa-tier", "qa"),
            ("cso-finding-fix", "cso"),
        ],
    )
    r = invoke("lint", str(root), "--registry", path, "--json")
    assert r.exit_code == 1
    report = json.loads(r.stdout)
    assert report["unreferenced"] == ["cso-finding-fix"] and report["drift"] is True
    assert report["unregistered"] == [
        {"id": "preamble-telemetry-consent", "where": ["review/SKILL.md.tmpl:3"]}
    ]
    r = invoke("lint", str(root), "--registry", path, "--allow-unreferenced")
    assert r.exit_code == 1  # the preamble id is still unregistered here
    path = small_registry(
        tmp_path,
        [
            ("ship-test-failure-triage", "ship"),
            ("review-finding-fix", "review"),
            ("qa-tier", "qa"),
            ("cso-finding-fix", "cso"),
            ("preamble-telemetry-consent", "preamble"),
        ],
    )
    assert invoke("lint", str(root), "--registry", path, "--allow-unreferenced").exit_code == 0


def test_lint_against_the_database_registry(db_file, tmp_path):
    root = skill_tree(tmp_path)
    r = invoke("lint", str(root), "--json")
    report = json.loads(r.stdout)
    assert len(report["unreferenced"]) == 53 - 4
    assert [u["id"] for u in report["unregistered"]] == ["ship-made-up-question"]


def test_lint_without_templates_is_an_error(db_file, tmp_path):
    (tmp_path / "empty").mkdir()
    r = invoke("lint", str(tmp_path / "empty"))
    assert r.exit_code == 1
    assert f"no SKILL.md or SKILL.md.tmpl files under {tmp_path / 'empty'}" in r.stderr
    r = invoke("lint", str(tmp_path / "missing"))
    assert r.exit_code == 1 and "is not a directory" in r.stderr


def test_lint_refuses_a_broken_registry_file(db_file, tmp_path):
    root = skill_tree(tmp_path)
    path = write(tmp_path, '[{"id": "Bad"}]', "reg.json")
    r = invoke("lint", str(root), "--registry", path)
    assert r.exit_code == 1
    assert "entry 'Bad': id must be kebab-case" in r.stderr


def test_lint_reads_a_quoted_example_marker_as_prose_not_an_id(db_file, tmp_path):
    root = tmp_path / "skills"
    (root / "plan-tune").mkdir(parents=True)
    # As gstack's own plan-tune/SKILL.md.tmpl words it.
    (root / "plan-tune" / "SKILL.md.tmpl").write_text(
        "Top N hash-only question_ids by frequency. These are AUQ fires the cathedral\n"
        "hook captured but cannot enforce against (no `<gstack-qid:foo>` marker in\n"
        "the skill template). Log `question_id: made-up-example` the same way.\n"
        "Ask `<gstack-qid:ship-test-failure-triage>` here.\n"
        "A real one: <gstack-qid:bar-baz>\n"
    )
    path = small_registry(tmp_path, [("ship-test-failure-triage", "ship")])
    report = json.loads(invoke("lint", str(root), "--registry", path, "--json").stdout)
    # The quoted registered id still counts as a reference; the quoted unknown ones are prose.
    assert report["unregistered"] == [{"id": "bar-baz", "where": ["plan-tune/SKILL.md.tmpl:5"]}]
    assert report["unreferenced"] == []


def test_unreferenced_entries_are_warnings_unless_strict(db_file, tmp_path):
    root = tmp_path / "skills"
    (root / "ship").mkdir(parents=True)
    (root / "ship" / "SKILL.md.tmpl").write_text("Ask <gstack-qid:ship-test-failure-triage>.\n")
    path = small_registry(
        tmp_path, [("ship-test-failure-triage", "ship"), ("cso-finding-fix", "cso")]
    )
    r = invoke("lint", str(root), "--registry", path)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [
        "unreferenced  cso-finding-fix",
        "1 template file, 1 id referenced: 0 unregistered, 0 duplicate, 1 unreferenced"
        " (warnings; --strict fails on them).",
    ]
    assert (
        json.loads(invoke("lint", str(root), "--registry", path, "--json").stdout)["drift"] is False
    )
    r = invoke("lint", str(root), "--registry", path, "--strict")
    assert r.exit_code == 1
    assert r.output.splitlines()[-1].endswith("1 unreferenced.")
    assert (
        invoke("lint", str(root), "--registry", path, "--strict", "--allow-unreferenced").exit_code
        == 0
    )


@pytest.mark.skipif(
    not os.environ.get("PLANTUNE_GSTACK_TREE"),
    reason="set PLANTUNE_GSTACK_TREE to a gstack checkout to lint it",
)
def test_lint_passes_on_an_untouched_gstack_tree(db_file):
    tree = os.environ["PLANTUNE_GSTACK_TREE"]
    registry_ts = os.path.join(tree, "scripts", "question-registry.ts")
    r = invoke("lint", tree, "--registry", registry_ts)
    assert r.exit_code == 0, r.output
    assert "0 unregistered, 0 duplicate" in r.output
