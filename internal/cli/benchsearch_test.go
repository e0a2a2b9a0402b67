package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/vindex"
)

// TestMain runs the command of the test binary's arguments instead of the tests when benchChildEnv is 1:
// `ragd bench search` starts its restarted process (`ragd bench search-restart`) with its own executable,
// which in these tests is this binary.
func TestMain(m *testing.M) {
	if os.Getenv(benchChildEnv) == "1" {
		os.Exit(Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
	os.Exit(m.Run())
}

// TestBenchSearch runs `ragd bench search --json` on a small corpus with the index threshold lowered, so
// that the embedded row goes through the index (and its vectors are in the vector file), and checks the
// rows' fields, with those of the restarted process: its store read the files back and its resident memory
// is reported.
func TestBenchSearch(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"bench", "search", "--chunks", "3000", "--queries", "20", "--json"},
		strings.NewReader(""), &out, &errOut, func(k string) string {
			switch k {
			case "RAGD_VECTOR_INDEX_MIN":
				return "1000"
			case "RAGD_VECTOR_HEAP":
				return "-1" // the vectors in the vector file only
			}
			return ""
		})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got struct {
		Chunks    int         `json:"chunks"`
		Rows      []searchRow `json:"rows"`
		RestartS  float64     `json:"restart_s"`
		Restarted struct {
			AfterVector memStats `json:"after_vector"`
			AfterAll    memStats `json:"after_all"`
			Indexed     int      `json:"indexed_rows"`
			FromFiles   bool     `json:"from_files"`
		} `json:"restarted"`
		Self memStats `json:"bench_process"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if got.RestartS <= 0 || got.Chunks != 3000 || !got.Restarted.FromFiles || got.Restarted.Indexed != 3000 ||
		got.Restarted.AfterVector.RSS <= 0 || got.Restarted.AfterAll.HWM < got.Restarted.AfterVector.RSS || got.Self.HWM <= 0 {
		t.Fatalf("got %+v", got)
	}
	rows := map[string]searchRow{}
	for i, r := range got.Rows {
		if strings.HasPrefix(r.System, "ragd") != (i < 6) {
			t.Fatalf("ragd's rows must come first: %+v", got.Rows)
		}
		if r.P50ms <= 0 || r.P95ms < r.P50ms || r.QPS <= 0 || r.RecallAt10 < 0 || r.RecallAt10 > 1 || r.CPUms <= 0 {
			t.Fatalf("row %+v", r)
		}
		rows[r.System+"/"+r.Kind] = r
	}
	want := []string{"ragd embedded/vector", "ragd embedded/keyword", "ragd embedded/hybrid",
		"ragd embedded (restarted process)/vector", "ragd embedded (restarted process)/keyword",
		"ragd embedded (restarted process)/hybrid", "exact float32/vector",
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
	// The index holds codes, not the vectors (those are in the vector file): less memory than the vectors.
	ragd, exact := rows["ragd embedded/vector"], rows["exact float32/vector"]
	if exact.RecallAt10 != 1 || ragd.RecallAt10 < 0.9 || ragd.BuildS <= 0 || ragd.MemoryBytes <= 0 || ragd.MemoryBytes >= exact.MemoryBytes ||
		exact.MemoryBytes != 3000*768*4 {
		t.Fatalf("rows %+v", got.Rows)
	}
	if re := rows["ragd embedded (restarted process)/vector"]; re.RecallAt10 != ragd.RecallAt10 || re.MemoryBytes != got.Restarted.AfterVector.RSS {
		t.Fatalf("restarted %+v, before %+v", re, ragd)
	}
	// ragd's keyword search is exact BM25 (pruning keeps the ranking), the hybrid search is the fusion of
	// its two lists: both agree with the in-memory references; exhaustive peers find the exact vectors.
	for _, w := range []string{"ragd embedded/keyword", "ragd embedded/hybrid", "ragd embedded (restarted process)/keyword",
		"ragd embedded (restarted process)/hybrid", "chromem-go/vector", "sqlite-vec + FTS5/vector"} {
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

// TestBenchSearchSkip: --skip leaves peers out, --peer-queries times fewer queries for the in-process
// peers, and both are checked.
func TestBenchSearchSkip(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"bench", "search", "--chunks", "1000", "--queries", "10", "--peer-queries", "3",
		"--skip", "sqlite-vec", "--json"}, strings.NewReader(""), &out, &errOut, func(string) string { return "" })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got struct {
		Rows        []searchRow `json:"rows"`
		PeerQueries int         `json:"peer_queries"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	systems := map[string]bool{}
	for _, r := range got.Rows {
		systems[r.System] = true
	}
	if systems["sqlite-vec + FTS5"] || !systems["chromem-go"] || got.PeerQueries != 3 {
		t.Fatalf("systems %v, peer queries %d", systems, got.PeerQueries)
	}
	for _, args := range [][]string{{"--skip", "pgvector"}, {"--queries", "10", "--peer-queries", "11"}, {"--peer-queries", "-1"}} {
		code, _, errOut := run(t, append([]string{"bench", "search", "--chunks", "1000"}, args...)...)
		if code != 2 || !strings.Contains(errOut, "--") {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
}

// TestBenchTextsTopWords: the words of a chunk's largest components are those a full sort of its
// components gives, in that order.
func TestBenchTextsTopWords(t *testing.T) {
	vecs, _ := vindex.Clustered(300, 0, 64, 2, 5)
	texts := benchTexts(vecs, 64, benchTopicWords, benchTopicWords, 1)
	for r, text := range texts {
		v := vecs[r*64 : (r+1)*64]
		idx := make([]int, 64)
		for d := range idx {
			idx[d] = d
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(v[b], v[a]) })
		var want []string
		for _, d := range idx[:benchTopicWords] {
			want = append(want, benchWord(benchFiller+d))
		}
		if text != strings.Join(want, " ") {
			t.Fatalf("row %d: %q, want %q", r, text, strings.Join(want, " "))
		}
	}
}
