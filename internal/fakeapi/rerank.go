package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"unicode"
)

// EndpointRerank is the endpoint kind of a re-rank request, as counted by Calls.
const EndpointRerank = "rerank"

// Re-ranker wire formats a Reranker fake speaks.
const (
	RerankCohere   = "cohere"   // POST /v2/rerank, Bearer key: {model, query, documents, top_n} → {id, results:[{index, relevance_score}], meta}
	RerankJina     = "jina"     // POST /v1/rerank, Bearer key: {model, query, documents, top_n, return_documents} → {model, usage, results:[…]}
	RerankVoyage   = "voyage"   // POST /v1/rerank, Bearer key: {model, query, documents, top_k, return_documents} → {object:"list", data:[…], model, usage}
	RerankTEI      = "tei"      // POST /rerank, no key: {query, texts, raw_scores, return_text, truncate} → [{index, score}]
	RerankInfinity = "infinity" // POST /rerank (Cohere-like), optional key → {object:"rerank", results:[…], model, usage, id, created}
	RerankLlamaCpp = "llamacpp" // POST /v1/rerank (Jina-like), optional key → {model, object:"list", usage, results:[…]}
)

// Reranker is a local stand-in for a cross-encoder re-rank API in one of the wire formats above. A passage's
// relevance score is the share of the query's words it holds (deterministic, higher for related texts),
// squashed into (0, 1) like the hosted models' scores.
type Reranker struct {
	*Server
	format string
}

// NewReranker starts a re-rank fake speaking format (RerankCohere, …). key "" accepts any request; otherwise
// requests must send "Authorization: Bearer <key>" (TEI takes none and ignores it).
func NewReranker(format, key string) *Reranker {
	f := &Reranker{format: format}
	f.Server = newServer(key, http.HandlerFunc(f.serve))
	return f
}

// Path is the request path of the fake's format.
func (f *Reranker) Path() string {
	switch f.format {
	case RerankCohere:
		return "/v2/rerank"
	case RerankTEI, RerankInfinity:
		return "/rerank"
	default:
		return "/v1/rerank"
	}
}

