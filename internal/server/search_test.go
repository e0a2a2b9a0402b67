package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

func TestSearch(t *testing.T) {
	b := setup(t, nil)
	doc := b.ingestFile(t, renderDoc, func(r *ingest.Request) { r.Tags = []string{"react"} })
	const q = "렌더링 트리거"

	b.run(t, []scenario{
		{
			name: "OK", method: "POST", path: "/api/search", status: 200,
			body:     jsonBody(map[string]any{"query": q, "k": 3}),
			contains: []string{`"vector_score"`, `"vector_rank"`, `"keyword_score"`, `"keyword_rank"`, `"fused_score"`, `"embed_ms"`},
			check: func(t *testing.T, _ *http.Response, body []byte) {
				res := decode[struct {
					Query     string
					Truncated bool
					Hits      []rag.Hit
				}](t, body)
				if len(res.Hits) == 0 || len(res.Hits) > 3 || res.Hits[0].DocumentID != doc.ID || res.Query != q {
					t.Fatalf("search result %+v", res)
				}
				h := res.Hits[0]
				if h.FusedScore <= 0 || (h.VectorRank == 0 && h.KeywordRank == 0) {
					t.Fatalf("hit without scores: %+v", h)
				}
			},
		},
		{name: "FilterTagMatches", method: "POST", path: "/api/search", status: 200,
			body: jsonBody(map[string]any{"query": q, "filters": map[string]any{"tags": []string{"react"}}}), contains: []string{doc.ID}},
		{name: "FilterTypeShortName", method: "POST", path: "/api/search", status: 200,
			body: jsonBody(map[string]any{"query": q, "filters": map[string]any{"media_types": []string{"md"}}}), contains: []string{doc.ID}},
		{name: "FilterTypeShortNameExcludes", method: "POST", path: "/api/search", status: 200,
			body: jsonBody(map[string]any{"query": q, "filters": map[string]any{"media_types": []string{"pdf"}}}), contains: []string{`"hits":[]`}},
		{name: "FilterTagExcludes", method: "POST", path: "/api/search", status: 200,
			body: jsonBody(map[string]any{"query": q, "filters": map[string]any{"tags": []string{"vue"}}}), contains: []string{`"hits":[]`}},
		{name: "ErrQueryMissing", method: "POST", path: "/api/search", status: 400, code: rag.CodeInvalid, body: jsonBody(`{"k": 3}`)},
		{name: "ErrKTooLarge", method: "POST", path: "/api/search", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"query": q, "k": rag.MaxSearchK + 1}), contains: []string{"between 1 and 100"}},
		{name: "KMax", method: "POST", path: "/api/search", status: 200, body: jsonBody(map[string]any{"query": q, "k": rag.MaxSearchK})},
		{name: "ErrKNegative", method: "POST", path: "/api/search", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"query": q, "k": -1})},
		{name: "ErrEfSearch1001", method: "POST", path: "/api/search", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"query": q, "ef_search": 1001})},
		{name: "EfSearch1000", method: "POST", path: "/api/search", status: 200,
			body: jsonBody(map[string]any{"query": q, "ef_search": 1000}), contains: []string{doc.ID}},
		{name: "Query501Truncated", method: "POST", path: "/api/search", status: 200,
			body: jsonBody(map[string]any{"query": q + " " + strings.Repeat("나", 501)}), contains: []string{`"truncated":true`}},
		{name: "Query500NotTruncated", method: "POST", path: "/api/search", status: 200,
			body: jsonBody(map[string]any{"query": strings.Repeat("나", 500)}), contains: []string{`"truncated":false`}},
		{name: "ErrBody10KBPlus1", method: "POST", path: "/api/search", status: 413, code: rag.CodePayloadTooLarge,
			body: jsonBody(`{"query": "` + q + `", "pad": "` + strings.Repeat("x", MaxJSONBody) + `"}`)},
		{name: "ErrMethod", method: "GET", path: "/api/search", status: 404, code: rag.CodeNotFound},
	})
}
