package storetest

import (
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// testDocumentCandidates checks the document-level keyword index: title, file name, metadata values and
// opening lines name a document; filters and visibility apply; changes of title and metadata re-index it;
// deleted documents leave it.
func testDocumentCandidates(t *testing.T, open func(t *testing.T) rag.Store) {
	docs := func(t *testing.T, s rag.Store, p rag.Principal, query string, f rag.Filter, k int) []string {
		t.Helper()
		dc, err := s.DocumentCandidates(t.Context(), p, rag.KeywordQuery{Terms: queryTerms(query), Filter: f, K: k})
		if err != nil {
			t.Fatalf("DocumentCandidates(%q): %v", query, err)
		}
		var ids []string
		for i, c := range dc {
			if c.Rank != i+1 || c.Score <= 0 {
				t.Errorf("candidate %d of %q: %+v", i, query, c)
			}
			ids = append(ids, c.DocumentID)
		}
		return ids
	}
	s := open(t)
	// The collection is nobody's in particular (a collection's owner reads all of it), so that bob's
	// document stays his.
	c := &rag.Collection{Name: "docs", Owner: "user:nobody"}
	if err := s.CreateCollection(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	report := newDoc(t, s, c.ID, "committee_review_report.pdf", func(d *rag.Document) { d.Title = "Quarterly notes" })
	commitTexts(t, s, report, spaceA, []string{"Review\nof the harbour levy\n" +
		"The committee examined the proposal in detail over several sessions and heard many witnesses, and this long line is body text.",
		"second passage about tides"}, nil)
	minutes := newDoc(t, s, c.ID, "minutes.txt", func(d *rag.Document) {
		d.Title = "Harbour board"
		d.Metadata = map[string]any{"kind": "minutes", "number": 2125318.0}
	})
	commitTexts(t, s, minutes, spaceA, []string{"The board met and discussed the harbour levy at length, and the review of it was read out to every member present.", "more"}, nil)
	hidden := newDoc(t, s, c.ID, "lighthouse_keeping.txt", func(d *rag.Document) { d.Owner = bob.ID })
	commitTexts(t, s, hidden, spaceA, []string{"lighthouse keeping"}, nil)

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"what does the review report say", []string{report.ID}}, // file name words
		{"quarterly figures", []string{report.ID}},               // title
		{"harbour levy", []string{report.ID, minutes.ID}},        // opening lines (short ones) and title
		{"the minutes of the meeting", []string{minutes.ID}},     // metadata value
		{"bill 2125318", []string{minutes.ID}},                   // numeric metadata value
		{"witnesses examined in sessions", nil},                  // a long opening line is body text
		{"lighthouse", nil},                                      // bob's document
	} {
		if got := docs(t, s, alice, tc.query, rag.Filter{}, 5); !slicesEqual(got, tc.want) {
			t.Errorf("%q: documents %v, want %v", tc.query, got, tc.want)
		}
	}
	if got := docs(t, s, bob, "lighthouse", rag.Filter{}, 5); !slicesEqual(got, []string{hidden.ID}) {
		t.Errorf("bob: %v, want his document", got)
	}
	if got := docs(t, s, alice, "harbour levy", rag.Filter{DocumentIDs: []string{minutes.ID}}, 5); !slicesEqual(got, []string{minutes.ID}) {
		t.Errorf("filtered: %v, want the minutes only", got)
	}
	if got := docs(t, s, alice, "harbour levy", rag.Filter{}, 1); len(got) != 1 {
		t.Errorf("k=1: %v", got)
	}
	title := "Tidal almanac"
	if _, err := s.UpdateDocument(t.Context(), alice, report.ID, rag.DocumentUpdate{Title: &title, Metadata: map[string]any{"kind": "almanac"}}); err != nil {
		t.Fatal(err)
	}
	if got := docs(t, s, alice, "almanac", rag.Filter{}, 5); !slicesEqual(got, []string{report.ID}) {
		t.Errorf("after the update: %v, want the renamed document", got)
	}
	if got := docs(t, s, alice, "quarterly", rag.Filter{}, 5); len(got) != 0 {
		t.Errorf("the old title still names it: %v", got)
	}
	if err := s.DeleteDocument(t.Context(), alice, minutes.ID); err != nil {
		t.Fatal(err)
	}
	if got := docs(t, s, alice, "minutes", rag.Filter{}, 5); len(got) != 0 {
		t.Errorf("deleted document still found: %v", got)
	}
	if got := docs(t, s, alice, "", rag.Filter{}, 5); len(got) != 0 {
		t.Errorf("no terms: %v", got)
	}
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