func (f *Reranker) serve(w http.ResponseWriter, r *http.Request) {
	body := readBody(r)
	flt, down := f.begin(EndpointRerank, r, body)
	if r.Method != http.MethodPost || r.URL.Path != f.Path() {
		f.fail(w, http.StatusNotFound, f.violation("%s %s: not found (the %s API serves POST %s)", r.Method, r.URL.Path, f.format, f.Path()))
		return
	}
	if down {
		f.fail(w, http.StatusServiceUnavailable, "service unavailable")
		return
	}
	if f.key != "" && f.format != RerankTEI && r.Header.Get("Authorization") != "Bearer "+f.key {
		f.fail(w, http.StatusUnauthorized, f.violation("invalid api token"))
		return
	}
	if flt != nil {
		if !delay(r, flt.Delay) {
			return
		}
		switch {
		case flt.Status != 0:
			if flt.RetryAfter > 0 {
				w.Header().Set("Retry-After", fmt.Sprint(int(flt.RetryAfter.Seconds())))
			}
			msg := flt.Message
			if msg == "" {
				msg = http.StatusText(flt.Status)
			}
			f.fail(w, flt.Status, msg)
			return
		case flt.Malformed:
			writeMalformed(w)
			return
		}
	}
	var req struct {
		Model     *string         `json:"model"`
		Query     *string         `json:"query"`
		Documents json.RawMessage `json:"documents"`
		Texts     []string        `json:"texts"`
		TopN      *int            `json:"top_n"`
		TopK      *int            `json:"top_k"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		f.fail(w, http.StatusBadRequest, f.violation("invalid JSON body: %v", err))
		return
	}
	if req.Query == nil || *req.Query == "" {
		f.fail(w, f.badStatus(), f.violation("missing field `query`"))
		return
	}
	docs, msg := f.documents(req.Documents, req.Texts)
	if msg != "" {
		f.fail(w, f.badStatus(), f.violation("%s", msg))
		return
	}
	hosted := f.format == RerankCohere || f.format == RerankJina || f.format == RerankVoyage
	if hosted && (req.Model == nil || *req.Model == "") {
		f.fail(w, f.badStatus(), f.violation("missing field `model`"))
		return
	}
	if f.format == RerankVoyage && req.TopN != nil {
		f.fail(w, http.StatusBadRequest, f.violation("unknown field `top_n` (Voyage takes top_k)"))
		return
	}
	if f.format != RerankVoyage && req.TopK != nil {
		f.fail(w, f.badStatus(), f.violation("unknown field `top_k` (%s takes top_n)", f.format))
		return
	}
	type result struct {
		Index int     `json:"index"`
		Score float64 `json:"relevance_score"`
	}
	res := make([]result, len(docs))
	for i, d := range docs {
		res[i] = result{i, overlapScore(*req.Query, d)}
	}
	sort.SliceStable(res, func(i, j int) bool { return res[i].Score > res[j].Score })
	top := len(res)
	if req.TopN != nil && *req.TopN > 0 && *req.TopN < top {
		top = *req.TopN
	}
	if req.TopK != nil && *req.TopK > 0 && *req.TopK < top {
		top = *req.TopK
	}
	res = res[:top]
	f.mu.Lock()
	f.stats.GenerateCalls++
	f.mu.Unlock()
	model := ""
	if req.Model != nil {
		model = *req.Model
	}
	var out any
	switch f.format {
	case RerankTEI:
		arr := make([]map[string]any, len(res))
		for i, x := range res {
			arr[i] = map[string]any{"index": x.Index, "score": x.Score}
		}
		out = arr
	case RerankVoyage:
		out = map[string]any{"object": "list", "data": res, "model": model, "usage": map[string]int{"total_tokens": len(docs)}}
	case RerankCohere:
		out = map[string]any{"id": "fake-rerank", "results": res, "meta": map[string]any{"billed_units": map[string]int{"search_units": 1}}}
	case RerankInfinity:
		out = map[string]any{"object": "rerank", "results": res, "model": model, "usage": map[string]int{"prompt_tokens": 0, "total_tokens": 0}, "id": "fake-rerank", "created": 0}
	default: // jina, llamacpp
		out = map[string]any{"model": model, "object": "list", "usage": map[string]int{"total_tokens": len(docs)}, "results": res}
	}
	if flt != nil && flt.CutAfter > 0 {
		writeCut(w, out)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// documents reads the passages: TEI's texts, or the others' documents (strings; Cohere v1-style {text}
// objects are refused by v2 and accepted elsewhere).
func (f *Reranker) documents(raw json.RawMessage, texts []string) ([]string, string) {
	if f.format == RerankTEI {
		if len(raw) > 0 {
			return nil, "unknown field `documents` (TEI takes texts)"
		}
		if len(texts) == 0 {
			return nil, "`texts` cannot be empty"
		}
		return texts, ""
	}
	if texts != nil {
		return nil, "unknown field `texts`"
	}
	var docs []string
	if err := json.Unmarshal(raw, &docs); err != nil || len(docs) == 0 {
		return nil, "`documents` must be a non-empty list of strings"
	}
	return docs, ""
}

func (f *Reranker) badStatus() int {
	if f.format == RerankTEI || f.format == RerankInfinity {
		return http.StatusUnprocessableEntity
	}
	return http.StatusBadRequest
}

func (f *Reranker) fail(w http.ResponseWriter, status int, msg string) {
	switch f.format {
	case RerankTEI:
		writeJSON(w, status, map[string]string{"error": msg, "error_type": "Validation"})
	case RerankCohere:
		writeJSON(w, status, map[string]string{"message": msg})
	default:
		writeJSON(w, status, map[string]any{"detail": msg})
	}
}

// overlapScore is the share of the query's words found in doc, squashed into (0, 1).
func overlapScore(query, doc string) float64 {
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	have := map[string]bool{}
	for _, w := range words(doc) {
		have[w] = true
	}
	q := words(query)
	n := 0
	for _, w := range q {
		if have[w] {
			n++
		}
	}
	if len(q) == 0 {
		return 0.01
	}
	return 0.01 + 0.98*float64(n)/float64(len(q))
}
