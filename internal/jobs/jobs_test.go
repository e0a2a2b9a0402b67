package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/migration"
	"github.com/ragd/ragd/internal/rag"
)

// These tests run River for real on temp-file SQLite. The processor below stands in for the ingestion
// pipeline only where a test needs to make an attempt fail or block on cue; pipeline_test.go runs the real
// ingest.Pipeline.

// testProc counts and scripts ingestion attempts, and keeps the documents' pending state like the
// pipeline does (cleared on success or final failure).
type testProc struct {
	mu        sync.Mutex
	docs      map[string]*rag.Document
	runs      map[string]int // attempts per document
	calls     []ingest.Attempt
	abandoned map[string]error
	// fn scripts the n-th attempt (1-based) at doc; nil succeeds.
	fn func(ctx context.Context, n int, doc string, a ingest.Attempt) error
}

func newTestProc() *testProc {
	return &testProc{docs: map[string]*rag.Document{}, runs: map[string]int{}, abandoned: map[string]error{}}
}

func (p *testProc) add(id string, status rag.Status, pending string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.docs[id] = &rag.Document{ID: id, Status: status, PendingHash: pending}
}

func (p *testProc) ProcessAttempt(ctx context.Context, doc string, a ingest.Attempt) error {
	p.mu.Lock()
	p.runs[doc]++
	n := p.runs[doc]
	p.calls = append(p.calls, a)
	fn := p.fn
	p.mu.Unlock()
	var err error
	if fn != nil {
		err = fn(ctx, n, doc, a)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.docs[doc]; d != nil {
		switch {
		case err == nil:
			d.Status, d.PendingHash = rag.StatusReady, ""
		case a.Retry && ingest.Transient(err):
			d.Status = rag.StatusQueued
		case !errors.Is(ctx.Err(), context.Canceled):
			d.Status, d.PendingHash = rag.StatusFailed, ""
		}
	}
	return err
}

func (p *testProc) Abandon(ctx context.Context, doc, hash string, reason error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.abandoned[doc] = reason
	return nil
}

func (p *testProc) PendingDocuments(ctx context.Context, limit int) ([]*rag.Document, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*rag.Document
	for _, d := range p.docs {
		if d.PendingHash != "" && len(out) < limit {
			c := *d
			out = append(out, &c)
		}
	}
	return out, nil
}

func (p *testProc) count(doc string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs[doc]
}

func (p *testProc) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, v := range p.runs {
		n += v
	}
	return n
}

