package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchSearch runs `ragd bench search --json` on a small corpus with the index threshold lowered, so
// that the embedded row goes through the index, and checks the rows' fields.
func TestBenchSearch(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"bench", "search", "--chunks", "3000", "--queries", "20", "--json"},
		strings.NewReader(""), &out, &errOut, func(k string) string {
			if k == "RAGD_VECTOR_INDEX_MIN" {
				return "1000"
			}
			return ""
		})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got struct {
		Chunks   int         `json:"chunks"`
		Rows     []searchRow `json:"rows"`
		RestartS float64     `json:"restart_s"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if got.RestartS <= 0 || got.Chunks != 3000 {
		t.Fatalf("got %+v", got)
	}
	rows := map[string]searchRow{}
	for i, r := range got.Rows {
		if strings.HasPrefix(r.System, "ragd") != (i < 3) {
			t.Fatalf("ragd's rows must come first: %+v", got.Rows)
		}
		if r.P50ms <= 0 || r.P95ms < r.P50ms || r.QPS <= 0 || r.RecallAt10 < 0 || r.RecallAt10 > 1 {
			t.Fatalf("row %+v", r)
		}
		rows[r.System+"/"+r.Kind] = r
	}
	want := []string{"ragd embedded/vector", "ragd embedded/keyword", "ragd embedded/hybrid", "exact float32/vector",
		"exact BM25 (in memory)/keyword", "chromem-go/vector", "sqlite-vec + FTS5/vector", "sqlite-vec + FTS5/keyword",
		"sqlite-vec + FTS5/hybrid"}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", got.Rows)
	}
	for _, w := range want {
		if _, ok := rows[w]; !ok {
			t.Fatalf("no row %s: %+v", w, got.Rows)
		}
	}
	ragd, exact := rows["ragd embedded/vector"], rows["exact float32/vector"]
	if exact.RecallAt10 != 1 || ragd.RecallAt10 < 0.9 || ragd.BuildS <= 0 || ragd.MemoryBytes <= exact.MemoryBytes ||
		exact.MemoryBytes != 3000*768*4 {
		t.Fatalf("rows %+v", got.Rows)
	}
	// ragd's keyword search is exact BM25 (pruning keeps the ranking), the hybrid search is the fusion of
	// its two lists: both agree with the in-memory references; exhaustive peers find the exact vectors.
	for _, w := range []string{"ragd embedded/keyword", "ragd embedded/hybrid", "chromem-go/vector", "sqlite-vec + FTS5/vector"} {
		if rows[w].RecallAt10 < 0.95 {
			t.Fatalf("%s recall@10 %.4f", w, rows[w].RecallAt10)
		}
	}
	if rows["sqlite-vec + FTS5/vector"].MemoryBytes <= 0 || rows["chromem-go/vector"].MemoryBytes < 3000*768*4 {
		t.Fatalf("peer memory: %+v", got.Rows)
	}
}

func TestBenchSearchUsage(t *testing.T) {
	code, _, errOut := run(t, "bench", "search", "--chunks", "999")
	if code != 2 || !strings.Contains(errOut, "--chunks must be at least 1000") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
