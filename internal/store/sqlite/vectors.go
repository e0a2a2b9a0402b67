package sqlite

import (
	"container/heap"
	"context"
	"database/sql"
	"errors"
	"sort"
	"sync"

	"github.com/viterin/vek/vek32"

	"github.com/ragd/ragd/internal/rag"
)

// The vector cache keeps, per embedding space, every vector of the space in one contiguous []float32 with
// the chunk ID and document seq of each row, and scores a query against all rows of allowed documents
// (exact cosine: vectors are L2-normalised, so a SIMD dot product).
//
// Freshness, also across processes: chunk_vectors.seq and vector_tombstones.seq only grow (AUTOINCREMENT),
// and every removal of a vector (replaced version, deleted document, re-embedded chunk) leaves a tombstone
// through a trigger. Before each search the cache reads the two sequence counters from sqlite_sequence (one
// cheap statement); when they moved it loads, in one read snapshot, the tombstones and the vector rows
// above what it has seen and applies both under its lock, so a search sees the vectors of exactly one
// committed state. Tombstones older than Options.TombstoneRetention are pruned; a cache that is older than
// the pruned point (store_meta tombstones_pruned_through) reloads its space in full.
type vectorCache struct {
	s      *Store
	mu     sync.Mutex
	spaces map[string]*spaceVectors
}

func newVectorCache(s *Store) *vectorCache {
	return &vectorCache{s: s, spaces: map[string]*spaceVectors{}}
}

func (c *vectorCache) drop() {
	c.mu.Lock()
	c.spaces = map[string]*spaceVectors{}
	c.mu.Unlock()
}

type spaceVectors struct {
	key string
	dim int

	refresh sync.Mutex // one loader at a time; guards the fields below it until mu
	loaded  bool
	spaceID int64 // 0 while the space has no row
	lastVec int64 // highest chunk_vectors.seq seen
	lastTom int64 // highest vector_tombstones.seq seen

	mu   sync.RWMutex // guards the rows
	ids  []int64      // chunk ID per row, 0 for a removed row
	docs []int64      // document seq per row, -1 for a removed row
	seqs []int64      // chunk_vectors.seq per row
	vecs []float32    // row i is vecs[i*dim:(i+1)*dim]
	pos  map[int64]int
	dead int
}

// Len returns the number of live vectors (for tests and stats).
func (sv *spaceVectors) Len() int {
	sv.mu.RLock()
	defer sv.mu.RUnlock()
	return len(sv.ids) - sv.dead
}

// space returns the up-to-date vectors of sp.
func (c *vectorCache) space(ctx context.Context, sp rag.Space) (*spaceVectors, error) {
	c.mu.Lock()
	sv := c.spaces[sp.ID()]
	if sv == nil {
		sv = &spaceVectors{key: sp.ID(), dim: sp.Dim, pos: map[int64]int{}}
		c.spaces[sp.ID()] = sv
	}
	c.mu.Unlock()
	if err := sv.sync(ctx, c.s.r); err != nil {
		return nil, err
	}
	return sv, nil
}

// vecBatch is vector rows as loaded: decoded straight into their final layout, so that a full load of a
// large space does not hold the raw bytes and the floats at once.
type vecBatch struct {
	ids, docs, seqs []int64
	vecs            []float32
}

type tombstone struct{ chunk, vecSeq int64 }

