package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// filterFixture is four documents in two collections with varied tags, media types, timestamps and
// metadata; every document has one chunk that contains the word "housing".
type filterFixture struct {
	c1, c2         *rag.Collection
	d1, d2, d3, d4 *rag.Document
}

func newFilterFixture(t *testing.T, s rag.Store) filterFixture {
	t.Helper()
	var f filterFixture
	f.c1 = mustCollection(t, s, "first")
	f.c2 = mustCollection(t, s, "second")
	mk := func(coll *rag.Collection, ext, media string, tags []string, meta map[string]any) *rag.Document {
		d := newDoc(t, s, coll.ID, ext, func(d *rag.Document) {
			d.MediaType, d.Tags, d.Metadata = media, tags, meta
		})
		commitTexts(t, s, d, spaceA, []string{"housing announcement " + ext}, nil)
		tick()
		return getDoc(t, s, d.ID)
	}
	f.d1 = mk(f.c1, "d1", "text/plain", []string{"a"},
		map[string]any{"region": "seoul", "rent": float64(50), "date": "2024-01-15", "active": true})
	f.d2 = mk(f.c1, "d2", "application/pdf", []string{"b"},
		map[string]any{"region": "busan", "rent": float64(70), "date": "2024-03-01", "active": false})
	f.d3 = mk(f.c2, "d3", "text/markdown", []string{"a", "b"},
		map[string]any{"region": "seoul", "rent": float64(90.5), "date": "2024-06-30"})
	f.d4 = mk(f.c2, "d4", "text/plain", nil, map[string]any{"rent": "cheap"})
	return f
}

