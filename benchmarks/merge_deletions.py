"""What honouring deletes costs `plantune merge`.

Builds a developer's database of N findings and N office-hours sessions (default 100,000
each; the findings through their triggers, as `pacing rank` writes them), merges it into an
empty team database, then times, side by side in one run:

* the re-merge of the unchanged source, before it deleted anything (the baseline: the same
  copying, with no deletion record anywhere);
* the re-merge after the source deleted half of its findings and sessions (the records
  come along, the team copies go);
* the re-merge after that, with the records standing (what every later merge pays);
* the merge of a backup taken before the delete (every deleted row is kept out).

The ratios are against the baseline. Run: ``python benchmarks/merge_deletions.py [--rows N]
[--repeat R]``; the machine is shared: run it when ``uptime`` is low and report the best.
"""

import argparse
import os
import shutil
import sqlite3
import tempfile
import time

from toolkit.analysis import merge
from toolkit.core import seeded_db
from toolkit.store import db


def build(path, rows):
    conn = seeded_db.connect(path)
    now = db.utc_now()
    with db.transaction(conn):
        conn.executemany(
            "INSERT INTO findings (project, session_id, chain_id, phase, finding_id, summary,"
            " severity, irreversibility, decision_matters, door_type, door_reason, score,"
            " threshold, disposition, created_at, updated_at, developer)"
            " VALUES ('proj-a', ?, ?, 'eng', ?, ?, 1, 1, 1, 'two-way', 'bench', 3, 4,"
            " 'silent', ?, ?, 'alice@example.com')",
            ((f"s{i // 8}", f"c{i // 8}", f"f{i}", f"finding {i}", now, now) for i in range(rows)),
        )
        conn.executemany(
            "INSERT INTO office_hours_sessions (session_key, ts, mode, raw_json, origin,"
            " recorded_at, project_slug) VALUES (?, ?, 'builder', '{}', 'bench', ?, 'proj-a')",
            ((f"oh-{i}", now, now) for i in range(rows)),
        )
    conn.close()


def timed(team, source):
    conn = seeded_db.connect(team)
    start = time.perf_counter()
    merge.merge(conn, [source])
    took = time.perf_counter() - start
    conn.close()
    return took


def one_run(rows, folder):
    source, team = os.path.join(folder, "alice.db"), os.path.join(folder, "team.db")
    backup = os.path.join(folder, "backup.db")
    for path in (source, team, backup):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
    build(source, rows)
    seeded_db.connect(team).close()
    timed(team, source)
    baseline = timed(team, source)
    conn = seeded_db.connect(source)
    conn.execute("VACUUM INTO ?", (backup,))
    with db.transaction(conn):
        conn.execute("DELETE FROM findings WHERE id % 2 = 0")
        conn.execute("DELETE FROM office_hours_sessions WHERE id % 2 = 0")
    conn.close()
    carried = timed(team, source)
    standing = timed(team, source)
    from_backup = timed(team, backup)
    check = sqlite3.connect(team)
    left = check.execute(
        "SELECT (SELECT count(*) FROM findings), (SELECT count(*) FROM office_hours_sessions)"
    ).fetchone()
    check.close()
    assert left == (rows - rows // 2, rows - rows // 2), left
    return {"baseline": baseline, "carried": carried, "standing": standing, "backup": from_backup}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="plantune-merge-bench-")
    try:
        runs = [one_run(args.rows, folder) for _ in range(args.repeat)]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    best = {k: min(r[k] for r in runs) for k in runs[0]}
    print(
        f"{args.rows:,} findings and {args.rows:,} office-hours sessions, best of"
        f" {args.repeat} (load {os.getloadavg()[0]:.1f}):"
    )
    labels = {
        "baseline": "re-merge, nothing deleted (baseline)",
        "carried": "re-merge after the source deleted half",
        "standing": "re-merge with the records standing",
        "backup": "merge of a backup from before the delete",
    }
    for key, label in labels.items():
        print(f"  {label:<45} {best[key]:7.2f} s  {best[key] / best['baseline']:5.2f}x")


if __name__ == "__main__":
    main()
