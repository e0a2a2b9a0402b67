package ingest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ragd/ragd/internal/connector/web"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/rag"
)

// site is a local web server whose page can be changed, broken and counted.
type site struct {
	*httptest.Server
	mu     sync.Mutex
	body   string
	status int
	hits   atomic.Int64
}

func newSite(t *testing.T) *site {
	s := &site{status: http.StatusOK, body: "<html><head><title>Attention paper</title></head><body><h1>Attention</h1><p>Transformers use self-attention over tokens.</p></body></html>"}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(s.status)
		_, _ = w.Write([]byte(s.body))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) set(status int, body string) {
	s.mu.Lock()
	s.status, s.body = status, body
	s.mu.Unlock()
}

// fetcher is ingest.Options.Fetch as the app wires it: web.Get through a netguard client.
func fetcher(opt netguard.Options) func(ctx context.Context, url string, maxBytes int64) (string, []byte, error) {
	return web.Fetcher(opt.Client())
}

func TestURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSite(t)
	b := setup(t, ingest.Options{MaxBytes: 4096, Fetch: fetcher(netguard.Options{AllowPrivate: true})})
	url := s.URL + "/papers/attention"

	doc, outcome, err := b.pipe.Submit(ctx, p, ingest.Request{URL: url, Collection: "papers", Metadata: map[string]any{"year": 2017}})
	if err != nil || outcome != ingest.Queued {
		t.Fatalf("submit: %v %s", err, outcome)
	}
	if s.hits.Load() != 0 {
		t.Fatal("Submit fetched the URL; the ingestion job must")
	}
	if doc.Source != url || doc.ExternalID != url || doc.Status != rag.StatusQueued {
		t.Fatalf("queued document %+v", doc)
	}
	if err := b.pipe.Process(ctx, doc.ID); err != nil {
		t.Fatal(err)
	}
	doc = b.get(t, doc.ID)
	if doc.Status != rag.StatusReady || doc.Version != 1 || doc.Title != "Attention paper" || doc.MediaType != "text/html" ||
		doc.PendingHash != "" || doc.Metadata["year"] != float64(2017) {
		t.Fatalf("after processing: %+v", doc)
	}
	if cs := b.chunks(t, doc.ID); len(cs) == 0 || !strings.Contains(cs[0].Text, "self-attention") {
		t.Fatalf("chunks %+v", cs)
	}

	t.Run("UnchangedNotReembedded", func(t *testing.T) {
		again, outcome, err := b.pipe.Ingest(ctx, p, ingest.Request{URL: url, Collection: "papers"})
		if err != nil || outcome != ingest.Unchanged {
			t.Fatalf("re-ingest: %v %s", err, outcome)
		}
		if again.ID != doc.ID || again.Version != 1 || again.PendingHash != "" || again.Status != rag.StatusReady {
			t.Fatalf("an unchanged page made %+v", again)
		}
	})
	t.Run("FailureThenRetry", func(t *testing.T) {
		s.set(http.StatusNotFound, "gone")
		d, _, err := b.pipe.Ingest(ctx, p, ingest.Request{URL: s.URL + "/later", Collection: "papers"})
		if rag.ErrorCode(err) != rag.CodeNotFound || d.Status != rag.StatusFailed || d.ErrorCode != rag.CodeNotFound {
			t.Fatalf("a 404: err %v, document %+v", err, d)
		}
		s.set(http.StatusOK, "<html><body><p>Now it is here.</p></body></html>")
		d, err = b.pipe.Retry(ctx, p, d.ID)
		if err != nil || d.Status != rag.StatusQueued || !ingest.IsFetch(d.PendingHash) {
			t.Fatalf("retry: %v %+v", err, d)
		}
		if err := b.pipe.Process(ctx, d.ID); err != nil {
			t.Fatal(err)
		}
		if d = b.get(t, d.ID); d.Status != rag.StatusReady || d.Version != 1 || d.Error != "" {
			t.Fatalf("after retry %+v", d)
		}
	})
	t.Run("ChangedPageNewVersion", func(t *testing.T) {
		s.set(http.StatusOK, "<html><body><p>A second edition.</p></body></html>")
		d, err := b.pipe.Retry(ctx, p, doc.ID)
		if err != nil || d.Status != rag.StatusReady || d.Version != 1 {
			t.Fatalf("retry of a ready document: %v %+v (the current version stays searchable)", err, d)
		}
		if err := b.pipe.Process(ctx, d.ID); err != nil {
			t.Fatal(err)
		}
		if d = b.get(t, d.ID); d.Version != 2 || d.PendingHash != "" {
			t.Fatalf("after a change %+v", d)
		}
	})
	t.Run("OverLimit", func(t *testing.T) {
		s.set(http.StatusOK, "<html><body>"+strings.Repeat("big ", 1100)+"</body></html>")
		d, _, err := b.pipe.Ingest(ctx, p, ingest.Request{URL: s.URL + "/big", Collection: "papers"})
		if rag.ErrorCode(err) != rag.CodePayloadTooLarge || d.Status != rag.StatusFailed {
			t.Fatalf("err %v, document %+v", err, d)
		}
	})
	t.Run("UploadNotRetried", func(t *testing.T) {
		up, _, err := b.pipe.Ingest(ctx, p, ingest.Request{Name: "a.txt", Data: []byte("some text")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.pipe.Retry(ctx, p, up.ID); rag.ErrorCode(err) != rag.CodeConflict {
			t.Fatalf("retry of an upload: %v", err)
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		for _, req := range []ingest.Request{
			{URL: "file:///etc/passwd"},
			{URL: "ftp://example.com/x"},
			{URL: s.URL + "/x", Data: []byte("both")},
		} {
			if _, _, err := b.pipe.Submit(ctx, p, req); rag.ErrorCode(err) != rag.CodeInvalid {
				t.Errorf("%+v: err %v", req.URL, err)
			}
		}
	})
}

func TestURLPrivateRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSite(t)
	b := setup(t, ingest.Options{Fetch: fetcher(netguard.Options{})})
	d, _, err := b.pipe.Ingest(ctx, p, ingest.Request{URL: s.URL + "/internal"})
	if rag.ErrorCode(err) != rag.CodeForbidden || d.Status != rag.StatusFailed || s.hits.Load() != 0 {
		t.Fatalf("err %v, document %+v, %d requests reached the server", err, d, s.hits.Load())
	}
	if !strings.Contains(d.Error, "RAGD_FETCH_ALLOW_PRIVATE") {
		t.Fatalf("the error does not say how to allow it: %q", d.Error)
	}
}

func TestURLWithoutFetcher(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Options{})
	if _, _, err := b.pipe.Submit(context.Background(), p, ingest.Request{URL: "https://example.com/a.pdf"}); rag.ErrorCode(err) != rag.CodeInvalid {
		t.Fatalf("err %v", err)
	}
}

