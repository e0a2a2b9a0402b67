package testkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Binary builds cmd/ragd once per test process and returns its path; RemoveBinary (from TestMain) deletes
// it. A failed build fails every test that asks.
func Binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ragd-test-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "ragd")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/ragd")
		cmd.Dir = Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// RemoveBinary deletes the binary Binary built, if any. Call it from TestMain after m.Run.
func RemoveBinary() {
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
}

// Buffer collects a process's output; it is safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Listening matches the line `ragd serve` prints once it listens; its group is the base URL.
var Listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

// Server is a running `ragd serve`.
type Server struct {
	URL    string
	Banner string // the "listening on" line
	Cmd    *exec.Cmd
	Output *Buffer // stdout and stderr
	done   chan error
}

// Serve runs the binary as `ragd serve --addr 127.0.0.1:0 args…` with env (the whole environment: build it
// with CleanEnv) and waits until it listens and answers /readyz. Stop ends it; the test's cleanup stops it too.
func Serve(t testing.TB, env []string, args ...string) *Server {
	t.Helper()
	cmd := exec.Command(Binary(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &Buffer{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{Cmd: cmd, Output: out, done: make(chan error, 1)}
	banner := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			_, _ = out.Write([]byte(line + "\n"))
			if !sent && Listening.MatchString(line) {
				banner <- line
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() { s.Stop(t) })
	select {
	case s.Banner = <-banner:
		s.URL = Listening.FindStringSubmatch(s.Banner)[1]
	case err := <-s.done:
		s.done = nil
		t.Fatalf("ragd exited: %v\n%s", err, out.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("ragd did not start:\n%s", out.String())
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(s.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("ragd not ready: %v\n%s", err, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return s
}

// Stop ends the server with SIGINT (a graceful shutdown) and fails the test unless it stops cleanly within
// 90 s. Stopping a stopped server does nothing.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.done == nil {
		return
	}
	_ = s.Cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("ragd did not stop cleanly: %v\n%s", err, s.Output.String())
		}
	case <-time.After(90 * time.Second):
		_ = s.Cmd.Process.Kill()
		t.Errorf("ragd did not stop within 90 s of SIGINT\n%s", s.Output.String())
	}
	s.done = nil
	if t.Failed() {
		t.Logf("ragd output:\n%s", s.Output.String())
	}
}

// CleanEnv is this process's environment without the variables that configure ragd or its providers
// (RAGD_*, OPENAI_*, GEMINI_*, GOOGLE_*, ANTHROPIC_*), so that a developer's settings do not leak into a
// test's ragd, followed by extra.
func CleanEnv(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := bytes.Cut([]byte(kv), []byte("="))
		if hasAnyPrefix(string(name), "RAGD_", "OPENAI_", "GEMINI_", "GOOGLE_", "ANTHROPIC_") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, extra...)
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if len(s) >= len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}

// Call sends a request to the server with key in X-RAG-API-Key ("" for none) and body as JSON (nil for
// none), and returns the status and the body.
func (s *Server) Call(t testing.TB, key, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-RAG-API-Key", key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
