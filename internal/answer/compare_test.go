package answer_test

import (
	"context"
	"testing"

	"github.com/ragd/ragd/internal/answer"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/rag"
)

func TestComparison(t *testing.T) {
	for q, want := range map[string]bool{
		"두 법안의 차이는 무엇인가요?":               true,
		"A와 B를 비교해 주세요":                  true,
		"Compare the two reports":        true,
		"How do they differ?":            true,
		"React vs Vue":                   true,
		"그 법안은 누가 대표발의했나요?":              false,
		"What is the comparative index?": true,
		"When does the law take effect?": false,
	} {
		if got := answer.Comparison(q); got != want {
			t.Errorf("Comparison(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestAskCompareDocuments: a comparison question over two chosen documents is retrieved per document, so the
// generator gets passages of both, interleaved (the first of each, then the second…), and of no other; the
// same question over one document is retrieved as usual.
func TestAskCompareDocuments(t *testing.T) {
	t.Parallel()
	a := open(t, func(*config.Config) {})
	ctx := context.Background()
	ids := ingestFixtures(t, a, "md/ko_react_render-and-commit.md", "md/ko_react_importing-and-exporting-components.md", "md/ko_react_queueing-a-series-of-state-updates.md")
	// The question's words are those of the first document: retrieval over both would rank its passages first.
	const q = "렌더링과 커밋 단계의 차이는 무엇인가요?"
	chosen := []string{ids[0], ids[1]}
	ans, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: q, Filter: rag.Filter{DocumentIDs: chosen}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hits := ans.Retrieval.Hits
	if len(hits) < 4 {
		t.Fatalf("%d passages, want at least 2 of each document", len(hits))
	}
	for i, h := range hits {
		if h.DocumentID != chosen[i%2] {
			t.Fatalf("passage %d is of %s, want %s (interleaved per document)", i+1, h.DocumentID, chosen[i%2])
		}
	}

	one, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: q, Filter: rag.Filter{DocumentIDs: chosen[:1]}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range one.Retrieval.Hits {
		if h.DocumentID != ids[0] {
			t.Fatalf("over one document a passage of %s", h.DocumentID)
		}
	}
}
