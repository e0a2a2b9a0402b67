package rerank_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/rerank"
)

var passages = []string{
	"The harbour office collects the levy monthly.",
	"Compressor stall margins shrink as inlet distortion grows.",
	"Inlet distortion and compressor stall were measured in the wind tunnel.",
}

const query = "compressor stall inlet distortion"

// noWait records the retry waits instead of sleeping.
func noWait(waits *[]time.Duration) provider.Retry {
	return provider.Retry{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Minute,
		Sleep: func(_ context.Context, d time.Duration) error { *waits = append(*waits, d); return nil }}
}

func encoder(t *testing.T, f *fakeapi.Reranker, format string, retry provider.Retry, timeout time.Duration) rerank.CrossEncoder {
	t.Helper()
	e, err := rerank.New(rerank.Config{Reranker: format, BaseURL: f.URL(), APIKey: f.Key(), Model: "m-1", Retry: retry, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestAdapters runs every adapter against the fake of its wire format: the request carries the format's
// fields, and the scores come back by index.
func TestAdapters(t *testing.T) {
	for _, format := range rerank.Names() {
		t.Run(format, func(t *testing.T) {
			key := "k-secret"
			if format == rerank.TEI {
				key = ""
			}
			f := fakeapi.NewReranker(format, key)
			defer f.Close()
			var waits []time.Duration
			scores, err := encoder(t, f, format, noWait(&waits), 0).Score(context.Background(), query, passages)
			if err != nil {
				t.Fatal(err)
			}
			if len(scores) != 3 || !(scores[1] > scores[0] && scores[2] > scores[0]) {
				t.Errorf("scores %v: the two compressor passages must beat the levy one", scores)
			}
			if v := f.Violations(); len(v) > 0 {
				t.Errorf("violations: %v", v)
			}
			req, _ := f.LastRequest(fakeapi.EndpointRerank)
			var body map[string]any
			if err := req.JSON(&body); err != nil {
				t.Fatal(err)
			}
			if req.Path != f.Path() || body["query"] != query {
				t.Errorf("request %s %v", req.Path, body)
			}
			want := map[string]string{rerank.TEI: "texts", rerank.Voyage: "top_k"}[format]
			if want == "" {
				want = "top_n"
			}
			if _, ok := body[want]; !ok {
				t.Errorf("%s request lacks %q: %v", format, want, body)
			}
			if key != "" && req.Header.Get("Authorization") != "Bearer "+key {
				t.Errorf("auth header %q", req.Header.Get("Authorization"))
			}
		})
	}
}

func TestAdapterFaults(t *testing.T) {
	ctx := context.Background()
	for _, format := range []string{rerank.Cohere, rerank.TEI, rerank.Voyage} {
		t.Run(format, func(t *testing.T) {
			f := fakeapi.NewReranker(format, "k")
			defer f.Close()
			var waits []time.Duration
			e := encoder(t, f, format, noWait(&waits), 0)

			f.FailNext(1, fakeapi.Fault{Status: 429, RetryAfter: 7 * time.Second})
			if _, err := e.Score(ctx, query, passages); err != nil || len(waits) != 1 || waits[0] < 7*time.Second {
				t.Errorf("429 then success: err %v, waits %v (want one wait of ≥ 7s)", err, waits)
			}
			f.FailNext(3, fakeapi.Fault{Status: 500})
			_, err := e.Score(ctx, query, passages)
			if err == nil || !strings.Contains(rag.ErrorMessage(err), "500") {
				t.Errorf("three 500s: %v", err)
			}
			f.FailNext(1, fakeapi.Fault{Malformed: true})
			if _, err := e.Score(ctx, query, passages); err == nil {
				t.Error("malformed JSON accepted")
			}
			slow := encoder(t, f, format, noWait(&waits), 50*time.Millisecond)
			f.FailNext(1, fakeapi.Fault{Delay: 2 * time.Second})
			if _, err := slow.Score(ctx, query, passages); err == nil {
				t.Error("timeout not reported")
			}
			if strings.Contains(rag.ErrorMessage(err), "k-secret") {
				t.Error("key in message")
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	for _, c := range []rerank.Config{{Reranker: "bogus"}, {Reranker: rerank.TEI}, {Reranker: rerank.Cohere}} {
		if _, err := rerank.New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
	if _, err := rerank.Preset("seed004"); err == nil {
		t.Error("unknown preset accepted")
	}
	if w, err := rerank.Preset("seed003"); err != nil || w != (rerank.Weights{Similarity: 0.5, Recency: 0.2, Importance: 0.2, Permission: 0.1}) {
		t.Errorf("seed003 = %+v, %v", w, err)
	}
}

func hits() []rag.Hit {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]rag.Hit, len(passages))
	for i, p := range passages {
		out[i] = rag.Hit{Chunk: rag.Chunk{ID: int64(i + 1), Text: p}, UpdatedAt: now}
		out[i].FusedScore = 1 / float64(60+i+1)
		out[i].Score = out[i].FusedScore
	}
	return out
}

// TestApply: the cross-encoder reorders; a failing one leaves the fused order with a warning.
func TestApply(t *testing.T) {
	f := fakeapi.NewReranker(rerank.Jina, "k")
	defer f.Close()
	var waits []time.Duration
	opt := rerank.Options{Encoder: encoder(t, f, rerank.Jina, noWait(&waits), 0)}.WithDefaults()
	h := hits()
	info := opt.Apply(context.Background(), rag.LocalPrincipal, query, h)
	if info == nil || info.Warning != "" || info.Candidates != 3 || h[0].RerankScore == nil {
		t.Errorf("info %+v, order %q", info, h[0].Text)
	}
	if h[len(h)-1].Text != passages[0] {
		t.Errorf("the levy passage must fall last: %q", h[len(h)-1].Text)
	}
	f.SetDown(true)
	h = hits()
	info = opt.Apply(context.Background(), rag.LocalPrincipal, query, h)
	if info == nil || !strings.Contains(info.Warning, "re-ranker failed") || h[0].Text != passages[0] || h[0].RerankScore != nil {
		t.Errorf("down: info %+v, first %q", info, h[0].Text)
	}
}

// TestBlend: importance, authored_at and permission move hits by the seed003 weights.
func TestBlend(t *testing.T) {
	w, _ := rerank.Preset("seed003")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	opt := rerank.Options{Weights: w, Now: func() time.Time { return now }}.WithDefaults()
	h := hits()
	h[2].Metadata = map[string]any{"importance": 1.0}
	h[0].Metadata = map[string]any{"authored_at": "2019-05-01", "permission_weight": 0.0}
	opt.Apply(context.Background(), rag.LocalPrincipal, query, h)
	if h[0].ID != 3 || h[2].ID != 1 {
		t.Errorf("order %d %d %d, want 3 2 1", h[0].ID, h[1].ID, h[2].ID)
	}
	if *h[2].Recency > 0.01 || *h[2].Permission != 0 || *h[0].Importance != 1 {
		t.Errorf("inputs %+v", h[2].Scores)
	}
	if d := rerank.Date(&h[2]); d.Year() != 2019 {
		t.Errorf("Date = %v, want authored_at", d)
	}
}
