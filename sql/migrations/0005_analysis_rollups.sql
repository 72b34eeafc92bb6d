-- 0005_analysis_rollups: running totals behind the analysis views, kept current by triggers.
--
-- The analysis views (phase_counts, session_interruptions, question_review, daily_activity,
-- source_stats, unmarked_questions) summarise the whole question log. Grouping a million
-- events on every Datasette page load, and again for its row count and for each facet,
-- takes seconds: past Datasette's 1 s query limit and far past its 200 ms facet limit.
-- So the totals live in the rollup_* tables below, updated by triggers inside the same
-- transaction as each write; a page then reads a few thousand summary rows instead of a
-- million events. The totals stay exact under insert, update and delete (a delete that
-- removes the earliest or latest event of a group looks the new boundary up by index).
-- The views stay code in sql/views/ and read these tables; these tables hold numbers only.
--
-- One-way here means "classified one-way when it was recorded" (plantune's door_class or
-- the caller's door_type), a fact of the row itself, so a later registry sync can never
-- make an old total drift. The safety audit (one_way_audit) reads the live registry.
--
-- Writers must not use INSERT OR REPLACE on question_log or findings: SQLite removes the
-- replaced row without firing delete triggers unless PRAGMA recursive_triggers is on.

-- Per project, session and review phase (session_key is the session id, '' when none).
CREATE TABLE rollup_phase (
    project TEXT NOT NULL,
    session_key TEXT NOT NULL,
    phase TEXT NOT NULL,
    questions INTEGER NOT NULL DEFAULT 0,
    auto_decided INTEGER NOT NULL DEFAULT 0,
    one_way INTEGER NOT NULL DEFAULT 0,
    followed INTEGER NOT NULL DEFAULT 0,
    overridden INTEGER NOT NULL DEFAULT 0,
    q_first_ts TEXT,
    q_last_ts TEXT,
    findings INTEGER NOT NULL DEFAULT 0,
    surfaced INTEGER NOT NULL DEFAULT 0,
    silent INTEGER NOT NULL DEFAULT 0,
    ranked INTEGER NOT NULL DEFAULT 0,
    f_first_ts TEXT,
    f_last_ts TEXT,
    -- First and last activity of either kind, generated so that they can be indexed.
    first_ts TEXT GENERATED ALWAYS AS (CASE
        WHEN q_first_ts IS NULL THEN f_first_ts
        WHEN f_first_ts IS NULL THEN q_first_ts
        ELSE min(q_first_ts, f_first_ts) END) VIRTUAL,
    last_ts TEXT GENERATED ALWAYS AS (CASE
        WHEN q_last_ts IS NULL THEN f_last_ts
        WHEN f_last_ts IS NULL THEN q_last_ts
        ELSE max(q_last_ts, f_last_ts) END) VIRTUAL,
    PRIMARY KEY (project, session_key, phase)
) STRICT, WITHOUT ROWID;
-- Newest-first paging and the phase facet of phase_counts.
CREATE INDEX rollup_phase_last_ts ON rollup_phase (last_ts);
CREATE INDEX rollup_phase_phase ON rollup_phase (phase);

-- Per project and session, recomputed from the session's few rollup_phase rows whenever
-- one of them changes. phases lists the phases seen in review order.
CREATE TABLE rollup_session (
    project TEXT NOT NULL,
    session_key TEXT NOT NULL,
    shown INTEGER NOT NULL,
    auto_decided INTEGER NOT NULL,
    one_way INTEGER NOT NULL,
    findings_surfaced INTEGER NOT NULL,
    findings_silent INTEGER NOT NULL,
    first_ts TEXT,
    last_ts TEXT,
    phase_count INTEGER NOT NULL,
    phases TEXT NOT NULL,
    PRIMARY KEY (project, session_key)
) STRICT, WITHOUT ROWID;

-- Per project, UTC day (first 10 characters of ts) and source.
CREATE TABLE rollup_day (
    project TEXT NOT NULL,
    day TEXT NOT NULL,
    source TEXT NOT NULL,
    events INTEGER NOT NULL DEFAULT 0,
    one_way INTEGER NOT NULL DEFAULT 0,
    followed INTEGER NOT NULL DEFAULT 0,
    overridden INTEGER NOT NULL DEFAULT 0,
    unmarked INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project, day, source)
) STRICT, WITHOUT ROWID;

