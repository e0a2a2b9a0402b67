package answer_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/answer"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// TestQueryExpansion: with RAGD_QUERY_EXPANSION=llm an OpenAI-compatible generator (the wire-format fake)
// is asked for other wordings of the question; a document that words the answer only in those ("tenancy
// bond", "refunded") is then found and cited, where without the expansion the question gets no passage. A
// failed expansion leaves the question as it was.
func TestQueryExpansion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if _, _, err := b.app.Ingest.Ingest(ctx, rag.LocalPrincipal, ingest.Request{Name: "tenancy.md",
		Data: []byte("# Tenancy\n\nThe tenancy bond is refunded within 30 days after the tenancy ends, less unpaid charges.\n")}); err != nil {
		t.Fatal(err)
	}
	var expandPrompt string
	b.fake.SetAnswer(func(prompt string) string {
		if strings.Contains(prompt, "Other wordings:") {
			expandPrompt = prompt
			return "- tenancy bond\n2. bond refunded\n\"tenancy bond\"\n"
		}
		return fakeapi.DefaultAnswer(prompt)
	})
	const q = "When do I get my security deposit back?"
	plain := answer.New(b.app.Retriever, b.app.Generator, answer.Options{})
	off, err := plain.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: q}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !off.NotFound || expandPrompt != "" {
		t.Fatalf("without expansion: not found %v, %d sources, expansion asked %q", off.NotFound, len(off.Sources), expandPrompt)
	}

	svc := answer.New(b.app.Retriever, b.app.Generator, answer.Options{Expand: true})
	ans, err := svc.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: q}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(expandPrompt, q) {
		t.Fatalf("expansion prompt %q lacks the question", expandPrompt)
	}
	if want := []string{"tenancy bond", "bond refunded"}; !slices.Equal(ans.Expansions, want) {
		t.Errorf("expansions %q, want %q", ans.Expansions, want)
	}
	if ans.NotFound || len(ans.Sources) == 0 || ans.Sources[0].Title != "Tenancy" {
		t.Fatalf("with expansion: not found %v, sources %+v", ans.NotFound, ans.Sources)
	}
	if ans.RetrievalQuery != q {
		t.Errorf("retrieval query %q: the expansions are searched beside the question, not instead", ans.RetrievalQuery)
	}

	// The expansion fails (400, not retried): the question is searched alone and answered as before.
	b.fake.FailNext(1, fakeapi.Fault{Status: 400})
	failed, err := svc.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: q}, nil)
	if err != nil {
		t.Fatalf("a failed expansion failed the answer: %v", err)
	}
	if len(failed.Expansions) != 0 || !failed.NotFound {
		t.Errorf("after a failed expansion: expansions %q, not found %v", failed.Expansions, failed.NotFound)
	}
}

func TestParseExpansions(t *testing.T) {
	long := strings.Repeat("x", generate.MaxExpansionChars+1)
	got := generate.ParseExpansions("1. 보증금\n\n* Deposit\n- deposit\n"+long+"\nQ?\na\nb\nc\nd\ne", "q?")
	if want := []string{"보증금", "Deposit", "a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("ParseExpansions = %q, want %q", got, want)
	}
}
