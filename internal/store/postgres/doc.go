// Package postgres is ragd's PostgreSQL + pgvector store: the production implementation of rag.Store for
// installations that outgrow one machine. It passes the same conformance suite (internal/store/storetest) as
// the embedded SQLite store and ranks alike.
//
// Layout (all tables live in one schema, Options.Schema, and every statement names it, so several stores can
// share one database, and one PGlite session, without touching search_path):
//
//   - collections, documents (metadata jsonb, tags and readers text[] with GIN indexes), document_versions,
//     blobs (raw uploads by sha256), embedding_cache.
//   - chunks: the current chunks of every document, with term_count, the BM25 length of the chunk.
//   - postings (term, chunk_id) INCLUDE (tf): the inverted index of the shared analyzer's terms
//     (textproc.IndexTerms). KeywordCandidates reads only the B-tree ranges of the query terms: document
//     frequencies are counted from those ranges inside the query's snapshot, so they are exactly right under
//     concurrent ingestion and deletes without any counter; N and the total length live in corpus_stats,
//     sixteen counter rows updated in the transaction that changes the chunks (several rows so that concurrent
//     commits rarely wait for each other). BM25 uses k1 = 1.2 and b = 0.75 and FTS5's idf, as the SQLite store.
//   - spaces, and one table vectors_<n> per embedding space with a vector(dim) column and an HNSW index
//     (vector_cosine_ops; a halfvec expression index above 2000 dimensions). Vector searches set
//     hnsw.ef_search and, when a filter or the visibility predicate restricts the rows, pgvector's iterative
//     index scan (relaxed order, then re-sorted) so that a selective filter still yields k rows.
//
// Writes of one document happen in one transaction. Bulk rows go in with COPY on a native server and with
// multi-row INSERT … SELECT FROM unnest(…) on PGlite, which cannot COPY.
//
// PGlite (PostgreSQL in WebAssembly, used by the tests) runs one session for all its connections: use a pool of
// one connection and default_query_exec_mode=cache_describe (scripts/pglite.sh url prints such a URL). The
// store only ever uses SET LOCAL, so it is safe there.
package postgres