-- Per project and question id, with the ids of the first and last event (ts, then id)
-- so views can show the first skill and the last summary without scanning the log.
CREATE TABLE rollup_question (
    project TEXT NOT NULL,
    question_id TEXT NOT NULL,
    events INTEGER NOT NULL DEFAULT 0,
    auto_decided INTEGER NOT NULL DEFAULT 0,
    one_way INTEGER NOT NULL DEFAULT 0,
    followed INTEGER NOT NULL DEFAULT 0,
    overridden INTEGER NOT NULL DEFAULT 0,
    first_event_id INTEGER NOT NULL,
    first_ts TEXT NOT NULL,
    last_event_id INTEGER NOT NULL,
    last_ts TEXT NOT NULL,
    PRIMARY KEY (project, question_id)
) STRICT, WITHOUT ROWID;

-- Per project, question id and answer, counting only answers the user gave (auto-decided
-- events are the agent's, not the user's).
CREATE TABLE rollup_choice (
    project TEXT NOT NULL,
    question_id TEXT NOT NULL,
    user_choice TEXT NOT NULL,
    answers INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project, question_id, user_choice)
) STRICT, WITHOUT ROWID;

-- Boundary look-ups after a delete, and the question drill-down.
CREATE INDEX question_log_phase_ts ON question_log (project, coalesce(session_id, ''), phase, ts);
CREATE INDEX question_log_question_ts ON question_log (project, question_id, ts);
-- findings.answer_event_id references question_log: without this index every deleted
-- event scans all findings for referencing rows (28 ms each at 200,000 findings).
CREATE INDEX findings_answer_event ON findings (answer_event_id);
-- Boundary look-ups after a finding is deleted or moved.
CREATE INDEX findings_phase_created ON findings (session_id, phase, project, created_at);
-- Auto-decided events are few, so these partial indexes stay small and cost nothing for
-- other rows. The first serves recent_auto_decisions (newest first) and its facets; the
-- other two let the one-way audit look up only the rows it is about (normally none).
CREATE INDEX question_log_auto_decided ON question_log (ts, project, phase, question_id, door_class, door_type)
    WHERE source = 'auto-decided';
CREATE INDEX question_log_auto_question ON question_log (question_id)
    WHERE source = 'auto-decided';
CREATE INDEX question_log_auto_one_way ON question_log (ts)
    WHERE source = 'auto-decided' AND (door_class IS 'one-way' OR door_type IS 'one-way');

-- Backfill from rows written before this migration.
INSERT INTO rollup_phase (project, session_key, phase, questions, auto_decided, one_way, followed,
                          overridden, q_first_ts, q_last_ts)
SELECT project, coalesce(session_id, ''), phase, count(*), sum(source = 'auto-decided'),
       sum(door_class IS 'one-way' OR door_type IS 'one-way'),
       sum(followed_recommendation IS 1), sum(followed_recommendation IS 0), min(ts), max(ts)
FROM question_log
GROUP BY project, coalesce(session_id, ''), phase;

INSERT INTO rollup_phase (project, session_key, phase, findings, surfaced, silent, ranked,
                          f_first_ts, f_last_ts)
SELECT project, session_id, phase, count(*), sum(disposition = 'surfaced'), sum(disposition = 'silent'),
       sum(disposition = 'surfaced' AND surface_reason IS 'rank'), min(created_at), max(created_at)
FROM findings WHERE true
GROUP BY project, session_id, phase
ON CONFLICT (project, session_key, phase) DO UPDATE SET
    findings = excluded.findings, surfaced = excluded.surfaced, silent = excluded.silent,
    ranked = excluded.ranked, f_first_ts = excluded.f_first_ts, f_last_ts = excluded.f_last_ts;

INSERT INTO rollup_session (project, session_key, shown, auto_decided, one_way, findings_surfaced,
                            findings_silent, first_ts, last_ts, phase_count, phases)
