-- The version of the analyzer (textproc.TermsVersion) that made the keyword entries of postings and
-- doc_postings, one row. A database older than this migration holds version 1's; the store derives every
-- chunk's and document's terms again when it opens a database made by an older analyzer (reindexTerms),
-- since the analyzer is Go code.
CREATE TABLE {S}.terms_version (
    one     boolean PRIMARY KEY DEFAULT true CHECK (one),
    version integer NOT NULL
);
INSERT INTO {S}.terms_version (version) VALUES (1);
