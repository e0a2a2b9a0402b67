package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestIngestURL ingests a page by URL from a site on 127.0.0.1: refused under the SSRF rules by default,
// fetched and indexed with RAGD_FETCH_ALLOW_PRIVATE=true.
func TestIngestURL(t *testing.T) {
	var hits atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><head><title>Handbook</title></head><body><p>Holidays are 25 days a year.</p></body></html>"))
	}))
	t.Cleanup(site.Close)
	dir := t.TempDir()
	ingest := func(allow string) (int, string) {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), []string{"ingest", "--collection", "web", site.URL + "/handbook"}, strings.NewReader(""), &out, &errOut,
			func(k string) string {
				switch k {
				case "RAGD_DATA_DIR":
					return dir
				case "RAGD_FETCH_ALLOW_PRIVATE":
					return allow
				}
				return ""
			})
		return code, out.String() + errOut.String()
	}
	if code, out := ingest(""); code != 1 || !strings.Contains(out, "FAILED") || !strings.Contains(out, "RAGD_FETCH_ALLOW_PRIVATE") || hits.Load() != 0 {
		t.Fatalf("a private address without the setting: exit %d, %d requests, output:\n%s", code, hits.Load(), out)
	}
	if code, out := ingest("true"); code != 0 || !strings.Contains(out, "ok        "+site.URL+"/handbook (version 1") {
		t.Fatalf("with RAGD_FETCH_ALLOW_PRIVATE: exit %d, output:\n%s", code, out)
	}
	if code, out := ingest("true"); code != 0 || !strings.Contains(out, "unchanged "+site.URL+"/handbook (version 1)") {
		t.Fatalf("again: exit %d, output:\n%s", code, out)
	}
}
