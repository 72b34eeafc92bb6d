"""The ``plantune`` console entry point, with a click-free fast path for the hot commands.

The hot commands are ``check``, ``log`` and the two AskUserQuestion hooks
(``hook pre-tool-use`` / ``hook post-tool-use``).

Agents may call ``plantune check`` / ``plantune log`` on every question. Importing click
alone costs most of a Python start-up, so the plain forms of those two commands are
parsed here by hand and run without it; every other command line (``--help``, other
subcommands, anything unusual) goes to the click application in ``toolkit.cli.app`` unchanged
(``toolkit.cli.main`` chooses).

The work itself (``run_check``, ``run_log``) is shared with the click commands in
``toolkit.cli.questions``, and the output (stdout lines, ``Error: ...`` on stderr, exit
codes 1 and 2) is the same byte for byte whichever path runs; tests compare the two.
"""

import os
import sys

from toolkit.core.errors import Refused


class Output:
    """Lines for stdout and stderr, printed by whichever command layer ran."""

    __slots__ = ("out", "err")

    def __init__(self):
        self.out, self.err = [], []


def _json_text(data):
    import json

    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def project_slug(project):
    from toolkit.store import paths

    if project:
        if not paths.is_valid_slug(project):
            raise Refused(
                f"invalid project slug {project!r} (use letters, digits, '.', '_' and '-')"
            )
        return project
    return paths.resolve_slug() or "unknown"


def require_database(db_path):
    """A command that only reads refuses a --db that is not there, creating nothing."""
    if db_path and not os.path.exists(db_path):
        from toolkit.store import db

        raise Refused(db.no_database_message(db_path))


def _open(db_path):
    from toolkit.core import seeded_db
    from toolkit.gstack import mirror
    from toolkit.store import db, paths

    mirror.keep_to_own_database(db_path)
    try:
        return seeded_db.connect(paths.db_path(db_path))
    except db.DatabaseError as e:
        raise Refused(str(e)) from None


def _pickup(conn, slug, result):
    from toolkit.gstack import mirror, pickup

    if mirror.enabled():
        warning = pickup.pickup(conn, slug)
        if warning:
            result.err.append(f"plantune: {warning}")


def read_stdin_text(what):
    from toolkit.store.safe_io import stdin_bytes

    data = stdin_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"{what} on stdin is not valid UTF-8") from None


def run_log(event, project=None, db_path=None, as_json=False):
    """``plantune log``: validate (gstack rules plus phase), record, mirror."""
    from toolkit.core import questions
    from toolkit.gstack import mirror

    result = Output()
    text = read_stdin_text("the event") if event == "-" else event
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused("the event is not valid UTF-8") from None
    try:
        record = questions.validate_json(text, allow_phase=True)
    except questions.QuestionError as e:
        raise Refused(e.message.removeprefix(questions.PREFIX + ": ")) from None
    from toolkit.gstack import spool
    from toolkit.store import db, paths

    slug = project_slug(project)
    try:
        conn = _open(db_path)
        rec, warning = mirror.log_question(conn, record, slug, enabled=mirror.enabled())
    except db.sqlite3.OperationalError as e:
        if not db.is_busy(e):
            raise
        # Locked past the busy timeout: the spool keeps the event until a writer can.
        try:
            spool.put_question(record, slug, paths.db_path(db_path), mirror=mirror.enabled())
        except spool.SpoolError as err:
            raise Refused(f"database is locked and {err}") from None
        if as_json:
            result.out.append(
                _json_text(
                    {
                        "status": "spooled",
                        "id": None,
                        "event_key": questions.event_key(slug, record),
                        "project": slug,
                    }
                )
            )
        return result
    warning = warning or spool.drain_after_write(conn)
    if warning:
        result.err.append(f"plantune: {warning}")
    if as_json:
        result.out.append(
            _json_text(
                {"status": rec.status, "id": rec.id, "event_key": rec.event_key, "project": slug}
            )
        )
    elif rec.status == "dedup":
        result.out.append(rec.dedup_line(record.get("source")))
    return result