func (b *bundle) get(t *testing.T, id string) *rag.Document {
	t.Helper()
	d, err := b.store.GetDocument(context.Background(), p, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRetryFailedUpload re-runs the kept bytes of an upload whose processing failed.
func TestRetryFailedUpload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, ingest.Options{})
	b.emb.mu.Lock()
	b.emb.fail = rag.Errorf(rag.CodeEmbeddingFailed, "embedder down")
	b.emb.mu.Unlock()
	d, _, err := b.pipe.Ingest(ctx, p, ingest.Request{Name: "paper.md", Data: []byte("# Paper\nAttention is all you need.")})
	if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || d.Status != rag.StatusFailed || d.FailedHash == "" || d.PendingHash != "" {
		t.Fatalf("a failed upload: %v %+v", err, d)
	}
	b.emb.mu.Lock()
	b.emb.fail = nil
	b.emb.mu.Unlock()
	d, err = b.pipe.Retry(ctx, p, d.ID)
	if err != nil || d.Status != rag.StatusQueued || d.PendingHash == "" || d.FailedHash != "" {
		t.Fatalf("retry: %v %+v", err, d)
	}
	if _, err := b.pipe.Retry(ctx, p, d.ID); rag.ErrorCode(err) != rag.CodeConflict {
		t.Fatalf("a second retry while queued: %v", err)
	}
	if err := b.pipe.Process(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	if d = b.get(t, d.ID); d.Status != rag.StatusReady || d.Version != 1 || d.Error != "" {
		t.Fatalf("after the retry: %+v", d)
	}
	if _, err := b.pipe.Retry(ctx, p, d.ID); rag.ErrorCode(err) != rag.CodeConflict {
		t.Fatalf("a retry of a ready document: %v", err)
	}
}