SELECT project, session_key, sum(questions - auto_decided), sum(auto_decided), sum(one_way),
       sum(surfaced), sum(silent),
       min(first_ts), max(last_ts),
       count(*),
       substr(iif(max(phase = 'ceo'), ',ceo', '') || iif(max(phase = 'design'), ',design', '')
              || iif(max(phase = 'eng'), ',eng', '') || iif(max(phase = 'dx'), ',dx', '')
              || iif(max(phase = 'other'), ',other', '') || iif(max(phase = 'unknown'), ',unknown', ''), 2)
FROM rollup_phase
GROUP BY project, session_key;

INSERT INTO rollup_day (project, day, source, events, one_way, followed, overridden, unmarked)
SELECT project, substr(ts, 1, 10), source, count(*),
       sum(door_class IS 'one-way' OR door_type IS 'one-way'),
       sum(followed_recommendation IS 1), sum(followed_recommendation IS 0),
       sum(question_id GLOB 'hook-*')
FROM question_log
GROUP BY project, substr(ts, 1, 10), source;

INSERT INTO rollup_question (project, question_id, events, auto_decided, one_way, followed, overridden,
                             first_event_id, first_ts, last_event_id, last_ts)
SELECT g.project, g.question_id, g.events, g.auto_decided, g.one_way, g.followed, g.overridden,
       (SELECT id FROM question_log x WHERE x.project = g.project AND x.question_id = g.question_id
        ORDER BY ts, id LIMIT 1),
       g.first_ts,
       (SELECT id FROM question_log x WHERE x.project = g.project AND x.question_id = g.question_id
        ORDER BY ts DESC, id DESC LIMIT 1),
       g.last_ts
FROM (
    SELECT project, question_id, count(*) AS events, sum(source = 'auto-decided') AS auto_decided,
           sum(door_class IS 'one-way' OR door_type IS 'one-way') AS one_way,
           sum(followed_recommendation IS 1) AS followed, sum(followed_recommendation IS 0) AS overridden,
           min(ts) AS first_ts, max(ts) AS last_ts
    FROM question_log
    GROUP BY project, question_id
) AS g;

INSERT INTO rollup_choice (project, question_id, user_choice, answers)
SELECT project, question_id, user_choice, count(*)
FROM question_log
WHERE source != 'auto-decided'
GROUP BY project, question_id, user_choice;

-- question_log: add a row's contribution.
CREATE TRIGGER question_log_rollup_insert AFTER INSERT ON question_log
BEGIN
    INSERT INTO rollup_phase (project, session_key, phase, questions, auto_decided, one_way, followed,
                              overridden, q_first_ts, q_last_ts)
    VALUES (NEW.project, coalesce(NEW.session_id, ''), NEW.phase, 1, NEW.source = 'auto-decided',
            NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way',
            NEW.followed_recommendation IS 1, NEW.followed_recommendation IS 0, NEW.ts, NEW.ts)
    ON CONFLICT (project, session_key, phase) DO UPDATE SET
        questions = questions + 1,
        auto_decided = auto_decided + excluded.auto_decided,
        one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        q_first_ts = min(coalesce(q_first_ts, excluded.q_first_ts), excluded.q_first_ts),
        q_last_ts = max(coalesce(q_last_ts, excluded.q_last_ts), excluded.q_last_ts);

    INSERT INTO rollup_day (project, day, source, events, one_way, followed, overridden, unmarked)
    VALUES (NEW.project, substr(NEW.ts, 1, 10), NEW.source, 1,
            NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way',
            NEW.followed_recommendation IS 1, NEW.followed_recommendation IS 0,
            NEW.question_id GLOB 'hook-*')
    ON CONFLICT (project, day, source) DO UPDATE SET
        events = events + 1,
        one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        unmarked = unmarked + excluded.unmarked;

    INSERT INTO rollup_question (project, question_id, events, auto_decided, one_way, followed, overridden,
                                 first_event_id, first_ts, last_event_id, last_ts)
    VALUES (NEW.project, NEW.question_id, 1, NEW.source = 'auto-decided',
            NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way',
            NEW.followed_recommendation IS 1, NEW.followed_recommendation IS 0,
            NEW.id, NEW.ts, NEW.id, NEW.ts)
    ON CONFLICT (project, question_id) DO UPDATE SET
        events = events + 1,
        auto_decided = auto_decided + excluded.auto_decided,
        one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        first_event_id = iif(excluded.first_ts < first_ts
            OR (excluded.first_ts = first_ts AND excluded.first_event_id < first_event_id),
            excluded.first_event_id, first_event_id),
        first_ts = iif(excluded.first_ts < first_ts
            OR (excluded.first_ts = first_ts AND excluded.first_event_id < first_event_id),
            excluded.first_ts, first_ts),
        last_event_id = iif(excluded.last_ts > last_ts
            OR (excluded.last_ts = last_ts AND excluded.last_event_id > last_event_id),
            excluded.last_event_id, last_event_id),
        last_ts = iif(excluded.last_ts > last_ts
            OR (excluded.last_ts = last_ts AND excluded.last_event_id > last_event_id),
            excluded.last_ts, last_ts);

    INSERT INTO rollup_choice (project, question_id, user_choice, answers)
    SELECT NEW.project, NEW.question_id, NEW.user_choice, 1
    WHERE NEW.source != 'auto-decided'
    ON CONFLICT (project, question_id, user_choice) DO UPDATE SET answers = answers + 1;
