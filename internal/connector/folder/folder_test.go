package folder

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/connector"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, rel string
		want         bool
	}{
		{"*.md", "a.md", true},
		{"*.md", "notes/deep/a.md", true},
		{"*.md", "a.txt", false},
		{"drafts", "drafts/a.md", true},
		{"drafts", "notes/drafts/a.md", true},
		{"drafts", "draftsman.md", false},
		{"papers/**", "papers/a.pdf", true},
		{"papers/**", "papers/2024/q1/a.pdf", true},
		{"papers/**", "other/papers/a.pdf", false},
		{"papers/**/*.pdf", "papers/a.pdf", true},
		{"papers/**/*.pdf", "papers/x/y/a.pdf", true},
		{"papers/**/*.pdf", "papers/x/a.md", false},
		{"**/index.md", "a/b/index.md", true},
		{"**/index.md", "index.md", true},
		{"notes/?.md", "notes/a.md", true},
		{"notes/?.md", "notes/ab.md", false},
		{"notes", "notes/a.md", true},
		{"notes/a.md", "notes/a.md", true},
	} {
		if got := match(c.pattern, c.rel); got != c.want {
			t.Errorf("match(%q, %q) = %v, want %v", c.pattern, c.rel, got, c.want)
		}
	}
	for _, bad := range []string{"", "[a", "x/[/y"} {
		if checkPattern(bad) == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}

func TestListAndMoves(t *testing.T) {
	dir := t.TempDir()
	for rel, text := range map[string]string{"a.md": "a", "sub/b.txt": "b", ".git/c.md": "c", "sub/.hidden.md": "h", "d.exe": "d"} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	settings, _ := json.Marshal(Settings{Path: dir})
	src, err := New(connector.Config{Settings: settings, MaxBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	l, err := src.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range l.Items {
		ids = append(ids, it.ID)
	}
	if !l.Full || !slices.Equal(ids, []string{"a.md", "sub/b.txt"}) || l.Items[1].Source != filepath.Join(dir, "sub", "b.txt") ||
		l.Items[1].Name != "b.txt" || l.Items[1].Version == "" || len(l.Moved) != 0 {
		t.Fatalf("listing %+v", l)
	}
	if err := os.Rename(filepath.Join(dir, "sub/b.txt"), filepath.Join(dir, "b-moved.txt")); err != nil {
		t.Fatal(err)
	}
	l2, err := src.List(t.Context(), l.Cursor)
	if err != nil {
		t.Fatal(err)
	}
	if l2.Moved["sub/b.txt"] != "b-moved.txt" || len(l2.Moved) != 1 {
		t.Errorf("moves %v", l2.Moved)
	}
	data, err := src.Fetch(t.Context(), connector.Item{ID: "b-moved.txt"})
	if err != nil || string(data) != "b" {
		t.Errorf("fetch %q, %v", data, err)
	}
	if _, err := src.Fetch(t.Context(), connector.Item{ID: "../outside.md"}); err == nil {
		t.Error("fetched an item outside the folder")
	}
	// An item over MaxBytes fails alone; exactly MaxBytes is read.
	if err := os.WriteFile(filepath.Join(dir, "ten.md"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "eleven.md"), []byte("0123456789a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Fetch(t.Context(), connector.Item{ID: "ten.md"}); err != nil {
		t.Errorf("an item of MaxBytes: %v", err)
	}
	if _, err := src.Fetch(t.Context(), connector.Item{ID: "eleven.md"}); err == nil {
		t.Error("an item over MaxBytes was read")
	}
	// A folder that is gone fails the listing (it is not an empty folder).
	settings, _ = json.Marshal(Settings{Path: filepath.Join(dir, "nope")})
	gone, _ := New(connector.Config{Settings: settings})
	if _, err := gone.List(t.Context(), ""); err == nil {
		t.Error("listing a missing folder succeeded")
	}
}
