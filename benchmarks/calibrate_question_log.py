"""Calibrating from the question log: share asked, out-of-time share and override recall
against a random rule, on generated gstack histories of two shapes; and how long it takes.

For each generator (tests/gstack_history.py: registry-driven and ad-hoc) and seed, a gstack
state root is written, ingested with `plantune ingest`'s importer and calibrated with
``calibrate.run_question_log`` holding out the last 30 days. Reported per run: the share
asked on the fit data and on the held-out days, and override recall there next to the
random rule asking the same share (the baseline: recall / share asked = 1.0x).

Then the time of one question-log calibration on a large history (default ~100,000
events), beside the findings calibration (``calibrate.run``) of a simulated history with
about as many two-way findings, best of 3.

Usage: python benchmarks/calibrate_question_log.py [--seeds N] [--events N]
"""

import argparse
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests import gstack_history as gh  # noqa: E402
from toolkit.analysis import calibrate as cal  # noqa: E402
from toolkit.analysis import simulate, sources  # noqa: E402
from toolkit.core import seeded_db  # noqa: E402
from toolkit.gstack import history as gstack_import  # noqa: E402

HOLDOUT_DAYS = 30


def history(make, seed):
    root = tempfile.mkdtemp(prefix="plantune-qlog-")
    make(root, seed)
    conn = seeded_db.connect(os.path.join(root, "plantune.db"))
    gstack_import.ingest_state_root(conn, root)
    return conn


def best_of(fn, repeats=3):
    best = None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        took = time.perf_counter() - t
        best = took if best is None else min(best, took)
    return best, out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--events", type=int, default=100_000)
    args = parser.parse_args()
    generators = {
        "registry": lambda root, seed: gh.registry_history(
            root, days=150, seed=seed, sessions_per_day=9.0
        ),
        "ad hoc": lambda root, seed: gh.adhoc_history(root, days=150, seed=seed),
    }
    print(
        "| generator | seed | fitted | share asked (fit) | recall (fit) | held out | share asked (held out) |"
        " recall (held out) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, make in generators.items():
        for seed in range(100, 100 + args.seeds):
            conn = history(make, seed)
            r = sources.run_question_log(conn, holdout_days=HOLDOUT_DAYS, resamples=200)
            h = r["holdout"]
            print(
                f"| {name} | {seed} | {r['n_findings']:,} | {r['achieved_rate']:.3f} | "
                f"{r['override_recall']:.2f} ({r['override_recall'] / r['random_recall']:.1f}x) | "
                f"{h['n_findings']:,} | {h['achieved_rate']:.3f} [{h['ci_low']:.3f}, {h['ci_high']:.3f}] | "
                f"{h['override_recall']:.2f} ({h['override_recall'] / h['random_recall']:.1f}x) |"
            )
            conn.close()

    days = max(30, args.events // 400)
    conn = history(
        lambda root, seed: gh.registry_history(root, days=days, seed=seed, sessions_per_day=85.0), 1
    )
    n_events = conn.execute("SELECT count(*) FROM question_log").fetchone()[0]
    took_q, report = best_of(lambda: sources.run_question_log(conn, resamples=200))
    conn.close()
    path = os.path.join(tempfile.mkdtemp(prefix="plantune-sim-"), "sim.db")
    sim = seeded_db.connect(path)
    probe = seeded_db.connect(os.path.join(os.path.dirname(path), "probe.db"))
    simulate.simulate(probe, days=10, seed=1, projects=12, end="2026-11-30")
    per_day = cal.run(probe, include_synthetic=True, resamples=10)["n_findings"] / 10
    probe.close()
    sim_days = min(simulate.MAX_DAYS, max(10, round(report["n_findings"] / per_day)))
    simulate.simulate(sim, days=sim_days, seed=1, projects=12, end="2026-11-30")
    took_f, findings = best_of(lambda: cal.run(sim, include_synthetic=True, resamples=200))
    print()
    print(
        f"question log: {n_events:,} events ({report['n_findings']:,} answered two-way) calibrated in "
        f"{took_q:.2f} s (best of 3)"
    )
    print(
        f"findings:     {findings['n_findings']:,} two-way findings calibrated in {took_f:.2f} s (best of 3)"
    )
    print(
        f"per fitted row: question log {1e6 * took_q / report['n_findings']:.0f} us, findings "
        f"{1e6 * took_f / findings['n_findings']:.0f} us "
        f"({(took_q / report['n_findings']) / (took_f / findings['n_findings']):.1f}x)"
    )


if __name__ == "__main__":
    main()
