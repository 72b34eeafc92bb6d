"""``gstack-developer-profile`` and ``gstack-builder-profile``, backed by the database.

Same argv, stdout lines, stderr messages and exit codes as gstack's bins of those names.
The inferred block is computed from the question log on every call, so ``--derive`` is a
query: concurrent derives cannot race, and there is nothing stale to refresh.

No click here: these scripts run from agent skills many times per session.
"""

import sys

from toolkit.core import profile, seeded_db
from toolkit.core.errors import Refused, run_script
from toolkit.core.jscompat import is_falsy, number_string_exact_ints, stringify_indented
from toolkit.gstack import profile_sync
from toolkit.store import db, paths
from toolkit.store import json_lite as json

PROG = "gstack-developer-profile"

USAGE = """\
usage: gstack-developer-profile [SUBCOMMAND]

  --read              legacy KEY: VALUE summary of office-hours sessions (default)
  --profile           print the unified profile JSON
  --gap               declared vs inferred, as JSON
  --derive            recompute the inferred profile from this project's question log
  --trace DIM         every event that moved DIM
  --check-mismatch    flag dimensions where declared and inferred differ by more than 0.3
  --migrate           move builder-profile.jsonl into the profile
  --log-session JSON  record an office-hours session
  --vibe              archetype for the inferred profile
  --narrative         (not implemented in v1)
"""


def out(line=""):
    sys.stdout.write(line + "\n")


def err(line):
    sys.stderr.write(line + "\n")


class Context:
    """Database, state root and project slug for one invocation."""

    def __init__(self):
        self.root = paths.state_root()
        self.project = paths.resolve_slug() or "unknown"
        self.conn = seeded_db.connect(paths.db_path())

    def ensure(self, force_mirror=False):
        """gstack's "ensure the profile": pick up shared files, migrate, keep the mirror."""
        return profile_sync.sync(self.conn, self.root, self.project, force_mirror=force_mirror)

    def pickup_log(self, note_backlog=False):
        """Bring in question-log lines other writers (gstack's own bin) appended.

        A large backlog is imported in the background; with ``note_backlog`` a stderr
        note says the answer covers only what is imported so far (stdout is unchanged).
        """
        from toolkit.gstack import mirror, pickup

        if mirror.enabled():
            warning = pickup.pickup(self.conn, self.project)
            if warning:
                err(warning)
            if note_backlog:
                note = pickup.backlog_note(self.conn, self.project)
                if note:
                    err(f"{PROG}: {note}")

    def refresh_mirror(self):
        if profile_sync.mirror_enabled():
            profile_sync.publish(self.conn, self.root, self.project)


def cmd_read(ctx, args):
    ctx.ensure()
    for key, value in profile.builder_summary(profile.sessions(ctx.conn)):
        out(f"{key}: {value}")
    return 0


def cmd_profile(ctx, args):
    ctx.pickup_log(note_backlog=True)
    ctx.ensure()
    out(stringify_indented(profile.document(ctx.conn, ctx.project)))
    return 0


def cmd_gap(ctx, args):
    ctx.ensure()
    dec = profile.declared(ctx.conn)
    values = profile.inferred(ctx.conn, ctx.project)["values"]
    out(stringify_indented({"declared": dec, "inferred": values, "gap": profile.gap(dec, values)}))
    return 0


def cmd_derive(ctx, args):
    ctx.pickup_log(note_backlog=True)
    ctx.ensure()
    if not profile.signals_loaded(ctx.conn):
        err("DERIVE: registry or signals file missing, cannot derive")
        return 1
    with db.transaction(ctx.conn):
        profile.set_meta(ctx.conn, profile.META_DERIVED_AT, db.utc_now())
    # One read of the views serves both the file and the summary line.
    inferred = profile_sync.publish(ctx.conn, ctx.root, ctx.project)["inferred"]
    out(
        f"DERIVE: ok — {inferred['sample_size']} events, "
        f"{inferred['diversity']['skills_covered']} skills, "
        f"{inferred['diversity']['question_ids_covered']} questions"
    )
    return 0


