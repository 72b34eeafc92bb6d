-- rollup_phase: per project, session, phase and synthetic, the questions recorded (how
-- many auto-decided, one-way, followed, overridden, and when the first and the last came)
-- and the pacing decisions of the findings (surfaced, silent, surfaced by rank, first and
-- last). rollup_session sums its rows per session, kept by triggers on rollup_phase.
-- Read by phase_counts, session_pacing and more. File layout: see rollup_day.sql.
CREATE TABLE rollup_phase (
    project TEXT NOT NULL,
    session_key TEXT NOT NULL,
    phase TEXT NOT NULL,
    synthetic INTEGER NOT NULL,
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
    first_ts TEXT GENERATED ALWAYS AS (CASE
        WHEN q_first_ts IS NULL THEN f_first_ts
        WHEN f_first_ts IS NULL THEN q_first_ts
        ELSE min(q_first_ts, f_first_ts) END) VIRTUAL,
    last_ts TEXT GENERATED ALWAYS AS (CASE
        WHEN q_last_ts IS NULL THEN f_last_ts
        WHEN f_last_ts IS NULL THEN q_last_ts
        ELSE max(q_last_ts, f_last_ts) END) VIRTUAL,
    PRIMARY KEY (project, session_key, phase, synthetic)
) STRICT, WITHOUT ROWID;
CREATE INDEX rollup_phase_last_ts ON rollup_phase (last_ts);
CREATE INDEX rollup_phase_phase ON rollup_phase (phase);
CREATE INDEX rollup_phase_synthetic ON rollup_phase (synthetic);

CREATE TABLE rollup_session (
    project TEXT NOT NULL,
    session_key TEXT NOT NULL,
    synthetic INTEGER NOT NULL,
    shown INTEGER NOT NULL,
    auto_decided INTEGER NOT NULL,
    one_way INTEGER NOT NULL,
    findings_surfaced INTEGER NOT NULL,
    findings_silent INTEGER NOT NULL,
    first_ts TEXT,
    last_ts TEXT,
    phase_count INTEGER NOT NULL,
    phases TEXT NOT NULL,
    PRIMARY KEY (project, session_key, synthetic)
) STRICT, WITHOUT ROWID;
CREATE INDEX rollup_session_synthetic ON rollup_session (synthetic);

-- ------------------------------------------------------------------ question_log
CREATE TRIGGER rollup_phase_question_insert AFTER INSERT ON question_log
BEGIN
    INSERT INTO rollup_phase (project, session_key, phase, synthetic, questions, auto_decided,
                              one_way, followed, overridden, q_first_ts, q_last_ts)
    VALUES (NEW.project, coalesce(NEW.session_id, ''), NEW.phase, NEW.synthetic, 1,
            NEW.source = 'auto-decided', NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way',
            NEW.followed_recommendation IS 1, NEW.followed_recommendation IS 0, NEW.ts, NEW.ts)
    ON CONFLICT DO UPDATE SET questions = questions + 1,
        auto_decided = auto_decided + excluded.auto_decided, one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed, overridden = overridden + excluded.overridden,
        q_first_ts = min(coalesce(q_first_ts, excluded.q_first_ts), excluded.q_first_ts),
        q_last_ts = max(coalesce(q_last_ts, excluded.q_last_ts), excluded.q_last_ts);
END;

-- Taking an event away: question_log no longer holds it, so the boundary look-ups find the
-- events that remain (question_log_phase_ts).
CREATE TRIGGER rollup_phase_question_delete AFTER DELETE ON question_log
BEGIN
    UPDATE rollup_phase SET questions = questions - 1,
        auto_decided = auto_decided - (OLD.source = 'auto-decided'),
        one_way = one_way - (OLD.door_class IS 'one-way' OR OLD.door_type IS 'one-way'),
        followed = followed - (OLD.followed_recommendation IS 1),
        overridden = overridden - (OLD.followed_recommendation IS 0)
    WHERE project = OLD.project AND session_key = coalesce(OLD.session_id, '') AND phase = OLD.phase
      AND synthetic = OLD.synthetic;
    DELETE FROM rollup_phase WHERE project = OLD.project AND session_key = coalesce(OLD.session_id, '')
      AND phase = OLD.phase AND synthetic = OLD.synthetic AND questions = 0 AND findings = 0;
    UPDATE rollup_phase SET (q_first_ts, q_last_ts) = (SELECT min(ts), max(ts) FROM question_log
            WHERE project = OLD.project AND coalesce(session_id, '') = coalesce(OLD.session_id, '')
              AND phase = OLD.phase AND synthetic = OLD.synthetic)
    WHERE project = OLD.project AND session_key = coalesce(OLD.session_id, '') AND phase = OLD.phase
      AND synthetic = OLD.synthetic AND OLD.ts IN (q_first_ts, q_last_ts);