END;

-- question_log: take a row's contribution away.
CREATE TRIGGER question_log_rollup_delete AFTER DELETE ON question_log
BEGIN
    UPDATE rollup_phase SET
        questions = questions - 1,
        auto_decided = auto_decided - (OLD.source = 'auto-decided'),
        one_way = one_way - (OLD.door_class IS 'one-way' OR OLD.door_type IS 'one-way'),
        followed = followed - (OLD.followed_recommendation IS 1),
        overridden = overridden - (OLD.followed_recommendation IS 0)
    WHERE project = OLD.project AND session_key = coalesce(OLD.session_id, '') AND phase = OLD.phase;
    DELETE FROM rollup_phase
    WHERE project = OLD.project AND session_key = coalesce(OLD.session_id, '') AND phase = OLD.phase
      AND questions = 0 AND findings = 0;
    UPDATE rollup_phase SET
        q_first_ts = (SELECT min(ts) FROM question_log WHERE project = OLD.project
                      AND coalesce(session_id, '') = coalesce(OLD.session_id, '') AND phase = OLD.phase),
        q_last_ts = (SELECT max(ts) FROM question_log WHERE project = OLD.project
                     AND coalesce(session_id, '') = coalesce(OLD.session_id, '') AND phase = OLD.phase)
    WHERE project = OLD.project AND session_key = coalesce(OLD.session_id, '') AND phase = OLD.phase
      AND (q_first_ts = OLD.ts OR q_last_ts = OLD.ts);

    UPDATE rollup_day SET
        events = events - 1,
        one_way = one_way - (OLD.door_class IS 'one-way' OR OLD.door_type IS 'one-way'),
        followed = followed - (OLD.followed_recommendation IS 1),
        overridden = overridden - (OLD.followed_recommendation IS 0),
        unmarked = unmarked - (OLD.question_id GLOB 'hook-*')
    WHERE project = OLD.project AND day = substr(OLD.ts, 1, 10) AND source = OLD.source;
    DELETE FROM rollup_day
    WHERE project = OLD.project AND day = substr(OLD.ts, 1, 10) AND source = OLD.source AND events = 0;

    UPDATE rollup_question SET
        events = events - 1,
        auto_decided = auto_decided - (OLD.source = 'auto-decided'),
        one_way = one_way - (OLD.door_class IS 'one-way' OR OLD.door_type IS 'one-way'),
        followed = followed - (OLD.followed_recommendation IS 1),
        overridden = overridden - (OLD.followed_recommendation IS 0)
    WHERE project = OLD.project AND question_id = OLD.question_id;
    DELETE FROM rollup_question
    WHERE project = OLD.project AND question_id = OLD.question_id AND events = 0;
    UPDATE rollup_question SET
        first_event_id = (SELECT id FROM question_log WHERE project = OLD.project
                          AND question_id = OLD.question_id ORDER BY ts, id LIMIT 1),
        first_ts = (SELECT ts FROM question_log WHERE project = OLD.project
                    AND question_id = OLD.question_id ORDER BY ts, id LIMIT 1),
        last_event_id = (SELECT id FROM question_log WHERE project = OLD.project
                         AND question_id = OLD.question_id ORDER BY ts DESC, id DESC LIMIT 1),
        last_ts = (SELECT ts FROM question_log WHERE project = OLD.project
                   AND question_id = OLD.question_id ORDER BY ts DESC, id DESC LIMIT 1)
    WHERE project = OLD.project AND question_id = OLD.question_id
      AND OLD.id IN (first_event_id, last_event_id);

    UPDATE rollup_choice SET answers = answers - 1
    WHERE project = OLD.project AND question_id = OLD.question_id AND user_choice = OLD.user_choice
      AND OLD.source != 'auto-decided';
    DELETE FROM rollup_choice
    WHERE project = OLD.project AND question_id = OLD.question_id AND user_choice = OLD.user_choice
      AND answers = 0;
