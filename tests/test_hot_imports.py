"""What the hot-path commands import, and that the lazy pattern lists that keep
start-up fast decide exactly what the eagerly compiled lists would."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import script
from tests.helpers.hotpath import env
from toolkit.core import doors, jscompat, screening

ROOT = Path(__file__).resolve().parent.parent
HEAVY = {"pandas", "numpy", "datasette", "nbclient", "matplotlib"}
EVENT = json.dumps(
    {
        "skill": "ship",
        "question_id": "ship-changelog-voice-polish",
        "question_summary": "Polish the changelog voice?",
        "user_choice": "accept",
        "recommended": "accept",
        "tool_use_id": "t1",
    }
)
PREF = json.dumps(
    {
        "question_id": "ship-changelog-voice-polish",
        "preference": "never-ask",
        "source": "plan-tune",
        "free_text": "noise",
    }
)

COMMANDS = [
    ("gstack-question-log", [EVENT]),
    ("gstack-question-log", [EVENT]),  # the DEDUP path
    ("gstack-question-log", ["{bad"]),
    ("gstack-question-preference", ["--write", PREF]),
    ("gstack-question-preference", ["--check", "ship-changelog-voice-polish"]),
    ("gstack-question-preference", ["--check", "adhoc-q", "--summary-stdin"]),
    ("gstack-question-preference", ["--read"]),
    ("gstack-question-preference", ["--stats"]),
    ("gstack-question-preference", ["--clear", "x"]),
    ("plantune", ["check", "ship-changelog-voice-polish"]),
    ("plantune", ["log", EVENT.replace("t1", "t2")]),
]


def imported_modules(name, args, environ, stdin="Drop the users table?"):
    p = subprocess.run(
        # As the installed launcher starts it: isolated, without site.
        [script("python"), "-I", "-S", "-X", "importtime", script(name)] + args,
        input=stdin,
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
    )
    assert p.returncode in (0, 1), p.stderr
    mods = set()
    for line in p.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            mods.add(line.rsplit("|", 1)[1].strip())
    assert mods, p.stderr
    return mods


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """Modules loaded by each command, run in order against one fresh state root."""
    root = tmp_path_factory.mktemp("hot")
    # Module scope runs before conftest's per-test isolation, so isolate explicitly.
    environ = env(
        HOME=str(root),
        GSTACK_STATE_ROOT=str(root),
        GSTACK_HOME=str(root),
        PLANTUNE_DB=str(root / "plantune.db"),
        GSTACK_QUESTION_LOG_NO_DERIVE="1",
        PLANTUNE_MIRROR=None,
    )
    subprocess.run([script("plantune"), "init"], env=environ, check=True, capture_output=True)
    return [(name, args, imported_modules(name, args, environ)) for name, args in COMMANDS]


def _top(mods):
    return {m.split(".")[0] for m in mods}


def test_no_heavy_library_on_the_hot_path(loaded):
    for name, args, mods in loaded:
        assert not (_top(mods) & HEAVY), (name, args[:1], _top(mods) & HEAVY)


def test_no_click_on_the_compat_scripts_or_the_plantune_fast_path(loaded):
    for name, args, mods in loaded:
        assert "click" not in _top(mods), (name, args[:1])


def test_hot_path_stays_lean(loaded):
    # Each of these cost a millisecond or more per call (OpenSSL via hashlib, the datetime
    # and sqlite3 package layers, subprocess); the hot path needs none of them. The json
    # package is not needed either to log or to check (json_lite), only to write prefs.
    # Nor importlib.resources (pathlib, zipfile, tempfile): toolkit.store.resources finds the
    # bundled schema from the package's own folder instead.
    lean = {
        "hashlib",
        "datetime",
        "sqlite3",
        "subprocess",
        "typing",
        "decimal",
        "importlib.resources",
        "pathlib",
        "zipfile",
    }
    for i, (name, args, mods) in enumerate(loaded):
        banned = lean | ({"json"} if i in (0, 1, 4, 5, 9, 10) else set())
        # Nor is ``re`` (several ms to import) to check without a summary or to spot a
        # duplicate, once the project slug is cached (the first call may read a git config
        # to find it). A newly logged question's summary is read by the door classifier,
        # whose tokenizer is a regex.
        banned |= {"re"} if i in (1, 4, 9) else set()
        assert not (mods & banned), (name, args[:1], mods & banned)


def test_a_check_no_door_can_change_reads_no_door(loaded):
    # With no preference the answer is ASK_NORMALLY whatever the door (a one-way summary
    # included), so the rules are not loaded; a silencing preference still reads them.
    rules = {"toolkit.core.doors", "toolkit.core.door_checks", "toolkit.core.door_engine"}
    _, _, no_preference = loaded[5]  # --check adhoc-q --summary-stdin "Drop the users table?"
    _, _, never_ask = loaded[4]  # --check of an id with a never-ask preference
    assert not (no_preference & rules)
    assert "toolkit.core.door_checks" in never_ask


def test_hot_path_imports_no_functools_collections_enum_or_re(loaded):
    # functools and collections (the sqlite3 C module takes functools.lru_cache; namedtuple),
    # enum and re (a regex tokenizer, git config parsing) cost a hook process 2-5 ms
    # together, as much as the rest of a check. Only the json package (a bad line's error
    # message, the preference file's writer and reader) still brings re along.
    spare = {"functools", "collections", "enum", "re"}
    for i, (name, args, mods) in enumerate(loaded):
        if i not in (2, 3, 6):
            assert not (mods & spare), (name, args[:1], mods & spare)


QUESTION = "Polish it (the changelog: v1.2 -> v1.3)? <gstack-qid:ship-changelog-voice-polish>"


def hook_payload(event, tool_use_id):
    payload = {
        "session_id": "s1",
        "cwd": ".",
        "hook_event_name": event,
        "tool_name": "AskUserQuestion",
        "tool_use_id": tool_use_id,
        "tool_input": {
            "questions": [
                {"question": QUESTION, "options": ["A) Polish it (recommended)", "B) Ship as is"]}
            ]
        },
    }
    if event == "PostToolUse":
        payload["tool_response"] = {"answers": {QUESTION: "A) Polish it"}}
    return json.dumps(payload)


def test_hooks_import_no_functools_collections_enum_or_re(tmp_path):
    # Run from this checkout (a git repository, as an agent's project is): the developer's
    # email is read from its config, and the question's punctuation goes to the tokenizer.
    environ = env(
        HOME=str(tmp_path),
        GSTACK_STATE_ROOT=str(tmp_path),
        GSTACK_HOME=str(tmp_path),
        PLANTUNE_DB=str(tmp_path / "plantune.db"),
        GSTACK_QUESTION_LOG_NO_DERIVE="1",
        PLANTUNE_MIRROR=None,
    )
    subprocess.run([script("plantune"), "init"], env=environ, check=True, capture_output=True)
    for event, sub in (("PreToolUse", "pre-tool-use"), ("PostToolUse", "post-tool-use")):
        mods = imported_modules(
            "plantune", ["hook", sub], environ, stdin=hook_payload(event, "tu-1")
        )
        # The answer's text is read for the record; a pass-through (no preference) cannot
        # depend on the question's door, so it spares itself the classifier.
        rule_modules = {m for m in mods if m.startswith("toolkit.core.door_")}
        assert ("toolkit.core.door_reader" in mods) == (sub == "post-tool-use"), sub
        assert bool(rule_modules) == (sub == "post-tool-use"), (sub, rule_modules)
        assert not (mods & {"functools", "collections", "enum", "re", "hashlib"}), (
            sub,
            sorted(mods),
        )
    # gstack's question-log.jsonl now holds the first answer, read: its dedup window is
    # the database's, and the file is not read.
    mods = imported_modules(
        "plantune", ["hook", "post-tool-use"], environ, stdin=hook_payload("PostToolUse", "tu-2")
    )
    assert "toolkit.gstack.backlog" not in mods


def test_sqlite3_loads_without_functools_and_keeps_its_statement_cache():
    code = (
        "import sys\n"
        "from toolkit.store import db\n"
        "assert 'functools' not in sys.modules, 'functools imported'\n"
        "conn = db.sqlite3.connect(':memory:')\n"
        "conn.execute('CREATE TABLE t (x)')\n"
        "for i in range(300):\n"
        "    conn.execute('INSERT INTO t VALUES (?)', (i % 7,))\n"
        "    conn.execute(f'SELECT {i % 150}').fetchone()\n"
        "assert conn.execute('SELECT sum(x) FROM t').fetchone() == (sum(i % 7 for i in"
        " range(300)),)\n"
        "import functools\n"
        "assert functools.lru_cache(maxsize=2)(abs).cache_info().maxsize == 2\n"
        "assert functools.reduce(int.__add__, [1, 2, 3]) == 6\n"
        "print('ok')\n"
    )
    p = subprocess.run(
        [
            script("python"),
            "-I",
            "-S",
            "-c",
            f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + code,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.stdout.strip() == "ok", p.stderr


@settings(max_examples=3000, deadline=None)
@given(
    st.one_of(
        st.lists(
            st.sampled_from(
                list("abuvgorwxz09 -.?!;,$%#+=/:()'\"\t\u00e9\u0663\u00b2\u2028")
                + ["--", "o+w", "-rf", "v1.2.3", "::/0", "$ 5", "ug+rw", "/3"]
            ),
            max_size=16,
        ).map("".join),
        st.text(max_size=30),
    )
)
def test_door_tokenizer_follows_the_token_pattern(text):
    from toolkit.core import door_reader

    assert door_reader.tokens(text) == door_reader.token_pattern().findall(text)


CONFIG_PIECES = list('[]" \t\\.-aZ09=x#;\u00a0\u00e9\r') + [
    "remote",
    '"origin"',
    "url",
    " = ",
    '\\"',
    "[user]",
    "email",
]


@settings(max_examples=3000, deadline=None)
@given(
    st.one_of(
        st.lists(st.sampled_from(CONFIG_PIECES), max_size=14).map("".join), st.text(max_size=20)
    )
)
def test_git_config_reader_follows_its_patterns(line):
    from toolkit.store import paths

    line = line.replace("\n", "")  # the reader sees one line at a time
    m = re.match(paths._SECTION_RE, line)
    assert paths._section_header(line) == (m.groups() if m else None), line
    m = re.match(paths._KEY_RE, line)
    assert paths._key_line(line) == (m.groups() if m else None), line
    assert paths._unescape(line) == re.sub(r"\\(.)", r"\1", line), line


def test_the_launcher_starts_without_site(loaded):
    for name, args, mods in loaded:
        assert "site" not in mods and "toolkit.launch" in mods, (name, args[:1])


def test_other_commands_still_go_through_click():
    p = subprocess.run([script("plantune"), "--version"], capture_output=True, text=True, env=env())
    assert p.returncode == 0 and p.stdout.startswith("plantune, version")


# --- lazy pattern lists ------------------------------------------------------------------

LISTS = [screening.SHARED_PATTERNS, screening.PREFERENCE_FREE_TEXT_PATTERNS]


def eager_first(lazy, text):
    for i, source in enumerate(lazy.sources):
        if re.compile(source, lazy.flags).search(text):
            return i
    return None


def test_every_pattern_starts_with_its_key():
    for lazy in LISTS:
        for source, key in zip(lazy.sources, lazy.keys):
            body = source[2:] if source.startswith("\\b") else source
            assert body.lower().startswith(key) and len(key) >= 2, (source, key)


def test_leading_word_rules():
    assert screening._leading_word(r"\bfoo\s+bar") == "foo"
    assert screening._leading_word(r"colou?r") == "colo"
    with pytest.raises(ValueError):
        screening._leading_word(r"\s+x")


WORDS = sorted(
    {k for lazy in LISTS for k in lazy.keys}
    | {
        "all",
        "previous",
        "instructions",
        "now",
        "are",
        "table",
        "-rf",
        "--force",
        "--hard",
        "-f",
        "-D",
        ".",
        "--",
        "api key",
        "tokens",
        "secret",
        "output no findings",
        "security",
        "report",
        "every",
        "this",
        "the rules",
        "change",
        "fork",
        "model change",
        "migration",
        "destroy",
        ":",
        "from",
        "on",
        "not",
        "push",
        "directory",
        "files",
        "DELETE",
        "Rm",
        "SYSTEM",
        "K\u212aX",
    }
)
SEPARATORS = [" ", "  ", "\n", "\t", "\u00a0", "", "-", ":", "x", "\u2028", "é"]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=8),
    st.booleans(),
)
def test_lazy_lists_agree_with_eager_compilation(parts, upper):
    text = "".join(w + s for w, s in parts)
    if upper:
        text = text.upper()
    folded = screening.js_space_fold(text)
    for lazy in LISTS:
        assert lazy.first_index(folded) == eager_first(lazy, folded), (text, lazy.keys)
    assert screening.has_injection(text) == (eager_first(LISTS[0], folded) is not None)


def test_lazy_list_behaves_like_a_tuple():
    shared = screening.SHARED_PATTERNS
    assert len(shared) == 13 and shared[-1].pattern == screening.SHARED_PATTERN_SOURCES[-1]
    assert [p.pattern for p in shared[1:3]] == list(screening.SHARED_PATTERN_SOURCES[1:3])
    both = shared + screening.PREFERENCE_FREE_TEXT_PATTERNS
    assert isinstance(both, tuple) and len(both) == 19
    assert len(() + shared) == 13
    with pytest.raises(AttributeError):
        doors.NO_SUCH_THING


# --- json_lite: json's C scanner and encoder without the json package ---------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES, st.booleans(), st.booleans(), st.sampled_from([None, (",", ":")]))
def test_json_lite_dumps_is_json_dumps(value, ensure_ascii, sort_keys, separators):
    from toolkit.store import json_lite

    assert json_lite.dumps(
        value, ensure_ascii=ensure_ascii, sort_keys=sort_keys, separators=separators
    ) == json.dumps(value, ensure_ascii=ensure_ascii, sort_keys=sort_keys, separators=separators)


def _outcome(fn, text):
    try:
        return ("ok", repr(fn(text)))
    except ValueError:
        return ("error",)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        JSON_VALUES.map(json.dumps),
        st.text(alphabet='{}[]":,. \t\n\r\ufeff0123456789-+eEaltrufnsINfinityNa\\u', max_size=30),
        st.tuples(
            JSON_VALUES.map(json.dumps), st.sampled_from(["", " ", "x", "}", "\n", " 1"])
        ).map("".join),
    )
)
def test_json_lite_loads_is_json_loads(text):
    from toolkit.store import json_lite

    def reject(name):
        raise ValueError(name)

    assert _outcome(
        lambda t: json_lite.loads(t, object_pairs_hook=dict, parse_constant=reject), text
    ) == _outcome(lambda t: json.loads(t, object_pairs_hook=dict, parse_constant=reject), text)
    assert _outcome(json_lite.loads, text) == _outcome(json.loads, text)


def test_json_lite_errors_before_json_is_imported():
    # the C scanner needs json.decoder in sys.modules to raise; json_lite must still raise
    code = (
        "import sys\nfrom toolkit.store import json_lite\nassert 'json' not in sys.modules\n"
        "for bad in ('{bad', '[1,', '{\"a\" 1}', 'nul'):\n"
        "    try:\n        json_lite.loads(bad)\n    except ValueError:\n        pass\n"
        "    else:\n        raise SystemExit(bad)\n"
    )
    p = subprocess.run([script("python"), "-c", code], capture_output=True, text=True, env=env())
    assert p.returncode == 0, p.stderr


def test_json_lite_edges():
    from toolkit.store import json_lite

    assert json_lite.loads(' {"a": 1, "a": 2} \n', object_pairs_hook=dict) == {"a": 2}
    for bad in ("", "   ", "{", "\ufeff{}", "{} {}", "[1,]", "nul"):
        with pytest.raises(ValueError):
            json_lite.loads(bad)
    with pytest.raises(RecursionError):
        json_lite.loads("[" * 100000)
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError):
        json_lite.dumps(loop)
    with pytest.raises(TypeError):
        json_lite.dumps({"a": object()})


HOOK_PAYLOAD = json.dumps(
    {
        "session_id": "s1",
        "cwd": "/",
        "hook_event_name": "PostToolUse",
        "tool_name": "AskUserQuestion",
        "tool_use_id": "tu-imports",
        "tool_input": {
            "questions": [
                {
                    "question": "Ship it? <gstack-qid:ship-todos-create>",
                    "options": ["A) Accept (recommended)", "B) Skip"],
                }
            ]
        },
        "tool_response": {"answers": {"Ship it? <gstack-qid:ship-todos-create>": "A) Accept"}},
    }
)


@pytest.mark.parametrize("event", ["pre-tool-use", "post-tool-use"])
def test_agent_hooks_load_neither_click_nor_heavy_libraries(tmp_path, event):
    environ = env(
        HOME=str(tmp_path),
        GSTACK_STATE_ROOT=str(tmp_path),
        GSTACK_HOME=str(tmp_path),
        PLANTUNE_DB=str(tmp_path / "plantune.db"),
        PLANTUNE_MIRROR=None,
        GSTACK_PROJECT_SLUG="imports",
    )
    subprocess.run([script("plantune"), "init"], env=environ, check=True, capture_output=True)
    mods = _top(imported_modules("plantune", ["hook", event], environ, stdin=HOOK_PAYLOAD))
    assert not (mods & (HEAVY | {"click"})), mods & (HEAVY | {"click"})
    if event == "post-tool-use":
        import sqlite3

        c = sqlite3.connect(str(tmp_path / "plantune.db"))
        assert c.execute("SELECT count(*) FROM question_log").fetchone()[0] == 1


@pytest.mark.parametrize(
    "payload",
    [
        {"tool_name": "Bash", "tool_input": {"command": "ls"}},
        {"tool_name": "AskUserQuestion", "tool_input": {"questions": []}},
    ],
    ids=["another-tool", "no-questions"],
)
def test_a_pre_tool_use_hook_that_passes_through_imports_no_question_rules(tmp_path, payload):
    # Most PreToolUse calls are another tool's: they read stdin and leave, without the
    # payload parser, the record builder, the question rules or the JS formatting.
    environ = env(
        HOME=str(tmp_path),
        GSTACK_STATE_ROOT=str(tmp_path),
        GSTACK_HOME=str(tmp_path),
        PLANTUNE_DB=str(tmp_path / "plantune.db"),
    )
    mods = imported_modules(
        "plantune", ["hook", "pre-tool-use"], environ, stdin=json.dumps(payload)
    )
    unused = {
        "toolkit.claude.payload",
        "toolkit.claude.records",
        "toolkit.claude.recorder",
        "toolkit.claude.auto_decide",
        "toolkit.core.questions",
        "toolkit.core.jscompat",
    }
    assert "toolkit.claude.hook_input" in mods and not (mods & unused), mods & unused


# --- the hook's marker search without a regex ---------------------------------------------

_MARKER_RE = re.compile(r"<gstack-qid:([a-z0-9-]{1,64})>", re.IGNORECASE)


def _marker_by_regex(text):
    m = _MARKER_RE.search(text)
    if not m:
        return None, jscompat.js_trim(text)
    return m.group(1).lower(), jscompat.js_trim(text[: m.start()] + text[m.end() :])


_marker_bits = st.sampled_from(
    [
        "<gstack-qid:",
        "<GSTACK-QID:",
        "<gstack-qid",
        ">",
        "<",
        ":",
        "ship-x",
        "A",
        "9",
        "-",
        " ",
        "\n",
        "x" * 63,
        "y" * 65,
        "\u212a",
        "\u017f",
        "é",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_marker_bits, max_size=8).map("".join))
def test_marker_search_matches_the_regex(text):
    from toolkit.claude import payload as claude_payload

    assert claude_payload.extract_marker(text) == _marker_by_regex(text)


def test_pre_tool_use_needs_neither_json_nor_hashlib(tmp_path):
    """(``re`` comes in with the door classifier, which reads the question's text.)"""
    payload = json.dumps(
        {
            "session_id": "s",
            "cwd": "/",
            "hook_event_name": "PreToolUse",
            "tool_name": "AskUserQuestion",
            "tool_use_id": "t",
            "tool_input": {
                "questions": [
                    {
                        "question": "Polish the changelog? <gstack-qid:ship-changelog-voice-polish>",
                        "options": ["A) Polish it (recommended)", "B) Ship as is"],
                    }
                ]
            },
        }
    )
    environ = env(
        HOME=str(tmp_path),
        GSTACK_STATE_ROOT=str(tmp_path),
        GSTACK_HOME=str(tmp_path),
        PLANTUNE_DB=str(tmp_path / "plantune.db"),
    )
    subprocess.run([script("plantune"), "init"], env=environ, check=True, capture_output=True)
    mods = imported_modules("plantune", ["hook", "pre-tool-use"], environ, stdin=payload)
    assert not (mods & {"json", "hashlib"}), mods & {"json", "hashlib"}


HOOK_PIECES = list(" \t\n\u00a0aZk9_.-():]/\u00e9\u212a") + [
    "A)",
    "12.",
    "123:",
    "mcp__",
    "__AskUserQuestion",
    "(recommended)",
    "x" * 70,
]


@settings(max_examples=3000, deadline=None)
@given(
    st.one_of(
        st.lists(st.sampled_from(HOOK_PIECES), max_size=10).map("".join), st.text(max_size=20)
    )
)
def test_hook_string_readers_follow_their_patterns(text):
    from toolkit.claude import auto_decide, hook_input
    from toolkit.claude import payload as claude_payload

    def pattern(name):
        source, flag = claude_payload._PATTERNS[name]
        return re.compile(source, getattr(re, flag) if flag else 0)

    mcp_tool = re.compile(hook_input.MCP_TOOL_PATTERN, re.DOTALL)
    assert hook_input._is_mcp_ask_tool(text) == bool(mcp_tool.fullmatch(text)), text
    m = pattern("letter_prefix").match(text)
    assert claude_payload.letter_prefix_end(text) == (m.end() if m else None), text
    assert claude_payload.slug_words(text) == pattern("non_slug").sub("-", text), text
    assert auto_decide._safe_component(text) == (
        bool(pattern("safe_component").fullmatch(text)) and text not in (".", "..")
    ), text


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES, st.booleans())
def test_json_lite_indented_dumps_is_json_dumps(value, ensure_ascii):
    from toolkit.store import json_lite

    assert json_lite.dumps(value, indent=2, ensure_ascii=ensure_ascii) == json.dumps(
        value, indent=2, ensure_ascii=ensure_ascii
    )


