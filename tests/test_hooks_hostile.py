"""The hooks against a host that sends its own payloads, in this process.

Each test is an attack: a payload shaped otherwise than Claude Code's own (other answer
shapes, other encodings, re-delivery, a one-way door spelled another way). The promises
under attack: a hook never answers a question it must not, never loses an answer it
took, never records one twice, never prints a traceback, always exits 0.
(tests/test_hooks_delivery.py runs Claude Code's own payloads as processes.)
"""

import json
import sys

import pytest

from tests.helpers.hooks import error_log, events, make_repo, payload, question
from toolkit import launch
from toolkit.claude import hooks

CACHE = question("Which cache?", ["Redis", "Memcached"])
DB = question("Which database?", ["Postgres", "MySQL"])
FIX = "Null check missing in cart.ts. <gstack-qid:ship-pre-landing-review-fix>"
FIX_OPTIONS = [{"label": "A) Fix now (recommended)", "description": ""}, {"label": "B) Skip"}]


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path)


@pytest.fixture
def hook(monkeypatch, capfd, tmp_path):
    """``hook(name, stdin_bytes)`` runs ``plantune hook <name>`` in process: ``(code, out, err)``."""
    stdin_file = tmp_path / "stdin"
    opened = []

    def run(name, data):
        module, function = launch.COMMANDS["plantune"]
        __import__(module)
        stdin_file.write_bytes(data)
        opened.append(open(stdin_file, encoding="utf-8"))
        monkeypatch.setattr(sys, "stdin", opened[-1])
        try:
            code = getattr(sys.modules[module], function)(["hook", name])
        except SystemExit as e:
            code = e.code
        sys.stdout.flush()
        out, err = capfd.readouterr()
        return code, out, err

    yield run
    for f in opened:
        f.close()


@pytest.fixture
def never_ask(db_file):
    """Store a never-ask preference as `plantune pref set` would, for the repo's slug."""
    from toolkit.core import seeded_db
    from toolkit.store import db

    def set_pref(qid):
        conn = seeded_db.connect(db_file)
        with db.transaction(conn):
            conn.execute(
                "INSERT OR REPLACE INTO preferences (scope, question_id, preference, raw_value,"
                " source, updated_at) VALUES ('acme-web', ?, 'never-ask', NULL, 'plan-tune', ?)",
                (qid, db.utc_now()),
            )
        conn.close()

    return set_pref


def choices():
    return [(e["user_choice"], e["free_text"]) for e in events()]


def post(repo, questions, response, **kw):
    return hooks.post_tool_use(payload(questions, response, cwd=repo, **kw))


# --------------------------------------------------------------------------
# Answer shapes another host may send


@pytest.mark.parametrize(
    "response",
    [
        {"answers": {"Which cache?": "Redis", "Which database?": "MySQL"}},
        {"answers": {"0": "Redis", "1": "MySQL"}},  # keyed by position
        {"answers": ["Redis", "MySQL"]},  # an array of the labels
        {"answers": {"Which cache?": {"label": "Redis"}, "Which database?": {"label": "MySQL"}}},
        json.dumps({"answers": {"Which cache?": "Redis", "Which database?": "MySQL"}}),
        [  # MCP content blocks around the text Claude Code shows the model
            {
                "type": "text",
                "text": 'User has answered your questions: "Which cache?"="Redis", '
                '"Which database?"="MySQL". You can now continue',
            }
        ],
    ],
    ids=["by-text", "by-index", "array", "label-objects", "json-text", "content-blocks"],
)
def test_every_answer_shape_records_the_chosen_labels(repo, state_root, response):
    assert post(repo, [CACHE, DB], response) == ["inserted", "inserted"]
    assert choices() == [("Redis", None), ("MySQL", None)]
    assert error_log(state_root) == ""


@pytest.mark.parametrize("cwd", ["/tmp/a\x00b", "x" * 100_000, 5, "..", "/etc/passwd", None])
def test_any_cwd_keeps_the_answer(repo, monkeypatch, cwd):
    monkeypatch.delenv("GSTACK_PROJECT_SLUG", raising=False)
    data = answered(repo)
    data["cwd"] = cwd
    assert hooks.post_tool_use(data) == ["inserted"]
    assert choices() == [("Redis", None)]


