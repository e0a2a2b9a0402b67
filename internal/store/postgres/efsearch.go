package postgres

import "github.com/ragd/ragd/internal/rag"

// DefaultEfSearch is hnsw.ef_search for a space whose searches set none (no Options.EfSearch,
// RAGD_HNSW_EF_SEARCH, nor a request's ef_search), chosen per embedder so that recall@10 against exact search
// is at least 0.95 (docs/scaling.md "HNSW recall by embedder" has the curves):
//
//   - the offline hash embedder's vectors are signed-hashed bags of words: every text shares buckets with
//     every other, neighbourhoods are flat, and HNSW needs a long candidate list (0.81 at 100, 0.95 at 400
//     on the Cranfield-based corpus; 800 when a filter is applied during the walk, see efSearch);
//   - neural embedders (OpenAI, Gemini, Ollama, TEI, …) cluster by topic, and a short list already finds the
//     true neighbours (recall@10 1.000 from ef_search 40 on the clustered corpus of `ragd bench search`,
//     20,000 × 768); 100 leaves a margin for corpora that cluster less.
func DefaultEfSearch(sp rag.Space) int {
	if sp.Provider == "hash" {
		return hashEfSearch
	}
	return 100
}

// hashEfSearch is DefaultEfSearch of the hash embedder; hashFilteredEfSearch its ef_search for searches
// that walk the index with a filter (pgvector's iterative scan): 0.920 at 400, 0.969 at 800 with a filter
// keeping 5 % of 100,000 chunks.
const (
	hashEfSearch         = 400
	hashFilteredEfSearch = 800
)

// efSearch is the ef_search of a search in sp without a per-query value; filtered says whether the search
// walks the index with a filter.
func (s *Store) efSearch(sp rag.Space, filtered bool) int {
	switch {
	case s.opts.EfSearch > 0:
		return s.opts.EfSearch
	case filtered && sp.Provider == "hash":
		return hashFilteredEfSearch
	}
	return DefaultEfSearch(sp)
}
