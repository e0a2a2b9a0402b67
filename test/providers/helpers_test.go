package providers

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
	"testing"
	"time"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/jobs"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/server"
	"github.com/ragd/ragd/internal/testkit"
)

// Keys the fakes accept. They look like real keys so that a leak would be recognisable.
const (
	openaiKey    = "sk-proj-E2eOpenAIKey0123456789abcdef"
	geminiKey    = "AIzaSyE2eGeminiKey0123456789abcdefgh"
	anthropicKey = "sk-ant-api03-E2eAnthropicKey0123456789"
)

// fakes are the three providers' fakes, started for one test.
type fakes struct {
	openai    *fakeapi.OpenAI
	gemini    *fakeapi.Gemini
	anthropic *fakeapi.Anthropic
}

func newFakes(t *testing.T) *fakes {
	t.Helper()
	f := &fakes{openai: fakeapi.NewOpenAI(openaiKey), gemini: fakeapi.NewGemini(geminiKey), anthropic: fakeapi.NewAnthropic(anthropicKey)}
	t.Cleanup(func() {
		f.openai.Close()
		f.gemini.Close()
		f.anthropic.Close()
		for name, s := range map[string]*fakeapi.Server{"openai": f.openai.Server, "gemini": f.gemini.Server, "anthropic": f.anthropic.Server} {
			if v := s.Violations(); len(v) > 0 {
				t.Errorf("ragd broke the %s protocol: %v", name, v)
			}
		}
	})
	return f
}

// server returns the fake that answers for a provider name.
func (f *fakes) server(provider string) *fakeapi.Server {
	switch provider {
	case "openai":
		return f.openai.Server
	case "gemini":
		return f.gemini.Server
	case "anthropic":
		return f.anthropic.Server
	}
	panic("no fake for " + provider)
}

// config returns the configuration of a ragd using embedder and generator, with every provider's key and
// base URL pointing at the fakes, no rate limits and a temporary data directory.
func (f *fakes) config(t *testing.T, embedder, generator string) config.Config {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Embedder, cfg.Generator = embedder, generator
	cfg.OpenAIAPIKey, cfg.OpenAIBaseURL = openaiKey, f.openai.BaseURL()
	cfg.GeminiAPIKey, cfg.GeminiBaseURL = geminiKey, f.gemini.BaseURL()
	cfg.AnthropicAPIKey, cfg.AnthropicBaseURL = anthropicKey, f.anthropic.BaseURL()
	cfg.ModelTimeout = 10 * time.Second
	cfg.RateLimitChat, cfg.RateLimitSearch = 0, 0
	return cfg
}

// env is a whole ragd in this process — app, job runner and HTTP server — as `ragd serve` wires it.
type env struct {
	app  *app.App
	url  string
	logs *testkit.Buffer
}

// start opens ragd on cfg with the job runner working (short retry back-off, so that a document whose
// embedding failed is tried again within seconds) and serves it on a loopback port.
func start(t *testing.T, cfg config.Config) *env {
	t.Helper()
	ctx := context.Background()
	logs := &testkit.Buffer{}
	a, err := app.Open(ctx, cfg, newLogger(logs))
	if err != nil {
		t.Fatal(err)
	}
	runner, err := a.OpenJobs(ctx, jobs.Options{Work: true, RetryBase: 500 * time.Millisecond, RetryMax: 2 * time.Second,
		PollInterval: 200 * time.Millisecond, StopTimeout: 5 * time.Second})
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	if err := runner.Start(ctx); err != nil {
		a.Close()
		t.Fatal(err)
	}
	handler, err := server.New(a.ServerDeps(runner))
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(func() {
		srv.Close()
		if err := a.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if t.Failed() {
			t.Logf("ragd log:\n%s", logs.String())
		}
	})
	return &env{app: a, url: srv.URL, logs: logs}
}

// file is a file to upload.
type file struct {
	name string
	data []byte
}

// fixture reads a file of the shared fixtures (rel is relative to shared/fixtures).
func fixture(t *testing.T, rel string) file {
	t.Helper()
	data, err := os.ReadFile(testkit.FixturePath(rel))
	if err != nil {
		t.Fatal(err)
	}
	return file{name: filepath.Base(rel), data: data}
}

