package cli

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ragd/ragd/internal/textproc"
	"github.com/ragd/ragd/internal/vindex"
)

// The text of `ragd bench search`'s corpus. Each chunk's words follow its vector: the words of its largest
// components (so chunks near each other in vector space share words, as passages on one subject do), plus
// filler words drawn from a Zipf-like vocabulary, half English-like and half Korean (Hangul syllables).
// A query's text is made the same way from its vector, shorter. The same seed gives the same text.

const (
	benchTopicWords  = 6 // words from a chunk's largest components
	benchFillerWords = 24
	benchQueryTopic  = 3 // a query's words from its largest components
	benchQueryWords  = 4
	benchFiller      = 5000 // filler vocabulary
)

// benchWord is the i-th word of the generated vocabulary: even ones Latin, odd ones Hangul, each made
// of syllables chosen by i's digits so that distinct i give distinct words.
func benchWord(i int) string {
	var b strings.Builder
	if i%2 == 0 {
		const cons, vows = "bdfgklmnprstvz", "aeiou"
		for n := i/2 + 1; n > 0; n /= len(cons) * len(vows) {
			s := n % (len(cons) * len(vows))
			b.WriteByte(cons[s%len(cons)])
			b.WriteByte(vows[s/len(cons)])
		}
		return b.String()
	}
	for n := i/2 + 1; n > 0; n /= 2000 {
		b.WriteRune(rune(0xAC00 + (n%2000)*5))
	}
	return b.String()
}

// benchTexts returns the text of every row of vecs (dim dimensions each): the words of its top largest
// components, then filler words up to words in all.
func benchTexts(vecs []float32, dim, top, words int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 2))
	zipf := rand.NewZipf(rng, 1.1, 4, benchFiller-1)
	n := len(vecs) / dim
	out := make([]string, n)
	idx := make([]int, 0, top+1)
	for r := range n {
		v := vecs[r*dim : (r+1)*dim]
		// The top largest components, largest first: kept sorted as they are found (a full sort of the
		// dim components per row was most of the corpus's generation time at 1,000,000 rows).
		idx = idx[:0]
		for d, x := range v {
			if len(idx) == top && x <= v[idx[top-1]] {
				continue
			}
			at, _ := slices.BinarySearchFunc(idx, x, func(e int, x float32) int { return cmp.Compare(x, v[e]) - boolInt(v[e] == x) })
			idx = slices.Insert(idx, at, d)
			if len(idx) > top {
				idx = idx[:top]
			}
		}
		var b strings.Builder
		for _, d := range idx {
			b.WriteString(benchWord(benchFiller + d))
			b.WriteByte(' ')
		}
		for range words - top {
			b.WriteString(benchWord(int(zipf.Uint64())))
			b.WriteByte(' ')
		}
		out[r] = strings.TrimSpace(b.String())
	}
	return out
}

// boolInt is 1 for true, 0 for false.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// bm25Index is an in-memory BM25 index of the corpus with the store's analyzer and FTS5's formula
// (k1 1.2, b 0.75, idf floored at 1e-6): the exact keyword reference, as vindex.Exact is for vectors.
type bm25Index struct {
	post  map[string][]bm25Posting
	dl    []int32
	avgdl float64
}

type bm25Posting struct{ row, tf int32 }

// newBM25 indexes the keyword text of each row (textproc.IndexTerms, as the store indexes a chunk).
func newBM25(texts []string) *bm25Index {
	ix := &bm25Index{post: map[string][]bm25Posting{}, dl: make([]int32, len(texts))}
	var total int
	for r, t := range texts {
		tf := map[string]int32{}
		terms := textproc.IndexTerms(t)
		for _, w := range terms {
			tf[w]++
		}
		for w, n := range tf {
			ix.post[w] = append(ix.post[w], bm25Posting{int32(r), n})
		}
		ix.dl[r] = int32(len(terms))
		total += len(terms)
	}
	ix.avgdl = float64(total) / float64(max(1, len(texts)))
	return ix
}

// bytes estimates the index's memory: postings, lengths and the term map's keys and headers.
func (ix *bm25Index) bytes() int64 {
	n := int64(len(ix.dl)) * 4
	for t, ps := range ix.post {
		n += int64(len(t)) + 48 + int64(cap(ps))*8
	}
	return n
}

// search returns the best k rows for the query's terms, ties to the lower row.
func (ix *bm25Index) search(terms []string, k int) []vindex.Hit {
	const k1, b = 1.2, 0.75
	n := float64(len(ix.dl))
	score := map[int32]float64{}
	for _, t := range terms {
		ps := ix.post[t]
		df := float64(len(ps))
		idf := math.Log((n - df + 0.5) / (df + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		for _, p := range ps {
			tf := float64(p.tf)
			score[p.row] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(ix.dl[p.row])/ix.avgdl))
		}
	}
	return best(score, k)
}

// rrf fuses a vector and a keyword list by weighted reciprocal-rank fusion (0.7 / 0.3, rank constant 60:
// ragd's defaults for a neural embedder) and returns the best k rows, ties to the lower row.
func rrf(vec, kw []vindex.Hit, k int) []vindex.Hit {
	score := map[int32]float64{}
	for i, h := range vec {
		score[h.Row] += 0.7 / float64(60+i+1)
	}
	for i, h := range kw {
		score[h.Row] += 0.3 / float64(60+i+1)
	}
	return best(score, k)
}

// best returns the k rows of highest score (compared in float64), ties to the lower row.
func best(score map[int32]float64, k int) []vindex.Hit {
	type rowScore struct {
		row int32
		s   float64
	}
	all := make([]rowScore, 0, len(score))
	for r, s := range score {
		all = append(all, rowScore{r, s})
	}
	slices.SortFunc(all, func(a, b rowScore) int {
		if c := cmp.Compare(b.s, a.s); c != 0 {
			return c
		}
		return cmp.Compare(a.row, b.row)
	})
	out := make([]vindex.Hit, min(k, len(all)))
	for i := range out {
		out[i] = vindex.Hit{Row: all[i].row, Score: float32(all[i].s)}
	}
	return out
}
