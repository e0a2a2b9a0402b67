package vindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/viterin/vek/vek32"
)

// benchRows is the corpus size of BenchmarkSearch: RAGD_BENCH_VECTORS, default 100,000.
func benchRows(b *testing.B) int {
	if v := os.Getenv("RAGD_BENCH_VECTORS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 {
			b.Fatalf("RAGD_BENCH_VECTORS=%q: want a number ≥ 100", v)
		}
		return n
	}
	return 100_000
}

// BenchmarkSearch builds an index over clustered 768-d vectors (fixed seed) and measures top-k queries
// (RAGD_BENCH_K, default 10; a hybrid search asks for 100) at several probe counts and shortlists: p50/p95
// latency, recall@k against exact search, and the exact scan itself. Two corpora: spread 2, clusters as
// text embeddings form them (a row's nearest neighbours share its subtopic), and spread 4, close to noise
// (neighbours barely nearer than other rows of the topic).
//
//	go test -run '^$' -bench Search -benchtime 1x -v ./internal/vindex/
//	RAGD_BENCH_K=100 go test -run '^$' -bench Search -benchtime 1x -v ./internal/vindex/
func BenchmarkSearch(b *testing.B) {
	for _, spread := range []float64{2, 4} {
		b.Run(fmt.Sprintf("spread=%g", spread), func(b *testing.B) { benchSearch(b, spread) })
	}
}

func benchSearch(b *testing.B, spread float64) {
	const dim, nq = 768, 200
	n := benchRows(b)
	k := 10
	if v := os.Getenv("RAGD_BENCH_K"); v != "" {
		var err error
		if k, err = strconv.Atoi(v); err != nil || k < 1 {
			b.Fatalf("RAGD_BENCH_K=%q: want a number ≥ 1", v)
		}
	}
	vecs, queries := Clustered(n, nq, dim, spread, 42)
	start := time.Now()
	ix, err := Build(context.Background(), Mem{vecs, dim}, dim, n, 1)
	if err != nil {
		b.Fatal(err)
	}
	build := time.Since(start)
	b.Logf("%d × %d, spread %g: build %.1f s, %d lists, index %.1f MiB (the float32 rows: %.1f MiB)", n, dim, spread,
		build.Seconds(), ix.Lists(), float64(ix.Bytes())/(1<<20), float64(len(vecs)*4)/(1<<20))
	exact := make([][]Hit, nq)
	var exactTimes []time.Duration
	for i := range nq {
		t := time.Now()
		exact[i] = Exact(queries[i*dim:(i+1)*dim], vecs, dim, k)
		exactTimes = append(exactTimes, time.Since(t))
	}
	p50, p95 := percentiles(exactTimes)
	b.Logf("exact float32 (one core): p50 %.2f ms, p95 %.2f ms", ms(p50), ms(p95))
	def := ProbesFor(ix.Lists())
	configs := []struct{ probes, short int }{
		{def / 2, ShortlistFor(k)}, {def, ShortlistFor(k) / 2}, {def, ShortlistFor(k)}, {def, 2 * ShortlistFor(k)}, {2 * def, 2 * ShortlistFor(k)},
	}
	if k > 10 {
		configs = append(configs, struct{ probes, short int }{def, 10 * k}, struct{ probes, short int }{def, 20 * k},
			struct{ probes, short int }{def, 40 * k})
	}
	for _, c := range configs {
		b.Run(fmt.Sprintf("nprobe=%d/shortlist=%d", c.probes, c.short), func(b *testing.B) {
			var times []time.Duration
			var recall float64
			for range b.N {
				times, recall = times[:0], 0
				for i := range nq {
					t := time.Now()
					got, err := ix.Search(queries[i*dim:(i+1)*dim], Mem{vecs, dim}, nil, k, c.probes, c.short, nil)
					if err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(t))
					recall += Recall(got, exact[i])
				}
			}
			p50, p95 := percentiles(times)
			recall /= nq
			b.ReportMetric(ms(p50), "p50_ms")
			b.ReportMetric(ms(p95), "p95_ms")
			b.ReportMetric(recall, fmt.Sprintf("recall@%d", k))
			b.Logf("nprobe %d of %d, shortlist %d: p50 %.2f ms, p95 %.2f ms, recall@%d %.4f", c.probes, ix.Lists(), c.short, ms(p50), ms(p95), k, recall)
		})
	}
}

// BenchmarkDot compares scoring one 768-d row as float32 with vek32 (what Search does) and as int8 codes in
// plain Go (what an int8-quantised index would do).
func BenchmarkDot(b *testing.B) {
	const dim = 768
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float32, dim), make([]float32, dim)
	xi, yi := make([]int8, dim), make([]int8, dim)
	for i := range dim {
		x[i], y[i] = rng.Float32(), rng.Float32()
		xi[i], yi[i] = int8(rng.IntN(255)-127), int8(rng.IntN(255)-127)
	}
	b.Run("float32-vek", func(b *testing.B) {
		var s float32
		for range b.N {
			s += vek32.Dot(x, y)
		}
		sink = s
	})
	b.Run("int8-go", func(b *testing.B) {
		var s int32
		for range b.N {
			s += dotInt8(xi, yi)
		}
		sink = float32(s)
	})
}

var sink float32

func dotInt8(x, y []int8) int32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 int32
	for i := 0; i+4 <= len(x); i += 4 {
		s0 += int32(x[i]) * int32(y[i])
		s1 += int32(x[i+1]) * int32(y[i+1])
		s2 += int32(x[i+2]) * int32(y[i+2])
		s3 += int32(x[i+3]) * int32(y[i+3])
	}
	return s0 + s1 + s2 + s3
}

func percentiles(d []time.Duration) (p50, p95 time.Duration) {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[min(len(s)-1, len(s)*95/100)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
