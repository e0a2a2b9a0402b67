package jobs

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/ragd/ragd/internal/testkit"
)

// The benchmarks measure River's own cost per ingestion job (the processor does nothing), on SQLite and, when
// RAGD_TEST_DATABASE_URL is set, on PostgreSQL:
//
//	go test -run '^$' -bench . -benchtime 500x ./internal/jobs

func benchRunners(b *testing.B) map[string]func(b *testing.B, proc Processor, opt Options) *Runner {
	m := map[string]func(b *testing.B, proc Processor, opt Options) *Runner{
		"sqlite": func(b *testing.B, proc Processor, opt Options) *Runner {
			return openRunner(b, filepath.Join(b.TempDir(), "jobs.db"), nil, proc, opt)
		},
	}
	if url := getenvURL(); url != "" {
		m["postgres"] = func(b *testing.B, proc Processor, opt Options) *Runner {
			return openPGRunner(b, pgPool(b, url), testkit.Schema(b, url, "jobs_"), nil, proc, opt)
		}
	}
	return m
}

// BenchmarkEnqueueIngest is the cost of one EnqueueIngest, as the upload handler pays it before its 202.
func BenchmarkEnqueueIngest(b *testing.B) {
	for name, open := range benchRunners(b) {
		b.Run(name, func(b *testing.B) {
			r := open(b, nil, Options{Logger: testLogger(b)})
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				if err := r.EnqueueIngest(ctx, fmt.Sprintf("doc-%d", i), "h"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkJobThroughput is enqueue-to-completion of b.N jobs by one working Runner with 4 workers.
func BenchmarkJobThroughput(b *testing.B) {
	for name, open := range benchRunners(b) {
		b.Run(name, func(b *testing.B) {
			opt := testOptions(b)
			opt.IngestWorkers = 4
			r := open(b, newTestProc(), opt)
			start(b, r)
			ctx := context.Background()
			b.ResetTimer()
			begin := time.Now()
			for i := range b.N {
				if err := r.EnqueueIngest(ctx, fmt.Sprintf("doc-%d", i), "h"); err != nil {
					b.Fatal(err)
				}
			}
			waitForLong(b, "jobs completed", 10*time.Minute, func() bool {
				jobs := ingestJobs(b, r)
				for _, j := range jobs {
					if j.State != rivertype.JobStateCompleted {
						return false
					}
				}
				return len(jobs) == b.N
			})
			b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "jobs/s")
		})
	}
}
