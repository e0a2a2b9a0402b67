package sqlite

import (
	"context"
	"database/sql"

	"github.com/viterin/vek/vek32"

	"github.com/ragd/ragd/internal/rag"
)

// VectorScores returns the cosine similarity to vector of those chunks that have a vector in space. It
// reads the few vectors from the database rather than the in-memory cache: a candidate pool is small.
func (s *Store) VectorScores(ctx context.Context, space rag.Space, vector []float32, ids []int64) (map[int64]float64, error) {
	out := make(map[int64]float64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	if len(vector) != space.Dim {
		return nil, rag.Errorf(rag.CodeInvalid, "query vector has %d dimensions, space %s has %d", len(vector), space.ID(), space.Dim)
	}
	err := s.read(ctx, func(tx *sql.Tx) error {
		spaceID, ok, err := spaceIDOf(ctx, tx, space)
		if err != nil || !ok {
			return err
		}
		buf := make([]float32, 0, space.Dim)
		for start := 0; start < len(ids); start += 500 {
			batch := ids[start:min(start+500, len(ids))]
			args := make([]any, 0, len(batch)+1)
			args = append(args, spaceID)
			for _, id := range batch {
				args = append(args, id)
			}
			rows, err := tx.QueryContext(ctx, `SELECT chunk_id, vec FROM chunk_vectors WHERE space_id = ? AND chunk_id IN (`+
				placeholders(len(batch))+`)`, args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id int64
				var raw sql.RawBytes
				if err := rows.Scan(&id, &raw); err != nil {
					rows.Close()
					return err
				}
				if len(raw) == 4*space.Dim {
					buf = decodeVector(buf[:0], raw)
					out[id] = float64(vek32.Dot(buf, vector))
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, dbError(err, "vector scores")
	}
	return out, nil
}