func testLogger(t testing.TB) *slog.Logger { // t may be nil (the crash helper)
	if os.Getenv("RAGD_JOBS_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	_ = t
	return slog.New(slog.DiscardHandler)
}

func testOptions(t testing.TB) Options {
	return Options{
		Work: true, IngestWorkers: 2, MaxAttempts: 3,
		RetryBase: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond,
		// A worker of this process never dies in these tests, so a generous DeadAfter costs nothing and keeps
		// slow runs from mistaking a busy worker for a dead one: under -race on a loaded machine (load 20 on two
		// cores) a heartbeat was seen 5 s old and TwoRunnersSplitJobs ran two jobs twice. A worker without any
		// heartbeat (ReconcileAndReleaseOrphan) or whose process is gone (crash_test.go) is dead regardless.
		Heartbeat: 100 * time.Millisecond, DeadAfter: time.Minute,
		PollInterval: 50 * time.Millisecond, StopTimeout: 10 * time.Second,
		Logger: testLogger(t), testOnly: true,
	}
}

func start(t testing.TB, r *Runner) {
	t.Helper()
	if err := r.Start(context.Background()); err != nil {
		t.Fatalf("start: %v", err)
	}
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	waitForLong(t, what, time.Minute, cond)
}

// waitForLong fails the test when cond is still false after d: a bound against hanging, not a speed check.
func waitForLong(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ingestJobs returns the ingestion jobs of the database, oldest first.
func ingestJobs(t testing.TB, r *Runner) []*rivertype.JobRow {
	t.Helper()
	res, err := r.client.JobList(context.Background(), river.NewJobListParams().Kinds(IngestArgs{}.Kind()).
		States(rivertype.JobStateAvailable, rivertype.JobStateCancelled, rivertype.JobStateCompleted, rivertype.JobStateDiscarded,
			rivertype.JobStatePending, rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled).
		OrderBy(river.JobListOrderByID, river.SortOrderAsc).First(10000))
	if err != nil {
		t.Fatalf("list jobs: %v", err)
	}
	return res.Jobs
}

func jobStateOf(t testing.TB, r *Runner, doc string) rivertype.JobState {
	t.Helper()
	var state rivertype.JobState
	for _, j := range ingestJobs(t, r) {
		var a IngestArgs
		if err := unmarshalArgs(j, &a); err != nil {
			t.Fatal(err)
		}
		if a.DocumentID == doc {
			state = j.State
		}
	}
	return state
}

func TestEnqueueIngest(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		t.Run("Processed", func(t *testing.T) {
			b.parallel(t)
			proc := newTestProc()
			r := b.open(t, b.fresh(t), nil, proc, testOptions(t))
			start(t, r)
			if err := r.EnqueueIngest(t.Context(), "d1", "h1"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "job completed", func() bool { return jobStateOf(t, r, "d1") == rivertype.JobStateCompleted })
			if n := proc.count("d1"); n != 1 {
				t.Fatalf("processed %d times, want 1", n)
			}
			if a := proc.calls[0]; a.ContentHash != "h1" || !a.Retry {
				t.Fatalf("attempt = %+v, want hash h1 with retry", a)
			}
		})

		t.Run("ErrInvalid", func(t *testing.T) {
			b.parallel(t)
			r := b.open(t, b.fresh(t), nil, nil, Options{})
			for _, args := range [][2]string{{"", "h"}, {"d", ""}} {
				if err := r.EnqueueIngest(t.Context(), args[0], args[1]); rag.ErrorCode(err) != rag.CodeInvalid {
					t.Fatalf("EnqueueIngest(%q, %q) = %v, want invalid_request", args[0], args[1], err)
				}
			}
		})

		t.Run("UniquePerVersion", func(t *testing.T) {
			b.parallel(t)
			proc := newTestProc()
			r := b.open(t, b.fresh(t), nil, proc, testOptions(t))
			for range 3 {
				if err := r.EnqueueIngest(t.Context(), "d1", "h1"); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.EnqueueIngest(t.Context(), "d1", "h2"); err != nil { // a new version is a new job
				t.Fatal(err)
			}
			if n := len(ingestJobs(t, r)); n != 2 {
				t.Fatalf("%d jobs, want 2 (d1/h1 and d1/h2)", n)
			}
			start(t, r)
			waitFor(t, "both jobs completed", func() bool {
				for _, j := range ingestJobs(t, r) {
					if j.State != rivertype.JobStateCompleted {
						return false
					}
				}
				return true
			})
			if n := proc.count("d1"); n != 2 {
				t.Fatalf("processed %d times, want 2 (one per version)", n)
			}
		})

		t.Run("UniqueWhileRunning", func(t *testing.T) {
			b.parallel(t)
			proc := newTestProc()
			running, release := make(chan struct{}), make(chan struct{})
			proc.fn = func(ctx context.Context, n int, doc string, a ingest.Attempt) error {
				close(running)
				<-release
				return nil
			}
			r := b.open(t, b.fresh(t), nil, proc, testOptions(t))
			start(t, r)
			if err := r.EnqueueIngest(t.Context(), "d1", "h1"); err != nil {
				t.Fatal(err)
			}
			<-running
			if err := r.EnqueueIngest(t.Context(), "d1", "h1"); err != nil {
				t.Fatal(err)
			}
			close(release)
			waitFor(t, "job completed", func() bool { return jobStateOf(t, r, "d1") == rivertype.JobStateCompleted })
			if n := len(ingestJobs(t, r)); n != 1 {
				t.Fatalf("%d jobs, want 1", n)
			}
		})
	})
}

func TestRetries(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		t.Run("TransientThenSuccess", func(t *testing.T) {
			b.parallel(t)
			proc := newTestProc()
			proc.add("d1", rag.StatusQueued, "h1")
			proc.fn = func(ctx context.Context, n int, doc string, a ingest.Attempt) error {
				if n < 3 {
					return rag.Errorf(rag.CodeEmbeddingFailed, "embedder unavailable")
				}
				return nil
			}
			r := b.open(t, b.fresh(t), proc, proc, testOptions(t)) // MaxAttempts 3
			start(t, r)
			if err := r.EnqueueIngest(t.Context(), "d1", "h1"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "job completed", func() bool { return jobStateOf(t, r, "d1") == rivertype.JobStateCompleted })
			if n := proc.count("d1"); n != 3 {
				t.Fatalf("%d attempts, want 3", n)
			}
			// The first two attempts were told they would be retried; the last one that it was final.
			want := []bool{true, true, false}
			for i, a := range proc.calls {
				if a.Retry != want[i] {
					t.Fatalf("attempt %d: Retry = %v, want %v", i+1, a.Retry, want[i])
				}
			}
			j := ingestJobs(t, r)[0]
			if len(j.Errors) != 2 {
				t.Fatalf("job recorded %d errors, want 2", len(j.Errors))
			}
		})

		t.Run("TransientExhausted", func(t *testing.T) {
			b.parallel(t)
			proc := newTestProc()
			proc.add("d1", rag.StatusQueued, "h1")
			proc.fn = func(ctx context.Context, n int, doc string, a ingest.Attempt) error {
				return rag.Errorf(rag.CodeDBError, "database unavailable")
			}
			r := b.open(t, b.fresh(t), proc, proc, testOptions(t))
			start(t, r)
			if err := r.EnqueueIngest(t.Context(), "d1", "h1"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "job discarded", func() bool { return jobStateOf(t, r, "d1") == rivertype.JobStateDiscarded })
			if n := proc.count("d1"); n != 3 {
				t.Fatalf("%d attempts, want MaxAttempts = 3", n)
			}
			if last := proc.calls[2]; last.Retry {
				t.Fatal("last attempt was told it would be retried")
			}
		})

		t.Run("PermanentNotRetried", func(t *testing.T) {
			b.parallel(t)
			proc := newTestProc()
			proc.fn = func(ctx context.Context, n int, doc string, a ingest.Attempt) error {
				return rag.Errorf(rag.CodeUnsupportedMediaType, "unsupported file type")
			}
			r := b.open(t, b.fresh(t), nil, proc, testOptions(t))
			start(t, r)
			if err := r.EnqueueIngest(t.Context(), "d1", "h1"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "job cancelled", func() bool { return jobStateOf(t, r, "d1") == rivertype.JobStateCancelled })
			if n := proc.count("d1"); n != 1 {
				t.Fatalf("%d attempts, want 1", n)
			}
		})

		t.Run("PanicRetried", func(t *testing.T) {
			b.parallel(t)
			proc := newTestProc()
			proc.fn = func(ctx context.Context, n int, doc string, a ingest.Attempt) error {
				if n == 1 {
					panic("extractor bug")
				}
				return nil
			}
			r := b.open(t, b.fresh(t), nil, proc, testOptions(t))
			start(t, r)
			if err := r.EnqueueIngest(t.Context(), "d1", "h1"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "job completed", func() bool { return jobStateOf(t, r, "d1") == rivertype.JobStateCompleted })
			if n := proc.count("d1"); n != 2 {
				t.Fatalf("%d attempts, want 2", n)
			}
		})

		t.Run("PanicOnLastAttemptAbandons", func(t *testing.T) {
			b.parallel(t)
			proc := newTestProc()
			proc.fn = func(ctx context.Context, n int, doc string, a ingest.Attempt) error { panic("extractor bug") }
			opt := testOptions(t)
			opt.MaxAttempts = 1
			r := b.open(t, b.fresh(t), nil, proc, opt)
			start(t, r)
			if err := r.EnqueueIngest(t.Context(), "d1", "h1"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "job discarded", func() bool { return jobStateOf(t, r, "d1") == rivertype.JobStateDiscarded })
			proc.mu.Lock()
			defer proc.mu.Unlock()
			if rag.ErrorCode(proc.abandoned["d1"]) != rag.CodeInternal {
				t.Fatalf("abandoned with %v, want an internal error", proc.abandoned["d1"])
			}
		})
	})
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	b := &backoff{base: time.Second, max: 10 * time.Second}
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {4, 8 * time.Second}, {5, 10 * time.Second}, {30, 10 * time.Second}} {
		now := time.Now()
		got := b.NextRetry(&rivertype.JobRow{Attempt: tc.attempt}).Sub(now)
		if got < tc.want*9/10 || got > tc.want*11/10+time.Millisecond {
			t.Errorf("attempt %d: next retry in %s, want %s ±10%%", tc.attempt, got, tc.want)
		}
	}
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		proc := newTestProc()
		proc.add("queued", rag.StatusQueued, "h1")
		proc.add("processing", rag.StatusProcessing, "h2")
		proc.add("enqueued", rag.StatusQueued, "h3") // its job exists already
		proc.add("failed", rag.StatusFailed, "")
		proc.add("ready", rag.StatusReady, "")
		proc.add("ready-next", rag.StatusReady, "h4") // a new version submitted, its job lost in a crash
		proc.add("queued-no-pending", rag.StatusQueued, "")
		db := b.fresh(t)

		pre := b.open(t, db, nil, nil, Options{}) // the process that crashed after one enqueue
		if err := pre.EnqueueIngest(t.Context(), "enqueued", "h3"); err != nil {
			t.Fatal(err)
		}

		r := b.open(t, db, proc, proc, testOptions(t))
		n, err := r.Reconcile(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Fatalf("reconcile enqueued %d, want 3 (queued, processing, ready with a next version)", n)
		}
		start(t, r) // reconciles again: nothing new
		waitFor(t, "four documents processed", func() bool {
			return proc.count("queued") == 1 && proc.count("processing") == 1 && proc.count("enqueued") == 1 && proc.count("ready-next") == 1
		})
		waitFor(t, "jobs completed", func() bool {
			for _, j := range ingestJobs(t, r) {
				if j.State != rivertype.JobStateCompleted {
					return false
				}
			}
			return true
		})
		if n := len(ingestJobs(t, r)); n != 4 {
			t.Fatalf("%d jobs, want 4", n)
		}
		if total := proc.total(); total != 4 {
			t.Fatalf("%d attempts in all, want 4", total)
		}
	})
}