// sync brings sv up to the database's current state.
func (sv *spaceVectors) sync(ctx context.Context, db *sql.DB) error {
	sv.refresh.Lock()
	defer sv.refresh.Unlock()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var vecSeq, tomSeq, pruned int64
	if err := tx.QueryRowContext(ctx, `SELECT
			coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunk_vectors'), 0),
			coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'vector_tombstones'), 0),
			(SELECT value FROM store_meta WHERE key = 'tombstones_pruned_through')`).Scan(&vecSeq, &tomSeq, &pruned); err != nil {
		return err
	}
	if sv.loaded && vecSeq == sv.lastVec && tomSeq == sv.lastTom {
		return nil
	}
	full := !sv.loaded || pruned > sv.lastTom
	if sv.spaceID == 0 || full {
		err := tx.QueryRowContext(ctx, `SELECT id FROM spaces WHERE key = ?`, sv.key).Scan(&sv.spaceID)
		if errors.Is(err, sql.ErrNoRows) {
			sv.spaceID = 0
		} else if err != nil {
			return err
		}
	}
	var tombs []tombstone
	var rows vecBatch
	after := sv.lastVec
	if full {
		after = 0
	}
	if sv.spaceID != 0 {
		if !full {
			if tombs, err = loadTombstones(ctx, tx, sv.spaceID, sv.lastTom); err != nil {
				return err
			}
		}
		if rows, err = loadVectors(ctx, tx, sv.spaceID, sv.dim, after); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}

	sv.mu.Lock()
	defer sv.mu.Unlock()
	if full {
		sv.ids, sv.docs, sv.seqs, sv.vecs, sv.dead = rows.ids, rows.docs, rows.seqs, rows.vecs, 0
		sv.pos = make(map[int64]int, len(rows.ids))
		for i, id := range sv.ids {
			sv.pos[id] = i
		}
	} else {
		for _, t := range tombs {
			if i, ok := sv.pos[t.chunk]; ok && sv.seqs[i] == t.vecSeq {
				sv.kill(i)
			}
		}
		for j, id := range rows.ids {
			if i, ok := sv.pos[id]; ok {
				sv.kill(i)
			}
			sv.pos[id] = len(sv.ids)
			sv.ids = append(sv.ids, id)
			sv.docs = append(sv.docs, rows.docs[j])
			sv.seqs = append(sv.seqs, rows.seqs[j])
		}
		sv.vecs = append(sv.vecs, rows.vecs...)
	}
	if sv.dead > 0 && sv.dead*4 > len(sv.ids) {
		sv.compact()
	}
	sv.loaded, sv.lastVec, sv.lastTom = true, vecSeq, tomSeq
	return nil
}

func (sv *spaceVectors) kill(i int) {
	delete(sv.pos, sv.ids[i])
	sv.ids[i], sv.docs[i] = 0, -1
	sv.dead++
}

// compact drops removed rows, reusing the arrays.
func (sv *spaceVectors) compact() {
	n := 0
	for i, id := range sv.ids {
		if id == 0 {
			continue
		}
		if n != i {
			sv.ids[n], sv.docs[n], sv.seqs[n] = id, sv.docs[i], sv.seqs[i]
			copy(sv.vecs[n*sv.dim:(n+1)*sv.dim], sv.vecs[i*sv.dim:(i+1)*sv.dim])
			sv.pos[id] = n
		}
		n++
	}
	sv.ids, sv.docs, sv.seqs, sv.vecs = sv.ids[:n], sv.docs[:n], sv.seqs[:n], sv.vecs[:n*sv.dim]
	sv.dead = 0
}

func loadTombstones(ctx context.Context, tx *sql.Tx, spaceID, after int64) ([]tombstone, error) {
	rows, err := tx.QueryContext(ctx, `SELECT chunk_id, vec_seq FROM vector_tombstones WHERE seq > ? AND space_id = ?`, after, spaceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tombstone
	for rows.Next() {
		var t tombstone
		if err := rows.Scan(&t.chunk, &t.vecSeq); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func loadVectors(ctx context.Context, tx *sql.Tx, spaceID int64, dim int, after int64) (vecBatch, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM chunk_vectors WHERE space_id = ? AND seq > ?`, spaceID, after).Scan(&n); err != nil {
		return vecBatch{}, err
	}
	b := vecBatch{ids: make([]int64, 0, n), docs: make([]int64, 0, n), seqs: make([]int64, 0, n), vecs: make([]float32, 0, n*dim)}
	rows, err := tx.QueryContext(ctx, `SELECT v.seq, v.chunk_id, c.doc_seq, v.vec FROM chunk_vectors v
		JOIN chunks c ON c.id = v.chunk_id WHERE v.space_id = ? AND v.seq > ? ORDER BY v.seq`, spaceID, after)
	if err != nil {
		return vecBatch{}, err
	}
	defer rows.Close()
	var raw sql.RawBytes
	for rows.Next() {
		var seq, chunk, doc int64
		if err := rows.Scan(&seq, &chunk, &doc, &raw); err != nil {
			return vecBatch{}, err
		}
		if len(raw) != 4*dim {
			continue // cannot happen: writes check the dimension of the space
		}
		b.ids, b.docs, b.seqs = append(b.ids, chunk), append(b.docs, doc), append(b.seqs, seq)
		b.vecs = decodeVector(b.vecs, raw)
	}
	return b, rows.Err()
}

// WarmVectors loads the vectors of space into memory now rather than at the first search (about 2 s per
// 100,000 768-d vectors), e.g. when a server starts.
func (s *Store) WarmVectors(ctx context.Context, space rag.Space) error {
	if err := checkSpace(space); err != nil {
		return err
	}
	if _, err := s.vecs.space(ctx, space); err != nil {
		return dbError(err, "load vectors of %s", space.ID())
	}
	return nil
}

// docSet is a bitset of document seqs; nil means every document.
type docSet []uint64

func (b docSet) has(seq int64) bool {
	i := uint64(seq) >> 6
	return i < uint64(len(b)) && b[i]&(1<<(uint64(seq)&63)) != 0
}

// allowedDocs resolves the documents p may see that match f, or nil when that is every document.
func (s *Store) allowedDocs(ctx context.Context, p rag.Principal, f rag.Filter) (docSet, bool, error) {
	var w where
	w.visible(p)
	if err := w.filter(f); err != nil {
		return nil, false, err
	}
	if len(w.conds) == 0 {
		return nil, true, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT d.seq FROM documents d WHERE `+w.sql()+` ORDER BY d.seq DESC`, w.args...)
	if err != nil {
		return nil, false, dbError(err, "resolve allowed documents")
	}
	defer rows.Close()
	var set docSet
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, false, dbError(err, "resolve allowed documents")
		}
		if set == nil {
			set = make(docSet, seq/64+1)
		}
		set[seq>>6] |= 1 << (uint64(seq) & 63)
	}
	if err := rows.Err(); err != nil {
		return nil, false, dbError(err, "resolve allowed documents")
	}
	return set, set != nil, nil
}