def run_check(
    question_id,
    summary_stdin=False,
    project=None,
    db_path=None,
    as_json=False,
    include_synthetic=False,
    question_stdin=False,
):
    """``plantune check``: ASK_NORMALLY / AUTO_DECIDE and NOTE lines (or JSON)."""
    from toolkit.core import preferences

    result = Output()
    summary = None
    if question_stdin:
        from toolkit.core.whole_question import from_json

        if summary_stdin:
            raise Refused("--summary-stdin and --question-stdin read the same stdin: use one")
        try:
            summary = from_json(sys.stdin.buffer.read())
        except ValueError as e:
            raise Refused(str(e)) from None
    elif summary_stdin:
        # Raw bytes: the classifier decodes them itself, and text that is not valid UTF-8
        # is one-way ("unreadable") rather than guessed at.
        summary = sys.stdin.buffer.read() or None
    require_database(db_path)  # before anything, even the slug cache, is written
    slug = project_slug(project)
    conn = _open(db_path)
    _pickup(conn, slug, result)
    decision = preferences.check(
        conn, slug, question_id, summary, include_synthetic, need_door=as_json
    )
    if as_json:
        data = decision.as_dict()
        data["project"] = slug
        result.out.append(_json_text(data))
    else:
        result.out.extend(decision.lines())
    return result


# --------------------------------------------------------------------------
# argv fast path

_FLAGS = {
    "check": ("--summary-stdin", "--question-stdin", "--json", "--include-synthetic"),
    "log": ("--json",),
}
_VALUED = ("--project", "--db")


_FAST_HOOKS = (
    "pre-tool-use",
    "post-tool-use",
    "post-tool-use-failure",
    "permission-request",
    "session-start",
)


def _parse_hook(args):
    """``plantune hook <one of _FAST_HOOKS> [--db PATH]`` without click."""
    if len(args) < 2 or args[0] != "hook" or args[1] not in _FAST_HOOKS:
        return None
    rest = args[2:]
    db_path = None
    if rest:
        if len(rest) == 2 and rest[0] == "--db" and rest[1] and not rest[1].startswith("-"):
            db_path = rest[1]
        elif len(rest) == 1 and rest[0].startswith("--db=") and len(rest[0]) > 5:
            db_path = rest[0][5:]
        else:
            return None
    return run_hook, {"event": args[1], "db_path": db_path}


def run_hook(event, db_path=None):
    """A Claude Code hook: always exit 0; output is written by the hook itself."""
    if event == "session-start":  # without the question hooks' modules
        from toolkit.claude import session_start

        session_start.run()
        return Output()
    from toolkit.claude import hooks

    hooks.run_named_hook(event, db_path=db_path)
    return Output()


def parse(args):
    """``(command, kwargs)`` for a plain check/log command line, else None (use click)."""
    hook = _parse_hook(args)
    if hook is not None:
        return hook
    if not args or args[0] not in _FLAGS:
        return None
    command, flags = args[0], _FLAGS[args[0]]
    positional, seen = [], {}
    i = 1
    while i < len(args):
        a = args[i]
        i += 1
        if a in flags:
            if a in seen:
                return None
            seen[a] = True
            continue
        name, eq, value = a.partition("=")
        if name in _VALUED:
            if name in seen:
                return None
            if not eq:
                if i >= len(args):
                    return None
                value = args[i]
                i += 1
            if not value or value.startswith("-"):
                return None
            seen[name] = value
            continue
        if a.startswith("-") and a != "-":
            return None  # --help, --, unknown options: click explains them
        positional.append(a)
    if len(positional) != 1:
        return None
    db_path = seen.get("--db")
    if db_path is not None and os.path.isdir(db_path):
        return None  # click's Path check words that error
    kwargs = {"project": seen.get("--project"), "db_path": db_path, "as_json": "--json" in seen}
    if command == "check":
        if positional[0] == "-":
            return None
        kwargs["question_id"] = positional[0]
        kwargs["summary_stdin"] = "--summary-stdin" in seen
        kwargs["question_stdin"] = "--question-stdin" in seen
        kwargs["include_synthetic"] = "--include-synthetic" in seen
        return run_check, kwargs
    kwargs["event"] = positional[0]
    return run_log, kwargs
