// Package retrieve implements ragd's retrieval contract (SPEC.md): vector and keyword candidates, each
// restricted by the principal's visibility and the filters inside the store's queries, fused by weighted
// reciprocal-rank fusion, cut by a relevance threshold, optionally re-ranked, and returned with every score
// that produced the rank.
package retrieve

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// Options tune retrieval. The zero value of a field means its default.
type Options struct {
	// VectorWeight and KeywordWeight weigh the two ranked lists in the fusion (default 0.7 / 0.3).
	VectorWeight  float64
	KeywordWeight float64
	// RRFK is the rank constant of reciprocal-rank fusion (default 60).
	RRFK int
	// Candidates is how many candidates each list contributes (default 100, at least k).
	Candidates int
	// DefaultK is the number of hits when a request does not say (default 10); MaxK caps requests (default 100).
	DefaultK int
	MaxK     int
	// MinSimilarity is the relevance threshold: a hit is kept when its vector similarity reaches it, or when
	// it is a keyword candidate whose text covers at least MinCoverage of the query's terms. Set both to a
	// negative value to disable the threshold. Defaults: 0.2 and 0.5.
	MinSimilarity float64
	MinCoverage   float64
	// RecencyWeight > 0 boosts recently updated documents: score *= 1 + RecencyWeight·2^(-age/RecencyHalfLife).
	RecencyWeight   float64
	RecencyHalfLife time.Duration
	// ImportanceKey names a numeric metadata field (0..1); with ImportanceWeight > 0,
	// score *= 1 + ImportanceWeight·importance.
	ImportanceKey    string
	ImportanceWeight float64
	// Now is the clock for recency (default time.Now).
	Now func() time.Time
}

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.VectorWeight == 0 && o.KeywordWeight == 0 {
		o.VectorWeight, o.KeywordWeight = 0.7, 0.3
	}
	if o.RRFK == 0 {
		o.RRFK = 60
	}
	if o.Candidates == 0 {
		o.Candidates = 100
	}
	if o.DefaultK == 0 {
		o.DefaultK = 10
	}
	if o.MaxK == 0 {
		o.MaxK = 100
	}
	if o.MinSimilarity == 0 {
		o.MinSimilarity = 0.2
	}
	if o.MinCoverage == 0 {
		o.MinCoverage = 0.5
	}
	if o.RecencyHalfLife == 0 {
		o.RecencyHalfLife = 90 * 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

func (o Options) validate() error {
	if o.VectorWeight < 0 || o.KeywordWeight < 0 || o.VectorWeight+o.KeywordWeight <= 0 {
		return fmt.Errorf("fusion weights must be ≥ 0 and not both 0 (got %g/%g)", o.VectorWeight, o.KeywordWeight)
	}
	if o.RRFK < 1 || o.Candidates < 1 || o.DefaultK < 1 || o.MaxK < 1 {
		return fmt.Errorf("rrf k, candidates and k must be positive")
	}
	return nil
}

// Retriever runs hybrid retrieval over a store with one embedder.
type Retriever struct {
	store    rag.Store
	embedder rag.Embedder
	opt      Options
}

// New returns a Retriever. The embedder's space is the one searched.
func New(store rag.Store, embedder rag.Embedder, opt Options) (*Retriever, error) {
	opt = opt.WithDefaults()
	if err := opt.validate(); err != nil {
		return nil, fmt.Errorf("retrieve: %w", err)
	}
	return &Retriever{store: store, embedder: embedder, opt: opt}, nil
}

// Options returns the retriever's effective options.
func (r *Retriever) Options() Options { return r.opt }

// Search runs the retrieval contract. An empty query is CodeInvalid. Hits are best first, at most req.K.
// Errors: CodeInvalid, CodeEmbeddingFailed (the query could not be embedded), CodeDBError.
func (r *Retriever) Search(ctx context.Context, p rag.Principal, req rag.SearchRequest) (*rag.SearchResult, error) {
	start := time.Now()
	query := textproc.Normalize(req.Query)
	if strings.TrimSpace(query) == "" {
		return nil, rag.Errorf(rag.CodeInvalid, "query is empty")
	}
	k := req.K
	if k <= 0 {
		k = r.opt.DefaultK
	}
	if k > r.opt.MaxK {
		return nil, rag.Errorf(rag.CodeInvalid, "k must be at most %d", r.opt.MaxK)
	}
	nc := max(r.opt.Candidates, k)
	res := &rag.SearchResult{}

	var vec, kw []rag.Candidate
	g, gctx := errgroup.WithContext(ctx)
	if r.opt.VectorWeight > 0 {
		g.Go(func() error {
			t := time.Now()
			v, err := r.embedder.EmbedQuery(gctx, query)
			if err != nil {
				return asCode(err, rag.CodeEmbeddingFailed, "embedding the query failed")
			}
			res.EmbedMS = ms(time.Since(t))
			t = time.Now()
			vec, err = r.store.VectorCandidates(gctx, p, rag.VectorQuery{Space: r.embedder.Space(), Vector: v, Filter: req.Filter, K: nc})
			res.VectorMS = ms(time.Since(t))
			return err
		})
	}
	terms := textproc.QueryTerms(query)
	if r.opt.KeywordWeight > 0 && len(terms) > 0 {
		g.Go(func() error {
			t := time.Now()
			var err error
			kw, err = r.store.KeywordCandidates(gctx, p, rag.KeywordQuery{Terms: terms, Filter: req.Filter, K: nc})
			res.KeywordMS = ms(time.Since(t))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	res.VectorCandidates, res.KeywordCandidates = len(vec), len(kw)

	fused := r.fuse(vec, kw)
	hits, err := r.hydrate(ctx, fused, k, terms)
	if err != nil {
		return nil, err
	}
	res.Hits = hits
	res.TotalMS = ms(time.Since(start))
	return res, nil
}

// scored is a fused candidate before hydration.
type scored struct {
	id             int64
	fused          float64
	vScore, kScore float64
	vRank, kRank   int
}

// fuse merges the two ranked lists by weighted reciprocal-rank fusion: Σ w / (RRFK + rank).
func (r *Retriever) fuse(vec, kw []rag.Candidate) []scored {
	byID := make(map[int64]*scored, len(vec)+len(kw))
	get := func(id int64) *scored {
		s, ok := byID[id]
		if !ok {
			s = &scored{id: id}
			byID[id] = s
		}
		return s
	}
	k := float64(r.opt.RRFK)
	for i, c := range vec {
		s := get(c.ChunkID)
		s.vScore, s.vRank = c.Score, i+1
		s.fused += r.opt.VectorWeight / (k + float64(i+1))
	}
	for i, c := range kw {
		s := get(c.ChunkID)
		s.kScore, s.kRank = c.Score, i+1
		s.fused += r.opt.KeywordWeight / (k + float64(i+1))
	}
	out := make([]scored, 0, len(byID))
	for _, s := range byID {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].fused != out[j].fused {
			return out[i].fused > out[j].fused
		}
		return out[i].id < out[j].id
	})
	return out
}

// hydrate loads the best fused candidates, applies the threshold and re-ranking, and returns the top k.
// It loads candidates in windows so that hits cut by the threshold are replaced by the next ones.
func (r *Retriever) hydrate(ctx context.Context, fused []scored, k int, terms []string) ([]rag.Hit, error) {
	var hits []rag.Hit
	window := k * 2
	reranks := r.opt.RecencyWeight > 0 || (r.opt.ImportanceWeight > 0 && r.opt.ImportanceKey != "")
	if reranks {
		// Re-ranking can lift any candidate; consider them all.
		window = len(fused)
	}
	for off := 0; off < len(fused) && (reranks || len(hits) < k); off += window {
		part := fused[off:min(off+window, len(fused))]
		ids := make([]int64, len(part))
		for i, s := range part {
			ids[i] = s.id
		}
		loaded, err := r.store.Hits(ctx, ids)
		if err != nil {
			return nil, err
		}
		byID := make(map[int64]rag.Hit, len(loaded))
		for _, h := range loaded {
			byID[h.ID] = h
		}
		for _, s := range part {
			h, ok := byID[s.id]
			if !ok {
				continue // deleted since the candidate queries ran
			}
			h.FusedScore, h.Score = s.fused, s.fused
			h.VectorScore, h.VectorRank = s.vScore, s.vRank
			h.KeywordScore, h.KeywordRank = s.kScore, s.kRank
			if !r.relevant(&h, terms) {
				continue
			}
			h.Score = r.rerank(&h)
			hits = append(hits, h)
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// relevant applies the threshold: enough vector similarity, or a keyword match covering enough of the query.
func (r *Retriever) relevant(h *rag.Hit, terms []string) bool {
	if r.opt.MinSimilarity < 0 {
		return true
	}
	if h.VectorRank > 0 && h.VectorScore >= r.opt.MinSimilarity {
		return true
	}
	if h.KeywordRank > 0 && len(terms) > 0 && Coverage(terms, h.Text) >= r.opt.MinCoverage {
		return true
	}
	return false
}

// Coverage is the share of the query terms that occur among the analyzer terms of text.
func Coverage(queryTerms []string, text string) float64 {
	if len(queryTerms) == 0 {
		return 0
	}
	have := make(map[string]struct{}, 64)
	for _, t := range textproc.IndexTerms(text) {
		have[t] = struct{}{}
	}
	n := 0
	for _, t := range queryTerms {
		if _, ok := have[t]; ok {
			n++
		}
	}
	return float64(n) / float64(len(queryTerms))
}

func (r *Retriever) rerank(h *rag.Hit) float64 {
	s := h.FusedScore
	if r.opt.RecencyWeight > 0 && !h.UpdatedAt.IsZero() {
		age := r.opt.Now().Sub(h.UpdatedAt)
		if age < 0 {
			age = 0
		}
		s *= 1 + r.opt.RecencyWeight*math.Exp2(-float64(age)/float64(r.opt.RecencyHalfLife))
	}
	if r.opt.ImportanceWeight > 0 && r.opt.ImportanceKey != "" {
		if v, ok := h.Metadata[r.opt.ImportanceKey].(float64); ok {
			s *= 1 + r.opt.ImportanceWeight*math.Max(0, math.Min(1, v))
		}
	}
	return s
}

func asCode(err error, code rag.Code, msg string) error {
	if rag.ErrorCode(err) == code {
		return err
	}
	return rag.WrapError(code, err, "%s: %s", msg, rag.ErrorMessage(err))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
