-- Feedback (docs/api.md "Feedback"): a principal's thumbs up or down, with an optional comment, on an answer
-- or on one of its sources. One rating per principal, target, question and passage (document_id and
-- passage_hash are '' for an answer's rating); rating again replaces it. Importance (internal/rerank) counts
-- the source ratings per passage through feedback_passage.
CREATE TABLE feedback (
    id            TEXT PRIMARY KEY,
    principal     TEXT NOT NULL,
    target        TEXT NOT NULL,
    rating        INTEGER NOT NULL,
    comment       TEXT NOT NULL DEFAULT '',
    question      TEXT NOT NULL,
    answer        TEXT NOT NULL DEFAULT '',
    not_found     INTEGER NOT NULL DEFAULT 0,
    collection    TEXT NOT NULL DEFAULT '',
    document_id   TEXT NOT NULL DEFAULT '',
    passage_hash  TEXT NOT NULL DEFAULT '',
    passages      TEXT NOT NULL DEFAULT '[]',
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE UNIQUE INDEX feedback_one ON feedback (principal, target, question, document_id, passage_hash);
CREATE INDEX feedback_updated ON feedback (updated_at);
CREATE INDEX feedback_passage ON feedback (document_id, passage_hash) WHERE target = 'source';