@pytest.mark.parametrize("response", [None, "", {}, {"answers": {}}], ids=repr)
def test_answers_only_in_the_tool_input_are_read(repo, response):
    data = payload([CACHE, DB], response, cwd=repo)
    data["tool_input"]["answers"] = {"Which cache?": "Redis", "Which database?": "MySQL"}
    assert hooks.post_tool_use(data) == ["inserted", "inserted"]
    assert choices() == [("Redis", None), ("MySQL", None)]


def test_unknown_fields_and_field_order_change_nothing(repo):
    data = payload([CACHE], {"answers": {"Which cache?": "Redis"}}, cwd=repo)
    data = dict(reversed(list(data.items())))
    data["tool_input"]["questions"][0]["future_field"] = {"x": [1, 2]}
    data["brand_new_field"] = "hi"
    for key in ("transcript_path", "permission_mode", "hook_event_name"):
        del data[key]
    assert hooks.post_tool_use(data) == ["inserted"]
    assert choices() == [("Redis", None)]


@pytest.mark.parametrize("answer", [["A", "C"], "A, C", "A,C"])
def test_a_multi_select_answer_is_the_chosen_options_not_free_text(repo, answer):
    q = question("Which checks?", ["A", "B", "C"], multiSelect=True)
    post(repo, [q], {"answers": {"Which checks?": answer}})
    [ev] = events()
    assert ev["free_text"] is None and ev["source"] == "hook"
    assert ev["user_choice"].replace(" ", "") == "A,C"


@pytest.mark.parametrize("answer", [["A", "my own"], "A, my own"], ids=["list", "joined"])
def test_other_text_in_a_multi_select_answer_is_free_text_in_either_shape(repo, answer):
    q = question("Which checks?", ["A", "B", "C"], multiSelect=True)
    post(repo, [q], {"answers": {"Which checks?": answer}})
    assert choices() == [("A, my own", "A, my own")]


def test_other_free_text_empty_options_and_four_questions(repo):
    qs = [
        CACHE,
        question("Anything else?", []),
        question("Which port?", ["80", "443"]),
        question("Why?", ["Because"]),
    ]
    response = {
        "answers": {
            "Which cache?": "Use SQLite instead",
            "Anything else?": "no",
            "Which port?": "443",
            "Why?": "Because",
        }
    }
    assert post(repo, qs, response) == ["inserted"] * 4
    assert choices() == [
        ("Use SQLite instead", "Use SQLite instead"),
        ("no", None),
        ("443", None),
        ("Because", None),
    ]
    assert [e["question_index"] for e in events()] == [0, 1, 2, 3]


# --------------------------------------------------------------------------
# Encodings and sizes: exit 0, no traceback, the answer kept


def answered(repo, text="Which cache?", answer="Redis"):
    return payload([question(text, ["Redis", "Memcached"])], {"answers": {text: answer}}, cwd=repo)


@pytest.mark.parametrize(
    "encode",
    [
        lambda d: b"\xef\xbb\xbf" + json.dumps(d).encode(),  # a UTF-8 BOM
        lambda d: json.dumps(d, indent=2).encode("utf-8"),
        lambda d: json.dumps(d).replace('"Redis"', '"Redis", "tool_name": "Bash"', 0).encode(),
    ],
    ids=["bom", "indented", "plain"],
)
def test_a_payload_in_any_utf8_spelling_is_recorded(hook, repo, state_root, encode):
    code, out, err = hook("post-tool-use", encode(answered(repo)))
    assert (code, out, err) == (0, "", "")
    assert choices() == [("Redis", None)]


