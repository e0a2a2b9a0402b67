package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/config"
)

func TestStoreNameHidesSecrets(t *testing.T) {
	cfg := config.Default()
	cfg.DatabaseURL = "postgres://ragd:s3cret@db.internal:6543/prod?sslmode=require&search_path=tenant1,public"
	got := storeName(cfg)
	if got != "postgres db.internal:6543/prod schema tenant1" || strings.Contains(got, "s3cret") {
		t.Fatalf("storeName = %q", got)
	}
	cfg.DatabaseURL = ""
	cfg.DataDir = "/var/lib/ragd"
	if got := storeName(cfg); got != "sqlite /var/lib/ragd" {
		t.Fatalf("storeName = %q", got)
	}
}

func TestWorkerUsage(t *testing.T) {
	for _, args := range [][]string{{"extra"}, {"--concurrency", "65"}, {"--nope"}} {
		var out bytes.Buffer
		env := &Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}
		if err := runWorker(context.Background(), env, args); !errors.Is(err, errUsage) {
			t.Errorf("ragd worker %v: %v, want a usage error", args, err)
		}
	}
}

func TestWorkerRunsUntilCancelled(t *testing.T) {
	// --concurrency at its limit; the worker starts, says what it runs against, and stops when told.
	dir := t.TempDir()
	var out lockedBuffer
	env := &Env{Stdout: &out, Stderr: &out, Getenv: func(k string) string {
		if k == "RAGD_DATA_DIR" {
			return dir
		}
		return ""
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runWorker(ctx, env, []string{"--concurrency", "64"}) }()
	waitOutput(t, &out, done, "64 ingestion jobs at once")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("worker: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "against sqlite "+dir) || !strings.HasSuffix(out.String(), "ragd worker stopped\n") {
		t.Fatalf("output:\n%s", out.String())
	}
}

// lockedBuffer is a bytes.Buffer safe to read while a command writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitOutput waits until out contains want, failing if the command ends first.
func waitOutput(t *testing.T, out *lockedBuffer, done chan error, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), want) {
		select {
		case err := <-done:
			t.Fatalf("ended before printing %q: %v\n%s", want, err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q after a minute:\n%s", want, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
