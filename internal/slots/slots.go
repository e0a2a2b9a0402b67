// Package slots admits requests at most N at once, the others waiting in the order they came: a bound on
// how much work a server runs together (RAGD_SEARCH_SLOTS). It is not a latency gain: on two cores, two
// slots gave a higher p95 than no limit (docs/performance.md).
//
// A request holds its slot in its context: work the request does under that context (a chat's several
// searches) passes the gate without taking a second slot, and Outside gives the slot back while the request
// waits on something that does not use this machine's processors (a hosted model's answer).
package slots

import (
	"cmp"
	"container/list"
	"context"
	"sync"
	"sync/atomic"
)

// Gate admits at most N holders at once, in FIFO order: a waiter is never passed by a later one. The nil
// *Gate admits everything at once.
type Gate struct {
	n       int
	mu      sync.Mutex
	running int
	waiting list.List // of chan struct{}, closed when its waiter is admitted
}

// New returns a gate of n slots, or nil (no gate) when n < 1.
func New(n int) *Gate {
	if n < 1 {
		return nil
	}
	return &Gate{n: n}
}

// Counts returns how many hold a slot and how many wait for one.
func (g *Gate) Counts() (running, waiting int) {
	if g == nil {
		return 0, 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running, g.waiting.Len()
}

// acquire waits for a slot, or returns ctx's error having taken none.
func (g *Gate) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	if g.running < g.n && g.waiting.Len() == 0 {
		g.running++
		g.mu.Unlock()
		return nil
	}
	ready := make(chan struct{})
	el := g.waiting.PushBack(ready)
	g.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		select {
		case <-ready: // admitted meanwhile: the slot is ours to give back
			g.mu.Unlock()
			g.release()
		default:
			g.waiting.Remove(el)
			g.mu.Unlock()
		}
		return ctx.Err()
	}
}

// release gives a slot back: to the first waiter, when there is one.
func (g *Gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if front := g.waiting.Front(); front != nil {
		close(g.waiting.Remove(front).(chan struct{})) // the slot passes on: running stays
		return
	}
	g.running--
}

// hold is one admitted request's slot, given back and taken again around its waits (Outside).
type hold struct {
	g    *Gate
	held atomic.Bool
}

// release gives the slot back if it is held.
func (h *hold) release() {
	if h.held.CompareAndSwap(true, false) {
		h.g.release()
	}
}

// key finds a context's slot.
type key struct{}

// Enter waits for a slot and returns a context that holds it, and the function that gives it back (call it
// once the work is done; later calls do nothing). When ctx already holds a slot of
// g, or g is nil, Enter returns at once and its release does nothing. It returns ctx's error, holding
// nothing, when ctx ends while it waits.
func (g *Gate) Enter(ctx context.Context) (context.Context, func(), error) {
	if g == nil {
		return ctx, func() {}, nil
	}
	if h, ok := ctx.Value(key{}).(*hold); ok && h.g == g && h.held.Load() {
		return ctx, func() {}, nil
	}
	if err := g.acquire(ctx); err != nil {
		return ctx, func() {}, err
	}
	h := &hold{g: g}
	h.held.Store(true)
	return context.WithValue(ctx, key{}, h), h.release, nil
}

// Outside runs f, which waits on something other than this machine's processors (a hosted model's
// answer), without the slot ctx holds, and takes a slot again, in line with the other waiters, once f has
// returned. Without a slot in ctx it only runs f. It returns f's error, or ctx's when ctx ended before a slot
// was taken again; the request's release then has nothing to give back.
func Outside(ctx context.Context, f func() error) error {
	h, ok := ctx.Value(key{}).(*hold)
	if !ok || !h.held.Load() {
		return f()
	}
	h.release()
	err := f()
	if aerr := h.g.acquire(ctx); aerr != nil {
		return cmp.Or(err, aerr)
	}
	h.held.Store(true)
	return err
}