END;

-- An update takes the old values away (question_log already holds the new ones, so the
-- old group's boundaries are found among what it keeps) and adds the new ones.
CREATE TRIGGER rollup_phase_question_update
AFTER UPDATE OF project, ts, session_id, source, phase, door_class, door_type,
    followed_recommendation, synthetic ON question_log
BEGIN
    UPDATE rollup_phase SET questions = questions - 1,
        auto_decided = auto_decided - (OLD.source = 'auto-decided'),
        one_way = one_way - (OLD.door_class IS 'one-way' OR OLD.door_type IS 'one-way'),
        followed = followed - (OLD.followed_recommendation IS 1),
        overridden = overridden - (OLD.followed_recommendation IS 0)
    WHERE project = OLD.project AND session_key = coalesce(OLD.session_id, '') AND phase = OLD.phase
      AND synthetic = OLD.synthetic;
    DELETE FROM rollup_phase WHERE project = OLD.project AND session_key = coalesce(OLD.session_id, '')
      AND phase = OLD.phase AND synthetic = OLD.synthetic AND questions = 0 AND findings = 0;
    UPDATE rollup_phase SET (q_first_ts, q_last_ts) = (SELECT min(ts), max(ts) FROM question_log
            WHERE project = OLD.project AND coalesce(session_id, '') = coalesce(OLD.session_id, '')
              AND phase = OLD.phase AND synthetic = OLD.synthetic)
    WHERE project = OLD.project AND session_key = coalesce(OLD.session_id, '') AND phase = OLD.phase
      AND synthetic = OLD.synthetic AND OLD.ts IN (q_first_ts, q_last_ts);
    INSERT INTO rollup_phase (project, session_key, phase, synthetic, questions, auto_decided,
                              one_way, followed, overridden, q_first_ts, q_last_ts)
    VALUES (NEW.project, coalesce(NEW.session_id, ''), NEW.phase, NEW.synthetic, 1,
            NEW.source = 'auto-decided', NEW.door_class IS 'one-way' OR NEW.door_type IS 'one-way',
            NEW.followed_recommendation IS 1, NEW.followed_recommendation IS 0, NEW.ts, NEW.ts)
    ON CONFLICT DO UPDATE SET questions = questions + 1,
        auto_decided = auto_decided + excluded.auto_decided, one_way = one_way + excluded.one_way,
        followed = followed + excluded.followed, overridden = overridden + excluded.overridden,
        q_first_ts = min(coalesce(q_first_ts, excluded.q_first_ts), excluded.q_first_ts),
        q_last_ts = max(coalesce(q_last_ts, excluded.q_last_ts), excluded.q_last_ts);
END;

-- ------------------------------------------------------------------ findings
CREATE TRIGGER rollup_phase_finding_insert AFTER INSERT ON findings
BEGIN
    INSERT INTO rollup_phase (project, session_key, phase, synthetic, findings, surfaced, silent,
                              ranked, f_first_ts, f_last_ts)
    VALUES (NEW.project, NEW.session_id, NEW.phase, NEW.synthetic, 1, NEW.disposition = 'surfaced',
            NEW.disposition = 'silent', NEW.disposition = 'surfaced' AND NEW.surface_reason IS 'rank',
            NEW.created_at, NEW.created_at)
    ON CONFLICT DO UPDATE SET findings = findings + 1, surfaced = surfaced + excluded.surfaced,
        silent = silent + excluded.silent, ranked = ranked + excluded.ranked,
        f_first_ts = min(coalesce(f_first_ts, excluded.f_first_ts), excluded.f_first_ts),
        f_last_ts = max(coalesce(f_last_ts, excluded.f_last_ts), excluded.f_last_ts);
END;

CREATE TRIGGER rollup_phase_finding_delete AFTER DELETE ON findings
BEGIN
    UPDATE rollup_phase SET findings = findings - 1,
        surfaced = surfaced - (OLD.disposition = 'surfaced'),
        silent = silent - (OLD.disposition = 'silent'),
        ranked = ranked - (OLD.disposition = 'surfaced' AND OLD.surface_reason IS 'rank')
    WHERE project = OLD.project AND session_key = OLD.session_id AND phase = OLD.phase
      AND synthetic = OLD.synthetic;
    DELETE FROM rollup_phase WHERE project = OLD.project AND session_key = OLD.session_id
      AND phase = OLD.phase AND synthetic = OLD.synthetic AND questions = 0 AND findings = 0;
    UPDATE rollup_phase SET (f_first_ts, f_last_ts) = (SELECT min(created_at), max(created_at)
            FROM findings WHERE session_id = OLD.session_id AND phase = OLD.phase
              AND project = OLD.project AND synthetic = OLD.synthetic)
    WHERE project = OLD.project AND session_key = OLD.session_id AND phase = OLD.phase
      AND synthetic = OLD.synthetic AND OLD.created_at IN (f_first_ts, f_last_ts);
END;

CREATE TRIGGER rollup_phase_finding_update
AFTER UPDATE OF project, session_id, phase, synthetic, disposition, surface_reason, created_at
    ON findings
BEGIN
    UPDATE rollup_phase SET findings = findings - 1,
        surfaced = surfaced - (OLD.disposition = 'surfaced'),
        silent = silent - (OLD.disposition = 'silent'),
        ranked = ranked - (OLD.disposition = 'surfaced' AND OLD.surface_reason IS 'rank')
    WHERE project = OLD.project AND session_key = OLD.session_id AND phase = OLD.phase
      AND synthetic = OLD.synthetic;
    DELETE FROM rollup_phase WHERE project = OLD.project AND session_key = OLD.session_id
      AND phase = OLD.phase AND synthetic = OLD.synthetic AND questions = 0 AND findings = 0;
    UPDATE rollup_phase SET (f_first_ts, f_last_ts) = (SELECT min(created_at), max(created_at)
            FROM findings WHERE session_id = OLD.session_id AND phase = OLD.phase
              AND project = OLD.project AND synthetic = OLD.synthetic)
    WHERE project = OLD.project AND session_key = OLD.session_id AND phase = OLD.phase
      AND synthetic = OLD.synthetic AND OLD.created_at IN (f_first_ts, f_last_ts);
    INSERT INTO rollup_phase (project, session_key, phase, synthetic, findings, surfaced, silent,
                              ranked, f_first_ts, f_last_ts)
    VALUES (NEW.project, NEW.session_id, NEW.phase, NEW.synthetic, 1, NEW.disposition = 'surfaced',
            NEW.disposition = 'silent', NEW.disposition = 'surfaced' AND NEW.surface_reason IS 'rank',
            NEW.created_at, NEW.created_at)
    ON CONFLICT DO UPDATE SET findings = findings + 1, surfaced = surfaced + excluded.surfaced,
        silent = silent + excluded.silent, ranked = ranked + excluded.ranked,
        f_first_ts = min(coalesce(f_first_ts, excluded.f_first_ts), excluded.f_first_ts),
        f_last_ts = max(coalesce(f_last_ts, excluded.f_last_ts), excluded.f_last_ts);
END;

-- ------------------------------------------------------------------ rollup_session
-- rollup_phase -> rollup_session: a group has at most six phase rows; when one appears
-- or goes, the group's row is recomputed from them (this also keeps phases in order).
CREATE TRIGGER rollup_phase_session_insert AFTER INSERT ON rollup_phase
BEGIN
    DELETE FROM rollup_session
    WHERE project = NEW.project AND session_key = NEW.session_key AND synthetic = NEW.synthetic;
    INSERT INTO rollup_session (project, session_key, synthetic, shown, auto_decided, one_way,
                                findings_surfaced, findings_silent, first_ts, last_ts, phase_count, phases)
    SELECT project, session_key, synthetic, sum(questions - auto_decided), sum(auto_decided),
           sum(one_way), sum(surfaced), sum(silent),
           min(first_ts), max(last_ts),
           count(*),
           substr(iif(max(phase = 'ceo'), ',ceo', '') || iif(max(phase = 'design'), ',design', '')
                  || iif(max(phase = 'eng'), ',eng', '') || iif(max(phase = 'dx'), ',dx', '')
                  || iif(max(phase = 'other'), ',other', '') || iif(max(phase = 'unknown'), ',unknown', ''), 2)
    FROM rollup_phase
    WHERE project = NEW.project AND session_key = NEW.session_key AND synthetic = NEW.synthetic
    GROUP BY project, session_key, synthetic;
END;
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
                 WHERE project = NEW.project AND session_key = NEW.session_key
                   AND synthetic = NEW.synthetic)
            ELSE first_ts END,
        last_ts = CASE
            WHEN NEW.last_ts > last_ts THEN NEW.last_ts
            WHEN OLD.last_ts = last_ts AND NEW.last_ts < OLD.last_ts THEN
                (SELECT max(last_ts) FROM rollup_phase
                 WHERE project = NEW.project AND session_key = NEW.session_key
                   AND synthetic = NEW.synthetic)
            ELSE last_ts END
    WHERE project = NEW.project AND session_key = NEW.session_key AND synthetic = NEW.synthetic;