// VectorCandidates returns up to q.K chunks of visible documents matching q.Filter nearest to q.Vector
// among the vectors of q.Space. The filter and visibility are resolved to a document set first, and only
// rows of those documents are scored, so a selective filter still yields K candidates.
func (s *Store) VectorCandidates(ctx context.Context, p rag.Principal, q rag.VectorQuery) ([]rag.Candidate, error) {
	if q.Space.Dim <= 0 || len(q.Vector) != q.Space.Dim {
		return nil, rag.Errorf(rag.CodeInvalid, "query vector has %d dimensions, space %s has %d", len(q.Vector), q.Space.ID(), q.Space.Dim)
	}
	allowed, some, err := s.allowedDocs(ctx, p, q.Filter)
	if err != nil {
		return nil, err
	}
	if q.K <= 0 || !some {
		return []rag.Candidate{}, nil
	}
	sv, err := s.vecs.space(ctx, q.Space)
	if err != nil {
		return nil, dbError(err, "load vectors of %s", q.Space.ID())
	}
	return sv.search(q.Vector, allowed, q.K, s.opts.SearchWorkers), nil
}

// scored is one row's score; the heap keeps the worst of the current top k on top.
type scored struct {
	score float32
	id    int64
}

// worse orders by score, then prefers the lower chunk ID, so results are deterministic.
func (a scored) worse(b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.id > b.id
}

type topK []scored

func (h topK) Len() int           { return len(h) }
func (h topK) Less(i, j int) bool { return h[i].worse(h[j]) }
func (h topK) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *topK) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *topK) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// minParallelRows is the row count below which one goroutine scores faster than several.
const minParallelRows = 4096

func (sv *spaceVectors) search(q []float32, allowed docSet, k, workers int) []rag.Candidate {
	sv.mu.RLock()
	defer sv.mu.RUnlock()
	n := len(sv.ids)
	if workers < 1 || n < minParallelRows {
		workers = 1
	}
	parts := make([]topK, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[w] = sv.scan(q, allowed, k, lo, hi)
		}()
	}
	wg.Wait()
	var all []scored
	for _, p := range parts {
		all = append(all, p...)
	}
	sort.Slice(all, func(i, j int) bool { return all[j].worse(all[i]) })
	if len(all) > k {
		all = all[:k]
	}
	out := make([]rag.Candidate, len(all))
	for i, x := range all {
		out[i] = rag.Candidate{ChunkID: x.id, Score: float64(x.score), Rank: i + 1}
	}
	return out
}

// scan scores rows [lo, hi) and returns their best k.
func (sv *spaceVectors) scan(q []float32, allowed docSet, k, lo, hi int) topK {
	h := make(topK, 0, k)
	dim := sv.dim
	for i := lo; i < hi; i++ {
		doc := sv.docs[i]
		if doc < 0 || (allowed != nil && !allowed.has(doc)) {
			continue
		}
		x := scored{vek32.Dot(q, sv.vecs[i*dim:(i+1)*dim]), sv.ids[i]}
		if len(h) < k {
			heap.Push(&h, x)
		} else if h[0].worse(x) {
			h[0] = x
			heap.Fix(&h, 0)
		}
	}
	return h
}

// cachedSpace is for tests: the live vector count of sp in this Store's cache (-1 when not loaded).
func (s *Store) cachedSpace(sp rag.Space) int {
	s.vecs.mu.Lock()
	sv := s.vecs.spaces[sp.ID()]
	s.vecs.mu.Unlock()
	if sv == nil {
		return -1
	}
	return sv.Len()
}
