package sources_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/connector/folder"
	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sources"
	"github.com/ragd/ragd/internal/store/postgres"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/testkit"
)

// countingEmbedder is the real hash embedder that counts the texts it embeds.
type countingEmbedder struct {
	*hash.Embedder
	mu    sync.Mutex
	texts int
}

func (c *countingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.texts += len(texts)
	c.mu.Unlock()
	return c.Embedder.EmbedDocuments(ctx, texts)
}

func (c *countingEmbedder) embedded() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.texts
}

// store is what the tests read and change: both stores are one.
type store interface {
	rag.Store
	rag.SyncStore
}

type bundle struct {
	store store
	pipe  *ingest.Pipeline
	emb   *countingEmbedder
	svc   *sources.Service
	dir   string
	coll  *rag.Collection
}

// setup runs the engine over a new embedded store.
func setup(t testing.TB, opt sources.Options) *bundle {
	t.Helper()
	st, err := sqlite.Open(t.Context(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return setupOn(t, st, opt)
}

// setupPostgres runs the engine over a PostgreSQL store in a schema of its own (skipped without
// RAGD_TEST_DATABASE_URL).
func setupPostgres(t testing.TB, opt sources.Options) *bundle {
	t.Helper()
	url := testkit.DatabaseURL(t)
	st, err := postgres.Open(t.Context(), url, postgres.Options{Schema: testkit.Schema(t, url, "sources_")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return setupOn(t, st, opt)
}

func setupOn(t testing.TB, st store, opt sources.Options) *bundle {
	t.Helper()
	ex, err := extract.New(extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	emb := &countingEmbedder{Embedder: hash.New(0)}
	pipe := ingest.New(st, ex, emb, ingest.Options{})
	opt.Kinds = connector.Kinds{folder.Kind: folder.New}
	b := &bundle{store: st, pipe: pipe, emb: emb, dir: t.TempDir()}
	b.svc = sources.New(st, pipe, func(ctx context.Context, id, _ string) error { return pipe.Process(ctx, id) }, opt)
	t.Cleanup(func() { b.svc.Close() })
	if b.coll, err = st.EnsureCollection(t.Context(), "papers", "user:alice"); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *bundle) write(t testing.TB, rel, text string) {
	t.Helper()
	p := filepath.Join(b.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) add(t testing.TB, spec map[string]any) *rag.SyncSource {
	t.Helper()
	if spec == nil {
		spec = map[string]any{}
	}
	spec["kind"] = "folder"
	if _, ok := spec["path"]; !ok {
		spec["path"] = b.dir
	}
	raw, _ := json.Marshal(spec)
	src, err := b.svc.Add(t.Context(), sources.AddRequest{Collection: "papers", Spec: raw, Owner: "user:alice"})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func (b *bundle) sync(t testing.TB, id string) rag.SyncState {
	t.Helper()
	src, err := b.svc.Sync(t.Context(), id, sources.TriggerRequest)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return src.State
}

// docs returns the live documents of the collection by external ID.
func (b *bundle) docs(t *testing.T) map[string]*rag.Document {
	t.Helper()
	page, err := b.store.ListDocuments(t.Context(), rag.LocalPrincipal, rag.DocumentQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*rag.Document{}
	for _, d := range page.Documents {
		out[d.ExternalID] = d
	}
	return out
}

func counts(st rag.SyncState) string {
	return fmt.Sprintf("added %d updated %d deleted %d unchanged %d failed %d", st.Added, st.Updated, st.Deleted, st.Unchanged, st.Failed)
}

// TestFolderSync follows a folder through additions, changes, renames, copies and deletions, on both stores.
func TestFolderSync(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { folderSync(t, setup(t, sources.Options{})) })
	t.Run("PostgreSQL", func(t *testing.T) { folderSync(t, setupPostgres(t, sources.Options{})) })
}

func folderSync(t *testing.T, b *bundle) {
	b.write(t, "harbour.md", "# Harbour\n\nThe harbour ledger counts nineteen gales in the winter of the long storm.")
	b.write(t, "notes/lighthouse.txt", "The lighthouse keeper logs every ship that passes the northern cape.")
	b.write(t, "notes/draft.txt", "A draft excluded by the source's settings.")
	b.write(t, ".hidden/secret.txt", "Hidden directories are never listed.")
	b.write(t, "image.bin", "not a type ragd reads")
	src := b.add(t, map[string]any{"exclude": []string{"draft.*"}})
	if src.Schedule != "@hourly" {
		t.Errorf("default schedule %q", src.Schedule)
	}

	st := b.sync(t, src.ID)
	if got := counts(st); got != "added 2 updated 0 deleted 0 unchanged 0 failed 0" {
		t.Fatalf("first sync: %s", got)
	}
	docs := b.docs(t)
	harbour, light := docs["harbour.md"], docs["notes/lighthouse.txt"]
	if len(docs) != 2 || harbour == nil || light == nil || harbour.Status != rag.StatusReady ||
		harbour.Source != filepath.Join(b.dir, "harbour.md") {
		t.Fatalf("documents after the first sync: %v", docs)
	}
	embedded := b.emb.embedded()

	t.Run("UnchangedIsNotFetchedNorEmbedded", func(t *testing.T) {
		st := b.sync(t, src.ID)
		if got := counts(st); got != "added 0 updated 0 deleted 0 unchanged 2 failed 0" {
			t.Errorf("second sync: %s", got)
		}
		if n := b.emb.embedded(); n != embedded {
			t.Errorf("an unchanged folder embedded %d texts", n-embedded)
		}
		// Touched without a change of content: fetched again, found unchanged by its hash, not embedded.
		later := time.Now().Add(time.Minute)
		if err := os.Chtimes(filepath.Join(b.dir, "harbour.md"), later, later); err != nil {
			t.Fatal(err)
		}
		st = b.sync(t, src.ID)
		if got := counts(st); got != "added 0 updated 0 deleted 0 unchanged 2 failed 0" {
			t.Errorf("sync after a touch: %s", got)
		}
		if n := b.emb.embedded(); n != embedded {
			t.Errorf("a touched file was embedded again (%d texts)", n-embedded)
		}
	})

	t.Run("ChangedIsANewVersion", func(t *testing.T) {
		b.write(t, "harbour.md", "# Harbour\n\nThe harbour ledger now counts twenty gales, after the spring storm.")
		st := b.sync(t, src.ID)
		if got := counts(st); got != "added 0 updated 1 deleted 0 unchanged 1 failed 0" {
			t.Errorf("sync after a change: %s", got)
		}
		d := b.docs(t)["harbour.md"]
		if d == nil || d.ID != harbour.ID || d.Version != 2 {
			t.Fatalf("changed document %+v", d)
		}
		if n := b.emb.embedded(); n <= embedded {
			t.Error("the changed file was not embedded")
		}
		embedded = b.emb.embedded()
	})

	t.Run("RenameKeepsTheDocument", func(t *testing.T) {
		if err := os.MkdirAll(filepath.Join(b.dir, "archive"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(b.dir, "notes/lighthouse.txt"), filepath.Join(b.dir, "archive/lighthouse.txt")); err != nil {
			t.Fatal(err)
		}
		st := b.sync(t, src.ID)
		if got := counts(st); got != "added 0 updated 0 deleted 0 unchanged 2 failed 0" {
			t.Errorf("sync after a rename: %s", got)
		}
		docs := b.docs(t)
		d := docs["archive/lighthouse.txt"]
		if d == nil || d.ID != light.ID || d.Version != 1 || d.Source != filepath.Join(b.dir, "archive/lighthouse.txt") || len(docs) != 2 {
			t.Fatalf("renamed document %+v (documents %v)", d, docs)
		}
		if n := b.emb.embedded(); n != embedded {
			t.Errorf("a renamed file was embedded again (%d texts)", n-embedded)
		}
	})

	t.Run("CopyThenDeleteIsAMoveByContent", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(b.dir, "archive/lighthouse.txt"))
		if err != nil {
			t.Fatal(err)
		}
		b.write(t, "lighthouse-copy.txt", string(data)) // a new inode
		if err := os.Remove(filepath.Join(b.dir, "archive/lighthouse.txt")); err != nil {
			t.Fatal(err)
		}
		st := b.sync(t, src.ID)
		if got := counts(st); got != "added 0 updated 0 deleted 0 unchanged 2 failed 0" {
			t.Errorf("sync after copy and delete: %s", got)
		}
		if d := b.docs(t)["lighthouse-copy.txt"]; d == nil || d.ID != light.ID {
			t.Fatalf("moved by content: %+v", d)
		}
	})

	t.Run("DeletedIsSoftDeleted", func(t *testing.T) {
		if err := os.Remove(filepath.Join(b.dir, "lighthouse-copy.txt")); err != nil {
			t.Fatal(err)
		}
		st := b.sync(t, src.ID)
		if got := counts(st); got != "added 0 updated 0 deleted 1 unchanged 1 failed 0" {
			t.Errorf("sync after a delete: %s", got)
		}
		if _, ok := b.docs(t)["lighthouse-copy.txt"]; ok {
			t.Error("the deleted file's document is still listed")
		}
		page, err := b.store.ListDocuments(t.Context(), rag.LocalPrincipal, rag.DocumentQuery{Deleted: true})
		if err != nil || len(page.Documents) != 1 || page.Documents[0].ID != light.ID || page.Documents[0].DeletedAt == nil {
			t.Fatalf("the deleted file's document is not among the deleted documents: %+v, %v", page, err)
		}
		items, _ := b.svc.Items(t.Context(), src.ID)
		if len(items) != 1 || items[0].ItemID != "harbour.md" {
			t.Errorf("items %+v", items)
		}
	})
}

func TestItemFailureIsRetried(t *testing.T) {
	b := setup(t, sources.Options{MaxBytes: 200})
	b.write(t, "ok.txt", "A small file about the harbour ledger.")
	b.write(t, "big.txt", strings.Repeat("The harbour ledger is long. ", 20))
	src := b.add(t, nil)
	st := b.sync(t, src.ID)
	if got := counts(st); got != "added 1 updated 0 deleted 0 unchanged 0 failed 1" {
		t.Fatalf("first sync: %s", got)
	}
	items, _ := b.svc.Items(t.Context(), src.ID)
	if len(items) != 2 || items[0].ItemID != "big.txt" || items[0].Attempts != 1 || !strings.Contains(items[0].Error, "limit") {
		t.Fatalf("items %+v %+v", items[0], items[1])
	}
	// Unchanged, it is tried again (and fails again) until it is fixed.
	st = b.sync(t, src.ID)
	items, _ = b.svc.Items(t.Context(), src.ID)
	if st.Failed != 1 || items[0].Attempts != 2 {
		t.Errorf("retry: %s, attempts %d", counts(st), items[0].Attempts)
	}
	b.write(t, "big.txt", "Now small enough.")
	st = b.sync(t, src.ID)
	if got := counts(st); got != "added 1 updated 0 deleted 0 unchanged 1 failed 0" {
		t.Errorf("after the fix: %s", got)
	}
	items, _ = b.svc.Items(t.Context(), src.ID)
	if items[0].Error != "" || items[0].Attempts != 0 || items[0].DocumentID == "" {
		t.Errorf("fixed item %+v", items[0])
	}
}

func TestRepeatedFailuresPause(t *testing.T) {
	b := setup(t, sources.Options{MaxFailures: 2})
	b.write(t, "a.txt", "The harbour ledger.")
	src := b.add(t, nil)
	b.sync(t, src.ID)
	moved := b.dir + "-gone"
	if err := os.Rename(b.dir, moved); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		got, err := b.svc.Sync(t.Context(), src.ID, sources.TriggerSchedule)
		if err == nil || got.State.Failures != i || got.State.LastError == "" {
			t.Fatalf("failure %d: %+v, %v", i, got.State, err)
		}
		if got.State.Paused != (i == 2) {
			t.Fatalf("after %d failures paused = %v", i, got.State.Paused)
		}
	}
	// The documents stay: a folder that cannot be read is not a folder emptied.
	if len(b.docs(t)) != 1 {
		t.Error("a failed sync deleted documents")
	}
	// Paused: scheduled syncs do nothing; a sync on request runs and resumes the source.
	got, err := b.svc.Sync(t.Context(), src.ID, sources.TriggerSchedule)
	if err != nil || !got.State.Paused || got.State.Failures != 2 {
		t.Fatalf("scheduled sync of a paused source: %+v, %v", got.State, err)
	}
	if err := os.Rename(moved, b.dir); err != nil {
		t.Fatal(err)
	}
	st := b.sync(t, src.ID)
	if st.Paused || st.Failures != 0 || st.LastError != "" || st.PauseReason != "" || st.Unchanged != 1 {
		t.Errorf("resumed: %+v", st)
	}
}

func TestOneSyncAtATime(t *testing.T) {
	b := setup(t, sources.Options{})
	b.write(t, "a.txt", "The harbour ledger.")
	src := b.add(t, nil)
	if ok, err := b.store.ClaimSource(t.Context(), src.ID, "another-process", time.Now().Add(time.Minute)); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, err := b.svc.Sync(t.Context(), src.ID, sources.TriggerRequest); !errors.Is(err, sources.ErrBusy) {
		t.Fatalf("sync while another holds the source: %v", err)
	}
	// SyncSoon waits for the other sync, then runs.
	done := b.svc.SyncSoon(src.ID)
	select {
	case err := <-done:
		t.Fatalf("SyncSoon ran while the source was held: %v", err)
	case <-time.After(600 * time.Millisecond):
	}
	if err := b.store.ReleaseSource(t.Context(), src.ID, "another-process", rag.SyncState{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(b.docs(t)) != 1 {
		t.Error("the sync after the other did not run")
	}
}

func TestAddValidates(t *testing.T) {
	b := setup(t, sources.Options{})
	for name, spec := range map[string]string{
		"NotAnObject":   `[1]`,
		"NoKind":        `{"path":"/tmp"}`,
		"UnknownKind":   `{"kind":"ftp","path":"/tmp"}`,
		"RelativePath":  `{"kind":"folder","path":"docs"}`,
		"BadPattern":    `{"kind":"folder","path":"/tmp","include":["[a"]}`,
		"UnknownField":  `{"kind":"folder","path":"/tmp","recursive":true}`,
		"BadSchedule":   `{"kind":"folder","path":"/tmp","schedule":"every day"}`,
		"BadCredential": `{"kind":"folder","path":"/tmp","credentials":12}`,
		"TooLarge":      `{"kind":"folder","path":"/tmp","include":["` + strings.Repeat("a", sources.MaxSettingsBytes) + `"]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := b.svc.Add(t.Context(), sources.AddRequest{Collection: "papers", Spec: json.RawMessage(spec), Owner: "local"})
			if rag.ErrorCode(err) != rag.CodeInvalid {
				t.Errorf("err = %v, want invalid_request", err)
			}
		})
	}
	_, err := b.svc.Add(t.Context(), sources.AddRequest{Collection: "nope", Spec: json.RawMessage(`{"kind":"folder","path":"/tmp"}`)})
	if !errors.Is(err, rag.ErrNotFound) {
		t.Errorf("unknown collection: %v", err)
	}
	src, err := b.svc.Add(t.Context(), sources.AddRequest{Collection: "papers",
		Spec: json.RawMessage(`{"kind":"folder","path":"/tmp","schedule":"","credentials":"tok"}`)})
	if err != nil || src.Schedule != "" || !src.HasCredentials || strings.Contains(string(src.Settings), "tok") {
		t.Errorf("added %+v, %v", src, err)
	}
}

func TestWatch(t *testing.T) {
	b := setup(t, sources.Options{Debounce: 200 * time.Millisecond, Refresh: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.svc.Watch(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	b.write(t, "before.md", "# Before\n\nA note written before the source was added.")
	src := b.add(t, nil) // Add tells the running Watch, whose watcher syncs once it is set
	testkit.WaitFor(t, "the first file's document", 10*time.Second, func() bool {
		d := b.docs(t)["before.md"]
		return d != nil && d.Status == rag.StatusReady
	})
	b.write(t, "sub/new.md", "# New\n\nA note written while ragd watches the folder.")
	testkit.WaitFor(t, "the new file's document", 10*time.Second, func() bool {
		d := b.docs(t)["sub/new.md"]
		return d != nil && d.Status == rag.StatusReady
	})
	if err := os.Remove(filepath.Join(b.dir, "sub/new.md")); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the removed file's document to go", 10*time.Second, func() bool {
		_, ok := b.docs(t)["sub/new.md"]
		return !ok
	})
	if err := b.svc.Remove(t.Context(), "papers", src.ID); err != nil {
		t.Fatal(err)
	}
}

func TestDueFollowsTheSchedule(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	b := setup(t, sources.Options{Now: clock})
	b.write(t, "a.txt", "The harbour ledger.")
	hourly := b.add(t, map[string]any{"schedule": "@hourly"})
	b.add(t, map[string]any{"schedule": ""}) // on request only
	if n, err := b.svc.Due(t.Context()); err != nil || n != 0 {
		t.Fatalf("Due right after adding: %d, %v", n, err)
	}
	now = now.Add(61 * time.Minute)
	if n, err := b.svc.Due(t.Context()); err != nil || n != 1 {
		t.Fatalf("Due an hour later: %d, %v", n, err)
	}
	got, _ := b.store.GetSource(t.Context(), hourly.ID)
	if got.State.LastRunAt == nil || got.State.Added != 1 {
		t.Fatalf("the scheduled sync: %+v", got.State)
	}
	if n, _ := b.svc.Due(t.Context()); n != 0 {
		t.Errorf("Due again at once synced %d", n)
	}
	now = now.Add(time.Hour)
	if n, _ := b.svc.Due(t.Context()); n != 1 {
		t.Errorf("Due an hour after the last run synced %d", n)
	}
}

// TestLimits checks each limit of a source at its boundary: the item size, the description's size and the
// number of patterns.
func TestLimits(t *testing.T) {
	b := setup(t, sources.Options{MaxBytes: 100})
	b.write(t, "at.txt", strings.Repeat("a", 99)+"\n")    // 100 bytes: taken
	b.write(t, "over.txt", strings.Repeat("b", 100)+"\n") // 101 bytes: refused
	src := b.add(t, nil)
	st := b.sync(t, src.ID)
	if st.Added != 1 || st.Failed != 1 {
		t.Errorf("items at and over the limit: %s", counts(st))
	}
	patterns := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("p%d/*.md", i)
		}
		return out
	}
	for n, ok := range map[int]bool{folder.MaxPatterns: true, folder.MaxPatterns + 1: false} {
		raw, _ := json.Marshal(map[string]any{"kind": "folder", "path": b.dir, "include": patterns(n)})
		_, err := b.svc.Add(t.Context(), sources.AddRequest{Collection: "papers", Spec: raw})
		if (err == nil) != ok {
			t.Errorf("%d include patterns: %v", n, err)
		}
	}
	// A description of exactly MaxSettingsBytes is taken; one byte more is refused.
	base := `{"kind":"folder","path":"` + b.dir + `","include":["`
	fill := sources.MaxSettingsBytes - len(base) - len(`"]}`)
	for size, ok := range map[int]bool{fill: true, fill + 1: false} {
		spec := base + strings.Repeat("x", size) + `"]}`
		_, err := b.svc.Add(t.Context(), sources.AddRequest{Collection: "papers", Spec: json.RawMessage(spec)})
		if (err == nil) != ok {
			t.Errorf("a description of %d bytes: %v", len(spec), err)
		}
	}
}

// BenchmarkUnchangedSync measures a sync of a folder of 1,000 files none of which changed: the listing, the
// comparison of versions and the state's record (nothing is read or embedded).
func BenchmarkUnchangedSync(b *testing.B) {
	bb := setup(b, sources.Options{})
	for i := range 1000 {
		bb.write(b, fmt.Sprintf("d%02d/f%04d.txt", i%20, i), fmt.Sprintf("File %d of the harbour ledger.", i))
	}
	src := bb.add(b, nil)
	if st := bb.sync(b, src.ID); st.Added != 1000 {
		b.Fatalf("first sync: %s", counts(st))
	}
	b.ResetTimer()
	for b.Loop() {
		if st := bb.sync(b, src.ID); st.Unchanged != 1000 {
			b.Fatalf("sync: %s", counts(st))
		}
	}
}
