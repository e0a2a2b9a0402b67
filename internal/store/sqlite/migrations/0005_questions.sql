-- Q&A boards (docs/qa.md): questions posted on a collection, their answers (people's and at most one AI
-- answer each) and the log of the answer job's runs.
CREATE TABLE questions (
    id            TEXT PRIMARY KEY,
    collection_id TEXT NOT NULL REFERENCES collections (id),
    title         TEXT NOT NULL,
    body          TEXT NOT NULL DEFAULT '',
    author        TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL DEFAULT 'open',
    attempts      INTEGER NOT NULL DEFAULT 0,
    last_error    TEXT NOT NULL DEFAULT '',
    space         TEXT NOT NULL DEFAULT '', -- the space of vector; '' when not embedded
    vector        BLOB,                     -- little-endian float32
    claimed_by    TEXT NOT NULL DEFAULT '',
    claimed_until INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX questions_collection ON questions (collection_id, created_at);
-- The answer job takes open questions oldest first.
CREATE INDEX questions_open ON questions (created_at, id) WHERE status = 'open';

CREATE TABLE answers (
    id          TEXT PRIMARY KEY,
    question_id TEXT NOT NULL REFERENCES questions (id) ON DELETE CASCADE,
    author      TEXT, -- NULL for the AI answer
    is_ai       INTEGER NOT NULL DEFAULT 0,
    body        TEXT NOT NULL,
    source_refs TEXT NOT NULL DEFAULT '[]',
    not_found   INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX answers_question ON answers (question_id, created_at);
-- Never two AI answers to one question, whatever the workers do.
CREATE UNIQUE INDEX answers_one_ai ON answers (question_id) WHERE is_ai = 1;

CREATE TABLE qa_runs (
    id          TEXT PRIMARY KEY,
    trigger     TEXT NOT NULL,
    worker      TEXT NOT NULL DEFAULT '',
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    answered    INTEGER NOT NULL DEFAULT 0,
    failed      INTEGER NOT NULL DEFAULT 0,
    skipped     INTEGER NOT NULL DEFAULT 0,
    errors      TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX qa_runs_started ON qa_runs (started_at);
