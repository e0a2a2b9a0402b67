package cli

import (
	"context"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/store/sqlite"
)

// BenchmarkLoadCorpus loads `ragd bench search`'s corpus (RAGD_BENCH_CHUNKS chunks, default 20,000) into a
// fresh embedded store through the write path the command uses, and reports chunks per second of wall
// time and per CPU-second of the process. Profile the load with -cpuprofile:
//
//	RAGD_BENCH_CHUNKS=50000 go test ./internal/cli -run '^$' -bench LoadCorpus -benchtime 1x -cpuprofile /tmp/load.prof
func BenchmarkLoadCorpus(b *testing.B) {
	n := benchChunks(b, 20_000)
	ctx := context.Background()
	c := newBenchCorpus(n, 10, benchSpace.Dim)
	for b.Loop() {
		dir := b.TempDir()
		st, err := sqlite.Open(ctx, dir, sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		cpu0, t := cpuTime(), time.Now()
		if _, err := loadBenchCorpus(ctx, st, c); err != nil {
			b.Fatal(err)
		}
		wall, cpu := time.Since(t), cpuTime()-cpu0
		b.ReportMetric(float64(n)/wall.Seconds(), "chunks/s")
		b.ReportMetric(float64(n)/cpu.Seconds(), "chunks/cpu-s")
		st.Close()
	}
}
