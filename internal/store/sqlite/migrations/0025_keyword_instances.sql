-- A read-only view of the keyword index's postings (one row per term instance: term, doc = chunk id, col,
-- offset). It stores nothing; the in-memory keyword index (kwindex.go) is built by reading it.
CREATE VIRTUAL TABLE chunks_fts_instance USING fts5vocab (chunks_fts, instance);
