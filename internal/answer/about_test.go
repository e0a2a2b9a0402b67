package answer_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/answer"
	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
)

// docSearcher returns the hits of the documents a request's filter names, or, without one, every hit.
type docSearcher struct {
	hits     []rag.Hit
	requests []rag.SearchRequest
}

func (d *docSearcher) Search(_ context.Context, _ rag.Principal, req rag.SearchRequest) (*rag.SearchResult, error) {
	d.requests = append(d.requests, req)
	out := &rag.SearchResult{}
	for _, h := range d.hits {
		if len(req.Filter.DocumentIDs) == 0 || slices.Contains(req.Filter.DocumentIDs, h.DocumentID) {
			out.Hits = append(out.Hits, h)
		}
	}
	return out, nil
}

// quoter answers with the first passage holding word, or the not-covered reply.
type quoter struct {
	word string
	seen [][]rag.Passage
}

func (q *quoter) Name() string { return "quoter" }

func (q *quoter) Generate(_ context.Context, req rag.GenerateRequest, onDelta func(string) error) (*rag.Generation, error) {
	q.seen = append(q.seen, req.Passages)
	text := generate.NotCovered(req.NotCovered, req.Language)
	for _, p := range req.Passages {
		if strings.Contains(p.Text, q.word) {
			text = p.Text + " [" + string(rune('0'+p.N)) + "]"
			break
		}
	}
	if onDelta != nil {
		if err := onDelta(text); err != nil {
			return nil, err
		}
	}
	return &rag.Generation{Text: text, Model: "quoter"}, nil
}

func hit(id int64, doc, text string, opening bool) rag.Hit {
	h := rag.Hit{Chunk: rag.Chunk{ID: id, DocumentID: doc, Text: text}, Title: doc}
	h.Opening = opening
	return h
}

// TestRefocusOnNamedDocument: a question about a document as a whole (retrieval marks the document's
// title page as its opening passage) is answered from that document's passages alone, though another
// document's passages rank above the title page; when those passages do not answer, the passages the first
// search found do, and only their sources are streamed.
func TestRefocusOnNamedDocument(t *testing.T) {
	hits := []rag.Hit{
		hit(1, "minutes", "43. 고용보험법 일부개정법률안(이주환 의원 대표발의)", false),
		hit(2, "minutes", "46. 공인노무사법 일부개정법률안(이수진 의원 대표발의)", false),
		hit(10, "bill", "탄소중립기본법 일부개정법률안\n(이수진의원 대표발의)", true),
		hit(11, "bill", "제1조(시행일) 이 법은 공포 후 6개월이 경과한 날부터 시행한다.", false),
	}
	ctx := context.Background()
	for _, tc := range []struct {
		word, wantDoc string
		generations   int
	}{
		{"대표발의", "bill", 1},     // the bill's passages answer: the minutes' list is never shown
		{"고용보험법", "minutes", 2}, // they do not: the first search's passages answer
	} {
		s := &docSearcher{hits: hits}
		g := &quoter{word: tc.word}
		var events []rag.AnswerEvent
		ans, err := answer.New(s, g, answer.Options{}).Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: "이 법률안은 누가 대표발의했나요?"},
			func(e rag.AnswerEvent) error { events = append(events, e); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if len(g.seen) != tc.generations {
			t.Fatalf("%s: %d generations, want %d", tc.word, len(g.seen), tc.generations)
		}
		for _, p := range g.seen[0] {
			if !strings.Contains(p.Text, "시행") && !strings.Contains(p.Text, "탄소중립") {
				t.Errorf("%s: the first generation was given %q, not a passage of the bill", tc.word, p.Text)
			}
		}
		if len(s.requests) != 2 || !slices.Equal(s.requests[1].Filter.DocumentIDs, []string{"bill"}) {
			t.Errorf("%s: searches %+v, want a second one inside the bill", tc.word, s.requests)
		}
		if len(ans.Sources) != 1 || ans.Sources[0].DocumentID != tc.wantDoc {
			t.Errorf("%s: sources %+v, want one of %s", tc.word, ans.Sources, tc.wantDoc)
		}
		var sources []int
		for _, e := range events {
			if e.Type == rag.AnswerSources {
				sources = append(sources, len(e.Sources))
			}
		}
		if len(sources) != 1 {
			t.Errorf("%s: %d sources events streamed, want 1", tc.word, len(sources))
		}
	}
	// Without an opening passage among the hits nothing is searched again.
	for i := range hits {
		hits[i].Opening = false
	}
	s := &docSearcher{hits: hits}
	if _, err := answer.New(s, &quoter{word: "대표발의"}, answer.Options{}).Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: "누가 대표발의했나요?"}, nil); err != nil {
		t.Fatal(err)
	}
	if len(s.requests) != 1 {
		t.Errorf("%d searches without an opening passage, want 1", len(s.requests))
	}
}