def test_lone_surrogates_and_invalid_utf8_lose_no_answer(hook, repo, state_root):
    data = answered(repo, text="Which cache \ud800?", answer="Red\udc80is")
    data["session_id"] = "s\udfff"
    code, out, err = hook("post-tool-use", json.dumps(data).encode())  # escaped: \\ud800
    assert (code, out, err) == (0, "", "")
    other = answered(repo, text="Which db?", answer="Postgres") | {"tool_use_id": "tu-2"}
    other = json.dumps(other).encode()
    code, out, err = hook("post-tool-use", other.replace(b"Postgres", b"Post\xffgres"))
    assert (code, out, err) == (0, "", "")
    assert choices() == [("Red\ufffdis", "Red\ufffdis"), ("Post\ufffdgres", "Post\ufffdgres")]
    assert "Traceback" not in error_log(state_root)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"   \n",
        b"null",
        b"[1, 2]",
        b'{"tool_name": "AskUserQuestion", "tool_input": {"questions": [NaN]}}',
        b'{"tool_name": "AskUserQuestion", "tool_input": ' + b"[" * 100_000 + b"]" * 100_000,
        b'{"tool_name": "AskUserQuestion", "tool_input": {"questions": "Which?"}}',
        b"\xff\xfe{\x00",
    ],
    ids=["empty", "blank", "null", "array", "nan", "deep", "questions-string", "utf16"],
)
@pytest.mark.parametrize("name", ["pre-tool-use", "post-tool-use", "post-tool-use-failure"])
def test_junk_exits_0_silently_and_writes_no_row(hook, state_root, name, raw):
    code, out, err = hook(name, raw)
    assert (code, out, err) == (0, "", "")
    assert events() == []
    assert "Traceback" not in error_log(state_root)


def test_duplicate_keys_read_as_claude_code_reads_them_the_last_wins(hook, repo):
    data = json.dumps(answered(repo))
    twice = data.replace('"tool_name": ', '"tool_name": "Bash", "tool_name": ', 1)
    assert hook("post-tool-use", twice.encode())[:2] == (0, "")
    assert choices() == [("Redis", None)]


# --------------------------------------------------------------------------
# Re-delivery: recorded once


@pytest.mark.parametrize("tool_use_id", ["tu-1", None, 7], ids=["id", "no-id", "number-id"])
def test_a_redelivered_answer_is_recorded_once(repo, tool_use_id):
    data = answered(repo)
    if tool_use_id is None:
        del data["tool_use_id"]
    else:
        data["tool_use_id"] = tool_use_id
    assert hooks.post_tool_use(data) == ["inserted"]
    assert hooks.post_tool_use(json.loads(json.dumps(data))) != ["inserted"]
    assert len(events()) == 1


def permission(questions, answers, *, cwd):
    p = payload(questions, cwd=cwd, event="PermissionRequest")
    del p["tool_use_id"]
    p["tool_input"]["answers"] = answers
    return p


@pytest.mark.parametrize("where", ["tool-input", "tool-response", "reordered"], ids=lambda w: w)
def test_a_permission_request_then_its_post_tool_use_is_recorded_once(repo, where):
    answers = {"Which cache?": "Redis", "Which database?": "MySQL"}
    assert hooks.permission_request(permission([CACHE, DB], answers, cwd=repo)) is None
    later = payload([CACHE, DB], {"questions": [CACHE, DB], "answers": answers}, cwd=repo)
    if where == "tool-input":
        later["tool_input"]["answers"] = answers
    if where == "reordered":
        later["tool_input"]["questions"] = [
            dict(reversed(list(q.items()))) | {"preview_shown": True} for q in (CACHE, DB)
        ]
        later["tool_input"]["answers"] = dict(reversed(list(answers.items())))
    assert hooks.post_tool_use(later) == ["duplicate", "duplicate"]
    assert choices() == [("Redis", None), ("MySQL", None)]


def test_a_cancel_then_an_answered_re_ask_keeps_both_and_the_cancel_is_no_answer(repo):
    cancel = payload([CACHE], cwd=repo, event="PostToolUseFailure")
    cancel |= {"error": "The user doesn't want to proceed", "is_interrupt": True}
    assert hooks.post_tool_use_failure(cancel) == ["inserted"]
    assert hooks.post_tool_use_failure(cancel) != ["inserted"]  # re-delivered
    assert post(repo, [CACHE], {"answers": {"Which cache?": "Redis"}}, tool_use_id="tu-2") == [
        "inserted"
    ]
    assert choices() == [("__cancelled__", None), ("Redis", None)]
    from tests.helpers.hotpath import db_rows

    rows = db_rows("SELECT answered FROM question_events ORDER BY id")
    assert [r["answered"] for r in rows] == [0, 1]


