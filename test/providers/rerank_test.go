package providers

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/fakeapi"
)

// TestBinaryReranker runs the binary with RAGD_RERANKER=cohere against the Cohere re-rank fake: searches
// and answers carry the cross-encoder's scores; with the re-ranker down they still answer, in fused order,
// and say why.
func TestBinaryReranker(t *testing.T) {
	t.Parallel()
	f := fakeapi.NewReranker(fakeapi.RerankCohere, "rerank-secret")
	t.Cleanup(f.Close)
	p := serve(t, t.TempDir(), "RAGD_RERANKER=cohere", "RAGD_RERANK_URL="+f.URL(), "RAGD_RERANK_API_KEY=rerank-secret",
		"RAGD_RERANK_TOP_N=7")
	waitReady(t, p.URL, upload(t, p.URL, fixture(t, "html/en_wikipedia_mozilla.html"),
		fixture(t, "md/ko_react_render-and-commit.md")), time.Minute)
	type view struct {
		Hits []struct {
			RerankScore *float64 `json:"rerank_score"`
		} `json:"hits"`
		Rerank *struct {
			Reranker   string `json:"reranker"`
			Candidates int    `json:"candidates"`
			Warning    string `json:"warning"`
		} `json:"rerank"`
	}
	find := func() view {
		t.Helper()
		resp, body := do(t, "POST", p.URL+"/api/search", map[string]any{"query": mozillaQuery, "k": 5}, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("search: HTTP %d %s", resp.StatusCode, body)
		}
		return decode[view](t, body)
	}
	res := find()
	if res.Rerank == nil || res.Rerank.Reranker != "cohere/rerank-v3.5" || res.Rerank.Warning != "" ||
		res.Rerank.Candidates < 1 || res.Rerank.Candidates > 7 || len(res.Hits) == 0 || res.Hits[0].RerankScore == nil {
		t.Fatalf("search with a re-ranker: %+v", res)
	}
	if v := f.Violations(); len(v) > 0 {
		t.Errorf("protocol violations: %v", v)
	}
	code, body := chat(t, p.URL, mozillaQuestion)
	if code != http.StatusOK || !strings.Contains(string(body), `"rerank_score"`) || !strings.Contains(string(body), `"reranker":"cohere/rerank-v3.5"`) {
		t.Fatalf("chat: HTTP %d %.400s", code, body)
	}

	f.SetDown(true)
	res = find()
	if res.Rerank == nil || !strings.Contains(res.Rerank.Warning, "503") || len(res.Hits) == 0 || res.Hits[0].RerankScore != nil {
		t.Fatalf("search with the re-ranker down: %+v", res)
	}
	p.Stop(t)
	mustNotContain(t, "ragd output", p.Output.String(), "rerank-secret")
}
