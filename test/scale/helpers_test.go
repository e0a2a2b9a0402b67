package scale

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/testkit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveBinary()
	os.Exit(code)
}

// backend is where the processes of a test keep their data: a data directory, or a PostgreSQL schema.
type backend struct {
	name    string
	dataDir string
	url     string // RAGD_DATABASE_URL with search_path set to the test's schema; "" for SQLite
	schema  string
}

// backends returns the embedded store (a fresh data directory) and, when RAGD_TEST_DATABASE_URL is set,
// PostgreSQL (a fresh schema, dropped when the test ends). Each runs as a subtest of its name; the
// PostgreSQL subtest is skipped, saying why, when the variable is not set.
func eachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	t.Run("SQLite", func(t *testing.T) {
		f(t, backend{name: "sqlite", dataDir: t.TempDir()})
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		f(t, pgBackend(t))
	})
}

func pgBackend(t *testing.T) backend {
	t.Helper()
	base := testkit.DatabaseURL(t)
	schema := testkit.Schema(t, base, "scale_")
	return backend{name: "postgres", dataDir: t.TempDir(), url: testkit.SearchPath(base, schema), schema: schema}
}

// env is the environment of a ragd process on b: the test's own RAGD_* variables are left out so that a
// developer's settings do not leak in.
func (b backend) env(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RAGD_") {
			out = append(out, kv)
		}
	}
	out = append(out, "RAGD_DATA_DIR="+b.dataDir, "RAGD_LOG_LEVEL=info")
	if b.url != "" {
		out = append(out, "RAGD_DATABASE_URL="+b.url)
	}
	return append(out, extra...)
}

// openApp opens the store the processes used, in this process, for checks once they have stopped.
func (b backend) openApp(t *testing.T) *app.App {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir, cfg.DatabaseURL = b.dataDir, b.url
	a, err := app.Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// process is a running ragd command.
type process struct {
	name string
	cmd  *exec.Cmd
	out  *testkit.Buffer // stdout and stderr
	done chan struct{}
	err  error // of Wait, once done is closed
}

// start runs `ragd args…` with env and waits until its stdout matches ready; it returns the process and the
// match. The process is killed when the test ends if it still runs.
func start(t *testing.T, name string, env []string, ready *regexp.Regexp, args ...string) (*process, []string) {
	t.Helper()
	p := &process{name: name, cmd: exec.Command(testkit.Binary(t), args...), out: &testkit.Buffer{}, done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stderr = p.out
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	matched := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			_, _ = p.out.Write([]byte(line + "\n"))
			if m := ready.FindStringSubmatch(line); m != nil && !sent {
				matched <- m
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("output of %s:\n%s", p.name, tail(p.out.String(), 6000))
		}
	})
	select {
	case m := <-matched:
		return p, m
	case <-p.done:
		t.Fatalf("%s exited before it was ready: %v\n%s", name, p.err, p.out.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s not ready after 2 minutes:\n%s", name, p.out.String())
	}
	return nil, nil
}

var listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

// serve starts `ragd serve` on a free port and returns it and its base URL.
func serve(t *testing.T, name string, b backend, args ...string) (*process, string) {
	t.Helper()
	p, m := start(t, name, b.env(), listening, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	return p, m[1]
}

// kill ends the process with SIGKILL, as a crash or an OOM killer would.
func (p *process) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

// stop ends the process with SIGINT and fails the test unless it shuts down cleanly.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not stop within 2 minutes after SIGINT", p.name)
	}
	if p.err != nil {
		t.Fatalf("%s did not stop cleanly: %v\n%s", p.name, p.err, tail(p.out.String(), 6000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// upload is one file of a multipart upload.
type upload struct {
	name string
	data []byte
}

// doc is a document as the API lists it.
type doc struct {
	ID         string     `json:"id"`
	Source     string     `json:"source"`
	Status     rag.Status `json:"status"`
	Stage      rag.Stage  `json:"stage"`
	Pending    bool       `json:"pending"`
	Version    int        `json:"version"`
	ChunkCount int        `json:"chunk_count"`
	Error      string     `json:"error"`
}

// uploadFiles posts files in one multipart request and returns the documents the server queued.
func uploadFiles(t *testing.T, base string, files []upload) []doc {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range files {
		w, err := mw.CreateFormFile("file", f.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(base+"/api/documents", mw.FormDataContentType(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("upload: %d %s", resp.StatusCode, body)
	}
	var out struct{ Documents []doc }
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Documents) != len(files) {
		t.Fatalf("upload queued %d documents, want %d", len(out.Documents), len(files))
	}
	return out.Documents
}

// listDocuments returns every document (up to 500) by ID, through the API.
func listDocuments(t *testing.T, base string) map[string]doc {
	t.Helper()
	resp, err := http.Get(base + "/api/documents?limit=500")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("list documents: %d %s", resp.StatusCode, body)
	}
	var out struct{ Documents []doc }
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	m := map[string]doc{}
	for _, d := range out.Documents {
		m[d.ID] = d
	}
	return m
}

// countStatus counts the documents of ids in each status.
func countStatus(docs map[string]doc, ids []string) map[rag.Status]int {
	n := map[rag.Status]int{}
	for _, id := range ids {
		n[docs[id].Status]++
	}
	return n
}

// checkIndexedOnce fails unless every document of ids is ready with exactly one version (it was committed
// once) and chunks numbered 0..n-1 once each, and no document of the store is left queued or processing.
func checkIndexedOnce(t *testing.T, a *app.App, ids []string) {
	t.Helper()
	ctx := context.Background()
	for _, id := range ids {
		d, err := a.Store.GetDocument(ctx, rag.LocalPrincipal, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != rag.StatusReady || d.PendingHash != "" || d.Version != 1 {
			t.Errorf("%s: status %s, version %d, pending %q; want ready version 1", d.Source, d.Status, d.Version, d.PendingHash)
		}
		vs, err := a.Store.ListVersions(ctx, rag.LocalPrincipal, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 1 {
			t.Errorf("%s: %d versions, want 1 (committed more than once)", d.Source, len(vs))
		}
		chunks, err := a.Store.ListChunks(ctx, rag.LocalPrincipal, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(chunks) == 0 || len(chunks) != d.ChunkCount {
			t.Errorf("%s: %d chunks listed, %d counted", d.Source, len(chunks), d.ChunkCount)
		}
		for i, c := range chunks {
			if c.Index != i {
				t.Errorf("%s: chunk %d has index %d (duplicate or missing chunks)", d.Source, i, c.Index)
				break
			}
		}
	}
	left, err := a.Store.DocumentsByStatus(ctx, []rag.Status{rag.StatusQueued, rag.StatusProcessing}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range left {
		t.Errorf("%s left %s/%s", d.Source, d.Status, d.Stage)
	}
}
