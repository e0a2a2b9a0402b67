package answer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/testkit"
)

// TestLeadInAcrossChunks: a passage that ends announcing a list ("…다음 서류를 제출해야 합니다:") whose items
// are in the document's next chunk (here the next slide: a chunk never spans two) is answered with those
// items: the answer service appends the next chunk to it (real SQLite store, offline answerer).
func TestLeadInAcrossChunks(t *testing.T) {
	t.Parallel()
	a := open(t, func(*config.Config) {})
	ctx := context.Background()
	items := []string{"주민등록표등본", "가족관계증명서", "소득금액증명원", "자산 보유 사실 확인서"}
	deck := testkit.PPTX(
		testkit.Slide{Title: "입주 신청 안내", Body: []string{"입주 신청은 공고문을 읽은 뒤에 합니다.",
			"입주 신청자는 계약 전에 다음 서류를 제출해야 합니다:"}},
		testkit.Slide{Title: "(계속)", Body: items},
		testkit.Slide{Title: "주차 안내", Body: []string{"단지 주차장은 지하 2층에 있습니다."}},
	)
	if _, _, err := a.Ingest.Ingest(ctx, rag.LocalPrincipal, ingest.Request{Collection: "docs", Name: "notice.pptx", Data: deck}); err != nil {
		t.Fatal(err)
	}
	ans, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: "입주 신청할 때 제출해야 하는 서류는?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ans.Text, "다음 서류를 제출해야 합니다:") {
		t.Fatalf("answer %q: want the lead-in", ans.Text)
	}
	for _, it := range items {
		if !strings.Contains(ans.Text, it) {
			t.Errorf("answer %q lacks the item %q", ans.Text, it)
		}
	}
	if strings.Contains(ans.Text, "지하 2층") {
		t.Errorf("answer %q: only the next chunk is appended", ans.Text)
	}
}

// TestParagraphAcrossChunks: a passage whose last paragraph the chunker cut goes on in the document's next
// chunk; the answer service completes it to the paragraph's end, so that a lecture's "how to" sentence at
// the end of one chunk is answered with the steps that follow it in the next. The paragraph after it is not
// appended.
func TestParagraphAcrossChunks(t *testing.T) {
	t.Parallel()
	a := open(t, func(c *config.Config) { c.ChunkSize, c.ChunkOverlap = 300, 100 })
	ctx := context.Background()
	doc := "# 학습 단계\n\n" +
		"광고를 처음 운영하는 분들이 가장 많이 묻는 것이 바로 이 학습 단계에 관한 내용이에요. 이번 시간에 정리할게요. " +
		"메타의 광고 게재 시스템은 머신러닝으로 움직입니다. 새 광고 세트를 만들면 시스템은 아직 잘 먹히는 위치를 몰라요. " +
		"그래서 처음에는 여러 사람에게 광고를 보여 주면서 탐색을 합니다. 이 탐색 기간이 학습 단계예요. " +
		"학습 단계에서는 성과가 들쭉날쭉합니다. 학습 제한이 떴다고 당장 광고를 끌 필요는 없어요. " +
		"학습 제한을 푸는 방법도 그 반대로 생각하면 됩니다. 비슷한 광고 세트를 하나로 합쳐서 결과를 모으세요. " +
		"타겟을 넓히세요. 예산을 늘리거나 입찰 목표를 현실적으로 조정하세요.\n\n" +
		"마지막으로 오늘 배운 내용을 정리하면 다음과 같습니다. 학습은 일주일 정도 걸립니다."
	if _, _, err := a.Ingest.Ingest(ctx, rag.LocalPrincipal, ingest.Request{Collection: "docs", Name: "6-2.md", Data: []byte(doc)}); err != nil {
		t.Fatal(err)
	}
	hits, err := a.Store.Hits(ctx, rag.LocalPrincipal, []int64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	split := false
	for _, h := range hits {
		split = split || strings.Contains(h.Text, "하나로 합쳐서") && !strings.Contains(h.Text, "타겟을 넓히세요")
	}
	if !split {
		t.Fatalf("the chunks %+v do not cut the paragraph where the test needs it", hits)
	}
	ans, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: "광고 세트에 학습 제한이라고 뜨는데 이거 어떻게 풀어요?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"푸는 방법", "하나로 합쳐서", "타겟을 넓히세요"} {
		if !strings.Contains(ans.Text, want) {
			t.Errorf("answer %q lacks %q", ans.Text, want)
		}
	}
}
