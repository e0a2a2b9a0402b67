package answer_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/answer"
	"github.com/ragd/ragd/internal/rag"
)

// cappedSearcher returns its hits in order with at most MaxPerDocument of one document (when set), K at most.
type cappedSearcher struct{ docSearcher }

func (c *cappedSearcher) Search(ctx context.Context, p rag.Principal, req rag.SearchRequest) (*rag.SearchResult, error) {
	all, _ := c.docSearcher.Search(ctx, p, req)
	out := &rag.SearchResult{}
	per := map[string]int{}
	for _, h := range all.Hits {
		if req.MaxPerDocument > 0 && per[h.DocumentID] >= req.MaxPerDocument || req.K > 0 && len(out.Hits) == req.K {
			continue
		}
		per[h.DocumentID]++
		out.Hits = append(out.Hits, h)
	}
	return out, nil
}

// reserveQuoter is a quoting generator (answer.QuoteOnly) that records the reserve passages and cites the
// first of them.
type reserveQuoter struct {
	quoter
	reserve []rag.Passage
}

func (q *reserveQuoter) QuotesOnly() bool { return true }

func (q *reserveQuoter) Generate(_ context.Context, req rag.GenerateRequest, onDelta func(string) error) (*rag.Generation, error) {
	q.seen = append(q.seen, req.Passages)
	q.reserve = req.Reserve
	p := req.Passages[0]
	if len(req.Reserve) > 0 {
		p = req.Reserve[0]
	}
	text := p.Text + " [" + string(rune('0'+p.N)) + "]"
	return &rag.Generation{Text: text, Model: "quoter"}, nil
}

// TestAnswerReserve: a quoting generator is given, besides the passages, the best passage's document's
// passages that the per-document cap kept out (at most answer.MaxReserve, numbered after the passages),
// and a citation of one names it among the sources; a best document the cap did not hold back (one passage
// of it given) has none.
func TestAnswerReserve(t *testing.T) {
	s := &cappedSearcher{docSearcher{hits: []rag.Hit{
		hit(1, "wiki", "Mozilla promoted Brendan Eich to CEO.", false),
		hit(2, "wiki", "Eich was CEO.", false),
		hit(20, "register", "The CEO signed the rule.", false),
		hit(3, "wiki", "Eich stepped down on April 3, 2014.", false),
		hit(4, "wiki", "Mitchell Baker posted a statement.", false),
		hit(5, "wiki", "Firefox was named Phoenix.", false),
		hit(6, "wiki", "Thunderbird is a mail client.", false),
	}}}
	g := &reserveQuoter{}
	ans, err := answer.New(s, g, answer.Options{Passages: 3}).Ask(context.Background(), rag.LocalPrincipal,
		rag.AskRequest{Question: "When did Brendan Eich step down as CEO?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var given, held []int64
	for _, p := range g.seen[0] {
		given = append(given, p.ChunkID)
	}
	for _, p := range g.reserve {
		held = append(held, p.ChunkID)
	}
	if !slices.Equal(given, []int64{1, 2, 20}) || !slices.Equal(held, []int64{3, 4, 5}) || g.reserve[0].N != 4 {
		t.Fatalf("given %v, reserve %v (first numbered %d), want [1 2 20], [3 4 5] from 4", given, held, g.reserve[0].N)
	}
	if len(ans.Sources) != 1 || ans.Sources[0].ID != 3 {
		t.Errorf("sources %+v, want the reserve passage 3", ans.Sources)
	}

	s = &cappedSearcher{docSearcher{hits: []rag.Hit{
		hit(1, "lecture-2", "Targets come in three kinds.", false),
		hit(10, "lecture-1", "Most reviews end within 24 hours.", false),
		hit(20, "lecture-4", "Raise the budget by 20% every few days.", false),
		hit(2, "lecture-2", "Advantage+ widens the target.", false),
	}}}
	g = &reserveQuoter{}
	if _, err := answer.New(s, g, answer.Options{Passages: 3}).Ask(context.Background(), rag.LocalPrincipal,
		rag.AskRequest{Question: "How long does the review take?"}, nil); err != nil {
		t.Fatal(err)
	}
	if len(g.reserve) != 0 || len(s.requests) != 1 {
		t.Errorf("one passage of the best document given: reserve %+v, %d searches, want none and 1", g.reserve, len(s.requests))
	}
}

// TestAnswerReserveAtMost: with more of the best document's passages kept out than answer.MaxReserve, the
// reserve holds exactly the first MaxReserve of them, in their order.
func TestAnswerReserveAtMost(t *testing.T) {
	var hits []rag.Hit
	for i := int64(1); i <= 12; i++ {
		hits = append(hits, hit(i, "handbook", "The standing trustee files a report.", false))
	}
	s := &cappedSearcher{docSearcher{hits: hits}}
	g := &reserveQuoter{}
	if _, err := answer.New(s, g, answer.Options{Passages: 5}).Ask(context.Background(), rag.LocalPrincipal,
		rag.AskRequest{Question: "What does the standing trustee file?"}, nil); err != nil {
		t.Fatal(err)
	}
	var held, want []int64
	for _, p := range g.reserve {
		held = append(held, p.ChunkID)
	}
	for i := range int64(answer.MaxReserve) {
		want = append(want, 3+i) // passages 1 and 2 are given (the cap); 3… were kept out
	}
	if !slices.Equal(held, want) {
		t.Errorf("reserve %v, want the first %d kept out: %v", held, answer.MaxReserve, want)
	}
}
