package retrieve_test

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/rerank"
	"github.com/ragd/ragd/internal/retrieve"
	"github.com/ragd/ragd/internal/store/sqlite"
)

// bundle is a real SQLite store with documents ingested through the real pipeline.
type bundle struct {
	store *sqlite.Store
	pipe  *ingest.Pipeline
	emb   rag.Embedder
	clock *fakeClock
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func setup(t *testing.T) *bundle {
	t.Helper()
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	st, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{Clock: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ex, err := extract.New(extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	emb := hash.New(0)
	return &bundle{store: st, pipe: ingest.New(st, ex, emb, ingest.Options{}), emb: emb, clock: clk}
}

func (b *bundle) add(t *testing.T, coll, name, text string, meta map[string]any) *rag.Document {
	t.Helper()
	doc, _, err := b.pipe.Ingest(context.Background(), rag.LocalPrincipal, ingest.Request{
		Collection: coll, Name: name, Data: []byte(text), Metadata: meta,
	})
	if err != nil {
		t.Fatalf("ingest %s: %v", name, err)
	}
	return doc
}

func (b *bundle) retriever(t *testing.T, opt retrieve.Options) *retrieve.Retriever {
	t.Helper()
	r, err := retrieve.New(b.store, b.emb, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var corpus = []struct{ name, text string }{
	{"boundary.txt", "The boundary layer over a flat plate thickens downstream. Transition to turbulence depends on the Reynolds number."},
	{"wing.txt", "Wing flutter appears when aerodynamic forces couple with the structural modes of the wing at high speed."},
	{"heat.txt", "Heat transfer in hypersonic flow raises the surface temperature of the nose cone and the leading edge."},
	{"law.txt", "이 법은 공포 후 6개월이 경과한 날부터 시행한다. 탄소중립기본계획은 5년마다 수립한다."},
	{"lease.txt", "행복주택의 임대보증금은 1000만원이며 월 임대료는 15만원이다. 신청은 인터넷으로 한다."},
}

func TestSearch(t *testing.T) {
	b := setup(t)
	for _, d := range corpus {
		b.add(t, "docs", d.name, d.text, map[string]any{"lang": map[bool]string{true: "ko", false: "en"}[d.name == "law.txt" || d.name == "lease.txt"]})
	}
	ctx := context.Background()
	r := b.retriever(t, retrieve.Options{})

	t.Run("OK", func(t *testing.T) {
		res, err := r.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: "boundary layer transition Reynolds number", K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Source != "boundary.txt" {
			t.Fatalf("top hit = %+v, want boundary.txt", res.Hits)
		}
		top := res.Hits[0]
		if top.VectorRank != 1 || top.KeywordRank != 1 || top.VectorScore <= 0 || top.KeywordScore <= 0 {
			t.Errorf("top hit scores: vector %.3f #%d, keyword %.3f #%d; want both lists to rank it first",
				top.VectorScore, top.VectorRank, top.KeywordScore, top.KeywordRank)
		}
		if len(res.Hits) > 3 {
			t.Errorf("%d hits for k=3", len(res.Hits))
		}
	})

	// The fused score is the weighted sum over the lists of 1/(RRFK + rank): the vector list at VectorWeight
	// times the share of the query's words of an alphabet (the hash embedder's default weights), the keyword
	// feedback list at its share of KeywordWeight (KeywordFeedbackShare and KeywordFeedbackAlphabetShare mixed
	// by that share) and the keyword list the rest.
	explains := func(t *testing.T, query string, vectorShare float64) {
		t.Helper()
		res, err := r.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: query, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		opt := r.Options()
		wk, wf := opt.KeywordWeight, 0.0
		if slices.ContainsFunc(res.Hits, func(h rag.Hit) bool { return h.FeedbackRank > 0 }) {
			wf = (opt.KeywordFeedbackShare*(1-vectorShare) + opt.KeywordFeedbackAlphabetShare*vectorShare) * opt.KeywordWeight
			wk -= wf
		}
		if len(res.Hits) == 0 || wf == 0 || !slices.ContainsFunc(res.Hits, func(h rag.Hit) bool { return h.VectorRank > 0 }) {
			t.Fatalf("%q: hits %+v, want some with a keyword feedback rank and some with a vector rank", query, res.Hits)
		}
		for i, h := range res.Hits {
			want := 0.0
			if h.VectorRank > 0 {
				want += vectorShare * opt.VectorWeight / float64(opt.RRFK+h.VectorRank)
			}
			if h.KeywordRank > 0 {
				want += wk / float64(opt.RRFK+h.KeywordRank)
			}
			if h.FeedbackRank > 0 {
				want += wf / float64(opt.RRFK+h.FeedbackRank)
			}
			if math.Abs(h.FusedScore-want) > 1e-12 || h.Score != h.FusedScore {
				t.Errorf("%q hit %d: fused %.6f, score %.6f; the ranks give %.6f", query, i, h.FusedScore, h.Score, want)
			}
			if i > 0 && h.Score > res.Hits[i-1].Score {
				t.Errorf("%q: hit %d scores above hit %d", query, i, i-1)
			}
		}
	}
	t.Run("ScoresExplainRank", func(t *testing.T) {
		explains(t, "wing flutter at high speed", 1)
		// Two of the three words in Latin letters: the vectors weigh in at 2/3.
		explains(t, "플러터 wing flutter", 2.0/3)
		// A Korean question's hash features are all keyword terms too: the vector list weighs nothing.
		explains(t, "이 법의 시행일은 언제인가요?", 0)
	})

	t.Run("Korean", func(t *testing.T) {
		res, err := r.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: "이 법의 시행일은 언제인가요?", K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Source != "law.txt" {
			t.Fatalf("hits = %+v, want law.txt first", res.Hits)
		}
	})

	t.Run("NotCovered", func(t *testing.T) {
		for _, q := range []string{"chocolate cake recipe with strawberries", "맛있는 김치찌개 레시피 알려줘"} {
			res, err := r.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: q, K: 5})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != 0 {
				t.Errorf("%q: %d hits (first %s), want none: nothing covers it", q, len(res.Hits), res.Hits[0].Source)
			}
		}
		// The same query with the threshold off returns the nearest passages anyway.
		off := b.retriever(t, retrieve.Options{MinSimilarity: -1})
		res, err := off.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: "chocolate cake recipe with strawberries", K: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 {
			t.Error("threshold off: no hits at all")
		}
	})

	t.Run("FilterInsideBothLists", func(t *testing.T) {
		f := rag.Filter{Metadata: []rag.MetaCond{{Key: "lang", Op: rag.OpEq, Values: []any{"ko"}}}}
		res, err := r.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: "boundary layer 임대보증금", Filter: f, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 {
			t.Fatal("no hits")
		}
		for _, h := range res.Hits {
			if h.Metadata["lang"] != "ko" {
				t.Errorf("hit %s passed the filter lang=ko", h.Source)
			}
		}
		if res.VectorCandidates > 2 || res.KeywordCandidates > 2 {
			t.Errorf("candidates vector %d keyword %d; the filter leaves 2 documents", res.VectorCandidates, res.KeywordCandidates)
		}
	})

	t.Run("Visibility", func(t *testing.T) {
		stranger := rag.Principal{ID: "user:stranger"}
		b.add(t, "private", "secret.txt", "The secret turbine blade alloy melts at high temperature.", nil)
		res, err := r.Search(ctx, stranger, rag.SearchRequest{Query: "secret turbine blade alloy", K: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			if h.Source == "secret.txt" {
				t.Error("a document owned by local and readable by nobody else reached another principal")
			}
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		for _, req := range []rag.SearchRequest{{Query: "   "}, {Query: "wing", K: 101}, {Query: "wing", EfSearch: -1}, {Query: "wing", EfSearch: 1001}} {
			_, err := r.Search(ctx, rag.LocalPrincipal, req)
			if rag.ErrorCode(err) != rag.CodeInvalid {
				t.Errorf("Search(%+v) = %v, want invalid_request", req, err)
			}
		}
		if _, err := r.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: "wing", K: 100}); err != nil {
			t.Errorf("k=100 (the maximum): %v", err)
		}
		for _, ef := range []int{1, 1000} {
			if _, err := r.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: "wing", EfSearch: ef}); err != nil {
				t.Errorf("ef_search=%d (a bound): %v", ef, err)
			}
		}
	})
}

func TestRecencyRerank(t *testing.T) {
	b := setup(t)
	text := "Compressor stall margins shrink as the inlet distortion grows."
	b.clock.set(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	b.add(t, "c", "old.txt", text, nil)
	b.clock.set(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b.add(t, "c", "new.txt", text+" ", nil)
	now := func() time.Time { return time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC) }
	ctx := context.Background()
	q := rag.SearchRequest{Query: "compressor stall inlet distortion", K: 2}

	plain, err := b.retriever(t, retrieve.Options{}).Search(ctx, rag.LocalPrincipal, q)
	if err != nil {
		t.Fatal(err)
	}
	recent, err := b.retriever(t, retrieve.Options{Rerank: rerank.Options{Now: now, Weights: rerank.Weights{Similarity: 1, Recency: 1}, HalfLife: 30 * 24 * time.Hour}}).Search(ctx, rag.LocalPrincipal, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Hits) != 2 || len(recent.Hits) != 2 {
		t.Fatalf("hits: %d and %d, want 2", len(plain.Hits), len(recent.Hits))
	}
	if recent.Hits[0].Source != "new.txt" || recent.Hits[0].Recency == nil || recent.Hits[1].Recency == nil ||
		*recent.Hits[0].Recency <= *recent.Hits[1].Recency || recent.Rerank == nil {
		t.Errorf("with recency the new document must lead with the higher recency: %s %+v (info %+v)",
			recent.Hits[0].Source, recent.Hits[0].Scores, recent.Rerank)
	}
	if plain.Rerank != nil || plain.Hits[0].Recency != nil {
		t.Errorf("without re-ranking the result has re-rank info %+v", plain.Rerank)
	}
	for _, h := range plain.Hits {
		if h.Score != h.FusedScore {
			t.Errorf("without re-ranking score %.5f != fused %.5f", h.Score, h.FusedScore)
		}
	}
}

func TestDefaultsFor(t *testing.T) {
	hashOpt := retrieve.Options{}.WithDefaultsFor(rag.Space{Provider: "hash", Model: "v1", Dim: 768})
	if hashOpt.VectorWeight != 0.2 || hashOpt.KeywordWeight != 0.8 || hashOpt.Feedback != 5 || hashOpt.MinSimilarity != 0.15 {
		t.Errorf("hash defaults = %+v", hashOpt)
	}
	neural := retrieve.Options{}.WithDefaultsFor(rag.Space{Provider: "openai", Model: "text-embedding-3-small", Dim: 768})
	if neural.VectorWeight != 0.7 || neural.KeywordWeight != 0.3 || neural.Feedback != 0 || neural.RRFK != 60 {
		t.Errorf("neural defaults = %+v", neural)
	}
	set := retrieve.Options{VectorWeight: 0.5, KeywordWeight: 0.5, Feedback: -1}.WithDefaultsFor(rag.Space{Provider: "hash"})
	if set.VectorWeight != 0.5 || set.Feedback != -1 {
		t.Errorf("explicit options were replaced: %+v", set)
	}
}

// TestCoverage: the share of the query's words a text holds, a word counting fully through its form or
// stem and in part through its syllable bigrams; endings that no document repeats do not dilute it as
// they did when terms were counted.
func TestCoverage(t *testing.T) {
	text := "제1조(시행일) 이 법은 공포 후 6개월이 경과한 날부터 시행한다."
	for _, tc := range []struct {
		query string
		want  float64
	}{
		{"법은 시행일", 1},             // both words whole ("법은" through its stem)
		{"법은 김치찌개", 0.5},          // one word of two
		{"이 법은 언제부터 시행되나요?", 0.6}, // 법 whole; 시행되나요 by one of its five terms (시행)
		{"chocolate cake", 0},
	} {
		if got := retrieve.Coverage(tc.query, text); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Coverage(%q) = %.3f, want %.3f", tc.query, got, tc.want)
		}
	}
}
