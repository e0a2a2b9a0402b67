-- The document-level keyword index (Store.DocumentCandidates): the analyzer's terms of each document's naming
-- fields (title, file name, metadata values, opening lines; textproc.DocumentText), so that a question that
-- names a document — by title, kind or number — can find it. doc_lengths holds each indexed document's term
-- count (BM25's document length); a document is indexed when it has a row there. Existing documents are
-- indexed by the store when it opens (indexMissingDocuments), since the analyzer is Go code.
CREATE TABLE doc_postings (
    term    TEXT NOT NULL,
    doc_seq INTEGER NOT NULL REFERENCES documents (seq) ON DELETE CASCADE,
    tf      INTEGER NOT NULL,
    PRIMARY KEY (term, doc_seq)
) WITHOUT ROWID;
CREATE INDEX doc_postings_doc ON doc_postings (doc_seq);

CREATE TABLE doc_lengths (
    doc_seq INTEGER PRIMARY KEY REFERENCES documents (seq) ON DELETE CASCADE,
    dl      INTEGER NOT NULL
);
