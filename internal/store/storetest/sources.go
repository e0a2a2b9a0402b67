package storetest

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// syncStore returns the store's rag.SyncStore; every store implements it.
func syncStore(t *testing.T, s rag.Store) rag.SyncStore {
	t.Helper()
	ss, ok := s.(rag.SyncStore)
	if !ok {
		t.Fatalf("%T does not implement rag.SyncStore", s)
	}
	return ss
}

// newSource opens a store and adds a folder source without credentials to its collection "papers".
func newSource(t *testing.T, open func(t *testing.T) rag.Store) (rag.Store, rag.SyncStore, *rag.Collection, *rag.SyncSource) {
	t.Helper()
	s := open(t)
	ss := syncStore(t, s)
	c := mustCollection(t, s, "papers")
	src := &rag.SyncSource{CollectionID: c.ID, Kind: "folder", Owner: alice.ID}
	if err := ss.CreateSource(t.Context(), src, nil); err != nil {
		t.Fatal(err)
	}
	return s, ss, c, src
}

func testSources(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("CreateGetListDelete", func(t *testing.T) {
		s := open(t)
		ss := syncStore(t, s)
		ctx := t.Context()
		c := mustCollection(t, s, "papers")
		other := mustCollection(t, s, "other")
		src := &rag.SyncSource{CollectionID: c.ID, Kind: "folder", Settings: json.RawMessage(`{"path":"/srv/papers"}`),
			Schedule: "@hourly", Owner: alice.ID}
		if err := ss.CreateSource(ctx, src, []byte("token-123")); err != nil {
			t.Fatal(err)
		}
		if src.ID == "" || src.CreatedAt.IsZero() || !src.HasCredentials {
			t.Fatalf("created %+v", src)
		}
		if err := ss.CreateSource(ctx, &rag.SyncSource{CollectionID: other.ID, Kind: "web", Owner: bob.ID}, nil); err != nil {
			t.Fatal(err)
		}
		got, err := ss.GetSource(ctx, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		var settings map[string]string
		if err := json.Unmarshal(got.Settings, &settings); err != nil || settings["path"] != "/srv/papers" {
			t.Errorf("settings %s (%v)", got.Settings, err)
		}
		if got.Kind != "folder" || got.Schedule != "@hourly" || got.Owner != alice.ID || !got.HasCredentials ||
			!got.CreatedAt.Equal(src.CreatedAt) || got.State.Running || got.State.LastRunAt != nil {
			t.Errorf("got %+v", got)
		}
		cred, err := ss.SourceCredentials(ctx, src.ID)
		if err != nil || string(cred) != "token-123" {
			t.Errorf("credentials %q, %v", cred, err)
		}
		list, err := ss.ListSources(ctx, c.ID)
		if err != nil || len(list) != 1 || list[0].ID != src.ID {
			t.Errorf("ListSources(papers) = %v, %v", list, err)
		}
		all, err := ss.ListSources(ctx, "")
		if err != nil || len(all) != 2 {
			t.Errorf("ListSources(all) = %d, %v", len(all), err)
		}
		if err := ss.CreateSource(ctx, &rag.SyncSource{CollectionID: "no-such", Kind: "folder", Owner: alice.ID}, nil); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("source of a missing collection: %v", err)
		}
		if err := ss.PutSourceItem(ctx, &rag.SyncItem{SourceID: src.ID, ItemID: "a.md", DocumentID: "d1"}); err != nil {
			t.Fatal(err)
		}
		if err := ss.DeleteSource(ctx, src.ID); err != nil {
			t.Fatal(err)
		}
		_, err = ss.GetSource(ctx, src.ID)
		wantNotFound(t, "GetSource after delete", err)
		wantNotFound(t, "DeleteSource twice", ss.DeleteSource(ctx, src.ID))
		_, err = ss.SourceCredentials(ctx, src.ID)
		wantNotFound(t, "SourceCredentials after delete", err)
		if items, err := ss.SourceItems(ctx, src.ID); err != nil || len(items) != 0 {
			t.Errorf("items of a deleted source: %v, %v", items, err)
		}
	})

	t.Run("NoCredentials", func(t *testing.T) {
		_, ss, _, src := newSource(t, open)
		got, err := ss.GetSource(t.Context(), src.ID)
		if err != nil || got.HasCredentials || string(got.Settings) != "{}" {
			t.Fatalf("got %+v, %v", got, err)
		}
		if cred, err := ss.SourceCredentials(t.Context(), src.ID); err != nil || cred != nil {
			t.Errorf("credentials %q, %v", cred, err)
		}
	})

	t.Run("Lease", func(t *testing.T) {
		_, ss, _, src := newSource(t, open)
		ctx := t.Context()
		long := time.Now().Add(time.Hour)
		if ok, err := ss.ClaimSource(ctx, src.ID, "p1", long); err != nil || !ok {
			t.Fatalf("first claim: %v, %v", ok, err)
		}
		if ok, err := ss.ClaimSource(ctx, src.ID, "p2", long); err != nil || ok {
			t.Fatalf("second holder's claim: %v, %v", ok, err)
		}
		if ok, err := ss.ClaimSource(ctx, src.ID, "p1", long.Add(time.Minute)); err != nil || !ok {
			t.Fatalf("renewal: %v, %v", ok, err)
		}
		if got, _ := ss.GetSource(ctx, src.ID); !got.State.Running {
			t.Error("a held source is not running")
		}
		if err := ss.ReleaseSource(ctx, src.ID, "p2", rag.SyncState{Added: 9}); !errors.Is(err, rag.ErrConflict) {
			t.Errorf("release by a non-holder: %v", err)
		}
		run := time.Now().UTC().Truncate(time.Microsecond)
		st := rag.SyncState{Cursor: "c1", LastRunAt: &run, LastSuccessAt: &run, Added: 3, Updated: 1, Deleted: 2, Unchanged: 5,
			Failed: 1, Failures: 0}
		if err := ss.ReleaseSource(ctx, src.ID, "p1", st); err != nil {
			t.Fatal(err)
		}
		got, err := ss.GetSource(ctx, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		g := got.State
		if g.Running || g.Cursor != "c1" || g.Added != 3 || g.Updated != 1 || g.Deleted != 2 || g.Unchanged != 5 || g.Failed != 1 ||
			g.LastRunAt == nil || !g.LastRunAt.Equal(run) || g.LastSuccessAt == nil {
			t.Errorf("state %+v", g)
		}
		// Another holder takes the free lease; an expired lease is free too.
		if ok, err := ss.ClaimSource(ctx, src.ID, "p2", time.Now().Add(-time.Second)); err != nil || !ok {
			t.Fatalf("claim of a free lease: %v, %v", ok, err)
		}
		if ok, err := ss.ClaimSource(ctx, src.ID, "p3", long); err != nil || !ok {
			t.Fatalf("claim of an expired lease: %v, %v", ok, err)
		}
		st = rag.SyncState{Cursor: "c1", LastError: "credentials refused", Failures: 3, Paused: true, PauseReason: "credentials refused"}
		if err := ss.ReleaseSource(ctx, src.ID, "p3", st); err != nil {
			t.Fatal(err)
		}
		got, _ = ss.GetSource(ctx, src.ID)
		if !got.State.Paused || got.State.PauseReason != "credentials refused" || got.State.Failures != 3 || got.State.LastRunAt != nil {
			t.Errorf("paused state %+v", got.State)
		}
		_, err = ss.ClaimSource(ctx, "no-such", "p1", long)
		wantNotFound(t, "ClaimSource(missing)", err)
	})

	t.Run("Items", func(t *testing.T) {
		s, ss, c, src := newSource(t, open)
		ctx := t.Context()
		d := newDoc(t, s, c.ID, "notes/a.md")
		newDoc(t, s, c.ID, "taken.md")
		put := func(it *rag.SyncItem) {
			t.Helper()
			it.SourceID = src.ID
			if err := ss.PutSourceItem(ctx, it); err != nil {
				t.Fatal(err)
			}
		}
		put(&rag.SyncItem{ItemID: "notes/a.md", DocumentID: d.ID, Version: "v1", ContentHash: "h1"})
		put(&rag.SyncItem{ItemID: "b.pdf", Error: "fetch failed", Attempts: 1})
		put(&rag.SyncItem{ItemID: "b.pdf", Error: "fetch failed again", Attempts: 2})
		items, err := ss.SourceItems(ctx, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, it := range items {
			ids = append(ids, it.ItemID)
		}
		if !slices.Equal(ids, []string{"b.pdf", "notes/a.md"}) || items[0].Attempts != 2 || items[0].Error != "fetch failed again" ||
			items[1].DocumentID != d.ID || items[1].Version != "v1" || items[1].ContentHash != "h1" || items[1].UpdatedAt.IsZero() {
			t.Fatalf("items %+v %+v", items[0], items[1])
		}

		// A move keeps the document: same ID, new external ID and source.
		if err := ss.MoveSourceItem(ctx, src.ID, "notes/a.md", "archive/a.md", "/srv/archive/a.md"); err != nil {
			t.Fatal(err)
		}
		moved, err := s.FindDocument(ctx, admin, c.ID, "archive/a.md")
		if err != nil || moved.ID != d.ID || moved.Source != "/srv/archive/a.md" {
			t.Fatalf("moved document %+v, %v", moved, err)
		}
		_, err = s.FindDocument(ctx, admin, c.ID, "notes/a.md")
		wantNotFound(t, "old external ID", err)
		wantNotFound(t, "move of a missing item", ss.MoveSourceItem(ctx, src.ID, "notes/a.md", "x.md", "/x.md"))
		if err := ss.MoveSourceItem(ctx, src.ID, "archive/a.md", "b.pdf", "/b.pdf"); !errors.Is(err, rag.ErrConflict) {
			t.Errorf("move onto an item: %v", err)
		}
		if err := ss.MoveSourceItem(ctx, src.ID, "archive/a.md", "taken.md", "/taken.md"); !errors.Is(err, rag.ErrConflict) {
			t.Errorf("move onto another document's external ID: %v", err)
		}
		if got, err := s.GetDocument(ctx, admin, d.ID); err != nil || got.ExternalID != "archive/a.md" {
			t.Errorf("a refused move changed the document: %+v, %v", got, err)
		}
		if err := ss.DeleteSourceItem(ctx, src.ID, "b.pdf"); err != nil {
			t.Fatal(err)
		}
		if err := ss.DeleteSourceItem(ctx, src.ID, "b.pdf"); err != nil {
			t.Errorf("deleting a missing item: %v", err)
		}
		items, _ = ss.SourceItems(ctx, src.ID)
		if len(items) != 1 || items[0].ItemID != "archive/a.md" || items[0].DocumentID != d.ID {
			t.Errorf("items after delete %+v", items)
		}
	})
}
