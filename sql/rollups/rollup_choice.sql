-- rollup_choice: the answers a person gave (auto-decided events left out) per project,
-- question, choice and synthetic. File layout: see rollup_day.sql.
CREATE TABLE rollup_choice (
    project TEXT NOT NULL,
    question_id TEXT NOT NULL,
    user_choice TEXT NOT NULL,
    synthetic INTEGER NOT NULL,
    answers INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project, question_id, synthetic, user_choice)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER rollup_choice_insert AFTER INSERT ON question_log
WHEN NEW.source != 'auto-decided'
BEGIN
    INSERT INTO rollup_choice VALUES (NEW.project, NEW.question_id, NEW.user_choice, NEW.synthetic, 1)
    ON CONFLICT DO UPDATE SET answers = answers + 1;
END;

CREATE TRIGGER rollup_choice_delete AFTER DELETE ON question_log
WHEN OLD.source != 'auto-decided'
BEGIN
    UPDATE rollup_choice SET answers = answers - 1
    WHERE project = OLD.project AND question_id = OLD.question_id AND user_choice = OLD.user_choice
      AND synthetic = OLD.synthetic;
    DELETE FROM rollup_choice WHERE project = OLD.project AND question_id = OLD.question_id
      AND user_choice = OLD.user_choice AND synthetic = OLD.synthetic AND answers = 0;
END;

CREATE TRIGGER rollup_choice_update
AFTER UPDATE OF project, question_id, user_choice, synthetic, source ON question_log
BEGIN
    UPDATE rollup_choice SET answers = answers - 1
    WHERE project = OLD.project AND question_id = OLD.question_id AND user_choice = OLD.user_choice
      AND synthetic = OLD.synthetic AND OLD.source != 'auto-decided';
    INSERT INTO rollup_choice
    SELECT NEW.project, NEW.question_id, NEW.user_choice, NEW.synthetic, 1
    WHERE NEW.source != 'auto-decided'
    ON CONFLICT DO UPDATE SET answers = answers + 1;
    DELETE FROM rollup_choice WHERE project = OLD.project AND question_id = OLD.question_id
      AND user_choice = OLD.user_choice AND synthetic = OLD.synthetic AND answers = 0;
END;

-- adds: question_log
INSERT INTO rollup_choice
SELECT project, question_id, user_choice, synthetic, count(*)
FROM question_log NOT INDEXED WHERE id > :lo AND source != 'auto-decided'
GROUP BY project, question_id, user_choice, synthetic
ON CONFLICT DO UPDATE SET answers = answers + excluded.answers;
