package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

func testDelete(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("DeleteDocument/OK", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		gone := newDoc(t, s, c.ID, "gone.txt")
		kept := newDoc(t, s, c.ID, "kept.txt")
		commitTexts(t, s, gone, spaceA, []string{"volcanic eruption report", "lava flows"}, [][]float32{basis(spaceA.Dim, 0), basis(spaceA.Dim, 0)})
		commitTexts(t, s, gone, spaceA, []string{"volcanic eruption update"}, [][]float32{basis(spaceA.Dim, 0)})
		commitTexts(t, s, kept, spaceA, []string{"volcanic ash advisory"}, [][]float32{basis(spaceA.Dim, 1)})
		goneChunks, _ := s.ListChunks(t.Context(), alice, gone.ID)
		if err := s.PutVectors(t.Context(), spaceB, map[int64][]float32{goneChunks[0].ID: basis(spaceB.Dim, 0)}); err != nil {
			t.Fatal(err)
		}

		if err := s.DeleteDocument(t.Context(), alice, gone.ID); err != nil {
			t.Fatal(err)
		}
		_, err := s.GetDocument(t.Context(), admin, gone.ID)
		wantNotFound(t, "GetDocument after delete", err)
		_, err = s.FindDocument(t.Context(), admin, c.ID, "gone.txt")
		wantNotFound(t, "FindDocument after delete", err)
		_, err = s.ListChunks(t.Context(), admin, gone.ID)
		wantNotFound(t, "ListChunks after delete", err)
		_, err = s.ListVersions(t.Context(), admin, gone.ID)
		wantNotFound(t, "ListVersions after delete", err)
		wantNotFound(t, "DeleteDocument twice", s.DeleteDocument(t.Context(), alice, gone.ID))

		if got := hitDocs(t, s, keyword(t, s, alice, "volcanic", rag.Filter{}, 10)); !slices.Equal(got, []string{kept.ID}) {
			t.Errorf("keyword documents after delete = %v, want only %s", got, kept.ID)
		}
		if got := hitDocs(t, s, vector(t, s, alice, spaceA, basis(spaceA.Dim, 0), rag.Filter{}, 10)); !slices.Equal(got, []string{kept.ID}) {
			t.Errorf("vector documents after delete = %v, want only %s", got, kept.ID)
		}
		if vc := vector(t, s, alice, spaceB, basis(spaceB.Dim, 0), rag.Filter{}, 10); len(vc) != 0 {
			t.Errorf("space B vectors survive the delete: %v", vc)
		}
		if hits, err := s.Hits(t.Context(), rag.LocalPrincipal, []int64{goneChunks[0].ID}); err != nil || len(hits) != 0 {
			t.Errorf("Hits of a deleted chunk = %v, %v", hits, err)
		}
		st, err := s.SpaceStats(t.Context())
		if err != nil || st.Chunks != 1 || st.Spaces[spaceA.ID()] != 1 || st.Spaces[spaceB.ID()] != 0 {
			t.Errorf("SpaceStats = %+v, %v; want 1 chunk in %s only", st, err, spaceA.ID())
		}
		// The external ID is free again.
		newDoc(t, s, c.ID, "gone.txt")
	})
	t.Run("DeleteDocument/ErrNotFound", func(t *testing.T) {
		s := open(t)
		wantNotFound(t, "DeleteDocument(missing)", s.DeleteDocument(t.Context(), admin, "missing"))
	})
	t.Run("DeleteDocument/RemovesUnreferencedBlobs", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		put := func(content string) string {
			h := hashOf(content)
			if err := s.PutBlob(t.Context(), h, []byte(content)); err != nil {
				t.Fatal(err)
			}
			return h
		}
		old, current, pending, shared := put("old bytes"), put("current bytes"), put("pending bytes"), put("shared bytes")
		a := newDoc(t, s, c.ID, "a.txt", func(d *rag.Document) { d.PendingHash = old })
		if _, err := s.CommitVersion(t.Context(), &rag.VersionCommit{DocumentID: a.ID, ContentHash: old, Title: "a",
			MediaType: "text/plain", Space: spaceA, Chunks: chunksOf(spaceA, []string{"alpha"}, nil)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CommitVersion(t.Context(), &rag.VersionCommit{DocumentID: a.ID, ContentHash: current, Title: "a",
			MediaType: "text/plain", Space: spaceA, Chunks: chunksOf(spaceA, []string{"alpha"}, nil)}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetDocumentState(t.Context(), a.ID, rag.DocumentState{Status: rag.StatusQueued, Stage: rag.StageQueued, PendingHash: &pending}); err != nil {
			t.Fatal(err)
		}
		// b holds the shared blob as its content, x as its pending upload.
		b := newDoc(t, s, c.ID, "b.txt", func(d *rag.Document) { d.PendingHash = shared })
		if _, err := s.CommitVersion(t.Context(), &rag.VersionCommit{DocumentID: b.ID, ContentHash: shared, Title: "b",
			MediaType: "text/plain", Space: spaceA, Chunks: chunksOf(spaceA, []string{"beta"}, nil)}); err != nil {
			t.Fatal(err)
		}
		x := newDoc(t, s, c.ID, "x.txt", func(d *rag.Document) { d.PendingHash = shared })
		if err := s.DeleteDocument(t.Context(), alice, a.ID); err != nil {
			t.Fatal(err)
		}
		// Its blobs go: the current content, the pending upload and the content of earlier versions.
		for _, h := range []string{old, current, pending} {
			_, err := s.GetBlob(t.Context(), h)
			wantNotFound(t, "GetBlob of the deleted document's blob", err)
		}
		if data, err := s.GetBlob(t.Context(), shared); err != nil || string(data) != "shared bytes" {
			t.Errorf("shared blob: %q, %v", data, err)
		}
		// Deleting one of two documents that share a blob keeps it.
		if err := s.DeleteDocument(t.Context(), alice, x.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetBlob(t.Context(), shared); err != nil {
			t.Errorf("blob still referenced by b: %v", err)
		}
	})
}

func testBlobs(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("DocumentBlob", func(t *testing.T) {
		// A document's originals and texts are read as a principal sees the document: a blob the document
		// does not refer to, a document the principal does not see, or a deleted one is not found.
		s := open(t)
		ctx := t.Context()
		c := mustCollection(t, s, "private") // alice's, private
		put := func(content string) string {
			h := hashOf(content)
			if err := s.PutBlob(ctx, h, []byte(content)); err != nil {
				t.Fatal(err)
			}
			return h
		}
		v1, v2, stranger := put("first bytes"), put("second bytes"), put("someone else's bytes")
		d := newDoc(t, s, c.ID, "d.txt", func(d *rag.Document) { d.PendingHash = v1 })
		for _, h := range []string{v1, v2} {
			if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: h, Title: "d",
				MediaType: "text/plain", Space: spaceA, Chunks: chunksOf(spaceA, []string{"delta"}, nil)}); err != nil {
				t.Fatal(err)
			}
		}
		other := newDoc(t, s, c.ID, "o.txt", func(d *rag.Document) { d.PendingHash = stranger })
		for _, tc := range []struct {
			p         rag.Principal
			doc, hash string
			want      string // "" for not found
		}{
			{alice, d.ID, v2, "second bytes"}, {alice, d.ID, v1, "first bytes"}, {admin, d.ID, v1, "first bytes"},
			{dave, d.ID, v2, ""}, {bob, d.ID, v1, ""},
			{alice, d.ID, stranger, ""}, {alice, other.ID, v1, ""}, {admin, d.ID, stranger, ""},
		} {
			got, err := s.DocumentBlob(ctx, tc.p, tc.doc, tc.hash)
			if tc.want == "" {
				wantNotFound(t, fmt.Sprintf("DocumentBlob(%s, %s)", tc.p.ID, tc.hash[:8]), err)
			} else if err != nil || string(got) != tc.want {
				t.Errorf("DocumentBlob(%s, %s) = %q, %v; want %q", tc.p.ID, tc.hash[:8], got, err, tc.want)
			}
		}
		if _, err := s.TrashDocument(ctx, alice, d.ID); err != nil {
			t.Fatal(err)
		}
		_, err := s.DocumentBlob(ctx, admin, d.ID, v2)
		wantNotFound(t, "DocumentBlob of a deleted document", err)
	})
	t.Run("OK", func(t *testing.T) {
		s := open(t)
		big := bytes.Repeat([]byte{0, 1, 2, 0xff, 'x'}, 300_000)
		for _, data := range [][]byte{[]byte("hello"), big} {
			h := hashOf(string(data))
			if err := s.PutBlob(t.Context(), h, data); err != nil {
				t.Fatal(err)
			}
			if err := s.PutBlob(t.Context(), h, data); err != nil {
				t.Fatalf("second PutBlob: %v", err)
			}
			got, err := s.GetBlob(t.Context(), h)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("GetBlob: %d bytes, %v; want %d", len(got), err, len(data))
			}
		}
	})
	t.Run("HashMismatch", func(t *testing.T) {
		s := open(t)
		err := s.PutBlob(t.Context(), hashOf("other bytes"), []byte("these bytes"))
		if !isCode(err, rag.CodeInvalid) {
			t.Fatalf("err = %v, want invalid_request", err)
		}
		if _, err := s.GetBlob(t.Context(), hashOf("other bytes")); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("a rejected blob is stored: %v", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := open(t)
		_, err := s.GetBlob(t.Context(), hashOf("never stored"))
		if !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
}
