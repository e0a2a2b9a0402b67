// Package bm25 is a small in-memory BM25 index over pre-tokenised passages, used as a reference ranking:
// `ragd eval` reports plain BM25 (PlainTerms, k1 0.9, b 0.4) beside ragd's figures, and the quality
// harnesses compare analyzers with it. idf is ln((N−n+0.5)/(n+0.5)), floored at 1e-6 as SQLite FTS5 does.
package bm25

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// Index is a BM25 index; build it with New.
type Index struct {
	k1, b    float64
	ids      map[string]int
	postings [][]posting
	dl       []float64
	avgdl    float64
}

type posting struct {
	doc int
	tf  float64
}

// New indexes docs (each a list of terms) with parameters k1 and b.
func New(docs [][]string, k1, b float64) *Index {
	ix := &Index{k1: k1, b: b, ids: map[string]int{}, dl: make([]float64, len(docs))}
	var total float64
	for d, terms := range docs {
		ix.dl[d] = float64(len(terms))
		total += ix.dl[d]
		tf := map[int]float64{}
		for _, t := range terms {
			id, ok := ix.ids[t]
			if !ok {
				id = len(ix.postings)
				ix.ids[t] = id
				ix.postings = append(ix.postings, nil)
			}
			tf[id]++
		}
		for id, n := range tf {
			ix.postings[id] = append(ix.postings[id], posting{d, n})
		}
	}
	if len(docs) > 0 {
		ix.avgdl = total / float64(len(docs))
	}
	return ix
}

// Search returns the indexes of the k best documents for the query terms, best first (ties by index); only
// documents sharing a term with the query are returned.
func (ix *Index) Search(query []string, k int) []int {
	n := float64(len(ix.dl))
	scores := map[int]float64{}
	for _, t := range query {
		id, ok := ix.ids[t]
		if !ok {
			continue
		}
		ps := ix.postings[id]
		idf := math.Log((n - float64(len(ps)) + 0.5) / (float64(len(ps)) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		for _, p := range ps {
			scores[p.doc] += idf * p.tf * (ix.k1 + 1) / (p.tf + ix.k1*(1-ix.b+ix.b*ix.dl[p.doc]/ix.avgdl))
		}
	}
	return TopK(scores, k)
}

// TopK returns the k keys of scores with the highest scores, best first (ties by key).
func TopK(scores map[int]float64, k int) []int {
	out := make([]int, 0, len(scores))
	for d := range scores {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if scores[out[i]] != scores[out[j]] {
			return scores[out[i]] > scores[out[j]]
		}
		return out[i] < out[j]
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// PlainTerms is the baseline analyzer: lower-cased words (runs of letters and digits) and, for every run of
// Hangul syllables, its syllable bigrams (a one-syllable run is kept as a word only). No stemming, no stop
// words, no particles stripped.
func PlainTerms(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		out = append(out, w)
		rs := []rune(w)
		for i := 1; i < len(rs); i++ {
			if unicode.Is(unicode.Hangul, rs[i-1]) && unicode.Is(unicode.Hangul, rs[i]) {
				out = append(out, string(rs[i-1:i+1]))
			}
		}
	}
	return out
}
