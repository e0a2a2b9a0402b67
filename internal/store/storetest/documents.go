package storetest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

func testDocuments(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("CreateDocument/OK", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		before := time.Now().Add(-time.Second)
		d := &rag.Document{
			CollectionID: c.ID, ExternalID: "reports/2024.pdf", Title: "Annual report", Source: "/data/reports/2024.pdf",
			MediaType: "application/pdf", PendingHash: hashOf("v1"), Status: rag.StatusQueued, Stage: rag.StageQueued,
			Metadata: map[string]any{"region": "seoul", "rent": float64(50), "active": true,
				"nested": map[string]any{"list": []any{float64(1), "two"}}},
			Tags: []string{"finance", "2024"}, Owner: alice.ID, Readers: []string{"group:eng", bob.ID},
		}
		if err := s.CreateDocument(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		if d.ID == "" || d.CreatedAt.Before(before) || d.UpdatedAt.Before(before) {
			t.Fatalf("ID/timestamps not assigned: %+v", d)
		}
		got := getDoc(t, s, d.ID)
		checkDocEqual(t, got, d)
		if got.Version != 0 || got.ChunkCount != 0 || got.ContentHash != "" {
			t.Errorf("new document has version %d, %d chunks, content hash %q", got.Version, got.ChunkCount, got.ContentHash)
		}
	})
	t.Run("CreateDocument/DefaultsToQueued", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := &rag.Document{CollectionID: c.ID, ExternalID: "a.txt", Owner: alice.ID}
		if err := s.CreateDocument(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		got := getDoc(t, s, d.ID)
		if got.Status != rag.StatusQueued || got.Stage != rag.StageQueued {
			t.Fatalf("status/stage = %q/%q, want queued/queued", got.Status, got.Stage)
		}
	})
	t.Run("CreateDocument/KeepsGivenID", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt", func(d *rag.Document) { d.ID = "0b9e8f7a-6c5d-4e3f-a2b1-c0d9e8f7a6b5" })
		if got := getDoc(t, s, "0b9e8f7a-6c5d-4e3f-a2b1-c0d9e8f7a6b5"); got.ExternalID != d.ExternalID {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("CreateDocument/ErrConflict", func(t *testing.T) {
		s := open(t)
		c1 := mustCollection(t, s, "one")
		c2 := mustCollection(t, s, "two")
		newDoc(t, s, c1.ID, "same.txt")
		err := s.CreateDocument(t.Context(), &rag.Document{CollectionID: c1.ID, ExternalID: "same.txt", Owner: bob.ID})
		if !errors.Is(err, rag.ErrConflict) {
			t.Fatalf("same external ID in one collection: err = %v, want ErrConflict", err)
		}
		// The same external ID in another collection is a different document.
		newDoc(t, s, c2.ID, "same.txt")
		page, err := s.ListDocuments(t.Context(), admin, rag.DocumentQuery{})
		if err != nil || page.Total != 2 {
			t.Fatalf("ListDocuments total = %v, %v; want 2", page, err)
		}
	})
	t.Run("CreateDocument/EmptyExternalIDNotUnique", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		newDoc(t, s, c.ID, "")
		newDoc(t, s, c.ID, "")
	})
	t.Run("CreateDocument/ErrNotFound", func(t *testing.T) {
		s := open(t)
		mustCollection(t, s, "docs")
		err := s.CreateDocument(t.Context(), &rag.Document{CollectionID: "missing", ExternalID: "a.txt", Owner: alice.ID})
		wantNotFound(t, "CreateDocument in a missing collection", err)
	})
	t.Run("GetDocument/ErrNotFound", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		newDoc(t, s, c.ID, "a.txt")
		for _, id := range []string{"missing", "0b9e8f7a-6c5d-4e3f-a2b1-c0d9e8f7a6b5", ""} {
			_, err := s.GetDocument(t.Context(), admin, id)
			wantNotFound(t, fmt.Sprintf("GetDocument(%q)", id), err)
		}
	})
	t.Run("FindDocument/OK", func(t *testing.T) {
		s := open(t)
		c1 := mustCollection(t, s, "one")
		c2 := mustCollection(t, s, "two")
		d1 := newDoc(t, s, c1.ID, "docs/guide.md")
		d2 := newDoc(t, s, c2.ID, "docs/guide.md")
		for _, tc := range []struct {
			coll string
			want *rag.Document
		}{{c1.ID, d1}, {c2.ID, d2}} {
			got, err := s.FindDocument(t.Context(), alice, tc.coll, "docs/guide.md")
			if err != nil || got.ID != tc.want.ID {
				t.Errorf("FindDocument(%s) = %v, %v; want %s", tc.coll, got, err, tc.want.ID)
			}
		}
	})
	t.Run("FindDocument/ErrNotFound", func(t *testing.T) {
		s := open(t)
		c1 := mustCollection(t, s, "one")
		c2 := mustCollection(t, s, "two")
		newDoc(t, s, c1.ID, "docs/guide.md")
		_, err := s.FindDocument(t.Context(), alice, c2.ID, "docs/guide.md")
		wantNotFound(t, "FindDocument in the other collection", err)
		_, err = s.FindDocument(t.Context(), alice, c1.ID, "docs/other.md")
		wantNotFound(t, "FindDocument of another external ID", err)
	})
	t.Run("UpdateDocument/OK", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt", func(d *rag.Document) {
			d.Metadata = map[string]any{"k": "v"}
			d.Tags = []string{"old"}
			d.Readers = []string{bob.ID}
		})
		commitTexts(t, s, d, spaceA, []string{"first text"}, nil)
		d = getDoc(t, s, d.ID)
		tick()
		title := "New title"
		got, err := s.UpdateDocument(t.Context(), alice, d.ID, rag.DocumentUpdate{
			Title: &title, Metadata: map[string]any{"k2": float64(2)}, Tags: []string{"x", "y"},
		})
		if err != nil {
			t.Fatal(err)
		}
		want := *d
		want.Title, want.Metadata, want.Tags = title, map[string]any{"k2": float64(2)}, []string{"x", "y"}
		want.UpdatedAt = got.UpdatedAt
		checkDocEqual(t, got, &want)
		if !got.UpdatedAt.After(d.UpdatedAt) {
			t.Errorf("UpdatedAt %v not after %v", got.UpdatedAt, d.UpdatedAt)
		}
		checkDocEqual(t, getDoc(t, s, d.ID), got)

		// Empty, non-nil slices clear; nil fields stay.
		got, err = s.UpdateDocument(t.Context(), alice, d.ID, rag.DocumentUpdate{Tags: []string{}, Readers: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Tags) != 0 || len(got.Readers) != 0 || got.Title != title || !jsonEqual(got.Metadata, map[string]any{"k2": float64(2)}) {
			t.Errorf("after clearing tags and readers: %+v", got)
		}
		if got.Version != 1 {
			t.Errorf("UpdateDocument changed the version to %d", got.Version)
		}
	})
	t.Run("UpdateDocument/ErrNotFound", func(t *testing.T) {
		s := open(t)
		title := "x"
		_, err := s.UpdateDocument(t.Context(), admin, "missing", rag.DocumentUpdate{Title: &title})
		wantNotFound(t, "UpdateDocument(missing)", err)
	})
	t.Run("SetDocumentState/OK", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		tick()
		err := s.SetDocumentState(t.Context(), d.ID, rag.DocumentState{Status: rag.StatusProcessing, Stage: rag.StageEmbed, Progress: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		got := getDoc(t, s, d.ID)
		if got.Status != rag.StatusProcessing || got.Stage != rag.StageEmbed || got.Progress != 0.5 ||
			got.PendingHash != d.PendingHash || !got.UpdatedAt.After(d.UpdatedAt) {
			t.Errorf("after processing state: %+v", got)
		}
		empty := ""
		err = s.SetDocumentState(t.Context(), d.ID, rag.DocumentState{Status: rag.StatusFailed, Stage: rag.StageExtract,
			ErrorCode: rag.CodeUnsupportedMediaType, Error: "a.txt: unsupported media type", PendingHash: &empty})
		if err != nil {
			t.Fatal(err)
		}
		got = getDoc(t, s, d.ID)
		if got.Status != rag.StatusFailed || got.ErrorCode != rag.CodeUnsupportedMediaType ||
			got.Error != "a.txt: unsupported media type" || got.PendingHash != "" || got.Progress != 0 {
			t.Errorf("after failed state: %+v", got)
		}
	})
	t.Run("SetDocumentState/FailedHash", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		data := []byte("the bytes of a failed attempt")
		hash := fmt.Sprintf("%x", sha256.Sum256(data))
		if err := s.PutBlob(t.Context(), hash, data); err != nil {
			t.Fatal(err)
		}
		empty := ""
		err := s.SetDocumentState(t.Context(), d.ID, rag.DocumentState{Status: rag.StatusFailed, Stage: rag.StageEmbed,
			ErrorCode: rag.CodeEmbeddingFailed, Error: "embedder down", PendingHash: &empty, FailedHash: &hash})
		if err != nil {
			t.Fatal(err)
		}
		if got := getDoc(t, s, d.ID); got.FailedHash != hash || got.PendingHash != "" {
			t.Fatalf("failed hash %q pending %q", got.FailedHash, got.PendingHash)
		}
		// A state without FailedHash leaves it; an empty one clears it.
		if err := s.SetDocumentState(t.Context(), d.ID, rag.DocumentState{Status: rag.StatusFailed, Stage: rag.StageEmbed}); err != nil {
			t.Fatal(err)
		}
		if got := getDoc(t, s, d.ID); got.FailedHash != hash {
			t.Fatalf("failed hash lost: %q", got.FailedHash)
		}
		// The failed attempt's bytes belong to the document: they go with it.
		if err := s.DeleteDocument(t.Context(), admin, d.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetBlob(t.Context(), hash); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("the failed attempt's blob outlived its document: %v", err)
		}
		d2 := newDoc(t, s, c.ID, "b.txt")
		if err := s.PutBlob(t.Context(), hash, data); err != nil {
			t.Fatal(err)
		}
		if err := s.SetDocumentState(t.Context(), d2.ID, rag.DocumentState{Status: rag.StatusFailed, FailedHash: &hash}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetDocumentState(t.Context(), d2.ID, rag.DocumentState{Status: rag.StatusQueued, PendingHash: &hash, FailedHash: &empty}); err != nil {
			t.Fatal(err)
		}
		if got := getDoc(t, s, d2.ID); got.FailedHash != "" || got.PendingHash != hash {
			t.Fatalf("after a retry: failed %q pending %q", got.FailedHash, got.PendingHash)
		}
	})
	t.Run("SetDocumentState/ErrNotFound", func(t *testing.T) {
		s := open(t)
		err := s.SetDocumentState(t.Context(), "missing", rag.DocumentState{Status: rag.StatusFailed})
		wantNotFound(t, "SetDocumentState(missing)", err)
	})
	t.Run("DocumentsByStatus/OldestFirst", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d1 := newDoc(t, s, c.ID, "1.txt", func(d *rag.Document) { d.Owner = bob.ID })
		tick()
		d2 := newDoc(t, s, c.ID, "2.txt")
		tick()
		d3 := newDoc(t, s, c.ID, "3.txt")
		tick()
		d4 := newDoc(t, s, c.ID, "4.txt", func(d *rag.Document) { d.Owner = dave.ID })
		if err := s.SetDocumentState(t.Context(), d2.ID, rag.DocumentState{Status: rag.StatusProcessing, Stage: rag.StageChunk}); err != nil {
			t.Fatal(err)
		}
		commitTexts(t, s, d3, spaceA, []string{"ready text"}, nil)
		list, err := s.DocumentsByStatus(t.Context(), []rag.Status{rag.StatusQueued, rag.StatusProcessing}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := listIDs(list), []string{d1.ID, d2.ID, d4.ID}; !slices.Equal(got, want) {
			t.Errorf("queued+processing = %v, want %v", got, want)
		}
		list, err = s.DocumentsByStatus(t.Context(), []rag.Status{rag.StatusQueued, rag.StatusProcessing}, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := listIDs(list), []string{d1.ID, d2.ID}; !slices.Equal(got, want) {
			t.Errorf("limit 2 = %v, want %v", got, want)
		}
		list, err = s.DocumentsByStatus(t.Context(), []rag.Status{rag.StatusReady}, 10)
		if err != nil || len(list) != 1 || list[0].ID != d3.ID || list[0].ChunkCount != 1 {
			t.Errorf("ready = %v, %v; want [%s] with 1 chunk", list, err, d3.ID)
		}
		list, err = s.DocumentsByStatus(t.Context(), []rag.Status{rag.StatusFailed}, 10)
		if err != nil || len(list) != 0 {
			t.Errorf("failed = %v, %v; want none", list, err)
		}
	})

	t.Run("SetDocumentState/IfPending", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "a.txt")
		cur := hashOf("a.txt")
		// The pending version matches: written.
		if err := s.SetDocumentState(t.Context(), d.ID, rag.DocumentState{Status: rag.StatusProcessing, Stage: rag.StageEmbed, Progress: 0.5, IfPending: cur}); err != nil {
			t.Fatalf("matching IfPending: %v", err)
		}
		got := getDoc(t, s, d.ID)
		if got.Status != rag.StatusProcessing || got.Progress != 0.5 {
			t.Fatalf("after a matching conditional write: %s %.2f", got.Status, got.Progress)
		}
		// Another version: refused with ErrConflict and nothing changes.
		other := hashOf("older upload")
		err := s.SetDocumentState(t.Context(), d.ID, rag.DocumentState{Status: rag.StatusFailed, Stage: rag.StageExtract, Error: "stale", IfPending: other})
		if !errors.Is(err, rag.ErrConflict) {
			t.Fatalf("stale IfPending: %v, want ErrConflict", err)
		}
		if after := getDoc(t, s, d.ID); after.Status != rag.StatusProcessing || after.Error != "" || after.PendingHash != cur {
			t.Fatalf("a refused write changed the document: %s %q pending %q", after.Status, after.Error, after.PendingHash)
		}
		// A missing document stays ErrNotFound, conditional or not.
		for _, cond := range []string{"", cur} {
			if err := s.SetDocumentState(t.Context(), "no-such-document", rag.DocumentState{Status: rag.StatusReady, IfPending: cond}); !errors.Is(err, rag.ErrNotFound) {
				t.Errorf("missing document, IfPending %q: %v, want ErrNotFound", cond, err)
			}
		}
	})

	t.Run("PendingDocuments/AnyStatusOldestFirst", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		queued := newDoc(t, s, c.ID, "queued.txt", func(d *rag.Document) { d.Owner = bob.ID })
		tick()
		processing := newDoc(t, s, c.ID, "processing.txt")
		tick()
		// Ready with its next version waiting: the commit was of other content, so the pending hash stays.
		readyNext := newDoc(t, s, c.ID, "ready-next.txt")
		tick()
		failed := newDoc(t, s, c.ID, "failed.txt")
		tick()
		ready := newDoc(t, s, c.ID, "ready.txt")
		empty := ""
		for id, st := range map[string]rag.DocumentState{
			processing.ID: {Status: rag.StatusProcessing, Stage: rag.StageChunk},
			failed.ID:     {Status: rag.StatusFailed, Stage: rag.StageExtract, ErrorCode: rag.CodeInvalid, Error: "bad", PendingHash: &empty},
		} {
			if err := s.SetDocumentState(t.Context(), id, st); err != nil {
				t.Fatal(err)
			}
		}
		commitTexts(t, s, readyNext, spaceA, []string{"current text"}, nil)
		commitTexts(t, s, ready, spaceA, []string{"ready text"}, nil)
		if err := s.SetDocumentState(t.Context(), ready.ID, rag.DocumentState{Status: rag.StatusReady, Stage: rag.StageDone, Progress: 1, PendingHash: &empty}); err != nil {
			t.Fatal(err)
		}
		list, err := s.PendingDocuments(t.Context(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := listIDs(list), []string{queued.ID, processing.ID, readyNext.ID}; !slices.Equal(got, want) {
			t.Errorf("pending = %v, want %v (queued, processing, ready with a next version)", got, want)
		}
		if len(list) == 3 && (list[2].Status != rag.StatusReady || list[2].PendingHash != hashOf("ready-next.txt")) {
			t.Errorf("ready document with a next version = %s pending %q", list[2].Status, list[2].PendingHash)
		}
		list, err = s.PendingDocuments(t.Context(), 2)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := listIDs(list), []string{queued.ID, processing.ID}; !slices.Equal(got, want) {
			t.Errorf("limit 2 = %v, want %v", got, want)
		}
		// limit ≤ 0 takes the default (100), on this method and on DocumentsByStatus alike.
		for _, limit := range []int{0, -1} {
			if list, err := s.PendingDocuments(t.Context(), limit); err != nil || len(list) != 3 {
				t.Errorf("PendingDocuments(limit %d) = %d documents, %v; want the 3 (default limit)", limit, len(list), err)
			}
			if list, err := s.DocumentsByStatus(t.Context(), []rag.Status{rag.StatusQueued, rag.StatusProcessing}, limit); err != nil || len(list) != 2 {
				t.Errorf("DocumentsByStatus(limit %d) = %d documents, %v; want the 2 (default limit)", limit, len(list), err)
			}
		}
	})
}

