package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/ragd/ragd/internal/rag"
)

// Dimension limits of pgvector: HNSW indexes vector up to 2000 dimensions and halfvec up to 4000; a vector
// column holds up to 16000. Spaces above 4000 dimensions are searched exactly.
const (
	maxVectorIndexDim  = 2000
	maxHalfvecIndexDim = 4000
	maxVectorDim       = 16000
)

// space is an embedding space's table and how to compute distances in it.
type space struct {
	id    int
	dim   int
	table string // schema-qualified, quoted, placeholders unexpanded ({S})
	// expr is the indexed expression of alias v, and param the matching cast of a query vector (a template
	// with %s for the placeholder).
	expr, param string
	indexed     bool
}

// distance returns the cosine distance between the space's vectors (alias v) and the query placeholder ph.
func (sp *space) distance(ph string) string {
	return fmt.Sprintf("(%s OPERATOR({V}.<=>) %s)", sp.expr, fmt.Sprintf(sp.param, ph))
}

func newSpace(id, dim int) *space {
	sp := &space{id: id, dim: dim, table: fmt.Sprintf("{S}.vectors_%d", id), expr: "v.embedding", param: "%s::{V}.vector", indexed: true}
	switch {
	case dim > maxHalfvecIndexDim:
		sp.indexed = false
	case dim > maxVectorIndexDim:
		sp.expr = fmt.Sprintf("(v.embedding::{V}.halfvec(%d))", dim)
		sp.param = fmt.Sprintf("%%s::{V}.vector::{V}.halfvec(%d)", dim)
	}
	return sp
}

func checkSpace(sp rag.Space) error {
	if sp.Provider == "" || sp.Dim < 1 || sp.Dim > maxVectorDim {
		return rag.Errorf(rag.CodeInvalid, "invalid embedding space %q (dimension 1..%d)", sp.ID(), maxVectorDim)
	}
	return nil
}

// space returns the table of an embedding space, creating it (and its HNSW index) when create is set;
// nil without error when it does not exist and create is not set.
func (s *Store) space(ctx context.Context, rs rag.Space, create bool) (*space, error) {
	if err := checkSpace(rs); err != nil {
		return nil, err
	}
	s.mu.Lock()
	sp := s.spaces[rs.ID()]
	s.mu.Unlock()
	if sp != nil {
		return sp, nil
	}
	var id int
	err := s.pool.QueryRow(ctx, s.q(`SELECT id FROM {S}.spaces WHERE provider = $1 AND model = $2 AND dim = $3`),
		rs.Provider, rs.Model, rs.Dim).Scan(&id)
	switch {
	case errors.Is(err, pgx.ErrNoRows) && !create:
		return nil, nil
	case errors.Is(err, pgx.ErrNoRows):
		if id, err = s.createSpace(ctx, rs); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, interpretError(fmt.Errorf("look up space: %w", err))
	}
	sp = newSpace(id, rs.Dim)
	s.mu.Lock()
	s.spaces[rs.ID()] = sp
	s.mu.Unlock()
	return sp, nil
}

// createSpace registers a space and creates its table and index, under a lock so that concurrent first
// commits of a new space do not race on the DDL.
func (s *Store) createSpace(ctx context.Context, rs rag.Space) (int, error) {
	var id int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "ragd.spaces."+s.opts.Schema); err != nil {
			return fmt.Errorf("lock spaces: %w", err)
		}
		err := tx.QueryRow(ctx, s.q(`INSERT INTO {S}.spaces (provider, model, dim) VALUES ($1, $2, $3)
			ON CONFLICT (provider, model, dim) DO UPDATE SET dim = EXCLUDED.dim RETURNING id`),
			rs.Provider, rs.Model, rs.Dim).Scan(&id)
		if err != nil {
			return fmt.Errorf("create space: %w", err)
		}
		sp := newSpace(id, rs.Dim)
		ddl := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			chunk_id  bigint PRIMARY KEY REFERENCES {S}.chunks (id) ON DELETE CASCADE,
			embedding {V}.vector(%d) NOT NULL)`, sp.table, rs.Dim)
		if _, err := tx.Exec(ctx, s.q(ddl)); err != nil {
			return fmt.Errorf("create space table: %w", err)
		}
		if err := s.secureSpaceTable(ctx, tx, sp); err != nil {
			return err
		}
		if sp.indexed {
			column, ops := "embedding", "{V}.vector_cosine_ops"
			if rs.Dim > maxVectorIndexDim {
				column, ops = fmt.Sprintf("(embedding::{V}.halfvec(%d))", rs.Dim), "{V}.halfvec_cosine_ops"
			}
			idx := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS vectors_%d_hnsw ON %s USING hnsw (%s %s) WITH (m = %d, ef_construction = %d)`,
				id, sp.table, column, ops, s.opts.HNSWM, s.opts.HNSWEfConstruction)
			if _, err := tx.Exec(ctx, s.q(idx)); err != nil {
				return fmt.Errorf("create space index: %w", err)
			}
		}
		return nil
	})
	return id, err
}