END;

CREATE TRIGGER rollup_phase_session_delete AFTER DELETE ON rollup_phase
BEGIN
    DELETE FROM rollup_session
    WHERE project = OLD.project AND session_key = OLD.session_key AND synthetic = OLD.synthetic;
    INSERT INTO rollup_session (project, session_key, synthetic, shown, auto_decided, one_way,
                                findings_surfaced, findings_silent, first_ts, last_ts, phase_count, phases)
    SELECT project, session_key, synthetic, sum(questions - auto_decided), sum(auto_decided),
           sum(one_way), sum(surfaced), sum(silent),
           min(first_ts), max(last_ts),
           count(*),
           substr(iif(max(phase = 'ceo'), ',ceo', '') || iif(max(phase = 'design'), ',design', '')
                  || iif(max(phase = 'eng'), ',eng', '') || iif(max(phase = 'dx'), ',dx', '')
                  || iif(max(phase = 'other'), ',other', '') || iif(max(phase = 'unknown'), ',unknown', ''), 2)
    FROM rollup_phase
    WHERE project = OLD.project AND session_key = OLD.session_key AND synthetic = OLD.synthetic
    GROUP BY project, session_key, synthetic;
END;

-- adds: question_log
INSERT INTO rollup_phase (project, session_key, phase, synthetic, questions, auto_decided,
                          one_way, followed, overridden, q_first_ts, q_last_ts)
