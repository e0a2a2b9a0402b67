package extractive

import (
	"context"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
)

// TestGenerateReserve: once the passages given cover the question, the sentences are chosen from the
// reserve passages too (rag.GenerateRequest.Reserve, numbered after them), so that the sentence of a
// passage the per-document cap kept out answers; when the passages do not cover the question the reserve
// does not make them.
func TestGenerateReserve(t *testing.T) {
	t.Parallel()
	g := New(Options{})
	given := []rag.Passage{
		{N: 1, Title: "Mozilla", Text: "On March 24, 2014, Mozilla promoted Brendan Eich to the role of CEO."},
		{N: 2, Title: "Mozilla", Text: "Firefox was originally named Phoenix."},
	}
	reserve := []rag.Passage{{N: 3, Title: "Mozilla", Text: "Due to the controversy, Brendan Eich stepped down as CEO on April 3, 2014."}}
	q := "When did Brendan Eich step down as CEO?"
	gen, err := g.Generate(context.Background(), rag.GenerateRequest{Question: q, Passages: given, Reserve: reserve}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(gen.Text, "April 3, 2014. [3]") {
		t.Errorf("with the reserve: %q, want the reserve's sentence cited [3]", gen.Text)
	}
	gen, err = g.Generate(context.Background(), rag.GenerateRequest{Question: q, Passages: given}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(gen.Text, "April 3") {
		t.Fatalf("without the reserve: %q", gen.Text)
	}
	other := []rag.Passage{{N: 1, Title: "Gecko", Text: "Gecko is a browser engine written in C++."}}
	gen, err = g.Generate(context.Background(), rag.GenerateRequest{Question: q, Language: "en", Passages: other, Reserve: reserve}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if gen.Text != generate.NotCovered("", "en") {
		t.Errorf("passages not covering the question: %q, want the not-covered reply", gen.Text)
	}
}

// TestGenerateReserveByScore: the reserve passages are weighed at the rank their search scores give them
// among the passages, not after all of them: the cap moved the best document's third passage below other
// documents' weaker ones.
func TestGenerateReserveByScore(t *testing.T) {
	t.Parallel()
	given := []rag.Passage{
		{N: 1, Title: "Mozilla", Score: 0.020, Text: "On March 24, 2014, Mozilla promoted Brendan Eich to the role of CEO."},
		{N: 2, Title: "Mozilla", Score: 0.019, Text: "Protests emerged in 2014 following the announcement of Eich's appointment as CEO."},
		{N: 3, Title: "Register", Score: 0.012, Text: "The CEO of the company signed on May 2, 2019."},
		{N: 4, Title: "Handbook", Score: 0.011, Text: "The trustee may step in as CEO on June 1, 2012."},
		{N: 5, Title: "Handbook", Score: 0.010, Text: "A trustee must step down on October 1, 2012."},
	}
	reserve := []rag.Passage{{N: 6, Title: "Mozilla", Score: 0.018, Text: "Due to the controversy, Eich voluntarily stepped down on April 3, 2014."}}
	gen, err := New(Options{}).Generate(context.Background(), rag.GenerateRequest{Question: "When did Brendan Eich step down as CEO?", Passages: given, Reserve: reserve}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(gen.Text, "April 3, 2014") {
		t.Errorf("%q, want the reserve's April 3, 2014 [6]", gen.Text)
	}
}