func TestPeriodic(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		t.Run("Fires", func(t *testing.T) {
			b.parallel(t)
			var mu sync.Mutex
			runs := 0
			r := b.open(t, b.fresh(t), nil, newTestProc(), testOptions(t))
			err := r.AddPeriodic("tick", Every(time.Second), func(ctx context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				runs++
				return nil
			}, &PeriodicOptions{RunOnStart: true})
			if err != nil {
				t.Fatal(err)
			}
			start(t, r)
			waitFor(t, "two runs", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return runs >= 2
			})
		})

		t.Run("ErrInvalid", func(t *testing.T) {
			b.parallel(t)
			r := b.open(t, b.fresh(t), nil, newTestProc(), testOptions(t))
			noop := func(context.Context) error { return nil }
			for _, name := range []string{"", "Upper", "has space", string(make([]byte, 65))} {
				if err := r.AddPeriodic(name, Every(time.Minute), noop, nil); err == nil {
					t.Errorf("AddPeriodic(%q) succeeded", name)
				}
			}
			if err := r.AddPeriodic("purge", Every(time.Minute), noop, nil); err != nil {
				t.Fatal(err)
			}
			if err := r.AddPeriodic("purge", Every(time.Minute), noop, nil); err == nil {
				t.Error("the same name was added twice")
			}
			start(t, r)
			if err := r.AddPeriodic("late", Every(time.Minute), noop, nil); err == nil {
				t.Error("added after start")
			}
		})
	})
}

