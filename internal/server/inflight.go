package server

import "sync"

// byteBudget bounds the bytes of request bodies held at once (uploads are read into memory before they
// are stored). A request reserves its size before reading and gives it back when done; when the budget is
// spent it is refused at once (429 with Retry-After) instead of waiting, so a burst of uploads cannot grow
// the heap without bound.
type byteBudget struct {
	mu    sync.Mutex
	limit int64
	used  int64
}

// reserve takes n bytes of the budget and reports whether it could. A request larger than the whole
// budget is let through when nothing else is in flight, so that one upload at the per-request limit is
// never refused forever.
func (b *byteBudget) reserve(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used > 0 && b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

// release gives back n bytes taken by reserve.
func (b *byteBudget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}
