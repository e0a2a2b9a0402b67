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
