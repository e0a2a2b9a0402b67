package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/answer"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/feedback"
	"github.com/ragd/ragd/internal/generate/extractive"
	"github.com/ragd/ragd/internal/graph"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/qa"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/reembed"
	"github.com/ragd/ragd/internal/store/sqlite"
)

// fixture returns the path of a shared fixture, relative to this package's directory.
func fixture(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "fixtures", rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("fixture %s: %v", rel, err)
	}
	return p
}

func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(fixture(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clock is a settable clock for the rate limiters.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// logBuffer collects the server's log output (to check what is never logged).
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// bundle is a real SQLite store with the offline embedder and generator, the real ingestion pipeline and
// answer service, behind a real HTTP server. Uploads are processed in this process (inlineJobs) rather than
// by the durable job runner, which the server does not know: it only enqueues.
type bundle struct {
	store   *sqlite.Store
	pipe    *ingest.Pipeline
	emb     rag.Embedder
	gen     rag.Generator
	spaces  *reembed.Service
	answers *answer.Service
	deps    Deps
	srv     *Server
	ts      *httptest.Server
	clock   *clock
	logs    *logBuffer
	board   *qa.Service
	graph   *graph.Service
}

// setup serves the default settings (rate limits off unless mutate sets them) over a temp-dir store.
func setup(t testing.TB, mutate func(*Settings)) *bundle {
	t.Helper()
	ctx := context.Background()
	def := config.Default()
	set := Settings{MaxUploadBytes: def.MaxUploadBytes, StoreKind: "sqlite"}
	if mutate != nil {
		mutate(&set)
	}
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ragd.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := extract.New(extract.Options{MaxBytes: set.MaxUploadBytes})
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{store: st, emb: hash.New(hash.DefaultDim), gen: extractive.New(extractive.Options{}), logs: logs,
		clock: &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}
	b.spaces, err = reembed.New(ctx, st, b.emb, nil, reembed.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	b.graph = graph.New(st, b.emb, profile.GraphSettings)
	b.answers = answer.New(b.spaces, b.gen, answer.Options{Collections: st, Graph: b.graph})
	b.pipe = ingest.New(st, ex, b.emb, ingest.Options{MaxBytes: set.MaxUploadBytes, Logger: logger})
	jobs := &inlineJobs{pipe: b.pipe}
	// Cleanups run last-in first-out: the server stops, then the jobs finish, then the store closes.
	t.Cleanup(func() { _ = st.Close(); _ = ex.Close() })
	t.Cleanup(jobs.wait)
	set.Embedder, set.Generator = b.emb.Space(), b.gen.Name()
	b.board = qa.New(st, st, b.emb, st, b.answers, qa.Options{Logger: logger, RetryBase: time.Millisecond})
	b.deps = Deps{Documents: st, Collections: st, Store: st, Answers: b.answers, Search: b.spaces, Embedding: b.spaces,
		Ingest: b.pipe, Enqueuer: jobs, Board: b.board, Graph: b.graph, Feedback: feedback.New(st, st), Conversations: st, Settings: set, Logger: logger, Now: b.clock.now}
	b.serve(t)
	return b
}

// serve (re)starts the HTTP server over b.deps, after a test has replaced a service.
func (b *bundle) serve(t testing.TB) {
	t.Helper()
	srv, err := New(b.deps)
	if err != nil {
		t.Fatal(err)
	}
	if b.ts != nil {
		b.ts.Close()
	}
	b.srv, b.ts = srv, httptest.NewServer(srv)
	t.Cleanup(b.ts.Close)
}

// inlineJobs processes each enqueued document version in a goroutine of this process, as one attempt of
// the durable runner would; the outcome is recorded on the document.
type inlineJobs struct {
	pipe *ingest.Pipeline
	wg   sync.WaitGroup
}

func (j *inlineJobs) EnqueueIngest(_ context.Context, documentID, contentHash string) error {
	j.wg.Go(func() {
		_ = j.pipe.ProcessAttempt(context.Background(), documentID, ingest.Attempt{ContentHash: contentHash})
	})
	return nil
}

func (j *inlineJobs) wait() { j.wg.Wait() }

// ingestFile indexes a fixture synchronously (the CLI's path) and returns the document.
func (b *bundle) ingestFile(t *testing.T, rel string, mutate func(*ingest.Request)) *rag.Document {
	t.Helper()
	req := ingest.Request{Name: filepath.Base(rel), Data: readFixture(t, rel)}
	if mutate != nil {
		mutate(&req)
	}
	return b.ingest(t, req)
}

func (b *bundle) ingest(t testing.TB, req ingest.Request) *rag.Document {
	t.Helper()
	doc, _, err := b.pipe.Ingest(context.Background(), rag.LocalPrincipal, req)
	if err != nil {
		t.Fatalf("ingest %s: %v", req.Name, err)
	}
	if doc.Status != rag.StatusReady {
		t.Fatalf("ingest %s: status %s (%s)", req.Name, doc.Status, doc.Error)
	}
	return doc
}

// request is one HTTP call of a scenario.
type request struct {
	method  string
	path    string
	headers map[string]string
	body    io.Reader
	ctype   string
}

func (b *bundle) do(t *testing.T, r request) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(r.method, b.ts.URL+r.path, r.body)
	if err != nil {
		t.Fatal(err)
	}
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	resp, err := b.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// scenario is one row of an HTTP scenario table: the request and what the response must (and must not)
// contain.
type scenario struct {
	name    string
	method  string
	path    string
	headers map[string]string
	body    func(t *testing.T) (io.Reader, string) // body and content type
	status  int
	code    rag.Code // the error code, for error statuses
	// header values the response must have ("" means the header must be absent).
	wantHeaders map[string]string
	contains    []string
	notContains []string
	check       func(t *testing.T, resp *http.Response, body []byte)
}

func (b *bundle) run(t *testing.T, scenarios []scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			r := request{method: sc.method, path: sc.path, headers: sc.headers}
			if sc.body != nil {
				r.body, r.ctype = sc.body(t)
			}
			resp, body := b.do(t, r)
			if resp.StatusCode != sc.status {
				t.Fatalf("%s %s: status %d, want %d; body %s", sc.method, sc.path, resp.StatusCode, sc.status, trim(body))
			}
			if sc.code != "" {
				var e errorBody
				if err := json.Unmarshal(body, &e); err != nil {
					t.Fatalf("error body %s: %v", trim(body), err)
				}
				if e.Error != sc.code || e.Message == "" {
					t.Fatalf("error body %s, want code %s and a message", trim(body), sc.code)
				}
			}
			for k, v := range sc.wantHeaders {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			for _, s := range sc.contains {
				if !strings.Contains(string(body), s) {
					t.Errorf("body does not contain %q: %s", s, trim(body))
				}
			}
			for _, s := range sc.notContains {
				if strings.Contains(string(body), s) {
					t.Errorf("body contains %q: %s", s, trim(body))
				}
			}
			if sc.check != nil {
				sc.check(t, resp, body)
			}
		})
	}
}

func trim(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

func jsonBody(v any) func(*testing.T) (io.Reader, string) {
	return func(t *testing.T) (io.Reader, string) {
		if s, ok := v.(string); ok {
			return strings.NewReader(s), "application/json"
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.NewReader(b), "application/json"
	}
}

// file is one part of a multipart upload.
type file struct {
	name string
	data []byte
}

func multipartBody(files []file, fields map[string]string) func(*testing.T) (io.Reader, string) {
	return func(t *testing.T) (io.Reader, string) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for k, v := range fields {
			if err := mw.WriteField(k, v); err != nil {
				t.Fatal(err)
			}
		}
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
		return &buf, mw.FormDataContentType()
	}
}

func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", trim(body), err)
	}
	return v
}

// waitDocument polls GET /api/documents/{id} until the document is no longer queued or processing (or has
// no pending version), and returns it. It fails the test after a generous deadline; it asserts no timing.
func (b *bundle) waitDocument(t *testing.T, id string) documentView {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, body := b.do(t, request{method: "GET", path: "/api/documents/" + id})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("get document %s: %d %s", id, resp.StatusCode, trim(body))
		}
		d := decode[documentView](t, body)
		if (d.Status == rag.StatusReady || d.Status == rag.StatusFailed) && !d.Pending {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("document %s still %s/%s", id, d.Status, d.Stage)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data json.RawMessage
}

func readEvents(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = json.RawMessage(strings.TrimPrefix(line, "data: "))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
