package answer_test

import (
	"context"
	"testing"

	"github.com/ragd/ragd/internal/answer"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/slots"
)

// slotWatcher is a generator that notes, while it writes, how many of the gate's slots are held.
type slotWatcher struct {
	quoter
	gate    *slots.Gate
	quotes  bool
	running []int
}

func (w *slotWatcher) QuotesOnly() bool { return w.quotes }

func (w *slotWatcher) Generate(ctx context.Context, req rag.GenerateRequest, onDelta func(string) error) (*rag.Generation, error) {
	r, _ := w.gate.Counts()
	w.running = append(w.running, r)
	return w.quoter.Generate(ctx, req, onDelta)
}

// A hosted model (a generator that does more than quote) writes outside the request's slot, and the
// request holds it again afterwards; a quoting generator, whose work is this machine's, keeps it.
func TestGeneratorOutsideTheSlot(t *testing.T) {
	hits := []rag.Hit{hit(1, "a", "The pump runs on 220 volts.", true)}
	for _, tc := range []struct {
		quotes bool
		want   int // slots held while it writes
	}{{quotes: false, want: 0}, {quotes: true, want: 1}} {
		gate := slots.New(1)
		gen := &slotWatcher{quoter: quoter{word: "volts"}, gate: gate, quotes: tc.quotes}
		svc := answer.New(&docSearcher{hits: hits}, gen, answer.Options{})
		ctx, release, err := gate.Enter(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: "How many volts does the pump run on?"}, nil); err != nil {
			t.Fatal(err)
		}
		if len(gen.running) == 0 {
			t.Fatalf("quotes=%v: the generator was not called", tc.quotes)
		}
		for _, r := range gen.running {
			if r != tc.want {
				t.Fatalf("quotes=%v: %d slots held while the generator wrote, want %d", tc.quotes, r, tc.want)
			}
		}
		if r, _ := gate.Counts(); r != 1 {
			t.Fatalf("quotes=%v: after the answer the request holds %d slots, want 1", tc.quotes, r)
		}
		release()
	}
}
