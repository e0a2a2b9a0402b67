package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"sync/atomic"
	"time"
)

// Every search asks the document-level keyword index which documents its words name
// (DocumentCandidates), and reading the postings of its terms from SQLite was ~6 % of the server's CPU
// under the HTTP load test (docs/performance.md). The index is small — the naming fields of each document,
// ~50 terms a document — so the store keeps a copy of it in memory, read in one transaction together with
// doc_index_version (migration 0029: triggers on doc_postings and doc_lengths move it with every change,
// in any process). A query reads the counter in its own transaction and takes the postings from the copy
// only when the copy is of that very state; otherwise it reads them from the database as before, and a
// new copy is made in the background (one at a time, at most one a second while the index keeps
// changing). Both ways give the postings in the same order (term, then document), so the scores are the
// same to the last bit. A copy of more than docMemMaxPostings postings is not kept: the store then
// always reads the database.

// docMemMaxPostings bounds the copy (~40 bytes a posting: 80 MiB).
var docMemMaxPostings = 2_000_000

// docMemRebuildGap is the least time between two copies.
const docMemRebuildGap = time.Second

const docIndexVersionSQL = `SELECT value FROM store_meta WHERE key = 'doc_index_version'`

// docMem is a copy of the document-level index at one doc_index_version.
type docMem struct {
	version  int64
	n, avgdl float64
	postings map[string][]docPosting // by term, in document order
}

// docMemState is the store's copy and the state of its making.
type docMemState struct {
	cur       atomic.Pointer[docMem]
	building  atomic.Bool
	lastBuild atomic.Int64 // when the last copy was finished (UnixNano; 0: never)
	tooBig    atomic.Bool  // the index has more than docMemMaxPostings postings: no copy is kept
	built     atomic.Int64 // copies made (tests)
	answered  atomic.Int64 // queries answered from a copy (tests)
}

// docPostings returns the postings of terms (also given as the JSON array termList) in term, then
// document order, with the index's document count and mean length: from the in-memory copy when it is of
// the state tx sees, else from the database.
func (s *Store) docPostings(ctx context.Context, prep func(string) (*sql.Stmt, error), terms []string, termList string) ([]docPosting, float64, float64, error) {
	vst, err := prep(docIndexVersionSQL)
	if err != nil {
		return nil, 0, 0, err
	}
	var version int64
	if err := vst.QueryRowContext(ctx).Scan(&version); err != nil {
		return nil, 0, 0, err
	}
	if m := s.docm.cur.Load(); m != nil && m.version == version {
		s.docm.answered.Add(1)
		sorted := slices.Sorted(slices.Values(terms))
		var out []docPosting
		for _, t := range sorted {
			out = append(out, m.postings[t]...)
		}
		return out, m.n, m.avgdl, nil
	}
	s.startDocMem()
	var n, avgdl float64
	totals, err := prep(docTotalsSQL)
	if err != nil {
		return nil, 0, 0, err
	}
	if err := totals.QueryRowContext(ctx).Scan(&n, &avgdl); err != nil {
		return nil, 0, 0, err
	}
	st, err := prep(docPostingsSQL)
	if err != nil {
		return nil, 0, 0, err
	}
	rows, err := st.QueryContext(ctx, termList)
	if err != nil {
		return nil, 0, 0, err
	}
	defer rows.Close()
	var out []docPosting
	for rows.Next() {
		var dp docPosting
		if err := rows.Scan(&dp.term, &dp.doc, &dp.tf, &dp.dl); err != nil {
			return nil, 0, 0, err
		}
		out = append(out, dp)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, 0, err
	}
	slices.SortFunc(out, func(a, b docPosting) int {
		return cmp.Or(cmp.Compare(a.term, b.term), cmp.Compare(a.doc, b.doc))
	})
	return out, n, avgdl, nil
}

// startDocMem starts making a copy of the document-level index in the background, unless one is being
// made, the last one was finished less than docMemRebuildGap ago, or the index is too big.
func (s *Store) startDocMem() {
	if s.docm.tooBig.Load() {
		return
	}
	if last := s.docm.lastBuild.Load(); last != 0 && time.Since(time.Unix(0, last)) < docMemRebuildGap {
		return
	}
	if !s.docm.building.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.docm.building.Store(false)
		m, err := s.readDocMem(s.vecs.ctx)
		s.docm.lastBuild.Store(time.Now().UnixNano())
		if err != nil || m == nil {
			return // the store closed, or the index is too big: the queries read the database
		}
		s.docm.built.Add(1)
		if cur := s.docm.cur.Load(); cur == nil || m.version > cur.version {
			s.docm.cur.Store(m)
		}
	}()
}

// readDocMem reads the document-level index, its counter and totals in one read transaction; nil when it
// holds more than docMemMaxPostings postings.
func (s *Store) readDocMem(ctx context.Context) (*docMem, error) {
	var m *docMem
	err := s.read(ctx, func(tx *sql.Tx) error {
		next := &docMem{postings: map[string][]docPosting{}}
		if err := tx.QueryRowContext(ctx, docIndexVersionSQL).Scan(&next.version); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, docTotalsSQL).Scan(&next.n, &next.avgdl); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT p.term, p.doc_seq, p.tf, l.dl FROM doc_postings p
			JOIN doc_lengths l ON l.doc_seq = p.doc_seq ORDER BY p.term, p.doc_seq`)
		if err != nil {
			return err
		}
		defer rows.Close()
		count := 0
		for rows.Next() {
			var dp docPosting
			if err := rows.Scan(&dp.term, &dp.doc, &dp.tf, &dp.dl); err != nil {
				return err
			}
			if count++; count > docMemMaxPostings {
				s.docm.tooBig.Store(true)
				return nil
			}
			if l := next.postings[dp.term]; len(l) > 0 {
				dp.term = l[0].term // one string per term
			}
			next.postings[dp.term] = append(next.postings[dp.term], dp)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		m = next
		return nil
	})
	return m, err
}
