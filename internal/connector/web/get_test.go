package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/rag"
)

func TestFileName(t *testing.T) {
	t.Parallel()
	cases := []struct{ url, ctype, want string }{
		{"http://h/papers/attention.pdf", "application/pdf", "attention.pdf"},
		{"http://h/pdf/2401.01234", "application/pdf", "2401.01234.pdf"}, // arXiv-style: the ".01234" is no type
		{"http://h/", "text/html; charset=utf-8", "index.html"},
		{"http://h/docs/", "text/html", "index.html"},
		{"http://h/page.php", "text/html", "page.html"},
		{"http://h/README.md", "text/plain; charset=utf-8", "README.md"},
		{"http://h/main.go", "text/plain", "main.go"},
		{"http://h/notes", "text/plain", "notes.txt"},
		{"http://h/report.docx", "application/octet-stream", "report.docx"},
		{"http://h/blob", "application/octet-stream", "blob"},
		{"http://h/a.htm", "text/html", "a.htm"},
	}
	for _, c := range cases {
		u, _ := url.Parse(c.url)
		if got := FileName(u, c.ctype); got != c.want {
			t.Errorf("FileName(%s, %s) = %q, want %q", c.url, c.ctype, got, c.want)
		}
	}
}

func TestGet(t *testing.T) {
	t.Parallel()
	const page = "<html><head><title>T</title></head><body><p>hello</p></body></html>"
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write([]byte(page))
	})
	mux.HandleFunc("/dated", func(w http.ResponseWriter, r *http.Request) {
		const mod = "Mon, 02 Jan 2006 15:04:05 GMT"
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Last-Modified", mod)
		if r.Header.Get("If-Modified-Since") == mod {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write([]byte("plain text"))
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(strings.Repeat("x", 1001)))
	})
	mux.HandleFunc("/exact", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(strings.Repeat("x", 1000)))
	})
	mux.HandleFunc("/image.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	mux.HandleFunc("/down", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	local := netguard.Options{AllowPrivate: true}.Client()
	ctx := context.Background()

	t.Run("OK", func(t *testing.T) {
		p, err := Get(ctx, local, Request{URL: srv.URL + "/page", MaxBytes: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if string(p.Data) != page || p.Name != "page.html" || p.Version() != `etag:"v1"` {
			t.Fatalf("page %q name %q version %q", p.Data, p.Name, p.Version())
		}
	})
	t.Run("NotModifiedByETag", func(t *testing.T) {
		p, err := Get(ctx, local, Request{URL: srv.URL + "/page", Version: `etag:"v1"`})
		if err != nil {
			t.Fatal(err)
		}
		if !p.NotModified || len(p.Data) != 0 || p.Version() != `etag:"v1"` {
			t.Fatalf("not modified %v, %d bytes, version %q", p.NotModified, len(p.Data), p.Version())
		}
	})
	t.Run("NotModifiedByDate", func(t *testing.T) {
		first, err := Get(ctx, local, Request{URL: srv.URL + "/dated"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Get(ctx, local, Request{URL: srv.URL + "/dated", Version: first.Version()})
		if err != nil {
			t.Fatal(err)
		}
		if !p.NotModified || first.Version() != "modified:Mon, 02 Jan 2006 15:04:05 GMT" {
			t.Fatalf("not modified %v, version %q", p.NotModified, first.Version())
		}
	})
	t.Run("RedirectFollowed", func(t *testing.T) {
		p, err := Get(ctx, local, Request{URL: srv.URL + "/moved"})
		if err != nil {
			t.Fatal(err)
		}
		if p.URL.Path != "/page" {
			t.Fatalf("final URL %s", p.URL)
		}
	})
	errs := []struct {
		name, path string
		max        int64
		code       rag.Code
	}{
		{"RedirectLoop", "/loop", 0, rag.CodeInvalid},
		{"OverLimit", "/huge", 1000, rag.CodePayloadTooLarge},
		{"Unsupported", "/image.png", 0, rag.CodeUnsupportedMediaType},
		{"NotFound", "/nothing", 0, rag.CodeNotFound},
		{"RateLimited", "/busy", 0, rag.CodeRateLimited},
		{"ServerError", "/down", 0, rag.CodeInternal},
	}
	for _, e := range errs {
		t.Run(e.name, func(t *testing.T) {
			_, err := Get(ctx, local, Request{URL: srv.URL + e.path, MaxBytes: e.max})
			if rag.ErrorCode(err) != e.code {
				t.Fatalf("err = %v, want %s", err, e.code)
			}
		})
	}
	t.Run("AtLimit", func(t *testing.T) {
		p, err := Get(ctx, local, Request{URL: srv.URL + "/exact", MaxBytes: 1000})
		if err != nil || len(p.Data) != 1000 {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("PrivateRefused", func(t *testing.T) {
		_, err := Get(ctx, netguard.Options{}.Client(), Request{URL: srv.URL + "/page"})
		if rag.ErrorCode(err) != rag.CodeForbidden {
			t.Fatalf("err = %v, want forbidden", err)
		}
	})
	t.Run("BadURL", func(t *testing.T) {
		for _, u := range []string{"file:///etc/passwd", "ftp://h/x", "http://", "not a url"} {
			if _, err := Get(ctx, local, Request{URL: u}); rag.ErrorCode(err) != rag.CodeInvalid {
				t.Errorf("%s: err = %v, want invalid", u, err)
			}
		}
	})
}
