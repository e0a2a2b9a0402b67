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
// ragd's PostgreSQL store and of pgvector's index at each ef_search are there, with recall measured against
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
	want := []string{"ragd postgres (ef_search 100)", "pgvector HNSW (ef_search 40)", "pgvector HNSW (ef_search 100)",
		"pgvector HNSW (ef_search 200)", "pgvector HNSW (ef_search 400)"}
	byName := map[string]searchRow{}
	for _, r := range got.Rows {
		byName[r.System] = r
	}
	for _, name := range want {
		r, ok := byName[name]
		if !ok {
			t.Fatalf("no row %q in %+v", name, got.Rows)
		}
		if r.Kind != "vector" || r.RecallAt10 < 0.5 || r.RecallAt10 > 1 || r.P50ms <= 0 || r.P95ms < r.P50ms || r.QPS <= 0 ||
			r.MemoryBytes < 1000*768*4 || r.BuildS <= 0 {
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
