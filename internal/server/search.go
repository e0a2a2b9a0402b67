package server

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/filter"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// searchRequest is the body of POST /api/search.
type searchRequest struct {
	Query      string     `json:"query"`
	K          int        `json:"k"`
	EfSearch   int        `json:"ef_search"`
	Collection string     `json:"collection"`
	Filters    rag.Filter `json:"filters"`
}

// searchResponse is the retrieval result with every score, plus the query as searched.
type searchResponse struct {
	Query     string `json:"query"`
	Truncated bool   `json:"truncated"`
	*rag.SearchResult
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	var req searchRequest
	if err := decodeJSON(w, r, MaxJSONBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	q := strings.TrimSpace(textproc.Normalize(req.Query))
	if q == "" {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "query is required"))
		return
	}
	if err := rag.CheckK(req.K, rag.MaxSearchK); err != nil {
		s.writeError(w, r, err)
		return
	}
	truncated := false
	if utf8.RuneCountInString(q) > rag.MaxQuestionChars {
		q, truncated = string([]rune(q)[:rag.MaxQuestionChars]), true
	}
	f := requestFilter(req.Filters, req.Collection)
	if err := f.Check(); err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx, release, err := s.deps.Slots.Enter(r.Context())
	if err != nil {
		return // the client went away while it waited
	}
	res, err := s.deps.Search.Search(ctx, principalOf(r), rag.SearchRequest{Query: q, Filter: f, K: req.K, EfSearch: req.EfSearch})
	release()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	noteHits(r, res.Hits)
	if res.Hits == nil {
		res.Hits = []rag.Hit{}
	}
	writeJSON(w, http.StatusOK, searchResponse{Query: q, Truncated: truncated, SearchResult: res})
}

// requestFilter is the filter of a chat or search request: its filters, in its collection when it names one,
// with short type names (pdf, md, …) read as their media types as everywhere else.
func requestFilter(f rag.Filter, collection string) rag.Filter {
	if collection != "" {
		f.Collections = append(f.Collections, collection)
	}
	f.MediaTypes = filter.MediaTypes(f.MediaTypes)
	return f
}
