-- The version of the analyzer (textproc.TermsVersion) that made the keyword entries of chunks_fts and
-- doc_postings. A database older than this migration holds version 1's; the store derives every chunk's and
-- document's terms again when it opens a database made by an older analyzer (reindexTerms), since the
-- analyzer is Go code.
INSERT INTO store_meta (key, value) VALUES ('terms_version', 1);
