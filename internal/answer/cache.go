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
// it is younger than the TTL and its collection has not changed: the same number of visible documents and
// none updated since the answer was made (two counting queries, the same on every store, so several
// processes sharing a database see each other's changes).
type cache struct {
	ttl     time.Duration
	records Records
	mu      sync.Mutex
	entries map[string]*cached
}

type cached struct {
	ans   rag.Answer
	at    time.Time // when the answer was begun: a change from then on invalidates it
	count int       // visible documents of the collection then
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

// state counts the collection's visible documents, and those updated since since (all when since is zero).
func (c *cache) state(ctx context.Context, p rag.Principal, collection string, since time.Time) (total, changed int, err error) {
	page, err := c.records.ListDocuments(ctx, p, rag.DocumentQuery{Filter: rag.Filter{Collections: []string{collection}}, Limit: 1})
	if err != nil {
		return 0, 0, err
	}
	if since.IsZero() {
		return page.Total, 0, nil
	}
	upd, err := c.records.ListDocuments(ctx, p, rag.DocumentQuery{Filter: rag.Filter{Collections: []string{collection}, UpdatedAfter: &since}, Limit: 1})
	if err != nil {
		return 0, 0, err
	}
	return page.Total, upd.Total, nil
}

// get returns a copy of the cached answer for key when it is still good.
func (c *cache) get(ctx context.Context, p rag.Principal, key, collection string) (*rag.Answer, error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok {
		return nil, nil
	}
	if time.Since(e.at) > c.ttl {
		c.drop(key)
		return nil, nil
	}
	total, changed, err := c.state(ctx, p, collection, e.at)
	if err != nil {
		return nil, err
	}
	if total != e.count || changed > 0 {
		c.drop(key)
		return nil, nil
	}
	ans := e.ans
	ans.Cached = true
	return &ans, nil
}

func (c *cache) drop(key string) {
	c.mu.Lock()
	delete(c.entries, key)
	c.mu.Unlock()
}

// put keeps ans, begun at start when the collection had count documents.
func (c *cache) put(key string, ans *rag.Answer, start time.Time, count int) {
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
	c.entries[key] = &cached{ans: *ans, at: start, count: count}
}