func testFilters(t *testing.T, open func(t *testing.T) rag.Store) {
	s := open(t)
	f := newFilterFixture(t, s)
	// d1 is updated last, so it alone is after its own UpdatedAt.
	title := "d1 updated"
	d1, err := s.UpdateDocument(t.Context(), alice, f.d1.ID, rag.DocumentUpdate{Title: &title})
	if err != nil {
		t.Fatal(err)
	}
	at := func(tm time.Time) *time.Time { return &tm }
	meta := func(key string, op rag.MetaOp, values ...any) rag.MetaCond {
		return rag.MetaCond{Key: key, Op: op, Values: values}
	}
	cases := []struct {
		name string
		f    rag.Filter
		want []*rag.Document
	}{
		{"None", rag.Filter{}, []*rag.Document{f.d1, f.d2, f.d3, f.d4}},
		{"CollectionByName", rag.Filter{Collections: []string{"first"}}, []*rag.Document{f.d1, f.d2}},
		{"CollectionByID", rag.Filter{Collections: []string{f.c2.ID}}, []*rag.Document{f.d3, f.d4}},
		{"CollectionsMixed", rag.Filter{Collections: []string{"first", f.c2.ID}}, []*rag.Document{f.d1, f.d2, f.d3, f.d4}},
		{"CollectionMissing", rag.Filter{Collections: []string{"missing"}}, nil},
		{"DocumentIDs", rag.Filter{DocumentIDs: []string{f.d2.ID, f.d4.ID, "missing"}}, []*rag.Document{f.d2, f.d4}},
		{"TagsAny", rag.Filter{Tags: []string{"b", "zzz"}}, []*rag.Document{f.d2, f.d3}},
		{"Tag", rag.Filter{Tags: []string{"a"}}, []*rag.Document{f.d1, f.d3}},
		{"MediaTypes", rag.Filter{MediaTypes: []string{"text/plain"}}, []*rag.Document{f.d1, f.d4}},
		{"CreatedAfterInclusive", rag.Filter{CreatedAfter: at(f.d3.CreatedAt)}, []*rag.Document{f.d3, f.d4}},
		{"CreatedBeforeInclusive", rag.Filter{CreatedBefore: at(f.d2.CreatedAt)}, []*rag.Document{f.d1, f.d2}},
		{"CreatedRange", rag.Filter{CreatedAfter: at(f.d2.CreatedAt), CreatedBefore: at(f.d3.CreatedAt)}, []*rag.Document{f.d2, f.d3}},
		{"UpdatedAfter", rag.Filter{UpdatedAfter: at(d1.UpdatedAt)}, []*rag.Document{f.d1}},
		{"UpdatedBefore", rag.Filter{UpdatedBefore: at(f.d4.UpdatedAt)}, []*rag.Document{f.d2, f.d3, f.d4}},
		{"MetaEqString", rag.Filter{Metadata: []rag.MetaCond{meta("region", rag.OpEq, "seoul")}}, []*rag.Document{f.d1, f.d3}},
		{"MetaEqNumber", rag.Filter{Metadata: []rag.MetaCond{meta("rent", rag.OpEq, float64(50))}}, []*rag.Document{f.d1}},
		{"MetaEqNumberInt", rag.Filter{Metadata: []rag.MetaCond{meta("rent", rag.OpEq, 70)}}, []*rag.Document{f.d2}},
		{"MetaEqBoolTrue", rag.Filter{Metadata: []rag.MetaCond{meta("active", rag.OpEq, true)}}, []*rag.Document{f.d1}},
		{"MetaEqBoolFalse", rag.Filter{Metadata: []rag.MetaCond{meta("active", rag.OpEq, false)}}, []*rag.Document{f.d2}},
		{"MetaEqTypeStrict", rag.Filter{Metadata: []rag.MetaCond{meta("rent", rag.OpEq, "50")}}, nil},
		{"MetaNeIncludesMissing", rag.Filter{Metadata: []rag.MetaCond{meta("region", rag.OpNe, "seoul")}}, []*rag.Document{f.d2, f.d4}},
		{"MetaIn", rag.Filter{Metadata: []rag.MetaCond{meta("region", rag.OpIn, "seoul", "busan")}}, []*rag.Document{f.d1, f.d2, f.d3}},
		{"MetaInMixedTypes", rag.Filter{Metadata: []rag.MetaCond{meta("rent", rag.OpIn, float64(90.5), "cheap")}}, []*rag.Document{f.d3, f.d4}},
		{"MetaGtNumber", rag.Filter{Metadata: []rag.MetaCond{meta("rent", rag.OpGt, float64(50))}}, []*rag.Document{f.d2, f.d3}},
		{"MetaGteNumber", rag.Filter{Metadata: []rag.MetaCond{meta("rent", rag.OpGte, float64(50))}}, []*rag.Document{f.d1, f.d2, f.d3}},
		{"MetaLtNumber", rag.Filter{Metadata: []rag.MetaCond{meta("rent", rag.OpLt, float64(70))}}, []*rag.Document{f.d1}},
		{"MetaLteNumber", rag.Filter{Metadata: []rag.MetaCond{meta("rent", rag.OpLte, float64(70))}}, []*rag.Document{f.d1, f.d2}},
		{"MetaNumberNotLexical", rag.Filter{Metadata: []rag.MetaCond{meta("rent", rag.OpGt, float64(9))}}, []*rag.Document{f.d1, f.d2, f.d3}},
		{"MetaGtString", rag.Filter{Metadata: []rag.MetaCond{meta("rent", rag.OpGt, "a")}}, []*rag.Document{f.d4}},
		{"MetaGteDate", rag.Filter{Metadata: []rag.MetaCond{meta("date", rag.OpGte, "2024-03-01")}}, []*rag.Document{f.d2, f.d3}},
		{"MetaLtDate", rag.Filter{Metadata: []rag.MetaCond{meta("date", rag.OpLt, "2024-03-01")}}, []*rag.Document{f.d1}},
		{"MetaMissingKey", rag.Filter{Metadata: []rag.MetaCond{meta("nope", rag.OpEq, "x")}}, nil},
		{"MetaAnded", rag.Filter{Metadata: []rag.MetaCond{meta("region", rag.OpEq, "seoul"), meta("rent", rag.OpGt, float64(60))}}, []*rag.Document{f.d3}},
		{"AllKindsAnded", rag.Filter{Collections: []string{"first", "second"}, Tags: []string{"a"}, MediaTypes: []string{"text/markdown", "text/plain"},
			Metadata: []rag.MetaCond{meta("region", rag.OpEq, "seoul")}}, []*rag.Document{f.d1, f.d3}},
	}
	for _, tc := range cases {
		want := sortedIDs(tc.want...)
		t.Run(tc.name, func(t *testing.T) {
			page, err := s.ListDocuments(t.Context(), alice, rag.DocumentQuery{Filter: tc.f})
			if err != nil {
				t.Fatal(err)
			}
			got := listIDs(page.Documents)
			slices.Sort(got)
			if !slices.Equal(got, want) || page.Total != len(want) {
				t.Errorf("ListDocuments = %v (total %d), want %v", got, page.Total, want)
			}
			if got := hitDocs(t, s, vector(t, s, alice, spaceA, textVector(spaceA.Dim, "query"), tc.f, 100)); !slices.Equal(got, want) {
				t.Errorf("VectorCandidates documents = %v, want %v", got, want)
			}
			if got := hitDocs(t, s, keyword(t, s, alice, "housing", tc.f, 100)); !slices.Equal(got, want) {
				t.Errorf("KeywordCandidates documents = %v, want %v", got, want)
			}
		})
	}

	t.Run("InvalidMetadataCondition", func(t *testing.T) {
		for _, mc := range []rag.MetaCond{
			{Key: "rent", Op: "like", Values: []any{"x"}},
			{Key: "rent", Op: rag.OpEq},
			{Key: "rent", Op: rag.OpGt, Values: []any{float64(1), float64(2)}},
			{Key: "", Op: rag.OpEq, Values: []any{"x"}},
			{Key: "rent", Op: rag.OpEq, Values: []any{[]any{"nested"}}},
			{Key: "rent", Op: rag.OpGt, Values: []any{true}},
		} {
			f := rag.Filter{Metadata: []rag.MetaCond{mc}}
			name := fmt.Sprintf("%+v", mc)
			if _, err := s.ListDocuments(t.Context(), alice, rag.DocumentQuery{Filter: f}); !isCode(err, rag.CodeInvalid) {
				t.Errorf("ListDocuments %s: err = %v, want invalid_request", name, err)
			}
			if _, err := s.VectorCandidates(t.Context(), alice, rag.VectorQuery{Space: spaceA, Vector: basis(spaceA.Dim, 0), Filter: f, K: 5}); !isCode(err, rag.CodeInvalid) {
				t.Errorf("VectorCandidates %s: err = %v, want invalid_request", name, err)
			}
			if _, err := s.KeywordCandidates(t.Context(), alice, rag.KeywordQuery{Terms: queryTerms("housing"), Filter: f, K: 5}); !isCode(err, rag.CodeInvalid) {
				t.Errorf("KeywordCandidates %s: err = %v, want invalid_request", name, err)
			}
		}
	})

	t.Run("SelectiveFilterStillReturnsK", func(t *testing.T) {
		// 40 documents of 2 chunks; the 2 tagged "rare" ones are the worst matches for both queries, so a
		// store that filtered after its top-k would return none of them.
		s := open(t)
		c := mustCollection(t, s, "many")
		query := basis(spaceA.Dim, 0)
		far := normalize([]float32{-1, 0.1, 0, 0, 0, 0, 0, 0})
		var rare []*rag.Document
		for i := range 40 {
			isRare := i == 7 || i == 31
			d := newDoc(t, s, c.ID, fmt.Sprintf("doc%02d", i), func(d *rag.Document) {
				if isRare {
					d.Tags = []string{"rare"}
				}
			})
			texts := []string{"river report river river", "river valley river"}
			vecs := [][]float32{normalize([]float32{1, float32(i), 0, 0, 0, 0, 0, 0}), normalize([]float32{1, 0, float32(i), 0, 0, 0, 0, 0})}
			if isRare {
				texts = []string{"a long account of many things and one river among hills and fields and towns", "more words about a river in a long passage of plain text without much else"}
				vecs = [][]float32{far, far}
				rare = append(rare, d)
			}
			commitTexts(t, s, d, spaceA, texts, vecs)
		}
		want := sortedIDs(rare...)
		f := rag.Filter{Tags: []string{"rare"}}
		for _, k := range []int{3, 4} {
			vc := vector(t, s, alice, spaceA, query, f, k)
			kc := keyword(t, s, alice, "river", f, k)
			if len(vc) != k || len(kc) != k {
				t.Fatalf("k=%d: %d vector and %d keyword candidates, want %d each", k, len(vc), len(kc), k)
			}
			if got := hitDocs(t, s, vc); !slices.Equal(got, want) {
				t.Errorf("vector documents = %v, want %v", got, want)
			}
			if got := hitDocs(t, s, kc); !slices.Equal(got, want) {
				t.Errorf("keyword documents = %v, want %v", got, want)
			}
		}
		if vc := vector(t, s, alice, spaceA, query, f, 10); len(vc) != 4 {
			t.Errorf("k=10: %d vector candidates, want all 4", len(vc))
		}
		if kc := keyword(t, s, alice, "river", f, 10); len(kc) != 4 {
			t.Errorf("k=10: %d keyword candidates, want all 4", len(kc))
		}
	})
}
