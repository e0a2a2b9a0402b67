package retrieve

import (
	"context"
	"fmt"

	"github.com/ragd/ragd/internal/memo"
	"github.com/ragd/ragd/internal/textproc"
)

// A search analyses the same texts again and again: the judge and the code/table rule read the coverage of
// each candidate passage, and keyword feedback the words of the best keyword matches — for every search,
// though the passages a workload's questions reach are mostly the same ones. Profiled under the HTTP load
// test (docs/performance.md, "Analysis memo"), the analyser took a fifth of the server's CPU. The memos below
// keep what was derived from a text, keyed by the text itself (so a changed passage is simply a new key),
// for the most recently used texts within a byte budget.

// The budgets: 16 MiB for passages' term sets, 8 MiB for their word frequencies, 1 MiB for queries' words,
// 4 MiB for a retriever's passage embeddings.
// A 1,000-character passage's term set is estimated at ~20 KB, so ~800 such passages stay analysed.
const (
	termSetBudget   = 16 << 20
	wordFreqBudget  = 8 << 20
	queryWordBudget = 1 << 20
	// spacedTextBudget is the passages' collapsed spacing: ~4,000 passages of 1,000 characters.
	spacedTextBudget = 8 << 20
	// passageVectorBudget is a retriever's memo of the passage embeddings feedback reads: 3 KiB for a
	// 768-d vector, ~1,300 of them.
	passageVectorBudget = 4 << 20
	// mapEntryBytes estimates a map entry's cost beyond its key's bytes: the string header, the value,
	// the map's own slot overhead.
	mapEntryBytes = 48
)

var (
	// spacedTexts are passages with their spacing collapsed (passageSet.dup).
	spacedTexts = memo.New(spacedTextBudget, func(key string, v string) int { return len(key) + len(v) + 64 })
	termSets    = memo.New(termSetBudget, func(key string, v map[string]struct{}) int {
		n := len(key) + 64
		for t := range v {
			n += len(t) + mapEntryBytes
		}
		return n
	})
	wordFreqs = memo.New(wordFreqBudget, func(key string, v wordFreq) int {
		n := len(key) + 64
		for t := range v.tf {
			n += len(t) + mapEntryBytes
		}
		return n
	})
	queryWordMemo = memo.New(queryWordBudget, func(key string, v []queryWord) int {
		n := len(key) + 64
		for _, w := range v {
			for _, t := range w.whole {
				n += len(t) + 16
			}
			for _, t := range w.parts {
				n += len(t) + 16
			}
			n += 48
		}
		return n
	})
)

// termSet is the set of text's index terms (textproc.IndexTerms), shared: do not modify it.
func termSet(text string) map[string]struct{} {
	return termSets.Get(text, func(text string) map[string]struct{} {
		terms := textproc.IndexTerms(text)
		have := make(map[string]struct{}, len(terms))
		for _, t := range terms {
			have[t] = struct{}{}
		}
		return have
	})
}

// wordFreq is a text's word and stem terms, stop-words left out, with their counts, and the number of such
// terms (keyword feedback's passage model).
type wordFreq struct {
	tf    map[string]float64
	words float64
}

// wordFrequencies is text's wordFreq, shared: do not modify it.
func wordFrequencies(text string) wordFreq {
	return wordFreqs.Get(text, analyseWordFreq)
}

func analyseWordFreq(text string) wordFreq {
	f := wordFreq{tf: map[string]float64{}}
	compound := -1 // the word index of the last hyphenated compound
	textproc.Analyze(text, func(t textproc.Term) {
		if t.Kind == textproc.KindWord && textproc.HyphenCompound(t.Text) {
			compound = t.Word
			return
		}
		if !t.Stop && (t.Kind == textproc.KindWord || t.Kind == textproc.KindStem || t.Kind == textproc.KindPart && t.Word == compound) {
			f.tf[t.Text]++
			f.words++
		}
	})
	return f
}

func newVectorMemo() *memo.Memo[[]float32] {
	return memo.New(passageVectorBudget, func(key string, v []float32) int { return len(key) + 4*len(v) + 64 })
}

// embedPassages returns the embeddings of texts as r's embedder makes them for documents, those embedded by
// an earlier search from r's memo (the embedder is a pure function of the text: the hash embedder's features,
// a hosted model's fixed weights), the rest in one EmbedDocuments call. The vectors are shared: do not modify
// them.
func (r *Retriever) embedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missing []string
	var at []int
	for i, t := range texts {
		if v, ok := r.vectors.Lookup(t); ok {
			out[i] = v
		} else {
			missing, at = append(missing, t), append(at, i)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	vecs, err := r.embedder.EmbedDocuments(ctx, missing)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(missing) {
		return nil, fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(missing))
	}
	for j, v := range vecs {
		out[at[j]] = v
		r.vectors.Add(missing[j], v)
	}
	return out, nil
}
