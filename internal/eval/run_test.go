package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/config"
)

// TestRunQuestionSet runs a small documents set through the real pipeline (SQLite store, offline models):
// answerable, unanswerable and follow-up items, the answer figures and the baseline.
func TestRunQuestionSet(t *testing.T) {
	docs := t.TempDir()
	files := map[string]string{
		"apple.md": "# 사과 재배\n\n사과나무는 봄에 하얀 꽃이 핀다. 사과 수확은 가을 10월에 한다. 사과는 서늘한 기후를 좋아한다.",
		"pear.md":  "# 배 재배\n\n배나무는 봄에 꽃이 핀다. 배 수확은 9월에 시작한다. 배는 봉지를 씌워 기른다.",
		"rice.md":  "# Rice farming\n\nRice is planted in May and harvested in October. Paddies are flooded while the rice grows.",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(set, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("set.json", `{"name": "tiny", "kind": "documents", "docs": "`+docs+`", "include": ["*.md"]}`)
	write("questions.jsonl", `{"id": "1", "question": "배 수확은 몇 월에 시작하나요?", "file": "pear.md", "answer": "9월"}
{"id": "2", "question": "When is rice planted?", "file": "rice.md", "answer": "May"}
{"id": "3", "question": "What is the launch date of the Mars rover?", "unanswerable": true}
{"id": "4", "history": ["사과 재배에 대해 알려 주세요."], "question": "그 수확은 언제 하나요?", "file": "apple.md", "answer": "10월"}
{"id": "5", "question": "When is rice harvested?", "file": "rice.md", "answer": "in December"}
`)
	ds, err := Load(set)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	ctx := context.Background()
	a, err := app.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var misses bytes.Buffer
	opt := Options{Answers: true, Misses: &misses}
	idx, err := Index(ctx, a.Ingest, ds, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Documents) != 3 {
		t.Fatalf("indexed %v, want the 3 files", idx.Documents)
	}
	rep, err := Evaluate(ctx, a.Retriever, a.Answers, ds, opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Queries != 5 || rep.Judged != 4 || rep.Unanswerable != 1 || rep.Pages != nil {
		t.Errorf("counts: %d queries, %d judged, %d unanswerable, pages %v", rep.Queries, rep.Judged, rep.Unanswerable, rep.Pages)
	}
	if rep.Hit5*float64(rep.Judged) < 2 {
		t.Errorf("hit@5 %.3f: the two direct questions name their document's words", rep.Hit5)
	}
	// Every judged query is a hit at 5 or listed as a miss.
	if got := math.Round(rep.Hit5*float64(rep.Judged)) + float64(len(rep.Missed)); got != float64(rep.Judged) {
		t.Errorf("hit@5 %.3f and misses %v do not add up to %d judged queries", rep.Hit5, rep.Missed, rep.Judged)
	}
	if rep.PagesMissed != nil {
		t.Errorf("pages missed %v in a set without pages", rep.PagesMissed)
	}
	if rep.Answered == nil || rep.AnswerContains == nil || rep.RefusedUnanswerable == nil || rep.FalseAnswers == nil {
		t.Fatalf("answer figures missing: %+v", rep)
	}
	if got := *rep.RefusedUnanswerable + float64(*rep.FalseAnswers); got != 1 {
		t.Errorf("refused %.2f + false answers %d should cover the one unanswerable question", *rep.RefusedUnanswerable, *rep.FalseAnswers)
	}
	// The rates and the ids behind them agree with the counts.
	if rep.FalseRefusalRate == nil || rep.FalseAnswerRate == nil {
		t.Fatalf("false refusal / false answer rates missing: %+v", rep)
	}
	if got, want := *rep.FalseRefusalRate, 1-*rep.Answered; math.Abs(got-want) > 1e-9 || len(rep.FalseRefusals) != *rep.NotFound {
		t.Errorf("false refusals %.3f %v, want %.3f and %d ids", got, rep.FalseRefusals, want, *rep.NotFound)
	}
	if got := *rep.FalseAnswerRate; got != float64(*rep.FalseAnswers) || len(rep.FalseAnswered) != *rep.FalseAnswers ||
		*rep.FalseAnswers == 1 && rep.FalseAnswered[0] != "3" {
		t.Errorf("false answers %.3f %v, want %d (question 3)", got, rep.FalseAnswered, *rep.FalseAnswers)
	}
	// Every answerable question is counted once: with its gold span, refused, or listed as missing it.
	if answerable := 4; math.Round(*rep.AnswerContains*float64(answerable))+float64(*rep.NotFound+len(rep.GoldMissed)) != float64(answerable) {
		t.Errorf("gold %.3f, %d refused and missed %v do not add up to %d answerable questions", *rep.AnswerContains, *rep.NotFound, rep.GoldMissed, answerable)
	}
	// The misses file holds one line per question answered without its gold span (refused ones included)
	// and per unanswerable question answered, and nothing else.
	want := map[string]bool{}
	for _, id := range append(append(slices.Clone(rep.GoldMissed), rep.FalseRefusals...), rep.FalseAnswered...) {
		want[id] = true
	}
	got := map[string]bool{}
	for line := range strings.Lines(misses.String()) {
		var m Miss
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("misses line %q: %v", line, err)
		}
		q := ds.Queries[slices.IndexFunc(ds.Queries, func(q Query) bool { return q.ID == m.ID })]
		if m.Question != q.Text || m.Unanswerable != q.Unanswerable || ContainsAnswer(m.Answer, q.Answers) {
			t.Errorf("miss %+v does not describe question %+v", m, q)
		}
		if m.Refused && len(m.Cited) > 0 || !m.Refused && m.Answer != "" && len(m.Cited) == 0 {
			t.Errorf("miss %s: refused %v but cites %v", m.ID, m.Refused, m.Cited)
		}
		got[m.ID] = true
	}
	if !got["5"] {
		t.Errorf("misses file lists %v, want question 5, whose gold span no document holds", got)
	}
	if !maps.Equal(got, want) {
		t.Errorf("misses file lists %v, want %v", got, want)
	}
	b, err := BaselineBM25(ctx, a.Store, ds, idx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if b.Queries != 4 || b.Pages != nil {
		t.Errorf("baseline judged %d queries (pages %v), want 4", b.Queries, b.Pages)
	}
	// Plain BM25 finds the two direct questions' documents first ("수확", "rice" and "planted" are theirs).
	if b.MRR10*float64(b.Queries) < 2 {
		t.Errorf("baseline MRR@10 %.3f", b.MRR10)
	}
}

func TestFollowUpNeedsAnswers(t *testing.T) {
	ds := &Dataset{Name: "x", Queries: []Query{{ID: "1", Text: "그건요?", History: []string{"무엇?"}, Relevant: map[string]int{"a": 1}}}}
	if _, err := Evaluate(context.Background(), nil, nil, ds, Options{}); err == nil {
		t.Error("a follow-up without the answer pipeline should be an error")
	}
}

func TestEvery(t *testing.T) {
	var qs []Query
	for i := range 7 {
		qs = append(qs, Query{ID: strconv.Itoa(i)})
	}
	ids := func(qs []Query) string {
		var out []string
		for _, q := range qs {
			out = append(out, q.ID)
		}
		return strings.Join(out, " ")
	}
	for n, want := range map[int]string{0: "0 1 2 3 4 5 6", 1: "0 1 2 3 4 5 6", 3: "0 3 6", 6: "0 6", 7: "0", 8: "0"} {
		if got := ids(Every(qs, n)); got != want {
			t.Errorf("Every(7 queries, %d) = %q, want %q", n, got, want)
		}
	}
}
