package retrieve_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/retrieve"
)

// TestHyphenCompoundSpelling: a question writing "boundary-layer" is about the boundary layer however a
// passage spells it. The passage that writes it as two words and holds the question's other word is the
// better match; with the compound's whole form among the keyword terms (rare in the index, so heavy), the
// passage that happens to share the hyphen ranked first in the keyword list.
func TestHyphenCompoundSpelling(t *testing.T) {
	b := setup(t)
	b.add(t, "docs", "spaced.txt", "Separation of the boundary layer on a swept wing at low speed.", nil)
	b.add(t, "docs", "hyphen.txt", "A note on boundary-layer theory for pipes and channels.", nil)
	for i, topic := range []string{"the weather on the coast", "market prices of apples", "the train timetable", "a choir concert",
		"the library opening hours", "a chess tournament", "the school holidays", "a museum exhibition", "layer cakes",
		"the boundary of the park", "a cooking class", "the farmers market"} {
		b.add(t, "docs", fmt.Sprintf("note%d.txt", i), fmt.Sprintf("Note %d: a few words about %s this week.", i, topic), nil)
	}
	res, err := b.retriever(t, retrieve.Options{KeywordFeedback: -1}).Search(context.Background(), rag.LocalPrincipal,
		rag.SearchRequest{Query: "boundary-layer separation", K: 5})
	if err != nil {
		t.Fatal(err)
	}
	var spaced, hyphen rag.Hit
	for _, h := range res.Hits {
		switch h.Source {
		case "spaced.txt":
			spaced = h
		case "hyphen.txt":
			hyphen = h
		}
	}
	if spaced.KeywordRank != 1 || hyphen.KeywordRank <= spaced.KeywordRank {
		t.Errorf("keyword ranks: spaced.txt #%d (%.3f), hyphen.txt #%d (%.3f); want the two-word spelling with the other word first",
			spaced.KeywordRank, spaced.KeywordScore, hyphen.KeywordRank, hyphen.KeywordScore)
	}
}
