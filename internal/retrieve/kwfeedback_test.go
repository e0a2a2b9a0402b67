package retrieve_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/retrieve"
)

// feedbackCorpus: two passages about repairing a glider's wing, one about repairing its tail boom that
// shares their vocabulary (carbon laminate, epoxy resin, spar, cure) but holds only "repair" of the
// question's words, short passages about repairing other things that hold "repair" as well, and
// unrelated notes (so that "repair" is a rare word with some weight).
var feedbackCorpus = []struct{ name, text string }{
	{"wing1.txt", "Glider wing repair: sand the damaged carbon laminate, bond a new laminate patch to the spar with epoxy resin and let the resin cure overnight."},
	{"wing2.txt", "A glider wing repair starts at the spar: remove the broken carbon laminate, lay up fresh laminate in epoxy resin, cure it warm."},
	{"boom.txt", "Tail boom repair: carbon laminate, epoxy resin, spar cure."},
	{"car.txt", "Car repair at the garage: brakes and tyres."},
	{"bike.txt", "Bicycle repair: chains, spokes and gears."},
	{"roof.txt", "Roof repair after the storm: tiles and gutters."},
	{"phone.txt", "Phone repair: screens and batteries while you wait."},
	{"shoe.txt", "Shoe repair: heels and soles on Saturdays."},
	{"watch.txt", "Watch repair: straps and batteries at the kiosk."},
}

func feedbackBundle(t *testing.T) *bundle {
	t.Helper()
	b := setup(t)
	for _, d := range feedbackCorpus {
		b.add(t, "docs", d.name, d.text, nil)
	}
	for i, topic := range []string{"the weather on the coast", "market prices of apples", "the train timetable", "a choir concert",
		"the library opening hours", "a chess tournament", "the school holidays", "a museum exhibition", "the city marathon",
		"bird watching at the lake", "a cooking class", "the farmers market", "a jazz festival", "the swimming pool",
		"a film club evening", "the harbour ferry", "a garden show", "the night sky", "a pottery course", "the town hall"} {
		b.add(t, "docs", fmt.Sprintf("note%d.txt", i), fmt.Sprintf("Note %d: a few words about %s this week.", i, topic), nil)
	}
	return b
}

func sources(res *rag.SearchResult) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Source)
	}
	return out
}

