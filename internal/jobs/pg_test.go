package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/postgres"
)

// The PostgreSQL tests run River's pgx driver against RAGD_TEST_DATABASE_URL (PGlite from
// scripts/pglite.sh, whose pools have one connection sharing one session, or any PostgreSQL), each in a
// schema of its own.

func getenvURL() string { return os.Getenv("RAGD_TEST_DATABASE_URL") }

func pgURL(t testing.TB) string {
	t.Helper()
	url := getenvURL()
	if url == "" {
		t.Skip("RAGD_TEST_DATABASE_URL is not set: start PGlite with `scripts/pglite.sh start` and export the URL it prints")
	}
	return url
}

// pgSchema returns a new schema name, dropped when the test ends.
func pgSchema(t testing.TB, url string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "jobs_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx := context.Background()
		pool, err := pgxpool.New(ctx, url) // a pool: the URL may carry pool settings
		if err != nil {
			t.Errorf("drop test schema: %v", err)
			return
		}
		defer pool.Close()
		if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop test schema: %v", err)
		}
	})
	return schema
}

// pgPool is a pool as the PostgreSQL store makes it (the URL's settings), closed when the test ends.
func pgPool(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func openPGRunner(t testing.TB, pool *pgxpool.Pool, schema string, docs Documents, proc Processor, opt Options) *Runner {
	t.Helper()
	opt.Schema = schema
	r, err := OpenPostgres(context.Background(), pool, docs, proc, opt)
	if err != nil {
		t.Fatalf("open runner: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("close runner: %v", err)
		}
	})
	return r
}

func TestPostgres(t *testing.T) {
	url := pgURL(t)

	t.Run("ProcessedOnce", func(t *testing.T) {
		schema := pgSchema(t, url)
		proc := newTestProc()
		r := openPGRunner(t, pgPool(t, url), schema, nil, proc, testOptions(t))
		for range 2 {
			if err := r.EnqueueIngest(t.Context(), "d1", "h1"); err != nil {
				t.Fatal(err)
			}
		}
		start(t, r)
		waitFor(t, "job completed", func() bool { return jobStateOf(t, r, "d1") == rivertype.JobStateCompleted })
		if n := proc.count("d1"); n != 1 {
			t.Fatalf("processed %d times, want 1", n)
		}
		if n := len(ingestJobs(t, r)); n != 1 {
			t.Fatalf("%d jobs, want 1", n)
		}
	})

	t.Run("TransientRetriedPermanentCancelled", func(t *testing.T) {
		schema := pgSchema(t, url)
		proc := newTestProc()
		proc.fn = func(ctx context.Context, n int, doc string, a ingest.Attempt) error {
			switch {
			case doc == "bad":
				return rag.Errorf(rag.CodeInvalid, "corrupt PDF")
			case n == 1:
				return rag.Errorf(rag.CodeEmbeddingFailed, "embedder unavailable")
			}
			return nil
		}
		r := openPGRunner(t, pgPool(t, url), schema, nil, proc, testOptions(t))
		start(t, r)
		for _, d := range []string{"good", "bad"} {
			if err := r.EnqueueIngest(t.Context(), d, "h"); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, "jobs finished", func() bool {
			return jobStateOf(t, r, "good") == rivertype.JobStateCompleted && jobStateOf(t, r, "bad") == rivertype.JobStateCancelled
		})
		if g, b := proc.count("good"), proc.count("bad"); g != 2 || b != 1 {
			t.Fatalf("attempts: good %d (want 2), bad %d (want 1)", g, b)
		}
	})

	t.Run("ReconcileAndReleaseOrphan", func(t *testing.T) {
		schema := pgSchema(t, url)
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

	t.Run("PeriodicFires", func(t *testing.T) {
		schema := pgSchema(t, url)
		var mu sync.Mutex
		runs := 0
		r := openPGRunner(t, pgPool(t, url), schema, nil, newTestProc(), testOptions(t))
		if err := r.AddPeriodic("tick", Every(time.Second), func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			runs++
			return nil
		}, &PeriodicOptions{RunOnStart: true}); err != nil {
			t.Fatal(err)
		}
		start(t, r)
		waitFor(t, "a periodic run", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return runs >= 1
		})
	})

	t.Run("SharedOneConnectionPool", func(t *testing.T) {
		// As on PGlite: River and the work it runs share the store's only connection.
		schema := pgSchema(t, url)
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

	t.Run("ConcurrentOpen", func(t *testing.T) {
		schema := pgSchema(t, url)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			pool := pgPool(t, url)
			wg.Go(func() {
				r, err := OpenPostgres(context.Background(), pool, nil, nil, Options{Schema: schema, Logger: testLogger(t)})
				if err == nil {
					err = r.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("runner %d: %v", i, err)
			}
		}
	})

	t.Run("TwoRunnersSplitJobs", func(t *testing.T) {
		schema := pgSchema(t, url)
		var mu sync.Mutex
		ranBy := map[string][]string{}
		mk := func(id string) *Runner {
			proc := newTestProc()
			proc.fn = func(ctx context.Context, n int, doc string, a ingest.Attempt) error {
				mu.Lock()
				ranBy[doc] = append(ranBy[doc], id)
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
				return nil
			}
			opt := testOptions(t)
			opt.ID = id
			return openPGRunner(t, pgPool(t, url), schema, nil, proc, opt) // a pool each, as two processes
		}
		a, b := mk("pg-runner-a"), mk("pg-runner-b")
		start(t, a)
		start(t, b)
		for i := range 40 {
			if err := a.EnqueueIngest(t.Context(), fmt.Sprintf("doc-%02d", i), "h"); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, "40 jobs completed", func() bool {
			jobs := ingestJobs(t, a)
			for _, j := range jobs {
				if j.State != rivertype.JobStateCompleted {
					return false
				}
			}
			return len(jobs) == 40
		})
		mu.Lock()
		defer mu.Unlock()
		per := map[string]int{}
		for doc, ids := range ranBy {
			if len(ids) != 1 {
				t.Errorf("%s ran %d times (%v)", doc, len(ids), ids)
			}
			per[ids[0]]++
		}
		t.Logf("split: %v", per)
		if len(ranBy) != 40 || per["pg-runner-a"] == 0 || per["pg-runner-b"] == 0 {
			t.Errorf("%d documents processed, split %v: want 40 shared by both", len(ranBy), per)
		}
	})

	t.Run("PipelineOnPostgres", func(t *testing.T) {
		// The real pipeline on the PostgreSQL store (pgvector), with River's tables in the same schema.
		schema := pgSchema(t, url)
		st, err := postgres.Open(context.Background(), url, postgres.Options{Schema: schema})
		if errors.Is(err, postgres.ErrVector) {
			t.Skipf("no pgvector on this server: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		ex, err := extract.New(extract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ex.Close() })
		e := &pipelineEnv{store: st, pipe: ingest.New(st, ex, hash.New(256), ingest.Options{Logger: testLogger(t)})}
		r := openPGRunner(t, pgPool(t, url), schema, st, e.pipe, testOptions(t))
		pre := e.submit(t, nil, "left-queued.md", fixture(t, "md/ko_react_render-and-commit.md")) // never enqueued
		start(t, r)                                                                               // reconciliation finds it
		d := e.submit(t, r, "html.html", fixture(t, "html/example-10k-1p.html"))
		waitFor(t, "documents ready", func() bool {
			return e.doc(t, pre.ID).Status == rag.StatusReady && e.doc(t, d.ID).Status == rag.StatusReady
		})
		e.checkIndexedOnce(t, pre.ID)
		e.checkIndexedOnce(t, d.ID)
	})
}
