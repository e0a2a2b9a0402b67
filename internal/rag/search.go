package rag

import "time"

// SearchRequest is a retrieval request (the retrieval contract of SPEC.md).
type SearchRequest struct {
	Query  string `json:"query"`
	Filter Filter `json:"filter"`
	K      int    `json:"k"`
	// EfSearch, when > 0, is the candidate list of an approximate (HNSW) vector search for this query, 1 to
	// MaxEfSearch: larger finds more of the true nearest neighbours and costs more. Exact stores ignore it.
	EfSearch int `json:"ef_search,omitempty"`
	// Context names the documents of the conversation so far (the documents the previous answer cited): their
	// passages gain the document signal, as those of a document the query names, at ContextShare of the
	// strongest named document's weight. Set by the answer service for a follow-up question; not part of
	// the /api/search body.
	Context []string `json:"-"`
	// MaxPerDocument > 0 lets at most that many passages of one document precede other documents' passages
	// (overriding the retriever's setting). The answer service sets AnswerMaxPerDocument; not part of the
	// /api/search body.
	MaxPerDocument int `json:"-"`
	// DocumentWeight > 0 weighs the document signal (the passages of the documents the query names; see
	// retrieve.Options.DocumentWeight) for this request, overriding the retriever's setting. The answer
	// service sets AnswerDocumentWeight; not part of the /api/search body.
	DocumentWeight float64 `json:"-"`
	// Expansions are other wordings of the query (the answer service's LLM query expansion): they are
	// searched as the collection's synonym variants are — their terms join the keyword query and the
	// threshold takes the best covered wording — while the query vector stays the query's. Not part of the
	// /api/search body.
	Expansions []string `json:"-"`
	// ForAnswer marks a request for the passages an answer is given (the answer service sets it): they are
	// ranked by the question's own words — no keyword feedback, and the lexical hash vectors at their full
	// weight for every query (retrieve.Options.KeywordFeedback, VectorWeight). Feedback lifts passages that
	// share the best matches' vocabulary, and in a collection of look-alike documents those are other
	// documents' passages of the same section, which an extractive answerer then quotes (docs/retrieval.md,
	// branch rank). Not part of the /api/search body.
	ForAnswer bool `json:"-"`
}

// AnswerMaxPerDocument is the per-document cap of the passages an answer is given: a generator that sees
// one long document only (the assembly minutes list every bill) cannot answer about another one.
const AnswerMaxPerDocument = 2

// AnswerCapShare is how strong, as a share of its own fused score, another document's passage must be to
// stay ahead of a document's passage over AnswerMaxPerDocument in the passages an answer is given
// (retrieve.Options.CapShare for searches): a third passage of the one document a question is about comes
// before a weak passage of another, which at 0.7 (the searches' share) made more unanswerable questions
// answered; 0.5 measured best (docs/retrieval.md, branch fxans).
const AnswerCapShare = 0.5

// AnswerDocumentWeight is the document signal's weight for the passages an answer is given: a question
// that names a document ("고잔 신혼 보금자리 공고 관련 문의 전화번호", "검토보고서의 검토의견") is answered from
// that document's passages rather than from whichever document repeats its other words. Plain searches keep
// the retriever's setting (off by default), where the signal moved other pages of the named document above
// the page judged right (docs/retrieval.md, "Ablation: document signal").
const AnswerDocumentWeight = 0.2

// ContextShare is the weight of a conversation's document (SearchRequest.Context) relative to the best
// document the query names itself; when the query names none, a conversation's document has full weight.
const ContextShare = 0.7

// MaxEfSearch is the largest EfSearch (pgvector's limit for hnsw.ef_search).
const MaxEfSearch = 1000

// The largest k of a request, the same on every surface: a search (POST /api/search, ragd search) returns
// at most MaxSearchK hits; an answer (POST /api/chat, ragd ask) is given at most MaxAnswerK passages.
const (
	MaxSearchK = 100
	MaxAnswerK = 20
)

// CheckK checks a request's k against its surface's largest (MaxSearchK or MaxAnswerK): 0 means the default,
// otherwise 1 to maxK. The error is CodeInvalid and names the range.
func CheckK(k, maxK int) error {
	if k < 0 || k > maxK {
		return Errorf(CodeInvalid, "k must be between 1 and %d (got %d)", maxK, k)
	}
	return nil
}

// Candidate is a chunk proposed by one candidate query (vector or keyword) with that query's score.
// Rank is 1-based within that query's list.
type Candidate struct {
	ChunkID int64
	Score   float64
	Rank    int
}

// DocumentCandidate is a document proposed by the document-level keyword query with its score; Rank is
// 1-based.
type DocumentCandidate struct {
	DocumentID string
	Score      float64
	Rank       int
	// Chunks is the document's passage count.
	Chunks int
}

// VectorQuery asks a store for the chunks nearest to Vector among the vectors of Space.
type VectorQuery struct {
	Space  Space
	Vector []float32
	Filter Filter
	K      int
	// EfSearch overrides the store's HNSW candidate list for this query when > 0 (see SearchRequest).
	EfSearch int
}

