package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/topk"
)

// The in-memory keyword index: a copy of the keyword index's postings (FTS5's chunks_fts) as Go slices,
// so that a keyword query scores its matching chunks without FTS5's per-row bm25() (which reads each
// row's length from the docsize table, and whose max-score first round often fails at k = 100 and runs
// the full ORDER BY rank). Scores are FTS5's own BM25: the same corpus figures (row count and total
// tokens from FTS5's averages record, document frequencies from the term cache), the same per-row lengths
// and term frequencies (read from FTS5 itself through the chunks_fts_instance vocabulary table), the
// same formula summed in the same term order.
//
// It is built in the background once the store holds Options.KeywordIndexMin chunks, over one snapshot
// (every chunk with an ID up to the snapshot's chunks sequence). A query whose read transaction sees more
// chunks asks FTS5 for the top k of the chunks past that ID (a rowid range FTS5 seeks to) and merges the
// two lists. Deleted chunks stay in the copy: once chunks have been deleted since the build, the chunks a
// query would return are checked against the chunks table and those gone are marked dead and skipped.
// When the chunks past the snapshot or the deletions since it grow past a share of the copy
// (kwTailDiv, kwDeadDiv), it is built again while the old copy keeps serving. Nothing is written to
// disk: a restart builds it again (seconds at 100,000 chunks; FTS5 answers meanwhile).
const (
	// kwTailMin and kwTailDiv: the index is rebuilt once more than max(kwTailMin, rows/kwTailDiv) chunk
	// IDs were issued after its snapshot.
	kwTailMin = 2000
	kwTailDiv = 8
	// kwDeadDiv: the index is rebuilt once more than rows/kwDeadDiv chunks were deleted since its snapshot.
	kwDeadDiv = 4
)

// kwIndex is one snapshot of the keyword index in memory. Rows are the chunks in ID order.
type kwIndex struct {
	seq     int64 // chunks sequence of the snapshot: every chunk with ID ≤ seq is in it
	deleted int64 // chunks_deleted of the snapshot
	ids     []int64
	docs    []int64 // document seq of each row
	lens    []int32 // tokens of each row (FTS5's docsize)
	post    map[string]kwPostings
	dead    []atomic.Uint64 // rows found deleted since the snapshot
	bytes   int64
}

type kwPostings struct {
	rows []int32
	tfs  []uint16
}

func (x *kwIndex) isDead(r int32) bool { return x.dead[r>>6].Load()&(1<<(r&63)) != 0 }

func (x *kwIndex) markDead(r int32) { x.dead[r>>6].Or(1 << (r & 63)) }

// row returns the row of chunk id, or -1.
func (x *kwIndex) row(id int64) int32 {
	i := sort.Search(len(x.ids), func(i int) bool { return x.ids[i] >= id })
	if i < len(x.ids) && x.ids[i] == id {
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
	// answered counts the queries answered from the index (for tests).
	answered atomic.Int64
	// inline builds the index in the query that wants it rather than in the background (for tests).
	inline bool
}

type kwScratch struct {
	acc     []float64
	touched []int32
}

func (k *keywordIndex) start() { k.ctx, k.cancel = context.WithCancel(context.Background()) }

func (k *keywordIndex) stop() {
	k.cancel()
	k.builds.Wait()
}

// kwState is what a keyword query reads of the index's state in its snapshot.
type kwState struct {
	seq, deleted, rows int64
	// ftsRows and ftsTokens are FTS5's own corpus figures (its averages record), which bm25() uses.
	ftsRows, ftsTokens int64
}

// maybeBuild starts a build of the in-memory index when the store is large enough and it has none, or
// its snapshot fell too far behind st; it drops the index when the store became too small for one.
func (s *Store) maybeBuildKeywordIndex(st kwState) {
	k := &s.kw
	least := s.opts.KeywordIndexMin
	if least < 0 || st.rows < int64(least) {
		k.cur.Store(nil)
		return
	}
	if x := k.cur.Load(); x != nil && st.seq-x.seq <= max(kwTailMin, int64(len(x.ids)/kwTailDiv)) &&
		st.deleted-x.deleted <= int64(len(x.ids)/kwDeadDiv) {
		return
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
				s.log().Warn("cannot build the in-memory keyword index; FTS5 answers keyword queries", slog.Any("err", err))
			}
			return
		}
		if old := k.cur.Load(); old == nil || old.seq <= x.seq {
			k.cur.Store(x)
		}
		s.log().Debug("keyword index built", slog.Int("chunks", len(x.ids)), slog.Int64("bytes", x.bytes),
			slog.Duration("took", time.Since(start)))
	}
	if k.inline {
		build()
	} else {
		go build()
	}
}

