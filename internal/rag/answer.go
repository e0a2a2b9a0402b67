package rag

import (
	"slices"
	"time"
)

// AskRequest is a question to answer from the documents.
type AskRequest struct {
	Question string `json:"question"`
	History  []Turn `json:"history,omitempty"`
	Filter   Filter `json:"filter"`
	K        int    `json:"k,omitempty"`
	// AsOf is the date relative dates of the question ("within a week", "in December") and computed fields
	// of a collection's schema resolve against; zero means today.
	AsOf time.Time `json:"as_of,omitempty"`
	// DropFilters are fields of the collection's schema whose conditions, read out of the question, are not
	// applied (the schema's key field: the rows the question names), at most MaxDropFilters.
	DropFilters []string `json:"drop_filters,omitempty"`
}

// MaxDropFilters is how many fields AskRequest.DropFilters may name.
const MaxDropFilters = 20

// QuestionCondition is one condition the collection's schema read out of a question, as a client shows it
// (a chip): the field, its display name, the operator and values as the question says them (a computed
// field by its value; the rows the question names as the key field "in" their keys), a short text
// (보증금 ≤ 1,000만원), and whether AskRequest.DropFilters removed it.
type QuestionCondition struct {
	Field   string `json:"field"`
	Label   string `json:"label"`
	Op      MetaOp `json:"op"`
	Values  []any  `json:"values"`
	Text    string `json:"text"`
	Dropped bool   `json:"dropped,omitempty"`
}

// MaxQuestionChars is the longest question answered as is; longer ones are truncated (and the answer says so).
const MaxQuestionChars = 500

// MaxContextDocuments is how many of an assistant turn's DocumentIDs a follow-up's retrieval uses (the first).
const MaxContextDocuments = 5

// MaxHistoryTurns is how many of the most recent history turns are kept.
const MaxHistoryTurns = 5

// Source is a cited passage of an answer; N is the number used in the answer text ([N]).
type Source struct {
	N int `json:"n"`
	Hit
}

// CitationCheck reports how the answer's citations held up: Valid citations point at a given passage,
// Removed ones pointed at a number that was not given, WeaklySupported sentences cite a passage whose words
// they barely share.
type CitationCheck struct {
	Valid           int `json:"valid"`
	Removed         int `json:"removed"`
	WeaklySupported int `json:"weakly_supported"`
}

// Answer is a cited answer.
type Answer struct {
	Question  string `json:"question"`
	Truncated bool   `json:"truncated"`
	Language  string `json:"language"`
	// Text is markdown with [n] citations.
	Text string `json:"answer"`
	// Sources are the passages the answer cites, by N.
	Sources []Source `json:"sources"`
	// NotFound is true when no passage cleared the threshold and the answer says the documents do not cover it.
	NotFound  bool          `json:"not_found"`
	Citations CitationCheck `json:"citations"`
	// Weak are the sentences of Text counted in Citations.WeaklySupported, for the UI to mark.
	Weak      []Span `json:"weak,omitempty"`
	Generator string `json:"generator"`
	// Retrieval is what retrieval returned (every hit with its scores), for the debug panel and eval.
	Retrieval *SearchResult `json:"retrieval,omitempty"`
	// RetrievalQuery is what was retrieved: the question, or for a follow-up the question with the previous
	// one, or the generator's standalone rewrite of it.
	RetrievalQuery string `json:"retrieval_query,omitempty"`
	// Graph is what graph retrieval did when the answer came from a collection's graph (nil otherwise).
	Graph *GraphInfo `json:"graph,omitempty"`
	// Filters is the filter the answer applied when the collection's schema read conditions out of the
	// question (the request's filter with them); nil otherwise.
	Filters *Filter `json:"filters,omitempty"`
	// Route says how a question over a schema collection was answered: "list", "fact" or "compare" from
	// the rows, "content" from the documents of the matching rows; "" for an ordinary question.
	Route string `json:"route,omitempty"`
	// Conditions are the conditions read out of the question, the dropped ones marked (nil for an
	// ordinary question).
	Conditions []QuestionCondition `json:"conditions,omitempty"`
	// Cached is true when the answer came from the answer cache.
	Cached bool `json:"cached,omitempty"`
	// Expansions are the other wordings of it the generator gave (RAGD_QUERY_EXPANSION=llm), searched beside it.
	Expansions []string `json:"expansions,omitempty"`
	RetrieveMS float64  `json:"retrieve_ms"`
	GenerateMS float64  `json:"generate_ms"`
	TotalMS    float64  `json:"total_ms"`
}

// Span is a sentence of an answer's Text, by byte offsets (Text[Start:End]), with the passages it cites and
// the share of its terms found in them (Support, 0–1).
type Span struct {
	Start     int     `json:"start"`
	End       int     `json:"end"`
	Citations []int   `json:"citations"`
	Support   float64 `json:"support"`
}

// AnswerEventType names a step of a streamed answer.
type AnswerEventType string

// Streaming events, in order: one AnswerSources, any number of AnswerDelta, then AnswerDone (or an error).
const (
	AnswerSources AnswerEventType = "sources"
	AnswerDelta   AnswerEventType = "delta"
	AnswerDone    AnswerEventType = "done"
)

// AnswerEvent is one step of a streamed answer.
type AnswerEvent struct {
	Type AnswerEventType
	// Sources (AnswerSources) are the passages given to the generator, numbered as the answer cites them.
	Sources []Source
	// Delta (AnswerDelta) is the next piece of answer text.
	Delta string
	// Answer (AnswerDone) is the final answer, citations checked.
	Answer *Answer
}

// DocumentIDs returns the distinct documents the answer cites, in citation order: what a client passes back
// as the assistant turn's Turn.DocumentIDs.
func (a *Answer) DocumentIDs() []string {
	var out []string
	for _, s := range a.Sources {
		if !slices.Contains(out, s.DocumentID) {
			out = append(out, s.DocumentID)
		}
	}
	return out
}

// GraphInfo counts what graph retrieval did for an answer (search_info of POST /api/chat).
type GraphInfo struct {
	EntitiesFound     int      `json:"entities_found"`
	RelationsExpanded int      `json:"relations_expanded"`
	RowsMatched       int      `json:"rows_matched"`
	ChunksRetrieved   int      `json:"chunks_retrieved"`
	LatencyMS         float64  `json:"latency_ms"`
	Spec              string   `json:"spec,omitempty"`
	Intents           []string `json:"intents,omitempty"`
}