// seed reads one of the Korean design documents of shared/seeds.
func seed(t *testing.T, name string) file {
	t.Helper()
	data, err := os.ReadFile(testkit.Shared("seeds", name))
	if err != nil {
		t.Fatal(err)
	}
	return file{name: name, data: data}
}

// tenFiles are ten real documents of different formats: the five seed design documents, the four
// Markdown pages and one HTML page.
func tenFiles(t *testing.T) []file {
	t.Helper()
	var out []file
	for _, s := range []string{"000_3f31c8b13786fc38.txt", "001_23a41150ada0647c.txt", "002_80efb5d97df32c89.txt",
		"003_a7bb0f394530c2b8.txt", "004_73daa00b2352dee8.txt"} {
		out = append(out, seed(t, s))
	}
	for _, f := range []string{"md/ko_react_render-and-commit.md", "md/ko_react_queueing-a-series-of-state-updates.md",
		"md/ko_react_importing-and-exporting-components.md", "md/LICENSE-ko.react.dev-DOCS.md", "html/example-10k-1p.html"} {
		out = append(out, fixture(t, f))
	}
	return out
}

// documentView is the part of a document the tests read.
type documentView struct {
	ID         string   `json:"id"`
	Title      string   `json:"title"`
	Status     string   `json:"status"`
	Stage      string   `json:"stage"`
	Pending    bool     `json:"pending"`
	ErrorCode  rag.Code `json:"error_code"`
	Error      string   `json:"error"`
	ChunkCount int      `json:"chunk_count"`
}

// do sends a request with a JSON body (nil for none) and returns the response and its body.
func do(t *testing.T, method, url string, body any, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
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
	return resp, b
}

// decode unmarshals body into a T or fails the test.
func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, body)
	}
	return v
}

// upload posts files to POST /api/documents (multipart) and returns the queued documents.
func upload(t *testing.T, base string, files ...file) []documentView {
	t.Helper()
	return uploadTo(t, base, "", files...)
}

// uploadTo uploads files into a collection ("" for the default one).
func uploadTo(t *testing.T, base, collection string, files ...file) []documentView {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if collection != "" {
		if err := mw.WriteField("collection", collection); err != nil {
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
	resp, body := postForm(t, base+"/api/documents", mw, &buf)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("upload: HTTP %d %s", resp.StatusCode, body)
	}
	docs := decode[struct {
		Documents []documentView `json:"documents"`
	}](t, body).Documents
	if len(docs) != len(files) {
		t.Fatalf("uploaded %d files, got %d documents", len(files), len(docs))
	}
	return docs
}

// postForm posts the multipart form mw wrote into buf and returns the response with its body.
func postForm(t *testing.T, url string, mw *multipart.Writer, buf *bytes.Buffer) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, mw.FormDataContentType(), buf)
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

