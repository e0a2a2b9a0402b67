package scale

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/ragd/ragd/internal/store/postgres"
)

// BenchmarkHNSWBuild measures what docs/scaling.md sizes a PostgreSQL server with: the time to build an
// HNSW index (vector_cosine_ops, m=16, ef_construction=128, as the store makes them) over N loaded vectors,
// and the index's size per vector. The vectors are unit-length, in 1000 Gaussian clusters (text embeddings
// cluster; uniform random vectors would be the hardest case for the graph). The data is loaded first and
// not timed; the build runs with maintenance_work_mem large enough for the graph, as pgvector recommends.
// It runs against any server, unchanged, in a schema of its own that it drops:
//
//	RAGD_DATABASE_URL      the server (falls back to RAGD_TEST_DATABASE_URL; skipped when neither is set)
//	RAGD_BENCH_VECTORS     N (default 10000)
//	RAGD_BENCH_DIM         dimension (default 768)
//	RAGD_BENCH_WORKERS     max_parallel_maintenance_workers (default 0: one process, as on PGlite)
//	RAGD_BENCH_MAINTENANCE_WORK_MEM  for the build (default 1GB; the graph must fit for a fast build)
//
// e.g. RAGD_DATABASE_URL=postgres://… RAGD_BENCH_VECTORS=100000 go test -run '^$' -bench HNSWBuild -benchtime 1x ./test/scale/
func BenchmarkHNSWBuild(b *testing.B) {
	url := os.Getenv("RAGD_DATABASE_URL")
	if url == "" {
		url = os.Getenv("RAGD_TEST_DATABASE_URL")
	}
	if url == "" {
		b.Skip("set RAGD_DATABASE_URL (or RAGD_TEST_DATABASE_URL) to a PostgreSQL with pgvector")
	}
	n, dim, workers := benchEnv("RAGD_BENCH_VECTORS", 10000), benchEnv("RAGD_BENCH_DIM", 768), benchEnv("RAGD_BENCH_WORKERS", 0)
	ctx := context.Background()
	rb := make([]byte, 4)
	_, _ = rand.Read(rb)
	schema := "hnsw_bench_" + hex.EncodeToString(rb)
	// The store's Open creates the vector extension and gives a pool whose connections know its types.
	st, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	pool := st.Pool()
	defer func() {
		if _, err := pool.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			b.Error(err)
		}
	}()
	var vecSchema, version, pgv string
	if err := pool.QueryRow(ctx, `SELECT n.nspname, e.extversion, version() FROM pg_extension e
		JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'`).Scan(&vecSchema, &pgv, &version); err != nil {
		b.Fatal(err)
	}
	table := pgx.Identifier{schema, "hnsw_bench"}.Sanitize()
	vecType := pgx.Identifier{vecSchema, "vector"}.Sanitize()
	if _, err := pool.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, embedding %s(%d) NOT NULL)", table, vecType, dim)); err != nil {
		b.Fatal(err)
	}
	loaded := time.Now()
	if err := loadVectors(ctx, pool, table, vecType, n, dim); err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d %d-d vectors in %s", n, dim, time.Since(loaded).Round(time.Second))

	var took time.Duration
	for b.Loop() {
		took = buildHNSW(b, pool, schema, vecSchema, workers)
	}
	var idxBytes, tableBytes int64
	if err := pool.QueryRow(ctx, "SELECT pg_relation_size($1::regclass), pg_total_relation_size($2::regclass) - pg_indexes_size($2::regclass)",
		pgx.Identifier{schema, "hnsw_bench_idx"}.Sanitize(), table).Scan(&idxBytes, &tableBytes); err != nil {
		b.Fatal(err)
	}
	perVec := float64(idxBytes) / float64(n)
	b.ReportMetric(took.Seconds(), "build_s")
	b.ReportMetric(float64(idxBytes)/(1<<20), "index_MiB")
	b.ReportMetric(perVec, "index_B/vector")
	b.ReportMetric(float64(n)/took.Seconds(), "vectors/s")
	b.Logf("%s, pgvector %s: HNSW over %d %d-d vectors built in %s with %d parallel workers (%.0f vectors/s); index %.1f MiB = %.0f B/vector (table %.1f MiB); per million: index %.2f GiB, build ≥ %.0f s at this rate (HNSW builds grow a little faster than linearly)",
		shortVersion(version), pgv, n, dim, took.Round(time.Millisecond), workers, float64(n)/took.Seconds(),
		float64(idxBytes)/(1<<20), perVec, float64(tableBytes)/(1<<20), perVec*1e6/(1<<30), 1e6/(float64(n)/took.Seconds()))
}

func benchEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

func shortVersion(v string) string {
	for i := range len(v) - 4 {
		if v[i:i+4] == " on " {
			return v[:i]
		}
	}
	return v
}

// loadVectors inserts n clustered unit vectors in batches (multi-row INSERT, which PGlite accepts).
func loadVectors(ctx context.Context, pool *pgxpool.Pool, table, vecType string, n, dim int) error {
	r := mrand.New(mrand.NewPCG(1, 2))
	const clusters = 1000
	centres := make([][]float32, clusters)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for j := range centres[i] {
			centres[i][j] = float32(r.NormFloat64())
		}
	}
	const batch = 500
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		ids := make([]int64, 0, hi-lo)
		vecs := make([]pgvector.Vector, 0, hi-lo)
		for i := lo; i < hi; i++ {
			c := centres[r.IntN(clusters)]
			v := make([]float32, dim)
			var norm float64
			for j := range v {
				v[j] = c[j] + 0.7*float32(r.NormFloat64())
				norm += float64(v[j]) * float64(v[j])
			}
			norm = math.Sqrt(norm)
			for j := range v {
				v[j] = float32(float64(v[j]) / norm)
			}
			ids = append(ids, int64(i))
			vecs = append(vecs, pgvector.NewVector(v))
		}
		if _, err := pool.Exec(ctx, fmt.Sprintf("INSERT INTO %s (id, embedding) SELECT * FROM unnest($1::bigint[], $2::%s[])", table, vecType),
			ids, vecs); err != nil {
			return fmt.Errorf("load vectors: %w", err)
		}
	}
	return nil
}

// buildHNSW (re)builds the index in one transaction with SET LOCAL settings (PGlite shares one session
// among connections) and returns how long CREATE INDEX took.
func buildHNSW(b *testing.B, pool *pgxpool.Pool, schema, vecSchema string, workers int) time.Duration {
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	mwm := os.Getenv("RAGD_BENCH_MAINTENANCE_WORK_MEM")
	if mwm == "" {
		mwm = "1GB"
	}
	for _, q := range []string{
		"SET LOCAL maintenance_work_mem = '" + mwm + "'",
		fmt.Sprintf("SET LOCAL max_parallel_maintenance_workers = %d", workers),
		"DROP INDEX IF EXISTS " + pgx.Identifier{schema, "hnsw_bench_idx"}.Sanitize(),
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	if _, err := tx.Exec(ctx, fmt.Sprintf("CREATE INDEX hnsw_bench_idx ON %s USING hnsw (embedding %s) WITH (m = 16, ef_construction = 128)",
		pgx.Identifier{schema, "hnsw_bench"}.Sanitize(), pgx.Identifier{vecSchema, "vector_cosine_ops"}.Sanitize())); err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	if err := tx.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	return took
}
