package sqlite

import (
	"context"
	"database/sql"
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/topk"
)

// Keyword search ranks by FTS5's bm25(), whose cost is dominated by scoring every row that matches (a few
// microseconds per row): an OR query with a term present in most chunks would score nearly the whole
// corpus. Two rules keep the scored set small without changing the ranking:
//
//  1. FTS5's BM25 gives a term in more than half of the rows the floor IDF 1e-6, i.e. no weight. When such
//     terms match more than floorRows rows together and the query has a rarer term, they are left out
//     (scores change by < 1e-5; chunks that match only them, which would rank last with scores near 1e-6,
//     are not candidates). A query made only of such terms is run as is.
//  2. Max-score pruning over the remaining terms, rarest first: a chunk's BM25 share of term t is at most
//     idf(t)·(k1+1). The chunks matching the rarest terms (the "essential" terms, up to a budget of
//     matching rows) are scored with every term; if the k-th score is at least the summed bound of the
//     other terms, no chunk matching only those can reach the top k, and the result is exact. Otherwise
//     the next round adds the fewest terms whose remaining bound that k-th score beats (it can only grow),
//     and when that is every term the query runs unrestricted.
//
// Document frequencies come from COUNT queries over the index (fast: no scoring) and are cached until the
// index changes (chunks AUTOINCREMENT sequence and store_meta chunks_deleted).
const (
	bm25K1 = 1.2
	// bm25B is BM25's length normalisation (FTS5's; used by the document-level index).
	bm25B = 0.75
	// floorRows is how many rows floor-IDF terms may match before they are left out.
	floorRows = 5000
	// essentialBudget bounds the matching rows of the first, pruned round (per K of 50).
	essentialBudget = 2000
	// boundMargin covers the difference between the corpus figures used here and FTS5's own.
	boundMargin = 1.05
)

type termStats struct {
	mu      sync.Mutex
	seq     int64 // chunks sequence when df was filled
	deleted int64 // chunks_deleted when df was filled
	df      map[string]int64

	// pruned and full count the queries answered by the pruned round and by the full one (for tests).
	pruned, full atomic.Int64
	// changed is called when the index is seen to have changed (by this process or another).
	changed func()
}

const termCountSQL = `SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?`

// stats returns the index's state (row count, sequence, FTS5's totals) and the document frequency of each term, in the snapshot of the read
// transaction that prep binds statements to.
func (ts *termStats) stats(ctx context.Context, prep func(query string) (*sql.Stmt, error), terms []string) (kwState, []int64, error) {
	st, err := readKWState(ctx, prep)
	if err != nil {
		return st, nil, err
	}
	seq, deleted := st.seq, st.deleted
	df := make([]int64, len(terms))
	var missing []int
	ts.mu.Lock()
	if ts.df != nil && (ts.seq != seq || ts.deleted != deleted) && ts.changed != nil {
		ts.changed()
	}
	if ts.df == nil || ts.seq != seq || ts.deleted != deleted || len(ts.df) > 100_000 {
		ts.df, ts.seq, ts.deleted = map[string]int64{}, seq, deleted
	}
	for i, t := range terms {
		if n, ok := ts.df[t]; ok {
			df[i] = n
		} else {
			missing = append(missing, i)
		}
	}
	ts.mu.Unlock()
	var count *sql.Stmt
	if len(missing) > 0 {
		if count, err = prep(termCountSQL); err != nil {
			return st, nil, err
		}
	}
	for _, i := range missing {
		if err := count.QueryRowContext(ctx, ftsQuery(terms[i:i+1])).Scan(&df[i]); err != nil {
			return st, nil, err
		}
	}
	if len(missing) > 0 {
		ts.mu.Lock()
		if ts.seq == seq && ts.deleted == deleted {
			for _, i := range missing {
				ts.df[terms[i]] = df[i]
			}
		}
		ts.mu.Unlock()
	}
	return st, df, nil
}

// idf is FTS5's BM25 IDF (with its floor).
func idf(n, df int64) float64 {
	v := math.Log((float64(n) - float64(df) + 0.5) / (float64(df) + 0.5))
	return max(v, 1e-6)
}

