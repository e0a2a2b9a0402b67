package sources_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/connector/git"
	"github.com/ragd/ragd/internal/connector/notion"
	"github.com/ragd/ragd/internal/connector/web"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sources"
)

// remote runs the engine with the web and git kinds over a new embedded store, reaching 127.0.0.1.
func remote(t *testing.T) *bundle {
	b := setup(t, sources.Options{})
	b.svc.Close()
	b.svc = sources.New(b.store, b.pipe, func(ctx context.Context, id, _ string) error { return b.pipe.Process(ctx, id) },
		sources.Options{Kinds: connector.Kinds{web.Kind: web.New, git.Kind: git.New}, HTTP: netguard.Options{AllowPrivate: true}.Client()})
	t.Cleanup(func() { b.svc.Close() })
	return b
}

func (b *bundle) addSpec(t *testing.T, spec map[string]any) *rag.SyncSource {
	t.Helper()
	raw, _ := json.Marshal(spec)
	src, err := b.svc.Add(t.Context(), sources.AddRequest{Collection: "papers", Spec: raw, Owner: "user:alice"})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestWebSourceSync syncs a site through the engine: pages become documents, an unchanged site (304s and
// unchanged hashes) embeds nothing, a page no longer linked is deleted.
func TestWebSourceSync(t *testing.T) {
	var mu sync.Mutex
	pages := map[string]string{
		"/":        `<html><body><h1>Harbour</h1><p>The harbour guide.</p><a href="/gales">gales</a> <a href="/ships">ships</a></body></html>`,
		"/gales":   `<html><body><p>The ledger counts nineteen gales in the winter of the long storm.</p></body></html>`,
		"/ships":   `<html><body><p>The keeper logs every ship that passes the northern cape.</p></body></html>`,
		"/ignored": `<html><body><p>Not linked.</p></body></html>`,
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		page, ok := pages[r.URL.Path]
		mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		etag := fmt.Sprintf(`"%x"`, len(page))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(site.Close)
	b := remote(t)
	src := b.addSpec(t, map[string]any{"kind": "web", "url": site.URL + "/"})
	if got := counts(b.sync(t, src.ID)); got != "added 3 updated 0 deleted 0 unchanged 0 failed 0" {
		t.Fatalf("first sync: %s", got)
	}
	docs := b.docs(t)
	if d := docs[site.URL+"/gales"]; d == nil || d.Source != site.URL+"/gales" || d.Status != rag.StatusReady {
		t.Fatalf("documents %v", docs)
	}
	embedded := b.emb.embedded()
	if got := counts(b.sync(t, src.ID)); got != "added 0 updated 0 deleted 0 unchanged 3 failed 0" || b.emb.embedded() != embedded {
		t.Fatalf("unchanged site: %s, %d texts embedded", got, b.emb.embedded()-embedded)
	}
	mu.Lock()
	pages["/"] = `<html><body><h1>Harbour</h1><p>The harbour guide, shorter.</p><a href="/gales">gales</a></body></html>`
	mu.Unlock()
	if got := counts(b.sync(t, src.ID)); got != "added 0 updated 1 deleted 1 unchanged 1 failed 0" {
		t.Fatalf("after an edit that unlinks a page: %s", got)
	}
	if _, ok := b.docs(t)[site.URL+"/ships"]; ok {
		t.Fatal("the unlinked page is still a document")
	}
}

// TestGitSourceSync syncs a repository through the engine by commit diff: a rename keeps its document and
// embeds nothing, a change is a new version, a deletion deletes.
func TestGitSourceSync(t *testing.T) {
	dir := t.TempDir()
	repo, err := gogit.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commit := func(write map[string]string, move [2]string, remove string) {
		for name, text := range write {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := wt.Add(name); err != nil {
				t.Fatal(err)
			}
		}
		if move[0] != "" {
			if _, err := wt.Move(move[0], move[1]); err != nil {
				t.Fatal(err)
			}
		}
		if remove != "" {
			if _, err := wt.Remove(remove); err != nil {
				t.Fatal(err)
			}
		}
		when = when.Add(time.Hour)
		if _, err := wt.Commit("c", &gogit.CommitOptions{Author: &object.Signature{Name: "T", Email: "t@example.com", When: when}}); err != nil {
			t.Fatal(err)
		}
	}
	commit(map[string]string{
		"README.md":       "# Harbour\n\nThe harbour ledger counts nineteen gales in the winter of the long storm.",
		"notes/ships.txt": "The keeper logs every ship that passes the northern cape.",
		"old.md":          "# Old\n\nA page that will be deleted.",
	}, [2]string{}, "")
	b := remote(t)
	src := b.addSpec(t, map[string]any{"kind": "git", "url": dir})
	if got := counts(b.sync(t, src.ID)); got != "added 3 updated 0 deleted 0 unchanged 0 failed 0" {
		t.Fatalf("first sync: %s", got)
	}
	ships := b.docs(t)["notes/ships.txt"]
	embedded := b.emb.embedded()
	commit(map[string]string{"README.md": "# Harbour\n\nThe ledger now counts twenty gales."}, [2]string{"notes/ships.txt", "logs/ships.txt"}, "old.md")
	st := b.sync(t, src.ID)
	docs := b.docs(t)
	moved := docs["logs/ships.txt"]
	if moved == nil || moved.ID != ships.ID || moved.Version != 1 || docs["old.md"] != nil || docs["README.md"].Version != 2 || st.Deleted != 1 {
		t.Fatalf("after a commit that edits, renames and deletes: %s, documents %v", counts(st), docs)
	}
	readme := docs["README.md"]
	if n := b.emb.embedded() - embedded; n == 0 || n > readme.ChunkCount {
		t.Fatalf("%d texts embedded for one changed file of %d chunks: the renamed file was embedded again", n, readme.ChunkCount)
	}
}

// changes is an incremental kind over a fixed history: revision r of the cursor lists the items changed
// after it; fails makes an item's fetch fail while it is above zero.
type changes struct {
	mu    sync.Mutex
	revs  [][]connector.Item // items changed in each revision, oldest first
	fails map[string]int
}

func (c *changes) List(_ context.Context, cursor string) (connector.Listing, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	from := 0
	if cursor != "" {
		fmt.Sscan(cursor, &from)
	}
	var items []connector.Item
	for _, rev := range c.revs[from:] {
		items = append(items, rev...)
	}
	return connector.Listing{Items: items, Cursor: fmt.Sprint(len(c.revs))}, nil
}

func (c *changes) Fetch(_ context.Context, it connector.Item) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fails[it.ID] > 0 {
		c.fails[it.ID]--
		return nil, fmt.Errorf("%s: the provider answered 503", it.ID)
	}
	return []byte("# " + it.ID + "\n\nThe text of " + it.ID + " at version " + it.Version + "."), nil
}

// TestIncrementalRetriesFailedItem: an incremental kind lists an item only when it changes, so an item whose
// fetch failed must be listed again at the next sync (the engine keeps the cursor before it) rather than be
// forgotten once the cursor moves past its change.
func TestIncrementalRetriesFailedItem(t *testing.T) {
	kind := &changes{
		revs:  [][]connector.Item{{{ID: "a.md", Name: "a.md", Version: "1"}, {ID: "b.md", Name: "b.md", Version: "1"}}},
		fails: map[string]int{"b.md": 1},
	}
	b := setup(t, sources.Options{})
	b.svc.Close()
	b.svc = sources.New(b.store, b.pipe, func(ctx context.Context, id, _ string) error { return b.pipe.Process(ctx, id) },
		sources.Options{Kinds: connector.Kinds{"changes": func(connector.Config) (connector.Source, error) { return kind, nil }}})
	t.Cleanup(func() { b.svc.Close() })
	src := b.addSpec(t, map[string]any{"kind": "changes"})

	if got := counts(b.sync(t, src.ID)); got != "added 1 updated 0 deleted 0 unchanged 0 failed 1" {
		t.Fatalf("first sync: %s", got)
	}
	kind.mu.Lock()
	kind.revs = append(kind.revs, []connector.Item{{ID: "c.md", Name: "c.md", Version: "1"}})
	kind.mu.Unlock()
	if got := counts(b.sync(t, src.ID)); got != "added 2 updated 0 deleted 0 unchanged 1 failed 0" {
		t.Fatalf("second sync (b.md to retry, c.md new): %s", got)
	}
	if docs := b.docs(t); docs["a.md"] == nil || docs["b.md"] == nil || docs["c.md"] == nil {
		t.Fatalf("documents %v: the failed item was not synced again", docs)
	}
	// Nothing failed: the cursor moves on, and a sync with no change lists nothing.
	if got := counts(b.sync(t, src.ID)); got != "added 0 updated 0 deleted 0 unchanged 0 failed 0" {
		t.Fatalf("third sync: %s", got)
	}
}

// TestUnauthorizedPauses syncs a Notion workspace (the wire-format fake) through the engine: a revoked token
// pauses the source at once with the reason, a scheduled pass leaves it alone, and a sync on request
// after the token is mended resumes it.
func TestUnauthorizedPauses(t *testing.T) {
	fake := fakeapi.NewNotion("secret_one")
	t.Cleanup(fake.Close)
	fake.Put(fakeapi.NotionPage{ID: "0123456789abcdef0123456789abcdef", Title: "Harbour", LastEdited: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Blocks: []fakeapi.NotionBlock{{Type: "paragraph", Text: "The harbour ledger counts nineteen gales."}}})
	b := setup(t, sources.Options{})
	b.svc.Close()
	b.svc = sources.New(b.store, b.pipe, func(ctx context.Context, id, _ string) error { return b.pipe.Process(ctx, id) },
		sources.Options{Kinds: connector.Kinds{notion.Kind: notion.Factory(fake.URL(), nil)}, HTTP: netguard.Options{AllowPrivate: true}.Client()})
	t.Cleanup(func() { b.svc.Close() })
	src := b.addSpec(t, map[string]any{"kind": "notion", "credentials": "secret_one"})
	if st := b.sync(t, src.ID); st.Added != 1 || st.Paused {
		t.Fatalf("first sync: %s, paused %v", counts(st), st.Paused)
	}

	fake.SetToken("secret_two") // the integration's token was revoked
	if _, err := b.svc.Sync(t.Context(), src.ID, sources.TriggerRequest); !errors.Is(err, connector.ErrUnauthorized) {
		t.Fatalf("sync with a refused token: %v", err)
	}
	got, err := b.svc.Get(t.Context(), "papers", src.ID)
	if err != nil {
		t.Fatal(err)
	}
	st := got.State
	if !st.Paused || st.Failures != 1 || !strings.Contains(st.PauseReason, "credentials") {
		t.Fatalf("after a refused token: paused %v after %d failures, reason %q", st.Paused, st.Failures, st.PauseReason)
	}
	if docs := b.docs(t); len(docs) != 1 {
		t.Fatalf("a refused token changed the documents: %v", docs)
	}
	fake.SetToken("secret_one") // mended at the provider
	// A scheduled pass leaves a paused source alone: the fake sees no request.
	calls := fake.Calls("search")
	if got, err := b.svc.Sync(t.Context(), src.ID, sources.TriggerSchedule); err != nil || !got.State.Paused || fake.Calls("search") != calls {
		t.Fatalf("a scheduled sync of a paused source: %v, paused %v, %d requests", err, got != nil && got.State.Paused, fake.Calls("search")-calls)
	}
	if st := b.sync(t, src.ID); st.Paused || st.Failures != 0 || st.Unchanged != 1 {
		t.Fatalf("a sync on request after the fix: %s, paused %v, %d failures", counts(st), st.Paused, st.Failures)
	}
}
