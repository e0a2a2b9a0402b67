-- Q&A boards (docs/qa.md): questions posted on a collection, their answers (people's and at most one AI
-- answer each) and the log of the answer job's runs. Question vectors are float4[] with their space, so
-- that questions of any space live in one table (a board compares a few hundred in memory).
CREATE TABLE {S}.questions (
    id            text PRIMARY KEY,
    collection_id text NOT NULL REFERENCES {S}.collections (id),
    title         text NOT NULL,
    body          text NOT NULL DEFAULT '',
    author        text NOT NULL DEFAULT '',
    status        text NOT NULL DEFAULT 'open',
    attempts      integer NOT NULL DEFAULT 0,
    last_error    text NOT NULL DEFAULT '',
    space         text NOT NULL DEFAULT '',
    vector        real[],
    claimed_by    text NOT NULL DEFAULT '',
    claimed_until timestamptz NOT NULL DEFAULT '-infinity',
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE INDEX questions_collection_idx ON {S}.questions (collection_id, created_at);
CREATE INDEX questions_open_idx ON {S}.questions (created_at, id) WHERE status = 'open';

CREATE TABLE {S}.answers (
    id          text PRIMARY KEY,
    question_id text NOT NULL REFERENCES {S}.questions (id) ON DELETE CASCADE,
    author      text,
    is_ai       boolean NOT NULL DEFAULT false,
    body        text NOT NULL,
    source_refs jsonb NOT NULL DEFAULT '[]',
    not_found   boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
CREATE INDEX answers_question_idx ON {S}.answers (question_id, created_at);
-- Never two AI answers to one question, whatever the workers do.
CREATE UNIQUE INDEX answers_one_ai_idx ON {S}.answers (question_id) WHERE is_ai;

CREATE TABLE {S}.qa_runs (
    id          text PRIMARY KEY,
    trigger     text NOT NULL,
    worker      text NOT NULL DEFAULT '',
    started_at  timestamptz NOT NULL,
    finished_at timestamptz,
    answered    integer NOT NULL DEFAULT 0,
    failed      integer NOT NULL DEFAULT 0,
    skipped     integer NOT NULL DEFAULT 0,
    errors      jsonb NOT NULL DEFAULT '[]'
);
CREATE INDEX qa_runs_started_idx ON {S}.qa_runs (started_at);