// PutVectors stores vectors in space for existing chunks; vectors of chunks deleted meanwhile are dropped.
// CodeInvalid on a dimension mismatch.
func (s *Store) PutVectors(ctx context.Context, rs rag.Space, vectors map[int64][]float32) error {
	if err := checkSpace(rs); err != nil {
		return err
	}
	ids := make([]int64, 0, len(vectors))
	for id, v := range vectors {
		if len(v) != rs.Dim {
			return rag.Errorf(rag.CodeInvalid, "vector of chunk %d has %d dimensions, space %s has %d", id, len(v), rs.ID(), rs.Dim)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	vecs := make([]pgvector.Vector, len(ids))
	for i, id := range ids {
		vecs[i] = pgvector.NewVector(vectors[id])
	}
	sp, err := s.space(ctx, rs, true)
	if err != nil {
		return err
	}
	// The join drops chunks that are gone; one that goes between the join and the insert fails the foreign
	// key, and the retry drops it too.
	sql := s.q(fmt.Sprintf(`INSERT INTO %s (chunk_id, embedding)
		SELECT u.id, u.v FROM unnest($1::bigint[], $2::{V}.vector[]) AS u(id, v) JOIN {S}.chunks c ON c.id = u.id
		ON CONFLICT (chunk_id) DO UPDATE SET embedding = EXCLUDED.embedding`, sp.table))
	for attempt := 0; ; attempt++ {
		_, err = s.pool.Exec(ctx, sql, ids, vecs)
		if err == nil || attempt == 2 || !errors.Is(interpretError(err), rag.ErrNotFound) {
			break
		}
	}
	if err != nil {
		return interpretError(fmt.Errorf("put vectors: %w", err))
	}
	return nil
}

// ChunksWithoutVector returns up to limit current chunks with IDs above afterID, ascending, that have no
// vector in space.
func (s *Store) ChunksWithoutVector(ctx context.Context, rs rag.Space, afterID int64, limit int) ([]*rag.Chunk, error) {
	if limit <= 0 {
		return nil, nil
	}
	sp, err := s.space(ctx, rs, false)
	if err != nil {
		return nil, err
	}
	cond := ""
	if sp != nil {
		cond = fmt.Sprintf(" AND NOT EXISTS (SELECT 1 FROM %s v WHERE v.chunk_id = c.id)", sp.table)
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+chunkColumns+` FROM {S}.chunks c WHERE c.id > $1`+cond+
		` ORDER BY c.id LIMIT $2`), afterID, limit)
	if err != nil {
		return nil, interpretError(fmt.Errorf("chunks without vector: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.Chunk, error) { return scanChunk(s.opts.Keys, r) })
	if err != nil {
		return nil, interpretError(fmt.Errorf("chunks without vector: %w", err))
	}
	return out, nil
}

// SpaceStats counts the current chunks and, per space, those with a vector in it (spaces without any
// vector are left out).
func (s *Store) SpaceStats(ctx context.Context) (*rag.SpaceStats, error) {
	st := &rag.SpaceStats{Spaces: map[string]int{}}
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM {S}.chunks`)).Scan(&st.Chunks); err != nil {
		return nil, interpretError(fmt.Errorf("space stats: %w", err))
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT id, provider, model, dim FROM {S}.spaces ORDER BY id`))
	if err != nil {
		return nil, interpretError(fmt.Errorf("space stats: %w", err))
	}
	type row struct {
		id int
		sp rag.Space
	}
	spaces, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		err := r.Scan(&x.id, &x.sp.Provider, &x.sp.Model, &x.sp.Dim)
		return x, err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("space stats: %w", err))
	}
	for _, x := range spaces {
		var n int
		if err := s.pool.QueryRow(ctx, s.q(fmt.Sprintf(`SELECT count(*) FROM %s`, newSpace(x.id, x.sp.Dim).table))).Scan(&n); err != nil {
			return nil, interpretError(fmt.Errorf("space stats: %w", err))
		}
		if n > 0 {
			st.Spaces[x.sp.ID()] = n
		}
	}
	return st, nil
}

