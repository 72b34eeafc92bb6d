"""gstack's ``gstack-question-log`` and ``gstack-question-preference``, backed by the database.

Drop-in console scripts: same argv, stdout lines, stderr messages and exit codes as gstack's
bins of those names, so agent preambles and hooks call them unchanged.
Agents run them before and after every question, so argv is parsed by hand (no click) and
everything beyond ``os``/``sys`` is imported only once the arguments are known to need it.

The database is the record. By default gstack's files are kept current too
(``projects/<slug>/question-log.jsonl``, ``question-preferences.json``,
``question-events.jsonl``) and picked up again when another writer changed them;
``PLANTUNE_MIRROR=0`` turns both off, and then nothing is created under ``projects/``.
"""

import os
import sys

from toolkit.core.errors import Refused, run_script

LOG = "gstack-question-log"
PREF = "gstack-question-preference"

PREF_USAGE = """\
Usage: gstack-question-preference <subcommand>

  --check <question_id> [--summary-stdin]   ASK_NORMALLY or AUTO_DECIDE (+ NOTE lines)
  --check <question_id> --question-stdin    the same, reading the whole question as JSON:
        {"question": "...", "header": "...", "options": [{"label": "...",
         "description": "..."}], "recommendation": "..."} (every part is read for
         one-way doors: a destructive option makes the question one-way)
  --write '<json>'                          set a preference (source plan-tune|inline-user)
  --read                                    print this project's preferences (default)
  --clear [<question_id>]                   clear one preference, or all of them
  --stats                                   count preferences by value
  --help, -h                                this text

Data lives in the plantune database ($PLANTUNE_DB, else <state root>/plantune.db);
PLANTUNE_MIRROR=0 stops keeping gstack's JSON files current."""


def _say(line):
    sys.stdout.write(line + "\n")


def _complain(prefix, message):
    sys.stderr.write(f"{prefix}: {message}\n")


def _mirroring():
    from toolkit.gstack import mirror

    return mirror.enabled()


def _slug():
    from toolkit.store import paths

    return paths.resolve_slug() or "unknown"


def _open(prefix):
    from toolkit.core import seeded_db
    from toolkit.store import db, paths

    try:
        return seeded_db.connect(paths.db_path())
    except db.DatabaseError as e:
        raise Refused(str(e)) from None


def _utf8(prefix, text, what):
    # Invalid UTF-8 in argv arrives as lone surrogates (surrogateescape); refuse it whole
    # rather than store replacement characters the caller never wrote.
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused(f"{what} is not valid UTF-8") from None
    return text


def _main(run, prefix, argv):
    """Run a command inside the one error boundary (a real process exits there)."""
    return run_script(prefix, run, argv)


# --------------------------------------------------------------------------
# gstack-question-log '<json>'


def question_log_main(argv=None):
    """``gstack-question-log '<json>'``: validate and record one question event."""
    return _main(_question_log, LOG, argv)


def _question_log(args):
    mirroring = _mirroring()
    slug = None
    if mirroring:
        from toolkit.gstack import mirror

        slug = _slug()
        # gstack creates the project directory before validating, so even a rejected call
        # leaves it behind; reproduced only when gstack's files are kept.
        try:
            mirror.ensure_project_dir(slug)
        except OSError:
            pass
    if not args:
        _complain(LOG, "missing JSON argument (usage: gstack-question-log '<json>')")
        return 1
    text = _utf8(LOG, args[0], "argument")

    from toolkit.core import questions

    try:
        record = questions.validate_json(text)
    except questions.QuestionError as e:
        sys.stderr.write(e.message + "\n")
        return 1

    from toolkit.gstack import mirror, spool
    from toolkit.store import db, paths

    if slug is None:
        slug = _slug()
    try:
        conn = _open(LOG)
        rec, warning = mirror.log_question(conn, record, slug, enabled=mirroring)
    except db.sqlite3.OperationalError as e:
        if not db.is_busy(e):
            raise
        # Locked past the busy timeout: keep the answer in the spool (the next writer or
        # `plantune ingest` records it) and succeed, as the agent must not lose it.
        try:
            spool.put_question(record, slug, paths.db_path(), mirror=mirroring, allow_phase=False)
        except spool.SpoolError as err:
            _complain(LOG, f"database is locked and {err}")
            return 1
        return 0
    warning = warning or spool.drain_after_write(conn)
    if warning:
        _complain(LOG, warning)
    if rec.status == "dedup":
        _say(rec.dedup_line(record.get("source")))
        return 0
    if rec.status == "inserted" and mirroring:
        _spawn_derive()
    return 0


