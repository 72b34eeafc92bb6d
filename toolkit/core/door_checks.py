"""The door of a question from every source: the rules and the registry (``doors``),
every recorded fact, and the user's corrections (``allows``). The one place checks,
hooks, pacing and guidance ask before anything is decided for the user."""

from toolkit.core import allows, doors

__all__ = ["door_for", "before_auto_decide"]

# One-way facts stored under spellings only the Unicode fold or a code-name split makes equal.
_FOLDED_SQL = (
    "SELECT canonical_id, question_id, source FROM door_knowledge"
    " WHERE canonical_id GLOB '*[^ -~]*' OR question_id GLOB '*[a-z][A-Z]*'"
)


def door_for(
    conn, question_id=None, summary=None, skill=None, category=None
) -> doors.Classification:
    """The door of a question, consulting every source: the one function all checks use.

    Registry (canonical id) → skill:category → the summary's text → every recorded fact
    (a logged door_type or door_class, a pacing finding, a late classification of a
    recorded summary). One-way if any says so.
    """
    registry = {}
    if isinstance(question_id, str) and question_id:
        row = doors.registry_door(conn, question_id)
        if row is not None:
            registry = {doors.canonical_id(question_id): row[1]}
            skill = skill or row[2]
            category = category or row[3]
    verdict = doors.decide(question_id, skill, category, summary, registry)
    if not isinstance(question_id, str):
        return verdict
    if verdict.one_way:
        if not allows.overruled(conn, question_id, verdict, summary):
            return verdict
        verdict = doors.Classification(False, "allowed", verdict.matched)
    source = doors.known_one_way(conn, question_id)
    if source:
        # An allow sets aside the facts that are plantune's readings, never a stated one.
        if allows.covers_records(conn, question_id):
            return doors.Classification(False, "allowed", verdict.matched)
        return doors.Classification(True, "recorded:" + source)
    return verdict


def before_auto_decide(conn, question_id, door):
    """A second, slower look at a question about to be auto-decided; a one-way
    ``doors.Classification`` if it finds one, else None.

    Only this path pays for it, so an ordinary check stays as fast as it was:
    * the id's own words (``--check drop-users-table``) are read by the rules, a registered
      two-way id's too: a registry synced from another tree, a teammate's database or a
      promotion may call two-way what its own name says is destructive, and one-way wins
      (the bundled and gstack's registries have no two-way id whose words read one-way);
      only the user's allow sets them aside;
    * one-way facts recorded under a spelling of the id that only the Unicode fold of
      ``doors.canonical_id`` makes equal (a look-alike letter, a Unicode dash), or its code-name
      split (a finding ``dropUsersTable``), count too.
    """
    if not isinstance(question_id, str) or not question_id:
        return None
    if door is None or door.reason != "allowed":
        verdict = doors.classify(doors.id_text(question_id), prose=False)  # a name, not prose
        if verdict.door == doors.ONE_WAY:
            rule = verdict.reason.partition(":")[2] or None
            found = doors.Classification(True, "id-words:" + (rule or verdict.reason), rule)
            if not allows.overruled(conn, question_id, found):
                return found
    if conn is not None:
        key = doors.canonical_id(question_id)
        for stored, spelled, source in conn.execute(_FOLDED_SQL).fetchall():
            if key in (doors.canonical_id(stored), doors.canonical_id(spelled)):
                found = doors.Classification(True, "recorded:" + source)
                if not allows.overruled(conn, question_id, found):
                    return found
    return None


# --------------------------------------------------------------------------
# The rules' version (recorded questions are read again when it changes: toolkit.core.audit)
