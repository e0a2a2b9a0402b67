package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ragd/ragd/internal/connector/web"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/rag"
)

// TestURLDocuments adds documents by URL: the request only queues them, the ingestion job fetches them
// from a site on 127.0.0.1 (allowed here, as RAGD_FETCH_ALLOW_PRIVATE does), and a failed one is retried.
func TestURLDocuments(t *testing.T) {
	var up atomic.Bool
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/flaky.txt" && !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("Paper " + r.URL.Path + ": retrieval augmented generation grounds answers in sources."))
	}))
	t.Cleanup(site.Close)

	b := setup(t, nil)
	ex, err := extract.New(extract.Options{MaxBytes: b.deps.Settings.MaxUploadBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.Close() })
	b.pipe = ingest.New(b.store, ex, b.emb, ingest.Options{MaxBytes: b.deps.Settings.MaxUploadBytes,
		Fetch: web.Fetcher(netguard.Options{AllowPrivate: true}.Client())})
	jobs := &inlineJobs{pipe: b.pipe}
	t.Cleanup(jobs.wait)
	b.deps.Ingest, b.deps.Enqueuer = b.pipe, jobs
	b.serve(t)

	var docID, flakyID string
	b.run(t, []scenario{
		{name: "Queued", method: "POST", path: "/api/documents",
			body:   jsonBody(map[string]any{"url": site.URL + "/rag.txt", "collection": "papers", "metadata": map[string]any{"venue": "NeurIPS"}}),
			status: http.StatusAccepted, contains: []string{`"source":"` + site.URL + `/rag.txt"`, `"outcome":"queued"`},
			check: func(t *testing.T, _ *http.Response, body []byte) {
				docID = decode[struct{ Documents []documentView }](t, body).Documents[0].ID
			}},
		{name: "Flaky", method: "POST", path: "/api/documents",
			body: jsonBody(map[string]any{"url": site.URL + "/flaky.txt"}), status: http.StatusAccepted,
			check: func(t *testing.T, _ *http.Response, body []byte) {
				flakyID = decode[struct{ Documents []documentView }](t, body).Documents[0].ID
			}},
		{name: "NotHTTP", method: "POST", path: "/api/documents", body: jsonBody(map[string]any{"url": "file:///etc/passwd"}),
			status: http.StatusBadRequest, code: rag.CodeInvalid},
		{name: "URLAndText", method: "POST", path: "/api/documents", body: jsonBody(map[string]any{"url": site.URL + "/a", "text": "x"}),
			status: http.StatusBadRequest, code: rag.CodeInvalid},
		{name: "RetryUnknown", method: "POST", path: "/api/documents/nope/retry", status: http.StatusNotFound, code: rag.CodeNotFound},
	})
	d := b.waitDocument(t, docID)
	if d.Status != rag.StatusReady || d.Metadata["venue"] != "NeurIPS" || d.MediaType != "text/plain" || d.ChunkCount == 0 {
		t.Fatalf("fetched document %+v", d)
	}
	f := b.waitDocument(t, flakyID)
	if f.Status != rag.StatusFailed || !strings.Contains(f.Error, "503") {
		t.Fatalf("a 503 left %+v", f)
	}
	up.Store(true)
	b.run(t, []scenario{{name: "Retry", method: "POST", path: "/api/documents/" + flakyID + "/retry",
		status: http.StatusAccepted, contains: []string{`"status":"queued"`}}})
	if f = b.waitDocument(t, flakyID); f.Status != rag.StatusReady || f.Error != "" {
		t.Fatalf("after retry %+v", f)
	}

	upload := b.ingest(t, ingest.Request{Name: "notes.txt", Data: []byte("uploaded notes")})
	b.run(t, []scenario{{name: "RetryUpload", method: "POST", path: "/api/documents/" + upload.ID + "/retry",
		status: http.StatusConflict, code: rag.CodeConflict, contains: []string{"no failed processing to retry"}}})
}
