package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
)

// VectorScores returns the cosine similarity to vector of those chunks that have a vector in space, by
// primary-key lookups in the space's table.
func (s *Store) VectorScores(ctx context.Context, p rag.Principal, rs rag.Space, vector []float32, ids []int64) (map[int64]float64, error) {
	out := make(map[int64]float64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	if err := checkSpace(rs); err != nil {
		return nil, err
	}
	if len(vector) != rs.Dim {
		return nil, rag.Errorf(rag.CodeInvalid, "query vector has %d dimensions, space %s has %d", len(vector), rs.ID(), rs.Dim)
	}
	sp, err := s.space(ctx, rs, false)
	if err != nil || sp == nil {
		return out, err
	}
	a := args{vectorParam(vector), ids}
	conds, err := docConditions(&a, p, rag.Filter{})
	if err != nil {
		return nil, err
	}
	from := sp.table + " v"
	if len(conds) > 0 {
		from += " JOIN {S}.chunks c ON c.id = v.chunk_id JOIN {S}.documents d ON d.id = c.document_id"
	}
	sql := fmt.Sprintf(`SELECT v.chunk_id, 1 - (v.embedding OPERATOR({V}.<=>) $1::{V}.vector) FROM %s WHERE v.chunk_id = ANY($2::bigint[]) AND %s`,
		from, where(conds))
	err = s.read(ctx, p, func(db querier) error { return s.scoreRows(ctx, db, sql, a, out) })
	if err != nil {
		return nil, interpretError(fmt.Errorf("vector scores: %w", err))
	}
	return out, nil
}

// scoreRows runs sql, whose rows are (chunk ID, score), and stores them in out.
func (s *Store) scoreRows(ctx context.Context, db querier, sql string, a args, out map[int64]float64) error {
	rows, err := db.Query(ctx, s.q(sql), a...)
	if err != nil {
		return err
	}
	var id int64
	var score float64
	_, err = pgx.ForEachRow(rows, []any{&id, &score}, func() error {
		out[id] = score
		return nil
	})
	return err
}

// KeywordScores returns the weighted BM25 score of the chunks with those IDs (rag.Store): each term's
// share by the formula and corpus statistics of KeywordCandidates, times its weight, summed over the
// postings of the terms found by primary-key lookups (term, chunk).
func (s *Store) KeywordScores(ctx context.Context, p rag.Principal, terms []string, weights []float64, ids []int64) (map[int64]float64, error) {
	terms, weights, err := rag.WeightedTerms(terms, weights)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]float64, len(ids))
	if len(ids) == 0 || len(terms) == 0 {
		return out, nil
	}
	err = s.read(ctx, p, func(db querier) error {
		ts, c2, err := s.keywordTerms(ctx, db, terms)
		if err != nil || len(ts) == 0 {
			return err
		}
		byTerm := make(map[string]float64, len(terms))
		for i, t := range terms {
			byTerm[t] = weights[i]
		}
		names, ws := make([]string, len(ts)), make([]float64, len(ts))
		for i, t := range ts {
			names[i], ws[i] = t.term, byTerm[t.term]*t.weight
		}
		a := args{names, ws, ids}
		conds, err := docConditions(&a, p, rag.Filter{})
		if err != nil {
			return err
		}
		join := ""
		if len(conds) > 0 {
			join = "JOIN {S}.chunks c ON c.id = p.chunk_id JOIN {S}.documents d ON d.id = c.document_id"
		}
		sql := fmt.Sprintf(`SELECT p.chunk_id, sum(t.w * p.tf / (p.tf + %g::float8 + %g::float8 * p.dl))
			FROM unnest($1::text[], $2::float8[]) AS t(term, w)
			JOIN {S}.postings p ON p.term = t.term AND p.chunk_id = ANY($3::bigint[]) %s
			WHERE %s GROUP BY p.chunk_id`, bm25K1*(1-bm25B), c2, join, where(conds))
		return s.scoreRows(ctx, db, sql, a, out)
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("keyword scores: %w", err))
	}
	return out, nil
}
