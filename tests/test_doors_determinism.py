"""A door verdict never depends on the process: the same text gets the same door, reason
and rule whatever Python's hash seed (sets and dicts iterate in another order) and whether
the families' index is in use yet."""

import json
import os
import subprocess
import sys

from tests.helpers import REPO_ROOT

SCRIPT = r"""
import glob, json, sys
from toolkit.core.doors import classify
texts = []
for path in sorted(glob.glob("tests/fixtures/doors/**/*.jsonl", recursive=True)):
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                text = json.loads(line).get("text")
            except ValueError:
                continue
            if isinstance(text, str):
                texts.append(text)
texts = texts[:: int(sys.argv[1])]
if sys.argv[2] == "reversed":
    texts.reverse()  # the index comes in after some texts: others are read before it
verdicts = {t: list(classify(t)) for t in texts}
json.dump(verdicts, sys.stdout)
"""


def _verdicts(seed, order, step=4):
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(step), order],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        check=True,
    ).stdout
    return json.loads(out)


def test_verdicts_do_not_depend_on_the_hash_seed_or_the_order_texts_are_read():
    first = _verdicts(0, "forward")
    assert len(first) > 1000
    for seed, order in ((1, "forward"), (2, "reversed"), (12345, "reversed")):
        other = _verdicts(seed, order)
        differ = [t for t in first if first[t] != other[t]]
        assert not differ, differ[:5]