// waitReady polls the documents until all are ready (failing the test if one fails for good) and returns them.
func waitReady(t *testing.T, base string, docs []documentView, within time.Duration) []documentView {
	t.Helper()
	out := make([]documentView, len(docs))
	deadline := time.Now().Add(within)
	for i, d := range docs {
		for {
			resp, body := do(t, "GET", base+"/api/documents/"+d.ID, nil, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("document %s: HTTP %d %s", d.ID, resp.StatusCode, body)
			}
			cur := decode[documentView](t, body)
			if cur.Status == "ready" && !cur.Pending {
				out[i] = cur
				break
			}
			if cur.Status == "failed" {
				t.Fatalf("document %s failed: %s %s", d.ID, cur.ErrorCode, cur.Error)
			}
			if time.Now().After(deadline) {
				t.Fatalf("document %s not ready after %s: %+v", d.ID, within, cur)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return out
}

// searchResponse is the body of POST /api/search.
type searchResponse struct {
	Query string    `json:"query"`
	Space string    `json:"space"`
	Hits  []rag.Hit `json:"hits"`
}

func search(t *testing.T, base, query string, k int) searchResponse {
	t.Helper()
	resp, body := do(t, "POST", base+"/api/search", map[string]any{"query": query, "k": k}, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("search %q: HTTP %d %s", query, resp.StatusCode, body)
	}
	return decode[searchResponse](t, body)
}

// chatResponse is the part of POST /api/chat's answer the tests read.
type chatResponse struct {
	Answer    string            `json:"answer"`
	Generator string            `json:"generator"`
	NotFound  bool              `json:"not_found"`
	Citations rag.CitationCheck `json:"citations"`
	Weak      []struct {
		Start     int     `json:"start"`
		End       int     `json:"end"`
		Text      string  `json:"text"`
		Citations []int   `json:"citations"`
		Support   float64 `json:"support"`
	} `json:"weak"`
	Sources []struct {
		N          int    `json:"n"`
		DocumentID string `json:"document_id"`
		Passage    string `json:"passage"`
	} `json:"sources"`
	SearchInfo struct {
		Space string `json:"space"`
	} `json:"search_info"`
}

// errorBody is the API's error body.
type errorBody struct {
	Error   rag.Code `json:"error"`
	Message string   `json:"message"`
}

// chat asks a question without streaming and returns the status and body.
func chat(t *testing.T, base, question string) (int, []byte) {
	t.Helper()
	resp, body := do(t, "POST", base+"/api/chat", map[string]any{"question": question}, nil)
	return resp.StatusCode, body
}

// event is one server-sent event.
type event struct {
	name string
	data []byte
}

// chatStream asks a question with Accept: text/event-stream and returns the events.
func chatStream(t *testing.T, base, question string) (int, []event) {
	t.Helper()
	resp, body := do(t, "POST", base+"/api/chat", map[string]any{"question": question},
		map[string]string{"Accept": "text/event-stream"})
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, []event{{name: "http", data: body}}
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("stream content type %q", ct)
	}
	var out []event
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur event
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = []byte(strings.TrimPrefix(line, "data: "))
		case line == "":
			if cur.name != "" {
				out = append(out, cur)
			}
			cur = event{}
		}
	}
	return resp.StatusCode, out
}

// names lists the events' names, consecutive deltas as one "delta".
func names(events []event) string {
	var out []string
	for _, e := range events {
		if e.name == "delta" && len(out) > 0 && out[len(out)-1] == "delta" {
			continue
		}
		out = append(out, e.name)
	}
	return strings.Join(out, ",")
}

// deltas concatenates the text of the delta events.
func deltas(t *testing.T, events []event) string {
	t.Helper()
	var b strings.Builder
	for _, e := range events {
		if e.name == "delta" {
			b.WriteString(decode[struct {
				Text string `json:"text"`
			}](t, e.data).Text)
		}
	}
	return b.String()
}

// chunkTexts returns the text embedded for every current chunk (ingest.EmbeddingText), by chunk ID.
func chunkTexts(t *testing.T, st rag.Store) map[int64]string {
	t.Helper()
	ctx := context.Background()
	page, err := st.ListDocuments(ctx, rag.LocalPrincipal, rag.DocumentQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, d := range page.Documents {
		cs, err := st.ListChunks(ctx, rag.LocalPrincipal, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			ids = append(ids, c.ID)
		}
	}
	hits, err := st.Hits(ctx, rag.LocalPrincipal, ids)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[int64]string, len(hits))
	for _, h := range hits {
		out[h.ID] = ingest.EmbeddingText(h.Title, h.Chunk)
	}
	return out
}

// embeddedOnce checks that the fake embedded the text of every chunk exactly once (documents that share a
// text share its embedding through the cache).
func embeddedOnce(t *testing.T, fake *fakeapi.Server, texts map[int64]string) {
	t.Helper()
	if len(texts) == 0 {
		t.Fatal("no chunks")
	}
	for id, text := range texts {
		if n := fake.TimesEmbedded(text); n != 1 {
			t.Fatalf("chunk %d was embedded %d times: %.80q", id, n, text)
		}
	}
}

func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Fatalf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

func mustNotContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			t.Fatalf("%s contains %q:\n%s", what, sub, s)
		}
	}
}
