-- 0010_tombstones: what was deleted stays deleted.
--
-- A delete removes the rows and rewrites gstack's files without their lines, but a copy of
-- an old line can come back (a restored backup, a second machine, gstack's own bins still
-- holding it). A tombstone keeps only the deleted record's event key (a sha1 of the
-- record, never its text), and the triggers below refuse any insert of a key that has
-- one, whichever writer tries: the importer, the hooks, the compat scripts.
CREATE TABLE tombstones (
    event_key TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('question-log', 'question-events')),
    deleted_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TRIGGER question_log_tombstoned BEFORE INSERT ON question_log
WHEN EXISTS (SELECT 1 FROM tombstones WHERE event_key = NEW.event_key)
BEGIN
    SELECT RAISE(IGNORE);
END;

CREATE TRIGGER preference_events_tombstoned BEFORE INSERT ON preference_events
WHEN EXISTS (SELECT 1 FROM tombstones WHERE event_key = NEW.event_key)
BEGIN
    SELECT RAISE(IGNORE);
END;
