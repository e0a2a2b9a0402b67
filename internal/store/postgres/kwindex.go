package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/topk"
)

// The in-memory keyword index, the embedded store's design (internal/store/sqlite/kwindex.go) on PostgreSQL:
// a copy of the postings (term, chunk, tf, dl) as Go slices, so that a keyword query scores every posting
// of its terms in memory instead of aggregating the essential terms' postings in SQL, which is the floor of
// the MaxScore statement at 100,000 chunks (docs/scaling.md). Scores are the statement's own: the weights
// and c2 come from term_stats and corpus_stats in the query's snapshot (whole-corpus statistics, as now),
// each posting's share is the statement's expression in the same float8 operations, the top k is ordered
// by score and then chunk ID.
//
// It is built in the background once the store holds Options.KeywordIndexMin chunks, from one snapshot of
// chunks and postings. The snapshot is taken right after LOCK TABLE chunks IN SHARE MODE, inside a
// savepoint rolled back at once: the lock waits for the writers of chunks in progress and is released
// before the (seconds-long) read, while the REPEATABLE READ snapshot stays. CommitVersion takes its lock
// on chunks (the DELETE of the old chunks) before it reserves chunk IDs, so every chunk committed after the
// snapshot has an ID above the snapshot's largest (seq): a query asks the MaxScore statement for the top k
// of chunks past seq (its "tail", a range of the postings' primary key) and merges the two lists.
//
// A query uses the copy only when its own snapshot covers the copy's (every transaction the copy saw
// committed, the query sees committed) and the analyzer's version is the copy's. Deleted chunks stay in the
// copy: the chunks a query would return are looked up in chunks in the query's transaction, as the
// principal reads, and those gone are marked dead and skipped. Filters and permissions are resolved first
// to the documents allowed, by a query on documents under the same conditions and, with row security on,
// under the reader role's policies, so the copy returns nothing the statement could not. When the tail or
// the deletions grow past a share of the copy, it is built again while the old copy keeps serving. Nothing
// is written to the database; each process holds its own copy, and a restart builds it again.
const (
	// kwTailMin and kwTailDiv: the copy is rebuilt once more than max(kwTailMin, rows/kwTailDiv) chunk IDs
	// were issued after its snapshot.
	kwTailMin = 2000
	kwTailDiv = 8
	// kwDeadDiv: the copy is rebuilt once more than rows/kwDeadDiv of its chunks are known to be deleted.
	kwDeadDiv = 4
	// kwLockTimeout bounds how long a build waits for writers in progress (and holds new ones back) before
	// it gives up; the next query tries again.
	kwLockTimeout = "2s"
)

// pgSnapshot is what a query needs of a pg_snapshot: xmax and the transactions in progress (ascending).
type pgSnapshot struct {
	xmax uint64
	xip  []uint64
}

// parseSnapshot reads pg_current_snapshot()'s text form, "xmin:xmax:xip,xip,…".
func parseSnapshot(s string) (pgSnapshot, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return pgSnapshot{}, fmt.Errorf("snapshot %q", s)
	}
	var snap pgSnapshot
	var err error
	if snap.xmax, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
		return pgSnapshot{}, fmt.Errorf("snapshot %q: %w", s, err)
	}
	if parts[2] != "" {
		for _, x := range strings.Split(parts[2], ",") {
			v, err := strconv.ParseUint(x, 10, 64)
			if err != nil {
				return pgSnapshot{}, fmt.Errorf("snapshot %q: %w", s, err)
			}
			snap.xip = append(snap.xip, v)
		}
		slices.Sort(snap.xip)
	}
	return snap, nil
}

// covers says whether every transaction committed in b is committed in q: those below b.xmax that b saw
// finished are neither at or past q.xmax nor in progress in q.
func (q pgSnapshot) covers(b pgSnapshot) bool {
	if q.xmax < b.xmax {
		return false
	}
	for _, t := range q.xip {
		if t >= b.xmax {
			break
		}
		if _, found := slices.BinarySearch(b.xip, t); !found {
			return false
		}
	}
	return true
}

