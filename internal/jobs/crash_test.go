package jobs

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv("RAGD_JOBS_PIPELINE_HELPER"); dir != "" {
		pipelineHelper(dir)
		return
	}
	if path := os.Getenv("RAGD_JOBS_CRASH_HELPER"); path != "" {
		crashHelper(path, os.Getenv("RAGD_JOBS_CRASH_MARKER"))
		return
	}
	os.Exit(m.Run())
}

// crashHelper is a worker process that takes a job, says so by writing marker, and hangs until killed.
func crashHelper(path, marker string) {
	proc := newTestProc()
	proc.fn = func(ctx context.Context, n int, doc string, a ingest.Attempt) error {
		if err := os.WriteFile(marker, []byte(doc), 0o600); err != nil {
			panic(err)
		}
		select {}
	}
	opt := testOptions(nil)
	opt.ID = "crash-helper"
	r, err := OpenSQLite(context.Background(), path, nil, proc, opt)
	if err != nil {
		panic(err)
	}
	if err := r.Start(context.Background()); err != nil {
		panic(err)
	}
	select {}
}

// TestWorkerKilled kills (SIGKILL) a worker process in the middle of a job and starts another: the job is
// released at once — not after River's rescue horizon nor a heartbeat timeout — and worked again; on its
// last attempt it is given up and the document marked failed instead, so that a file that kills its worker
// cannot do so forever.
func TestWorkerKilled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		maxAttempts int
	}{{"Released", 3}, {"LastAttemptAbandoned", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path, marker := filepath.Join(dir, "jobs.db"), filepath.Join(dir, "marker")

			pre := openRunner(t, path, nil, nil, Options{MaxAttempts: tc.maxAttempts})
			if err := pre.EnqueueIngest(t.Context(), "d1", "h1"); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "RAGD_JOBS_CRASH_HELPER="+path, "RAGD_JOBS_CRASH_MARKER="+marker)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the helper to take the job", func() bool { _, err := os.Stat(marker); return err == nil })
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if s := jobStateOf(t, pre, "d1"); s != rivertype.JobStateRunning {
				t.Fatalf("job %s after the kill, want running", s)
			}

			proc := newTestProc()
			opt := testOptions(t)
			opt.DeadAfter = 10 * time.Minute // only the dead-process check can release the job in time
			r := openRunner(t, path, nil, proc, opt)
			restarted := time.Now()
			start(t, r)
			if tc.maxAttempts > 1 {
				waitFor(t, "the job to complete", func() bool { return jobStateOf(t, r, "d1") == rivertype.JobStateCompleted })
				t.Logf("job released and completed %s after the restart", time.Since(restarted).Round(time.Millisecond))
				if n := proc.count("d1"); n != 1 {
					t.Fatalf("processed %d times after the restart, want 1", n)
				}
				j := ingestJobs(t, r)[0]
				if len(j.Errors) != 1 || !strings.Contains(j.Errors[0].Error, "crash-helper stopped") {
					t.Fatalf("job errors = %+v, want the dead worker's", j.Errors)
				}
				return
			}
			waitFor(t, "the job to be discarded", func() bool { return jobStateOf(t, r, "d1") == rivertype.JobStateDiscarded })
			if n := proc.count("d1"); n != 0 {
				t.Fatalf("processed %d times, want 0", n)
			}
			proc.mu.Lock()
			defer proc.mu.Unlock()
			if reason := proc.abandoned["d1"]; rag.ErrorCode(reason) != rag.CodeInternal {
				t.Fatalf("abandoned with %v, want an internal error", reason)
			}
		})
	}
}

// pipelineHelper is a ragd worker process on the data directory dir: the real pipeline, one job at a time.
func pipelineHelper(dir string) {
	e, _, err := newPipelineEnv(dir, nil, testLogger(nil))
	if err != nil {
		panic(err)
	}
	opt := testOptions(nil)
	opt.ID, opt.IngestWorkers = "pipeline-helper", 1
	r, err := OpenSQLite(context.Background(), filepath.Join(dir, "jobs.db"), e.store, e.pipe, opt)
	if err != nil {
		panic(err)
	}
	if err := r.Start(context.Background()); err != nil {
		panic(err)
	}
	select {}
}

// TestCrashMidIngestion uploads 20 files, lets a worker process ingest some of them, kills it (SIGKILL)
// while it is in the middle of one, and starts another worker on the same data directory: all 20 become
// ready, each indexed exactly once (one version, no duplicate chunks), none left queued or processing.
func TestCrashMidIngestion(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("ingests 20 files, PDFs among them: too slow for -short and -race")
	}
	t.Parallel()
	dir := t.TempDir()
	e := openPipeline(t, dir, nil)
	pre := openRunner(t, filepath.Join(dir, "jobs.db"), nil, nil, Options{}) // the API process: insert only
	files := crashFiles(t)
	names := slices.Sorted(maps.Keys(files))
	var ids []string
	for _, name := range names {
		ids = append(ids, e.submit(t, pre, name, files[name]).ID)
	}
	ready := func() (n int) {
		for _, id := range ids {
			if e.doc(t, id).Status == rag.StatusReady {
				n++
			}
		}
		return n
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RAGD_JOBS_PIPELINE_HELPER="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the worker to index two documents", func() bool { return ready() >= 2 })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	atKill := ready()
	running := 0
	for _, j := range ingestJobs(t, pre) {
		if j.State == rivertype.JobStateRunning {
			running++
		}
	}
	t.Logf("killed the worker with %d of 20 documents ready and %d job(s) running", atKill, running)
	if atKill == 20 || running == 0 {
		t.Fatalf("the worker was not killed mid-ingestion (%d ready, %d running)", atKill, running)
	}

	opt := testOptions(t)
	opt.DeadAfter = 10 * time.Minute // only the dead-process check can release the job in time
	r := e.runner(t, opt)
	start(t, r)
	waitForLong(t, "all 20 documents ready", 5*time.Minute, func() bool { return ready() == 20 })
	for _, id := range ids {
		e.checkIndexedOnce(t, id)
	}
	left, err := e.store.DocumentsByStatus(context.Background(), []rag.Status{rag.StatusQueued, rag.StatusProcessing, rag.StatusFailed}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("%d documents left queued, processing or failed", len(left))
	}
}
