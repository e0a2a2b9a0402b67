package sqlite

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/ragd/ragd/internal/rag"
)

// Every search reads its passages (Hits) after its candidate queries: the fused candidates, the keyword
// feedback's best matches, the symbol stage's window — a hundred or more rows of chunks and documents, ~11 µs
// a row in modernc's SQLite, 14 % of the server's CPU under the HTTP load test (docs/performance.md). The
// passages a workload's searches reach are mostly the same ones, so the store keeps those it has read in
// memory, within a byte budget (Options.HitCacheBytes), and reads from the database only the others.
//
// What is kept is valid for one state of the database, named by two counters of store_meta that every
// change of what Hits reads moves, in whatever process it is made (migration 0028): hits_version (a
// document's or a chunk's row updated, a document deleted) and chunks_deleted (a chunk removed). A chunk's
// ID is never reused (AUTOINCREMENT), so a new chunk leaves what is kept as it was. Hits reads the two
// counters first, then the rows it lacks; rows read after the counters are at least as new as the state
// they name, so what is kept is never older than its label. When the counters have moved, everything kept
// is dropped.
//
// Who may see a passage is not kept: for a principal other than an admin, Hits first asks the database
// which of the IDs it sees (visibleHitsSQL, a join without the passages' text), then takes those.

// hitVersion names a state of what Hits reads.
type hitVersion struct{ hits, deleted int64 }

// newer reports whether v is the state of o or a later one (both counters only grow).
func (v hitVersion) newer(o hitVersion) bool { return v.hits >= o.hits && v.deleted >= o.deleted }

const hitVersionSQL = `SELECT (SELECT value FROM store_meta WHERE key = 'hits_version'),
	(SELECT value FROM store_meta WHERE key = 'chunks_deleted')`

// hitCache is the passages kept, by chunk ID, in two generations (as retrieve's memo): a lookup finds the
// newer generation or the older one (moving the entry up), and when the newer one's estimated bytes reach
// half the budget it becomes the older one and the oldest entries are dropped.
type hitCache struct {
	budget int // bytes; ≤ 0: nothing is kept

	mu       sync.Mutex
	ver      hitVersion
	cur, old map[int64]rag.Hit
	curBytes int
}

// take returns copies of the kept passages of ids at state v, and the IDs it lacks. A state older than the
// one kept finds nothing (a search that read the counters before a change and arrives after it); a newer
// one drops what is kept.
func (c *hitCache) take(v hitVersion, ids []int64) (map[int64]rag.Hit, []int64) {
	if c.budget <= 0 {
		return nil, ids
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v != c.ver {
		if !v.newer(c.ver) {
			return nil, ids
		}
		c.ver, c.cur, c.old, c.curBytes = v, nil, nil, 0
	}
	var found map[int64]rag.Hit
	var missing []int64
	for _, id := range ids {
		h, ok := c.cur[id]
		if !ok {
			if h, ok = c.old[id]; ok {
				delete(c.old, id)
				c.put(h)
			}
		}
		if !ok {
			missing = append(missing, id)
			continue
		}
		if found == nil {
			found = make(map[int64]rag.Hit, len(ids))
		}
		found[id] = copyHit(h)
	}
	return found, missing
}

// keep holds hits, read at state v or later, unless the state kept is no longer v.
func (c *hitCache) keep(v hitVersion, hits []rag.Hit) {
	if c.budget <= 0 || len(hits) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v != c.ver {
		return
	}
	for i := range hits {
		c.put(copyHit(hits[i]))
	}
}

// put adds h to the newer generation; c.mu is held.
func (c *hitCache) put(h rag.Hit) {
	n := hitBytes(&h)
	if n > c.budget/2 {
		return
	}
	if c.cur == nil || c.curBytes+n > c.budget/2 {
		c.old, c.cur, c.curBytes = c.cur, make(map[int64]rag.Hit), 0
	}
	c.cur[h.ID] = h
	c.curBytes += n
}

// len is the number of passages kept (tests).
func (c *hitCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.old)
}

// hitBytes estimates the memory of a kept passage: its strings, its metadata (as the JSON it was read
// from, roughly) and the struct with its map slot.
func hitBytes(h *rag.Hit) int {
	n := 400 + len(h.Text) + len(h.Section) + len(h.Title) + len(h.Source) + len(h.MediaType) +
		len(h.CollectionID) + len(h.ExternalID) + len(h.DocumentID) + len(h.Kind) + 16*len(h.PageBreaks)
	for k, v := range h.Metadata {
		n += len(k) + 64
		if s, ok := v.(string); ok {
			n += len(s)
		}
	}
	return n
}

// copyHit is h with its own metadata map and page breaks, so that a caller changing what it got changes
// nothing kept. (Metadata values are copied shallowly: lists and objects inside are shared.)
func copyHit(h rag.Hit) rag.Hit {
	h.Metadata = maps.Clone(h.Metadata)
	h.PageBreaks = slices.Clone(h.PageBreaks)
	return h
}

// readHitVersion reads the state Hits' rows are at.
func (s *Store) readHitVersion(ctx context.Context) (hitVersion, error) {
	st, err := s.qstmts.get(ctx, hitVersionSQL)
	if err != nil {
		return hitVersion{}, err
	}
	var v hitVersion
	err = st.QueryRowContext(ctx).Scan(&v.hits, &v.deleted)
	return v, err
}
