package jobs

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"

	"github.com/ragd/ragd/internal/testkit"
)

// What only PostgreSQL has: a worker that died holding a job seen through River's own fetch (on SQLite,
// crash_test.go kills a real worker process), and River sharing a one-connection pool with the work it runs.
// The rest of the suite runs on both engines (backend_test.go).

func pgURL(t testing.TB) string {
	t.Helper()
	url := getenvURL()
	if url == "" {
		t.Skip("RAGD_TEST_DATABASE_URL is not set: start PGlite with `scripts/pglite.sh start` and export the URL it prints")
	}
	return url
}

// openPGRunner opens a runner on pool with River's tables in schema, closed when the test ends.
func openPGRunner(t testing.TB, pool *pgxpool.Pool, schema string, docs Documents, proc Processor, opt Options) *Runner {
	t.Helper()
	opt.Schema = schema
	return closeAtEnd(t)(OpenPostgres(context.Background(), pool, docs, proc, opt))
}

func TestPostgres(t *testing.T) {
	url := pgURL(t)

	t.Run("ReconcileAndReleaseOrphan", func(t *testing.T) {
		schema := testkit.Schema(t, url, "jobs_")
		pool := pgPool(t, url)
		proc := newTestProc()
		proc.add("orphan", rag.StatusProcessing, "h1")
		proc.add("lost", rag.StatusQueued, "h2")
		pre := openPGRunner(t, pool, schema, nil, nil, Options{})
		if err := pre.EnqueueIngest(t.Context(), "orphan", "h1"); err != nil {
			t.Fatal(err)
		}
		// A worker that died holding the job: River's own fetch, as that worker's client.
		got, err := pre.exec.JobGetAvailable(t.Context(), &riverdriver.JobGetAvailableParams{
			ClientID: "dead-worker", MaxAttemptedBy: 10, MaxToLock: 1, Queue: queueIngest, Schema: schema,
		})
		if err != nil || len(got) != 1 {
			t.Fatalf("take the job as a dead worker: %v (%d jobs)", err, len(got))
		}
		r := openPGRunner(t, pool, schema, proc, proc, testOptions(t))
		start(t, r)
		waitFor(t, "both documents processed", func() bool { return proc.count("orphan") == 1 && proc.count("lost") == 1 })
		waitFor(t, "jobs completed", func() bool {
			return jobStateOf(t, r, "orphan") == rivertype.JobStateCompleted && jobStateOf(t, r, "lost") == rivertype.JobStateCompleted
		})
		if n := len(ingestJobs(t, r)); n != 2 {
			t.Fatalf("%d jobs, want 2", n)
		}
	})

	t.Run("SharedOneConnectionPool", func(t *testing.T) {
		// As on PGlite: River and the work it runs share the store's only connection.
		schema := testkit.Schema(t, url, "jobs_")
		cfg, err := pgxpool.ParseConfig(url)
		if err != nil {
			t.Fatal(err)
		}
		cfg.MaxConns = 1
		pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		proc := newTestProc()
		proc.fn = func(ctx context.Context, n int, doc string, a ingest.Attempt) error {
			var one int
			return pool.QueryRow(ctx, "SELECT 1").Scan(&one)
		}
		r := openPGRunner(t, pool, schema, nil, proc, testOptions(t))
		start(t, r)
		for i := range 10 {
			if err := r.EnqueueIngest(t.Context(), fmt.Sprintf("doc-%d", i), "h"); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, "10 jobs completed", func() bool {
			jobs := ingestJobs(t, r)
			for _, j := range jobs {
				if j.State != rivertype.JobStateCompleted {
					return false
				}
			}
			return len(jobs) == 10
		})
		if n := proc.total(); n != 10 {
			t.Fatalf("%d attempts, want 10", n)
		}
	})

}