// KeywordQuery asks a store for the chunks that best match Terms (the analyzer's tokens of the query, ORed)
// by BM25. Scores are positive, higher is better.
type KeywordQuery struct {
	Terms  []string
	Filter Filter
	K      int
}

// WeightedTerms returns the distinct non-empty terms of terms, in their first order, each with the sum of
// its weights (weights[i] for terms[i]; 1 each when weights is nil): what Store.KeywordScores scores.
// CodeInvalid when weights is not nil and not as long as terms.
func WeightedTerms(terms []string, weights []float64) ([]string, []float64, error) {
	if weights != nil && len(weights) != len(terms) {
		return nil, nil, Errorf(CodeInvalid, "keyword scores: %d weights for %d terms", len(weights), len(terms))
	}
	at := make(map[string]int, len(terms))
	var ts []string
	var ws []float64
	for i, t := range terms {
		if t == "" {
			continue
		}
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		j, ok := at[t]
		if !ok {
			j = len(ts)
			at[t] = j
			ts, ws = append(ts, t), append(ws, 0)
		}
		ws[j] += w
	}
	return ts, ws, nil
}

// Hit is one retrieved chunk with the document facts needed to cite it and every score that produced its rank.
type Hit struct {
	Chunk
	CollectionID string         `json:"collection_id"`
	ExternalID   string         `json:"external_id"`
	Title        string         `json:"title"`
	Source       string         `json:"source"`
	MediaType    string         `json:"media_type"`
	Metadata     map[string]any `json:"metadata,omitempty"`
	UpdatedAt    time.Time      `json:"updated_at"`
	Scores
}

// Scores are every score that produced a hit's rank (in JSON, fields of the hit itself).
type Scores struct {
	// Score is the final score (fused, then re-ranked) that orders the hits.
	Score float64 `json:"score"`
	// FusedScore is the weighted reciprocal-rank fusion score.
	FusedScore float64 `json:"fused_score"`
	// VectorScore is the cosine similarity (0 and VectorRank 0 when not a vector candidate).
	VectorScore float64 `json:"vector_score"`
	VectorRank  int     `json:"vector_rank"`
	// KeywordScore is the BM25 score (0 and KeywordRank 0 when not a keyword candidate).
	KeywordScore float64 `json:"keyword_score"`
	KeywordRank  int     `json:"keyword_rank"`
	// FeedbackScore is the BM25 score of the query expanded by keyword feedback (0 and FeedbackRank 0 when
	// feedback is off or the hit is not in its list; see retrieve.Options.KeywordFeedback).
	FeedbackScore float64 `json:"feedback_score,omitempty"`
	FeedbackRank  int     `json:"feedback_rank,omitempty"`
	// DocumentRank is the rank of the passage's document among those the query names (0 when it is not one
	// of those; see retrieve.Options.DocumentWeight).
	DocumentRank int `json:"document_rank,omitempty"`
	// Opening marks the opening passage (the title page) of a document the query is about as a whole: it
	// names the document by its kind ("이 법률안은 …", "this report") and the document's naming fields hold
	// that phrase (see retrieve.Options.OpeningWeight).
	Opening bool `json:"opening,omitempty"`
	// RerankScore is the cross-encoder's relevance score (absent when no re-ranker scored the hit).
	RerankScore *float64 `json:"rerank_score,omitempty"`
	// Recency, Importance and Permission are the re-ranking blend's inputs, 0 to 1 (absent without a blend;
	// see internal/rerank).
	Recency    *float64 `json:"recency,omitempty"`
	Importance *float64 `json:"importance,omitempty"`
	Permission *float64 `json:"permission,omitempty"`
}

// RerankInfo says what the re-ranking stage did in a search.
type RerankInfo struct {
	// Reranker is the cross-encoder ("cohere/rerank-v3.5"; "" without one) and Candidates how many fused
	// candidates it scored.
	Reranker   string `json:"reranker,omitempty"`
	Candidates int    `json:"candidates,omitempty"`
	// Weights are the blend's similarity, recency, importance and permission weights (absent without one).
	Weights []float64 `json:"weights,omitempty"`
	// Warning says what failed (the re-ranker's error); the hits then keep the fused order.
	Warning string `json:"warning,omitempty"`
}

// SearchResult is the answer of a retrieval.
type SearchResult struct {
	Hits []Hit `json:"hits"`
	// Candidates counts each candidate query's list before fusion.
	VectorCandidates  int `json:"vector_candidates"`
	KeywordCandidates int `json:"keyword_candidates"`
	// Space is the ID of the embedding space the vector candidates came from; "" when the search was
	// keyword-only.
	Space string `json:"space,omitempty"`
	// Rerank says what the re-ranking stage did (absent when it is off).
	Rerank *RerankInfo `json:"rerank,omitempty"`
	// Timing in milliseconds.
	EmbedMS   float64 `json:"embed_ms"`
	VectorMS  float64 `json:"vector_ms"`
	KeywordMS float64 `json:"keyword_ms"`
	TotalMS   float64 `json:"total_ms"`
}
