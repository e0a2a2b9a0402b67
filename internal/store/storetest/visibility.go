package storetest

import (
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

func testVisibility(t *testing.T, open func(t *testing.T) rag.Store) {
	s := open(t)
	c := mustCollection(t, s, "shared")
	mk := func(ext string, readers ...string) *rag.Document {
		d := newDoc(t, s, c.ID, ext, func(d *rag.Document) { d.Readers = readers })
		commitTexts(t, s, d, spaceA, []string{"quarterly figures " + ext}, [][]float32{basis(spaceA.Dim, 0)})
		return d
	}
	private := mk("private")
	toBob := mk("to-bob", bob.ID)
	toOps := mk("to-ops", "group:ops")
	toAll := mk("to-all", rag.Everyone)
	all := []*rag.Document{private, toBob, toOps, toAll}

	cases := []struct {
		name string
		p    rag.Principal
		want []*rag.Document
	}{
		{"Owner", alice, all},
		{"Reader", bob, []*rag.Document{toBob, toAll}},
		{"Group", carol, []*rag.Document{toOps, toAll}},
		{"Everyone", dave, []*rag.Document{toAll}},
		{"Anonymous", rag.Principal{}, []*rag.Document{toAll}},
		{"Admin", admin, all},
		{"GroupNameIsNotAUser", rag.Principal{ID: "ops"}, []*rag.Document{toAll}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := seesExactly(t, s, tc.p, tc.want, basis(spaceA.Dim, 0), "quarterly figures")
			for _, d := range all {
				visible := slices.Contains(want, d.ID)
				check := func(what string, err error) {
					t.Helper()
					switch {
					case visible && err != nil:
						t.Errorf("%s(%s): %v", what, d.ExternalID, err)
					case !visible:
						wantNotFound(t, what+"("+d.ExternalID+")", err)
					}
				}
				_, err := s.GetDocument(t.Context(), tc.p, d.ID)
				check("GetDocument", err)
				_, err = s.FindDocument(t.Context(), tc.p, c.ID, d.ExternalID)
				check("FindDocument", err)
				chunks, err := s.ListChunks(t.Context(), tc.p, d.ID)
				check("ListChunks", err)
				if !visible && len(chunks) > 0 {
					t.Errorf("ListChunks(%s) returned chunks of an invisible document", d.ExternalID)
				}
				versions, err := s.ListVersions(t.Context(), tc.p, d.ID)
				check("ListVersions", err)
				if !visible && len(versions) > 0 {
					t.Errorf("ListVersions(%s) returned versions of an invisible document", d.ExternalID)
				}
				// Hits by chunk ID, as the principal: an invisible document's passages are skipped even when
				// the caller names their IDs.
				ids := make([]int64, len(chunks))
				for i, c := range chunks {
					ids[i] = c.ID
				}
				if len(ids) == 0 {
					all, _ := s.ListChunks(t.Context(), admin, d.ID)
					for _, c := range all {
						ids = append(ids, c.ID)
					}
				}
				hits, err := s.Hits(t.Context(), tc.p, ids)
				if err != nil {
					t.Fatalf("Hits(%s): %v", d.ExternalID, err)
				}
				if visible != (len(hits) == len(ids)) || (!visible && len(hits) > 0) || len(ids) == 0 {
					t.Errorf("Hits(%s) as %q: %d of %d chunks; visible %v", d.ExternalID, tc.p.ID, len(hits), len(ids), visible)
				}
			}
		})
	}

	t.Run("InvisibleCannotBeChanged", func(t *testing.T) {
		title := "taken over"
		_, err := s.UpdateDocument(t.Context(), bob, private.ID, rag.DocumentUpdate{Title: &title})
		wantNotFound(t, "UpdateDocument by a stranger", err)
		wantNotFound(t, "DeleteDocument by a stranger", s.DeleteDocument(t.Context(), bob, private.ID))
		got := getDoc(t, s, private.ID)
		if got.Title != private.Title || got.ChunkCount != 1 {
			t.Errorf("invisible document changed: %+v", got)
		}
	})
	t.Run("ReadersChangeTakesEffect", func(t *testing.T) {
		if _, err := s.UpdateDocument(t.Context(), alice, private.ID, rag.DocumentUpdate{Readers: []string{"group:eng"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetDocument(t.Context(), bob, private.ID); err != nil {
			t.Errorf("bob (group eng) after sharing: %v", err)
		}
		if got := hitDocs(t, s, keyword(t, s, bob, "quarterly", rag.Filter{DocumentIDs: []string{private.ID}}, 10)); !slices.Equal(got, []string{private.ID}) {
			t.Errorf("bob's keyword candidates after sharing = %v", got)
		}
		if _, err := s.GetDocument(t.Context(), dave, private.ID); err == nil {
			t.Errorf("dave sees a document shared with group eng")
		}
	})
}

// seesExactly checks that p lists, and gets vector (near vec) and keyword (for query) candidates from,
// exactly the documents want, and returns their sorted IDs.
func seesExactly(t *testing.T, s rag.Store, p rag.Principal, want []*rag.Document, vec []float32, query string) []string {
	t.Helper()
	ids := sortedIDs(want...)
	page, err := s.ListDocuments(t.Context(), p, rag.DocumentQuery{})
	if err != nil {
		t.Fatal(err)
	}
	got := listIDs(page.Documents)
	slices.Sort(got)
	if !slices.Equal(got, ids) || page.Total != len(ids) {
		t.Errorf("ListDocuments = %v (total %d), want %v", got, page.Total, ids)
	}
	if got := hitDocs(t, s, vector(t, s, p, spaceA, vec, rag.Filter{}, 10)); !slices.Equal(got, ids) {
		t.Errorf("VectorCandidates documents = %v, want %v", got, ids)
	}
	if got := hitDocs(t, s, keyword(t, s, p, query, rag.Filter{}, 10)); !slices.Equal(got, ids) {
		t.Errorf("KeywordCandidates documents = %v, want %v", got, ids)
	}
	return ids
}
