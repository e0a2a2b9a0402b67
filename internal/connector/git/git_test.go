package git

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/server"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/rag"
)

// testRepo is a Git repository made in the test, with a work tree to commit from.
type testRepo struct {
	t    *testing.T
	dir  string
	repo *gogit.Repository
	when time.Time
}

func newTestRepo(t *testing.T) *testRepo {
	dir := t.TempDir()
	repo, err := gogit.PlainInitWithOptions(dir, &gogit.PlainInitOptions{InitOptions: gogit.InitOptions{DefaultBranch: "refs/heads/main"}})
	if err != nil {
		t.Fatal(err)
	}
	return &testRepo{t: t, dir: dir, repo: repo, when: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// commit writes files (content "" deletes the file; "->new/path" renames it) and commits them.
func (r *testRepo) commit(msg string, files map[string]string) string {
	r.t.Helper()
	wt, err := r.repo.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		switch {
		case content == "":
			if _, err := wt.Remove(name); err != nil {
				r.t.Fatal(err)
			}
		case strings.HasPrefix(content, "->"):
			to := strings.TrimPrefix(content, "->")
			if err := os.MkdirAll(filepath.Dir(filepath.Join(r.dir, to)), 0o755); err != nil {
				r.t.Fatal(err)
			}
			if _, err := wt.Move(name, to); err != nil {
				r.t.Fatal(err)
			}
		default:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				r.t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				r.t.Fatal(err)
			}
			if _, err := wt.Add(name); err != nil {
				r.t.Fatal(err)
			}
		}
	}
	r.when = r.when.Add(time.Hour)
	h, err := wt.Commit(msg, &gogit.CommitOptions{Author: &object.Signature{Name: "T", Email: "t@example.com", When: r.when}})
	if err != nil {
		r.t.Fatal(err)
	}
	return h.String()
}

func newSource(t *testing.T, settings map[string]any, c connector.Config) connector.Source {
	t.Helper()
	c.Settings, _ = json.Marshal(settings)
	src, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func itemIDs(items []connector.Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.ID)
	}
	slices.Sort(out)
	return out
}

const longText = "Retrieval-augmented generation answers questions from documents. It retrieves passages, then writes an answer grounded in them, citing each one. "

// syncSteps runs the same history against a source: a first full listing, then diffs with additions,
// changes, a rename and a deletion.
func syncSteps(t *testing.T, r *testRepo, src connector.Source) {
	ctx := context.Background()
	c1 := r.commit("first", map[string]string{
		"README.md": "# Project\n" + longText, "docs/guide.md": "# Guide\n" + longText + "guide", "notes.txt": longText + "notes",
		"logo.png": "\x89PNG not text", "main.go": "package main\n\nfunc main() {}\n",
	})
	first, err := src.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := itemIDs(first.Items); !first.Full || first.Cursor != c1 || !slices.Equal(got, []string{"README.md", "docs/guide.md", "main.go", "notes.txt"}) {
		t.Fatalf("first listing: full %v cursor %s (want %s) items %v", first.Full, first.Cursor, c1, got)
	}
	for _, it := range first.Items {
		if it.Metadata["commit"] != c1 || it.Metadata["path"] != it.ID || len(it.Version) != 40 || it.Name != filepath.Base(it.ID) {
			t.Errorf("item %+v", it)
		}
	}
	data, err := src.Fetch(ctx, first.Items[slices.IndexFunc(first.Items, func(it connector.Item) bool { return it.ID == "notes.txt" })])
	if err != nil || string(data) != longText+"notes" {
		t.Fatalf("fetch notes.txt: %v %q", err, data)
	}

	same, err := src.List(ctx, c1)
	if err != nil || same.Full || len(same.Items)+len(same.Deleted)+len(same.Moved) != 0 || same.Cursor != c1 {
		t.Fatalf("no new commit: %+v %v", same, err)
	}

	c2 := r.commit("edit and rename", map[string]string{"README.md": "# Project\n" + longText + "now changed", "notes.txt": "->docs/notes.txt", "docs/new.md": "# New\nA new page."})
	c3 := r.commit("delete", map[string]string{"main.go": ""})
	diff, err := src.List(ctx, c1)
	if err != nil {
		t.Fatal(err)
	}
	if diff.Full || diff.Cursor != c3 {
		t.Fatalf("diff: full %v cursor %s, want %s (after %s)", diff.Full, diff.Cursor, c3, c2)
	}
	if got := itemIDs(diff.Items); !slices.Equal(got, []string{"README.md", "docs/new.md", "docs/notes.txt"}) {
		t.Errorf("changed items %v", got)
	}
	if !slices.Equal(diff.Deleted, []string{"main.go"}) {
		t.Errorf("deleted %v", diff.Deleted)
	}
	if len(diff.Moved) != 1 || diff.Moved["notes.txt"] != "docs/notes.txt" {
		t.Errorf("moved %v", diff.Moved)
	}
	for _, it := range diff.Items {
		if it.ID == "docs/notes.txt" {
			before := first.Items[slices.IndexFunc(first.Items, func(it connector.Item) bool { return it.ID == "notes.txt" })]
			if it.Version != before.Version {
				t.Errorf("a renamed, unchanged file has a new version %s (was %s)", it.Version, before.Version)
			}
		}
		if it.ID == "README.md" {
			data, err := src.Fetch(ctx, it)
			if err != nil || !strings.HasSuffix(string(data), "now changed") {
				t.Errorf("fetch changed README: %v %q", err, data)
			}
		}
	}

	t.Run("ForcePushedCursor", func(t *testing.T) {
		l, err := src.List(ctx, strings.Repeat("ab", 20)) // a commit not in the history
		if err != nil || !l.Full || len(l.Items) != 4 {
			t.Fatalf("unknown cursor: %v full %v items %v", err, l.Full, itemIDs(l.Items))
		}
	})
}

