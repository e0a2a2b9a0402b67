package retrieve

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestMergeOverCap: a passage over the per-document cap waits behind other documents' passages scoring at
// least CapShare of its score and stays ahead of weaker ones; a strict cap (negative share) puts it last.
func TestMergeOverCap(t *testing.T) {
	hit := func(doc string, score float64) rag.Hit {
		h := rag.Hit{}
		h.DocumentID, h.Text, h.Score = doc, fmt.Sprintf("%s %g", doc, score), score
		return h
	}
	// In fused order: a, a, a (over the cap), b (0.8 of the third a), a (over), c (0.3 of the third a).
	hits := []rag.Hit{hit("a", 10), hit("a", 9), hit("a", 8), hit("b", 6.4), hit("a", 7), hit("c", 2.4)}
	order := func(opt Options) []string {
		within, over := capPerDocument(slices.Clone(hits), 2)
		var out []string
		for _, h := range merge(within, over, opt.withDefaults().CapShare) {
			out = append(out, h.Text)
		}
		return out
	}
	soft := order(Options{})
	if want := []string{"a 10", "a 9", "b 6.4", "a 8", "a 7", "c 2.4"}; !slices.Equal(soft, want) {
		t.Errorf("soft cap: %v, want %v (b, at 0.8 of a's third passage, first; c, at 0.3, after it)", soft, want)
	}
	strict := order(Options{CapShare: -1})
	if want := []string{"a 10", "a 9", "b 6.4", "c 2.4", "a 8", "a 7"}; !slices.Equal(strict, want) {
		t.Errorf("strict cap: %v, want %v", strict, want)
	}
	if got := order(Options{CapShare: 1}); !slices.Equal(got[:3], []string{"a 10", "a 9", "a 8"}) {
		t.Errorf("share 1: %v, want a's third passage ahead of b (b scores below it)", got)
	}
}

// TestRequestCapIsStrict: the answer service's own cap (a request's MaxPerDocument) keeps every passage over
// it behind the others, so the passages a generator sees are as before the soft cap; a search without one
// gets the retriever's soft default.
func TestRequestCapIsStrict(t *testing.T) {
	r := &Retriever{opt: Options{}.withDefaults()}
	if n, share := r.capPerDocument(rag.SearchRequest{MaxPerDocument: rag.AnswerMaxPerDocument}); n != rag.AnswerMaxPerDocument || share > 0 {
		t.Errorf("request cap: %d, share %g; want %d, strict", n, share, rag.AnswerMaxPerDocument)
	}
	if n, share := r.capPerDocument(rag.SearchRequest{}); n != 2 || share != 0.7 {
		t.Errorf("default cap: %d, share %g; want 2, 0.7", n, share)
	}
	off := &Retriever{opt: Options{MaxPerDocument: -1}.withDefaults()}
	if n, _ := off.capPerDocument(rag.SearchRequest{}); n != 0 {
		t.Errorf("MaxPerDocument -1: cap %d, want none", n)
	}
}