END;

-- question_log: an update is the old row taken away, then the new row added.
CREATE TRIGGER question_log_rollup_update
AFTER UPDATE OF id, project, ts, question_id, user_choice, followed_recommendation, session_id, source,
                phase, door_class, door_type ON question_log
BEGIN
    UPDATE rollup_phase SET
        questions = questions - 1,
        auto_decided = auto_decided - (OLD.source = 'auto-decided'),
        one_way = one_way - (OLD.door_class IS 'one-way' OR OLD.door_type IS 'one-way'),
        followed = followed - (OLD.followed_recommendation IS 1),
        overridden = overridden - (OLD.followed_recommendation IS 0)
    WHERE project = OLD.project AND session_key = coalesce(OLD.session_id, '') AND phase = OLD.phase;
    DELETE FROM rollup_phase
    WHERE project = OLD.project AND session_key = coalesce(OLD.session_id, '') AND phase = OLD.phase
      AND questions = 0 AND findings = 0;
    UPDATE rollup_phase SET
        q_first_ts = (SELECT min(ts) FROM question_log WHERE project = OLD.project
                      AND coalesce(session_id, '') = coalesce(OLD.session_id, '') AND phase = OLD.phase),
        q_last_ts = (SELECT max(ts) FROM question_log WHERE project = OLD.project
                     AND coalesce(session_id, '') = coalesce(OLD.session_id, '') AND phase = OLD.phase)
    WHERE project = OLD.project AND session_key = coalesce(OLD.session_id, '') AND phase = OLD.phase
      AND (q_first_ts = OLD.ts OR q_last_ts = OLD.ts);

    UPDATE rollup_day SET
        events = events - 1,
        one_way = one_way - (OLD.door_class IS 'one-way' OR OLD.door_type IS 'one-way'),
        followed = followed - (OLD.followed_recommendation IS 1),
        overridden = overridden - (OLD.followed_recommendation IS 0),
        unmarked = unmarked - (OLD.question_id GLOB 'hook-*')
    WHERE project = OLD.project AND day = substr(OLD.ts, 1, 10) AND source = OLD.source;
    DELETE FROM rollup_day
    WHERE project = OLD.project AND day = substr(OLD.ts, 1, 10) AND source = OLD.source AND events = 0;

    UPDATE rollup_question SET
        events = events - 1,
        auto_decided = auto_decided - (OLD.source = 'auto-decided'),
        one_way = one_way - (OLD.door_class IS 'one-way' OR OLD.door_type IS 'one-way'),
        followed = followed - (OLD.followed_recommendation IS 1),
        overridden = overridden - (OLD.followed_recommendation IS 0)
    WHERE project = OLD.project AND question_id = OLD.question_id;
    DELETE FROM rollup_question
    WHERE project = OLD.project AND question_id = OLD.question_id AND events = 0;
    UPDATE rollup_question SET
        first_event_id = (SELECT id FROM question_log WHERE project = OLD.project
                          AND question_id = OLD.question_id ORDER BY ts, id LIMIT 1),
        first_ts = (SELECT ts FROM question_log WHERE project = OLD.project
                    AND question_id = OLD.question_id ORDER BY ts, id LIMIT 1),
        last_event_id = (SELECT id FROM question_log WHERE project = OLD.project
                         AND question_id = OLD.question_id ORDER BY ts DESC, id DESC LIMIT 1),
        last_ts = (SELECT ts FROM question_log WHERE project = OLD.project
                   AND question_id = OLD.question_id ORDER BY ts DESC, id DESC LIMIT 1)
    WHERE project = OLD.project AND question_id = OLD.question_id
      AND OLD.id IN (first_event_id, last_event_id);

    UPDATE rollup_choice SET answers = answers - 1
    WHERE project = OLD.project AND question_id = OLD.question_id AND user_choice = OLD.user_choice
      AND OLD.source != 'auto-decided';
    DELETE FROM rollup_choice
    WHERE project = OLD.project AND question_id = OLD.question_id AND user_choice = OLD.user_choice
      AND answers = 0;

    INSERT INTO rollup_phase (project, session_key, phase, questions, auto_decided, one_way, followed,
                              overridden, q_first_ts, q_last_ts)
    VALUES (NEW.project, coalesce(NEW.session_id, ''), NEW.phase, 1, NEW.source = 'auto-decided',
            NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way',
            NEW.followed_recommendation IS 1, NEW.followed_recommendation IS 0, NEW.ts, NEW.ts)
    ON CONFLICT (project, session_key, phase) DO UPDATE SET
        questions = questions + 1,
        auto_decided = auto_decided + excluded.auto_decided,
        one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        q_first_ts = min(coalesce(q_first_ts, excluded.q_first_ts), excluded.q_first_ts),
        q_last_ts = max(coalesce(q_last_ts, excluded.q_last_ts), excluded.q_last_ts);

    INSERT INTO rollup_day (project, day, source, events, one_way, followed, overridden, unmarked)
    VALUES (NEW.project, substr(NEW.ts, 1, 10), NEW.source, 1,
            NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way',
            NEW.followed_recommendation IS 1, NEW.followed_recommendation IS 0,
            NEW.question_id GLOB 'hook-*')
    ON CONFLICT (project, day, source) DO UPDATE SET
        events = events + 1,
        one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        unmarked = unmarked + excluded.unmarked;

    INSERT INTO rollup_question (project, question_id, events, auto_decided, one_way, followed, overridden,
                                 first_event_id, first_ts, last_event_id, last_ts)
    VALUES (NEW.project, NEW.question_id, 1, NEW.source = 'auto-decided',
            NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way',
            NEW.followed_recommendation IS 1, NEW.followed_recommendation IS 0,
            NEW.id, NEW.ts, NEW.id, NEW.ts)
    ON CONFLICT (project, question_id) DO UPDATE SET
        events = events + 1,
        auto_decided = auto_decided + excluded.auto_decided,
        one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed,
        overridden = overridden + excluded.overridden,
        first_event_id = iif(excluded.first_ts < first_ts
            OR (excluded.first_ts = first_ts AND excluded.first_event_id < first_event_id),
            excluded.first_event_id, first_event_id),
        first_ts = iif(excluded.first_ts < first_ts
            OR (excluded.first_ts = first_ts AND excluded.first_event_id < first_event_id),
            excluded.first_ts, first_ts),
        last_event_id = iif(excluded.last_ts > last_ts
            OR (excluded.last_ts = last_ts AND excluded.last_event_id > last_event_id),
            excluded.last_event_id, last_event_id),
        last_ts = iif(excluded.last_ts > last_ts
            OR (excluded.last_ts = last_ts AND excluded.last_event_id > last_event_id),
            excluded.last_ts, last_ts);

    INSERT INTO rollup_choice (project, question_id, user_choice, answers)
    SELECT NEW.project, NEW.question_id, NEW.user_choice, 1
    WHERE NEW.source != 'auto-decided'
    ON CONFLICT (project, question_id, user_choice) DO UPDATE SET answers = answers + 1;
