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
