package app_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/jobs"
	"github.com/ragd/ragd/internal/rag"
)

func TestURLSchema(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"postgres://u@h/db", ""},
		{"postgres://u@h/db?sslmode=disable&search_path=ragd", "ragd"},
		{"postgres://u@h/db?search_path=tenant_1,public", "tenant_1"},
		{"postgres://u@h/db?search_path=%22My%20Schema%22,public", "My Schema"},
		{"postgres://u@h/db?search_path=%24user,public", ""},
		{"host=h dbname=db search_path=ragd", "ragd"},
		{"postgres://u@h:notaport/db", ""}, // invalid: Open reports it
	} {
		if got := app.URLSchema(tc.url); got != tc.want {
			t.Errorf("URLSchema(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

func openApp(t *testing.T, cfg config.Config) *app.App {
	t.Helper()
	a, err := app.Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// waitReady polls until the document has no pending version, and fails unless it is then ready.
func waitReady(t *testing.T, a *app.App, id string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		d, err := a.Store.GetDocument(context.Background(), rag.LocalPrincipal, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.PendingHash == "" {
			if d.Status != rag.StatusReady {
				t.Fatalf("document %s: %s (%s)", id, d.Status, d.Error)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("document %s still %s/%s", id, d.Status, d.Stage)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkJobs opens a's runner, checks that a second call returns the same one, and ingests one document
// through it: Submit, EnqueueIngest, and the runner does the rest. Close then stops the runner before the
// store (a runner left working on a closed store would log errors or hang Close).
func checkJobs(t *testing.T, a *app.App) {
	t.Helper()
	ctx := context.Background()
	r, err := a.OpenJobs(ctx, jobs.Options{Work: true})
	if err != nil {
		t.Fatal(err)
	}
	if again, err := a.OpenJobs(ctx, jobs.Options{}); err != nil || again != r || a.Jobs != r {
		t.Fatalf("second OpenJobs: %p %v, want the first runner %p", again, err, r)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	doc, outcome, err := a.Ingest.Submit(ctx, rag.LocalPrincipal, ingest.Request{Name: "a.md", Data: []byte("# 작업\n\n백그라운드에서 처리되는 문서입니다.")})
	if err != nil || outcome != ingest.Queued {
		t.Fatalf("submit: %v %v", outcome, err)
	}
	if err := r.EnqueueIngest(ctx, doc.ID, doc.PendingHash); err != nil {
		t.Fatal(err)
	}
	waitReady(t, a, doc.ID)
	if err := a.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

func TestOpenJobsSQLite(t *testing.T) {
	t.Run("Working", func(t *testing.T) {
		cfg := config.Default()
		cfg.DataDir = t.TempDir()
		a := openApp(t, cfg)
		if _, err := os.Stat(filepath.Join(cfg.DataDir, "jobs.db")); err == nil {
			t.Fatal("jobs.db exists before OpenJobs: commands that run no jobs would pay for it")
		}
		checkJobs(t, a)
		if _, err := os.Stat(filepath.Join(cfg.DataDir, "jobs.db")); err != nil {
			t.Fatalf("jobs.db: %v", err)
		}
	})
	t.Run("InsertOnly", func(t *testing.T) {
		// serve --no-worker: the runner only queues (and registers no periodic job, which River refuses).
		cfg := config.Default()
		cfg.DataDir = t.TempDir()
		a := openApp(t, cfg)
		r, err := a.OpenJobs(context.Background(), jobs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		doc, _, err := a.Ingest.Submit(context.Background(), rag.LocalPrincipal, ingest.Request{Name: "b.md", Data: []byte("queued only")})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.EnqueueIngest(context.Background(), doc.ID, doc.PendingHash); err != nil {
			t.Fatal(err)
		}
		// A worker process (here: a second app on the same data directory) runs it.
		w, err := openApp(t, cfg).OpenJobs(context.Background(), jobs.Options{Work: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		waitReady(t, a, doc.ID)
	})
	t.Run("QueuedUploadSurvivesRestart", func(t *testing.T) {
		// Recorded but never enqueued, as when a server stops right after accepting an upload: the
		// restarted process's runner finds it in its start-up sweep.
		cfg := config.Default()
		cfg.DataDir = t.TempDir()
		a := openApp(t, cfg)
		doc, outcome, err := a.Ingest.Submit(context.Background(), rag.LocalPrincipal,
			ingest.Request{Name: "pending.md", Data: []byte("# 보류\n\n재시작 뒤에도 처리되어야 하는 문서입니다.")})
		if err != nil || outcome != ingest.Queued {
			t.Fatalf("submit: %v %v", outcome, err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		restarted := openApp(t, cfg)
		r, err := restarted.OpenJobs(context.Background(), jobs.Options{Work: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		waitReady(t, restarted, doc.ID)
	})
}

func TestOpenJobsPostgres(t *testing.T) {
	base := os.Getenv("RAGD_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("RAGD_TEST_DATABASE_URL is not set: start PGlite with `scripts/pglite.sh start` and export the URL it prints")
	}
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	schema := "app_" + hex.EncodeToString(b)
	pool, err := pgxpool.New(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.DatabaseURL = base + sep + "search_path=" + schema + ",public"
	checkJobs(t, openApp(t, cfg))
	// The store's tables and River's are both in the URL's schema.
	for _, table := range []string{"documents", "river_job", "ragd_job_client"} {
		var found *string
		if err := pool.QueryRow(context.Background(), "SELECT to_regclass($1)::text", schema+"."+table).Scan(&found); err != nil {
			t.Fatal(err)
		}
		if found == nil {
			t.Errorf("no table %s in schema %s", table, schema)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "jobs.db")); err == nil {
		t.Error("jobs.db created on PostgreSQL")
	}
}
