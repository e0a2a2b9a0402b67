package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/rag"
)

// testSite is a small web site on 127.0.0.1: pages linking to each other (and off-site), a sitemap,
// robots.txt, a redirect loop, a 404, a huge page, a page with an ETag and one with Last-Modified. It
// records the requests it gets.
type testSite struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
	pages    map[string]string // path → HTML
	etag     string
}

func newTestSite(t *testing.T) *testSite {
	s := &testSite{etag: `"e1"`, pages: map[string]string{
		"/":               `<html><head><title>Home</title></head><body><a href="/a">A</a> <a href="b.html#top">B</a> <a href="/loop">loop</a> <a href="/missing">404</a> <a href="/huge">huge</a> <a href="https://example.com/off">off-site</a> <a href="/private/secret">secret</a> <a href="/logo.png">logo</a> <a href="/nofollow" rel="nofollow">nf</a></body></html>`,
		"/a":              `<html><body><p>Page A.</p><a href="/a/deeper">deeper</a> <a href="/">home</a></body></html>`,
		"/a/deeper":       `<html><body><p>Deeper.</p><a href="/a/deepest">deepest</a></body></html>`,
		"/a/deepest":      `<html><body><p>Too deep for depth 2.</p></body></html>`,
		"/b.html":         `<html><body><p>Page B.</p></body></html>`,
		"/only-in-map":    `<html><body><p>Listed only in the sitemap.</p></body></html>`,
		"/private/secret": `<html><body>robots.txt disallows this</body></html>`,
		"/nofollow":       `<html><body>not followed</body></html>`,
	}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *testSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.Path)
	page, ok := s.pages[r.URL.Path]
	etag := s.etag
	s.mu.Unlock()
	switch r.URL.Path {
	case "/robots.txt":
		fmt.Fprint(w, "User-agent: other\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n")
		return
	case "/sitemap.xml":
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%[1]s/only-in-map</loc></url><url><loc>%[1]s/a</loc></url><url><loc>https://example.com/elsewhere</loc></url></urlset>`, s.URL)
		return
	case "/loop":
		http.Redirect(w, r, "/loop", http.StatusFound)
		return
	case "/huge":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>"+strings.Repeat("<p>big</p>", 2000)+"</body></html>")
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	switch r.URL.Path {
	case "/":
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	case "/a":
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		if r.Header.Get("If-Modified-Since") == "Mon, 02 Jan 2006 15:04:05 GMT" {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	fmt.Fprint(w, page)
}

func (s *testSite) took() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.requests
	s.requests = nil
	return out
}

func newSource(t *testing.T, settings map[string]any, allowPrivate bool) connector.Source {
	t.Helper()
	raw, _ := json.Marshal(settings)
	src, err := New(connector.Config{Settings: raw, HTTP: netguard.Options{AllowPrivate: allowPrivate}.Client(), MaxBytes: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func ids(base string, l connector.Listing) []string {
	var out []string
	for _, it := range l.Items {
		out = append(out, strings.TrimPrefix(it.ID, base))
	}
	slices.Sort(out)
	return out
}

func TestCrawl(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	site := newTestSite(t)
	src := newSource(t, map[string]any{"url": site.URL + "/", "sitemap": site.URL + "/sitemap.xml"}, true)

	first, err := src.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/", "/a", "/a/deeper", "/a/deepest", "/b.html", "/only-in-map"}
	// /a is a start page (in the sitemap), so /a/deepest is two links from a start page.
	if got := ids(site.URL, first); !slices.Equal(got, want) || !first.Full {
		t.Fatalf("first crawl listed %v, want %v (full %v)", got, want, first.Full)
	}
	requested := site.took()
	for _, never := range []string{"/private/secret", "/logo.png", "/nofollow"} {
		if slices.Contains(requested, never) {
			t.Errorf("%s was requested: %v", never, requested)
		}
	}
	for _, tried := range []string{"/robots.txt", "/sitemap.xml", "/missing", "/huge"} {
		if !slices.Contains(requested, tried) {
			t.Errorf("%s was not requested: %v", tried, requested)
		}
	}
	if n := strings.Count(strings.Join(requested, " "), "/loop"); n < 2 || n > 10 {
		t.Errorf("the redirect loop was requested %d times", n)
	}
	byID := map[string]connector.Item{}
	for _, it := range first.Items {
		byID[strings.TrimPrefix(it.ID, site.URL)] = it
	}
	if v := byID["/"].Version; v != `etag:"e1"` {
		t.Errorf("home version %q", v)
	}
	if v := byID["/a"].Version; v != "modified:Mon, 02 Jan 2006 15:04:05 GMT" {
		t.Errorf("/a version %q", v)
	}
	if v := byID["/b.html"].Version; !strings.HasPrefix(v, "sha256:") {
		t.Errorf("/b.html version %q", v)
	}
	if it := byID["/"]; it.Name != "index.html" || it.Source != site.URL+"/" {
		t.Errorf("home item %+v", it)
	}
	data, err := src.Fetch(ctx, byID["/b.html"])
	if err != nil || !strings.Contains(string(data), "Page B.") {
		t.Fatalf("fetch: %v %q", err, data)
	}
	if got := site.took(); len(got) != 0 {
		t.Errorf("Fetch after List downloaded again: %v", got)
	}

	t.Run("Conditional", func(t *testing.T) {
		again, err := src.List(ctx, first.Cursor)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(site.URL, again); !slices.Equal(got, want) {
			t.Fatalf("second crawl listed %v, want %v: a 304 page must keep its links", got, want)
		}
		for i, it := range again.Items {
			if f := first.Items[i]; it.ID != f.ID || it.Version != f.Version || it.Name != f.Name {
				t.Errorf("item %s changed: %+v", it.ID, it)
			}
		}
		site.took()
	})
	t.Run("Changed", func(t *testing.T) {
		site.mu.Lock()
		site.etag = `"e2"`
		site.pages["/"] = `<html><body><a href="/b.html">B only</a></body></html>`
		site.mu.Unlock()
		l, err := src.List(ctx, first.Cursor)
		if err != nil {
			t.Fatal(err)
		}
		// /a stays as a sitemap page; /a/deeper and /a/deepest through it.
		if got := ids(site.URL, l); !slices.Equal(got, want) {
			t.Fatalf("listed %v", got)
		}
		for _, it := range l.Items {
			if it.ID == site.URL+"/" && it.Version != `etag:"e2"` {
				t.Errorf("home version %q after a change", it.Version)
			}
		}
	})
}

func TestCrawlLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	site := newTestSite(t)
	t.Run("Depth0", func(t *testing.T) {
		l, err := newSource(t, map[string]any{"url": site.URL + "/", "max_depth": 0}, true).List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(site.URL, l); !slices.Equal(got, []string{"/"}) {
			t.Fatalf("listed %v", got)
		}
	})
	t.Run("Pages", func(t *testing.T) {
		l, err := newSource(t, map[string]any{"url": site.URL + "/", "max_pages": 2}, true).List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 2 {
			t.Fatalf("listed %v", ids(site.URL, l))
		}
	})
	t.Run("Prefix", func(t *testing.T) {
		l, err := newSource(t, map[string]any{"url": site.URL + "/a", "prefix": "/a"}, true).List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(site.URL, l); !slices.Equal(got, []string{"/a", "/a/deeper", "/a/deepest"}) {
			t.Fatalf("listed %v", got)
		}
	})
	t.Run("PrivateRefused", func(t *testing.T) {
		site.took()
		_, err := newSource(t, map[string]any{"url": site.URL + "/"}, false).List(ctx, "")
		if rag.ErrorCode(err) != rag.CodeForbidden {
			t.Fatalf("err = %v, want forbidden", err)
		}
		if got := site.took(); len(got) != 0 {
			t.Fatalf("requests reached the private address: %v", got)
		}
	})
	t.Run("StartDisallowed", func(t *testing.T) {
		_, err := newSource(t, map[string]any{"url": site.URL + "/private/secret"}, true).List(ctx, "")
		if rag.ErrorCode(err) != rag.CodeForbidden || !strings.Contains(err.Error(), "robots.txt") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("StartMissing", func(t *testing.T) {
		_, err := newSource(t, map[string]any{"url": site.URL + "/missing"}, true).List(ctx, "")
		if rag.ErrorCode(err) != rag.CodeNotFound {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestSettings(t *testing.T) {
	t.Parallel()
	bad := []string{
		`{}`,
		`{"url": "file:///etc"}`,
		`{"url": "http://a.example/", "sitemap": "http://b.example/sitemap.xml"}`,
		`{"url": "http://a.example/", "max_depth": -1}`,
		`{"url": "http://a.example/", "max_depth": 21}`,
		`{"url": "http://a.example/", "max_pages": 10001}`,
		`{"url": "http://a.example/", "prefix": "docs"}`,
		`{"url": "http://a.example/", "depth": 3}`,
	}
	for _, s := range bad {
		if _, err := New(connector.Config{Settings: json.RawMessage(s)}); rag.ErrorCode(err) != rag.CodeInvalid {
			t.Errorf("%s: err = %v, want invalid", s, err)
		}
	}
	if _, err := New(connector.Config{Settings: json.RawMessage(`{"url": "http://a.example/", "max_depth": 20, "max_pages": 10000}`)}); err != nil {
		t.Errorf("limits at their maximum: %v", err)
	}
}

func TestRobots(t *testing.T) {
	t.Parallel()
	r := parseRobots([]byte("User-agent: *\nDisallow: /\n\nUser-agent: ragd\nDisallow: /tmp/\nAllow: /tmp/public\nDisallow: /*.pdf$\n"))
	cases := map[string]bool{"/": true, "/tmp/x": false, "/tmp/public/y": true, "/a.pdf": false, "/a.pdf?x": true, "/docs": true}
	for p, want := range cases {
		if got := r.allowed(p); got != want {
			t.Errorf("allowed(%s) = %v, want %v", p, got, want)
		}
	}
	if !parseRobots([]byte("User-agent: *\nDisallow:\n")).allowed("/x") {
		t.Error("an empty Disallow disallowed")
	}
}
