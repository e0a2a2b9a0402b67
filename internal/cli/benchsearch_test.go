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
	if got.RestartS <= 0 || got.Chunks != 3000 || len(got.Rows) != 2 || got.Rows[0].System != "ragd embedded" || got.Rows[1].System != "exact float32" {
		t.Fatalf("got %+v", got)
	}
	ragd, exact := got.Rows[0], got.Rows[1]
	if exact.RecallAt10 != 1 || ragd.RecallAt10 < 0.9 || ragd.Kind != "vector" || ragd.P50ms <= 0 || ragd.P95ms < ragd.P50ms ||
		ragd.QPS <= 0 || ragd.BuildS <= 0 || ragd.MemoryBytes <= exact.MemoryBytes || exact.MemoryBytes != 3000*768*4 {
		t.Fatalf("rows %+v", got.Rows)
	}
}

func TestBenchSearchUsage(t *testing.T) {
	code, _, errOut := run(t, "bench", "search", "--chunks", "999")
	if code != 2 || !strings.Contains(errOut, "--chunks must be at least 1000") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