// checkDocEqual compares every field of a document as a store returns it (nil and empty collections equal).
func checkDocEqual(t *testing.T, got, want *rag.Document) {
	t.Helper()
	type flat struct {
		ID, CollectionID, ExternalID, Title, Source, MediaType, ContentHash, PendingHash string
		Version                                                                          int
		Size                                                                             int64
		Status                                                                           rag.Status
		Stage                                                                            rag.Stage
		Progress                                                                         float64
		ErrorCode                                                                        rag.Code
		Error, Owner                                                                     string
		ChunkCount                                                                       int
	}
	f := func(d *rag.Document) flat {
		return flat{d.ID, d.CollectionID, d.ExternalID, d.Title, d.Source, d.MediaType, d.ContentHash, d.PendingHash,
			d.Version, d.Size, d.Status, d.Stage, d.Progress, d.ErrorCode, d.Error, d.Owner, d.ChunkCount}
	}
	if f(got) != f(want) {
		t.Errorf("document fields:\n got %+v\nwant %+v", f(got), f(want))
	}
	if !jsonEqual(emptyNil(got.Metadata), emptyNil(want.Metadata)) {
		t.Errorf("metadata = %v, want %v", got.Metadata, want.Metadata)
	}
	if !slices.Equal(got.Tags, want.Tags) && (len(got.Tags) > 0 || len(want.Tags) > 0) {
		t.Errorf("tags = %q, want %q", got.Tags, want.Tags)
	}
	if !slices.Equal(got.Readers, want.Readers) && (len(got.Readers) > 0 || len(want.Readers) > 0) {
		t.Errorf("readers = %q, want %q", got.Readers, want.Readers)
	}
	if !got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
		t.Errorf("timestamps = %v/%v, want %v/%v", got.CreatedAt, got.UpdatedAt, want.CreatedAt, want.UpdatedAt)
	}
}

func emptyNil(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}
