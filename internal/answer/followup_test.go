package answer_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// ingestFixtures ingests the shared fixtures (paths under fixtures/) and returns their document IDs in order.
func ingestFixtures(t *testing.T, a *app.App, fixtures ...string) []string {
	t.Helper()
	return ingestShared(t, a, "fixtures", fixtures...)
}

// ingestShared ingests files of the shared data's directory dir (paths under it) and returns their document
// IDs in order.
func ingestShared(t *testing.T, a *app.App, dir string, files ...string) []string {
	t.Helper()
	var ids []string
	for _, rel := range files {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		doc, _, err := a.Ingest.Ingest(context.Background(), rag.LocalPrincipal, ingest.Request{Name: filepath.Base(rel), Data: data})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, doc.ID)
	}
	return ids
}

// TestAskFollowUp asks about bill 2125318 and then "who sponsored that bill?" with the first turn as history,
// offline, over the bill, its review report and the assembly minutes (which mention other bills and their
// sponsors): the follow-up is answered about that bill (from it or its review report) with its sponsor. Without
// the history the follow-up names no bill and its answer draws on the minutes too.
func TestAskFollowUp(t *testing.T) {
	t.Parallel()
	a := open(t, func(*config.Config) {})
	ctx := context.Background()
	ids := ingestFixtures(t, a, "pdf/bill_2125318_original.pdf", "pdf/bill_2125318_review_report.pdf", "pdf/assembly_minutes_21_414_1_env_labor.pdf")

	first, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: "탄소중립위원회 위원 후보 추천 단체를 법률에 명시하는 개정안이 있나요?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	history := []rag.Turn{
		{Role: rag.RoleUser, Content: first.Question},
		{Role: rag.RoleAssistant, Content: first.Text, DocumentIDs: first.DocumentIDs()},
	}
	const followUp = "그 법안은 누가 대표발의했나요?"
	ans, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: followUp, History: history}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.NotFound || !strings.Contains(ans.Text, "이수진") {
		t.Fatalf("follow-up answered %q, want the bill's sponsor 이수진", ans.Text)
	}
	about := map[string]bool{ids[0]: true, ids[1]: true}
	if len(ans.Sources) == 0 || !about[ans.Sources[0].DocumentID] {
		t.Fatalf("follow-up cites %v, want the bill or its review report first", ans.DocumentIDs())
	}
	if hits := ans.Retrieval.Hits; len(hits) == 0 || !about[hits[0].DocumentID] {
		t.Fatalf("follow-up's first passage is not the bill's nor its review report's")
	}

	// The previous question alone carries the subject: without the cited documents it still finds the bill.
	ans, err = a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: followUp, History: history[:1]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ans.Text, "이수진") {
		t.Fatalf("follow-up after the question alone answered %q", ans.Text)
	}

	alone, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: followUp}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Without the history the follow-up names no bill: its answer also draws on the minutes (other bills and
	// their sponsors), which the answer after the previous question does not.
	other := func(a *rag.Answer) bool {
		return slices.ContainsFunc(a.DocumentIDs(), func(id string) bool { return !about[id] })
	}
	if other(ans) {
		t.Fatalf("follow-up after the question cites %v, want only the bill and its review report", ans.DocumentIDs())
	}
	if !other(alone) {
		t.Fatalf("the follow-up alone cites only the bill (%v): this corpus does not show the history's part", alone.DocumentIDs())
	}
}

// TestAskFollowUpRewrite: with an LLM generator a follow-up is retrieved by the model's standalone rewrite
// of it (a chat completion on the OpenAI wire, seen by the fake with the conversation), and answered with the
// history; when the rewrite fails, retrieval falls back to the question and the previous one.
func TestAskFollowUpRewrite(t *testing.T) {
	t.Parallel()
	b := setup(t, &rag.Collection{Name: "docs"})
	const standalone = "React에서 커밋 단계는 무엇을 하나요?"
	var rewritePrompt string
	b.fake.SetAnswer(func(prompt string) string {
		if strings.Contains(prompt, "Standalone question:") {
			rewritePrompt = prompt
			return standalone
		}
		return fakeapi.DefaultAnswer(prompt)
	})
	history := []rag.Turn{
		{Role: rag.RoleUser, Content: question},
		{Role: rag.RoleAssistant, Content: "렌더링은 초기 렌더링이거나 상태가 바뀌었을 때 일어납니다 [1]."},
	}
	ask := rag.AskRequest{Question: "그 다음 단계는요?", History: history}
	ans, err := b.app.Answers.Ask(context.Background(), rag.LocalPrincipal, ask, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rewritePrompt, question) || !strings.Contains(rewritePrompt, "그 다음 단계는요?") {
		t.Fatalf("rewrite prompt %q lacks the conversation", rewritePrompt)
	}
	if ans.RetrievalQuery != standalone {
		t.Fatalf("retrieved by %q, want the rewrite %q", ans.RetrievalQuery, standalone)
	}
	if ans.Question != "그 다음 단계는요?" || len(ans.Sources) == 0 {
		t.Fatalf("answer %+v", ans)
	}

	b.fake.SetAnswer(func(prompt string) string {
		if strings.Contains(prompt, "Standalone question:") {
			return " "
		}
		return fakeapi.DefaultAnswer(prompt)
	})
	ans, err = b.app.Answers.Ask(context.Background(), rag.LocalPrincipal, ask, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "그 다음 단계는요?\n" + question; ans.RetrievalQuery != want {
		t.Fatalf("after an empty rewrite retrieved by %q, want %q", ans.RetrievalQuery, want)
	}
}

// TestAskFollowUpStandalone: a follow-up that refers back with a pronoun is answered about what the previous
// question asked of, offline: "그건 어떻게 계산해요?" after "CPM이 뭔가요?" with CPM's formula, not with the
// formula of ROAS that the same lecture gives nearer to "계산" (the previous question's words were an extra
// at a third of their weight); without the history nothing says it is CPM.
func TestAskFollowUpStandalone(t *testing.T) {
	t.Parallel()
	a := open(t, func(*config.Config) {})
	ctx := context.Background()
	ingestShared(t, a, "samples", "lectures/6-1.md", "lectures/4-2.md", "lectures/3-1.md")
	ask := func(q string, history []rag.Turn) *rag.Answer {
		t.Helper()
		ans, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: q, History: history}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ans
	}
	first := ask("CPM이 뭔가요?", nil)
	history := []rag.Turn{
		{Role: rag.RoleUser, Content: first.Question},
		{Role: rag.RoleAssistant, Content: first.Text, DocumentIDs: first.DocumentIDs()},
	}
	const followUp = "그건 어떻게 계산해요?"
	ans := ask(followUp, history)
	if !strings.Contains(ans.Text, "지출 금액 ÷ 노출 수 × 1,000") || strings.Contains(ans.Text, "ROAS") {
		t.Fatalf("follow-up answered %q, want CPM's formula", ans.Text)
	}
	// A follow-up after it is read against the standalone question before it ("CPM은 어떻게 계산해요?").
	history = append(history, rag.Turn{Role: rag.RoleUser, Content: followUp},
		rag.Turn{Role: rag.RoleAssistant, Content: ans.Text, DocumentIDs: ans.DocumentIDs()})
	if again := ask("그건 왜 중요해요?", history); !strings.Contains(again.Text, "CPM") {
		t.Fatalf("second follow-up answered %q, not about CPM", again.Text)
	}
	if alone := ask(followUp, nil); strings.Contains(alone.Text, "지출 금액 ÷ 노출 수") {
		t.Fatalf("the follow-up alone answered %q: this corpus does not show the history's part", alone.Text)
	}
}