// kwIndex is one snapshot of the postings in memory. Rows are the chunks in ID order.
type kwIndex struct {
	snap    pgSnapshot
	seq     int64 // the largest chunk ID of the snapshot: every chunk committed later has a larger one
	version int   // terms_version of the snapshot
	ids     []int64
	docs    []int32 // each row's document, an index into docIDs
	docIDs  []string
	docOf   map[string]int32
	lens    []int32 // each row's dl
	post    map[string]kwPostings
	// dead has the bit of each row a query found deleted, and deadAt that query's snapshot: a query may skip
	// the row without looking it up only when its own snapshot covers that one (it sees the deletion too;
	// an older snapshot still sees the chunk).
	dead   []atomic.Uint64
	deadMu sync.RWMutex
	deadAt map[int32]pgSnapshot
	nDead  atomic.Int64
	bytes  int64
}

type kwPostings struct {
	rows []int32
	tfs  []uint16
}

// deadFor says whether row r is known to be deleted in snapshot q.
func (x *kwIndex) deadFor(r int32, q pgSnapshot) bool {
	if x.dead[r>>6].Load()&(1<<(r&63)) == 0 {
		return false
	}
	x.deadMu.RLock()
	at, ok := x.deadAt[r]
	x.deadMu.RUnlock()
	return ok && q.covers(at)
}

// markDead records that a query in snapshot q found row r deleted. Of two such snapshots the older one is
// kept, since more snapshots cover it.
func (x *kwIndex) markDead(r int32, q pgSnapshot) {
	x.deadMu.Lock()
	if at, ok := x.deadAt[r]; !ok {
		x.deadAt[r] = q
		x.nDead.Add(1)
	} else if at.covers(q) {
		x.deadAt[r] = q
	}
	x.deadMu.Unlock()
	x.dead[r>>6].Or(1 << (r & 63))
}

// row returns the row of chunk id, or -1.
func (x *kwIndex) row(id int64) int32 {
	if i, found := slices.BinarySearch(x.ids, id); found {
		return int32(i)
	}
	return -1
}

// keywordIndex holds a Store's in-memory keyword index and its builds.
type keywordIndex struct {
	cur      atomic.Pointer[kwIndex]
	building atomic.Bool
	ctx      context.Context
	cancel   context.CancelFunc
	builds   sync.WaitGroup
	scratch  sync.Pool // *kwScratch
	// answered counts the queries answered from the copy (for tests).
	answered atomic.Int64
	// inline builds the copy in the query that wants it, after its transaction, rather than in the
	// background (for tests).
	inline bool
}

type kwScratch struct {
	acc     []float64
	touched []int32
}

func (k *keywordIndex) start() { k.ctx, k.cancel = context.WithCancel(context.Background()) }

func (k *keywordIndex) stop() {
	if k.cancel != nil {
		k.cancel()
	}
	k.builds.Wait()
}

// kwState is what a keyword query reads of the store's state in its snapshot, as the connecting role.
type kwState struct {
	ok      bool
	snap    pgSnapshot
	maxID   int64 // the largest chunk ID
	live    int64 // chunks (corpus_stats)
	version int   // terms_version
}

const kwStateSQL = `SELECT pg_current_snapshot()::text, COALESCE((SELECT max(id) FROM {S}.chunks), 0),
	(SELECT COALESCE(sum(chunks), 0) FROM {S}.corpus_stats), (SELECT version FROM {S}.terms_version)`

func (s *Store) readKWState(ctx context.Context, db querier) (kwState, error) {
	var st kwState
	var snap string
	if err := db.QueryRow(ctx, s.q(kwStateSQL)).Scan(&snap, &st.maxID, &st.live, &st.version); err != nil {
		return st, fmt.Errorf("keyword index state: %w", err)
	}
	var err error
	if st.snap, err = parseSnapshot(snap); err != nil {
		return st, fmt.Errorf("keyword index state: %w", err)
	}
	st.ok = true
	return st, nil
}

