package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/testkit"
)

type sourceDoc struct {
	ID         string `json:"id"`
	ExternalID string `json:"external_id"`
	Source     string `json:"source"`
	Status     string `json:"status"`
	Version    int    `json:"version"`
	Pending    bool   `json:"pending"`
}

type sourceState struct {
	ID    string `json:"id"`
	Items int    `json:"items"`
	State struct {
		LastRunAt string `json:"last_run_at"`
		Added     int    `json:"added"`
		Updated   int    `json:"updated"`
		Deleted   int    `json:"deleted"`
		Unchanged int    `json:"unchanged"`
		Failed    int    `json:"failed"`
		LastError string `json:"last_error"`
		Paused    bool   `json:"paused"`
	} `json:"state"`
}

// TestFolderSourceShow is issue 18's show for folders: files are added, changed, renamed and deleted while
// the real binary runs, and the collection follows the folder within seconds; the embedder is the OpenAI
// wire-format fake, which counts what it embeds, so that an unchanged file embedded again would show.
func TestFolderSourceShow(t *testing.T) {
	fake := fakeapi.NewOpenAI("sk-sources")
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Each file carries a word found nowhere else, to count how often its text was embedded.
	write("harbour.md", "# Harbour\n\nThe harbour ledger counts nineteen gales; the word zebracorn marks this file.")
	write("notes/lighthouse.txt", "The lighthouse keeper logs every ship passing the cape; the word quillfeather marks this file.")
	write("tides.txt", "Tide tables for the northern bay; the word marbleking marks this file.")
	write("skip.bin", "not a type ragd reads")

	srv := testkit.Serve(t, testkit.CleanEnv("RAGD_DATA_DIR="+t.TempDir(), "RAGD_EMBEDDER=openai",
		"OPENAI_API_KEY="+fake.Key(), "OPENAI_BASE_URL="+fake.BaseURL()))
	call := func(method, path string, body any, want int) []byte {
		t.Helper()
		status, b := srv.Call(t, "", method, path, body)
		if status != want {
			t.Fatalf("%s %s: %d %s", method, path, status, b)
		}
		return b
	}
	embeddedWith := func(word string) int {
		n := 0
		for _, r := range fake.Requests() {
			var body struct {
				Input []string `json:"input"`
			}
			if r.JSON(&body) != nil {
				continue
			}
			for _, in := range body.Input {
				if strings.Contains(in, word) {
					n++
				}
			}
		}
		return n
	}
	docs := func(deleted bool) map[string]sourceDoc {
		t.Helper()
		path := "/api/documents?collection=papers&limit=500"
		if deleted {
			path += "&deleted=true"
		}
		var page struct{ Documents []sourceDoc }
		if err := json.Unmarshal(call("GET", path, nil, http.StatusOK), &page); err != nil {
			t.Fatal(err)
		}
		out := map[string]sourceDoc{}
		for _, d := range page.Documents {
			out[d.ExternalID] = d
		}
		return out
	}
	// matches waits until the collection's documents are the folder's files, each ready.
	matches := func(what string, ids ...string) map[string]sourceDoc {
		t.Helper()
		var got map[string]sourceDoc
		testkit.WaitFor(t, what, 20*time.Second, func() bool {
			got = docs(false)
			keys := make([]string, 0, len(got))
			for k, d := range got {
				if d.Status != "ready" || d.Pending {
					return false
				}
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return slices.Equal(keys, ids)
		})
		return got
	}

	var src sourceState
	if err := json.Unmarshal(call("POST", "/api/collections/papers/sources", map[string]any{"kind": "folder", "path": dir},
		http.StatusCreated), &src); err != nil || src.ID == "" {
		t.Fatalf("added source %+v, %v", src, err)
	}
	first := matches("the first sync", "harbour.md", "notes/lighthouse.txt", "tides.txt")
	if d := first["harbour.md"]; d.Source != filepath.Join(dir, "harbour.md") || d.Version != 1 {
		t.Errorf("harbour.md: %+v", d)
	}
	for _, w := range []string{"zebracorn", "quillfeather", "marbleking"} {
		if n := embeddedWith(w); n != 1 {
			t.Errorf("%s embedded %d times after the first sync", w, n)
		}
	}

	// A change: a new version of the same document; only it is embedded.
	changed := time.Now()
	write("harbour.md", "# Harbour\n\nThe harbour ledger now counts twenty gales; the word pangolinex marks this version.")
	got := map[string]sourceDoc{}
	testkit.WaitFor(t, "the changed file's new version", 20*time.Second, func() bool {
		got = docs(false)
		d := got["harbour.md"]
		return d.Version == 2 && d.Status == "ready" && !d.Pending
	})
	t.Logf("a changed file was searchable as its new version %s after it was written (a figure, not a limit)", time.Since(changed).Round(10*time.Millisecond))
	if got["harbour.md"].ID != first["harbour.md"].ID {
		t.Error("the changed file became another document")
	}

	// A rename keeps the document; a new file is added; a deleted file's document is deleted.
	if err := os.Rename(filepath.Join(dir, "notes/lighthouse.txt"), filepath.Join(dir, "lighthouse.txt")); err != nil {
		t.Fatal(err)
	}
	write("archive/new.md", "# New\n\nA note added while ragd runs; the word yellowfinch marks this file.")
	if err := os.Remove(filepath.Join(dir, "tides.txt")); err != nil {
		t.Fatal(err)
	}
	now := matches("the rename, the new file and the deletion", "archive/new.md", "harbour.md", "lighthouse.txt")
	if d := now["lighthouse.txt"]; d.ID != first["notes/lighthouse.txt"].ID || d.Version != 1 || d.Source != filepath.Join(dir, "lighthouse.txt") {
		t.Errorf("renamed file: %+v, was %+v", d, first["notes/lighthouse.txt"])
	}
	if d, ok := docs(true)["tides.txt"]; !ok || d.ID != first["tides.txt"].ID {
		t.Errorf("the deleted file's document is not among the deleted documents (restorable): %v", docs(true))
	}

	// A sync now finds nothing to do.
	var st sourceState
	if err := json.Unmarshal(call("POST", "/api/collections/papers/sources/"+src.ID+"/sync", nil, http.StatusOK), &st); err != nil {
		t.Fatal(err)
	}
	if st.State.Unchanged != 3 || st.State.Added+st.State.Updated+st.State.Deleted+st.State.Failed != 0 || st.State.LastError != "" ||
		st.Items != 3 || st.State.LastRunAt == "" {
		t.Errorf("sync on request: %+v", st)
	}
	// Nothing was embedded twice: each marked text once, the changed file's new text once.
	for _, w := range []string{"zebracorn", "quillfeather", "marbleking", "pangolinex", "yellowfinch"} {
		if n := embeddedWith(w); n != 1 {
			t.Errorf("%s embedded %d times", w, n)
		}
	}
	for _, d := range docs(false) {
		if want := map[string]int{"harbour.md": 2}[d.ExternalID]; d.Version != max(want, 1) {
			t.Errorf("%s is at version %d", d.ExternalID, d.Version)
		}
	}

	// The source shows in the list; removing it leaves its documents.
	var list struct {
		Sources []sourceState
		Kinds   []string
	}
	if err := json.Unmarshal(call("GET", "/api/collections/papers/sources", nil, http.StatusOK), &list); err != nil ||
		len(list.Sources) != 1 || !slices.Contains(list.Kinds, "folder") {
		t.Fatalf("list %+v, %v", list, err)
	}
	call("GET", "/api/collections/papers/sources/nope", nil, http.StatusNotFound)
	call("POST", "/api/collections/papers/sources", map[string]any{"kind": "folder", "path": "relative/dir"}, http.StatusBadRequest)
	call("DELETE", "/api/collections/papers/sources/"+src.ID, nil, http.StatusNoContent)
	call("GET", "/api/collections/papers/sources/"+src.ID, nil, http.StatusNotFound)
	if n := len(docs(false)); n != 3 {
		t.Errorf("%d documents after the source was removed", n)
	}
}
