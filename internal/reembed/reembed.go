// Package reembed keeps search working while the embedder changes. Every stored vector records its
// embedding space (provider, model, dimension); when the configured embedder's space is not the one the
// store's chunks are in, Service.Reembed embeds every chunk into the configured space in the background, in
// batches, and Service.Search keeps searching the old space until that is complete.
//
// Which space a search uses (Service.Search, decided again at most every Options.Refresh):
//
//  1. The configured space, when every current chunk has a vector in it (always true of an empty store, and
//     of a store that never changed embedder).
//  2. Otherwise the old space that covers the most chunks, when it covers at least as many as the
//     configured one and its embedder can still be built (a query is embedded by the embedder of the space
//     it searches): the offline hash embedder always can; a hosted one needs its provider still configured
//     (its key, and its base URL when it is not the default).
//  3. Otherwise no space: search is keyword-only until the re-embed completes, and Status says why.
//
// The re-embed (Reembed) is resumable and embeds no chunk twice: its work list is the chunks that have no
// vector in the configured space (rag.Store.ChunksWithoutVector), vectors are stored after each batch
// (rag.Store.PutVectors), and the configured embedder is expected to sit behind the store's embedding cache
// (embed.WithCache), so a batch embedded just before a crash is read back from the cache. While an old space
// is searched, chunks ingested meanwhile (which get vectors of the configured space only) are embedded into
// the old space too, so that they can be found by meaning before the switch.
//
// A vector whose dimension is not its space's is refused here before it reaches the store, and an old
// space whose rebuilt embedder reports another space is not searched.
package reembed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/retrieve"
)

// EmbedderFunc builds the embedder of an existing space, to embed queries (and newly ingested chunks) in
// it. It fails when the space's provider is not configured any more.
type EmbedderFunc func(ctx context.Context, space rag.Space) (rag.Embedder, error)

