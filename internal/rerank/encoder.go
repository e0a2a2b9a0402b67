package rerank

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
)

// CrossEncoder scores passages against a query: one relevance score per passage, by index, higher is more
// relevant. Scores are comparable within one call only.
type CrossEncoder interface {
	// Name is the re-ranker and model, e.g. "cohere/rerank-v3.5".
	Name() string
	Score(ctx context.Context, query string, passages []string) ([]float64, error)
}

// The re-rankers RAGD_RERANKER names.
const (
	Cohere   = "cohere"
	Jina     = "jina"
	Voyage   = "voyage"
	TEI      = "tei"
	Infinity = "infinity"
	LlamaCpp = "llamacpp"
)

// wire describes one API: its default base URL (hosted ones), path, default model and request dialect.
type wire struct {
	base, path, model string
	needsKey          bool
	// topField is "top_n", "top_k", or "" (TEI: every passage is scored).
	topField string
}

var wires = map[string]wire{
	Cohere:   {base: "https://api.cohere.com", path: "/v2/rerank", model: "rerank-v3.5", needsKey: true, topField: "top_n"},
	Jina:     {base: "https://api.jina.ai", path: "/v1/rerank", model: "jina-reranker-v2-base-multilingual", needsKey: true, topField: "top_n"},
	Voyage:   {base: "https://api.voyageai.com", path: "/v1/rerank", model: "rerank-2", needsKey: true, topField: "top_k"},
	TEI:      {path: "/rerank"},
	Infinity: {path: "/rerank", topField: "top_n"},
	LlamaCpp: {path: "/v1/rerank", topField: "top_n"},
}

// Names lists the re-rankers New accepts besides "none".
func Names() []string { return []string{Cohere, Jina, Voyage, TEI, Infinity, LlamaCpp} }

// Config configures a cross-encoder.
type Config struct {
	// Reranker is one of Names.
	Reranker string
	// Model is the model name sent (default per hosted API; self-hosted servers serve one model and may
	// ignore it).
	Model string
	// BaseURL is the server's root (required for tei, infinity and llamacpp; hosted APIs default to theirs).
	BaseURL string
	// APIKey is sent as a Bearer token (required for the hosted APIs, optional for self-hosted ones).
	APIKey string
	// Timeout bounds one attempt (default provider.DefaultTimeout); Retry is the retry policy.
	Timeout time.Duration
	Retry   provider.Retry
	// HTTPClient is the base client (nil: a new one).
	HTTPClient *http.Client
}

// New returns the cross-encoder cfg names.
func New(cfg Config) (CrossEncoder, error) {
	w, ok := wires[cfg.Reranker]
	if !ok {
		return nil, fmt.Errorf("unknown re-ranker %q (want none or one of %s)", cfg.Reranker, strings.Join(Names(), ", "))
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = w.base
	}
	if base == "" {
		return nil, fmt.Errorf("re-ranker %s needs RAGD_RERANK_URL (the server's base URL)", cfg.Reranker)
	}
	if w.needsKey && cfg.APIKey == "" {
		return nil, fmt.Errorf("re-ranker %s needs RAGD_RERANK_API_KEY", cfg.Reranker)
	}
	model := cfg.Model
	if model == "" {
		model = w.model
	}
	c := provider.New(provider.Policy{Provider: cfg.Reranker, Code: rag.CodeInternal, Timeout: cfg.Timeout,
		Retry: cfg.Retry, Secrets: []string{cfg.APIKey}})
	return &httpEncoder{kind: cfg.Reranker, w: w, url: base + w.path, model: model, key: cfg.APIKey,
		caller: c, client: c.HTTPClient(cfg.HTTPClient)}, nil
}

type httpEncoder struct {
	kind   string
	w      wire
	url    string
	model  string
	key    string
	caller *provider.Caller
	client *http.Client
}

func (e *httpEncoder) Name() string {
	if e.model == "" {
		return e.kind
	}
	return e.kind + "/" + e.model
}

// result is one scored passage in any of the dialects: Cohere, Jina, Voyage, Infinity and llama.cpp say
// relevance_score, TEI says score.
type result struct {
	Index          int      `json:"index"`
	RelevanceScore *float64 `json:"relevance_score"`
	Score          *float64 `json:"score"`
}

func (e *httpEncoder) request(query string, passages []string) map[string]any {
	body := map[string]any{"query": query}
	if e.kind == TEI {
		body["texts"] = passages
		body["truncate"] = true
		body["raw_scores"] = false
		body["return_text"] = false
		return body
	}
	body["documents"] = passages
	if e.model != "" {
		body["model"] = e.model
	}
	body[e.w.topField] = len(passages)
	if e.kind != Cohere { // Cohere v2 returns no documents and has no such field
		body["return_documents"] = false
	}
	return body
}

// Score sends the passages and returns their scores by index. A passage the API leaves out of its answer
// is an error (every passage was asked for).
func (e *httpEncoder) Score(ctx context.Context, query string, passages []string) ([]float64, error) {
	if len(passages) == 0 {
		return nil, nil
	}
	payload, err := json.Marshal(e.request(query, passages))
	if err != nil {
		return nil, err
	}
	var scores []float64
	err = e.caller.Do(ctx, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(payload))
		if err != nil {
			return provider.Permanent(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		if e.key != "" {
			req.Header.Set("Authorization", "Bearer "+e.key)
		}
		resp, err := e.client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(raw)))
		}
		scores, err = e.decode(raw, len(passages))
		return err
	})
	return scores, err
}

func (e *httpEncoder) decode(raw []byte, n int) ([]float64, error) {
	var results []result
	switch e.kind {
	case TEI:
		if err := json.Unmarshal(raw, &results); err != nil {
			return nil, provider.BadResponse("malformed response: %v", err)
		}
	case Voyage:
		var v struct {
			Data []result `json:"data"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, provider.BadResponse("malformed response: %v", err)
		}
		results = v.Data
	default:
		var v struct {
			Results []result `json:"results"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, provider.BadResponse("malformed response: %v", err)
		}
		results = v.Results
	}
	scores := make([]float64, n)
	seen := make([]bool, n)
	for _, r := range results {
		s := r.RelevanceScore
		if s == nil {
			s = r.Score
		}
		if r.Index < 0 || r.Index >= n || s == nil || seen[r.Index] {
			return nil, provider.BadResponse("response names passage %d wrongly (asked %d)", r.Index, n)
		}
		scores[r.Index], seen[r.Index] = *s, true
	}
	for i, ok := range seen {
		if !ok {
			return nil, provider.BadResponse("response leaves out passage %d of %d", i, n)
		}
	}
	return scores, nil
}