func TestDaily(t *testing.T) {
	t.Parallel()
	s := Daily(3, 30, time.UTC)
	for _, tc := range []struct{ now, want string }{
		{"2026-01-01T00:00:00Z", "2026-01-01T03:30:00Z"},
		{"2026-01-01T03:30:00Z", "2026-01-02T03:30:00Z"},
		{"2026-12-31T23:59:00Z", "2027-01-01T03:30:00Z"},
	} {
		now, _ := time.Parse(time.RFC3339, tc.now)
		if got := s.Next(now).Format(time.RFC3339); got != tc.want {
			t.Errorf("Next(%s) = %s, want %s", tc.now, got, tc.want)
		}
	}
}

func TestStop(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		t.Run("FinishesRunningJob", func(t *testing.T) {
			b.parallel(t)
			proc := newTestProc()
			running, release := make(chan struct{}), make(chan struct{})
			var cancelled atomic.Bool
			proc.fn = func(ctx context.Context, n int, doc string, a ingest.Attempt) error {
				close(running)
				<-release
				cancelled.Store(ctx.Err() != nil)
				return nil
			}
			r := b.open(t, b.fresh(t), nil, proc, testOptions(t)) // StopTimeout 10s
			start(t, r)
			if err := r.EnqueueIngest(t.Context(), "d1", "h1"); err != nil {
				t.Fatal(err)
			}
			<-running
			stopped := make(chan error, 1)
			go func() { stopped <- r.Stop(context.Background()) }()
			select {
			case err := <-stopped:
				t.Fatalf("Stop returned (%v) while a job was running", err)
			case <-time.After(300 * time.Millisecond):
			}
			close(release)
			if err := <-stopped; err != nil {
				t.Fatal(err)
			}
			if cancelled.Load() {
				t.Fatal("the running job was cancelled")
			}
			if s := jobStateOf(t, r, "d1"); s != rivertype.JobStateCompleted {
				t.Fatalf("job %s after Stop, want completed", s)
			}
		})

		t.Run("ReleasesJobAfterTimeout", func(t *testing.T) {
			b.parallel(t)
			proc := newTestProc()
			running := make(chan struct{}, 1)
			proc.fn = func(ctx context.Context, n int, doc string, a ingest.Attempt) error {
				if n > 1 {
					return nil
				}
				running <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			}
			db := b.fresh(t)
			opt := testOptions(t)
			opt.StopTimeout = 100 * time.Millisecond
			r := b.open(t, db, nil, proc, opt)
			start(t, r)
			if err := r.EnqueueIngest(t.Context(), "d1", "h1"); err != nil {
				t.Fatal(err)
			}
			<-running
			if err := r.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if s := jobStateOf(t, r, "d1"); s != rivertype.JobStateAvailable {
				t.Fatalf("job %s after Stop, want available (released)", s)
			}
			r2 := b.open(t, db, nil, proc, testOptions(t))
			start(t, r2)
			waitFor(t, "job completed by the next runner", func() bool { return jobStateOf(t, r2, "d1") == rivertype.JobStateCompleted })
			j := ingestJobs(t, r2)[0]
			if j.Attempt != 1 {
				t.Fatalf("attempt = %d, want 1 (an interrupted attempt does not count)", j.Attempt)
			}
		})

		t.Run("NotStarted", func(t *testing.T) {
			b.parallel(t)
			r := b.open(t, b.fresh(t), nil, newTestProc(), testOptions(t))
			if err := r.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
		})
	})
}