@pytest.mark.xfail(
    strict=True,
    reason="known gap: the dedup window (source, tool_use_id, position) takes an answer"
    " sent after a cancel of the same call for a re-delivery; Claude Code never sends both",
)
def test_a_late_answer_after_a_cancel_of_the_same_call_is_kept(repo):
    cancel = payload([CACHE], cwd=repo, event="PostToolUseFailure")
    cancel |= {"error": "interrupted", "is_interrupt": True}
    hooks.post_tool_use_failure(cancel)
    assert post(repo, [CACHE], {"answers": {"Which cache?": "Redis"}}) == ["inserted"]
    assert "Redis" in [c for c, _ in choices()]


def test_another_tool_passes_through_and_writes_nothing(hook, repo, state_root):
    for name in ("pre-tool-use", "post-tool-use", "post-tool-use-failure", "permission-request"):
        data = payload([CACHE], {"answers": {"Which cache?": "Redis"}}, cwd=repo, tool="Bash")
        assert hook(name, json.dumps(data).encode()) == (0, "", "")
    assert not (state_root / "plantune.db").exists()


# --------------------------------------------------------------------------
# A one-way door, whatever the spelling, is never auto-decided


def pre(repo, questions):
    return hooks.pre_tool_use(payload(questions, cwd=repo, event="PreToolUse"))


def test_the_two_way_baseline_is_auto_decided(repo, never_ask):
    never_ask("ship-pre-landing-review-fix")
    assert "auto-decide" in pre(repo, [{"question": FIX, "options": FIX_OPTIONS}])


@pytest.mark.parametrize(
    "change",
    [
        {"options": [FIX_OPTIONS[0] | {"preview": "DROP TABLE users; -- in production"}]},
        {"options": [FIX_OPTIONS[0] | {"markdown": "rm -rf the production bucket"}]},
        {"options": [FIX_OPTIONS[0] | {"description": "Drops the production users table"}]},
        {"header": "Force-push to main"},
        {"question": FIX + " Also <gstack-qid:review-sql-safety>"},
        {"question": FIX.replace("ship-pre", "SHIP-PRE") + " Drop the production database?"},
        {"question": FIX + " Dr\u043ep the pr\u043eduction database?"},  # Cyrillic o
        {"question": FIX + " Dr\u00adop the production\u200b database?"},
        {"question": FIX + " \u202eesabatad noitcudorp eht porD"},  # shown right to left
        {"options": [FIX_OPTIONS[0] | {"preview": "\u2067rm -rf /srv/prod\u2069"}]},
    ],
    ids=[
        "preview",
        "markdown",
        "description",
        "header",
        "second-marker",
        "shouted",
        "homoglyph",
        "invisible",
        "rtl-override",
        "rtl-isolate",
    ],
)
def test_a_one_way_door_in_any_part_is_never_auto_decided(repo, never_ask, change):
    never_ask("ship-pre-landing-review-fix")
    q = {"question": FIX, "options": FIX_OPTIONS + [{"label": "C) Later"}]} | change
    if "options" in change:
        q["options"] = change["options"] + FIX_OPTIONS[1:]
    assert pre(repo, [q]) is None
    assert events() == []


@pytest.mark.parametrize("qid", ["review-sql-safety", "REVIEW-SQL-SAFETY"])
def test_a_one_way_id_with_a_never_ask_preference_is_asked(repo, never_ask, qid):
    never_ask("review-sql-safety")
    q = {"question": f"Raw SQL here. <gstack-qid:{qid}>", "options": FIX_OPTIONS}
    assert pre(repo, [q]) is None
    assert (
        hooks.permission_request(
            permission([q], {q["question"]: "A) Fix now (recommended)"}, cwd=repo)
        )
        is None
    )


def test_a_redelivered_auto_decision_is_recorded_once(repo, never_ask):
    never_ask("ship-pre-landing-review-fix")
    q = {"question": FIX, "options": FIX_OPTIONS}
    first, again = pre(repo, [q]), pre(repo, [q])
    assert first == again and "auto-decide" in first  # the same answer both times
    assert [e["source"] for e in events()] == ["auto-decided"]
