// Package retrieve implements ragd's retrieval contract (SPEC.md): vector and keyword candidates, each
// restricted by the principal's visibility and the filters inside the store's queries, fused by weighted
// reciprocal-rank fusion, cut by a relevance threshold, optionally re-ranked, and returned with every score
// that produced the rank.
//
// With the lexical hash embedder two more rules shape the fusion of a search (docs/retrieval.md, branch
// rank). Relevance-model keyword feedback (Options.KeywordFeedback) adds a third list: the candidate pool
// ranked by BM25 for the query expanded with the heaviest words of the best keyword candidates. And the
// vector list weighs in by the share of the query's words its vectors add evidence for (words of an
// alphabet; a Hangul or Han word's features are keyword terms too), so a Korean question is ranked by the
// keyword lists. Neither applies to the passages of an answer (rag.SearchRequest.ForAnswer): those are
// ranked by the question's own words, the hash vectors at their full weight.
package retrieve

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ragd/ragd/internal/memo"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/rerank"
	"github.com/ragd/ragd/internal/telemetry"
	"github.com/ragd/ragd/internal/textproc"
)

// Options tune retrieval. The zero value of a field means its default.
type Options struct {
	// VectorWeight and KeywordWeight weigh the two ranked lists in the fusion. Both zero means the default
	// for the embedder: 0.7 / 0.3 (SPEC.md) for neural embedders, 0.2 / 0.8 for the lexical hash embedder,
	// whose vectors rank worse than BM25 (measured in docs/retrieval.md); with that default a search's vector
	// weight is scaled by the share of the query's alphabet words (vectorWeight).
	VectorWeight  float64
	KeywordWeight float64
	// RRFK is the rank constant of reciprocal-rank fusion (default 60).
	RRFK int
	// Candidates is how many candidates each list contributes (default 100, at least k).
	Candidates int
	// DefaultK is the number of hits when a request does not say (default 10); MaxK caps requests (default 100).
	DefaultK int
	MaxK     int
	// MinSimilarity and MinCoverage are the relevance threshold: a hit is kept when its vector similarity to
	// the query reaches MinSimilarity, or when its text (with its title and section) holds at least
	// MinCoverage of the query's words (see Coverage). A query none of whose hits clears it gets no hits,
	// which the answer pipeline reports as "not covered". A negative MinSimilarity disables the threshold.
	// Defaults 0.15 and 0.15, measured for the hash embedder (docs/retrieval.md); a neural embedder's
	// similarities live on another scale, so set MinSimilarity for it. The threshold only cuts queries that
	// share next to nothing with the documents: whether the passages answer a question that shares words
	// with them is the generator's decision (the extractive answerer checks the question's focus words).
	MinSimilarity float64
	MinCoverage   float64
	// Rerank is the stage after fusion and the threshold (internal/rerank): a cross-encoder over the best
	// Rerank.TopN candidates and a blend of similarity, recency, importance and permission. Off by default.
	Rerank rerank.Options
	// Feedback > 0 moves the query vector towards the embeddings of the Feedback best fused hits and re-ranks
	// the candidates of both lists by it (pseudo-relevance feedback), weighted by FeedbackWeight (default 1.5).
	// It embeds those passages again, so it is on by default (5 passages) only for the local hash embedder;
	// 0 means that default, a negative value turns it off.
	Feedback       int
	FeedbackWeight float64
	// KeywordFeedback > 0 adds a third list to the fusion: the candidates of both lists ranked for the query
	// expanded by relevance-model feedback (RM3) from the KeywordFeedback best keyword candidates
	// (keywordFeedback). The KeywordFeedbackTerms (default 20) heaviest words of those passages join the
	// query's terms, which keep KeywordFeedbackQuery (default 0.5) of the expanded query's weight; the store
	// scores the pool by BM25 with those weights (Store.KeywordScores). The list takes KeywordFeedbackShare
	// (default 0.2) of KeywordWeight, the keyword list the rest. Measured with the hash embedder only (no
	// neural embedder is reachable offline), so on by default (10 passages) only for it; 0 means that default,
	// a negative value turns it off. Never for the passages of an answer (SearchRequest.ForAnswer).
	KeywordFeedback      int
	KeywordFeedbackTerms int
	KeywordFeedbackQuery float64
	KeywordFeedbackShare float64
	// KeywordFeedbackAlphabetShare (default 0.8) is the feedback list's share of KeywordWeight for a query
	// written in an alphabet, with the hash embedder's default weights; a query of Hangul or Han words has
	// KeywordFeedbackShare, a mixed one the mix by its share of alphabet words (feedbackShare).
	KeywordFeedbackAlphabetShare float64
	// scriptShare: the lexical hash vectors weigh in by the share of the query's words they add evidence for
	// (vectorWeight); set by WithDefaultsFor when it chose the hash embedder's default weights.
	scriptShare bool
	// DocumentWeight weighs the document-level signal: the documents whose naming fields (title, file name,
	// metadata values, opening lines) best match the query — up to NamedDocuments (default 3) documents of
	// several passages, scoring at least half the best one's BM25 — are "named"; their passages that match
	// the query join the keyword list, and each gains s²·DocumentWeight/(RRFK + r) in the fusion, r being its
	// document's rank among the named ones and s that document's score as a share of the best one's.
	// Off by default (0 or negative): on the project's sets it lifts the named documents (fixtures hit@5
	// 0.927 → 0.958 at 0.2) but also lifts documents named only by common words, which costs the follow-up
	// set and page-level ranking (docs/retrieval.md); 0.2 is the weight measured best.
	DocumentWeight float64
	NamedDocuments int
	// OpeningWeight weighs the opening passage (index 0: the title page, whose first lines the naming
	// fields are read from) of a named document the query is about as a whole — its subject phrase ends
	// with a kind of document ("이 법률안은", "검토보고서의", "제1차 회의는", "this report") and the document's
	// naming fields hold that phrase (openingPassages) — as a keyword list of its own would: it gains
	// s²·OpeningWeight/(RRFK + r), s and r as for DocumentWeight, and the threshold keeps it. Such a
	// question asks what the title page says (who proposed the bill, when and where the meeting was held,
	// when the report was written), while a long document that uses the same words on every page (the
	// minutes' list of bills) outranks that page by the words alone. Independent of DocumentWeight (the
	// named documents are looked up for it alone when that is off). Default half of KeywordWeight; negative
	// turns it off (measured in docs/retrieval.md, "Opening passage").
	OpeningWeight float64
	// MaxPerDocument is how many passages of one document may precede the passages of other documents in a
	// result (default 2; negative: no cap): one long document cannot fill the top k while another document
	// holds the answer. A passage over the cap is not dropped: it waits behind the following passages of
	// other documents whose score is at least CapShare (default 0.7) of its own, and keeps its place ahead of
	// weaker ones, so a document's strong third page is not pushed below passages that barely match (a strict
	// cap — every passage over it waits — lowered page-level nDCG@10 on the project's sets; docs/retrieval.md).
	// A negative CapShare makes the cap strict.
	MaxPerDocument int
	CapShare       float64
}

