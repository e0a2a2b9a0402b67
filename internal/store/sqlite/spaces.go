package sqlite

import (
	"context"
	"database/sql"
	"slices"

	"github.com/ragd/ragd/internal/rag"
)

// ChunksWithoutVector returns up to limit current chunks with IDs > afterID, ascending, that have no vector
// in space: the work list of a background re-embed.
func (s *Store) ChunksWithoutVector(ctx context.Context, space rag.Space, afterID int64, limit int) ([]*rag.Chunk, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+chunkCols+` FROM chunks c JOIN documents d ON d.seq = c.doc_seq
		WHERE c.id > ? AND NOT EXISTS (SELECT 1 FROM chunk_vectors v
			WHERE v.chunk_id = c.id AND v.space_id = (SELECT id FROM spaces WHERE key = ?))
		ORDER BY c.id LIMIT ?`, afterID, space.ID(), limit)
	if err != nil {
		return nil, dbError(err, "chunks without vector")
	}
	defer rows.Close()
	var out []*rag.Chunk
	for rows.Next() {
		c, err := scanChunk(s.opts.Keys, rows)
		if err != nil {
			return nil, dbError(err, "chunks without vector")
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(err, "chunks without vector")
	}
	return out, nil
}

// PutVectors stores vectors in space for existing chunks; vectors of chunks deleted meanwhile are ignored.
// A chunk's previous vector in the space is replaced. CodeInvalid on a dimension mismatch (nothing stored).
func (s *Store) PutVectors(ctx context.Context, space rag.Space, vectors map[int64][]float32) error {
	if err := checkSpace(space); err != nil {
		return err
	}
	ids := make([]int64, 0, len(vectors))
	for id, v := range vectors {
		if len(v) != space.Dim {
			return rag.Errorf(rag.CodeInvalid, "vector of chunk %d has %d dimensions, space %s has %d", id, len(v), space.ID(), space.Dim)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	err := s.write(ctx, func(tx *sql.Tx) error {
		spaceID, err := ensureSpace(ctx, tx, space)
		if err != nil {
			return err
		}
		del, err := tx.PrepareContext(ctx, `DELETE FROM chunk_vectors WHERE chunk_id = ? AND space_id = ?`)
		if err != nil {
			return err
		}
		defer del.Close()
		ins, err := tx.PrepareContext(ctx, `INSERT INTO chunk_vectors (space_id, chunk_id, vec) SELECT ?, id, ? FROM chunks WHERE id = ?`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for _, id := range ids {
			if _, err := del.ExecContext(ctx, id, spaceID); err != nil {
				return err
			}
			if _, err := ins.ExecContext(ctx, spaceID, encodeVector(vectors[id]), id); err != nil {
				return err
			}
		}
		return nil
	})
	return dbError(err, "put vectors")
}

// SpaceStats counts current chunks and, per space, the chunks with a vector in it.
func (s *Store) SpaceStats(ctx context.Context) (*rag.SpaceStats, error) {
	st := &rag.SpaceStats{Spaces: map[string]int{}}
	err := s.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&st.Chunks); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT s.key, count(*) FROM chunk_vectors v JOIN spaces s ON s.id = v.space_id GROUP BY s.key`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var key string
			var n int
			if err := rows.Scan(&key, &n); err != nil {
				return err
			}
			st.Spaces[key] = n
		}
		return rows.Err()
	})
	if err != nil {
		return nil, dbError(err, "space stats")
	}
	return st, nil
}

// DropSpace removes every vector of space (each leaves a tombstone, so vector caches of this and other
// processes drop them) and its cached embeddings, in one transaction. It returns how many vectors it removed.
func (s *Store) DropSpace(ctx context.Context, space rag.Space) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		spaceID, ok, err := spaceIDOf(ctx, tx, space)
		if err != nil || !ok {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM chunk_vectors WHERE space_id = ?`, spaceID)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM embedding_cache WHERE space_id = ?`, spaceID)
		return err
	})
	if err != nil {
		return 0, dbError(err, "drop space %s", space.ID())
	}
	return int(n), nil
}

// CachedEmbeddings returns the cached vectors of space for the given text hashes (missing ones absent).
func (s *Store) CachedEmbeddings(ctx context.Context, space rag.Space, textHashes []string) (map[string][]float32, error) {
	out := map[string][]float32{}
	if len(textHashes) == 0 {
		return out, nil
	}
	err := s.read(ctx, func(tx *sql.Tx) error {
		spaceID, ok, err := spaceIDOf(ctx, tx, space)
		if err != nil || !ok {
			return err
		}
		for start := 0; start < len(textHashes); start += 500 {
			batch := textHashes[start:min(start+500, len(textHashes))]
			rows, err := tx.QueryContext(ctx, `SELECT text_hash, vec FROM embedding_cache WHERE space_id = ? AND text_hash IN (`+
				placeholders(len(batch))+`)`, append([]any{spaceID}, stringArgs(batch)...)...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var h string
				var raw sql.RawBytes
				if err := rows.Scan(&h, &raw); err != nil {
					rows.Close()
					return err
				}
				if len(raw) == 4*space.Dim {
					out[h] = decodeVector(make([]float32, 0, space.Dim), raw)
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
		return nil, dbError(err, "cached embeddings")
	}
	return out, nil
}

// CacheEmbeddings stores vectors of space by text hash (idempotent). CodeInvalid on a dimension mismatch.
func (s *Store) CacheEmbeddings(ctx context.Context, space rag.Space, vectors map[string][]float32) error {
	if err := checkSpace(space); err != nil {
		return err
	}
	for h, v := range vectors {
		if len(v) != space.Dim {
			return rag.Errorf(rag.CodeInvalid, "cached vector %s has %d dimensions, space %s has %d", h, len(v), space.ID(), space.Dim)
		}
	}
	if len(vectors) == 0 {
		return nil
	}
	now := s.now().UnixMicro()
	err := s.write(ctx, func(tx *sql.Tx) error {
		spaceID, err := ensureSpace(ctx, tx, space)
		if err != nil {
			return err
		}
		ins, err := tx.PrepareContext(ctx, `INSERT INTO embedding_cache (space_id, text_hash, vec, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (space_id, text_hash) DO NOTHING`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for h, v := range vectors {
			if _, err := ins.ExecContext(ctx, spaceID, h, encodeVector(v), now); err != nil {
				return err
			}
		}
		return nil
	})
	return dbError(err, "cache embeddings")
}
