package retrieve_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/retrieve"
)

// TestOpeningPassage: a question about a document as a whole, named by its kind ("이 법률안은 누가
// 대표발의했나요?"), gets that document's title page among its first hits, though a long record lists bills
// and their sponsors in every passage and outranks the title page by the words alone (off, it is not in the
// top 5). A question that asks about a place inside a document ("…에서") does not lift the title page, and
// the document signal (DocumentWeight) need not be on.
func TestOpeningPassage(t *testing.T) {
	b := setup(t)
	// Other documents, so that the words of bills are rare in the collection as they are in a real one.
	for i := range 60 {
		b.add(t, "c", fmt.Sprintf("note-%d.txt", i), fmt.Sprintf("%d번 공지: 주차장 이용 시간은 오전 %d시부터이며 방문객은 안내데스크에서 출입증을 받아야 합니다.", i, i%12), nil)
	}
	var minutes strings.Builder
	minutes.WriteString("제9회 환경노동위원회 회의록\n일 시 2024년 5월 7일\n\n")
	for i := range 40 {
		fmt.Fprintf(&minutes, "%d. 근로기준법 일부개정법률안(김%d 의원 대표발의) 고용보험법 일부개정법률안(박%d 의원 대표발의) 직업안정법 일부개정법률안(이%d 의원 대표발의)(의안번호 21%05d)\n\n", i, i, i, i, i)
	}
	b.add(t, "c", "minutes.txt", minutes.String(), nil)
	var bill strings.Builder
	bill.WriteString("탄소중립기본법 일부개정법률안\n(이수진의원 대표발의)\n발의연월일 : 2023. 11. 9.\n제안이유 및 주요내용\n" +
		strings.Repeat("현행법은 탄소중립녹색성장위원회의 위원을 대통령이 위촉하도록 하고 있으나 위원 구성이 특정 분야에 치우쳐 있다는 지적이 있음. ", 4) + "\n\n")
	for i := range 40 {
		fmt.Fprintf(&bill, "제%d조의 개정 내용은 위원회 위원을 위촉할 때 아동, 청년, 여성, 노동자, 농어민, 중소상공인 등 다양한 사회계층의 의견이 반영되도록 하고, 그 추천 절차를 대통령령으로 정하도록 하는 것입니다.\n\n", i+1)
	}
	doc := b.add(t, "c", "doc-2.txt", bill.String(), nil)
	if doc.ChunkCount < 3 {
		t.Fatalf("the bill has %d passages; the test needs a title page and several more", doc.ChunkCount)
	}
	ctx := context.Background()
	titlePage := func(opt retrieve.Options, q string) int {
		t.Helper()
		res, err := b.retriever(t, opt).Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: q, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range res.Hits {
			if h.DocumentID == doc.ID && h.Index == 0 {
				return i + 1
			}
		}
		return 0
	}
	const q = "이 법률안은 누가 대표발의했나요?"
	if r := titlePage(retrieve.Options{}, q); r != 1 {
		t.Errorf("defaults: the bill's title page is hit %d of 5, want the first", r)
	}
	if r := titlePage(retrieve.Options{OpeningWeight: -1}, q); r == 1 {
		t.Errorf("opening weight off: the bill's title page is still the first hit; the record no longer outranks it, so the test shows nothing")
	}
	if r := titlePage(retrieve.Options{}, "법률안에서 위원 추천 절차는 어떻게 정하나요?"); r == 1 {
		t.Errorf("a question about a place in the bill got its title page first")
	}
}
