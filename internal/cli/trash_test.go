package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocumentsLifecycle runs ragd documents: versions and revert, delete (hidden from search), deleted,
// restore (searchable again) and purge after the window (RAGD_PURGE_AFTER=0s).
func TestDocumentsLifecycle(t *testing.T) {
	dir := t.TempDir()
	cli := cliIn(t, dir, map[string]string{"RAGD_PURGE_AFTER": "0s"})
	file := filepath.Join(t.TempDir(), "tides.md")
	for _, text := range []string{"# Tides\n\nFirst count: nineteen spring tides.", "# Tides\n\nSecond count: twenty spring tides."} {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cli(0, "ingest", file)
	}
	out := cli(0, "search", "--json", "spring tides count")
	id := regexp.MustCompile(`"document_id":\s*"([^"]+)"`).FindStringSubmatch(out)
	if id == nil || !strings.Contains(out, "Second count") {
		t.Fatalf("search: %s", out)
	}
	doc := id[1]
	if out := cli(0, "documents", "versions", doc); strings.Count(out, "bytes") != 2 {
		t.Fatalf("versions: %s", out)
	}
	if out := cli(0, "documents", "revert", doc, "1"); !strings.Contains(out, "version 1 is current as version 3") {
		t.Fatalf("revert: %s", out)
	}
	if out := cli(0, "search", "--json", "spring tides count"); !strings.Contains(out, "First count") || strings.Contains(out, "Second count") {
		t.Fatalf("search after revert: %s", out)
	}
	cli(2, "documents", "revert", doc, "zero")
	cli(1, "documents", "revert", doc, "9")
	cli(0, "documents", "delete", doc)
	if out := cli(0, "search", "--json", "spring tides count"); strings.Contains(out, doc) {
		t.Fatalf("search after delete: %s", out)
	}
	if out := cli(0, "documents", "deleted"); !strings.Contains(out, doc) {
		t.Fatalf("deleted: %s", out)
	}
	cli(0, "documents", "restore", doc)
	if out := cli(0, "search", "--json", "spring tides count"); !strings.Contains(out, doc) {
		t.Fatalf("search after restore: %s", out)
	}
	cli(0, "documents", "delete", doc)
	if out := cli(0, "documents", "purge"); !strings.HasPrefix(out, "1 document(s)") {
		t.Fatalf("purge: %s", out)
	}
	cli(1, "documents", "restore", doc)
	cli(2, "documents", "delete")
}
