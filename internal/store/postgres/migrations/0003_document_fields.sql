-- The document-level keyword index (Store.DocumentCandidates): the analyzer's terms of each document's naming
-- fields (title, file name, metadata values, opening lines; textproc.DocumentText), so that a question that
-- names a document — by title, kind or number — can find it. doc_lengths holds each indexed document's term
-- count (BM25's document length); a document is indexed when it has a row there. Existing documents are
-- indexed by the store when it opens (indexMissingDocuments), since the analyzer is Go code.
CREATE TABLE {S}.doc_postings (
    term        text NOT NULL,
    document_id text NOT NULL REFERENCES {S}.documents (id) ON DELETE CASCADE,
    tf          integer NOT NULL,
    PRIMARY KEY (term, document_id)
);
CREATE INDEX doc_postings_document_idx ON {S}.doc_postings (document_id);

CREATE TABLE {S}.doc_lengths (
    document_id text PRIMARY KEY REFERENCES {S}.documents (id) ON DELETE CASCADE,
    dl          integer NOT NULL
);