// WaitKeywordIndex starts the in-memory keyword index's build if the store wants one and waits for it,
// and returns its rows and bytes (0, 0 when keyword queries go to FTS5 alone), e.g. for benchmarks.
func (s *Store) WaitKeywordIndex(ctx context.Context) (rows int, bytes int64, err error) {
	err = s.read(ctx, func(tx *sql.Tx) error {
		st, err := readKWState(ctx, func(q string) (*sql.Stmt, error) { return s.rstmts.tx(ctx, tx, q) })
		if err == nil {
			s.maybeBuildKeywordIndex(st)
		}
		return err
	})
	if err != nil {
		return 0, 0, dbError(err, "keyword index")
	}
	s.kw.builds.Wait()
	if x := s.kw.cur.Load(); x != nil {
		return len(x.ids), x.bytes, nil
	}
	return 0, 0, nil
}

const keywordStateSQL = `SELECT
	coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0),
	(SELECT value FROM store_meta WHERE key = 'chunks_deleted'),
	(SELECT value FROM store_meta WHERE key = 'chunk_rows'),
	coalesce((SELECT block FROM chunks_fts_data WHERE id = 1), x'')`

func readKWState(ctx context.Context, prep func(query string) (*sql.Stmt, error)) (kwState, error) {
	var st kwState
	var avg []byte
	q, err := prep(keywordStateSQL)
	if err != nil {
		return st, err
	}
	if err := q.QueryRowContext(ctx).Scan(&st.seq, &st.deleted, &st.rows, &avg); err != nil {
		return st, err
	}
	// FTS5's averages record: the row count, then the total tokens of each column (one here), as varints.
	n, rows := ftsVarint(avg)
	if n > 0 {
		st.ftsRows = int64(rows)
		if m, tokens := ftsVarint(avg[n:]); m > 0 {
			st.ftsTokens = int64(tokens)
		}
	}
	return st, nil
}

// ftsVarint decodes an SQLite varint (what FTS5 writes): big-endian groups of 7 bits, the 9th byte whole.
// It returns the bytes read (0 when b is too short) and the value.
func ftsVarint(b []byte) (int, uint64) {
	var v uint64
	for i := range 9 {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return 9, v<<8 | uint64(b[i])
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return i + 1, v
		}
	}
	return 0, 0
}

