package rag

// AnswerView is an answer as ragd shows it in JSON, the same on every surface: the body of POST /api/chat,
// the data of its "done" event, and the output of `ragd ask --json`. Sources are the passages the answer
// cites; Passages are all passages given to the generator, numbered as cited.
type AnswerView struct {
	Answer    string        `json:"answer"`
	Question  string        `json:"question"`
	Truncated bool          `json:"truncated"`
	Language  string        `json:"language"`
	NotFound  bool          `json:"not_found"`
	Generator string        `json:"generator"`
	Sources   []SourceView  `json:"sources"`
	Passages  []SourceView  `json:"passages"`
	Citations CitationCheck `json:"citations"`
	// Weak are the sentences counted in Citations.WeaklySupported, for the UI to mark.
	Weak       []WeakView `json:"weak"`
	SearchInfo SearchInfo `json:"search_info"`
}

// SourceView is one passage of an answer as shown: where it comes from, its text, and every score that
// ranked it. Similarity is the vector (cosine) similarity.
type SourceView struct {
	N          int    `json:"n"`
	ChunkID    int64  `json:"chunk_id"`
	DocumentID string `json:"document_id"`
	// ExternalID is the document's key in its collection (a record's row key, e.g. LH_lease_01).
	ExternalID string `json:"external_id"`
	Title      string `json:"title"`
	Source     string `json:"source"`
	MediaType  string `json:"media_type"`
	// Metadata is the document's (e.g. lecture_name and week); ChunkIndex the passage's 0-based position
	// in the document.
	Metadata   map[string]any `json:"metadata"`
	ChunkIndex int            `json:"chunk_index"`
	PageStart  int            `json:"page_start"`
	PageEnd    int            `json:"page_end"`
	Section    string         `json:"section"`
	Passage    string         `json:"passage"`
	Similarity float64        `json:"similarity"`
	Scores
}

// SearchInfo is the retrieval and timing summary of an answer (the debug panel's latency breakdown).
type SearchInfo struct {
	ChunksRetrieved   int     `json:"chunks_retrieved"`
	LatencyMS         float64 `json:"latency_ms"`
	RetrieveMS        float64 `json:"retrieve_ms"`
	GenerateMS        float64 `json:"generate_ms"`
	EmbedMS           float64 `json:"embed_ms"`
	VectorMS          float64 `json:"vector_ms"`
	KeywordMS         float64 `json:"keyword_ms"`
	VectorCandidates  int     `json:"vector_candidates"`
	KeywordCandidates int     `json:"keyword_candidates"`
	Truncated         bool    `json:"truncated"`
	HistoryTurns      int     `json:"history_turns"`
	// Space is the embedding space searched; "" when the search was keyword-only (during a re-embed whose
	// old space cannot be searched).
	Space string `json:"space"`
	// EntitiesFound, RelationsExpanded and RowsMatched count graph retrieval's steps (absent for an
	// answer from documents); ChunksRetrieved is then the graph's source passages. Graph has the details.
	EntitiesFound     int        `json:"entities_found,omitempty"`
	RelationsExpanded int        `json:"relations_expanded,omitempty"`
	RowsMatched       int        `json:"rows_matched,omitempty"`
	Graph             *GraphInfo `json:"graph,omitempty"`
	// Rerank says what the re-ranking stage did (absent when it is off); its warning says the re-ranker
	// failed and the fused order was kept.
	Rerank *RerankInfo `json:"rerank,omitempty"`
	// Filters is the filter read out of the question by the collection's metadata schema, as applied (absent
	// for an ordinary question); Route how it was answered (list, fact, compare, content); Cached whether the
	// answer came from the answer cache.
	Filters *Filter `json:"filters,omitempty"`
	Route   string  `json:"route,omitempty"`
	// Conditions are what the schema read out of the question, one per chip, those the request's
	// drop_filters removed marked "dropped".
	Conditions []QuestionCondition `json:"conditions,omitempty"`
	Cached     bool                `json:"cached"`
}

// WeakView is a weakly supported sentence of an answer: Answer[Start:End] by UTF-8 byte offsets, also
// given as Text, with the passages it cites and the share of its terms found in them.
type WeakView struct {
	Start     int     `json:"start"`
	End       int     `json:"end"`
	Text      string  `json:"text"`
	Citations []int   `json:"citations"`
	Support   float64 `json:"support"`
}

// ViewSource shows one source.
func ViewSource(s Source) SourceView {
	h := s.Hit
	return SourceView{
		N: s.N, ChunkID: h.ID, DocumentID: h.DocumentID, ExternalID: h.ExternalID, Title: h.Title, Source: h.Source, MediaType: h.MediaType,
		Metadata: h.Metadata, ChunkIndex: h.Index, PageStart: h.PageStart, PageEnd: h.PageEnd, Section: h.Section,
		Passage: h.Text, Similarity: h.VectorScore, Scores: h.Scores,
	}
}

// ViewSources shows a list of sources (never nil, so that JSON has [] rather than null).
func ViewSources(list []Source) []SourceView {
	out := make([]SourceView, len(list))
	for i, s := range list {
		out[i] = ViewSource(s)
	}
	return out
}

// ViewAnswer shows ans, given passages (the AnswerSources event's) after historyTurns turns of history.
func ViewAnswer(ans *Answer, passages []Source, historyTurns int) AnswerView {
	res := AnswerView{
		Answer: ans.Text, Question: ans.Question, Truncated: ans.Truncated, Language: ans.Language,
		NotFound: ans.NotFound, Generator: ans.Generator, Sources: ViewSources(ans.Sources),
		Passages: ViewSources(passages), Citations: ans.Citations, Weak: []WeakView{},
		SearchInfo: SearchInfo{
			ChunksRetrieved: len(passages), LatencyMS: ans.TotalMS, RetrieveMS: ans.RetrieveMS,
			GenerateMS: ans.GenerateMS, Truncated: ans.Truncated, HistoryTurns: historyTurns,
			Filters: ans.Filters, Route: ans.Route, Cached: ans.Cached, Conditions: ans.Conditions,
		},
	}
	for _, w := range ans.Weak {
		if w.Start < 0 || w.End > len(ans.Text) || w.Start > w.End {
			continue
		}
		res.Weak = append(res.Weak, WeakView{Start: w.Start, End: w.End, Text: ans.Text[w.Start:w.End],
			Citations: w.Citations, Support: w.Support})
	}
	if g := ans.Graph; g != nil {
		si := &res.SearchInfo
		si.EntitiesFound, si.RelationsExpanded, si.RowsMatched, si.ChunksRetrieved = g.EntitiesFound, g.RelationsExpanded, g.RowsMatched, g.ChunksRetrieved
		si.Graph = g
	}
	if r := ans.Retrieval; r != nil {
		res.SearchInfo.EmbedMS, res.SearchInfo.VectorMS, res.SearchInfo.KeywordMS = r.EmbedMS, r.VectorMS, r.KeywordMS
		res.SearchInfo.VectorCandidates, res.SearchInfo.KeywordCandidates = r.VectorCandidates, r.KeywordCandidates
		res.SearchInfo.Space, res.SearchInfo.Rerank = r.Space, r.Rerank
	}
	return res
}
