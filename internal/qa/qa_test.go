package qa_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/answer"
	"github.com/ragd/ragd/internal/chunk"
	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/generate/extractive"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/openai"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/qa"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/reembed"
	"github.com/ragd/ragd/internal/store/postgres"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/testkit"
)

// store is what a board runs on: both stores are both.
type store interface {
	rag.Store
	rag.QuestionStore
}

// lecture is a small course the tests' questions are about.
var lecture = []byte("# 학습 단계\n\n주차: 6주차\n\n광고 세트가 7일 안에 최적화 이벤트를 약 50회 얻으면 학습 단계를 벗어나요. " +
	"학습 제한이 뜨면 비슷한 광고 세트를 하나로 합쳐서 전환을 모으고, 타겟을 넓히세요.\n\n" +
	"# 예산\n\n일일 예산은 하루에 최대 75%까지 더 쓸 수 있지만, 주 단위로는 일일 예산의 7배를 넘지 않아요.\n")

// board is a qa.Service over st with the course ingested into collection "course".
type board struct {
	st    store
	svc   *qa.Service
	space rag.Space
}

// ingestAll ingests the requests into st with the offline hash embedder in chunks of size characters (an
// existing document is left as it is) and returns the embedder.
func ingestAll(t testing.TB, st store, size int, reqs ...ingest.Request) rag.Embedder {
	t.Helper()
	emb := hash.New(hash.DefaultDim)
	ex, err := extract.New(extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.Close() })
	pipe := ingest.New(st, ex, emb, ingest.Options{Chunk: chunk.Options{Size: size, Overlap: size / 5}})
	for _, r := range reqs {
		if _, _, err := pipe.Ingest(context.Background(), rag.LocalPrincipal, r); err != nil && !errors.Is(err, rag.ErrConflict) {
			t.Fatal(err)
		}
	}
	return emb
}

