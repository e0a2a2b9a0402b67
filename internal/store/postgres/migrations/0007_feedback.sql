-- Feedback (docs/api.md "Feedback"): a principal's thumbs up or down, with an optional comment, on an answer
-- or on one of its sources. One rating per principal, target, question and passage (document_id and
-- passage_hash are '' for an answer's rating); rating again replaces it. Importance (internal/rerank) counts
-- the source ratings per passage through feedback_passage_idx.
CREATE TABLE {S}.feedback (
    id            text PRIMARY KEY,
    principal     text NOT NULL,
    target        text NOT NULL,
    rating        integer NOT NULL,
    comment       text NOT NULL DEFAULT '',
    question      text NOT NULL,
    answer        text NOT NULL DEFAULT '',
    not_found     boolean NOT NULL DEFAULT false,
    collection    text NOT NULL DEFAULT '',
    document_id   text NOT NULL DEFAULT '',
    passage_hash  text NOT NULL DEFAULT '',
    passages      jsonb NOT NULL DEFAULT '[]',
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE UNIQUE INDEX feedback_one_idx ON {S}.feedback (principal, target, question, document_id, passage_hash);
CREATE INDEX feedback_updated_idx ON {S}.feedback (updated_at);
CREATE INDEX feedback_passage_idx ON {S}.feedback (document_id, passage_hash) WHERE target = 'source';