// TestTwoRunnersSplitJobs runs two Runners, each with its own connection to one jobs database as two
// processes would have, on 40 jobs: every job runs exactly once.
func TestTwoRunnersSplitJobs(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		db := b.fresh(t)
		var mu sync.Mutex
		ranBy := map[string][]string{} // document → runner IDs that processed it
		mk := func(id string) *Runner {
			proc := newTestProc()
			proc.fn = func(ctx context.Context, n int, doc string, a ingest.Attempt) error {
				mu.Lock()
				ranBy[doc] = append(ranBy[doc], id)
				mu.Unlock()
				time.Sleep(20 * time.Millisecond) // hold a worker slot like real work does
				return nil
			}
			opt := testOptions(t)
			opt.ID = id
			return b.open(t, db, nil, proc, opt)
		}
		ra, rb := mk("runner-a"), mk("runner-b")
		start(t, ra)
		start(t, rb)
		for i := range 40 {
			if err := ra.EnqueueIngest(t.Context(), fmt.Sprintf("doc-%02d", i), "h"); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, "40 jobs completed", func() bool {
			jobs := ingestJobs(t, ra)
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
		if len(ranBy) != 40 {
			t.Errorf("%d documents processed, want 40", len(ranBy))
		}
		t.Logf("split: %v", per)
		if per["runner-a"] == 0 || per["runner-b"] == 0 {
			t.Errorf("one runner did all the work: %v", per)
		}
	})
}

