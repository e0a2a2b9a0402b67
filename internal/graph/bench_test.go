package graph_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/testkit"
)

// BenchmarkContext measures graph context assembly on the 품셈 sample (embedded store, hash embedder): the
// retrieval steps and the §6.1 context of each scenario question in turn. It reports the p50 and p95 of one
// question (the seed's budget for its database steps is 500 ms; ours is 50 ms).
//
//	go test ./internal/graph -run '^$' -bench Context -benchtime 400x
func BenchmarkContext(b *testing.B) {
	f := setup(b)
	ctx := context.Background()
	var questions []string
	for _, s := range testkit.PumsemScenarios(b) {
		if s.Question != "" {
			questions = append(questions, s.Question)
		}
	}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		res, err := f.svc.Retrieve(ctx, rag.LocalPrincipal, f.coll, f.set, questions[i%len(questions)])
		if err != nil {
			b.Fatal(err)
		}
		_ = res.Context()
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	at := func(q float64) float64 { return float64(times[int(q*float64(len(times)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.5), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
}
