package retrieve

import (
	"sync"

	"github.com/ragd/ragd/internal/textproc"
)

// A search analyses the same texts again and again: the judge and the code/table rule read the coverage of
// each candidate passage, and keyword feedback the words of the best keyword matches — for every search,
// though the passages a workload's questions reach are mostly the same ones. Profiled under the HTTP load
// test (docs/performance.md, "Analysis memo"), the analyser took a fifth of the server's CPU. The memos below
// keep what was derived from a text, keyed by the text itself (so a changed passage is simply a new key),
// for the most recently used texts within a byte budget.

// memo is a concurrency-safe cache of a pure function of a string, in two generations: a lookup finds the
// newer generation or the older one (moving the entry up), and when the newer one's estimated bytes reach
// half the budget it becomes the older one and the oldest entries are dropped. That bounds the memory by the
// budget (as estimated by size) and keeps the texts used within the last generation, a cheap LRU.
type memo[V any] struct {
	mu       sync.Mutex
	cur, old map[string]V
	curBytes int
	budget   int
	size     func(key string, v V) int
}

func newMemo[V any](budget int, size func(string, V) int) *memo[V] {
	return &memo[V]{budget: budget, size: size}
}

// get returns f(key), from the memo when it holds key. The value is shared: callers must not modify it.
func (m *memo[V]) get(key string, f func(string) V) V {
	m.mu.Lock()
	if v, ok := m.cur[key]; ok {
		m.mu.Unlock()
		return v
	}
	if v, ok := m.old[key]; ok {
		delete(m.old, key)
		m.put(key, v)
		m.mu.Unlock()
		return v
	}
	m.mu.Unlock()
	v := f(key) // outside the lock: two searches may compute one text at once, both get the same answer
	m.mu.Lock()
	m.put(key, v)
	m.mu.Unlock()
	return v
}

// put adds key to the newer generation; m.mu is held.
func (m *memo[V]) put(key string, v V) {
	n := m.size(key, v)
	if n > m.budget/2 {
		return // larger than a generation: not kept
	}
	if m.cur == nil || m.curBytes+n > m.budget/2 {
		m.old, m.cur, m.curBytes = m.cur, make(map[string]V), 0
	}
	m.cur[key] = v
	m.curBytes += n
}

// len is the number of entries held (tests).
func (m *memo[V]) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.cur) + len(m.old)
}

// The budgets: 16 MiB for passages' term sets, 8 MiB for their word frequencies, 1 MiB for queries' words.
// A 1,000-character passage's term set is estimated at ~20 KB, so ~800 such passages stay analysed.
const (
	termSetBudget   = 16 << 20
	wordFreqBudget  = 8 << 20
	queryWordBudget = 1 << 20
	// mapEntryBytes estimates a map entry's cost beyond its key's bytes: the string header, the value,
	// the map's own slot overhead.
	mapEntryBytes = 48
)

var (
	termSets = newMemo(termSetBudget, func(key string, v map[string]struct{}) int {
		n := len(key) + 64
		for t := range v {
			n += len(t) + mapEntryBytes
		}
		return n
	})
	wordFreqs = newMemo(wordFreqBudget, func(key string, v wordFreq) int {
		n := len(key) + 64
		for t := range v.tf {
			n += len(t) + mapEntryBytes
		}
		return n
	})
	queryWordMemo = newMemo(queryWordBudget, func(key string, v []queryWord) int {
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
	return termSets.get(text, func(text string) map[string]struct{} {
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
	return wordFreqs.get(text, func(text string) wordFreq {
		f := wordFreq{tf: map[string]float64{}}
		textproc.Analyze(text, func(t textproc.Term) {
			if !t.Stop && (t.Kind == textproc.KindWord || t.Kind == textproc.KindStem) {
				f.tf[t.Text]++
				f.words++
			}
		})
		return f
	})
}
