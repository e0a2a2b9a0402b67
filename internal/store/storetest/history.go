package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// testHistory checks a document's status history (DocumentHistory): every change of status or stage, each
// committed version, a failure with its error and the trash are recorded in order with the store's time;
// progress alone is not; only who may read the document reads it; limit keeps the latest.
func testHistory(t *testing.T, open func(t *testing.T) rag.Store) {
	// events renders a history as "status/stage/vN[/code: error]" lines.
	events := func(h []*rag.DocumentEvent) string {
		var out []string
		for _, e := range h {
			s := fmt.Sprintf("%s/%s/v%d", e.Status, e.Stage, e.Version)
			if e.ErrorCode != "" || e.Error != "" {
				s += fmt.Sprintf("/%s: %s", e.ErrorCode, e.Error)
			}
			out = append(out, s)
		}
		return strings.Join(out, "\n")
	}
	history := func(t *testing.T, s rag.Store, p rag.Principal, id string, limit int) []*rag.DocumentEvent {
		t.Helper()
		h, err := s.DocumentHistory(t.Context(), p, id, limit)
		if err != nil {
			t.Fatalf("DocumentHistory: %v", err)
		}
		return h
	}
	state := func(t *testing.T, s rag.Store, id string, st rag.DocumentState) {
		t.Helper()
		tick()
		if err := s.SetDocumentState(t.Context(), id, st); err != nil {
			t.Fatalf("SetDocumentState(%+v): %v", st, err)
		}
	}

	t.Run("DocumentHistory/OK", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "guide.md", func(d *rag.Document) { d.Readers, d.PendingHash = []string{bob.ID}, hashOf("[install it]") })
		state(t, s, d.ID, rag.DocumentState{Status: rag.StatusProcessing, Stage: rag.StageExtract, Progress: 0.1})
		state(t, s, d.ID, rag.DocumentState{Status: rag.StatusProcessing, Stage: rag.StageExtract, Progress: 0.3}) // progress only
		state(t, s, d.ID, rag.DocumentState{Status: rag.StatusProcessing, Stage: rag.StageEmbed, Progress: 0.6})
		tick()
		commitTexts(t, s, d, spaceA, []string{"install it"}, nil)
		// A second version that fails.
		v2 := hashOf("guide v2")
		state(t, s, d.ID, rag.DocumentState{Status: rag.StatusReady, Stage: rag.StageQueued, PendingHash: &v2})
		state(t, s, d.ID, rag.DocumentState{Status: rag.StatusReady, Stage: rag.StageExtract, Progress: 0.1})
		state(t, s, d.ID, rag.DocumentState{Status: rag.StatusFailed, Stage: rag.StageExtract, ErrorCode: rag.CodeUnsupportedMediaType,
			Error: "not a PDF"})

		h := history(t, s, bob, d.ID, 100)
		want := strings.Join([]string{
			"queued/queued/v1",
			"processing/extract/v1",
			"processing/embed/v1",
			"ready/done/v1",
			"ready/queued/v2",
			"ready/extract/v2",
			"failed/extract/v2/" + string(rag.CodeUnsupportedMediaType) + ": not a PDF",
		}, "\n")
		if got := events(h); got != want {
			t.Fatalf("history:\n%s\nwant:\n%s", got, want)
		}
		if !h[0].At.Equal(d.CreatedAt) {
			t.Errorf("first event at %v, want the document's creation %v", h[0].At, d.CreatedAt)
		}
		for i := 1; i < len(h); i++ {
			if !h[i].At.After(h[i-1].At) {
				t.Errorf("event %d at %v, not after event %d at %v", i, h[i].At, i-1, h[i-1].At)
			}
		}
		if now := getDoc(t, s, d.ID); !h[len(h)-1].At.Equal(now.UpdatedAt) {
			t.Errorf("last event at %v, want the document's last change %v", h[len(h)-1].At, now.UpdatedAt)
		}
		// limit keeps the latest, still oldest first.
		if got := events(history(t, s, alice, d.ID, 2)); got != "ready/extract/v2\nfailed/extract/v2/"+string(rag.CodeUnsupportedMediaType)+": not a PDF" {
			t.Errorf("last two events:\n%s", got)
		}
		if got := len(history(t, s, alice, d.ID, 0)); got != 1 {
			t.Errorf("limit 0 gives %d events, want 1 (the least)", got)
		}
		wantNotFound(t, "DocumentHistory of a stranger", errOf(s.DocumentHistory(t.Context(), dave, d.ID, 10)))
		wantNotFound(t, "DocumentHistory of no document", errOf(s.DocumentHistory(t.Context(), admin, "no-such-document", 10)))
	})

	t.Run("DocumentHistory/Trash", func(t *testing.T) {
		s := open(t)
		c := mustCollection(t, s, "docs")
		d := newDoc(t, s, c.ID, "notes.txt", func(d *rag.Document) { d.PendingHash = hashOf("[some notes]") })
		tick()
		commitTexts(t, s, d, spaceA, []string{"some notes"}, nil)
		tick()
		if _, err := s.TrashDocument(t.Context(), alice, d.ID); err != nil {
			t.Fatal(err)
		}
		wantNotFound(t, "DocumentHistory of a deleted document", errOf(s.DocumentHistory(t.Context(), alice, d.ID, 10)))
		tick()
		if _, err := s.RestoreDocument(t.Context(), alice, d.ID); err != nil {
			t.Fatal(err)
		}
		h := history(t, s, alice, d.ID, 10)
		got := events(h)
		if !strings.HasPrefix(got, "queued/queued/v1\nready/done/v1\ndeleted/done/v1\nrestored/queued/") {
			t.Fatalf("history:\n%s", got)
		}
		if len(h) != 4 {
			t.Errorf("%d events, want 4:\n%s", len(h), got)
		}
	})
}
