package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// questionStore returns the store's rag.QuestionStore; every store implements it.
func questionStore(t *testing.T, s rag.Store) rag.QuestionStore {
	t.Helper()
	qs, ok := s.(rag.QuestionStore)
	if !ok {
		t.Fatalf("%T does not implement rag.QuestionStore", s)
	}
	return qs
}

func newBoard(t *testing.T, open func(t *testing.T) rag.Store) (rag.QuestionStore, *rag.Collection) {
	t.Helper()
	s := open(t)
	c := &rag.Collection{Name: "lectures", Owner: alice.ID}
	if err := s.CreateCollection(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	return questionStore(t, s), c
}

func ask(t *testing.T, qs rag.QuestionStore, c *rag.Collection, title string) *rag.Question {
	t.Helper()
	q := &rag.Question{CollectionID: c.ID, Title: title, Author: alice.ID}
	if err := qs.CreateQuestion(t.Context(), q); err != nil {
		t.Fatalf("CreateQuestion: %v", err)
	}
	return q
}

func testQuestions(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("Viewer", func(t *testing.T) {
		// A board is read by whoever sees its collection whole (owner and visibility), inside the query: a
		// question of a board the viewer does not see is not found, its answers are none, the list leaves
		// it out. nil reads every board.
		s := open(t)
		ctx := t.Context()
		qs := questionStore(t, s)
		mine := &rag.Collection{Name: "mine", Owner: alice.ID}
		open := &rag.Collection{Name: "open", Owner: alice.ID, Visibility: rag.VisibilityPublic}
		for _, c := range []*rag.Collection{mine, open} {
			if err := s.CreateCollection(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		hidden, shown := ask(t, qs, mine, "hidden"), ask(t, qs, open, "shown")
		for _, q := range []*rag.Question{hidden, shown} {
			if err := qs.AddAnswer(ctx, &rag.BoardAnswer{QuestionID: q.ID, IsAI: true, Body: "answer to " + q.Title}); err != nil {
				t.Fatal(err)
			}
			if err := qs.SetQuestionVector(ctx, q.ID, spaceB, basis(spaceB.Dim, 0), nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			viewer *rag.Principal
			sees   []*rag.Question
		}{
			{nil, []*rag.Question{hidden, shown}}, {&admin, []*rag.Question{hidden, shown}},
			{&alice, []*rag.Question{hidden, shown}}, {&dave, []*rag.Question{shown}}, {&bob, []*rag.Question{shown}},
		} {
			name := "nil"
			if tc.viewer != nil {
				name = tc.viewer.ID
			}
			for _, q := range []*rag.Question{hidden, shown} {
				want := slices.Contains(tc.sees, q)
				got, err := qs.GetQuestion(ctx, tc.viewer, q.ID)
				if want && (err != nil || got.ID != q.ID) || !want && !errors.Is(err, rag.ErrNotFound) {
					t.Errorf("GetQuestion(%s, %s): %v, %v; want seen %v (else not found)", name, q.Title, got, err, want)
				}
				as, err := qs.ListAnswers(ctx, tc.viewer, q.ID)
				if err != nil || (len(as) == 1) != want || as == nil {
					t.Errorf("ListAnswers(%s, %s): %d answers, %v; want seen %v", name, q.Title, len(as), err, want)
				}
				vs, err := qs.QuestionVectors(ctx, tc.viewer, q.CollectionID, spaceB)
				if err != nil || (len(vs) == 1) != want {
					t.Errorf("QuestionVectors(%s, %s): %d questions, %v; want seen %v", name, q.Title, len(vs), err, want)
				}
			}
			list, err := qs.ListQuestions(ctx, rag.QuestionQuery{Viewer: tc.viewer})
			if err != nil || len(list) != len(tc.sees) {
				t.Errorf("ListQuestions(%s): %d questions, %v; want %d", name, len(list), err, len(tc.sees))
			}
		}
	})
	t.Run("OK", func(t *testing.T) {
		qs, c := newBoard(t, open)
		ctx := t.Context()
		q1 := ask(t, qs, c, "first")
		q2 := &rag.Question{CollectionID: c.ID, Title: "second", Body: "more words"}
		if err := qs.CreateQuestion(ctx, q2); err != nil {
			t.Fatal(err)
		}
		if q1.ID == "" || q1.Status != rag.QuestionOpen || q1.CreatedAt.IsZero() {
			t.Fatalf("created %+v", q1)
		}
		got, err := qs.GetQuestion(ctx, nil, q2.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Title != "second" || got.Body != "more words" || got.Author != "" || !got.CreatedAt.Equal(q2.CreatedAt) {
			t.Errorf("got %+v, want %+v", got, q2)
		}
		list, err := qs.ListQuestions(ctx, rag.QuestionQuery{CollectionID: c.ID})
		if err != nil || len(list) != 2 || list[0].ID != q2.ID {
			t.Fatalf("list = %v, %v; want newest first", list, err)
		}
		if list, _ := qs.ListQuestions(ctx, rag.QuestionQuery{Status: rag.QuestionAnswered}); len(list) != 0 {
			t.Errorf("answered = %d questions, want 0", len(list))
		}
		if list, _ := qs.ListQuestions(ctx, rag.QuestionQuery{Limit: 1}); len(list) != 1 {
			t.Errorf("limit 1 gave %d", len(list))
		}
		if err := qs.DeleteQuestion(ctx, q1.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := qs.GetQuestion(ctx, nil, q1.ID); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("deleted question: %v, want ErrNotFound", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		qs, _ := newBoard(t, open)
		ctx := t.Context()
		if err := qs.CreateQuestion(ctx, &rag.Question{CollectionID: "nope", Title: "x"}); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("unknown collection: %v", err)
		}
		if err := qs.DeleteQuestion(ctx, "nope"); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("delete unknown: %v", err)
		}
		if err := qs.AddAnswer(ctx, &rag.BoardAnswer{QuestionID: "nope", IsAI: true, Body: "x"}); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("answer to unknown question: %v", err)
		}
		if err := qs.SetQuestionVector(ctx, "nope", spaceB, []float32{1, 0, 0, 0}, nil); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("vector of unknown question: %v", err)
		}
	})
	t.Run("Vectors", func(t *testing.T) {
		qs, c := newBoard(t, open)
		ctx := t.Context()
		q1, q2 := ask(t, qs, c, "one"), ask(t, qs, c, "two")
		todo, err := qs.QuestionsWithoutVector(ctx, spaceB, 0)
		if err != nil || len(todo) != 2 || todo[0].ID != q1.ID {
			t.Fatalf("without vector = %v, %v", todo, err)
		}
		passages := []rag.QuestionPassage{{ChunkID: 7, DocumentID: "doc-b"}, {ChunkID: 3, DocumentID: "doc-a"}}
		if err := qs.SetQuestionVector(ctx, q1.ID, spaceB, []float32{1, 0, 0, 0}, passages); err != nil {
			t.Fatal(err)
		}
		if err := qs.SetQuestionVector(ctx, q2.ID, spaceB, []float32{1, 0}, nil); rag.ErrorCode(err) != rag.CodeInvalid {
			t.Errorf("short vector: %v, want invalid", err)
		}
		// At most MaxQuestionPassages passages: one more is refused and nothing changes.
		tooMany := make([]rag.QuestionPassage, rag.MaxQuestionPassages+1)
		if err := qs.SetQuestionVector(ctx, q2.ID, spaceB, []float32{0, 1, 0, 0}, tooMany); rag.ErrorCode(err) != rag.CodeInvalid {
			t.Errorf("%d passages: %v, want invalid", len(tooMany), err)
		}
		vs, err := qs.QuestionVectors(ctx, nil, c.ID, spaceB)
		if err != nil || len(vs) != 1 || vs[0].ID != q1.ID || len(vs[0].Vector) != 4 || vs[0].Vector[0] != 1 {
			t.Fatalf("vectors = %+v, %v", vs, err)
		}
		if !slices.Equal(vs[0].Passages, passages) {
			t.Errorf("passages = %+v, want %+v in that order", vs[0].Passages, passages)
		}
		// The most passages a question keeps, and none.
		full := make([]rag.QuestionPassage, rag.MaxQuestionPassages)
		for i := range full {
			full[i] = rag.QuestionPassage{ChunkID: int64(i + 1), DocumentID: fmt.Sprintf("doc-%d", i)}
		}
		if err := qs.SetQuestionVector(ctx, q2.ID, spaceB, []float32{0, 1, 0, 0}, full); err != nil {
			t.Fatal(err)
		}
		if err := qs.SetQuestionVector(ctx, q1.ID, spaceB, []float32{1, 0, 0, 0}, nil); err != nil {
			t.Fatal(err)
		}
		vs, _ = qs.QuestionVectors(ctx, nil, c.ID, spaceB)
		if len(vs) != 2 || len(vs[0].Passages) != 0 || !slices.Equal(vs[1].Passages, full) {
			t.Errorf("after a re-embed: %+v", vs)
		}
		if todo, _ := qs.QuestionsWithoutVector(ctx, spaceB, 10); len(todo) != 0 {
			t.Errorf("%d questions due in space B after both were embedded (no passages is an answer too)", len(todo))
		}
		if vs, _ := qs.QuestionVectors(ctx, nil, c.ID, spaceA); len(vs) != 0 {
			t.Errorf("space A has %d question vectors, want 0", len(vs))
		}
		// A change of space makes the question due again.
		if todo, _ := qs.QuestionsWithoutVector(ctx, spaceA, 10); len(todo) != 2 {
			t.Errorf("without a space-A vector: %d, want 2", len(todo))
		}
	})
	t.Run("Answers", func(t *testing.T) {
		qs, c := newBoard(t, open)
		ctx := t.Context()
		q := ask(t, qs, c, "why")
		bob := bob.ID
		human := &rag.BoardAnswer{QuestionID: q.ID, Author: &bob, Body: "because"}
		if err := qs.AddAnswer(ctx, human); err != nil {
			t.Fatal(err)
		}
		if got, _ := qs.GetQuestion(ctx, nil, q.ID); got.Status != rag.QuestionOpen {
			t.Errorf("a person's answer changed the status to %s", got.Status)
		}
		refs := []rag.SourceRef{{DocumentID: "d1", Title: "Lecture 1", Metadata: map[string]any{"week": "1주차"}, ChunkIndex: 3, Similarity: 0.5}}
		ai := &rag.BoardAnswer{QuestionID: q.ID, IsAI: true, Body: "answer [1]", SourceRefs: refs}
		if err := qs.AddAnswer(ctx, ai); err != nil {
			t.Fatal(err)
		}
		if err := qs.AddAnswer(ctx, &rag.BoardAnswer{QuestionID: q.ID, IsAI: true, Body: "again"}); !errors.Is(err, rag.ErrConflict) {
			t.Errorf("second AI answer: %v, want ErrConflict", err)
		}
		if err := qs.AddAnswer(ctx, &rag.BoardAnswer{QuestionID: q.ID, Body: "no author"}); rag.ErrorCode(err) != rag.CodeInvalid {
			t.Errorf("anonymous person's answer: %v, want invalid", err)
		}
		list, err := qs.ListAnswers(ctx, nil, q.ID)
		if err != nil || len(list) != 2 {
			t.Fatalf("answers = %v, %v", list, err)
		}
		if list[0].IsAI || list[0].Author == nil || *list[0].Author != bob || len(list[0].SourceRefs) != 0 {
			t.Errorf("person's answer = %+v", list[0])
		}
		got := list[1]
		if !got.IsAI || got.Author != nil || len(got.SourceRefs) != 1 || got.SourceRefs[0].ChunkIndex != 3 ||
			got.SourceRefs[0].Metadata["week"] != "1주차" || !got.CreatedAt.Equal(ai.CreatedAt) {
			t.Errorf("AI answer = %+v", got)
		}
		if got, _ := qs.GetQuestion(ctx, nil, q.ID); got.Status != rag.QuestionAnswered {
			t.Errorf("status after the AI answer = %s", got.Status)
		}
		if err := qs.DeleteQuestion(ctx, q.ID); err != nil {
			t.Fatal(err)
		}
		if list, _ := qs.ListAnswers(ctx, nil, q.ID); len(list) != 0 {
			t.Errorf("answers of a deleted question: %d", len(list))
		}
	})
	t.Run("Claims", func(t *testing.T) {
		qs, c := newBoard(t, open)
		ctx := t.Context()
		var ids []string
		for _, title := range []string{"a", "b", "c", "d", "e"} {
			ids = append(ids, ask(t, qs, c, title).ID)
		}
		until := time.Now().Add(time.Hour)
		w1, err := qs.ClaimQuestions(ctx, rag.Claim{Worker: "w1", Limit: 2, Until: until})
		if err != nil || len(w1) != 2 || w1[0].ID != ids[0] || w1[1].ID != ids[1] {
			t.Fatalf("w1 claimed %v, %v; want the two oldest", w1, err)
		}
		w2, err := qs.ClaimQuestions(ctx, rag.Claim{Worker: "w2", Limit: 10, Until: until})
		if err != nil || len(w2) != 3 || w2[0].ID != ids[2] {
			t.Fatalf("w2 claimed %v, %v; want the other three", w2, err)
		}
		if more, _ := qs.ClaimQuestions(ctx, rag.Claim{Worker: "w3", Limit: 10, Until: until}); len(more) != 0 {
			t.Errorf("claims overlap: w3 got %d", len(more))
		}
		// w1 answers one and fails the other; w2 releases one and its claims on the rest expire.
		if err := qs.AddAnswer(ctx, &rag.BoardAnswer{QuestionID: ids[0], IsAI: true, Body: "x"}); err != nil {
			t.Fatal(err)
		}
		f, err := qs.FailQuestion(ctx, ids[1], "w1", "model down", 2)
		if err != nil || f.Attempts != 1 || f.Status != rag.QuestionOpen || f.LastError != "model down" {
			t.Fatalf("first failure = %+v, %v", f, err)
		}
		if _, err := qs.FailQuestion(ctx, ids[1], "w1", "again", 2); !errors.Is(err, rag.ErrConflict) {
			t.Errorf("failing an unclaimed question: %v, want ErrConflict", err)
		}
		if err := qs.ReleaseQuestion(ctx, ids[2], "w2"); err != nil {
			t.Fatal(err)
		}
		got, err := qs.ClaimQuestions(ctx, rag.Claim{Worker: "w3", Limit: 10, Until: time.Now().Add(-time.Minute)})
		if err != nil || len(got) != 2 || got[0].ID != ids[1] || got[1].ID != ids[2] {
			t.Fatalf("after answer, failure and release: %v, %v; want b and c", got, err)
		}
		// w3's claims were already expired when made: w4 takes them over, and the failure of a question
		// whose claim another worker holds is refused.
		got, _ = qs.ClaimQuestions(ctx, rag.Claim{Worker: "w4", Limit: 1, Until: until})
		if len(got) != 1 || got[0].ID != ids[1] {
			t.Fatalf("expired claim not taken over: %v", got)
		}
		if _, err := qs.FailQuestion(ctx, ids[1], "w3", "late", 2); !errors.Is(err, rag.ErrConflict) {
			t.Errorf("stale worker's failure: %v, want ErrConflict", err)
		}
		f, err = qs.FailQuestion(ctx, ids[1], "w4", "still down", 2)
		if err != nil || f.Status != rag.QuestionFailed || f.Attempts != 2 {
			t.Fatalf("failure at max attempts = %+v, %v", f, err)
		}
		if _, err := qs.ClaimQuestions(ctx, rag.Claim{Limit: 1}); rag.ErrorCode(err) != rag.CodeInvalid {
			t.Errorf("claim without worker: %v", err)
		}
	})
	t.Run("ConcurrentClaims", func(t *testing.T) {
		qs, c := newBoard(t, open)
		ctx := t.Context()
		for range 20 {
			ask(t, qs, c, "q")
		}
		seen := map[string]string{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, w := range []string{"w1", "w2", "w3", "w4"} {
			wg.Go(func() {
				for {
					got, err := qs.ClaimQuestions(ctx, rag.Claim{Worker: w, Limit: 3, Until: time.Now().Add(time.Hour)})
					if err != nil {
						t.Error(err)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, q := range got {
						if prev, ok := seen[q.ID]; ok {
							t.Errorf("question %s claimed by %s and %s", q.ID, prev, w)
						}
						seen[q.ID] = w
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != 20 {
			t.Errorf("%d questions claimed, want 20", len(seen))
		}
	})
	t.Run("Runs", func(t *testing.T) {
		qs, _ := newBoard(t, open)
		ctx := t.Context()
		r1 := &rag.QARun{Trigger: "api", Worker: "w1"}
		if err := qs.CreateRun(ctx, r1); err != nil {
			t.Fatal(err)
		}
		got, err := qs.GetRun(ctx, r1.ID)
		if err != nil || got.FinishedAt != nil || got.Trigger != "api" || !got.StartedAt.Equal(r1.StartedAt) {
			t.Fatalf("started run = %+v, %v", got, err)
		}
		r1.Answered, r1.Failed, r1.Skipped, r1.Errors = 3, 1, 2, []string{"q1: model down"}
		if err := qs.FinishRun(ctx, r1); err != nil {
			t.Fatal(err)
		}
		got, _ = qs.GetRun(ctx, r1.ID)
		if got.FinishedAt == nil || !got.FinishedAt.Equal(*r1.FinishedAt) || got.Answered != 3 || got.Failed != 1 ||
			got.Skipped != 2 || len(got.Errors) != 1 || got.Errors[0] != "q1: model down" {
			t.Errorf("finished run = %+v", got)
		}
		r2 := &rag.QARun{Trigger: "schedule"}
		if err := qs.CreateRun(ctx, r2); err != nil {
			t.Fatal(err)
		}
		list, err := qs.ListRuns(ctx, 0)
		if err != nil || len(list) != 2 {
			t.Fatalf("runs = %v, %v", list, err)
		}
		if list, _ := qs.ListRuns(ctx, 1); len(list) != 1 {
			t.Errorf("limit 1 gave %d runs", len(list))
		}
		if _, err := qs.GetRun(ctx, "nope"); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("unknown run: %v", err)
		}
		if err := qs.FinishRun(ctx, &rag.QARun{ID: "nope"}); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("finish unknown run: %v", err)
		}
	})
}

// QuestionPassagesUpgrade checks a question embedded before the store kept passages: forget sets every
// question's passages to NULL, what the migration that added them leaves. The question is due for the
// backfill, its vector is still found (without passages), and embedding it again clears it.
func QuestionPassagesUpgrade(t *testing.T, s rag.Store, forget func(t *testing.T)) {
	qs, c := newBoard(t, func(*testing.T) rag.Store { return s })
	ctx := t.Context()
	q := ask(t, qs, c, "학습 단계는 언제 끝나요?")
	if err := qs.SetQuestionVector(ctx, q.ID, spaceB, []float32{1, 0, 0, 0}, nil); err != nil {
		t.Fatal(err)
	}
	forget(t)
	if todo, err := qs.QuestionsWithoutVector(ctx, spaceB, 10); err != nil || len(todo) != 1 || todo[0].ID != q.ID {
		t.Fatalf("due after the upgrade: %v, %v; want the question", todo, err)
	}
	if vs, err := qs.QuestionVectors(ctx, nil, c.ID, spaceB); err != nil || len(vs) != 1 || vs[0].Passages != nil {
		t.Fatalf("vectors after the upgrade: %+v, %v; want the question without passages", vs, err)
	}
	if err := qs.SetQuestionVector(ctx, q.ID, spaceB, []float32{1, 0, 0, 0}, []rag.QuestionPassage{{ChunkID: 1, DocumentID: "d"}}); err != nil {
		t.Fatal(err)
	}
	if todo, _ := qs.QuestionsWithoutVector(ctx, spaceB, 10); len(todo) != 0 {
		t.Errorf("still due after the backfill: %v", todo)
	}
}