// buildKeywordIndex reads the keyword index into memory in one read transaction.
func (s *Store) buildKeywordIndex(ctx context.Context) (*kwIndex, error) {
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	st, err := readKWState(ctx, func(q string) (*sql.Stmt, error) { return tx.PrepareContext(ctx, q) })
	if err != nil {
		return nil, err
	}
	x := &kwIndex{seq: st.seq, deleted: st.deleted, post: map[string]kwPostings{}}
	rows, err := tx.QueryContext(ctx, `SELECT id, doc_seq FROM chunks ORDER BY id`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id, doc int64
		if err := rows.Scan(&id, &doc); err != nil {
			rows.Close()
			return nil, err
		}
		x.ids, x.docs = append(x.ids, id), append(x.docs, doc)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	x.lens = make([]int32, len(x.ids))
	x.dead = make([]atomic.Uint64, (len(x.ids)+63)/64)
	rowOf := make(map[int64]int32, len(x.ids))
	for i, id := range x.ids {
		rowOf[id] = int32(i)
	}

	// One row per term instance, in term order and, within a term, in chunk ID order.
	rows, err = tx.QueryContext(ctx, `SELECT term, doc FROM chunks_fts_instance`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var (
		term    sql.RawBytes
		last    []byte
		cur     kwPostings
		lastDoc int64 = -1
		n       int
	)
	flush := func() {
		if len(cur.rows) > 0 {
			x.post[string(last)] = kwPostings{rows: cur.rows[:len(cur.rows):len(cur.rows)], tfs: cur.tfs[:len(cur.tfs):len(cur.tfs)]}
		}
		cur = kwPostings{}
	}
	for rows.Next() {
		var doc int64
		if err := rows.Scan(&term, &doc); err != nil {
			return nil, err
		}
		if n++; n%65536 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r, ok := rowOf[doc]
		if !ok {
			return nil, fmt.Errorf("keyword index: chunk %d has terms but no row", doc)
		}
		x.lens[r]++
		if string(term) != string(last) {
			flush()
			last, lastDoc = append(last[:0], term...), -1
			if _, dup := x.post[string(last)]; dup {
				return nil, errors.New("keyword index: terms out of order")
			}
		}
		switch {
		case doc == lastDoc:
			i := len(cur.tfs) - 1
			if cur.tfs[i] == math.MaxUint16 {
				return nil, fmt.Errorf("keyword index: a term occurs more than %d times in chunk %d", math.MaxUint16, doc)
			}
			cur.tfs[i]++
		case doc > lastDoc:
			cur.rows, cur.tfs = append(cur.rows, r), append(cur.tfs, 1)
			lastDoc = doc
		default:
			return nil, errors.New("keyword index: chunks out of order")
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	flush()
	x.bytes = int64(len(x.ids))*(8+8+4) + int64(len(x.dead))*8
	for t, p := range x.post {
		x.bytes += int64(len(t)) + 16 + 48 + int64(len(p.rows))*6
	}
	return x, nil
}

// kwTerm is one term of a query with its BM25 IDF.
type kwTerm struct {
	text string
	idf  float64
}

// indexKeyword answers a keyword query from the in-memory index x for the snapshot st of tx, or reports
// false when x cannot (its snapshot is newer than the transaction's). terms are in the order FTS5's MATCH
// would list them.
func (s *Store) indexKeyword(ctx context.Context, prep func(query string) (*sql.Stmt, error), x *kwIndex, st kwState,
	terms []kwTerm, docs docRestriction, k int) ([]rag.Candidate, bool, error) {
	if st.seq < x.seq || st.deleted < x.deleted || st.ftsRows <= 0 || st.ftsTokens <= 0 {
		return nil, false, nil
	}
	var allowed docSet
	if !docs.all {
		var seqs []int64
		if err := json.Unmarshal([]byte(docs.seqs), &seqs); err != nil {
			return nil, false, err
		}
		for _, d := range seqs {
			if d < 0 {
				continue
			}
			for int(d>>6) >= len(allowed) {
				allowed = append(allowed, 0)
			}
			allowed[d>>6] |= 1 << (d & 63)
		}
	}
	ok := func(r int32) bool { return !x.isDead(r) && (docs.all || allowed.has(x.docs[r])) }

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
	// FTS5's bm25(): avgdl from its totals, each term's share idf·tf(k1+1)/(tf + k1(1−b+b·dl/avgdl)),
	// summed in the query's term order.
	avgdl := float64(st.ftsTokens) / float64(st.ftsRows)
	acc := sc.acc
	for _, t := range terms {
		p := x.post[t.text]
		for i, r := range p.rows {
			tf := float64(p.tfs[i])
			num := tf * (bm25K1 + 1.0)
			denom := tf + bm25K1*(1-bm25B+bm25B*float64(x.lens[r])/avgdl)
			if acc[r] == 0 {
				sc.touched = append(sc.touched, r)
			}
			acc[r] += t.idf * (num / denom)
		}
	}
	out := topk.Rows(sc.touched, acc, x.ids, ok, k)
	// Chunks deleted since the snapshot are still in it: check the ones chosen and choose again without
	// those gone.
	for st.deleted != x.deleted && len(out) > 0 {
		gone, err := goneChunks(ctx, prep, out)
		if err != nil {
			return nil, false, err
		}
		if len(gone) == 0 {
			break
		}
		for _, id := range gone {
			if r := x.row(id); r >= 0 {
				x.markDead(r)
			}
		}
		out = topk.Rows(sc.touched, acc, x.ids, ok, k)
	}
	if st.seq > x.seq {
		all := make([]string, len(terms))
		for i, t := range terms {
			all[i] = t.text
		}
		tail, err := keywordQuery(ctx, prep, ftsQuery(all), "", x.seq, docs, k)
		if err != nil {
			return nil, false, err
		}
		out = append(out, tail...)
		topk.Sort(out)
		out = out[:min(k, len(out))]
	}
	for i := range out {
		out[i].Rank = i + 1
	}
	s.kw.answered.Add(1)
	return out, true, nil
}

// goneChunks returns the chunks of cs that no longer exist.
func goneChunks(ctx context.Context, prep func(query string) (*sql.Stmt, error), cs []rag.Candidate) ([]int64, error) {
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.ChunkID
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	st, err := prep(`SELECT json_group_array(value) FROM json_each(?) WHERE NOT EXISTS (SELECT 1 FROM chunks WHERE id = value)`)
	if err != nil {
		return nil, err
	}
	if err := st.QueryRowContext(ctx, string(list)).Scan(&list); err != nil {
		return nil, err
	}
	var gone []int64
	if err := json.Unmarshal(list, &gone); err != nil {
		return nil, err
	}
	return gone, nil
}
