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

// TestRequestCapShare: the answer service's own cap (a request's MaxPerDocument) lets a document's passage
// over it precede another document's that scores below rag.AnswerCapShare (0.5) of it, and wait behind one
// that scores more; a search without one gets the retriever's soft default.
func TestRequestCapShare(t *testing.T) {
	r := &Retriever{opt: Options{}.withDefaults()}
	n, share := r.capPerDocument(rag.SearchRequest{MaxPerDocument: rag.AnswerMaxPerDocument})
	if n != rag.AnswerMaxPerDocument || share != 0.5 {
		t.Errorf("request cap: %d, share %g; want %d, 0.5", n, share, rag.AnswerMaxPerDocument)
	}
	hit := func(doc string, score float64) rag.Hit {
		h := rag.Hit{}
		h.DocumentID, h.Text, h.Score = doc, fmt.Sprintf("%s %g", doc, score), score
		return h
	}
	// a's third passage (8) against b at 0.6 of it and c at 0.4.
	within, over := capPerDocument([]rag.Hit{hit("a", 10), hit("a", 9), hit("a", 8), hit("b", 4.8), hit("c", 3.2)}, n)
	var got []string
	for _, h := range merge(within, over, share)[:5] {
		got = append(got, h.Text)
	}
	if want := []string{"a 10", "a 9", "b 4.8", "a 8", "c 3.2"}; !slices.Equal(got, want) {
		t.Errorf("answer passages %v, want %v", got, want)
	}
	if n, share := r.capPerDocument(rag.SearchRequest{}); n != 2 || share != 0.7 {
		t.Errorf("default cap: %d, share %g; want 2, 0.7", n, share)
	}
	off := &Retriever{opt: Options{MaxPerDocument: -1}.withDefaults()}
	if n, _ := off.capPerDocument(rag.SearchRequest{}); n != 0 {
		t.Errorf("MaxPerDocument -1: cap %d, want none", n)
	}
}