def test_json_lite_indented_dumps_keys_and_refusals():
    from toolkit.store import json_lite

    value = {1: None, 2.5: {}, None: [1.0, float("inf")], "k": (1, "é")}
    assert json_lite.dumps(value, indent=2) == json.dumps(value, indent=2)
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError):
        json_lite.dumps(loop, indent=2)
    with pytest.raises(TypeError):
        json_lite.dumps({(1, 2): 3}, indent=2)
    with pytest.raises(TypeError):
        json_lite.dumps([object()], indent=2)


@settings(max_examples=2000, deadline=None)
@given(
    st.one_of(
        st.floats(allow_nan=False, allow_infinity=False),
        st.integers(-(10**6), 10**6),
        st.integers(-(10**9), 10**9).map(lambda n: n / 2000),
        st.integers(-(10**9), 10**9).map(lambda n: n / 1000),
    )
)
def test_round3_is_decimal_half_up(x):
    from decimal import ROUND_HALF_UP, Decimal

    from toolkit.core.profile import round3

    try:
        expected = float(Decimal(x).quantize(Decimal("0.001"), ROUND_HALF_UP))
    except ArithmeticError as e:  # too many digits for decimal's precision: the same error
        with pytest.raises(type(e)):
            round3(x)
        return
    got = round3(x)
    assert got == expected and str(got) == str(expected), (x, got, expected)


