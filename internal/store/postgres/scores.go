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
	err = s.read(ctx, p, func(db querier) error {
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
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("vector scores: %w", err))
	}
	return out, nil
}