// KeywordCandidates returns up to q.K chunks of visible documents matching q.Filter that contain any of
// q.Terms, ranked by FTS5's BM25 (negated, so higher is better), with the filter and visibility inside the
// same statement.
func (s *Store) KeywordCandidates(ctx context.Context, p rag.Principal, q rag.KeywordQuery) ([]rag.Candidate, error) {
	var w where
	w.visible(p)
	if err := w.filter(q.Filter); err != nil {
		return nil, err
	}
	terms := distinctTerms(q.Terms)
	out := []rag.Candidate{}
	if len(terms) == 0 || q.K <= 0 {
		return out, nil
	}
	err := s.read(ctx, func(tx *sql.Tx) error {
		prep := func(query string) (*sql.Stmt, error) { return s.rstmts.tx(ctx, tx, query) }
		docs, err := resolveDocs(ctx, tx, &w)
		if err != nil || docs.none {
			return err
		}
		st, df, err := s.terms.stats(ctx, prep, terms)
		if err != nil {
			return err
		}
		s.maybeBuildKeywordIndex(st)
		n := st.rows
		type term struct {
			text string
			df   int64
			ub   float64
		}
		var weighted, floor []term
		var floorDF int64
		for i, t := range terms {
			switch {
			case df[i] == 0:
			case idf(n, df[i]) > 1e-6:
				weighted = append(weighted, term{t, df[i], idf(n, df[i]) * (bm25K1 + 1) * boundMargin})
			default:
				floor = append(floor, term{t, df[i], 1e-6 * (bm25K1 + 1) * boundMargin})
				floorDF += df[i]
			}
		}
		if len(weighted) == 0 || floorDF <= floorRows {
			weighted = append(weighted, floor...)
		}
		if len(weighted) == 0 {
			return nil
		}
		sort.Slice(weighted, func(i, j int) bool { return weighted[i].df < weighted[j].df })
		all := make([]string, len(weighted))
		for i, t := range weighted {
			all[i] = t.text
		}
		match := ftsQuery(all)
		if x := s.kw.cur.Load(); x != nil {
			// FTS5's bm25() takes N from its own totals (the same count as chunk_rows).
			kt := make([]kwTerm, len(weighted))
			for i, t := range weighted {
				kt[i] = kwTerm{t.text, idf(st.ftsRows, t.df)}
			}
			var ok bool
			if out, ok, err = s.indexKeyword(ctx, prep, x, st, kt, docs, q.K); err != nil || ok {
				return err
			}
		}
		// rest[m] bounds the score a chunk can get from weighted[m:] alone.
		rest := make([]float64, len(weighted)+1)
		for i := len(weighted) - 1; i >= 0; i-- {
			rest[i] = rest[i+1] + weighted[i].ub
		}
		budget := s.keywordBudget * int64(max(1, (q.K+49)/50))
		essential, rows := 1, weighted[0].df
		for essential < len(weighted) && rows+weighted[essential].df <= budget {
			rows += weighted[essential].df
			essential++
		}
		for essential < len(weighted) {
			out, err = keywordQuery(ctx, prep, match, ftsQuery(all[:essential]), 0, docs, q.K)
			if err != nil {
				return err
			}
			if len(out) < q.K {
				break
			}
			// Scores only grow with more essential terms, so the k-th score found is a lower bound of the
			// final one: the next round takes the fewest terms whose remaining bound it already beats.
			theta := out[q.K-1].Score
			if theta >= rest[essential] {
				s.terms.pruned.Add(1)
				return nil
			}
			for essential < len(weighted) && rest[essential] > theta {
				essential++
			}
		}
		s.terms.full.Add(1)
		out, err = keywordQuery(ctx, prep, match, "", 0, docs, q.K)
		return err
	})
	if err != nil {
		return nil, dbError(err, "keyword candidates")
	}
	return out, nil
}

