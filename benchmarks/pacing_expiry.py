"""What the idle-session check adds to `pacing rank`: in-process, 10 findings a call.

Each call ranks a new session (its own chain) in a database that already holds 2,000
ranked sessions, so the look-ups run against a realistic table. Timed: whole
ranking calls (check included), and the check alone (the session and chain look-ups in a
write transaction of their own, which over-counts it), best of 5 rounds; the ratio says
what the check adds to a ranking.

Usage: python benchmarks/pacing_expiry.py [--calls N]
"""

import argparse
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from toolkit.core import seeded_db  # noqa: E402
from toolkit.pacing import rank as pacing  # noqa: E402
from toolkit.store import db  # noqa: E402


def request(session, n=10):
    findings = [
        {
            "id": f"{session}-f{i}",
            "summary": f"Finding {i}",
            "severity": i % 3,
            "irreversibility": 1,
            "decision_matters": (i * 7) % 3,
            "recommended": "fix",
            "options": ["fix", "defer"],
        }
        for i in range(n)
    ]
    return {"session_id": session, "phase": "eng", "findings": findings}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    conn = seeded_db.connect(os.path.join(tempfile.mkdtemp(prefix="plantune-exp-"), "p.db"))
    for i in range(2000):
        pacing.rank(conn, request(f"warm-{i}"), "proj")
    ranks, checks = [], []
    for r in range(5):
        t = time.perf_counter()
        for c in range(args.calls):
            pacing.rank(conn, request(f"r{r}-{c}"), "proj")
        ranks.append((time.perf_counter() - t) / args.calls)
        now = db.utc_now()
        t = time.perf_counter()
        for c in range(args.calls):
            sid = f"warm-{(c * 7) % 2000}"
            with db.transaction(conn):
                pacing.close_idle(conn, "proj", sid, sid, now, 120)
        checks.append((time.perf_counter() - t) / args.calls)
    rank_t, check_t = min(ranks), min(checks)
    print(
        f"pacing rank, 10 findings, in-process: {1e6 * rank_t:.0f} us per call (best of 5, check included)"
    )
    print(
        f"the expiry check alone (session and chain look-ups, in a write transaction): "
        f"{1e6 * check_t:.0f} us per call"
    )
    print(f"rank with the check / rank without it: {rank_t / max(rank_t - check_t, 1e-9):.3f}x")


if __name__ == "__main__":
    main()