// lexical reports whether vectors of space are lexical (the offline hash embedder) rather than semantic.
func lexical(space rag.Space) bool { return space.Provider == "hash" }

// WithDefaultsFor returns o with zero fields set to their defaults for vectors of space.
func (o Options) WithDefaultsFor(space rag.Space) Options {
	lex := lexical(space)
	if o.VectorWeight == 0 && o.KeywordWeight == 0 {
		o.VectorWeight, o.KeywordWeight = 0.7, 0.3
		if lex {
			o.VectorWeight, o.KeywordWeight = 0.2, 0.8
			o.scriptShare = true
		}
	}
	if o.Feedback == 0 && lex {
		o.Feedback = 5
	}
	if o.KeywordFeedback == 0 && lex {
		o.KeywordFeedback = 10
	}
	if o.MinSimilarity == 0 && !lex {
		o.MinSimilarity = 0.3
	}
	return o.withDefaults()
}

func (o Options) withDefaults() Options {
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
		o.MaxK = rag.MaxSearchK
	}
	if o.MinSimilarity == 0 {
		o.MinSimilarity = 0.15
	}
	if o.MinCoverage == 0 {
		o.MinCoverage = 0.15
	}
	o.Rerank = o.Rerank.WithDefaults()
	if o.FeedbackWeight == 0 {
		o.FeedbackWeight = 1.5
	}
	if o.KeywordFeedbackTerms == 0 {
		o.KeywordFeedbackTerms = 20
	}
	if o.KeywordFeedbackQuery == 0 {
		o.KeywordFeedbackQuery = 0.5
	}
	if o.KeywordFeedbackShare == 0 {
		o.KeywordFeedbackShare = 0.2
	}
	if o.KeywordFeedbackAlphabetShare == 0 {
		o.KeywordFeedbackAlphabetShare = 0.8
	}
	if o.NamedDocuments == 0 {
		o.NamedDocuments = 3
	}
	if o.OpeningWeight == 0 {
		o.OpeningWeight = openingShare * o.KeywordWeight
	}
	if o.MaxPerDocument == 0 {
		o.MaxPerDocument = 2
	}
	if o.CapShare == 0 {
		o.CapShare = 0.7
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
	if o.KeywordFeedback > 0 && (o.KeywordFeedbackTerms < 1 || o.KeywordFeedbackQuery <= 0 || o.KeywordFeedbackQuery > 1 ||
		o.KeywordFeedbackShare <= 0 || o.KeywordFeedbackShare > 1 || o.KeywordFeedbackAlphabetShare <= 0 || o.KeywordFeedbackAlphabetShare > 1) {
		return fmt.Errorf("keyword feedback needs at least 1 term, a query weight and shares in (0, 1] (got %d, %g, %g, %g)",
			o.KeywordFeedbackTerms, o.KeywordFeedbackQuery, o.KeywordFeedbackShare, o.KeywordFeedbackAlphabetShare)
	}
	return nil
}

