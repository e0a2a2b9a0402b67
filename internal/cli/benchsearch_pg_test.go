package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestBenchSearchPostgres runs `ragd bench search --database-url` against the test PostgreSQL: the rows of
// ragd's PostgreSQL store (vector, keyword, hybrid) and of pgvector's index at each ef_search are there, with recall measured against
// exact search, the benchmark's schema is gone afterwards, and an unreachable server is an error.
func TestBenchSearchPostgres(t *testing.T) {
	url := os.Getenv("RAGD_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("RAGD_TEST_DATABASE_URL is not set")
	}
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"bench", "search", "--chunks", "1000", "--queries", "10", "--database-url", url, "--json"},
		strings.NewReader(""), &out, &errOut, func(string) string { return "" })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got struct {
		Rows []searchRow `json:"rows"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	type key struct{ system, kind string }
	want := []key{{"ragd postgres (ef_search 100)", "vector"}, {"ragd postgres (ef_search 100)", "keyword"},
		{"ragd postgres (ef_search 100)", "hybrid"}, {"pgvector HNSW (ef_search 40)", "vector"},
		{"pgvector HNSW (ef_search 100)", "vector"}, {"pgvector HNSW (ef_search 200)", "vector"}, {"pgvector HNSW (ef_search 400)", "vector"}}
	byName := map[key]searchRow{}
	for _, r := range got.Rows {
		byName[key{r.System, r.Kind}] = r
	}
	for _, w := range want {
		r, ok := byName[w]
		if !ok {
			t.Fatalf("no row %q %s in %+v", w.system, w.kind, got.Rows)
		}
		// The keyword row is exact BM25 (ties aside); vector rows hold at least the vectors.
		minRecall, minBytes := 0.5, int64(1000*768*4)
		if w.kind == "keyword" {
			minRecall, minBytes = 0.99, 1000
		}
		if r.RecallAt10 < minRecall || r.RecallAt10 > 1 || r.P50ms <= 0 || r.P95ms < r.P50ms || r.QPS <= 0 ||
			r.MemoryBytes < minBytes || r.BuildS <= 0 {
			t.Errorf("row %+v", r)
		}
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var left int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace WHERE nspname = $1`,
		fmt.Sprintf("ragd_bench_search_%d", os.Getpid())).Scan(&left); err != nil || left != 0 {
		t.Fatalf("the benchmark's schema is left behind (%d, %v)", left, err)
	}
	if code, stdout, _ := run(t, "bench", "search", "--chunks", "1000", "--queries", "10", "--database-url", "postgres://127.0.0.1:1/none?connect_timeout=2"); code == 0 {
		t.Fatalf("an unreachable server: exit 0: %s", stdout)
	}
}
