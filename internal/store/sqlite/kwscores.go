package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"sort"

	"github.com/ragd/ragd/internal/rag"
)

// KeywordScores returns the weighted BM25 score of the chunks with those IDs (rag.Store): each term's share
// is FTS5's bm25() of that term alone — the same IDF, length normalisation and corpus figures as
// KeywordCandidates — times its weight. With the in-memory keyword index the shares are computed from its
// postings (a binary search per term and chunk); chunks past its snapshot, and every chunk without it, are
// scored by FTS5 one term at a time, restricted to the IDs (a filter on the matching rows, so the cost
// grows with the term's rows: fine for the small stores that have no in-memory index, slow past it).
// p is not checked: the IDs come from candidate queries that applied its predicate, and a score is no
// content.
func (s *Store) KeywordScores(ctx context.Context, _ rag.Principal, terms []string, weights []float64, ids []int64) (map[int64]float64, error) {
	order, weights, err := rag.WeightedTerms(terms, weights)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]float64, len(ids))
	if len(ids) == 0 || len(order) == 0 {
		return out, nil
	}
	err = s.read(ctx, func(tx *sql.Tx) error {
		prep := func(query string) (*sql.Stmt, error) { return s.rstmts.tx(ctx, tx, query) }
		st, df, err := s.terms.stats(ctx, prep, order)
		if err != nil {
			return err
		}
		s.maybeBuildKeywordIndex(st)
		rest := ids
		if x := s.kw.cur.Load(); x != nil && st.seq >= x.seq && st.deleted >= x.deleted && st.ftsRows > 0 && st.ftsTokens > 0 {
			rest = s.indexKeywordScores(x, st, order, df, weights, ids, out)
		}
		if len(rest) == 0 {
			return nil
		}
		return ftsKeywordScores(ctx, prep, order, df, weights, rest, out)
	})
	if err != nil {
		return nil, dbError(err, "keyword scores")
	}
	return out, nil
}

// indexKeywordScores adds into out the scores of the chunks of ids that the in-memory index x holds, for the
// snapshot st, and returns the IDs it does not hold (committed after its snapshot).
func (s *Store) indexKeywordScores(x *kwIndex, st kwState, terms []string, df []int64, ws []float64, ids []int64, out map[int64]float64) []int64 {
	rows := make([]int32, 0, len(ids))
	var rest []int64
	for _, id := range ids {
		switch r := x.row(id); {
		case r >= 0:
			rows = append(rows, r)
		case id > x.seq:
			rest = append(rest, id)
		}
	}
	avgdl := float64(st.ftsTokens) / float64(st.ftsRows)
	for i, t := range terms {
		if df[i] == 0 {
			continue
		}
		p := x.post[t]
		if len(p.rows) == 0 {
			continue
		}
		w := ws[i] * idf(st.ftsRows, df[i])
		for _, r := range rows {
			j := sort.Search(len(p.rows), func(j int) bool { return p.rows[j] >= r })
			if j == len(p.rows) || p.rows[j] != r {
				continue
			}
			tf := float64(p.tfs[j])
			out[x.ids[r]] += w * (tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(x.lens[r])/avgdl)))
		}
	}
	return rest
}

// ftsKeywordScores adds into out the scores of the chunks of ids by FTS5's bm25(), one term at a time.
func ftsKeywordScores(ctx context.Context, prep func(query string) (*sql.Stmt, error), terms []string, df []int64, ws []float64, ids []int64, out map[int64]float64) error {
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	// The unary + keeps the ID list out of FTS5's xBestIndex (see keywordQuery).
	q, err := prep(`SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?
		AND +chunks_fts.rowid IN (SELECT value FROM json_each(?))`)
	if err != nil {
		return err
	}
	for i, t := range terms {
		if df[i] == 0 {
			continue
		}
		rows, err := q.QueryContext(ctx, ftsQuery([]string{t}), string(list))
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			var score float64
			if err := rows.Scan(&id, &score); err != nil {
				rows.Close()
				return err
			}
			out[id] += ws[i] * -score
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}