func TestLocal(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	src := newSource(t, map[string]any{"url": r.dir, "branch": "main"}, connector.Config{MaxBytes: 1 << 20})
	syncSteps(t, r, src)
	l, err := src.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if it := l.Items[0]; it.Source != filepath.Join(r.dir, filepath.FromSlash(it.ID)) {
		t.Errorf("source %q", it.Source)
	}
}

func TestPathsAndLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newTestRepo(t)
	r.commit("files", map[string]string{"docs/a.md": "# A\nText.", "docs/big.md": strings.Repeat("x", 101), "src/b.go": "package b", "c.md": "# C"})
	l, err := newSource(t, map[string]any{"url": "file://" + r.dir, "paths": []string{"docs"}}, connector.Config{MaxBytes: 100}).List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := itemIDs(l.Items); !slices.Equal(got, []string{"docs/a.md"}) {
		t.Fatalf("items %v: want docs/ only, without the file over 100 bytes", got)
	}
	if _, err := newSource(t, map[string]any{"url": r.dir, "branch": "nope"}, connector.Config{}).List(ctx, ""); rag.ErrorCode(err) != rag.CodeNotFound {
		t.Fatalf("unknown branch: %v", err)
	}
	if _, err := newSource(t, map[string]any{"url": t.TempDir()}, connector.Config{}).List(ctx, ""); rag.ErrorCode(err) != rag.CodeInvalid {
		t.Fatalf("not a repository: %v", err)
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`{}`, `{"url": "relative/path"}`, `{"url": "ssh://git@example.com/r.git"}`, `{"url": "git://example.com/r.git"}`,
		`{"url": "https:///r.git"}`, `{"url": "/abs", "branch": "a b"}`, `{"url": "/abs", "depth": 1}`} {
		if _, err := New(connector.Config{Settings: json.RawMessage(s)}); rag.ErrorCode(err) != rag.CodeInvalid {
			t.Errorf("%s: err %v, want invalid", s, err)
		}
	}
}

func TestReadsLocal(t *testing.T) {
	t.Parallel()
	for settings, want := range map[string]bool{`{"url": "/srv/repo"}`: true, `{"url": "file:///srv/repo"}`: true, `{}`: true,
		`{"url": "https://example.com/r.git"}`: false, `{"url": "http://example.com/r.git"}`: false} {
		if got := ReadsLocal(json.RawMessage(settings)); got != want {
			t.Errorf("ReadsLocal(%s) = %v", settings, got)
		}
	}
}

// gitServer serves a repository over Git's smart HTTP protocol (upload-pack only) with go-git's own
// server, and counts the requests. With a token set it wants it as the basic-auth password.
func gitServer(t *testing.T, repo *gogit.Repository, token string) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := server.NewServer(loader{repo.Storer})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if _, pass, _ := r.BasicAuth(); token != "" && pass != token {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		ep, _ := transport.NewEndpoint("http://repo/")
		sess, err := srv.NewUploadPackSession(ep, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		switch {
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/info/refs"):
			ar, err := sess.AdvertisedReferencesContext(r.Context())
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			ar.Prefix = [][]byte{[]byte("# service=git-upload-pack"), pktline.Flush}
			w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
			_ = ar.Encode(w)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack"):
			req := packp.NewUploadPackRequest()
			if err := req.Decode(r.Body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			resp, err := sess.UploadPack(r.Context(), req)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			defer resp.Close()
			w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
			_ = resp.Encode(w)
		default:
			http.NotFound(w, r)
		}
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts, &hits
}

type loader struct{ s storer.Storer }

func (l loader) Load(*transport.Endpoint) (storer.Storer, error) { return l.s, nil }

func TestRemote(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	ts, _ := gitServer(t, r.repo, "")
	src := newSource(t, map[string]any{"url": ts.URL + "/project.git", "branch": "main"},
		connector.Config{HTTP: netguard.Options{AllowPrivate: true}.Client(), MaxBytes: 1 << 20})
	syncSteps(t, r, src)
	l, err := src.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if it := l.Items[0]; !strings.HasPrefix(it.Source, ts.URL+"/project/") {
		t.Errorf("source %q", it.Source)
	}
}

func TestRemoteRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newTestRepo(t)
	r.commit("one", map[string]string{"a.md": "# A"})

	t.Run("PrivateAddress", func(t *testing.T) {
		ts, hits := gitServer(t, r.repo, "")
		_, err := newSource(t, map[string]any{"url": ts.URL + "/r.git"}, connector.Config{HTTP: netguard.Options{}.Client()}).List(ctx, "")
		if rag.ErrorCode(err) != rag.CodeForbidden || hits.Load() != 0 {
			t.Fatalf("err %v, %d requests reached the server", err, hits.Load())
		}
	})
	t.Run("Token", func(t *testing.T) {
		ts, _ := gitServer(t, r.repo, "s3cret")
		local := netguard.Options{AllowPrivate: true}.Client()
		_, err := newSource(t, map[string]any{"url": ts.URL + "/r.git"}, connector.Config{HTTP: local, Credentials: []byte("expired")}).List(ctx, "")
		if !errors.Is(err, connector.ErrUnauthorized) {
			t.Fatalf("a refused token: %v, want ErrUnauthorized", err)
		}
		l, err := newSource(t, map[string]any{"url": ts.URL + "/r.git"}, connector.Config{HTTP: local, Credentials: []byte("s3cret\n")}).List(ctx, "")
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("with the token: %v %v", err, itemIDs(l.Items))
		}
	})
}