def cmd_trace(ctx, args):
    if not args or not args[0]:
        err("TRACE: missing dimension argument")
        return 1
    dim = args[0]
    ctx.pickup_log()
    if not profile.has_events(ctx.conn, ctx.project):
        out("TRACE: no events for this project")
        return 0
    rows = profile.trace(ctx.conn, ctx.project, dim)
    if not rows:
        out(f"TRACE: no events contribute to {dim}")
        return 0
    out(f"TRACE: {len(rows)} events for {dim}")
    for r in rows:
        sign = "+" if r["delta"] > 0 else ""
        out(
            f"  {r['ts'][:19]}  {r['question_id']}  → {r['user_choice']}  "
            f"({sign}{number_string_exact_ints(r['delta'])})"
        )
    return 0


def cmd_check_mismatch(ctx, args):
    ctx.ensure()
    div = profile.diversity(ctx.conn, ctx.project)
    values = profile.inferred(ctx.conn, ctx.project)["values"]
    flagged = profile.mismatch(profile.declared(ctx.conn), values, div["sample_size"])
    if flagged is None:
        out(
            f"MISMATCH: not enough data ({div['sample_size']} events; need "
            f"{profile.MISMATCH_MIN_SAMPLE}+)"
        )
        return 0
    if not flagged:
        out("MISMATCH: none")
        return 0
    out(
        f"MISMATCH: {len(flagged)} dimension(s) disagree (gap > {number_string_exact_ints(profile.MISMATCH_GAP)})"
    )
    for dim, d, i, g in flagged:
        out(
            f"  {dim}: declared {number_string_exact_ints(d)} vs inferred {number_string_exact_ints(i)} "
            f"(gap {number_string_exact_ints(g)})"
        )
    return 0


def cmd_migrate(ctx, args):
    # The profile file is read first so its sessions keep their place before the legacy ones.
    profile_sync.sync(ctx.conn, ctx.root, ctx.project, legacy=False)
    result = profile_sync.migrate_legacy(ctx.conn, ctx.root)
    if result is None:
        out("MIGRATE: no legacy file to migrate")
        return 0
    ctx.refresh_mirror()
    out(f"MIGRATE: ok — migrated {result['sessions']} sessions from {profile_sync.LEGACY_FILE}")
    return 0


def cmd_log_session(ctx, args):
    # Silent no-op on anything unusable: /office-hours must never fail on this.
    if not args:
        return 0
    try:
        entry = json.loads(args[0])
    except ValueError:
        return 0
    if not isinstance(entry, dict) or is_falsy(entry.get("date")) or is_falsy(entry.get("mode")):
        return 0
    ctx.ensure()
    if is_falsy(entry.get("ts")):
        entry["ts"] = db.utc_now()
    with db.transaction(ctx.conn):
        profile.add_sessions(ctx.conn, [entry], origin="log-session")
    ctx.refresh_mirror()
    return 0


def cmd_vibe(ctx, args):
    from toolkit.core import archetypes

    ctx.ensure()
    name, description = archetypes.classify(profile.inferred(ctx.conn, ctx.project)["values"])
    out(name)
    out(description)
    return 0


def cmd_narrative(ctx, args):
    out("NARRATIVE: (v2 — not yet implemented; use /plan-tune profile for now)")
    return 0


COMMANDS = {
    "--read": cmd_read,
    "--profile": cmd_profile,
    "--gap": cmd_gap,
    "--derive": cmd_derive,
    "--trace": cmd_trace,
    "--check-mismatch": cmd_check_mismatch,
    "--migrate": cmd_migrate,
    "--log-session": cmd_log_session,
    "--vibe": cmd_vibe,
    "--narrative": cmd_narrative,
}


def run(argv):
    """Run one subcommand; its connection is done with at the end (``db.finish``: a
    console command leaves it to the process's end)."""
    sub = argv[0] if argv else "--read"
    if sub in ("--help", "-h", "help"):
        sys.stdout.write(USAGE)
        return 0
    handler = COMMANDS.get(sub)
    if handler is None:
        err(f"{PROG}: unknown subcommand '{sub}'")
        err("run --help for usage")
        return 1
    if handler is cmd_narrative:
        return handler(None, argv[1:])
    try:
        ctx = Context()
    except db.DatabaseError as e:
        raise Refused(str(e)) from None
    try:
        return handler(ctx, argv[1:])
    finally:
        db.finish(ctx.conn)


def developer_profile_main(argv=None):
    """``gstack-developer-profile``; with ``argv`` given, returns the exit code."""
    return run_script(PROG, run, argv)


def builder_profile_main(argv=None):
    """gstack-builder-profile: the legacy reader, now a thin alias of ``--read``."""
    return run_script(PROG, lambda _args: run(["--read"]), argv)


if __name__ == "__main__":
    developer_profile_main()
