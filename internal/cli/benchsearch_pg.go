package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/store/postgres"
	"github.com/ragd/ragd/internal/vindex"
)

// benchEfSearch are the hnsw.ef_search values at which `ragd bench search --database-url` queries pgvector's
// index directly: pgvector's own default (40), ragd's default for neural embedders (100) and longer lists,
// so that the rows are the recall/latency curve.
var benchEfSearch = []int{40, 100, 200, 400}

// benchPostgres measures, on the PostgreSQL server at url, in a schema of its own that it drops afterwards:
// ragd's PostgreSQL store (the corpus loaded through its write path, documents of 10 chunks with their HNSW
// index kept as they commit; the vector, keyword and hybrid rows of measureRagd, vectors at the store's
// default ef_search for the space)
// and pgvector's HNSW index queried directly (a plain table of the same vectors inserted in batches of 500,
// the index built once afterwards with ragd's m and ef_construction; one SELECT … ORDER BY <=> LIMIT k per
// query at each of benchEfSearch). Recall@10 is against exact float32 search (exact).
func benchPostgres(ctx context.Context, url string, c *benchCorpus, k int) ([]searchRow, error) {
	vecs, queries, n, dim := c.vecs, c.queries, len(c.texts), c.dim
	exact := make([][]vindex.Hit, len(c.exactVec))
	for i, e := range c.exactVec {
		exact[i] = top10(e)
	}
	schema := fmt.Sprintf("ragd_bench_search_%d", os.Getpid())
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("bench search: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	drop := func() error {
		_, err := conn.Exec(context.WithoutCancel(ctx), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		return err
	}
	if err := drop(); err != nil {
		return nil, fmt.Errorf("bench search: %w", err)
	}
	defer drop()
	st, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		return nil, err
	}
	defer st.Close()

	start := time.Now()
	rowOf, err := loadBenchCorpus(ctx, st, c)
	if err != nil {
		return nil, err
	}
	build := time.Since(start).Seconds()
	// The sizes on disk: the space's vector table with its HNSW index, and the postings with their indexes
	// and the term statistics.
	var vecMem, kwMem int64
	if err := conn.QueryRow(ctx, `SELECT pg_total_relation_size(format('%I.vectors_%s', $1::text, s.id)::regclass),
			pg_total_relation_size(format('%I.postings', $1::text)::regclass) + pg_total_relation_size(format('%I.term_stats', $1::text)::regclass)
		FROM `+pgx.Identifier{schema, "spaces"}.Sanitize()+` s WHERE s.provider = $2`, schema, benchSpace.Provider).Scan(&vecMem, &kwMem); err != nil {
		return nil, fmt.Errorf("bench search: table sizes: %w", err)
	}
	rows, err := c.measureRagd(ctx, st, fmt.Sprintf("ragd postgres (ef_search %d)", postgres.DefaultEfSearch(benchSpace)), rowOf, vecMem, kwMem, build)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i].CPUms = 0 // the server's CPU is another process's
	}

	direct, err := benchPgvector(ctx, conn, schema, vecs, queries, exact, n, dim, k)
	if err != nil {
		return nil, err
	}
	return append(rows, direct...), nil
}

// benchPgvector loads the vectors into a plain pgvector table with an HNSW index and queries it directly.
func benchPgvector(ctx context.Context, conn *pgx.Conn, schema string, vecs, queries []float32, exact [][]vindex.Hit, n, dim, k int) ([]searchRow, error) {
	table := pgx.Identifier{schema, "pgvector_direct"}.Sanitize()
	if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (id integer PRIMARY KEY, embedding vector(%d))`, table, dim)); err != nil {
		return nil, fmt.Errorf("bench search: pgvector table: %w", err)
	}
	start := time.Now()
	const batch = 500
	for first := 0; first < n; first += batch {
		ids, texts := make([]int32, 0, batch), make([]string, 0, batch)
		for r := first; r < min(first+batch, n); r++ {
			ids = append(ids, int32(r))
			texts = append(texts, vectorText(vecs[r*dim:(r+1)*dim]))
		}
		if _, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO %s SELECT * FROM unnest($1::integer[], $2::text[]::vector[])`, table), ids, texts); err != nil {
			return nil, fmt.Errorf("bench search: pgvector insert: %w", err)
		}
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE INDEX ON %s USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 128)`, table)); err != nil {
		return nil, fmt.Errorf("bench search: pgvector index: %w", err)
	}
	build := time.Since(start).Seconds()
	var mem int64
	if err := conn.QueryRow(ctx, `SELECT pg_total_relation_size($1::regclass)`, table).Scan(&mem); err != nil {
		return nil, fmt.Errorf("bench search: pgvector size: %w", err)
	}
	// JIT off, as ragd's store does for its vector searches: PostgreSQL would compile each query.
	if _, err := conn.Exec(ctx, `SET jit = off`); err != nil {
		return nil, err
	}
	nq := len(exact)
	qtexts := make([]string, nq)
	for i := range nq {
		qtexts[i] = vectorText(queries[i*dim : (i+1)*dim])
	}
	search := fmt.Sprintf(`SELECT id FROM %s ORDER BY embedding <=> $1::text::vector LIMIT %d`, table, k)
	var rows []searchRow
	for _, ef := range benchEfSearch {
		if _, err := conn.Exec(ctx, `SELECT set_config('hnsw.ef_search', $1, false)`, strconv.Itoa(ef)); err != nil {
			return nil, err
		}
		times := make([]time.Duration, nq)
		var recall float64
		for i := range nq {
			t := time.Now()
			r, err := conn.Query(ctx, search, qtexts[i])
			if err != nil {
				return nil, fmt.Errorf("bench search: pgvector query: %w", err)
			}
			ids, err := pgx.CollectRows(r, pgx.RowTo[int32])
			times[i] = time.Since(t)
			if err != nil {
				return nil, fmt.Errorf("bench search: pgvector query: %w", err)
			}
			hits := make([]vindex.Hit, len(ids))
			for j, id := range ids {
				hits[j] = vindex.Hit{Row: id}
			}
			recall += vindex.Recall(hits, exact[i])
		}
		rows = append(rows, timed(fmt.Sprintf("pgvector HNSW (ef_search %d)", ef), "vector", times, 0, recall/float64(nq), mem, build))
	}
	return rows, nil
}

// vectorText is v in pgvector's text form.
func vectorText(v []float32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
	}
	b.WriteByte(']')
	return b.String()
}
