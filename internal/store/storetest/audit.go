package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/audit"
	"github.com/ragd/ragd/internal/rag"
)

// testAudit checks the audit log: events come back newest first with every field, filters and paging
// select inside the query, and the retention prunes by time.
func testAudit(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("AppendListPrune", func(t *testing.T) {
		s, ok := open(t).(audit.Store)
		if !ok {
			t.Fatal("the store keeps no audit log")
		}
		ctx := t.Context()
		t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		events := []audit.Event{
			{At: t0, Principal: "user:alice", Action: audit.Search, Documents: []string{"d1", "d2"}, Client: "10.0.0.1", Outcome: audit.OK, Status: 200, Detail: "POST /api/search"},
			{At: t0.Add(time.Hour), Principal: "user:bob", Action: audit.DocumentRead, Target: "d2", Documents: []string{"d2"}, Client: "10.0.0.2", Outcome: audit.Denied, Status: 403},
			{At: t0.Add(2 * time.Hour), Principal: "user:alice", Action: audit.DocumentDelete, Target: "d1", Documents: []string{"d1"}, Outcome: audit.OK, Status: 204},
		}
		if err := s.AppendAudit(ctx, events[:1]); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendAudit(ctx, events[1:]); err != nil {
			t.Fatal(err)
		}
		list := func(q audit.Query) []audit.Event {
			t.Helper()
			out, err := s.ListAudit(ctx, q)
			if err != nil {
				t.Fatalf("ListAudit(%+v): %v", q, err)
			}
			return out
		}
		actions := func(es []audit.Event) []string {
			var out []string
			for _, e := range es {
				out = append(out, e.Action)
			}
			return out
		}
		all := list(audit.Query{})
		if got := actions(all); !slices.Equal(got, []string{audit.DocumentDelete, audit.DocumentRead, audit.Search}) {
			t.Fatalf("all events = %v, want newest first", got)
		}
		first := all[2]
		if first.ID == 0 || !first.At.Equal(t0) || first.Principal != "user:alice" || !slices.Equal(first.Documents, []string{"d1", "d2"}) ||
			first.Client != "10.0.0.1" || first.Outcome != audit.OK || first.Status != 200 || first.Detail != "POST /api/search" {
			t.Errorf("stored event = %+v", first)
		}
		if all[0].ID <= all[1].ID || all[1].ID <= all[2].ID {
			t.Errorf("IDs not increasing in order of appending: %d %d %d", all[2].ID, all[1].ID, all[0].ID)
		}
		for name, c := range map[string]struct {
			q    audit.Query
			want []string
		}{
			"Principal": {audit.Query{Principal: "user:alice"}, []string{audit.DocumentDelete, audit.Search}},
			"Action":    {audit.Query{Action: audit.DocumentRead}, []string{audit.DocumentRead}},
			"Outcome":   {audit.Query{Outcome: audit.Denied}, []string{audit.DocumentRead}},
			"Document":  {audit.Query{Document: "d2"}, []string{audit.DocumentRead, audit.Search}},
			"Target":    {audit.Query{Target: "d1"}, []string{audit.DocumentDelete}},
			"Since":     {audit.Query{Since: t0.Add(time.Hour)}, []string{audit.DocumentDelete, audit.DocumentRead}},
			"Until":     {audit.Query{Until: t0.Add(time.Hour)}, []string{audit.Search}},
			"Page1":     {audit.Query{Limit: 2}, []string{audit.DocumentDelete, audit.DocumentRead}},
			"Page2":     {audit.Query{Limit: 2, BeforeID: all[1].ID}, []string{audit.Search}},
			"None":      {audit.Query{Principal: "user:nobody"}, nil},
		} {
			if got := actions(list(c.q)); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", name, got, c.want)
			}
		}
		n, err := s.PruneAudit(ctx, t0.Add(90*time.Minute))
		if err != nil || n != 2 {
			t.Fatalf("PruneAudit = %d, %v; want 2", n, err)
		}
		if got := actions(list(audit.Query{})); !slices.Equal(got, []string{audit.DocumentDelete}) {
			t.Errorf("after the retention: %v", got)
		}
	})
}
