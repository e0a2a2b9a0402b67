package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

func testListDocuments(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("NewestFirstAndPaging", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		var docs []*rag.Document
		for i := range 5 {
			docs = append(docs, newDoc(t, s, c.ID, fmt.Sprintf("%d.txt", i)))
			tick()
		}
		want := []string{docs[4].ID, docs[3].ID, docs[2].ID, docs[1].ID, docs[0].ID}
		page, err := s.ListDocuments(t.Context(), alice, rag.DocumentQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(listIDs(page.Documents), want) || page.Total != 5 {
			t.Fatalf("all = %v (total %d), want %v", listIDs(page.Documents), page.Total, want)
		}
		for _, tc := range []struct{ limit, offset, from, to int }{{2, 0, 0, 2}, {2, 2, 2, 4}, {2, 4, 4, 5}, {2, 5, 5, 5}, {10, 3, 3, 5}} {
			page, err := s.ListDocuments(t.Context(), alice, rag.DocumentQuery{Limit: tc.limit, Offset: tc.offset})
			if err != nil {
				t.Fatal(err)
			}
			if got := listIDs(page.Documents); !slices.Equal(got, want[tc.from:tc.to]) || page.Total != 5 {
				t.Errorf("limit %d offset %d = %v (total %d), want %v (total 5)", tc.limit, tc.offset, got, page.Total, want[tc.from:tc.to])
			}
		}
	})
	t.Run("DefaultLimit50", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		for i := range 51 {
			newDoc(t, s, c.ID, fmt.Sprintf("%03d.txt", i))
		}
		page, err := s.ListDocuments(t.Context(), alice, rag.DocumentQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Documents) != 50 || page.Total != 51 {
			t.Fatalf("default page: %d documents (total %d), want 50 (total 51)", len(page.Documents), page.Total)
		}
		page, err = s.ListDocuments(t.Context(), alice, rag.DocumentQuery{Limit: 51})
		if err != nil || len(page.Documents) != 51 {
			t.Fatalf("limit 51: %d documents, %v", len(page.Documents), err)
		}
	})
	t.Run("MaxLimit500", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		for i := range 501 {
			newDoc(t, s, c.ID, fmt.Sprintf("%03d.txt", i))
		}
		for _, tc := range []struct{ limit, want int }{{500, 500}, {501, 500}, {10000, 500}} {
			page, err := s.ListDocuments(t.Context(), alice, rag.DocumentQuery{Limit: tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Documents) != tc.want || page.Total != 501 {
				t.Errorf("limit %d: %d documents (total %d), want %d (total 501)", tc.limit, len(page.Documents), page.Total, tc.want)
			}
		}
	})
	t.Run("TitleContains", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d1 := newDoc(t, s, c.ID, "a", func(d *rag.Document) { d.Title = "Annual Report 2024" })
		d2 := newDoc(t, s, c.ID, "b", func(d *rag.Document) { d.Title = "annual budget" })
		d3 := newDoc(t, s, c.ID, "c", func(d *rag.Document) { d.Title = "연간 보고서 (100%_done)" })
		for _, tc := range []struct {
			q    string
			want []string
		}{
			{"ANNUAL", sortedIDs(d1, d2)},
			{"report", sortedIDs(d1)},
			{"보고", sortedIDs(d3)},
			{"%", sortedIDs(d3)}, // a LIKE wildcard is a literal character
			{"_", sortedIDs(d3)},
			{"nothing", nil},
		} {
			page, err := s.ListDocuments(t.Context(), alice, rag.DocumentQuery{TitleContains: tc.q})
			if err != nil {
				t.Fatal(err)
			}
			got := listIDs(page.Documents)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) || page.Total != len(tc.want) {
				t.Errorf("TitleContains %q = %v (total %d), want %v", tc.q, got, page.Total, tc.want)
			}
		}
	})
	t.Run("Statuses", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d1 := newDoc(t, s, c.ID, "1")
		d2 := newDoc(t, s, c.ID, "2")
		d3 := newDoc(t, s, c.ID, "3")
		commitTexts(t, s, d2, spaceA, []string{"ready"}, nil)
		if err := s.SetDocumentState(t.Context(), d3.ID, rag.DocumentState{Status: rag.StatusFailed, Stage: rag.StageExtract,
			ErrorCode: rag.CodeInvalid, Error: "bad"}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			st   []rag.Status
			want []string
		}{
			{[]rag.Status{rag.StatusQueued}, sortedIDs(d1)},
			{[]rag.Status{rag.StatusReady, rag.StatusFailed}, sortedIDs(d2, d3)},
			{nil, sortedIDs(d1, d2, d3)},
			{[]rag.Status{rag.StatusProcessing}, nil},
		} {
			page, err := s.ListDocuments(t.Context(), alice, rag.DocumentQuery{Statuses: tc.st})
			if err != nil {
				t.Fatal(err)
			}
			got := listIDs(page.Documents)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) || page.Total != len(tc.want) {
				t.Errorf("statuses %v = %v (total %d), want %v", tc.st, got, page.Total, tc.want)
			}
		}
	})
}