func newBoard(t testing.TB, st store, gen rag.Generator, opt qa.Options) *board {
	t.Helper()
	ctx := context.Background()
	emb := ingestAll(t, st, 300, ingest.Request{Collection: "course", Name: "6-2.md", Data: lecture,
		Metadata: map[string]any{"lecture_name": "학습 단계", "week": "6주차"}})
	spaces, err := reembed.New(ctx, st, emb, nil, reembed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if gen == nil {
		gen = extractive.New(extractive.Options{})
	}
	ans := answer.New(spaces, gen, answer.Options{Collections: st})
	if opt.RetryBase == 0 {
		opt.RetryBase = time.Millisecond
	}
	return &board{st: st, svc: qa.New(st, st, emb, st, ans, opt), space: emb.Space()}
}

func openSQLite(t testing.TB) store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ragd.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// openPostgres opens a store in a new schema of RAGD_TEST_DATABASE_URL (PGlite from scripts/pglite.sh);
// a second call with the same schema is another process's pool on the same tables.
func openPostgres(t testing.TB, schema string) store {
	t.Helper()
	st, err := postgres.Open(context.Background(), testkit.DatabaseURL(t), postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func newSchema(t testing.TB) string {
	return testkit.Schema(t, testkit.DatabaseURL(t), "qa_")
}

func ask(t testing.TB, b *board, title string) *rag.Question {
	t.Helper()
	q, err := b.svc.Ask(context.Background(), rag.LocalPrincipal, qa.NewQuestion{Collection: "course", Title: title})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// aiAnswers counts each question's AI answers.
func aiAnswers(t testing.TB, st store, ids []string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, id := range ids {
		as, err := st.ListAnswers(context.Background(), nil, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			if a.IsAI {
				out[id]++
			}
		}
	}
	return out
}

func TestPass(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		b := newBoard(t, openSQLite(t), nil, qa.Options{Batch: 2})
		ctx := t.Context()
		q1, q2, q3 := ask(t, b, "학습 단계는 언제 끝나요?"), ask(t, b, "학습 제한은 어떻게 풀어요?"), ask(t, b, "틱톡 픽셀은 어디에 설치해요?")
		if q1.Space != b.space.ID() {
			t.Errorf("question embedded in %q, want %q", q1.Space, b.space.ID())
		}
		run, err := b.svc.Pass(ctx, qa.TriggerCLI)
		if err != nil || run.Answered != 2 || run.FinishedAt == nil {
			t.Fatalf("first pass (batch 2) = %+v, %v", run, err)
		}
		th, _ := b.svc.Get(ctx, nil, q1.ID)
		if th.Status != rag.QuestionAnswered || len(th.Answers) != 1 || len(th.Answers[0].SourceRefs) == 0 {
			t.Fatalf("oldest question first: %+v", th)
		}
		ref := th.Answers[0].SourceRefs[0]
		if ref.Metadata["week"] != "6주차" || ref.Title == "" || ref.Similarity <= 0 {
			t.Errorf("source ref = %+v", ref)
		}
		if th, _ := b.svc.Get(ctx, nil, q3.ID); th.Status != rag.QuestionOpen {
			t.Errorf("the third question was answered beyond the batch")
		}
		if run, _ = b.svc.Pass(ctx, qa.TriggerCLI); run.Answered != 1 {
			t.Errorf("second pass = %+v", run)
		}
		if got := aiAnswers(t, b.st, []string{q1.ID, q2.ID, q3.ID}); got[q1.ID] != 1 || got[q2.ID] != 1 || got[q3.ID] != 1 {
			t.Errorf("AI answers = %v", got)
		}
	})
	t.Run("NotFoundReply", func(t *testing.T) {
		st := openSQLite(t)
		reply := "강의에서 다루지 않음: 강의에 없는 내용입니다."
		if err := st.CreateCollection(t.Context(), &rag.Collection{Name: "course", Settings: map[string]any{qa.NotFoundSetting: reply}}); err != nil {
			t.Fatal(err)
		}
		b := newBoard(t, st, nil, qa.Options{})
		q := ask(t, b, "Kubernetes operator reconciliation loop backoff")
		if _, err := b.svc.Pass(t.Context(), qa.TriggerCLI); err != nil {
			t.Fatal(err)
		}
		th, _ := b.svc.Get(t.Context(), nil, q.ID)
		if len(th.Answers) != 1 || !th.Answers[0].NotFound || th.Answers[0].Body != reply || len(th.Answers[0].SourceRefs) != 0 {
			t.Errorf("answer = %+v, want the collection's reply and no source", th.Answers)
		}
	})
	t.Run("MaxAttempts", func(t *testing.T) {
		fake := fakeapi.NewOpenAI("sk-test")
		t.Cleanup(fake.Close)
		gen, err := openai.NewGenerator(openai.GeneratorConfig{Config: provider.Config{APIKey: "sk-test", BaseURL: fake.BaseURL(), Model: "gpt-4.1-mini", Timeout: 5 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		b := newBoard(t, openSQLite(t), gen, qa.Options{MaxAttempts: 2, Tries: 2})
		q := ask(t, b, "학습 단계는 언제 끝나요?")
		fake.SetDown(true)
		for pass, want := range []rag.QuestionStatus{rag.QuestionOpen, rag.QuestionFailed} {
			run, err := b.svc.Pass(t.Context(), qa.TriggerCLI)
			if err != nil || run.Failed != 1 || len(run.Errors) != 1 {
				t.Fatalf("pass %d = %+v, %v", pass+1, run, err)
			}
			th, _ := b.svc.Get(t.Context(), nil, q.ID)
			if th.Status != want || th.Attempts != pass+1 || th.LastError == "" {
				t.Fatalf("after pass %d: %+v, want %s", pass+1, th.Question, want)
			}
		}
		fake.SetDown(false)
		if run, _ := b.svc.Pass(t.Context(), qa.TriggerCLI); run.Answered != 0 || run.Failed != 0 {
			t.Errorf("a failed question was taken again: %+v", run)
		}
	})
	t.Run("CrashedWorker", func(t *testing.T) {
		b := newBoard(t, openSQLite(t), nil, qa.Options{})
		ctx := t.Context()
		q := ask(t, b, "학습 단계는 언제 끝나요?")
		// A worker claimed the question and died: its lease has run out.
		if got, err := b.st.ClaimQuestions(ctx, rag.Claim{Worker: "dead", Limit: 1, Until: time.Now().Add(-time.Second)}); err != nil || len(got) != 1 {
			t.Fatalf("claim: %v, %v", got, err)
		}
		if run, _ := b.svc.Pass(ctx, qa.TriggerSchedule); run.Answered != 1 {
			t.Fatalf("pass after the crash = %+v", run)
		}
		// The dead worker comes back with its answer: refused.
		if err := b.st.AddAnswer(ctx, &rag.BoardAnswer{QuestionID: q.ID, IsAI: true, Body: "late"}); !errors.Is(err, rag.ErrConflict) {
			t.Errorf("late AI answer: %v, want ErrConflict", err)
		}
		if n := aiAnswers(t, b.st, []string{q.ID})[q.ID]; n != 1 {
			t.Errorf("%d AI answers", n)
		}
	})
	t.Run("Backfill", func(t *testing.T) {
		st := openSQLite(t)
		b := newBoard(t, st, nil, qa.Options{})
		c, _ := st.GetCollection(t.Context(), "course")
		old := &rag.Question{CollectionID: c.ID, Title: "예산은 얼마나 더 쓰일 수 있나요?"}
		if err := st.CreateQuestion(t.Context(), old); err != nil {
			t.Fatal(err)
		}
		n, err := b.svc.Backfill(t.Context(), 10)
		if err != nil || n != 1 {
			t.Fatalf("backfill = %d, %v", n, err)
		}
		if vs, _ := st.QuestionVectors(t.Context(), nil, c.ID, b.space); len(vs) != 1 {
			t.Errorf("%d embedded questions", len(vs))
		}
	})
}

// twoWorkers runs two boards (two workers) over one backlog at once, pass after pass, until it is empty,
// and checks that every question got exactly one AI answer.
func twoWorkers(t *testing.T, w1, w2 *board) {
	var ids []string
	for i := range 24 {
		ids = append(ids, ask(t, w1, fmt.Sprintf("학습 단계는 언제 끝나요? (%d)", i)).ID)
	}
	var wg sync.WaitGroup
	answered := make([]int, 2)
	for i, w := range []*board{w1, w2} {
		wg.Go(func() {
			for range 20 {
				run, err := w.svc.Pass(context.Background(), qa.TriggerSchedule)
				if err != nil {
					t.Error(err)
					return
				}
				answered[i] += run.Answered
				if run.Answered == 0 && run.Skipped == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	got := aiAnswers(t, w1.st, ids)
	for _, id := range ids {
		if got[id] != 1 {
			t.Errorf("question %s has %d AI answers", id, got[id])
		}
	}
	if answered[0]+answered[1] != len(ids) {
		t.Errorf("answered %v, want %d in all", answered, len(ids))
	}
	t.Logf("worker 1 answered %d, worker 2 %d", answered[0], answered[1])
}

func TestTwoWorkersSQLite(t *testing.T) {
	st := openSQLite(t)
	twoWorkers(t, newBoard(t, st, nil, qa.Options{Batch: 3, Worker: "w1"}), newBoard(t, st, nil, qa.Options{Batch: 3, Worker: "w2"}))
}

// TestTwoWorkersPostgres: two workers, each with its own pool, answer one backlog on PostgreSQL: no
// question gets two AI answers.
func TestTwoWorkersPostgres(t *testing.T) {
	schema := newSchema(t)
	st1 := openPostgres(t, schema)
	w1 := newBoard(t, st1, nil, qa.Options{Batch: 3, Worker: "w1"})
	w2 := newBoard(t, openPostgres(t, schema), nil, qa.Options{Batch: 3, Worker: "w2"})
	twoWorkers(t, w1, w2)
}

// BenchmarkPass is one answer pass over 100 open questions with the offline defaults (hash embedder,
// extractive generator) on the embedded store.
func BenchmarkPass(b *testing.B) {
	bd := newBoard(b, openSQLite(b), nil, qa.Options{Batch: 100})
	titles := []string{"학습 단계는 언제 끝나요?", "학습 제한은 어떻게 풀어요?", "일일 예산보다 더 쓰일 수 있나요?", "주 단위 예산 한도는?"}
	for b.Loop() {
		b.StopTimer()
		for i := range 100 {
			ask(b, bd, fmt.Sprintf("%s %d", titles[i%len(titles)], i))
		}
		b.StartTimer()
		run, err := bd.svc.Pass(context.Background(), qa.TriggerCLI)
		if err != nil || run.Answered != 100 {
			b.Fatalf("pass = %+v, %v", run, err)
		}
	}
}

// TestSimilarPassages: two questions that share no word but are about one lecture find each other through
// the documents their best passages come from, above questions about another lecture or about nothing the
// course covers; questions sharing words keep the embedding and keyword scores.
func TestSimilarPassages(t *testing.T) {
	st := openSQLite(t)
	b := newBoard(t, st, nil, qa.Options{})
	ctx := t.Context()
	// A second lecture, so that the course has two documents to tell apart.
	ingestAll(t, st, 300, ingest.Request{Collection: "course", Name: "2-2.md",
		Data: []byte("# 유사 타겟\n\n유사 타겟은 소스 타겟과 비슷한 사람들을 찾아요. 영어로는 룩어라이크라고 불러요. " +
			"1%가 소스와 가장 비슷한 사람들이고, 10%로 갈수록 범위가 넓어져요. 처음에는 1%로 시작하세요.\n")})
	exit := ask(t, b, "학습 단계는 보통 언제 끝나나요?")
	phase := ask(t, b, "러닝 페이즈 벗어나려면 최적화 이벤트 몇 번 필요함?")
	ask(t, b, "룩어라이크 크기 비율은 어느 정도로 설정하는 게 좋을까요?")
	ask(t, b, "유사 타겟 1%랑 10%는 뭐가 달라요?")
	ask(t, b, "틱톡 픽셀은 어디에 설치해요?")
	if len(phase.Passages) == 0 || phase.Passages[0].DocumentID == "" {
		t.Fatalf("question passages = %+v", phase.Passages)
	}
	sim, err := b.svc.SimilarTo(ctx, nil, phase.ID, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(sim) != 3 || sim[0].ID != exit.ID || sim[0].Keyword != 0 || sim[0].Passages <= sim[1].Passages {
		t.Fatalf("similar to %q = %+v; want %q first, by its passages alone", phase.Title, sim, exit.Title)
	}
	// The ask form while typing: the same signal for a text not yet posted.
	sim, err = b.svc.SimilarText(ctx, nil, "course", "룩어라이크 오디언스는 몇 퍼센트로 만들어요?", 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sim {
		if s.ID == exit.ID || s.ID == phase.ID || s.Passages == 0 {
			t.Errorf("similar while typing = %+v; want the two questions about the other lecture", sim)
		}
	}
}

// BenchmarkSimilar is one GET /api/questions/{id}/similar on a board of 300 questions (offline defaults,
// embedded store): the question's vector and passages are stored, so a call is one scan of the board.
func BenchmarkSimilar(b *testing.B) {
	bd := newBoard(b, openSQLite(b), nil, qa.Options{})
	titles := []string{"학습 단계는 언제 끝나요?", "학습 제한은 어떻게 풀어요?", "일일 예산보다 더 쓰일 수 있나요?", "주 단위 예산 한도는?"}
	var last *rag.Question
	for i := range 300 {
		last = ask(b, bd, fmt.Sprintf("%s %d", titles[i%len(titles)], i))
	}
	for b.Loop() {
		if sim, err := bd.svc.SimilarTo(context.Background(), nil, last.ID, 5); err != nil || len(sim) != 5 {
			b.Fatalf("similar = %v, %v", sim, err)
		}
	}
}

// TestAnswered: Options.Answered is told of every stored answer — the pass's and a person's — with its
// question as then stored, and not of a question the pass could not answer.
func TestAnswered(t *testing.T) {
	type call struct {
		question string
		status   rag.QuestionStatus
		ai       bool
	}
	var calls []call
	b := newBoard(t, openSQLite(t), nil, qa.Options{Answered: func(_ context.Context, q *rag.Question, a *rag.BoardAnswer) {
		calls = append(calls, call{q.ID, q.Status, a.IsAI})
	}})
	ctx := t.Context()
	q1 := ask(t, b, "학습 단계는 언제 끝나요?")
	if run, err := b.svc.Pass(ctx, qa.TriggerCLI); err != nil || run.Answered != 1 {
		t.Fatalf("pass = %+v, %v", run, err)
	}
	if _, err := b.svc.Answer(ctx, rag.Principal{ID: "user:mina"}, q1.ID, "보통 일주일쯤 걸려요."); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Answer(ctx, rag.Principal{ID: "user:mina"}, "no-such-question", "답"); err == nil {
		t.Fatal("an answer to an unknown question was stored")
	}
	want := []call{{q1.ID, rag.QuestionAnswered, true}, {q1.ID, rag.QuestionAnswered, false}}
	if !slices.Equal(calls, want) {
		t.Fatalf("Answered calls %v, want %v", calls, want)
	}
}
