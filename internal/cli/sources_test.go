package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSourcesCommands runs ragd sources: add a folder, list, sync (in the foreground: searchable at once),
// sync again (unchanged), a failed item's exit code, remove; and the usage errors.
func TestSourcesCommands(t *testing.T) {
	dir, folder := t.TempDir(), t.TempDir()
	cli := cliIn(t, dir, map[string]string{"RAGD_MAX_UPLOAD_BYTES": "1000"})
	if err := os.WriteFile(filepath.Join(folder, "tides.md"), []byte("# Tides\n\nNineteen spring tides in the bay."), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "draft.md"), []byte("# Draft\n\nNot synced."), 0o600); err != nil {
		t.Fatal(err)
	}
	cli(2, "sources")
	cli(2, "sources", "add", "folder", folder) // no collection
	cli(2, "sources", "add", "--collection", "bay", "ftp", "host")
	cli(2, "sources", "sync")
	cli(2, "sources", "snyc", "x")
	cli(1, "sources", "add", "--collection", "bay", `{"kind":"folder","path":"relative"}`)
	cli(0, "sources", "add", "--collection", "bay", "--exclude", "draft.*", "--schedule", "none", "folder", folder)
	var list struct {
		Sources []struct {
			ID       string `json:"id"`
			Schedule string `json:"schedule"`
		}
	}
	if err := json.Unmarshal([]byte(cli(0, "sources", "list", "--json")), &list); err != nil || len(list.Sources) != 1 || list.Sources[0].Schedule != "" {
		t.Fatalf("list: %+v, %v", list, err)
	}
	id := list.Sources[0].ID
	if out := cli(0, "sources", "sync", id); !strings.Contains(out, "added 1, updated 0, deleted 0, unchanged 0, failed 0") {
		t.Fatalf("first sync: %s", out)
	}
	if out := cli(0, "search", "--json", "spring tides"); !strings.Contains(out, "tides.md") || strings.Contains(out, "draft.md") {
		t.Fatalf("search after the sync: %s", out)
	}
	if out := cli(0, "sources", "sync", id); !strings.Contains(out, "unchanged 1") {
		t.Fatalf("second sync: %s", out)
	}
	// A file over the upload limit fails alone, and the command says so with exit 1.
	if err := os.WriteFile(filepath.Join(folder, "big.md"), bytes.Repeat([]byte("tide "), 300), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := cli(1, "sources", "sync", id); !strings.Contains(out, "failed 1") {
		t.Fatalf("sync with a failing file: %s", out)
	}
	if out := cli(0, "sources", "list"); !strings.Contains(out, id) || !strings.Contains(out, "1 source(s)") {
		t.Fatalf("list: %s", out)
	}
	cli(0, "sources", "remove", id)
	cli(1, "sources", "remove", id)
	if out := cli(0, "sources", "list"); !strings.Contains(out, "0 source(s)") {
		t.Fatalf("list after remove: %s", out)
	}
}
