package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/ragd/ragd/internal/rag"
)

// BM25 parameters, the same as SQLite FTS5's bm25() so that both stores rank alike.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// VectorCandidates returns up to q.K chunks of documents visible to p that match q.Filter, nearest to
// q.Vector by cosine similarity in q.Space, best first.
//
// Unrestricted searches walk the HNSW index with hnsw.ef_search = max(ef_search, K), ef_search being
// the query's, Options.EfSearch or the embedder's default (efsearch.go). Restricted ones (a filter,
// or a principal who is not an admin) first count the chunks of the matching documents: up to ExactBelow they
// compare every one of them exactly; above, they walk the index with pgvector's iterative scan, which keeps
// going until K rows pass the filter (or MaxScanTuples), so a selective filter still yields K rows.
func (s *Store) VectorCandidates(ctx context.Context, p rag.Principal, q rag.VectorQuery) ([]rag.Candidate, error) {
	return s.vectorCandidates(ctx, p, q, false)
}

// vectorCandidates is VectorCandidates; forceExact skips the index (the benchmark's reference for recall).
func (s *Store) vectorCandidates(ctx context.Context, p rag.Principal, q rag.VectorQuery, forceExact bool) ([]rag.Candidate, error) {
	if q.K <= 0 {
		return nil, nil
	}
	if err := checkSpace(q.Space); err != nil {
		return nil, err
	}
	if len(q.Vector) != q.Space.Dim {
		return nil, rag.Errorf(rag.CodeInvalid, "query vector has %d dimensions, space %s has %d", len(q.Vector), q.Space.ID(), q.Space.Dim)
	}
	sp, err := s.space(ctx, q.Space, false)
	if err != nil || sp == nil {
		return nil, err
	}
	var a args
	vec := a.add(vectorParam(q.Vector))
	conds, err := docConditions(&a, p, q.Filter)
	if err != nil {
		return nil, err
	}
	var out []rag.Candidate
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := s.becomeReader(ctx, tx, p); err != nil {
			return err
		}
		exact := !sp.indexed || forceExact
		if len(conds) > 0 && !exact {
			var ca args
			cconds, _ := docConditions(&ca, p, q.Filter)
			var n int64
			if err := tx.QueryRow(ctx, s.q(`SELECT COALESCE(sum(d.chunk_count), 0) FROM {S}.documents d WHERE `+where(cconds)),
				ca...).Scan(&n); err != nil {
				return fmt.Errorf("vector candidates: count: %w", err)
			}
			if n == 0 {
				return nil
			}
			exact = n <= int64(s.opts.ExactBelow)
		}
		sql := s.vectorSQL(sp, vec, conds, q.K, exact)
		// jit off: pgvector's cost estimates for a distance-ordered scan exceed jit_above_cost, and compiling
		// the query costs far more than running it (measured on PostgreSQL 15 at 100k chunks: p50 39 ms
		// with JIT against 2.1 ms without).
		setting := `SELECT set_config('jit', 'off', true)`
		var params []any
		if !exact {
			// enable_sort off: the count above chose the index, so keep the planner from starting at the
			// documents and sorting (it would, from stale or skewed estimates).
			ef := s.efSearch(q.Space, len(conds) > 0)
			if q.EfSearch > 0 {
				ef = min(q.EfSearch, rag.MaxEfSearch)
			}
			ef = max(ef, min(q.K, rag.MaxEfSearch))
			setting += `, set_config('hnsw.ef_search', $1, true), set_config('enable_sort', 'off', true)`
			params = append(params, strconv.Itoa(ef))
			if len(conds) > 0 && s.iterative {
				setting += `, set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.max_scan_tuples', $2, true)`
				params = append(params, strconv.Itoa(s.opts.MaxScanTuples))
			}
		}
		if _, err := tx.Exec(ctx, setting, params...); err != nil {
			return fmt.Errorf("vector candidates: settings: %w", err)
		}
		rows, err := tx.Query(ctx, s.q(sql), a...)
		if err != nil {
			return fmt.Errorf("vector candidates: %w", err)
		}
		out, err = collectCandidates(rows)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// vectorSQL is the statement of a vector search. The exact form orders by distance + 0, which no index
// matches, so the planner starts from the filtered documents; the index form lets the HNSW index produce
// rows in distance order, re-sorted afterwards because the relaxed iterative scan may return them slightly
// out of order.
func (s *Store) vectorSQL(sp *space, vec string, conds []string, k int, exact bool) string {
	from := sp.table + " v"
	if len(conds) > 0 {
		from += " JOIN {S}.chunks c ON c.id = v.chunk_id JOIN {S}.documents d ON d.id = c.document_id"
	}
	dist := sp.distance(vec)
	order := dist
	if exact {
		order = dist + " + 0"
	}
	return fmt.Sprintf(`WITH r AS MATERIALIZED (
		SELECT v.chunk_id, %s AS dist FROM %s WHERE %s ORDER BY %s LIMIT %d)
		SELECT chunk_id, 1 - dist FROM r ORDER BY dist, chunk_id`, dist, from, where(conds), order, k)
}

// termQuery returns the distinct terms of q, the statement arguments with those terms first ($1, a text
// array) and the document conditions of p and q.Filter.
func termQuery(p rag.Principal, q rag.KeywordQuery) ([]string, args, []string, error) {
	seen := map[string]bool{}
	var terms []string
	for _, t := range q.Terms {
		if t != "" && !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		return nil, nil, nil, nil
	}
	var a args
	a.add(terms)
	conds, err := docConditions(&a, p, q.Filter)
	return terms, a, conds, err
}

func collectCandidates(rows pgx.Rows) ([]rag.Candidate, error) {
	var out []rag.Candidate
	var c rag.Candidate
	_, err := pgx.ForEachRow(rows, []any{&c.ChunkID, &c.Score}, func() error {
		c.Rank = len(out) + 1
		out = append(out, c)
		return nil
	})
	return out, err
}

// Hits returns the chunks with those IDs and their documents' facts, in the order of ids; IDs that no longer
// exist, or whose documents p does not see, are skipped. The predicate is in the query, and for a
// row-secured p the read runs under the policies too.
func (s *Store) Hits(ctx context.Context, p rag.Principal, ids []int64) ([]rag.Hit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	a := args{ids}
	conds, err := docConditions(&a, p, rag.Filter{})
	if err != nil {
		return nil, err
	}
	var out []rag.Hit
	err = s.read(ctx, p, func(db querier) error {
		rows, err := db.Query(ctx, s.q(`SELECT `+chunkColumns+`, d.collection_id, d.external_id, d.title, d.source,
		d.media_type, d.metadata, d.updated_at
		FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, ord)
		JOIN {S}.chunks c ON c.id = u.id JOIN {S}.documents d ON d.id = c.document_id WHERE `+where(conds)+` ORDER BY u.ord`), a...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (rag.Hit, error) {
			var h rag.Hit
			c, err := scanChunk(s.opts.Keys, r, &h.CollectionID, &h.ExternalID, &h.Title, &h.Source, &h.MediaType, &h.Metadata, &h.UpdatedAt)
			if err != nil {
				return h, err
			}
			h.Chunk = *c
			h.UpdatedAt = h.UpdatedAt.UTC()
			return h, nil
		})
		return err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("hits: %w", err))
	}
	return out, nil
}

// vectorParam is a query vector as a statement parameter (pgvector's binary format).
func vectorParam(v []float32) pgvector.Vector { return pgvector.NewVector(v) }
