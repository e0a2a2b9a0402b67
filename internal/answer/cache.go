package answer

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// maxCached bounds the answer cache; the oldest answer makes room for a new one.
const maxCached = 1024

// cache keeps answers to questions over one collection (Options.CacheTTL). An answer is served again while
// it is younger than the TTL and its collection has not changed: the same number of visible documents, none
// updated since the answer was begun, the same graph generation — one query of the store
// (rag.CollectionStateStore, the same on every store, so several processes sharing a database see each
// other's changes).
type cache struct {
	ttl     time.Duration
	states  rag.CollectionStateStore
	mu      sync.Mutex
	entries map[string]*cached
}

type cached struct {
	ans   rag.Answer
	at    time.Time           // when the answer was begun: a change from then on invalidates it
	state rag.CollectionState // the collection's then
}

// cacheKey is the key of req asked as q by p: "" when the answer is not cached (history, or not exactly one
// collection).
func cacheKey(p rag.Principal, req rag.AskRequest, q string) string {
	if len(req.History) > 0 || len(req.Filter.Collections) != 1 {
		return ""
	}
	b, err := json.Marshal(struct {
		P      rag.Principal
		Q      string
		F      rag.Filter
		K      int
		AsOf   string
		Record bool
		Drop   []string
	}{p, strings.Join(strings.Fields(strings.ToLower(q)), " "), req.Filter, req.K, req.AsOf.Format(time.DateOnly), true, req.DropFilters})
	if err != nil {
		return ""
	}
	return string(b)
}

// get returns a copy of the cached answer for key when it is still good, and the collection's state (for
// put, when there is no good answer).
func (c *cache) get(ctx context.Context, p rag.Principal, key, collection string) (*rag.Answer, rag.CollectionState, error) {
	state, err := c.states.CollectionState(ctx, p, collection)
	if err != nil {
		return nil, state, err
	}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok {
		return nil, state, nil
	}
	if time.Since(e.at) > c.ttl || state.Documents != e.state.Documents || state.GraphGeneration != e.state.GraphGeneration ||
		!state.LastUpdate.Before(e.at) {
		c.drop(key)
		return nil, state, nil
	}
	ans := e.ans
	ans.Cached = true
	return &ans, state, nil
}

func (c *cache) drop(key string) {
	c.mu.Lock()
	delete(c.entries, key)
	c.mu.Unlock()
}

// put keeps ans, begun at start when the collection was in state.
func (c *cache) put(key string, ans *rag.Answer, start time.Time, state rag.CollectionState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCached {
		var oldest string
		for k, e := range c.entries {
			if oldest == "" || e.at.Before(c.entries[oldest].at) {
				oldest = k
			}
		}
		delete(c.entries, oldest)
	}
	c.entries[key] = &cached{ans: *ans, at: start, state: state}
}
