package answer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/hostile"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// A chunk that crosses a page (short paragraphs at the foot of page 2, the next at the top of page 3) is
// cited with the pages of the sentences the answer quotes, not every page of the chunk.
func TestAskCitesPageOfSentence(t *testing.T) {
	t.Parallel()
	a := open(t, func(*config.Config) {})
	ctx := context.Background()
	pages := [][]string{
		{"Annual report 2024"}, // a title page: a chunk of its own
		{"The harbour of Kestrel Bay opened in 1901 for the herring fleet.", "Its stone pier was built by local masons."},
		{"The old lighthouse keeper retired in 1987 after forty years of service.", "An automatic lamp replaced him that winter."},
	}
	var streams []*strings.Reader
	for _, p := range pages {
		var c strings.Builder
		c.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
		for _, s := range p {
			fmt.Fprintf(&c, "(%s) Tj T*\n", s)
		}
		c.WriteString("ET")
		streams = append(streams, strings.NewReader(c.String()))
	}
	pdf := hostile.PDF(streams[0], streams[1], streams[2])
	if err := a.Store.CreateCollection(ctx, &rag.Collection{Name: "bay"}); err != nil {
		t.Fatal(err)
	}
	doc, _, err := a.Ingest.Ingest(ctx, rag.LocalPrincipal, ingest.Request{Collection: "bay", Name: "bay.pdf", Data: pdf})
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := a.Store.ListChunks(ctx, rag.LocalPrincipal, doc.ID)
	if err != nil || len(chunks) != 2 || chunks[1].PageStart != 2 || chunks[1].PageEnd != 3 {
		t.Fatalf("want the title page, then one chunk over pages 2–3: %+v %v", chunks, err)
	}
	onePage := 0
	for _, q := range []string{"When did the old lighthouse keeper retire?", "When did the harbour of Kestrel Bay open?"} {
		ans, err := a.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: q, Filter: rag.Filter{Collections: []string{"bay"}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(ans.Sources) != 1 {
			t.Fatalf("%q: sources %+v (answer %q)", q, ans.Sources, ans.Text)
		}
		// The pages of the sentences the answer quotes.
		first, last := 0, 0
		for p, ss := range pages {
			for _, s := range ss {
				if strings.Contains(ans.Text, strings.TrimSuffix(s, ".")) {
					if first == 0 {
						first = p + 1
					}
					last = p + 1
				}
			}
		}
		if first == 0 {
			t.Fatalf("%q: the answer quotes no sentence: %q", q, ans.Text)
		}
		if first == last {
			onePage++
		}
		if s := ans.Sources[0]; s.PageStart != first || s.PageEnd != last {
			t.Errorf("%q: source pages %d–%d, want %d–%d (answer %q)", q, s.PageStart, s.PageEnd, first, last, ans.Text)
		}
	}
	if onePage == 0 {
		t.Error("no answer quoted sentences of one page only: the test shows nothing")
	}
}