// TestKeywordFeedback: the words of the best keyword matches expand the query of a third list, which ranks
// the tail boom's repair — one word of the question, the best matches' vocabulary — right after the wing
// repairs and ahead of the passages that hold only "repair", though the keyword list ranks it last of all
// (its words are longer); that lifts it into the top 7, where without feedback it is not.
func TestKeywordFeedback(t *testing.T) {
	b := feedbackBundle(t)
	q := rag.SearchRequest{Query: "glider wing repair", K: 7}
	search := func(opt retrieve.Options, q rag.SearchRequest) *rag.SearchResult {
		t.Helper()
		res, err := b.retriever(t, opt).Search(context.Background(), rag.LocalPrincipal, q)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	on := search(retrieve.Options{}, q) // on by default for the hash embedder
	if got := sources(on); !slices.Contains(got, "boom.txt") {
		t.Errorf("with feedback: %v, want boom.txt in the top 7", got)
	}
	var boom rag.Hit
	for _, h := range on.Hits {
		if h.Source == "boom.txt" {
			boom = h
		}
	}
	if boom.FeedbackRank != 3 || boom.FeedbackScore <= 0 {
		t.Errorf("boom.txt: feedback rank %d score %g, want 3rd after the two wing repairs", boom.FeedbackRank, boom.FeedbackScore)
	}
	for _, h := range on.Hits {
		if h.Source != "boom.txt" && !strings.HasPrefix(h.Source, "wing") && (h.FeedbackRank <= boom.FeedbackRank || h.KeywordRank >= boom.KeywordRank) {
			t.Errorf("%s: keyword #%d feedback #%d; boom.txt keyword #%d feedback #%d: want it below boom.txt in the feedback list only",
				h.Source, h.KeywordRank, h.FeedbackRank, boom.KeywordRank, boom.FeedbackRank)
		}
	}
	off := search(retrieve.Options{KeywordFeedback: -1}, q)
	if got := sources(off); len(got) != 7 || slices.Contains(got, "boom.txt") {
		t.Errorf("without feedback: %v; want 7 hits without boom.txt, or the test shows nothing", got)
	}
	for _, h := range off.Hits {
		if h.FeedbackRank != 0 || h.FeedbackScore != 0 {
			t.Errorf("feedback off: hit %s has feedback rank %d, score %g", h.Source, h.FeedbackRank, h.FeedbackScore)
		}
	}

	t.Run("ForAnswer", func(t *testing.T) {
		// An answer's passages are ranked by the question's words alone: as with feedback off.
		aq := q
		aq.ForAnswer = true
		got := search(retrieve.Options{}, aq)
		if len(got.Hits) != len(off.Hits) {
			t.Fatalf("for an answer: %v, feedback off: %v", sources(got), sources(off))
		}
		for i, h := range got.Hits {
			o := off.Hits[i]
			if h.ID != o.ID || math.Abs(h.FusedScore-o.FusedScore) > 1e-12 || h.FeedbackRank != 0 {
				t.Errorf("hit %d for an answer: %s fused %.9f feedback #%d; feedback off: %s fused %.9f", i, h.Source, h.FusedScore, h.FeedbackRank, o.Source, o.FusedScore)
			}
		}
	})
}

// TestKeywordFeedbackOptions: the defaults per embedder and the bounds of the feedback settings.
func TestKeywordFeedbackOptions(t *testing.T) {
	hashOpt := retrieve.Options{}.WithDefaultsFor(rag.Space{Provider: "hash", Model: "v1", Dim: 768})
	if hashOpt.KeywordFeedback != 10 || hashOpt.KeywordFeedbackTerms != 20 || hashOpt.KeywordFeedbackQuery != 0.5 || hashOpt.KeywordFeedbackShare != 0.2 {
		t.Errorf("hash defaults = %+v", hashOpt)
	}
	neural := retrieve.Options{}.WithDefaultsFor(rag.Space{Provider: "openai", Model: "text-embedding-3-small", Dim: 768})
	if neural.KeywordFeedback != 0 {
		t.Errorf("neural default keyword feedback = %d, want off", neural.KeywordFeedback)
	}
	if off := (retrieve.Options{KeywordFeedback: -1}).WithDefaultsFor(rag.Space{Provider: "hash"}); off.KeywordFeedback != -1 {
		t.Errorf("explicit off replaced: %d", off.KeywordFeedback)
	}
	b := setup(t)
	for _, tc := range []struct {
		opt retrieve.Options
		ok  bool
	}{
		{retrieve.Options{KeywordFeedbackShare: 1, KeywordFeedbackQuery: 1, KeywordFeedbackTerms: 1}, true},
		{retrieve.Options{KeywordFeedbackShare: 1.01}, false},
		{retrieve.Options{KeywordFeedbackShare: -0.1}, false},
		{retrieve.Options{KeywordFeedbackQuery: 1.01}, false},
		{retrieve.Options{KeywordFeedbackQuery: -0.5}, false},
		{retrieve.Options{KeywordFeedbackTerms: -1}, false},
		// Off: the other settings are not used, so not checked.
		{retrieve.Options{KeywordFeedback: -1, KeywordFeedbackShare: 2}, true},
	} {
		_, err := retrieve.New(b.store, b.emb, tc.opt)
		if (err == nil) != tc.ok {
			t.Errorf("New(%+v): err = %v, want ok %v", tc.opt, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "keyword feedback") {
			t.Errorf("New(%+v): %v, want it to name keyword feedback", tc.opt, err)
		}
	}
}
