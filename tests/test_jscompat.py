"""The one JS-compat module: each JS behaviour once, named for what it does."""

import ast
import json
import os
import subprocess

import pytest

from tests.helpers import REPO_ROOT, script
from tests.helpers.hotpath import env
from toolkit.core import jscompat

# Helpers of these shapes belong in toolkit/core/jscompat.py only.
JS_NAMES = {
    "js_number",
    "_js_string",
    "js_string",
    "_js_falsy",
    "js_truthy",
    "_js_len",
    "_is_array_index",
    "js_to_number",
    "round3",
    "js_trim",
    "utf16_len",
    "truncate",
}


def test_no_module_keeps_its_own_js_helper():
    here = os.path.join(REPO_ROOT, "toolkit")
    found = []
    for folder, _, names in os.walk(here):
        for n in names:
            if n.endswith(".py") and n != "jscompat.py":
                tree = ast.parse(open(os.path.join(folder, n), encoding="utf-8").read())
                found += [
                    f"{n}:{d.name}"
                    for d in ast.walk(tree)
                    if isinstance(d, ast.FunctionDef) and d.name in JS_NAMES
                ]
    assert found == []


@pytest.mark.parametrize(
    "value, text",
    [
        ("x", "x"),
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (1.0, "1"),
        (1e-7, "1e-7"),
        (2**60, "1152921504606847000"),
        ([1, None, [False, "a"]], "1,,false,a"),
        ({}, "[object Object]"),
    ],
)
def test_value_string_is_js_string(value, text):
    assert jscompat.value_string(value) == text


def test_the_profile_formatter_keeps_integers_whole():
    assert jscompat.number_string(2**60) == "1152921504606847000"
    assert jscompat.number_string(2**53 + 1) == "9007199254740992"  # the double JS holds
    assert jscompat.number_string_exact_ints(2**53 + 1) == "9007199254740993"
    assert (
        jscompat.value_string([2**53 + 1], jscompat.number_string_exact_ints) == "9007199254740993"
    )


def test_is_falsy_is_js_not():
    assert [jscompat.is_falsy(v) for v in (None, False, "", 0, 0.0, float("nan"))] == [True] * 6
    assert [jscompat.is_falsy(v) for v in ([], {}, "0", True, 0.1)] == [False] * 5


def test_array_index_keys_are_ascii_digits_only():
    assert jscompat.in_property_order({"b": 1, "\u0663": 2, "2": 3}) == {
        "2": 3,
        "b": 1,
        "\u0663": 2,
    }
    assert list(jscompat.in_property_order({"b": 1, "\u0663": 2, "2": 3})) == ["2", "b", "\u0663"]


@pytest.mark.parametrize(
    "source, shown",
    [([False], "false"), (1e-7, "1e-7"), (True, "true"), ({"a": 1}, "[object Object]")],
)
def test_a_refused_source_is_shown_as_gstack_shows_it(state_root, source, shown):
    # gstack builds this message with a template literal: String(source)
    payload = json.dumps(
        {"question_id": "ship-changelog-voice-polish", "preference": "never-ask", "source": source}
    )
    p = subprocess.run(
        [script("gstack-question-preference"), "--write", payload],
        capture_output=True,
        text=True,
        env=env(),
    )
    assert p.returncode == 2
    assert p.stderr == (
        f'gstack-question-preference: rejected — source "{shown}" is not '
        "user-originated (profile poisoning defense)\n"
    )
