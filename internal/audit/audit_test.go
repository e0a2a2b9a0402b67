package audit_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/audit"
	"github.com/ragd/ragd/internal/store/sqlite"
)

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ragd.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestLog writes recorded events in the background, and when the buffer is full counts what it refuses and
// records that count once it writes again; nothing waits.
func TestLog(t *testing.T) {
	s := openStore(t)
	l := audit.New(s, audit.Options{Buffer: 3, Delay: time.Millisecond})
	// Not running yet: the buffer of 3 fills and 2 more are dropped.
	for i := range 5 {
		l.Record(audit.Event{Principal: "user:alice", Action: audit.Search, Outcome: audit.OK, Status: 200 + i})
	}
	if got := l.Dropped(); got != 2 {
		t.Fatalf("Dropped = %d, want 2", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go l.Run(ctx)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if es, err := s.ListAudit(context.Background(), audit.Query{Action: audit.Search}); err == nil && len(es) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the queued events were not written")
		}
	}
	l.Record(audit.Event{Principal: "user:bob", Action: audit.DocumentRead, Target: "d1", Outcome: audit.OK})
	cancel()
	l.Wait()
	events, err := s.ListAudit(context.Background(), audit.Query{})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, e := range events {
		counts[e.Action]++
		if e.At.IsZero() {
			t.Errorf("event without a time: %+v", e)
		}
		if e.Action == audit.Dropped && e.Status != 2 {
			t.Errorf("dropped event counts %d, want 2", e.Status)
		}
	}
	if counts[audit.Search] != 3 || counts[audit.DocumentRead] != 1 || counts[audit.Dropped] != 1 {
		t.Errorf("stored %v, want 3 searches, 1 read, 1 dropped report", counts)
	}
	// A nil Log and no default log record nothing, without failing.
	var none *audit.Log
	none.Record(audit.Event{Action: audit.Search})
	audit.Record(context.Background(), audit.Event{Action: audit.Search})
}
