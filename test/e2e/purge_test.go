package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/testkit"
)

// TestDeleteRestorePurge runs the real binary with a short RAGD_PURGE_AFTER: a document deleted through
// the API is hidden at once, restored and searchable again, deleted again, and once the window has passed
// the server's documents.purge job removes it: its ID is in no table of the store but the audit log (which
// records what was done to it) and its text in no file.
func TestDeleteRestorePurge(t *testing.T) {
	data := t.TempDir()
	env := testkit.CleanEnv("RAGD_DATA_DIR="+data, "RAGD_PURGE_AFTER=3s", "RAGD_RATE_LIMIT_SEARCH=0")
	srv := testkit.Serve(t, env)
	const secret = "The keeper's ledger lists nineteen gales and one whale sighted off the northern rocks."
	call := func(method, path, body string, want int) []byte {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d, want %d\n%s", method, path, resp.StatusCode, want, b)
		}
		return b
	}
	var up struct {
		Documents []struct {
			ID string `json:"id"`
		} `json:"documents"`
	}
	if err := json.Unmarshal(call("POST", "/api/documents", `{"title": "Ledger", "text": "`+secret+`"}`, 202), &up); err != nil {
		t.Fatal(err)
	}
	id := up.Documents[0].ID
	found := func() bool {
		return strings.Contains(string(call("POST", "/api/search", `{"query": "keeper ledger nineteen gales whale"}`, 200)), id)
	}
	testkit.WaitFor(t, "the document indexed", time.Minute, found)

	call("DELETE", "/api/documents/"+id, "", 204)
	if found() {
		t.Fatal("a deleted document is still found")
	}
	call("GET", "/api/documents/"+id, "", 404)
	call("POST", "/api/documents/"+id+"/restore", "", 202)
	testkit.WaitFor(t, "the restored document indexed", time.Minute, found)
	call("DELETE", "/api/documents/"+id, "", 204)
	if r := ragd(t, env, "documents", "deleted"); r.code != 0 || !strings.Contains(r.stdout, id) {
		t.Fatalf("ragd documents deleted: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	testkit.WaitFor(t, "the purge", time.Minute, func() bool {
		return strings.Contains(string(call("GET", "/api/documents?deleted=true", "", 200)), `"total":0`)
	})
	call("POST", "/api/documents/"+id+"/restore", "", 404)
	srv.Stop(t)

	// The audit log keeps the record of what was done to the document (its ID, never its content) for
	// RAGD_AUDIT_RETENTION: that is its purpose.
	r := ragd(t, env, "audit", "--document", id)
	for _, action := range []string{"document.upload", "document.delete", "document.restore", "search"} {
		if r.code != 0 || !strings.Contains(r.stdout, action) {
			t.Errorf("ragd audit --document: no %s event (exit %d)\n%s%s", action, r.code, r.stdout, r.stderr)
		}
	}
	for table, n := range testkit.TableMentions(t, filepath.Join(data, "ragd.db"), id) {
		if table != "audit_log" {
			t.Errorf("table %s: %d rows mention the purged document", table, n)
		}
	}
	for _, f := range testkit.FilesHolding(t, data, []string{"jobs.db"}, secret) {
		t.Errorf("%s still holds the purged document", f)
	}
}