// usableKeywordIndex returns the copy if a query in snapshot st may use it, else nil.
func (s *Store) usableKeywordIndex(st kwState) *kwIndex {
	x := s.kw.cur.Load()
	if x == nil || !st.ok || st.version != x.version || !st.snap.covers(x.snap) {
		return nil
	}
	return x
}

// maybeBuildKeywordIndex starts a build of the copy when the store is large enough and has none, or its
// snapshot fell too far behind st; it drops the copy when the store became too small for one. It runs
// outside any transaction of the caller: a build needs a connection of its own (PGlite has one).
func (s *Store) maybeBuildKeywordIndex(st kwState) {
	k := &s.kw
	if !st.ok {
		return
	}
	least := s.opts.KeywordIndexMin
	if least < 0 || st.live < int64(least) {
		k.cur.Store(nil)
		return
	}
	if x := k.cur.Load(); x != nil {
		rows := int64(len(x.ids))
		if st.version == x.version && st.maxID-x.seq <= max(kwTailMin, rows/kwTailDiv) &&
			rows-st.live <= rows/kwDeadDiv && x.nDead.Load() <= rows/kwDeadDiv {
			return
		}
	}
	if !k.building.CompareAndSwap(false, true) {
		return
	}
	k.builds.Add(1)
	build := func() {
		defer k.builds.Done()
		defer k.building.Store(false)
		start := time.Now()
		x, err := s.buildKeywordIndex(k.ctx)
		if err != nil {
			if k.ctx.Err() == nil {
				s.opts.Logger.Warn("cannot build the in-memory keyword index; the MaxScore statement answers keyword queries",
					slog.Any("err", err))
			}
			return
		}
		if old := k.cur.Load(); old == nil || old.seq <= x.seq {
			k.cur.Store(x)
		}
		s.opts.Logger.Debug("keyword index built", slog.Int("chunks", len(x.ids)), slog.Int64("bytes", x.bytes),
			slog.Duration("took", time.Since(start)))
	}
	if k.inline {
		build()
	} else {
		go build()
	}
}

// WaitKeywordIndex starts the in-memory keyword index's build if the store wants one and waits for it,
// and returns its rows and bytes (0, 0 when keyword queries go to the MaxScore statement alone), e.g. for
// benchmarks.
func (s *Store) WaitKeywordIndex(ctx context.Context) (rows int, bytes int64, err error) {
	st, err := s.readKWState(ctx, s.pool)
	if err != nil {
		return 0, 0, interpretError(err)
	}
	s.maybeBuildKeywordIndex(st)
	s.kw.builds.Wait()
	if x := s.kw.cur.Load(); x != nil {
		return len(x.ids), x.bytes, nil
	}
	return 0, 0, nil
}