// TestConcurrentOpen opens several Runners on a new jobs database at once, as processes started together
// do: River's migrations must converge without failing any of them.
func TestConcurrentOpen(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		db := b.fresh(t)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			open := b.connect(t, db) // a connection each, as separate processes
			wg.Go(func() {
				r, err := open(context.Background(), nil, nil, Options{Logger: testLogger(t)})
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
}

// TestMigrations: the heartbeat table comes from the numbered migrations of migrate.go, recorded once however
// many runners open; a database from before them (whose runners made the table themselves) keeps the table
// and its rows.
func TestMigrations(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		latest := migration.Latest(sqliteMigrations)
		if b.name == "PostgreSQL" {
			latest = migration.Latest(postgresMigrations)
		}
		t.Run("Fresh", func(t *testing.T) {
			b.parallel(t)
			db := b.fresh(t)
			for range 2 {
				b.open(t, db, nil, nil, Options{Logger: testLogger(t)})
			}
			if n := b.queryInt(t, db, `SELECT count(*) FROM {P}ragd_jobs_migrations`); n != latest {
				t.Errorf("%d migrations recorded, want %d", n, latest)
			}
			if n := b.queryInt(t, db, `SELECT count(*) FROM {P}ragd_job_client`); n != 0 {
				t.Errorf("%d heartbeats in a new database", n)
			}
		})
		t.Run("ExistingTableKept", func(t *testing.T) {
			b.parallel(t)
			db := b.fresh(t)
			// What runners made before the numbered migrations, with a worker's heartbeat in it.
			if b.name == "PostgreSQL" {
				b.exec(t, db, `CREATE SCHEMA IF NOT EXISTS `+strings.TrimSuffix(pgPrefix(db), "."))
				b.exec(t, db, `CREATE TABLE IF NOT EXISTS {P}ragd_job_client (
					id text PRIMARY KEY, host text NOT NULL, pid integer NOT NULL, heartbeat_at timestamptz NOT NULL DEFAULT now())`)
				b.exec(t, db, `INSERT INTO {P}ragd_job_client (id, host, pid, heartbeat_at) VALUES ('old-worker', 'h', 7, now())`)
			} else {
				b.exec(t, db, `CREATE TABLE IF NOT EXISTS ragd_job_client (
					id TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, heartbeat_at INTEGER NOT NULL)`)
				b.exec(t, db, `INSERT INTO ragd_job_client (id, host, pid, heartbeat_at) VALUES ('old-worker', 'h', 7, ?)`, time.Now().UnixMilli())
			}
			r := b.open(t, db, nil, nil, Options{Logger: testLogger(t)})
			beats, err := r.live.list(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(beats) != 1 || beats[0].ID != "old-worker" || beats[0].PID != 7 || beats[0].Age > time.Minute {
				t.Fatalf("heartbeats after migrating: %+v, want old-worker's", beats)
			}
			if n := b.queryInt(t, db, `SELECT count(*) FROM {P}ragd_jobs_migrations`); n != latest {
				t.Errorf("%d migrations recorded, want %d", n, latest)
			}
		})
	})
}