// docRestriction is the documents a keyword query may return, resolved before it runs: checking a
// document seq against a set is far cheaper per matching row than evaluating visibility and filters
// (json_each over readers and tags) on each.
type docRestriction struct {
	all  bool   // no condition: every document
	none bool   // no document passes
	seqs string // JSON array of the allowed document seqs
	few  bool   // the allowed documents are a small share: restrict by their chunk IDs instead of a join
}

func resolveDocs(ctx context.Context, tx *sql.Tx, w *where) (docRestriction, error) {
	if len(w.conds) == 0 {
		return docRestriction{all: true}, nil
	}
	var n, total int
	var seqs sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT count(*), json_group_array(d.seq), (SELECT count(*) FROM documents)
		FROM documents d WHERE `+w.sql(), w.args...).Scan(&n, &seqs, &total); err != nil {
		return docRestriction{}, err
	}
	return docRestriction{none: n == 0, seqs: seqs.String, few: n*5 <= total}, nil
}

// keywordQuery scores the chunks matching match (restricted to those matching restrict, when given, and
// to chunk IDs above after, when it is not 0) of the documents docs allows, best first. Without a
// restriction it uses FTS5's own ORDER BY rank, about twice as fast as sorting on bm25(). bm25() is named
// once (an alias) so that it is computed once per row. The SQL text depends only on the form, so prep can
// keep it prepared.
func keywordQuery(ctx context.Context, prep func(query string) (*sql.Stmt, error), match, restrict string, after int64, docs docRestriction, k int) ([]rag.Candidate, error) {
	args := []any{match}
	cond := ""
	if after > 0 {
		// A rowid range FTS5 takes in its xBestIndex: it seeks each term's postings to it.
		cond = ` AND chunks_fts.rowid > ?`
		args = append(args, after)
	}
	if restrict != "" {
		// The unary + keeps the restriction out of FTS5's xBestIndex: as a rowid constraint FTS5 would
		// restart its query once per listed rowid (milliseconds each); as a plain filter it is a set lookup
		// per matching row, applied before bm25() is computed.
		cond += ` AND +chunks_fts.rowid IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?)`
		args = append(args, restrict)
	}
	var q string
	switch {
	case docs.all && restrict == "":
		q = `SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ?` + cond + ` ORDER BY rank LIMIT ?`
	case docs.all || docs.few:
		if docs.few {
			cond += ` AND +chunks_fts.rowid IN (SELECT id FROM chunks WHERE doc_seq IN (SELECT value FROM json_each(?)))`
			args = append(args, docs.seqs)
		}
		q = `SELECT rowid, bm25(chunks_fts) AS r FROM chunks_fts WHERE chunks_fts MATCH ?` + cond + ` ORDER BY r, rowid LIMIT ?`
	default:
		q = `SELECT chunks_fts.rowid, bm25(chunks_fts) AS r FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid
			WHERE chunks_fts MATCH ?` + cond + ` AND c.doc_seq IN (SELECT value FROM json_each(?))
			ORDER BY r, chunks_fts.rowid LIMIT ?`
		args = append(args, docs.seqs)
	}
	st, err := prep(q)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, append(args, k)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []rag.Candidate{}
	for rows.Next() {
		var c rag.Candidate
		if err := rows.Scan(&c.ChunkID, &c.Score); err != nil {
			return nil, err
		}
		c.Score = -c.Score
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// FTS5's rank order leaves ties in its own order; make it the same as the other forms'.
	topk.Sort(out)
	for i := range out {
		out[i].Rank = i + 1
	}
	return out, nil
}

func distinctTerms(terms []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range terms {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// ftsQuery ORs the terms as FTS5 strings, so that no term is read as query syntax.
func ftsQuery(terms []string) string {
	var b []byte
	for _, t := range terms {
		if len(b) > 0 {
			b = append(b, " OR "...)
		}
		b = append(b, '"')
		for i := 0; i < len(t); i++ {
			if t[i] == '"' {
				b = append(b, '"')
			}
			b = append(b, t[i])
		}
		b = append(b, '"')
	}
	return string(b)
}