// DropSpace empties the space's table (TRUNCATE, which also resets its HNSW index) and removes its cached
// embeddings, in one transaction. The table and the spaces row stay, so other processes that know the space
// keep working with it empty. It returns how many vectors it removed.
func (s *Store) DropSpace(ctx context.Context, rs rag.Space) (int, error) {
	if checkSpace(rs) != nil {
		return 0, nil // no such space can exist
	}
	sp, err := s.space(ctx, rs, false)
	if err != nil || sp == nil {
		return 0, err
	}
	var n int
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, s.q(fmt.Sprintf(`SELECT count(*) FROM %s`, sp.table))).Scan(&n); err != nil {
			return fmt.Errorf("drop space: %w", err)
		}
		if _, err := tx.Exec(ctx, s.q(fmt.Sprintf(`TRUNCATE %s`, sp.table))); err != nil {
			return fmt.Errorf("drop space: %w", err)
		}
		if _, err := tx.Exec(ctx, s.q(`DELETE FROM {S}.embedding_cache WHERE space = $1`), rs.ID()); err != nil {
			return fmt.Errorf("drop space: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, interpretError(err)
	}
	return n, nil
}

// CachedEmbeddings returns the cached vectors of space for those text hashes (missing ones absent).
func (s *Store) CachedEmbeddings(ctx context.Context, rs rag.Space, textHashes []string) (map[string][]float32, error) {
	out := map[string][]float32{}
	if len(textHashes) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT text_hash, vector FROM {S}.embedding_cache WHERE space = $1 AND text_hash = ANY($2::text[])`),
		rs.ID(), textHashes)
	if err != nil {
		return nil, interpretError(fmt.Errorf("cached embeddings: %w", err))
	}
	var h string
	var b []byte
	_, err = pgx.ForEachRow(rows, []any{&h, &b}, func() error {
		out[h] = decodeFloats(b)
		return nil
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("cached embeddings: %w", err))
	}
	return out, nil
}

// CacheEmbeddings stores vectors of space by text hash; hashes already cached keep their vector.
func (s *Store) CacheEmbeddings(ctx context.Context, rs rag.Space, vectors map[string][]float32) error {
	if len(vectors) == 0 {
		return nil
	}
	hashes := make([]string, 0, len(vectors))
	for h, v := range vectors {
		if len(v) != rs.Dim {
			return rag.Errorf(rag.CodeInvalid, "cached vector has %d dimensions, space %s has %d", len(v), rs.ID(), rs.Dim)
		}
		hashes = append(hashes, h)
	}
	sort.Strings(hashes)
	vecs := make([][]byte, len(hashes))
	for i, h := range hashes {
		vecs[i] = encodeFloats(vectors[h])
	}
	_, err := s.pool.Exec(ctx, s.q(`INSERT INTO {S}.embedding_cache (space, text_hash, vector)
		SELECT $1, h, v FROM unnest($2::text[], $3::bytea[]) AS u(h, v)
		ON CONFLICT (space, text_hash) DO NOTHING`), rs.ID(), hashes, vecs)
	if err != nil {
		return interpretError(fmt.Errorf("cache embeddings: %w", err))
	}
	return nil
}

func encodeFloats(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeFloats(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