// buildKeywordIndex reads chunks and postings into memory in one snapshot, taken when no writer of chunks
// is in progress (see above).
func (s *Store) buildKeywordIndex(ctx context.Context) (*kwIndex, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read only
	x := &kwIndex{post: map[string]kwPostings{}, docOf: map[string]int32{}, deadAt: map[int32]pgSnapshot{}}
	var snap string
	// Neither SET nor LOCK takes the transaction's snapshot: the SELECT after the lock does.
	sub, err := tx.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := sub.Exec(ctx, "SET LOCAL lock_timeout = '"+kwLockTimeout+"'"); err != nil {
		return nil, err
	}
	if _, err := sub.Exec(ctx, s.q("LOCK TABLE {S}.chunks IN SHARE MODE")); err != nil {
		return nil, fmt.Errorf("keyword index: wait for writers: %w", err)
	}
	if err := sub.QueryRow(ctx, s.q(`SELECT pg_current_snapshot()::text, COALESCE((SELECT max(id) FROM {S}.chunks), 0),
		(SELECT version FROM {S}.terms_version)`)).Scan(&snap, &x.seq, &x.version); err != nil {
		return nil, err
	}
	// Rolling the savepoint back releases the lock (and lock_timeout); the snapshot is the transaction's.
	if err := sub.Rollback(ctx); err != nil {
		return nil, err
	}
	if x.snap, err = parseSnapshot(snap); err != nil {
		return nil, err
	}

	rows, err := tx.Query(ctx, s.q(`SELECT id, document_id FROM {S}.chunks ORDER BY id`))
	if err != nil {
		return nil, err
	}
	var id int64
	var doc string
	_, err = pgx.ForEachRow(rows, []any{&id, &doc}, func() error {
		d, ok := x.docOf[doc]
		if !ok {
			d = int32(len(x.docIDs))
			x.docOf[doc] = d
			x.docIDs = append(x.docIDs, doc)
		}
		x.ids, x.docs = append(x.ids, id), append(x.docs, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	x.ids, x.docs = slices.Clip(x.ids), slices.Clip(x.docs)
	x.lens = make([]int32, len(x.ids))
	x.dead = make([]atomic.Uint64, (len(x.ids)+63)/64)

	// The postings in primary-key order: by term, then by chunk. Each term's list is collected in cur and
	// copied to slices of its exact size.
	rows, err = tx.Query(ctx, s.q(`SELECT term, chunk_id, tf, dl FROM {S}.postings ORDER BY term, chunk_id`))
	if err != nil {
		return nil, err
	}
	var (
		term, last string
		tf, dl     int32
		cur        kwPostings
		n          int
		postings   int64
	)
	flush := func() {
		if len(cur.rows) > 0 {
			x.post[last] = kwPostings{rows: slices.Clone(cur.rows), tfs: slices.Clone(cur.tfs)}
			postings += int64(len(cur.rows))
		}
		cur.rows, cur.tfs = cur.rows[:0], cur.tfs[:0]
	}
	_, err = pgx.ForEachRow(rows, []any{&term, &id, &tf, &dl}, func() error {
		if n++; n%65536 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		r := x.row(id)
		if r < 0 {
			return fmt.Errorf("keyword index: chunk %d has postings but no row", id)
		}
		if tf < 1 || tf > math.MaxUint16 {
			return fmt.Errorf("keyword index: tf %d of chunk %d out of range", tf, id)
		}
		if x.lens[r] == 0 {
			x.lens[r] = dl
		} else if x.lens[r] != dl {
			return fmt.Errorf("keyword index: chunk %d has postings of lengths %d and %d", id, x.lens[r], dl)
		}
		if term != last || len(cur.rows) == 0 {
			flush()
			if _, dup := x.post[term]; dup {
				return fmt.Errorf("keyword index: postings of %q out of order", term)
			}
			last = term
		}
		cur.rows, cur.tfs = append(cur.rows, r), append(cur.tfs, uint16(tf))
		return nil
	})
	if err != nil {
		return nil, err
	}
	flush()
	x.bytes = int64(len(x.ids))*(8+4+4) + int64(len(x.dead))*8 + postings*6
	for _, d := range x.docIDs {
		x.bytes += 2 * (16 + int64(len(d))) // docIDs and docOf
	}
	for t := range x.post {
		x.bytes += int64(len(t)) + 16 + 48
	}
	return x, nil
}

// indexKeyword answers a keyword query from the copy x for the query's transaction db (the principal's
// reads), whose snapshot st covers x's: ts are the query terms with their weights (rarest first) and c2
// the length factor, from the same snapshot.
func (s *Store) indexKeyword(ctx context.Context, db pgx.Tx, x *kwIndex, st kwState, p rag.Principal, q rag.KeywordQuery,
	ts []keywordTerm, c2 float64) ([]rag.Candidate, error) {
	// The documents allowed, in the copy's numbering; nil: every document. With row security on, only an
	// admin (whose policy shows every row) skips the lookup.
	var a args
	conds, err := docConditions(&a, p, q.Filter)
	if err != nil {
		return nil, err
	}
	var allowed []bool
	if len(conds) > 0 || (s.rowSecured(p) && !p.Admin) {
		allowed = make([]bool, len(x.docIDs))
		rows, err := db.Query(ctx, s.q(`SELECT d.id FROM {S}.documents d WHERE `+where(conds)), a...)
		if err != nil {
			return nil, fmt.Errorf("keyword candidates: allowed documents: %w", err)
		}
		var id string
		if _, err := pgx.ForEachRow(rows, []any{&id}, func() error {
			if d, ok := x.docOf[id]; ok {
				allowed[d] = true
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("keyword candidates: allowed documents: %w", err)
		}
	}
	// gone holds the rows this query found deleted (which older snapshots may still see).
	var gone map[int32]bool
	ok := func(r int32) bool {
		return (allowed == nil || allowed[x.docs[r]]) && !gone[r] && !x.deadFor(r, st.snap)
	}

	sc, _ := s.kw.scratch.Get().(*kwScratch)
	if sc == nil || len(sc.acc) < len(x.ids) {
		sc = &kwScratch{acc: make([]float64, len(x.ids))}
	}
	defer func() {
		for _, r := range sc.touched {
			sc.acc[r] = 0
		}
		sc.touched = sc.touched[:0]
		s.kw.scratch.Put(sc)
	}()
	// The statement's share, t.w * p.tf / (p.tf + k1(1−b) + c2 * p.dl), in the same float8 operations; a
	// share is never 0, so 0 marks an untouched row.
	k1b := bm25K1 * (1 - bm25B)
	acc := sc.acc
	for _, t := range ts {
		ps := x.post[t.term]
		for i, r := range ps.rows {
			tf := float64(ps.tfs[i])
			if acc[r] == 0 {
				sc.touched = append(sc.touched, r)
			}
			acc[r] += t.weight * tf / (tf + k1b + c2*float64(x.lens[r]))
		}
	}
	out := topk.Rows(sc.touched, acc, x.ids, ok, q.K)
	// Chunks deleted since the snapshot are still in the copy: look up the ones chosen and choose again
	// without those gone. The allowed documents are visible to the principal, and so are their chunks, so a
	// chunk not found is gone for every reader whose snapshot covers this one.
	for len(out) > 0 {
		ids := make([]int64, len(out))
		for i, c := range out {
			ids[i] = c.ChunkID
		}
		rows, err := db.Query(ctx, s.q(`SELECT u.id FROM unnest($1::bigint[]) AS u(id)
			WHERE NOT EXISTS (SELECT 1 FROM {S}.chunks c WHERE c.id = u.id)`), ids)
		if err != nil {
			return nil, fmt.Errorf("keyword candidates: deleted chunks: %w", err)
		}
		missing, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return nil, fmt.Errorf("keyword candidates: deleted chunks: %w", err)
		}
		if len(missing) == 0 {
			break
		}
		if gone == nil {
			gone = map[int32]bool{}
		}
		for _, id := range missing {
			if r := x.row(id); r >= 0 {
				gone[r] = true
				x.markDead(r, st.snap)
			}
		}
		out = topk.Rows(sc.touched, acc, x.ids, ok, q.K)
	}
	if st.maxID > x.seq {
		var a args
		sql, err := keywordSQL(&a, p, q, ts, c2, x.seq)
		if err != nil {
			return nil, err
		}
		tail, err := s.keywordStatement(ctx, db, sql, a)
		if err != nil {
			return nil, err
		}
		out = append(out, tail...)
		topk.Sort(out)
		out = out[:min(q.K, len(out))]
	}
	for i := range out {
		out[i].Rank = i + 1
	}
	s.kw.answered.Add(1)
	return out, nil
}