END;

-- findings: pacing decisions per phase (surfaced, silent, and surfaced by rank, which is
-- what spends the phase's two-way budget).
CREATE TRIGGER findings_rollup_insert AFTER INSERT ON findings
BEGIN
    INSERT INTO rollup_phase (project, session_key, phase, findings, surfaced, silent, ranked,
                              f_first_ts, f_last_ts)
    VALUES (NEW.project, NEW.session_id, NEW.phase, 1, NEW.disposition = 'surfaced',
            NEW.disposition = 'silent', NEW.disposition = 'surfaced' AND NEW.surface_reason IS 'rank',
            NEW.created_at, NEW.created_at)
    ON CONFLICT (project, session_key, phase) DO UPDATE SET
        findings = findings + 1,
        surfaced = surfaced + excluded.surfaced,
        silent = silent + excluded.silent,
        ranked = ranked + excluded.ranked,
        f_first_ts = min(coalesce(f_first_ts, excluded.f_first_ts), excluded.f_first_ts),
        f_last_ts = max(coalesce(f_last_ts, excluded.f_last_ts), excluded.f_last_ts);
END;

CREATE TRIGGER findings_rollup_delete AFTER DELETE ON findings
BEGIN
    UPDATE rollup_phase SET
        findings = findings - 1,
        surfaced = surfaced - (OLD.disposition = 'surfaced'),
        silent = silent - (OLD.disposition = 'silent'),
        ranked = ranked - (OLD.disposition = 'surfaced' AND OLD.surface_reason IS 'rank')
    WHERE project = OLD.project AND session_key = OLD.session_id AND phase = OLD.phase;
    DELETE FROM rollup_phase
    WHERE project = OLD.project AND session_key = OLD.session_id AND phase = OLD.phase
      AND questions = 0 AND findings = 0;
    UPDATE rollup_phase SET
        f_first_ts = (SELECT min(created_at) FROM findings WHERE session_id = OLD.session_id
                      AND phase = OLD.phase AND project = OLD.project),
        f_last_ts = (SELECT max(created_at) FROM findings WHERE session_id = OLD.session_id
                     AND phase = OLD.phase AND project = OLD.project)
    WHERE project = OLD.project AND session_key = OLD.session_id AND phase = OLD.phase
      AND (f_first_ts = OLD.created_at OR f_last_ts = OLD.created_at);
END;

CREATE TRIGGER findings_rollup_update
AFTER UPDATE OF project, session_id, phase, disposition, surface_reason, created_at ON findings
BEGIN
    UPDATE rollup_phase SET
        findings = findings - 1,
        surfaced = surfaced - (OLD.disposition = 'surfaced'),
        silent = silent - (OLD.disposition = 'silent'),
        ranked = ranked - (OLD.disposition = 'surfaced' AND OLD.surface_reason IS 'rank')
    WHERE project = OLD.project AND session_key = OLD.session_id AND phase = OLD.phase;
    DELETE FROM rollup_phase
    WHERE project = OLD.project AND session_key = OLD.session_id AND phase = OLD.phase
      AND questions = 0 AND findings = 0;
    UPDATE rollup_phase SET
        f_first_ts = (SELECT min(created_at) FROM findings WHERE session_id = OLD.session_id
                      AND phase = OLD.phase AND project = OLD.project),
        f_last_ts = (SELECT max(created_at) FROM findings WHERE session_id = OLD.session_id
                     AND phase = OLD.phase AND project = OLD.project)
    WHERE project = OLD.project AND session_key = OLD.session_id AND phase = OLD.phase
      AND (f_first_ts = OLD.created_at OR f_last_ts = OLD.created_at);

    INSERT INTO rollup_phase (project, session_key, phase, findings, surfaced, silent, ranked,
                              f_first_ts, f_last_ts)
    VALUES (NEW.project, NEW.session_id, NEW.phase, 1, NEW.disposition = 'surfaced',
            NEW.disposition = 'silent', NEW.disposition = 'surfaced' AND NEW.surface_reason IS 'rank',
            NEW.created_at, NEW.created_at)
    ON CONFLICT (project, session_key, phase) DO UPDATE SET
        findings = findings + 1,
        surfaced = surfaced + excluded.surfaced,
        silent = silent + excluded.silent,
        ranked = ranked + excluded.ranked,
        f_first_ts = min(coalesce(f_first_ts, excluded.f_first_ts), excluded.f_first_ts),
        f_last_ts = max(coalesce(f_last_ts, excluded.f_last_ts), excluded.f_last_ts);
END;

-- rollup_phase -> rollup_session. A session has at most six phase rows: when one appears
-- or goes, the session's row is recomputed from them (this also keeps phases in order).
CREATE TRIGGER rollup_phase_session_insert AFTER INSERT ON rollup_phase
BEGIN
    DELETE FROM rollup_session WHERE project = NEW.project AND session_key = NEW.session_key;
    INSERT INTO rollup_session (project, session_key, shown, auto_decided, one_way, findings_surfaced,
                                findings_silent, first_ts, last_ts, phase_count, phases)
    SELECT project, session_key, sum(questions - auto_decided), sum(auto_decided), sum(one_way),
           sum(surfaced), sum(silent),
           min(first_ts), max(last_ts),
           count(*),
           substr(iif(max(phase = 'ceo'), ',ceo', '') || iif(max(phase = 'design'), ',design', '')
                  || iif(max(phase = 'eng'), ',eng', '') || iif(max(phase = 'dx'), ',dx', '')
                  || iif(max(phase = 'other'), ',other', '') || iif(max(phase = 'unknown'), ',unknown', ''), 2)
    FROM rollup_phase
    WHERE project = NEW.project AND session_key = NEW.session_key
    GROUP BY project, session_key;
END;

-- The common case (another event in a phase the session already has) adjusts the row in
-- place; only a boundary that moved inward is looked up again among the session's phases.
CREATE TRIGGER rollup_phase_session_update AFTER UPDATE ON rollup_phase
BEGIN
    UPDATE rollup_session SET
        shown = shown + (NEW.questions - NEW.auto_decided) - (OLD.questions - OLD.auto_decided),
        auto_decided = auto_decided + NEW.auto_decided - OLD.auto_decided,
        one_way = one_way + NEW.one_way - OLD.one_way,
        findings_surfaced = findings_surfaced + NEW.surfaced - OLD.surfaced,
        findings_silent = findings_silent + NEW.silent - OLD.silent,
        first_ts = CASE
            WHEN NEW.first_ts < first_ts THEN NEW.first_ts
            WHEN OLD.first_ts = first_ts AND NEW.first_ts > OLD.first_ts THEN
                (SELECT min(first_ts) FROM rollup_phase
                 WHERE project = NEW.project AND session_key = NEW.session_key)
            ELSE first_ts END,
        last_ts = CASE
            WHEN NEW.last_ts > last_ts THEN NEW.last_ts
            WHEN OLD.last_ts = last_ts AND NEW.last_ts < OLD.last_ts THEN
                (SELECT max(last_ts) FROM rollup_phase
                 WHERE project = NEW.project AND session_key = NEW.session_key)
            ELSE last_ts END
    WHERE project = NEW.project AND session_key = NEW.session_key;
END;

CREATE TRIGGER rollup_phase_session_delete AFTER DELETE ON rollup_phase
BEGIN
    DELETE FROM rollup_session WHERE project = OLD.project AND session_key = OLD.session_key;
    INSERT INTO rollup_session (project, session_key, shown, auto_decided, one_way, findings_surfaced,
                                findings_silent, first_ts, last_ts, phase_count, phases)
    SELECT project, session_key, sum(questions - auto_decided), sum(auto_decided), sum(one_way),
           sum(surfaced), sum(silent),
           min(first_ts), max(last_ts),
           count(*),
           substr(iif(max(phase = 'ceo'), ',ceo', '') || iif(max(phase = 'design'), ',design', '')
                  || iif(max(phase = 'eng'), ',eng', '') || iif(max(phase = 'dx'), ',dx', '')
                  || iif(max(phase = 'other'), ',other', '') || iif(max(phase = 'unknown'), ',unknown', ''), 2)
    FROM rollup_phase
    WHERE project = OLD.project AND session_key = OLD.session_key
    GROUP BY project, session_key;
END;