def test_derive_imports_no_json_hashlib_decimal_or_re(tmp_path):
    environ = env(
        HOME=str(tmp_path),
        GSTACK_STATE_ROOT=str(tmp_path),
        GSTACK_HOME=str(tmp_path),
        PLANTUNE_DB=str(tmp_path / "plantune.db"),
        GSTACK_QUESTION_LOG_NO_DERIVE="1",
        PLANTUNE_MIRROR=None,
    )
    subprocess.run([script("plantune"), "init"], env=environ, check=True, capture_output=True)
    subprocess.run(
        [script("gstack-question-log"), EVENT], env=environ, check=True, capture_output=True
    )
    mods = imported_modules("gstack-developer-profile", ["--derive"], environ)
    assert "toolkit.gstack.compat_profile" in mods
    assert not (mods & {"json", "hashlib", "decimal", "re"}), sorted(
        mods & {"json", "hashlib", "decimal", "re"}
    )


def test_session_start_hook_stays_lean(tmp_path):
    """The SessionStart hook runs at every session start: with nothing to re-link it reads
    one small file and stats the bins, importing neither click nor hashlib nor json."""
    environ = env(
        HOME=str(tmp_path),
        GSTACK_STATE_ROOT=str(tmp_path),
        GSTACK_HOME=str(tmp_path),
        PLANTUNE_DB=str(tmp_path / "plantune.db"),
        PLANTUNE_MIRROR=None,
    )
    bin_dir = tmp_path / "gstack" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "gstack-question-log").write_text("#!/bin/sh\n")
    stamp = os.stat(bin_dir / "gstack-question-log")
    record = {
        "installs": {
            str(tmp_path / "gstack"): {
                "bins": {
                    "gstack-question-log": [stamp.st_ino, stamp.st_size, stamp.st_mtime_ns],
                    "gstack-question-preference": None,
                    "gstack-developer-profile": None,
                    "gstack-builder-profile": None,
                }
            }
        }
    }
    (tmp_path / "gstack-links.json").write_text(json.dumps(record))
    payload = json.dumps({"hook_event_name": "SessionStart", "source": "startup"})
    mods = imported_modules("plantune", ["hook", "session-start"], environ, stdin=payload)
    assert "toolkit.gstack.link" in mods and "toolkit.claude.hooks" not in mods
    assert not (_top(mods) & (HEAVY | {"click"}))
    assert not (mods & {"hashlib", "json", "subprocess", "shlex", "sqlite3", "shutil"})