SELECT project, coalesce(session_id, ''), phase, synthetic, count(*), sum(source = 'auto-decided'),
       sum(door_class IS 'one-way' OR door_type IS 'one-way'),
       sum(followed_recommendation IS 1), sum(followed_recommendation IS 0), min(ts), max(ts)
FROM question_log NOT INDEXED WHERE id > :lo
GROUP BY project, coalesce(session_id, ''), phase, synthetic
ON CONFLICT DO UPDATE SET
    questions = questions + excluded.questions,
    auto_decided = auto_decided + excluded.auto_decided,
    one_way = one_way + excluded.one_way,
    followed = followed + excluded.followed,
    overridden = overridden + excluded.overridden,
    q_first_ts = min(coalesce(q_first_ts, excluded.q_first_ts), excluded.q_first_ts),
    q_last_ts = max(coalesce(q_last_ts, excluded.q_last_ts), excluded.q_last_ts);

-- adds: findings
INSERT INTO rollup_phase (project, session_key, phase, synthetic, findings, surfaced, silent,
                          ranked, f_first_ts, f_last_ts)
SELECT project, session_id, phase, synthetic, count(*), sum(disposition = 'surfaced'),
       sum(disposition = 'silent'), sum(disposition = 'surfaced' AND surface_reason IS 'rank'),
       min(created_at), max(created_at)
FROM findings NOT INDEXED WHERE id > :lo
GROUP BY project, session_id, phase, synthetic
ON CONFLICT DO UPDATE SET
    findings = findings + excluded.findings,
    surfaced = surfaced + excluded.surfaced,
    silent = silent + excluded.silent,
    ranked = ranked + excluded.ranked,
    f_first_ts = min(coalesce(f_first_ts, excluded.f_first_ts), excluded.f_first_ts),
    f_last_ts = max(coalesce(f_last_ts, excluded.f_last_ts), excluded.f_last_ts);