def _spawn_derive():
    """gstack refreshes developer-profile.json after every logged question, detached.

    Tests and benchmarks set GSTACK_QUESTION_LOG_NO_DERIVE (concurrent derives only
    repeat the same work). A missing profile command is not an error.
    """
    if os.environ.get("GSTACK_QUESTION_LOG_NO_DERIVE"):
        return
    here = os.path.dirname(os.path.abspath(sys.argv[0] or sys.executable))
    exe = os.path.join(here, "gstack-developer-profile")
    if not os.access(exe, os.X_OK):
        exe = os.path.join(os.path.dirname(sys.executable), "gstack-developer-profile")
        if not os.access(exe, os.X_OK):
            return
    try:
        os.posix_spawn(
            exe,
            [exe, "--derive"],
            os.environ,
            file_actions=[(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)],
            setsid=True,
        )
    except OSError:
        pass


# --------------------------------------------------------------------------
# gstack-question-preference


def question_preference_main(argv=None):
    """``gstack-question-preference --check|--write|--read|--clear|--stats``."""
    return _main(_question_preference, PREF, argv)


def _question_preference(args):
    sub = args[0] if args else "--read"
    rest = args[1:]
    if sub in ("--help", "-h"):
        _say(PREF_USAGE)
        return 0
    handler = _PREF_COMMANDS.get(sub)
    if handler is None:
        _complain(PREF, f"unknown subcommand '{sub}'")
        return 1
    return handler(rest)


def _prepared(pick_up=True):
    """Slug, connection and mirroring flag; gstack's files picked up first for readers
    (writers pick them up under their write lock instead)."""
    from toolkit.gstack import mirror, pickup

    slug = _slug()
    mirroring = mirror.enabled()
    conn = _open(PREF)
    if mirroring:
        try:
            mirror.ensure_preferences_file(conn, slug)
        except OSError:
            pass
    if mirroring and pick_up:
        warning = pickup.pickup(conn, slug)
        if warning:
            _complain(PREF, warning)
    return slug, conn, mirroring


def _pref_check(rest):
    want_stdin = "--summary-stdin" in rest
    want_question = "--question-stdin" in rest
    ids = [a for a in rest if a not in ("--summary-stdin", "--question-stdin")]
    if not ids:
        _say("ASK_NORMALLY")
        return 0
    question_id = ids[0]
    summary = None
    if want_question:
        if want_stdin:
            _complain(PREF, "--summary-stdin and --question-stdin read the same stdin: use one")
            return 1
        from toolkit.core.whole_question import from_json
        from toolkit.store.safe_io import stdin_bytes

        try:
            summary = from_json(stdin_bytes())
        except ValueError as e:
            _complain(PREF, str(e))
            return 1
    elif want_stdin:
        # Raw bytes: the classifier decodes them itself; invalid UTF-8 is one-way
        # ("unreadable") where gstack would decode leniently and read on.
        from toolkit.store.safe_io import stdin_bytes

        summary = stdin_bytes() or None
    slug, conn, _ = _prepared()
    from toolkit.core import preferences

    decision = preferences.check(conn, slug, question_id, summary, need_door=False)
    sys.stdout.write("\n".join(decision.lines()) + "\n")
    return 0


def _pref_write(rest):
    if not rest:
        _complain(PREF, "--write requires a JSON payload")
        return 1
    slug, conn, mirroring = _prepared(pick_up=False)
    text = _utf8(PREF, rest[0], "--write payload")
    from toolkit.core import preferences
    from toolkit.gstack import mirror

    try:
        qid, pref, source, free_text = preferences.validate_write(
            conn, preferences.parse_write(text)
        )
    except preferences.PreferenceError as e:
        _complain(PREF, e.message)
        return e.exit_code
    _, warning = mirror.set_preference(conn, slug, qid, pref, source, free_text, enabled=mirroring)
    if warning:
        _complain(PREF, warning)
    _say(f"OK: {qid} → {pref} (source: {source})")
    return 0


def _pref_read(rest):
    slug, conn, _ = _prepared()
    from toolkit.core import preferences

    prefs = preferences.read(conn, slug)
    # Exactly what gstack's `cat` of the file shows: "{}" and a newline when fresh.
    sys.stdout.write(preferences.render(prefs) if prefs else "{}\n")
    return 0


def _pref_clear(rest):
    question_id = rest[0] if rest else None
    if question_id is not None:
        question_id = _utf8(PREF, question_id, "question id")
    slug, conn, mirroring = _prepared(pick_up=False)
    from toolkit.gstack import mirror

    removed, warning = mirror.clear_preferences(conn, slug, question_id, enabled=mirroring)
    if warning:
        _complain(PREF, warning)
    if question_id is None:
        _say("OK: cleared all preferences")
    elif removed:
        _say(f"OK: cleared {question_id}")
    else:
        _say(f"NOOP: no preference set for {question_id}")
    return 0


def _pref_stats(rest):
    slug, conn, _ = _prepared()
    from toolkit.core import preferences

    for line in preferences.stats_lines(preferences.stats(conn, slug)):
        _say(line)
    return 0


_PREF_COMMANDS = {
    "--check": _pref_check,
    "--write": _pref_write,
    "--read": _pref_read,
    "--clear": _pref_clear,
    "--stats": _pref_stats,
}
