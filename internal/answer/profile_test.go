package answer_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/rag"
)

// withProfile returns collection name carrying the profile doc (YAML).
func withProfile(t *testing.T, name, doc string) *rag.Collection {
	t.Helper()
	p, err := profile.Decode(name+".yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := &rag.Collection{Name: name}
	if err := profile.Apply(c, p); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestProfileOffline: the offline extractive generator answers a question its collection does not cover
// with the profile's fixed reply, a blank question gets the profile's message, and the profile's passages
// and history turns bound what the answer is given.
func TestProfileOffline(t *testing.T) {
	t.Parallel()
	const reply = "리액트 문서에 없는 내용입니다."
	a := open(t, func(*config.Config) {})
	ctx := context.Background()
	for _, c := range []*rag.Collection{
		withProfile(t, "react", "replies:\n  not_covered: "+reply+"\n  empty_question: 질문을 적어 주세요.\ngeneration:\n  passages: 2\n  history_turns: 0\n"),
		{Name: "plain"},
		withProfile(t, "english", "language: en\n"),
	} {
		if err := a.Store.CreateCollection(ctx, c); err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.Ingest.Ingest(ctx, rag.LocalPrincipal, ingest.Request{Collection: c.Name, Name: "render.md", Data: renderPage(t)}); err != nil {
			t.Fatal(err)
		}
	}
	if a.Answers.Generator() != "extractive" {
		t.Fatalf("generator %s, want the offline default", a.Answers.Generator())
	}
	ask := func(collection, q string, history ...rag.Turn) *rag.Answer {
		t.Helper()
		ans, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: q, History: history,
			Filter: rag.Filter{Collections: []string{collection}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ans
	}
	const offTopic = "맛있는 김치찌개 레시피 알려줘"
	if ans := ask("react", offTopic); !ans.NotFound || ans.Text != reply || len(ans.Sources) != 0 {
		t.Errorf("not covered in react: %+v", ans)
	}
	if ans := ask("english", offTopic); !ans.NotFound || ans.Text != generate.NotFound("en") {
		t.Errorf("not covered in a collection whose language is en: %q", ans.Text)
	}
	if ans := ask("plain", offTopic); !ans.NotFound || ans.Text == reply {
		t.Errorf("not covered in plain: %q, want ragd's own reply", ans.Text)
	}
	if ans := ask("react", question); ans.NotFound || len(ans.Retrieval.Hits) != 2 {
		t.Errorf("covered question: not found %v, %d passages, want an answer from 2", ans.NotFound, len(ans.Retrieval.Hits))
	}
	if ans := ask("plain", question); len(ans.Retrieval.Hits) != 5 {
		t.Errorf("plain collection: %d passages, want the default 5", len(ans.Retrieval.Hits))
	}
	prev := rag.Turn{Role: rag.RoleUser, Content: "렌더링은 무엇인가요?"}
	if ans := ask("react", "커밋 단계는?", prev); ans.RetrievalQuery != "커밋 단계는?" {
		t.Errorf("history_turns 0: retrieval query %q, want the question alone", ans.RetrievalQuery)
	}
	if ans := ask("plain", "커밋 단계는?", prev); !strings.Contains(ans.RetrievalQuery, "렌더링") {
		t.Errorf("plain: retrieval query %q, want the previous question carried", ans.RetrievalQuery)
	}
	_, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: " ", Filter: rag.Filter{Collections: []string{"react"}}}, nil)
	if rag.ErrorCode(err) != rag.CodeQuestionRequired || rag.ErrorMessage(err) != "질문을 적어 주세요." {
		t.Errorf("blank question: %v", err)
	}
}

// TestProfileHosted: a hosted generator is sent the profile's temperature, output tokens and fixed replies.
func TestProfileHosted(t *testing.T) {
	t.Parallel()
	b := setup(t, withProfile(t, "react", "domain: React\nreplies:\n  not_covered: 문서에 없음.\n  off_topic: React 질문만 받습니다.\n"+
		"generation:\n  temperature: 0.7\n  max_output_tokens: 300\n"))
	if _, err := b.app.Answers.Ask(context.Background(), rag.LocalPrincipal, rag.AskRequest{Question: question,
		Filter: rag.Filter{Collections: []string{"react"}}}, nil); err != nil {
		t.Fatal(err)
	}
	req, ok := b.fake.LastRequest(fakeapi.EndpointGenerate)
	if !ok {
		if req, ok = b.fake.LastRequest(fakeapi.EndpointStream); !ok {
			t.Fatal("no chat completion")
		}
	}
	var body struct {
		Temperature *float64 `json:"temperature"`
		MaxTokens   *int     `json:"max_tokens"`
		MaxComp     *int     `json:"max_completion_tokens"`
	}
	if err := req.JSON(&body); err != nil {
		t.Fatal(err)
	}
	if body.Temperature == nil || *body.Temperature != 0.7 {
		t.Errorf("temperature %v, want 0.7", body.Temperature)
	}
	if (body.MaxTokens == nil || *body.MaxTokens != 300) && (body.MaxComp == nil || *body.MaxComp != 300) {
		t.Errorf("output tokens %v / %v, want 300", body.MaxTokens, body.MaxComp)
	}
	sys := b.systemSent(t)
	for _, want := range []string{`"문서에 없음."`, `"React 질문만 받습니다."`, "React"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %s:\n%s", want, sys)
		}
	}
}

// renderPage is the fixture the answer tests ingest.
func renderPage(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "fixtures", "md", "ko_react_render-and-commit.md"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
