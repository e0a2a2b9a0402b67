package answer_test

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/answer"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/generate"
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
		"경선에서 15% 차이로 이긴다고 내다본 사람은?":     false,
		"3점 차이로 이긴 팀은?":                  false,
		"두 문서의 시행일은 어떻게 다른가요?":           true,
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

// sectionsOf splits a comparison answer at its bold heading lines: heading → the citation numbers under it.
func sectionsOf(text string) (headings []string, cites map[string][]int) {
	cites = map[string][]int{}
	cur := ""
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "**") && strings.HasSuffix(line, "**") && len(line) > 4 {
			cur = strings.Trim(line, "*")
			headings = append(headings, cur)
			continue
		}
		for _, m := range citeRE.FindAllStringSubmatch(line, -1) {
			n, _ := strconv.Atoi(m[1])
			cites[cur] = append(cites[cur], n)
		}
	}
	return headings, cites
}

var citeRE = regexp.MustCompile(`\[(\d+)\]`)

// TestCompareLayout: offline, a comparison over two picked documents (the bill and its review report) is
// answered per document — a bold heading per document, in the order picked, under each only citations of
// that document's passages; a picked document with nothing on the question says so under its heading; a
// comparison that only one of the passages' documents answers, without picked documents, is the usual
// answer.
func TestCompareLayout(t *testing.T) {
	t.Parallel()
	a := open(t, func(*config.Config) {})
	ctx := context.Background()
	ids := ingestFixtures(t, a, "pdf/bill_2125318_original.pdf", "pdf/bill_2125318_review_report.pdf",
		"md/ko_react_render-and-commit.md", "md/ko_react_importing-and-exporting-components.md")
	titles := map[string]string{ids[0]: "bill_2125318_original", ids[1]: "bill_2125318_review_report"}

	ans, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: "두 문서에서 탄소중립위원회 위원 추천에 대한 내용을 비교해 주세요",
		Filter: rag.Filter{DocumentIDs: ids[:2]}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	headings, cites := sectionsOf(ans.Text)
	if want := []string{titles[ids[0]], titles[ids[1]]}; !slices.Equal(headings, want) {
		t.Fatalf("headings %q, want %q; answer:\n%s", headings, want, ans.Text)
	}
	docOf := map[int]string{}
	for _, s := range ans.Sources {
		docOf[s.N] = s.DocumentID
	}
	for _, id := range ids[:2] {
		h := titles[id]
		if len(cites[h]) == 0 {
			t.Errorf("nothing cited under %s:\n%s", h, ans.Text)
		}
		for _, n := range cites[h] {
			if docOf[n] != id {
				t.Errorf("under %s, [%d] is a passage of %s", h, n, docOf[n])
			}
		}
	}
	if ans.NotFound || len(cites[""]) != 0 {
		t.Errorf("not found %v, citations before the first heading %v", ans.NotFound, cites[""])
	}
	// The parts share one answer's length (150 characters each of two): a part is its document's best
	// sentence, and further ones only while the part is within its share.
	parts := strings.Split(ans.Text, "**")
	for k := 2; k < len(parts); k += 2 {
		part := parts[k]
		cites := sentenceCites.FindAllStringIndex(part, -1)
		if len(cites) > 1 && utf8.RuneCountInString(strings.TrimSpace(part[:cites[len(cites)-1][0]])) > 150 {
			t.Errorf("a part over its share of the answer's length:\n%s", part)
		}
	}

	// The review report says nothing of when the law takes effect: its part says so.
	when, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: "두 문서의 시행일은 어떻게 다른가요?",
		Filter: rag.Filter{DocumentIDs: ids[:2]}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	headings, cites = sectionsOf(when.Text)
	if len(headings) != 2 || !strings.Contains(when.Text, "공포 후 6개월") || len(cites[titles[ids[0]]]) == 0 ||
		!strings.Contains(when.Text, "**"+titles[ids[1]]+"**\n\n"+generate.NotInDocument("ko")) {
		t.Errorf("effective dates compared:\n%s", when.Text)
	}

	// Two steps of rendering, both in one React page: not a comparison of documents.
	plain, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: "렌더링과 커밋 단계의 차이는 무엇인가요?",
		Filter: rag.Filter{DocumentIDs: nil}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := sectionsOf(plain.Text); len(h) != 0 || plain.NotFound {
		t.Errorf("a comparison within one document laid out per document (%q):\n%s", h, plain.Text)
	}
}

// sentenceCites matches the citation after each quoted sentence.
var sentenceCites = regexp.MustCompile(`\[\d+\]`)

// TestCompareInstruction: with a generator that writes its own text (the OpenAI wire fake), a comparison
// over two picked documents is one request whose system prompt asks for the per-document layout, naming
// the documents in order.
func TestCompareInstruction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ids := ingestFixtures(t, b.app, "md/ko_react_render-and-commit.md", "md/ko_react_importing-and-exporting-components.md")
	if _, err := b.app.Answers.Ask(context.Background(), rag.LocalPrincipal, rag.AskRequest{Question: "두 문서를 비교해 주세요",
		Filter: rag.Filter{DocumentIDs: ids}}, nil); err != nil {
		t.Fatal(err)
	}
	sys := b.systemSent(t)
	if !strings.Contains(sys, "Organise the answer per document, in this order: \"렌더링 그리고 커밋\", \"컴포넌트 import 및 export 하기\"") {
		t.Errorf("system prompt:\n%s", sys)
	}
	if n := b.fake.Calls(fakeapi.EndpointGenerate) + b.fake.Calls(fakeapi.EndpointStream); n != 1 {
		t.Errorf("%d completions, want 1", n)
	}
}
