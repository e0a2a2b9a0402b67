package feedback

import (
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/qset"
	"github.com/ragd/ragd/internal/rag"
)

func passage(file, text string, page int) rag.FeedbackPassage {
	return rag.FeedbackPassage{ChunkID: 1, DocumentID: "d-" + file, File: file, PageStart: page, PageEnd: page,
		Hash: rag.PassageHash(text), Text: text}
}

// TestItems: each kind of rating makes the item the package doc promises, and the items load as a
// question set item would (eval's own checks).
func TestItems(t *testing.T) {
	bill := passage("/data/docs/pdf/bill.pdf", "일부개정법률안\n(이수진의원 대표발의)\n의안번호 2125318", 1)
	minutes := passage("/data/docs/pdf/minutes.pdf", "다음은 의사일정 제1항부터 제4항까지의 법률안을 상정합니다.", 3)
	md := passage("/data/docs/md/react.md", "React renders UI in three steps. Trigger, render, commit.", 0)
	list := []*rag.Feedback{ // newest first, as ListFeedback returns them
		// A source rated down with a comment: a regression item.
		{Vote: rag.Vote{Target: rag.FeedbackSource, Rating: -1, Comment: "회의록이 아니라 법안을 봐야 함", Question: "이 법률안은 누가 대표발의했나요?"}, Passages: []rag.FeedbackPassage{minutes}},
		// The same question's right source rated up: the item is answerable there too.
		{Vote: rag.Vote{Target: rag.FeedbackSource, Rating: 1, Question: "이 법률안은 누가 대표발의했나요?"}, Passages: []rag.FeedbackPassage{bill}},
		// An answer rated down that cited a passage of a file without pages.
		{Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: -1, Question: "What are the three steps?", Answer: "Trigger, render, commit. [1]"}, Passages: []rag.FeedbackPassage{md}},
		// An answer rated up that cited its passage: answerable, the span taken from the answer.
		{Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: 1, Question: "How does React render?", Answer: "React renders UI in three steps. [1]"}, Passages: []rag.FeedbackPassage{md}},
		// The not-covered reply rated up: unanswerable.
		{Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: 1, Question: "GA4 설정은?", Answer: "제공된 문서에서 이 질문에 대한 내용을 찾지 못했습니다.", NotFound: true}},
		// A refusal rated down with nothing cited: skipped.
		{Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: -1, Question: "시행일은?", NotFound: true}},
	}
	ex := Items(list, "feedback", "")
	if ex.Set.Docs != "/data/docs" || ex.Ratings != 6 {
		t.Fatalf("docs %q, ratings %d", ex.Set.Docs, ex.Ratings)
	}
	if want := []string{"md/react.md", "pdf/bill.pdf", "pdf/minutes.pdf"}; !slices.Equal(ex.Set.Include, want) {
		t.Errorf("include %v, want %v", ex.Set.Include, want)
	}
	by := map[string]qset.Item{}
	for _, it := range ex.Items {
		by[it.Question] = it
	}
	if len(ex.Items) != 4 || len(ex.Skipped) != 1 || ex.Skipped[0].Question != "시행일은?" {
		t.Fatalf("items %+v, skipped %+v", ex.Items, ex.Skipped)
	}
	sponsor := by["이 법률안은 누가 대표발의했나요?"]
	if sponsor.File != "pdf/bill.pdf" || !slices.Equal(sponsor.Pages, []int{1}) || sponsor.Answer != "일부개정법률안" ||
		len(sponsor.Avoid) != 1 || sponsor.Avoid[0].File != "pdf/minutes.pdf" || !slices.Equal(sponsor.Avoid[0].Pages, []int{3}) ||
		sponsor.Comment != "회의록이 아니라 법안을 봐야 함" {
		t.Errorf("sponsor item %+v", sponsor)
	}
	steps := by["What are the three steps?"]
	if steps.File != "" || steps.Answer != "" || len(steps.Avoid) != 1 || steps.Avoid[0].File != "md/react.md" || steps.Avoid[0].Pages != nil {
		t.Errorf("steps item %+v", steps)
	}
	render := by["How does React render?"]
	if render.File != "md/react.md" || render.Answer != "React renders UI in three steps." || render.Pages != nil {
		t.Errorf("render item %+v", render)
	}
	if ga := by["GA4 설정은?"]; !ga.Unanswerable || ga.File != "" {
		t.Errorf("GA4 item %+v", ga)
	}
	// Every item passes the question set's checks.
	if err := qset.CheckItems(ex.Items); err != nil {
		t.Errorf("exported items do not load: %v", err)
	}
	// A file outside the docs folder cannot be cited.
	if ex := Items(list[:2], "feedback", "/elsewhere"); len(ex.Items) != 0 || len(ex.Skipped) != 1 {
		t.Errorf("outside docs: items %+v, skipped %+v", ex.Items, ex.Skipped)
	}
}

func TestSpan(t *testing.T) {
	for _, c := range []struct{ answer, passage, want string }{
		{"임대보증금은 1000만원입니다. [1] 신청은 인터넷으로 한다. [2]", "신청은 인터넷으로 한다. 그 밖에", "신청은 인터넷으로 한다."},
		{"", "\n\n  first   line  \nsecond", "first line"},
		{"unrelated words.", "A passage line.", "A passage line."},
	} {
		if got := span(c.answer, c.passage); got != c.want {
			t.Errorf("span(%q, %q) = %q, want %q", c.answer, c.passage, got, c.want)
		}
	}
}

// TestItemsSourceDownAnswerUp: a source rated down stays avoided when the answer that cited it is rated up;
// the answer's other passage makes the item answerable.
func TestItemsSourceDownAnswerUp(t *testing.T) {
	bill := passage("pdf/bill.pdf", "(이수진의원 대표발의)", 1)
	minutes := passage("pdf/minutes.pdf", "의사일정 제1항", 3)
	ex := Items([]*rag.Feedback{
		{Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: 1, Question: "q", Answer: "이수진의원 [2]"}, Passages: []rag.FeedbackPassage{minutes, bill}},
		{Vote: rag.Vote{Target: rag.FeedbackSource, Rating: -1, Question: "q"}, Passages: []rag.FeedbackPassage{minutes}},
	}, "s", "")
	if len(ex.Items) != 1 {
		t.Fatalf("items %+v skipped %+v", ex.Items, ex.Skipped)
	}
	it := ex.Items[0]
	if it.File != "pdf/bill.pdf" || len(it.Avoid) != 1 || it.Avoid[0].File != "pdf/minutes.pdf" {
		t.Errorf("item %+v", it)
	}
}
