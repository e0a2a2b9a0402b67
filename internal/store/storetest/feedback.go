package storetest

import (
	"errors"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// feedbackStore returns the store's rag.FeedbackStore; every store implements it.
func feedbackStore(t *testing.T, s rag.Store) rag.FeedbackStore {
	t.Helper()
	fs, ok := s.(rag.FeedbackStore)
	if !ok {
		t.Fatalf("%T does not implement rag.FeedbackStore", s)
	}
	return fs
}

func ratedPassage(doc, text string, page int) rag.FeedbackPassage {
	return rag.FeedbackPassage{ChunkID: 7, DocumentID: doc, File: "docs/" + doc + ".pdf", Title: doc, PageStart: page,
		PageEnd: page, Hash: rag.PassageHash(text), Text: text}
}

func testFeedback(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("PutListReplace", func(t *testing.T) {
		fs := feedbackStore(t, open(t))
		ctx := t.Context()
		p1, p2 := ratedPassage("d1", "the deposit is returned in 30 days", 3), ratedPassage("d2", "rent is due monthly", 1)
		ans := &rag.Feedback{Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: 1, Question: "when is the deposit returned?", Answer: "In 30 days [1].", Collection: "lease"}, Principal: alice.ID, Passages: []rag.FeedbackPassage{p1, p2}}
		if err := fs.PutFeedback(ctx, ans); err != nil {
			t.Fatalf("PutFeedback: %v", err)
		}
		if ans.ID == "" || ans.CreatedAt.IsZero() || !ans.CreatedAt.Equal(ans.UpdatedAt) {
			t.Fatalf("stored %+v", ans)
		}
		src := &rag.Feedback{Vote: rag.Vote{Target: rag.FeedbackSource, Rating: -1, Comment: "wrong document", Question: ans.Question}, Principal: alice.ID, Passages: []rag.FeedbackPassage{p2}}
		if err := fs.PutFeedback(ctx, src); err != nil {
			t.Fatal(err)
		}
		// Rating the same source again replaces the rating: same record, new rating and comment.
		again := &rag.Feedback{Vote: rag.Vote{Target: rag.FeedbackSource, Rating: 1, Comment: "ok after all", Question: ans.Question}, Principal: alice.ID, Passages: []rag.FeedbackPassage{p2}}
		if err := fs.PutFeedback(ctx, again); err != nil {
			t.Fatal(err)
		}
		if again.ID != src.ID || !again.CreatedAt.Equal(src.CreatedAt) {
			t.Errorf("re-rating made a new record: %s (created %v), first %s (created %v)", again.ID, again.CreatedAt, src.ID, src.CreatedAt)
		}
		// Another principal's rating of the same source is its own record.
		other := &rag.Feedback{Vote: rag.Vote{Target: rag.FeedbackSource, Rating: -1, Question: ans.Question}, Principal: bob.ID, Passages: []rag.FeedbackPassage{p2}}
		if err := fs.PutFeedback(ctx, other); err != nil {
			t.Fatal(err)
		}
		if other.ID == src.ID {
			t.Fatal("bob's rating replaced alice's")
		}
		all, err := fs.ListFeedback(ctx, rag.FeedbackQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 3 {
			t.Fatalf("listed %d records, want 3", len(all))
		}
		if all[0].ID != other.ID {
			t.Errorf("newest first: got %s first, want bob's %s", all[0].ID, other.ID)
		}
		mine, err := fs.ListFeedback(ctx, rag.FeedbackQuery{Principal: alice.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(mine) != 2 {
			t.Fatalf("alice has %d records, want 2", len(mine))
		}
		var gotAns, gotSrc *rag.Feedback
		for _, f := range mine {
			switch f.Target {
			case rag.FeedbackAnswer:
				gotAns = f
			case rag.FeedbackSource:
				gotSrc = f
			}
		}
		if gotAns == nil || gotSrc == nil {
			t.Fatalf("alice's records: %+v", mine)
		}
		if gotAns.Answer != ans.Answer || gotAns.Collection != "lease" || gotAns.Rating != 1 || len(gotAns.Passages) != 2 ||
			gotAns.Passages[0] != p1 || gotAns.Passages[1] != p2 || !gotAns.CreatedAt.Equal(ans.CreatedAt) {
			t.Errorf("answer rating read back as %+v, stored %+v", gotAns, ans)
		}
		if gotSrc.Rating != 1 || gotSrc.Comment != "ok after all" || len(gotSrc.Passages) != 1 || gotSrc.Passages[0] != p2 ||
			!gotSrc.UpdatedAt.Equal(again.UpdatedAt) {
			t.Errorf("source rating read back as %+v", gotSrc)
		}
		for _, q := range []struct {
			q    rag.FeedbackQuery
			want int
		}{
			{rag.FeedbackQuery{Target: rag.FeedbackSource}, 2},
			{rag.FeedbackQuery{Rating: -1}, 1},
			{rag.FeedbackQuery{Principal: alice.ID, Rating: -1}, 0},
			{rag.FeedbackQuery{Limit: 1}, 1},
			{rag.FeedbackQuery{Principal: dave.ID}, 0},
		} {
			got, err := fs.ListFeedback(ctx, q.q)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != q.want || got == nil {
				t.Errorf("ListFeedback(%+v) = %d records, want %d (and never nil)", q.q, len(got), q.want)
			}
		}
	})
	t.Run("Delete", func(t *testing.T) {
		fs := feedbackStore(t, open(t))
		ctx := t.Context()
		f := &rag.Feedback{Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: -1, Question: "q"}, Principal: alice.ID}
		if err := fs.PutFeedback(ctx, f); err != nil {
			t.Fatal(err)
		}
		if err := fs.DeleteFeedback(ctx, bob.ID, f.ID); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("bob deleting alice's rating: %v, want ErrNotFound", err)
		}
		if err := fs.DeleteFeedback(ctx, alice.ID, f.ID); err != nil {
			t.Fatal(err)
		}
		if err := fs.DeleteFeedback(ctx, alice.ID, f.ID); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("second delete: %v, want ErrNotFound", err)
		}
		if got, _ := fs.ListFeedback(ctx, rag.FeedbackQuery{}); len(got) != 0 {
			t.Errorf("%d records left", len(got))
		}
	})
	t.Run("Tallies", func(t *testing.T) {
		fs := feedbackStore(t, open(t))
		ctx := t.Context()
		a, b, c := ratedPassage("d1", "alpha", 1), ratedPassage("d1", "beta", 2), ratedPassage("d2", "gamma", 1)
		rate := func(who string, target rag.FeedbackTarget, rating int, ps ...rag.FeedbackPassage) {
			t.Helper()
			if err := fs.PutFeedback(ctx, &rag.Feedback{Vote: rag.Vote{Target: target, Rating: rating, Question: "q"}, Principal: who, Passages: ps}); err != nil {
				t.Fatal(err)
			}
		}
		rate(alice.ID, rag.FeedbackSource, -1, a)
		rate(bob.ID, rag.FeedbackSource, -1, a)
		rate(carol.ID, rag.FeedbackSource, 1, a)
		rate(alice.ID, rag.FeedbackSource, 1, b)
		rate(alice.ID, rag.FeedbackSource, 1, c)
		rate(alice.ID, rag.FeedbackAnswer, -1, a, b, c) // answers' ratings are not tallied
		got, err := fs.FeedbackTallies(ctx, []string{"d1", "nope"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]rag.FeedbackTally{
			a.Hash: {DocumentID: "d1", Hash: a.Hash, Up: 1, Down: 2},
			b.Hash: {DocumentID: "d1", Hash: b.Hash, Up: 1, Down: 0},
		}
		if len(got) != len(want) {
			t.Fatalf("tallies %+v, want %+v", got, want)
		}
		for _, g := range got {
			if want[g.Hash] != g {
				t.Errorf("tally %+v, want %+v", g, want[g.Hash])
			}
		}
		if got, err := fs.FeedbackTallies(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("tallies of no documents: %v, %v", got, err)
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		fs := feedbackStore(t, open(t))
		p := ratedPassage("d1", "alpha", 1)
		for name, f := range map[string]*rag.Feedback{
			"no principal":   {Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: 1, Question: "q"}},
			"no question":    {Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: 1, Question: "  "}, Principal: alice.ID},
			"rating 0":       {Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: 0, Question: "q"}, Principal: alice.ID},
			"rating 2":       {Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: 2, Question: "q"}, Principal: alice.ID},
			"source, none":   {Vote: rag.Vote{Target: rag.FeedbackSource, Rating: 1, Question: "q"}, Principal: alice.ID},
			"source, two":    {Vote: rag.Vote{Target: rag.FeedbackSource, Rating: 1, Question: "q"}, Principal: alice.ID, Passages: []rag.FeedbackPassage{p, p}},
			"unknown target": {Vote: rag.Vote{Target: "page", Rating: 1, Question: "q"}, Principal: alice.ID},
		} {
			if err := fs.PutFeedback(t.Context(), f); !isCode(err, rag.CodeInvalid) {
				t.Errorf("%s: %v, want %s", name, err, rag.CodeInvalid)
			}
		}
		if got, _ := fs.ListFeedback(t.Context(), rag.FeedbackQuery{}); len(got) != 0 {
			t.Errorf("invalid ratings stored: %d", len(got))
		}
	})
}