// Options configure a Service. Zero fields take the defaults.
type Options struct {
	// Batch is how many chunks one embedding call of the re-embed carries (default 64).
	Batch int
	// Refresh is how long a search reuses the decision of which space to search before it counts the
	// store's vectors again (default 10s). Reembed and Status decide again at once.
	Refresh time.Duration
	// Retrieve are the options of every space's retriever.
	Retrieve retrieve.Options
	Logger   *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.Batch <= 0 {
		o.Batch = 64
	}
	if o.Refresh <= 0 {
		o.Refresh = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Service routes searches to an embedding space and re-embeds chunks into the configured one. It is safe
// for concurrent use.
type Service struct {
	store      rag.Store
	configured rag.Embedder
	embedderOf EmbedderFunc
	opt        Options

	plan       atomic.Pointer[plan]
	refreshing sync.Mutex // one refresh at a time; searches meanwhile use the current plan

	mu        sync.Mutex
	embedders map[string]rag.Embedder // old spaces' embedders by space ID
	unusable  map[string]string       // why an old space cannot be searched, by space ID
	retr      map[string]*retrieve.Retriever
	progress  Progress

	running sync.Mutex // one re-embed at a time in this process (River runs one in all)
}

// plan is a decision of which space searches use.
type plan struct {
	space     rag.Space // zero when keyword-only
	keyword   bool
	reason    string // why the configured space is not searched ("" when it is)
	retriever *retrieve.Retriever
	at        time.Time
}

// New returns a Service over store for the configured embedder; embedderOf builds the embedders of old
// spaces (nil: old spaces are never searched). It reads the store's spaces once to decide what searches use.
func New(ctx context.Context, store rag.Store, configured rag.Embedder, embedderOf EmbedderFunc, opt Options) (*Service, error) {
	s := &Service{store: store, configured: configured, embedderOf: embedderOf, opt: opt.WithDefaults(),
		embedders: map[string]rag.Embedder{}, unusable: map[string]string{}, retr: map[string]*retrieve.Retriever{}}
	// The retrievers of the configured space and of keyword-only search are built now, so that bad
	// retrieval options fail here rather than at the first search.
	if _, err := s.retriever(configured, false); err != nil {
		return nil, err
	}
	if _, err := s.retriever(configured, true); err != nil {
		return nil, err
	}
	stats, err := s.Refresh(ctx)
	if err != nil {
		return nil, err
	}
	if p := s.plan.Load(); p.reason != "" {
		s.opt.Logger.Warn("embedding space changed: "+p.reason,
			slog.String("configured", configured.Space().ID()), slog.Int("chunks", stats.Chunks),
			slog.Int("embedded", stats.Spaces[configured.Space().ID()]))
	}
	return s, nil
}

// Configured returns the configured embedder's space: where new chunks go and what the re-embed fills.
func (s *Service) Configured() rag.Space { return s.configured.Space() }

// Search runs retrieval in the space the current plan names (see the package comment); the result's Space
// says which ("" for keyword-only). Errors are those of retrieve.Retriever.Search.
func (s *Service) Search(ctx context.Context, p rag.Principal, req rag.SearchRequest) (*rag.SearchResult, error) {
	pl := s.current(ctx)
	res, err := pl.retriever.Search(ctx, p, req)
	if err != nil {
		return nil, err
	}
	if !pl.keyword {
		res.Space = pl.space.ID()
	}
	return res, nil
}

// SearchSpace returns the space searches use now, and false when they are keyword-only.
func (s *Service) SearchSpace() (rag.Space, bool) {
	pl := s.plan.Load()
	return pl.space, !pl.keyword
}

// Retriever returns the retriever of the space searches use now. Long-running callers should call Search
// instead, which follows the re-embed.
func (s *Service) Retriever() *retrieve.Retriever { return s.plan.Load().retriever }

// current returns the plan. A plan that searches an old space (or keywords only) is decided again when it
// is older than Options.Refresh, by one caller while the others go on with it: the re-embed may have
// finished, here or in another process. A plan that searches the configured space stays: ingestion gives
// every new chunk a vector of it, so it remains complete.
func (s *Service) current(ctx context.Context) *plan {
	pl := s.plan.Load()
	if s.settled(pl) || s.opt.Now().Sub(pl.at) < s.opt.Refresh || !s.refreshing.TryLock() {
		return pl
	}
	defer s.refreshing.Unlock()
	if pl = s.plan.Load(); s.opt.Now().Sub(pl.at) < s.opt.Refresh {
		return pl // decided meanwhile
	}
	if _, err := s.refresh(ctx); err != nil {
		s.opt.Logger.Warn("reembed: deciding the search space failed; keeping the last decision", slog.Any("err", err))
	}
	return s.plan.Load()
}

func (s *Service) settled(pl *plan) bool { return !pl.keyword && pl.space == s.configured.Space() }

// Refresh counts the store's vectors per space and decides which space searches use. It returns the counts.
func (s *Service) Refresh(ctx context.Context) (*rag.SpaceStats, error) {
	s.refreshing.Lock()
	defer s.refreshing.Unlock()
	return s.refresh(ctx)
}

// warmer is implemented by stores that keep vectors in memory (the embedded store).
type warmer interface {
	WarmVectors(ctx context.Context, space rag.Space) error
}

// refresh is Refresh with s.refreshing held.
func (s *Service) refresh(ctx context.Context) (*rag.SpaceStats, error) {
	stats, err := s.store.SpaceStats(ctx)
	if err != nil {
		return nil, fmt.Errorf("reembed: space stats: %w", err)
	}
	pl, err := s.decide(ctx, stats)
	if err != nil {
		return nil, err
	}
	if old := s.plan.Load(); old != nil && (old.space != pl.space || old.keyword != pl.keyword) {
		// Load the new space's vectors before searches use it, so that the first of them does not wait.
		if w, ok := s.store.(warmer); ok && !pl.keyword {
			if err := w.WarmVectors(ctx, pl.space); err != nil {
				s.opt.Logger.Warn("reembed: loading the vectors of "+pl.space.ID(), slog.Any("err", err))
			}
		}
		s.opt.Logger.Info("reembed: searches now use "+describe(pl), slog.String("before", describe(old)))
	}
	s.plan.Store(pl)
	return stats, nil
}

func describe(p *plan) string {
	if p.keyword {
		return "keywords only"
	}
	return "space " + p.space.ID()
}

// decide applies the rules of the package comment to stats.
func (s *Service) decide(ctx context.Context, stats *rag.SpaceStats) (*plan, error) {
	target := s.configured.Space()
	have := stats.Spaces[target.ID()]
	now := s.opt.Now()
	if have >= stats.Chunks {
		r, err := s.retriever(s.configured, false)
		return &plan{space: target, retriever: r, at: now}, err
	}
	progress := fmt.Sprintf("re-embedding into %s: %d of %d chunks done", target.ID(), have, stats.Chunks)
	var refused []string
	for _, c := range spacesByCount(stats, target) {
		if c.n < have {
			break
		}
		emb, why := s.oldEmbedder(ctx, c.id)
		if emb == nil {
			refused = append(refused, fmt.Sprintf("%s cannot be searched: %s", c.id, why))
			continue
		}
		r, err := s.retriever(emb, false)
		if err != nil {
			return nil, err
		}
		return &plan{space: emb.Space(), retriever: r, at: now,
			reason: fmt.Sprintf("%s; searching %s (%d chunks) until then", progress, c.id, c.n)}, nil
	}
	r, err := s.retriever(s.configured, true)
	if err != nil {
		return nil, err
	}
	why := progress + "; search is keyword-only until then"
	if len(refused) > 0 {
		why += " (" + strings.Join(refused, "; ") + ")"
	}
	return &plan{keyword: true, retriever: r, at: now, reason: why}, nil
}

type spaceCount struct {
	id string
	n  int
}

// spacesByCount lists the spaces of stats other than target, most vectors first (ties by ID).
func spacesByCount(stats *rag.SpaceStats, target rag.Space) []spaceCount {
	var out []spaceCount
	for id, n := range stats.Spaces {
		if id != target.ID() && n > 0 {
			out = append(out, spaceCount{id, n})
		}
	}
	slices.SortFunc(out, func(a, b spaceCount) int {
		return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.id, b.id))
	})
	return out
}

