package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// testTrash checks deletion after a window: TrashDocument hides a document from every query at once,
// RestoreDocument brings it back for re-indexing, PurgeDocuments removes what waited long enough.
func testTrash(t *testing.T, open func(t *testing.T) rag.Store) {
	// setup stores two documents of alice's with chunks (and vectors in space A) and their blobs; gone has
	// two versions.
	setup := func(t *testing.T) (rag.Store, *rag.Collection, *rag.Document, *rag.Document) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		gone := newDoc(t, s, c.ID, "gone.txt", func(d *rag.Document) { d.Readers, d.PendingHash = []string{bob.ID}, "" })
		kept := newDoc(t, s, c.ID, "kept.txt", func(d *rag.Document) { d.PendingHash = "" })
		for _, content := range []string{"[volcanic eruption report]", "[volcanic eruption update]", "[volcanic ash advisory]"} {
			if err := s.PutBlob(t.Context(), hashOf(content), []byte(content)); err != nil {
				t.Fatal(err)
			}
		}
		commitTexts(t, s, gone, spaceA, []string{"volcanic eruption report"}, [][]float32{basis(spaceA.Dim, 0)})
		commitTexts(t, s, gone, spaceA, []string{"volcanic eruption update"}, [][]float32{basis(spaceA.Dim, 0)})
		commitTexts(t, s, kept, spaceA, []string{"volcanic ash advisory"}, [][]float32{basis(spaceA.Dim, 1)})
		return s, c, getDoc(t, s, gone.ID), getDoc(t, s, kept.ID)
	}

	t.Run("TrashDocument/HidesAtOnce", func(t *testing.T) {
		s, c, gone, kept := setup(t)
		ctx := t.Context()
		chunks, err := s.ListChunks(ctx, alice, gone.ID)
		if err != nil || len(chunks) != 1 {
			t.Fatalf("ListChunks = %v, %v", chunks, err)
		}
		wantNotFound(t, "TrashDocument by a reader", errOf(s.TrashDocument(ctx, dave, gone.ID)))
		d, err := s.TrashDocument(ctx, bob, gone.ID)
		if err != nil {
			t.Fatalf("TrashDocument: %v", err)
		}
		if d.DeletedAt == nil || d.ID != gone.ID || d.ExternalID != "gone.txt" || d.ChunkCount != 0 {
			t.Errorf("trashed document = %+v", d)
		}
		for _, p := range []rag.Principal{alice, admin} {
			wantNotFound(t, "GetDocument", errOf(s.GetDocument(ctx, p, gone.ID)))
			wantNotFound(t, "ListChunks", errOf(s.ListChunks(ctx, p, gone.ID)))
			wantNotFound(t, "ListVersions", errOf(s.ListVersions(ctx, p, gone.ID)))
			wantNotFound(t, "UpdateDocument", errOf(s.UpdateDocument(ctx, p, gone.ID, rag.DocumentUpdate{Tags: []string{"x"}})))
			if got := hitDocs(t, s, keyword(t, s, p, "volcanic", rag.Filter{}, 10)); !slices.Equal(got, []string{kept.ID}) {
				t.Errorf("keyword documents of %s = %v, want only %s", p.ID, got, kept.ID)
			}
			if got := hitDocs(t, s, vector(t, s, p, spaceA, basis(spaceA.Dim, 0), rag.Filter{}, 10)); !slices.Equal(got, []string{kept.ID}) {
				t.Errorf("vector documents of %s = %v, want only %s", p.ID, got, kept.ID)
			}
			dc, err := s.DocumentCandidates(ctx, p, rag.KeywordQuery{Terms: queryTerms("gone"), K: 10})
			if err != nil || len(dc) != 0 {
				t.Errorf("DocumentCandidates(gone) of %s = %v, %v", p.ID, dc, err)
			}
		}
		if cands := keyword(t, s, bob, "volcanic", rag.Filter{}, 10); len(cands) != 0 {
			t.Errorf("bob's keyword candidates after delete = %v", cands)
		}
		wantNotFound(t, "GetDocument of bob", errOf(s.GetDocument(ctx, bob, gone.ID)))
		wantNotFound(t, "FindDocument", errOf(s.FindDocument(ctx, admin, c.ID, "gone.txt")))
		page, err := s.ListDocuments(ctx, admin, rag.DocumentQuery{})
		if err != nil || page.Total != 1 || listIDs(page.Documents)[0] != kept.ID {
			t.Errorf("ListDocuments after delete = %+v, %v", page, err)
		}
		if hits, err := s.Hits(ctx, rag.LocalPrincipal, []int64{chunks[0].ID}); err != nil || len(hits) != 0 {
			t.Errorf("Hits of a deleted chunk = %v, %v", hits, err)
		}
		if st, err := s.SpaceStats(ctx); err != nil || st.Chunks != 1 {
			t.Errorf("SpaceStats = %+v, %v; want the kept chunk only", st, err)
		}
		wantNotFound(t, "SetDocumentState", s.SetDocumentState(ctx, gone.ID, rag.DocumentState{Status: rag.StatusReady}))
		_, err = s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: gone.ID, ContentHash: hashOf("late"), Space: spaceA,
			Chunks: chunksOf(spaceA, []string{"volcanic late"}, nil)})
		wantNotFound(t, "CommitVersion of a deleted document", err)
		wantNotFound(t, "TrashDocument twice", errOf(s.TrashDocument(ctx, alice, gone.ID)))

		// The trash lists it, to its readers only.
		trash, err := s.ListDocuments(ctx, bob, rag.DocumentQuery{Deleted: true})
		if err != nil || trash.Total != 1 || trash.Documents[0].ID != gone.ID || trash.Documents[0].DeletedAt == nil {
			t.Errorf("ListDocuments(Deleted) = %+v, %v", trash, err)
		}
		if trash, err := s.ListDocuments(ctx, dave, rag.DocumentQuery{Deleted: true}); err != nil || trash.Total != 0 {
			t.Errorf("ListDocuments(Deleted) of dave = %+v, %v", trash, err)
		}
		// Its blobs stay for a restore, and its key is free for a new document.
		if _, err := s.GetBlob(ctx, gone.ContentHash); err != nil {
			t.Errorf("blob of a deleted document before the purge: %v", err)
		}
		newDoc(t, s, c.ID, "gone.txt")
	})

	t.Run("TrashDocument/HidesQASources", func(t *testing.T) {
		s, c, gone, kept := setup(t)
		qs, boards := s.(rag.QuestionStore)
		if !boards {
			t.Skip("no Q&A boards")
		}
		ctx := t.Context()
		q := &rag.Question{CollectionID: c.ID, Title: "eruption?"}
		if err := qs.CreateQuestion(ctx, q); err != nil {
			t.Fatal(err)
		}
		a := &rag.BoardAnswer{QuestionID: q.ID, IsAI: true, Body: "see [1] and [2]", SourceRefs: []rag.SourceRef{
			{DocumentID: gone.ID, Title: "gone"}, {DocumentID: kept.ID, Title: "kept"}}}
		if err := qs.AddAnswer(ctx, a); err != nil {
			t.Fatal(err)
		}
		refs := func() []string {
			t.Helper()
			as, err := qs.ListAnswers(ctx, nil, q.ID)
			if err != nil || len(as) != 1 {
				t.Fatalf("ListAnswers = %v, %v", as, err)
			}
			var ids []string
			for _, r := range as[0].SourceRefs {
				ids = append(ids, r.DocumentID)
			}
			return ids
		}
		if got := refs(); !slices.Equal(got, []string{gone.ID, kept.ID}) {
			t.Fatalf("sources before the delete = %v", got)
		}
		if _, err := s.TrashDocument(ctx, alice, gone.ID); err != nil {
			t.Fatal(err)
		}
		if got := refs(); !slices.Equal(got, []string{kept.ID}) {
			t.Errorf("sources after the delete = %v, want only the kept document", got)
		}
		if _, err := s.RestoreDocument(ctx, alice, gone.ID); err != nil {
			t.Fatal(err)
		}
		if got := refs(); !slices.Equal(got, []string{gone.ID, kept.ID}) {
			t.Errorf("sources after the restore = %v", got)
		}
		if _, err := s.TrashDocument(ctx, alice, gone.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PurgeDocuments(ctx, time.Now().Add(time.Hour), 0); err != nil {
			t.Fatal(err)
		}
		if got := refs(); !slices.Equal(got, []string{kept.ID}) {
			t.Errorf("sources after the purge = %v", got)
		}
	})

	t.Run("RestoreDocument/OK", func(t *testing.T) {
		s, c, gone, _ := setup(t)
		ctx := t.Context()
		if _, err := s.TrashDocument(ctx, alice, gone.ID); err != nil {
			t.Fatal(err)
		}
		wantNotFound(t, "RestoreDocument by another", errOf(s.RestoreDocument(ctx, dave, gone.ID)))
		d, err := s.RestoreDocument(ctx, alice, gone.ID)
		if err != nil {
			t.Fatalf("RestoreDocument: %v", err)
		}
		if d.DeletedAt != nil || d.ExternalID != "gone.txt" || d.PendingHash != gone.ContentHash || d.Status != rag.StatusQueued || d.Version != 2 {
			t.Errorf("restored document = %+v", d)
		}
		if f, err := s.FindDocument(ctx, alice, c.ID, "gone.txt"); err != nil || f.ID != gone.ID {
			t.Errorf("FindDocument after restore = %v, %v", f, err)
		}
		wantNotFound(t, "RestoreDocument of a live document", errOf(s.RestoreDocument(ctx, alice, gone.ID)))
		// Re-indexing the current content keeps its version number and record.
		if v := commitTexts(t, s, gone, spaceA, []string{"volcanic eruption update"}, [][]float32{basis(spaceA.Dim, 0)}); v != 2 {
			t.Errorf("re-index made version %d, want 2", v)
		}
		if vs, err := s.ListVersions(ctx, alice, gone.ID); err != nil || len(vs) != 2 {
			t.Errorf("ListVersions after restore = %v, %v", vs, err)
		}
		if d := getDoc(t, s, gone.ID); d.PendingHash != "" || d.Status != rag.StatusReady || d.ChunkCount != 1 {
			t.Errorf("re-indexed document = %+v", d)
		}
		if got := hitDocs(t, s, keyword(t, s, alice, "eruption", rag.Filter{}, 10)); !slices.Equal(got, []string{gone.ID}) {
			t.Errorf("keyword documents after restore = %v", got)
		}
	})

	t.Run("CommitVersion/KeepsTextUntilPurge", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "notes.txt")
		texts := []string{"first notes on tides", "second notes on gales"}
		for i, text := range texts {
			if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: hashOf(fmt.Sprint(i)), Title: "notes",
				Space: spaceA, Chunks: chunksOf(spaceA, []string{text}, nil), Text: text}); err != nil {
				t.Fatal(err)
			}
		}
		vs, err := s.ListVersions(ctx, alice, d.ID)
		if err != nil || len(vs) != 2 {
			t.Fatalf("ListVersions = %v, %v", vs, err)
		}
		for _, v := range vs {
			want := texts[v.Version-1]
			if v.TextHash != hashOf(want) {
				t.Errorf("version %d text hash %q, want %q", v.Version, v.TextHash, hashOf(want))
			}
			if b, err := s.GetBlob(ctx, v.TextHash); err != nil || string(b) != want {
				t.Errorf("text of version %d = %q, %v", v.Version, b, err)
			}
		}
		if _, err := s.TrashDocument(ctx, alice, d.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PurgeDocuments(ctx, time.Now().Add(time.Hour), 0); err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			wantNotFound(t, "text blob after the purge", errOf(s.GetBlob(ctx, hashOf(text))))
		}
	})

	t.Run("RestoreDocument/ErrConflict", func(t *testing.T) {
		s, c, gone, _ := setup(t)
		if _, err := s.TrashDocument(t.Context(), alice, gone.ID); err != nil {
			t.Fatal(err)
		}
		newDoc(t, s, c.ID, "gone.txt")
		if _, err := s.RestoreDocument(t.Context(), alice, gone.ID); !errors.Is(err, rag.ErrConflict) {
			t.Errorf("RestoreDocument over a new document of the same key = %v, want ErrConflict", err)
		}
	})

	t.Run("PurgeDocuments/AfterTheWindow", func(t *testing.T) {
		s, _, gone, kept := setup(t)
		ctx := t.Context()
		fs, rates := s.(rag.FeedbackStore)
		if rates {
			for _, f := range []*rag.Feedback{
				{Vote: rag.Vote{Target: rag.FeedbackSource, Rating: 1, Question: "eruption?"}, Principal: alice.ID,
					Passages: []rag.FeedbackPassage{ratedPassage(gone.ID, "volcanic eruption update", 1)}},
				{Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: 1, Question: "eruption?", Answer: "a [1] b [2]"}, Principal: alice.ID,
					Passages: []rag.FeedbackPassage{ratedPassage(gone.ID, "volcanic eruption update", 1), ratedPassage(kept.ID, "volcanic ash advisory", 1)}},
			} {
				if err := fs.PutFeedback(ctx, f); err != nil {
					t.Fatal(err)
				}
			}
		}
		d, err := s.TrashDocument(ctx, alice, gone.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Not yet: the window starts when it was deleted.
		if ids, err := s.PurgeDocuments(ctx, d.DeletedAt.Add(-time.Second), 0); err != nil || len(ids) != 0 {
			t.Fatalf("PurgeDocuments before the window = %v, %v", ids, err)
		}
		if _, err := s.GetBlob(ctx, hashOf("[volcanic eruption report]")); err != nil {
			t.Fatalf("blob of version 1 before the purge: %v", err)
		}
		ids, err := s.PurgeDocuments(ctx, d.DeletedAt.Add(time.Second), 0)
		if err != nil || !slices.Equal(ids, []string{gone.ID}) {
			t.Fatalf("PurgeDocuments after the window = %v, %v", ids, err)
		}
		for _, content := range []string{"[volcanic eruption report]", "[volcanic eruption update]"} {
			wantNotFound(t, "GetBlob of a purged version", errOf(s.GetBlob(ctx, hashOf(content))))
		}
		if _, err := s.GetBlob(ctx, kept.ContentHash); err != nil {
			t.Errorf("blob of the kept document: %v", err)
		}
		wantNotFound(t, "RestoreDocument after the purge", errOf(s.RestoreDocument(ctx, alice, gone.ID)))
		if trash, err := s.ListDocuments(ctx, admin, rag.DocumentQuery{Deleted: true}); err != nil || trash.Total != 0 {
			t.Errorf("trash after the purge = %+v, %v", trash, err)
		}
		if ids, err := s.PurgeDocuments(ctx, time.Now().Add(time.Hour), 0); err != nil || len(ids) != 0 {
			t.Errorf("second purge = %v, %v", ids, err)
		}
		if rates {
			all, err := fs.ListFeedback(ctx, rag.FeedbackQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 1 || len(all[0].Passages) != 1 || all[0].Passages[0].DocumentID != kept.ID {
				t.Errorf("feedback after the purge = %+v, want the answer's rating with the kept passage only", all)
			}
		}
	})
}

// errOf drops a result and keeps the error.
func errOf[T any](_ T, err error) error { return err }
