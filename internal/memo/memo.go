// Package memo keeps what was derived from a text — its terms, its words, its embedding — keyed by the
// text itself, for the most recently used texts within a byte budget. A changed text is a new key, so
// nothing is ever invalidated. Retrieval and the extractive answerer analyse the same passages for search
// after search (docs/performance.md, "Analysis memo").
package memo

import "sync"

// Memo is a concurrency-safe cache of a pure function of a string, in two generations: a lookup finds the
// newer generation or the older one (moving the entry up), and when the newer one's estimated bytes reach
// half the budget it becomes the older one and the oldest entries are dropped. That bounds the memory by the
// budget (as estimated by size) and keeps the texts used within the last generation, a cheap LRU.
type Memo[V any] struct {
	mu       sync.Mutex
	cur, old map[string]V
	curBytes int
	budget   int
	size     func(key string, v V) int
}

// New returns a Memo of budget bytes, as size estimates an entry's.
func New[V any](budget int, size func(string, V) int) *Memo[V] {
	return &Memo[V]{budget: budget, size: size}
}

// Get returns f(key), from the memo when it holds key. The value is shared: callers must not modify it.
func (m *Memo[V]) Get(key string, f func(string) V) V {
	if v, ok := m.Lookup(key); ok {
		return v
	}
	v := f(key) // outside the lock: two searches may compute one text at once, both get the same answer
	m.Add(key, v)
	return v
}

// Lookup returns the value held for key.
func (m *Memo[V]) Lookup(key string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.cur[key]; ok {
		return v, true
	}
	v, ok := m.old[key]
	if ok {
		delete(m.old, key)
		m.put(key, v)
	}
	return v, ok
}

// Add holds v for key.
func (m *Memo[V]) Add(key string, v V) {
	m.mu.Lock()
	m.put(key, v)
	m.mu.Unlock()
}

// put adds key to the newer generation; m.mu is held.
func (m *Memo[V]) put(key string, v V) {
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

// Len is the number of entries held (tests).
func (m *Memo[V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.cur) + len(m.old)
}
