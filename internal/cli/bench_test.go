package cli

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/jobs"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/server"
)

// benchServer serves a real app with one indexed document.
func benchServer(t *testing.T, mutate func(*config.Config)) string {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.RateLimitSearch, cfg.RateLimitChat = 0, 0
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := app.Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "fixtures", "md", "ko_react_render-and-commit.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Ingest.Ingest(context.Background(), rag.LocalPrincipal, ingest.Request{Name: "render.md", Data: data}); err != nil {
		t.Fatal(err)
	}
	// The bench only searches: an insert-only job runner is enough for the server.
	runner, err := a.OpenJobs(context.Background(), jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(a.ServerDeps(runner))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL
}

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	err := runBench(context.Background(), env, args)
	return out.String() + errOut.String(), err
}

func TestBenchHTTP(t *testing.T) {
	url := benchServer(t, nil)
	out, err := runCLI(t, "http", "--url", url, "--clients", "3", "--duration", "700ms", "--k", "3")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := regexp.MustCompile(`requests  (\d+) in [\d.]+ s \(([\d.]+) requests/s\)\nerrors    0\nlatency   p50 [\d.]+ ms  p95 [\d.]+ ms  p99 [\d.]+ ms  max [\d.]+ ms`).FindStringSubmatch(out)
	if m == nil || m[1] == "0" {
		t.Fatalf("unexpected report:\n%s", out)
	}
}

// TestBenchHTTPChatShare mixes chats into the searches: both kinds succeed and are reported apart, in
// the asked proportion (30 of every client's 100 requests, spread among them).
func TestBenchHTTPChatShare(t *testing.T) {
	url := benchServer(t, nil)
	out, err := runCLI(t, "http", "--url", url, "--clients", "2", "--duration", "1500ms", "--chat-share", "0.3")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := regexp.MustCompile(`requests  (\d+) in [\d.]+ s [^\n]*\nerrors    0\n[^\n]*\nsearch    (\d+) ok, p50 [\d.]+ ms[^\n]*\nchat      (\d+) ok, p50 [\d.]+ ms`).FindStringSubmatch(out)
	if m == nil || m[2] == "0" || m[3] == "0" {
		t.Fatalf("unexpected report:\n%s", out)
	}
	searches, _ := strconv.Atoi(m[2])
	chats, _ := strconv.Atoi(m[3])
	if pct := chats * 100 / (searches + chats); pct < 20 || pct > 35 {
		t.Fatalf("%d%% chats, want about 30%%:\n%s", pct, out)
	}
	if !strings.Contains(out, "30% of them POST /api/chat") {
		t.Fatalf("the header does not say the share:\n%s", out)
	}
	for _, bad := range []string{"-0.1", "1.01"} {
		if _, err := runCLI(t, "http", "--url", url, "--chat-share", bad, "--duration", "100ms"); err == nil || !strings.Contains(err.Error(), "--chat-share") {
			t.Errorf("--chat-share %s: %v", bad, err)
		}
	}
}

func TestBenchHTTPCountsErrors(t *testing.T) {
	url := benchServer(t, func(c *config.Config) { c.APIKeys = []string{"right-key"} })
	out, err := runCLI(t, "http", "--url", url, "--clients", "2", "--duration", "300ms", "--api-key", "wrong-key")
	if err == nil || !strings.Contains(err.Error(), "requests failed") {
		t.Fatalf("err %v, want failed requests\n%s", err, out)
	}
	if !strings.Contains(out, "HTTP 401: ") || strings.Contains(out, "errors    0\n") {
		t.Fatalf("report does not count the 401s:\n%s", out)
	}
	out, err = runCLI(t, "http", "--url", url, "--clients", "2", "--duration", "300ms", "--api-key", "right-key")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

func TestBenchHTTPUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"grpc"}, {"http", "--clients", "0"}, {"http", "--duration", "-1s"}} {
		if _, err := runCLI(t, args...); err == nil {
			t.Errorf("%q: want a usage error", args)
		}
	}
	if _, err := runCLI(t, "http", "--url", "http://127.0.0.1:1", "--duration", "100ms"); err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Errorf("unreachable server: %v", err)
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for p, want := range map[float64]time.Duration{50: 50, 95: 95, 99: 99, 100: 100, 1: 1} {
		if got := percentile(d, p); got != want {
			t.Errorf("p%v = %d, want %d", p, got, want)
		}
	}
	if percentile(nil, 50) != 0 || percentile([]time.Duration{7}, 99) != 7 {
		t.Error("percentile of empty or single-element lists")
	}
}