// Retriever runs hybrid retrieval over a store with one embedder.
type Retriever struct {
	store    rag.Store
	embedder rag.Embedder
	opt      Options
	vectors  *memo.Memo[[]float32] // passages' embeddings (embedPassages)
}

// New returns a Retriever. The embedder's space is the one searched.
func New(store rag.Store, embedder rag.Embedder, opt Options) (*Retriever, error) {
	opt = opt.WithDefaultsFor(embedder.Space())
	if err := opt.validate(); err != nil {
		return nil, fmt.Errorf("retrieve: %w", err)
	}
	return &Retriever{store: store, embedder: embedder, opt: opt, vectors: newVectorMemo()}, nil
}

// Options returns the retriever's effective options.
func (r *Retriever) Options() Options { return r.opt }

// Search runs the retrieval contract. An empty query is CodeInvalid. Hits are best first, at most req.K.
// Errors: CodeInvalid, CodeEmbeddingFailed (the query could not be embedded), CodeDBError.
func (r *Retriever) Search(ctx context.Context, p rag.Principal, req rag.SearchRequest) (*rag.SearchResult, error) {
	ctx, done := telemetry.Stage(ctx, telemetry.StageSearch)
	res, err := r.search(ctx, p, req)
	d := done(err)
	if res != nil {
		res.TotalMS = ms(d)
	}
	return res, err
}

