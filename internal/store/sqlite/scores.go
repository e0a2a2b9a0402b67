package sqlite

import (
	"context"
	"database/sql"
	"sort"

	"github.com/viterin/vek/vek32"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/vindex"
)

// VectorScores returns the cosine similarity to vector of those chunks that have a vector in space. It
// scores the rows of the in-memory vectors (the fresh snapshot a vector search uses), found through the
// cache's chunk → row map; only when a newer snapshot was published meanwhile does it read the few vectors
// from the database instead. Reading them from the database was a quarter of the server's CPU time under
// the load test (the hash embedder's pseudo-relevance feedback scores ~200 candidates per search). p is not
// checked here: the IDs come from candidate queries that applied its predicate, and a score is no content.
func (s *Store) VectorScores(ctx context.Context, _ rag.Principal, space rag.Space, vector []float32, ids []int64) (map[int64]float64, error) {
	out := make(map[int64]float64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	if len(vector) != space.Dim {
		return nil, rag.Errorf(rag.CodeInvalid, "query vector has %d dimensions, space %s has %d", len(vector), space.ID(), space.Dim)
	}
	v, err := s.vecs.space(ctx, space)
	if err != nil {
		return nil, dbError(err, "load vectors of %s", space.ID())
	}
	if s.vecs.get(space).scores(v, vector, ids, out) {
		return out, nil
	}
	return s.storedVectorScores(ctx, space, vector, ids, out)
}

// storedVectorScores is VectorScores over the vectors read from the database.
func (s *Store) storedVectorScores(ctx context.Context, space rag.Space, vector []float32, ids []int64, out map[int64]float64) (map[int64]float64, error) {
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

// scores scores ids against the rows of snapshot v when v is still the latest snapshot (whose rows pos
// maps), and reports whether it could (the vectors of a space in its vector file are read from there).
func (sv *spaceVectors) scores(v *vecSnapshot, vector []float32, ids []int64, out map[int64]float64) bool {
	sv.refresh.Lock()
	defer sv.refresh.Unlock()
	if sv.snap.Load() != v {
		return false
	}
	var rows []int
	for _, id := range ids {
		if i, ok := sv.pos[id]; ok && i < len(v.ids) && v.ids[i] == id && v.docs[i] >= 0 {
			rows = append(rows, i)
		}
	}
	sort.Ints(rows)
	err := vindex.ForRows(v.rows(), rows, v.dim, func(x int, row []float32) {
		out[v.ids[rows[x]]] = float64(vek32.Dot(row, vector))
	})
	return err == nil
}
