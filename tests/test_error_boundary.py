"""The one error boundary every console script runs through (toolkit.core.errors)."""

import ast
import os
import subprocess
import sys

import pytest

from tests.helpers import REPO_ROOT
from toolkit import launch
from toolkit.core.errors import Refused, run_script


def _boom(args):
    raise ValueError("boom\n  happened")


def test_a_refusal_prints_its_line_and_exits_with_its_code(capsys):
    def refuse(args):
        raise Refused("source is not user-originated", 2)

    assert run_script("prog", refuse, []) == 2
    assert capsys.readouterr().err == "prog: source is not user-originated\n"
    assert run_script("plantune", refuse, [], refusal="Error: {message}") == 2
    assert capsys.readouterr().err == "Error: source is not user-originated\n"


def test_a_refusal_already_said_prints_nothing_more(capsys):
    def refuse(args):
        raise Refused(exit_code=3)

    assert run_script("prog", refuse, []) == 3
    assert capsys.readouterr().err == ""


def test_an_unexpected_error_is_one_line_exit_1(capsys, monkeypatch):
    monkeypatch.delenv("PLANTUNE_DEBUG", raising=False)
    assert run_script("prog", _boom, []) == 1
    assert capsys.readouterr().err == "prog: internal error: ValueError: boom happened\n"


def test_debug_shows_the_traceback_instead(monkeypatch):
    monkeypatch.setenv("PLANTUNE_DEBUG", "1")
    with pytest.raises(ValueError, match="boom"):
        run_script("prog", _boom, [])


def test_an_interrupt_exits_130(capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    assert run_script("prog", interrupted, []) == 130
    assert capsys.readouterr().err == "prog: interrupted\n"


def test_a_custom_report_decides_the_exit_code(monkeypatch):
    # the hooks' report: log, exit 0, never raise (even under PLANTUNE_DEBUG)
    monkeypatch.setenv("PLANTUNE_DEBUG", "1")
    seen = []
    assert run_script("hook", _boom, [], crash=lambda prog, e: seen.append(str(e)) or 0) == 0
    assert seen == ["boom\n  happened"]


def test_the_arguments_and_exit_code_of_a_real_process(tmp_path):
    code = (
        "import sys\nfrom toolkit.core.errors import run_script\n"
        "run_script('prog', lambda args: print(args) or int(args[0]))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, "7"], capture_output=True, text=True, cwd=REPO_ROOT
    )
    assert (p.returncode, p.stdout, p.stderr) == (7, "['7']\n", "")


def test_a_reader_that_goes_away_is_a_quiet_exit():
    # `... | head -1`: the broken pipe is neither a traceback nor an error line
    code = (
        "from toolkit.core.errors import run_script\n"
        "def run(args):\n"
        "    for i in range(200000):\n"
        "        print('line', i)\n"
        "    return 0\n"
        "run_script('prog', run)\n"
    )
    p = subprocess.run(
        f'{sys.executable} -c "{code}" | head -1',
        shell=True,
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert p.stdout == "line 0\n"
    assert p.stderr == ""


def test_every_console_command_enters_through_the_boundary():
    # Each command's entry function calls run_script (directly or through its click app).
    for name, (module, function) in launch.COMMANDS.items():
        __import__(module)
        path = sys.modules[module].__file__
        tree = ast.parse(open(path, encoding="utf-8").read())
        entry = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
        calls = {
            c.func.id if isinstance(c.func, ast.Name) else getattr(c.func, "attr", None)
            for c in ast.walk(entry)
            if isinstance(c, ast.Call)
        }
        assert calls & {"run_script", "_main", "click_main"}, (name, calls)


def test_no_other_module_writes_its_own_boundary():
    # PLANTUNE_DEBUG is read in one place, and "interrupted" is printed in one place.
    here = os.path.join(REPO_ROOT, "toolkit")
    holders = []
    for folder, _, names in os.walk(here):
        for n in names:
            if n.endswith(".py"):
                text = open(os.path.join(folder, n), encoding="utf-8").read()
                if "PLANTUNE_DEBUG" in text or ': interrupted"' in text:
                    holders.append(os.path.relpath(os.path.join(folder, n), here))
    assert holders == [os.path.join("core", "errors.py")]