// search is Search without its span and timing.
func (r *Retriever) search(ctx context.Context, p rag.Principal, req rag.SearchRequest) (*rag.SearchResult, error) {
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
	if req.EfSearch < 0 || req.EfSearch > rag.MaxEfSearch {
		return nil, rag.Errorf(rag.CodeInvalid, "ef_search must be between 1 and %d", rag.MaxEfSearch)
	}
	nc := max(r.opt.Candidates, k)
	res := &rag.SearchResult{}

	// Synonyms of the searched collections (and an LLM's expansions, req.Expansions) reword the query; the
	// keyword queries look for every wording, the threshold takes the best covered one.
	groups, err := r.synonymsFor(ctx, p, req.Filter)
	if err != nil {
		return nil, err
	}
	queries := append([]string{query}, variants(query, groups)...)
	for _, e := range req.Expansions {
		if e = textproc.Normalize(e); strings.TrimSpace(e) != "" {
			queries = append(queries, e)
		}
	}
	terms := textproc.QueryTerms(query)
	for _, v := range queries[1:] {
		terms = union(terms, textproc.QueryTerms(v))
	}
	terms = withoutCompounds(terms)
	var vec, kw []rag.Candidate
	var qvec []float32
	g, gctx := errgroup.WithContext(ctx)
	if r.opt.VectorWeight > 0 {
		g.Go(func() error {
			sctx, done := telemetry.Stage(gctx, telemetry.StageEmbed)
			var err error
			qvec, err = r.embedder.EmbedQuery(sctx, query)
			res.EmbedMS = ms(done(err))
			if err != nil {
				return asCode(err, rag.CodeEmbeddingFailed, "embedding the query failed")
			}
			sctx, done = telemetry.Stage(gctx, telemetry.StageVector)
			vec, err = r.store.VectorCandidates(sctx, p, rag.VectorQuery{Space: r.embedder.Space(), Vector: qvec, Filter: req.Filter, K: nc, EfSearch: req.EfSearch})
			res.VectorMS = ms(done(err))
			return err
		})
	}
	if r.opt.KeywordWeight > 0 && len(terms) > 0 {
		g.Go(func() error {
			sctx, done := telemetry.Stage(gctx, telemetry.StageKeyword)
			var err error
			kw, err = r.store.KeywordCandidates(sctx, p, rag.KeywordQuery{Terms: terms, Filter: req.Filter, K: nc})
			res.KeywordMS = ms(done(err))
			return err
		})
	}
	var named []rag.DocumentCandidate
	docWeight := r.opt.DocumentWeight
	if req.DocumentWeight > 0 {
		docWeight = req.DocumentWeight
	}
	if (docWeight > 0 || r.opt.OpeningWeight > 0) && r.opt.KeywordWeight > 0 && len(terms) > 0 {
		g.Go(func() error {
			var err error
			named, err = r.store.DocumentCandidates(gctx, p, rag.KeywordQuery{Terms: terms, Filter: req.Filter, K: r.opt.NamedDocuments + 1})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// The passages read by the stages below (feedback, symbols, hydration) are read once for the search.
	read := hitCache{}
	l := lists{vec: vec, wv: r.vectorWeight(query, req), wk: r.opt.KeywordWeight}
	if r.opt.KeywordFeedback > 0 && !req.ForAnswer && len(kw) > 0 {
		t := time.Now()
		var err error
		if l.fb, err = r.keywordFeedback(ctx, p, read, terms, kw, vec, nc); err != nil {
			return nil, err
		}
		if l.fb != nil {
			l.wf = r.feedbackShare(query) * r.opt.KeywordWeight
			l.wk -= l.wf
		}
		res.KeywordMS += ms(time.Since(t))
	}
	named = withContext(strongDocuments(named, r.opt.NamedDocuments), req.Context, req.Filter)
	if len(named) > 0 {
		t := time.Now()
		var err error
		kw, l.inDoc, err = r.namedPassages(ctx, p, req.Filter, query, terms, named, kw, nc, docWeight)
		if err != nil {
			return nil, err
		}
		res.KeywordMS += ms(time.Since(t))
	}
	l.kw = kw
	res.VectorCandidates, res.KeywordCandidates = len(vec), len(kw)

	hits, err := r.fuseAndHydrate(ctx, p, read, req, res, query, queries, k, nc, qvec, l)
	if err != nil {
		return nil, err
	}
	if r.opt.Rerank.Active() {
		rctx, rerankDone := telemetry.Stage(ctx, telemetry.StageRerank)
		res.Rerank = r.opt.Rerank.Apply(rctx, p, query, hits)
		rerankDone(nil)
		hits = passageSet{}.distinct(hits)
		var over []rag.Hit
		n, share := r.capPerDocument(req)
		hits, over = capPerDocument(hits, n)
		hits = merge(hits, over, share)
	}
	if len(hits) > k {
		hits = hits[:k]
	}
	res.Hits = hits
	return res, nil
}

// capPerDocument is the most passages of one document that precede other documents' (0: no cap) and the
// share of their score another document's passage needs to stay ahead of those over it (see merge). A
// request's own cap (the answer service's, rag.AnswerMaxPerDocument) has the answer service's share,
// rag.AnswerCapShare: which passages a generator sees decides its answers and refusals (docs/retrieval.md).
func (r *Retriever) capPerDocument(req rag.SearchRequest) (int, float64) {
	if req.MaxPerDocument > 0 {
		return req.MaxPerDocument, rag.AnswerCapShare
	}
	return max(r.opt.MaxPerDocument, 0), r.opt.CapShare
}

// fuseAndHydrate is the fusion stage: it fuses the candidate lists (re-scored by pseudo-relevance feedback
// when on, whose time counts as vector time in res), cuts them by the threshold and reads the passages.
func (r *Retriever) fuseAndHydrate(ctx context.Context, p rag.Principal, read hitCache, req rag.SearchRequest, res *rag.SearchResult, query string, queries []string,
	k, nc int, qvec []float32, l lists) (hits []rag.Hit, err error) {
	ctx, done := telemetry.Stage(ctx, telemetry.StageFusion)
	defer func() { done(err) }()
	// The similarity to the query itself, for the threshold: feedback re-ranks by another vector.
	sims := make(map[int64]float64, len(l.vec))
	for _, c := range l.vec {
		sims[c.ChunkID] = c.Score
	}
	fused := r.fuse(l)
	if r.opt.Feedback > 0 && l.wv > 0 && qvec != nil && len(fused) > 0 {
		t := time.Now()
		v2, err := r.feedback(ctx, p, read, qvec, fused, nc)
		if err != nil {
			return nil, err
		}
		if v2 != nil {
			l.vec = v2
			fused = r.fuse(l)
		}
		res.VectorMS += ms(time.Since(t))
	}
	for i := range fused {
		fused[i].sim, fused[i].hasSim = sims[fused[i].id]
	}
	want := k
	if r.opt.Rerank.Encoder != nil {
		want = max(k, r.opt.Rerank.TopN)
	}
	if fused, err = r.symbolsFirst(ctx, p, read, fused, query); err != nil {
		return nil, err
	}
	capN, share := r.capPerDocument(req)
	return r.hydrate(ctx, p, read, fused, want, queries, capN, share)
}

// feedback re-ranks the candidate pool (both lists) by a query vector moved towards the embeddings of the
// best fused hits (Rocchio pseudo-relevance feedback): passages that share the vocabulary of the best matches
// rise, not only those that share the query's few words. Re-scoring the pool instead of searching all
// vectors again costs a few hundred dot products; measured on the shared sets it ranks as well
// (docs/retrieval.md).
func (r *Retriever) feedback(ctx context.Context, p rag.Principal, read hitCache, q []float32, fused []scored, nc int) ([]rag.Candidate, error) {
	n := min(r.opt.Feedback, len(fused))
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = fused[i].id
	}
	top, err := read.hits(ctx, r.store, p, ids)
	if err != nil || len(top) == 0 {
		return nil, err
	}
	texts := make([]string, len(top))
	for i, h := range top {
		texts[i] = textproc.ContextText(h.Title, h.Section, h.Text)
	}
	docs, err := r.embedPassages(ctx, texts)
	if err != nil {
		return nil, asCode(err, rag.CodeEmbeddingFailed, "embedding feedback passages failed")
	}
	v := make([]float32, len(q))
	copy(v, q)
	w := float32(r.opt.FeedbackWeight / float64(len(docs)))
	for _, d := range docs {
		for i := range v {
			v[i] += w * d[i]
		}
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return nil, nil
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= inv
	}
	pool := make([]int64, len(fused))
	for i, s := range fused {
		pool[i] = s.id
	}
	scores, err := r.store.VectorScores(ctx, p, r.embedder.Space(), v, pool)
	if err != nil {
		return nil, err
	}
	return ranked(scores, nc), nil // a vector list as long as the first one
}

// namedShare is how close to the best document's score another document must come to count as named too.
const namedShare = 0.5

// openingShare is the default OpeningWeight as a share of the keyword list's weight.
const openingShare = 0.5

// strongDocuments returns the documents a query names: those scoring at least namedShare of the best one's
// score, when there are at most max of them. More than max such documents (max+1 were asked for) means the
// query's words are common to the naming fields of many documents — paragraphs of one article, reports of
// one series — and it names none of them in particular. Documents of one passage are left out.
func strongDocuments(docs []rag.DocumentCandidate, max int) []rag.DocumentCandidate {
	if len(docs) == 0 {
		return nil
	}
	var out []rag.DocumentCandidate
	for _, d := range docs {
		if d.Score >= namedShare*docs[0].Score {
			out = append(out, d)
		}
	}
	if len(out) > max {
		return nil
	}
	// A one-passage document needs no picking out: its passage's keyword entry holds its title already, and
	// counting the name again would only favour partial title matches (measured on KorQuAD, where every
	// document is one paragraph and many titles share words: -0.011 nDCG@10).
	return slices.DeleteFunc(out, func(d rag.DocumentCandidate) bool { return d.Chunks <= 1 })
}

// withContext appends the conversation's documents (SearchRequest.Context) that the query does not name
// itself, each scored rag.ContextShare of the best named document's score (or alone, at full weight). A
// document outside the filter's documents is left out; the filter's other conditions and the principal's
// permissions apply to it in namedPassages' queries.
func withContext(named []rag.DocumentCandidate, context []string, f rag.Filter) []rag.DocumentCandidate {
	if len(context) == 0 {
		return named
	}
	score := 1.0
	if len(named) > 0 {
		score = rag.ContextShare * named[0].Score
	}
	for _, id := range context {
		if len(f.DocumentIDs) > 0 && !slices.Contains(f.DocumentIDs, id) {
			continue
		}
		if !slices.ContainsFunc(named, func(d rag.DocumentCandidate) bool { return d.DocumentID == id }) {
			named = append(named, rag.DocumentCandidate{DocumentID: id, Score: score})
		}
	}
	return named
}

// namedPassages runs the keyword query inside each named document and returns the keyword list extended by
// the passages found there (after the list's own, in score order: the stores' BM25 statistics are those of
// the whole corpus, so the scores compare), and each such passage's document signal.
func (r *Retriever) namedPassages(ctx context.Context, p rag.Principal, f rag.Filter, query string, terms []string, named []rag.DocumentCandidate, kw []rag.Candidate, nc int, docWeight float64) ([]rag.Candidate, map[int64]docSignal, error) {
	lists := make([][]rag.Candidate, len(named))
	g, gctx := errgroup.WithContext(ctx)
	for i, d := range named {
		g.Go(func() error {
			df := f
			df.DocumentIDs = []string{d.DocumentID}
			var err error
			lists[i], err = r.store.KeywordCandidates(gctx, p, rag.KeywordQuery{Terms: terms, Filter: df, K: nc})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	inDoc := map[int64]docSignal{}
	opening, err := r.openingPassages(ctx, p, query, lists)
	if err != nil {
		return nil, nil, err
	}
	have := make(map[int64]bool, len(kw))
	for _, c := range kw {
		have[c.ChunkID] = true
	}
	var extra []rag.Candidate
	for i, l := range lists {
		// Every passage of a named document gains alike, so that the other signals still order them; a
		// document named less clearly than the best one gains less, by the square of its share of the best
		// score.
		share := named[i].Score / named[0].Score
		for _, c := range l {
			w := max(docWeight, 0)
			if opening[c.ChunkID] {
				w += r.opt.OpeningWeight
			}
			if w == 0 {
				continue
			}
			inDoc[c.ChunkID] = docSignal{rank: i + 1, weight: share * share * w, opening: opening[c.ChunkID]}
			if !have[c.ChunkID] {
				have[c.ChunkID] = true
				extra = append(extra, c)
			}
		}
	}
	sort.Slice(extra, func(i, j int) bool {
		if extra[i].Score != extra[j].Score {
			return extra[i].Score > extra[j].Score
		}
		return extra[i].ChunkID < extra[j].ChunkID
	})
	out := append(kw[:len(kw):len(kw)], extra...)
	for i := range out {
		out[i].Rank = i + 1
	}
	return out, inDoc, nil
}

// docSignal is the rank of a passage's document among the named ones and that document's weight (its share
// of the best named document's score, squared, times the document weight).
type docSignal struct {
	rank   int
	weight float64
	// opening marks the opening passage of a document the question is about (openingPassages).
	opening bool
}

// scored is a fused candidate before hydration.
type scored struct {
	id                     int64
	fused                  float64
	vScore, kScore, fScore float64
	vRank, kRank, fRank    int
	dRank                  int // rank of its document among the named ones (0: not named)
	// opening: the opening passage of a named document the question is about as a whole (openingPassages);
	// the threshold keeps it, since the question's words that name the document are what it matched.
	opening bool
	// sim is the similarity to the query vector itself (hasSim: the chunk was among its candidates).
	sim    float64
	hasSim bool
}

// lists are the ranked candidate lists of one search and their weights in the fusion: the vector list,
// the keyword list (with the passages of named documents after its own), the keyword feedback list (nil
// when off), and the document signal of the passages of named documents.
type lists struct {
	vec, kw, fb []rag.Candidate
	wv, wk, wf  float64
	inDoc       map[int64]docSignal
}

// fuse merges the ranked lists by weighted reciprocal-rank fusion: Σ w / (RRFK + rank), plus the document
// signal weight·DocumentWeight / (RRFK + document rank) of the passages of named documents.
func (r *Retriever) fuse(l lists) []scored {
	vec, kw, inDoc := l.vec, l.kw, l.inDoc
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
		s.fused += l.wv / (k + float64(i+1))
	}
	for i, c := range kw {
		s := get(c.ChunkID)
		s.kScore, s.kRank = c.Score, i+1
		s.fused += l.wk / (k + float64(i+1))
	}
	for i, c := range l.fb {
		s := get(c.ChunkID)
		s.fScore, s.fRank = c.Score, i+1
		s.fused += l.wf / (k + float64(i+1))
	}
	for id, d := range inDoc {
		s := get(id)
		s.dRank, s.opening = d.rank, d.opening
		s.fused += d.weight / (k + float64(d.rank))
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

// hydrate loads the best fused candidates, applies the threshold, and returns the top k — or, when the
// re-ranking blend is on (it can lift any candidate), every candidate that clears the threshold, in fused
// order, for the stage to order.
//
// The threshold works at two levels. The query is covered when at least one of its top k hits is relevant
// (relevant: similarity to the query ≥ MinSimilarity, or ≥ MinCoverage of the query's terms); otherwise
// it gets no hits at all — the documents do not cover it. Hits of a covered query are kept down to half
// those bars (FloorFactor), so that a passage that shares a little with the query still reaches the
// generator after stronger ones, while passages with next to nothing in common are cut.
func (r *Retriever) hydrate(ctx context.Context, p rag.Principal, read hitCache, fused []scored, k int, queries []string, capN int, share float64) ([]rag.Hit, error) {
	var hits []rag.Hit
	window := k
	reranks := r.opt.Rerank.Weights.Any()
	if reranks {
		window = len(fused)
	}
	covered := r.opt.MinSimilarity < 0
	seen := passageSet{}
	// Passages beyond capN (MaxPerDocument) of one document wait in over, in order, and are merged back (merge).
	perDoc := map[string]int{}
	var over []rag.Hit
	// Code blocks and tables found by their heading alone wait in headed (byHeading).
	var headed []rag.Hit
	for off := 0; off < len(fused) && (reranks || len(hits) < k); off += window {
		part := fused[off:min(off+window, len(fused))]
		ids := make([]int64, len(part))
		for i, s := range part {
			ids[i] = s.id
		}
		if err := read.load(ctx, r.store, p, ids); err != nil {
			return nil, err
		}
		for _, s := range part {
			h, ok := read[s.id]
			if !ok {
				continue // deleted since the candidate queries ran
			}
			h.FusedScore, h.Score = s.fused, s.fused
			h.VectorScore, h.VectorRank = s.vScore, s.vRank
			h.KeywordScore, h.KeywordRank = s.kScore, s.kRank
			h.FeedbackScore, h.FeedbackRank = s.fScore, s.fRank
			if r.opt.MinSimilarity >= 0 {
				relevant, kept := r.judge(&h, s, queries, covered)
				if !kept {
					continue
				}
				covered = covered || relevant
			}
			h.DocumentRank, h.Opening = s.dRank, s.opening
			if !reranks && seen.dup(&h) {
				continue
			}
			if !reranks && byHeading(&h, queries) {
				headed = append(headed, h)
				continue
			}
			if !reranks && capN > 0 {
				if perDoc[h.DocumentID] >= capN {
					over = append(over, h)
					continue
				}
				perDoc[h.DocumentID]++
			}
			hits = append(hits, h)
		}
		if off == 0 && !covered {
			return nil, nil
		}
	}
	hits = merge(hits, over, share)
	hits = mergeHeaded(hits, headed, share)
	if !reranks && len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// byHeading reports whether h is a code block or a table that matches the query by the section heading it
// inherits rather than by its own text: a heading is indexed with every passage under it (ContextText), and
// the shortest of them — a JSX snippet, a CSS rule, a table of values under "state를 교체한 후 업데이트하면
// 어떻게 되나요?" — then scored highest for the heading's words, above the prose of the same section that
// explains them. Such a passage waits, like one over the per-document cap, behind the passages that score
// at least the cap's share of it. Prose keeps its heading's help: a paragraph is read with its heading, a
// snippet alone says nothing to a reader of the question.
func byHeading(h *rag.Hit, queries []string) bool {
	if h.Kind != rag.KindCode && h.Kind != rag.KindTable || h.Section == "" {
		return false
	}
	own, heading := 0.0, 0.0
	for _, q := range queries {
		own = max(own, Coverage(q, h.Text))
		heading = max(heading, Coverage(q, h.Section))
	}
	return own < heading
}

// hitCache holds the passages (rag.Store.Hits) one search has read, by chunk ID, so that a stage reads
// only those the stages before it did not: the symbol stage's window and the feedback's best passages are
// among the first the hydration needs.
type hitCache map[int64]rag.Hit

// load reads the passages of ids that c lacks, as p. IDs that no longer exist, or that p does not see,
// stay absent.
func (c hitCache) load(ctx context.Context, st rag.Store, p rag.Principal, ids []int64) error {
	var missing []int64
	for _, id := range ids {
		if _, ok := c[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	loaded, err := st.Hits(ctx, p, missing)
	if err != nil {
		return err
	}
	for _, h := range loaded {
		c[h.ID] = h
	}
	return nil
}

// hits returns the passages of ids that exist (and p sees), in the order of ids, reading those c lacks.
func (c hitCache) hits(ctx context.Context, st rag.Store, p rag.Principal, ids []int64) ([]rag.Hit, error) {
	if err := c.load(ctx, st, p, ids); err != nil {
		return nil, err
	}
	out := make([]rag.Hit, 0, len(ids))
	for _, id := range ids {
		if h, ok := c[id]; ok {
			out = append(out, h)
		}
	}
	return out, nil
}

// merge puts the passages over the per-document cap (over, in order) back among the others (within, in
// order): each waits behind the passages of within whose score is at least share of its own and precedes
// the weaker ones (share ≤ 0: behind all of them).
func merge(within, over []rag.Hit, share float64) []rag.Hit {
	return mergeBy(within, over, func(w, o *rag.Hit) bool { return w.Score < share*o.Score })
}

// mergeBy merges two lists of hits, each in order: the next of over goes before the next of within when
// first says so, or when within is used up.
func mergeBy(within, over []rag.Hit, first func(w, o *rag.Hit) bool) []rag.Hit {
	if len(over) == 0 {
		return within
	}
	out := make([]rag.Hit, 0, len(within)+len(over))
	for len(within) > 0 || len(over) > 0 {
		if len(over) > 0 && (len(within) == 0 || first(&within[0], &over[0])) {
			out, over = append(out, over[0]), over[1:]
		} else {
			out, within = append(out, within[0]), within[1:]
		}
	}
	return out
}

// mergeHeaded puts the code blocks and tables found by their heading (headed, in order; byHeading) back
// among the other hits (in order): each waits behind the passages of its own document and those of other
// documents whose score is at least share of its own.
func mergeHeaded(hits, headed []rag.Hit, share float64) []rag.Hit {
	return mergeBy(hits, headed, func(w, o *rag.Hit) bool {
		return w.DocumentID != o.DocumentID && w.Score < share*o.Score
	})
}

// capPerDocument splits ordered hits into those within max per document and the rest (all when max ≤ 0).
func capPerDocument(hits []rag.Hit, max int) (within, over []rag.Hit) {
	if max <= 0 {
		return hits, nil
	}
	n := map[string]int{}
	for _, h := range hits {
		n[h.DocumentID]++
		if n[h.DocumentID] <= max {
			within = append(within, h)
		} else {
			over = append(over, h)
		}
	}
	return within, over
}

// passageSet remembers the passages of the hits kept so far, by document: a document that repeats a
// passage word for word (a handbook's boilerplate, a table repeated on two pages), or holds it again inside
// a longer passage (a section repeated in another chapter, chunked at other bounds), must not fill two places
// of a result with the same text. The same text in two documents is two sources and stays (KorQuAD, for one,
// holds a few paragraphs twice, each with its own questions).
type passageSet map[string][]string

// minContained is the shortest passage (in bytes, spacing collapsed) that counts as repeated when another
// passage of its document holds it: a heading or a one-line passage inside a longer one is not a repeat.
const minContained = 200

// dup reports whether a hit of h's document with h's text (spacing aside), or a passage holding it or held by
// it, was seen, and remembers it.
func (ps passageSet) dup(h *rag.Hit) bool {
	text := spacedTexts.Get(h.Text, collapseSpaces)
	for _, seen := range ps[h.DocumentID] {
		short, long := seen, text
		if len(short) > len(long) {
			short, long = long, short
		}
		if short == long || len(short) >= minContained && strings.Contains(long, short) {
			return true
		}
	}
	ps[h.DocumentID] = append(ps[h.DocumentID], text)
	return false
}

// collapseSpaces is text with each run of white space one space, and none at either end.
func collapseSpaces(text string) string { return strings.Join(strings.Fields(text), " ") }

// distinct drops the hits whose text an earlier hit has, keeping the order.
func (ps passageSet) distinct(hits []rag.Hit) []rag.Hit {
	out := hits[:0]
	for i := range hits {
		if !ps.dup(&hits[i]) {
			out = append(out, hits[i])
		}
	}
	return out
}

// floorFactor sets the per-hit floor of a covered query as a share of the relevance bars. Measured: 0.5
// cuts no relevant passage on the shared sets.
const floorFactor = 0.5

// judge applies the threshold to a hit: relevant means it clears a bar (similarity to the query itself, or
// term coverage), kept that it clears the floor. The text is analysed for coverage only when the similarity
// does not settle both answers (analysing every hit would cost more than the search).
// queries are the question, its synonym variants and expansions: the best covered one counts.
func (r *Retriever) judge(h *rag.Hit, s scored, queries []string, covered bool) (relevant, kept bool) {
	sim := -1.0
	if s.hasSim {
		sim = s.sim
	}
	relevant = sim >= r.opt.MinSimilarity
	kept = relevant || sim >= r.opt.MinSimilarity*floorFactor || s.opening
	if relevant || (kept && covered) {
		return relevant, kept
	}
	if s.kRank == 0 {
		// Not among the best keyword matches either: whatever terms it shares are not worth analysing for.
		return false, kept
	}
	text := textproc.ContextText(h.Title, h.Section, h.Text)
	cov := 0.0
	for _, q := range queries {
		cov = max(cov, Coverage(q, text))
	}
	return cov >= r.opt.MinCoverage, kept || cov >= r.opt.MinCoverage*floorFactor
}

// Coverage is the share of the query's words that text holds, each word weighed by how many of its terms the
// text has: a word counts fully when the text holds it whole or its particle-free stem, else by the share of
// its other terms (syllable bigrams, parts of a compound) found. Counting words rather than terms keeps a
// conversational question's endings ("걸려요", "됐는데"), which never occur in a document, from diluting the
// words it shares with the passage, while a word's bigrams alone still count only in part. Stop-words are
// left out, unless the query has nothing else.
func Coverage(query string, text string) float64 {
	return coverageBy(query, text, queryWord.degree)
}

// coverageBy is the mean degree of query's words in the terms of text.
func coverageBy(query, text string, degree func(queryWord, map[string]struct{}) float64) float64 {
	words := queryWords(query)
	if len(words) == 0 {
		return 0
	}
	have := termSet(text)
	sum := 0.0
	for _, w := range words {
		sum += degree(w, have)
	}
	return sum / float64(len(words))
}

// queryWord is a query word's terms: whole is the word itself and its stem, parts the rest.
type queryWord struct {
	whole, parts []string
}

// degree is 1 when have holds the word or its stem, else the share of its parts in have.
func (w queryWord) degree(have map[string]struct{}) float64 {
	for _, t := range w.whole {
		if _, ok := have[t]; ok {
			return 1
		}
	}
	if len(w.parts) == 0 {
		return 0
	}
	n := 0
	for _, t := range w.parts {
		if _, ok := have[t]; ok {
			n++
		}
	}
	return float64(n) / float64(len(w.parts)+len(w.whole))
}

// queryWords groups the analyzer terms of query by the word they came from, leaving out stop-words (unless
// nothing else is left) and word-pair terms (a paraphrase need not keep two words adjacent).
func queryWords(query string) []queryWord {
	return queryWordMemo.Get(query, analyseQueryWords)
}

func analyseQueryWords(query string) []queryWord {
	var words, stops []queryWord
	cur, curStop := -1, false
	flush := func(w queryWord) {
		if len(w.whole)+len(w.parts) == 0 {
			return
		}
		if curStop {
			stops = append(stops, w)
		} else {
			words = append(words, w)
		}
	}
	var w queryWord
	textproc.Analyze(query, func(t textproc.Term) {
		if t.Kind == textproc.KindPair {
			return
		}
		if t.Word != cur {
			flush(w)
			w, cur, curStop = queryWord{}, t.Word, t.Stop
		}
		switch t.Kind {
		case textproc.KindWord, textproc.KindStem:
			if !slices.Contains(w.whole, t.Text) {
				w.whole = append(w.whole, t.Text)
			}
		default:
			if !slices.Contains(w.parts, t.Text) {
				w.parts = append(w.parts, t.Text)
			}
		}
	})
	flush(w)
	if len(words) == 0 {
		return stops
	}
	return words
}

func asCode(err error, code rag.Code, msg string) error {
	if rag.ErrorCode(err) == code {
		return err
	}
	return rag.WrapError(code, err, "%s: %s", msg, rag.ErrorMessage(err))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
