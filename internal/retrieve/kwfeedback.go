package retrieve

import (
	"context"
	"math"
	"sort"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// keywordFeedback ranks the candidate pool (both lists) for the query expanded by relevance-model feedback
// (RM3: Lavrenko and Croft 2001; Abdul-Jaleel et al. 2004). The best KeywordFeedback keyword candidates are
// taken as relevant, each weighed by its likelihood exp(score − best score): BM25 scores behave like log
// likelihoods, so a passage far below the best one adds next to nothing, and a first round with one clear
// winner draws its words from that winner. A passage's words (stop-words, syllable bigrams, parts and word
// pairs aside: the expansion is made of words) are weighed by their share of its words, summed over the
// passages by those weights, and the KeywordFeedbackTerms heaviest make the expansion. The expanded query
// gives the query's terms KeywordFeedbackQuery of the weight, evenly, and the expansion the rest, in
// proportion; the store scores every candidate of the pool by BM25 with those weights
// (Store.KeywordScores). Passages that share the vocabulary of the best matches rise, not only those that
// share the query's few words. The pool is scored rather than the index searched again with the expanded
// query: a few hundred postings lookups, and no passage that neither list found. It returns nil when there
// is nothing to expand with or nothing scores.
func (r *Retriever) keywordFeedback(ctx context.Context, p rag.Principal, read hitCache, terms []string, kw, vec []rag.Candidate, nc int) ([]rag.Candidate, error) {
	n := min(r.opt.KeywordFeedback, len(kw))
	if n == 0 || len(terms) == 0 {
		return nil, nil
	}
	ids := make([]int64, n)
	score := make(map[int64]float64, n)
	for i, c := range kw[:n] {
		ids[i], score[c.ChunkID] = c.ChunkID, c.Score
	}
	top, err := read.hits(ctx, r.store, p, ids)
	if err != nil {
		return nil, err
	}
	model := map[string]float64{}
	for _, h := range top {
		w := math.Exp(score[h.ID] - kw[0].Score)
		f := wordFrequencies(textproc.ContextText(h.Title, h.Section, h.Text))
		for t, n := range f.tf {
			model[t] += w * n / f.words
		}
	}
	expansion := heaviest(model, r.opt.KeywordFeedbackTerms)
	var mass float64
	for _, t := range expansion {
		mass += model[t]
	}
	if mass == 0 {
		return nil, nil
	}
	q := r.opt.KeywordFeedbackQuery
	expanded := make([]string, 0, len(terms)+len(expansion))
	weights := make([]float64, 0, len(terms)+len(expansion))
	for _, t := range terms {
		expanded, weights = append(expanded, t), append(weights, q/float64(len(terms)))
	}
	for _, t := range expansion {
		expanded, weights = append(expanded, t), append(weights, (1-q)*model[t]/mass)
	}
	pool := make([]int64, 0, len(kw)+len(vec))
	seen := make(map[int64]bool, len(kw)+len(vec))
	for _, l := range [][]rag.Candidate{kw, vec} {
		for _, c := range l {
			if !seen[c.ChunkID] {
				seen[c.ChunkID] = true
				pool = append(pool, c.ChunkID)
			}
		}
	}
	scores, err := r.store.KeywordScores(ctx, p, expanded, weights, pool)
	if err != nil {
		return nil, err
	}
	for id, s := range scores {
		if s <= 0 {
			delete(scores, id)
		}
	}
	if len(scores) == 0 {
		return nil, nil
	}
	return ranked(scores, nc), nil
}

// ranked is the candidate list of scores (chunk ID → score): best first (ties by chunk ID), at most nc,
// ranks 1-based.
func ranked(scores map[int64]float64, nc int) []rag.Candidate {
	out := make([]rag.Candidate, 0, len(scores))
	for id, s := range scores {
		out = append(out, rag.Candidate{ChunkID: id, Score: s})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ChunkID < out[j].ChunkID
	})
	if len(out) > nc {
		out = out[:nc]
	}
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

// withoutCompounds is terms without the whole forms of hyphenated alphabet compounds
// (textproc.HyphenCompound), whose parts the analyzer gives as terms too, unless nothing else is left.
func withoutCompounds(terms []string) []string {
	out := make([]string, 0, len(terms))
	for _, t := range terms {
		if !textproc.HyphenCompound(t) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return terms
	}
	return out
}

// heaviest returns the n terms of m with the largest weights, heaviest first (ties by term).
func heaviest(m map[string]float64, n int) []string {
	type weighed struct {
		t string
		w float64
	}
	// before orders by weight, then term: a selection of the n first, not a sort of the whole model (a
	// feedback model has hundreds of words; sorting them was 2 % of the server's CPU under load).
	before := func(a, b weighed) bool { return a.w > b.w || a.w == b.w && a.t < b.t }
	if n <= 0 {
		return []string{}
	}
	top := make([]weighed, 0, n+1)
	for t, w := range m {
		x := weighed{t, w}
		if len(top) == n && !before(x, top[n-1]) {
			continue
		}
		i := sort.Search(len(top), func(i int) bool { return before(x, top[i]) })
		top = append(top, weighed{})
		copy(top[i+1:], top[i:])
		top[i] = x
		if len(top) > n {
			top = top[:n]
		}
	}
	out := make([]string, len(top))
	for i, x := range top {
		out[i] = x.t
	}
	return out
}

// vectorWeight is the weight of the vector list in the fusion for query. With the lexical hash embedder's
// default weights it is VectorWeight times the share of the query's words that the vectors add evidence
// for: words of an alphabet (Latin, Greek, Cyrillic), whose character n-grams and word pairs only the
// vectors hold. A Hangul, Han or kana word's hash features — its stem and syllable bigrams, and the pair of
// it and the next word — are terms of the keyword index too, so for a Korean question the vector list only
// repeats the keyword list without IDF; dropping it raised every Korean set (docs/retrieval.md, branch
// rank). Numbers and mixed tokens count for neither side; a query with no word of either kind keeps the
// full weight. A request for an answer's passages (SearchRequest.ForAnswer), and weights set explicitly,
// keep VectorWeight for every query.
func (r *Retriever) vectorWeight(query string, req rag.SearchRequest) float64 {
	if !r.opt.scriptShare || req.ForAnswer {
		return r.opt.VectorWeight
	}
	return r.opt.VectorWeight * alphabetShare(query)
}

// feedbackShare is the keyword feedback list's share of KeywordWeight for query: KeywordFeedbackShare, and
// with the hash embedder's default weights the mix of it and KeywordFeedbackAlphabetShare by the query's
// share of alphabet words (alphabetShare). Long English questions (Cranfield's) gain from leaning on the
// best matches' vocabulary, which is the vector list's part too; a Korean question, whose vector list
// weighs nothing, keeps the light share that measured best for it.
func (r *Retriever) feedbackShare(query string) float64 {
	if !r.opt.scriptShare {
		return r.opt.KeywordFeedbackShare
	}
	a := alphabetShare(query)
	return r.opt.KeywordFeedbackShare*(1-a) + r.opt.KeywordFeedbackAlphabetShare*a
}

// alphabetShare is the share of query's words (stop-words aside) written in an alphabet, against Hangul,
// Han and kana words; 1 for a query with no word of either kind.
func alphabetShare(query string) float64 {
	var alpha, words int
	last := -1
	textproc.Analyze(query, func(t textproc.Term) {
		if t.Word == last || t.Stop {
			return
		}
		last = t.Word
		switch t.Script {
		case textproc.ScriptAlpha:
			alpha++
			words++
		case textproc.ScriptHangul, textproc.ScriptCJK:
			words++
		}
	})
	if words == 0 {
		return 1
	}
	return float64(alpha) / float64(words)
}