// oldEmbedder returns the embedder of an old space, built once, or nil and why it cannot be.
func (s *Service) oldEmbedder(ctx context.Context, id string) (rag.Embedder, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.embedders[id]; ok {
		return e, ""
	}
	if why, ok := s.unusable[id]; ok {
		return nil, why
	}
	e, err := s.buildOld(ctx, id)
	if err != nil {
		// The configuration does not change while the process runs: the answer stays the same.
		s.unusable[id] = err.Error()
		return nil, err.Error()
	}
	s.embedders[id] = e
	return e, ""
}

func (s *Service) buildOld(ctx context.Context, id string) (rag.Embedder, error) {
	space, err := ParseSpace(id)
	if err != nil {
		return nil, err
	}
	if s.embedderOf == nil {
		return nil, errors.New("no embedder for old spaces")
	}
	e, err := s.embedderOf(ctx, space)
	if err != nil {
		return nil, err
	}
	if got := e.Space(); got != space {
		// Its queries would be compared with vectors of another model or size.
		return nil, fmt.Errorf("the embedder built for it makes vectors of %s", got.ID())
	}
	return e, nil
}

// retriever returns the retriever of emb's space (keyword-only when keyword), built once.
func (s *Service) retriever(emb rag.Embedder, keyword bool) (*retrieve.Retriever, error) {
	key := emb.Space().ID()
	opt := s.opt.Retrieve
	if keyword {
		key = "keyword"
		opt.VectorWeight = 0
		if opt.KeywordWeight <= 0 {
			opt.KeywordWeight = 1
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.retr[key]; ok {
		return r, nil
	}
	r, err := retrieve.New(s.store, emb, opt)
	if err != nil {
		return nil, fmt.Errorf("reembed: %w", err)
	}
	s.retr[key] = r
	return r, nil
}

// ParseSpace is the inverse of rag.Space.ID ("<provider>/<model>/<dim>"); the model may contain slashes
// (BAAI/bge-m3).
func ParseSpace(id string) (rag.Space, error) {
	provider, rest, ok := strings.Cut(id, "/")
	i := strings.LastIndexByte(rest, '/')
	if !ok || provider == "" || i <= 0 {
		return rag.Space{}, fmt.Errorf("space %q is not provider/model/dim", id)
	}
	dim, err := strconv.Atoi(rest[i+1:])
	if err != nil || dim <= 0 {
		return rag.Space{}, fmt.Errorf("space %q has no valid dimension", id)
	}
	return rag.Space{Provider: provider, Model: rest[:i], Dim: dim}, nil
}

// Reembed embeds every current chunk that has no vector in the configured space into it, batch by batch,
// and then lets searches switch to it. Before that, while searches use an old space, it embeds into that
// space the chunks ingested since the change. It returns when no chunk is missing, or at the first batch
// the provider refuses (the next run resumes where this one stopped). A chunk the provider refuses on its
// own (while the others of its batch are embedded) is skipped, and reported by the error at the end. A
// second call while one runs in this process returns nil at once. It fits jobs.PeriodicFunc.
func (s *Service) Reembed(ctx context.Context) error {
	if !s.running.TryLock() {
		return nil
	}
	defer s.running.Unlock()
	stats, err := s.Refresh(ctx)
	if err != nil {
		return err
	}
	target := s.configured.Space()
	missing := stats.Chunks - stats.Spaces[target.ID()]
	if missing <= 0 {
		s.setProgress(func(p *Progress) { p.Running = false })
		return nil
	}
	start := s.opt.Now()
	s.setProgress(func(p *Progress) {
		p.Running, p.StartedAt, p.FinishedAt, p.LastError = true, &start, nil, ""
	})
	log := s.opt.Logger.With(slog.String("space", target.ID()))
	log.Info("reembed: embedding chunks into the configured space", slog.Int("missing", missing), slog.Int("chunks", stats.Chunks))

	var errs []error
	if pl := s.plan.Load(); !pl.keyword && pl.space != target {
		emb, _ := s.oldEmbedder(ctx, pl.space.ID())
		if emb != nil {
			n, err := s.fill(ctx, pl.space, emb, nil)
			if n > 0 {
				log.Info("reembed: embedded new chunks into the searched space too", slog.String("searched", pl.space.ID()), slog.Int("chunks", n))
			}
			if err != nil && ctx.Err() == nil {
				// Not fatal: those chunks are found by keyword until the switch.
				log.Warn("reembed: embedding new chunks into the searched space failed", slog.Any("err", err))
			}
		}
	}
	n, err := s.fill(ctx, target, s.configured, func(k int) {
		s.setProgress(func(p *Progress) { p.Embedded += k })
	})
	if err != nil {
		errs = append(errs, err)
	}
	end := s.opt.Now()
	if _, rerr := s.Refresh(context.WithoutCancel(ctx)); rerr != nil {
		errs = append(errs, rerr)
	}
	err = errors.Join(errs...)
	s.setProgress(func(p *Progress) {
		p.Running, p.FinishedAt = false, &end
		if err != nil {
			p.LastError = rag.ErrorMessage(err)
			if rag.ErrorCode(err) == rag.CodeInternal && !errors.Is(err, ctx.Err()) {
				p.LastError = err.Error()
			}
		}
	})
	if err != nil {
		log.Warn("reembed: stopped; the next run resumes", slog.Int("embedded", n), slog.Any("err", err))
		return err
	}
	log.Info("reembed: done", slog.Int("embedded", n), slog.Duration("took", end.Sub(start)))
	return nil
}

// fill embeds with emb, into space, the chunks that have no vector in it, and returns how many it stored.
// done (optional) is told each batch's count.
func (s *Service) fill(ctx context.Context, space rag.Space, emb rag.Embedder, done func(int)) (int, error) {
	if got := emb.Space(); got != space {
		return 0, fmt.Errorf("reembed: embedder of %s makes vectors of %s", space.ID(), got.ID())
	}
	var (
		after   int64
		stored  int
		skipped []error
	)
	for {
		chunks, err := s.store.ChunksWithoutVector(ctx, space, after, s.opt.Batch)
		if err != nil {
			return stored, err
		}
		if len(chunks) == 0 {
			break
		}
		after = chunks[len(chunks)-1].ID
		ids := make([]int64, len(chunks))
		for i, c := range chunks {
			ids[i] = c.ID
		}
		// Hits gives each chunk its document's title, which is part of the embedded text; chunks deleted
		// meanwhile are left out.
		hits, err := s.store.Hits(ctx, rag.LocalPrincipal, ids)
		if err != nil {
			return stored, err
		}
		if len(hits) == 0 {
			continue
		}
		texts := make([]string, len(hits))
		for i, h := range hits {
			texts[i] = ingest.EmbeddingText(h.Title, h.Chunk)
		}
		vecs, failed, err := embedBatch(ctx, emb, texts)
		if err != nil {
			return stored, err
		}
		put := make(map[int64][]float32, len(hits))
		for i, v := range vecs {
			if v == nil {
				skipped = append(skipped, fmt.Errorf("chunk %d of document %s: %w", hits[i].ID, hits[i].DocumentID, failed[i]))
				continue
			}
			if len(v) != space.Dim {
				return stored, rag.Errorf(rag.CodeEmbeddingFailed,
					"%s returned %d-dimensional vectors for the %d-dimensional space %s; nothing was stored",
					space.Provider, len(v), space.Dim, space.ID())
			}
			put[hits[i].ID] = v
		}
		if len(put) == 0 {
			continue
		}
		if err := s.store.PutVectors(ctx, space, put); err != nil {
			return stored, err
		}
		stored += len(put)
		if done != nil {
			done(len(put))
		}
	}
	if len(skipped) > 0 {
		return stored, rag.WrapError(rag.CodeEmbeddingFailed, errors.Join(skipped...),
			"%d chunks could not be embedded into %s (the first: %s)", len(skipped), space.ID(), rag.ErrorMessage(skipped[0]))
	}
	return stored, nil
}

// embedBatch embeds texts in one call. When that fails it tries the first text alone: if that fails too,
// the provider is down (or refuses everything) and the error is returned; otherwise one text of the batch
// is at fault, and each is embedded alone, the failures reported per text (nil vector, error in failed).
func embedBatch(ctx context.Context, emb rag.Embedder, texts []string) (vecs [][]float32, failed []error, err error) {
	vecs, err = emb.EmbedDocuments(ctx, texts)
	if err == nil {
		if len(vecs) != len(texts) {
			return nil, nil, rag.Errorf(rag.CodeEmbeddingFailed, "embedder returned %d vectors for %d texts", len(vecs), len(texts))
		}
		return vecs, nil, nil
	}
	if len(texts) == 1 || ctx.Err() != nil {
		return nil, nil, err
	}
	vecs = make([][]float32, len(texts))
	failed = make([]error, len(texts))
	for i, t := range texts {
		v, e := emb.EmbedDocuments(ctx, []string{t})
		if e == nil && len(v) != 1 {
			e = rag.Errorf(rag.CodeEmbeddingFailed, "embedder returned %d vectors for 1 text", len(v))
		}
		if e != nil {
			if i == 0 || ctx.Err() != nil {
				return nil, nil, err
			}
			failed[i] = e
			continue
		}
		vecs[i] = v[0]
	}
	return vecs, failed, nil
}
