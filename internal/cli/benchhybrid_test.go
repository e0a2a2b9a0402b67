package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/vindex"
)

// BenchmarkHybridSearch times the retriever behind /api/search on `ragd bench search`'s corpus, as its
// hybrid row does (both lists of 100, fusion, hydration; threshold off), and reports p50/p95, the CPU time
// per query (user + system of the process: less sensitive than latency to the other work on the machine)
// and recall@10 against the exact fusion. The corpus has RAGD_BENCH_CHUNKS chunks (default 100,000) and is
// built once into RAGD_BENCH_DIR (default: a folder in the temp dir, kept between runs because building
// it takes minutes; delete it when done). Profile it with -cpuprofile:
//
//	go test ./internal/cli -run '^$' -bench HybridSearch -benchtime 400x -cpuprofile /tmp/hybrid.prof
func BenchmarkHybridSearch(b *testing.B) {
	const nq = 200
	ctx := context.Background()
	c, st, rowOf := keptCorpus(b, nq)
	hybrid, err := benchHybrid(st, c.qtexts, c.query)
	if err != nil {
		b.Fatal(err)
	}
	got := timeSearches(b, nq, func(i int) []vindex.Hit {
		ids, err := hybrid(ctx, i)
		if err != nil {
			b.Fatal(err)
		}
		out := make([]vindex.Hit, len(ids))
		for j, id := range ids {
			out[j] = vindex.Hit{Row: rowOf[id]}
		}
		return out
	})
	b.ReportMetric(recall(got, c.exactHybrid), "recall@10")
}

// keptCorpus generates `ragd bench search`'s corpus of RAGD_BENCH_CHUNKS chunks (default 100,000) with nq
// queries and opens its store, kept in RAGD_BENCH_DIR (default: a folder in the temp dir) between runs.
func keptCorpus(b *testing.B, nq int) (*benchCorpus, *sqlite.Store, map[int64]int32) {
	b.Helper()
	n := benchChunks(b, 100_000)
	dir := os.Getenv("RAGD_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "ragd-bench-hybrid-"+strconv.Itoa(n))
	}
	c := newBenchCorpus(n, nq, benchSpace.Dim)
	st, rowOf := openHybridCorpus(context.Background(), b, dir, c)
	return c, st, rowOf
}

// benchChunks is RAGD_BENCH_CHUNKS, or def when it is not set.
func benchChunks(b *testing.B, def int) int {
	b.Helper()
	s := os.Getenv("RAGD_BENCH_CHUNKS")
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// timeSearches runs search over the nq queries once (which warms the caches; those results are returned),
// then times it over the benchmark's iterations, one query at a time, and reports p50, p95 and the CPU time
// per query (user + system of the process: less sensitive than latency to the other work on the machine).
func timeSearches(b *testing.B, nq int, search func(i int) []vindex.Hit) [][]vindex.Hit {
	b.Helper()
	got := make([][]vindex.Hit, nq)
	for i := range nq {
		got[i] = search(i)
	}
	var lat []time.Duration
	cpu0 := cpuTime()
	i := 0
	for b.Loop() {
		t := time.Now()
		search(i % nq)
		lat = append(lat, time.Since(t))
		i++
	}
	cpu := cpuTime() - cpu0
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
	return got
}

// openHybridCorpus opens the corpus's store in dir, building it there first when it is not (complete).
func openHybridCorpus(ctx context.Context, b *testing.B, dir string, c *benchCorpus) (*sqlite.Store, map[int64]int32) {
	b.Helper()
	rowsFile := filepath.Join(dir, "rows.json")
	var rowOf map[int64]int32
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	opts := benchStoreOptions(cfg)
	if data, err := os.ReadFile(rowsFile); err == nil && json.Unmarshal(data, &rowOf) == nil && len(rowOf) == len(c.texts) {
		st, err := sqlite.Open(ctx, dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		waitIndexes(ctx, b, st)
		return st, rowOf
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	b.Logf("building the %d-chunk corpus in %s", len(c.texts), dir)
	st, err := sqlite.Open(ctx, dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if rowOf, err = loadBenchCorpus(ctx, st, c); err != nil {
		b.Fatal(err)
	}
	waitIndexes(ctx, b, st)
	data, err := json.Marshal(rowOf)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(rowsFile, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return st, rowOf
}

// waitIndexes waits for the store's vector index and in-memory keyword index, and logs how long the
// keyword index took to build.
func waitIndexes(ctx context.Context, b *testing.B, st *sqlite.Store) {
	b.Helper()
	if _, _, err := st.WaitVectorIndex(ctx, benchSpace); err != nil {
		b.Fatal(err)
	}
	start, cpu := time.Now(), cpuTime()
	rows, bytes, err := st.WaitKeywordIndex(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("keyword index: %d rows, %.1f MiB, built in %.2f s (%.2f s of CPU)", rows, float64(bytes)/(1<<20),
		time.Since(start).Seconds(), (cpuTime() - cpu).Seconds())
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration { return processCPU() }

// BenchmarkVectorSearch times what the vector row of `ragd bench search` times — the store's top-10
// VectorCandidates, one at a time — over the corpus of BenchmarkHybridSearch (RAGD_BENCH_CHUNKS,
// RAGD_BENCH_DIR), and reports p50/p95, CPU time per query and recall@10 against exact search. The store
// is opened with the settings of the environment (RAGD_VECTOR_HEAP, RAGD_VECTOR_INDEX_MIN). Profile it
// with -cpuprofile:
//
//	RAGD_BENCH_CHUNKS=1000000 go test ./internal/cli -run '^$' -bench VectorSearch -benchtime 2000x -cpuprofile /tmp/vec.prof
func BenchmarkVectorSearch(b *testing.B) {
	const nq = 200
	ctx := context.Background()
	c, st, rowOf := keptCorpus(b, nq)
	got := timeSearches(b, nq, func(i int) []vindex.Hit {
		cs, err := st.VectorCandidates(ctx, rag.LocalPrincipal, rag.VectorQuery{Space: benchSpace, Vector: c.query(i), K: 10})
		if err != nil {
			b.Fatal(err)
		}
		out := make([]vindex.Hit, len(cs))
		for j, h := range cs {
			out[j] = vindex.Hit{Row: rowOf[h.ChunkID]}
		}
		return out
	})
	b.ReportMetric(recall(got, c.exactVec), "recall@10")
}
