package postgres

import (
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// TestDocumentEventsUpgrade: a database from before migration 0013 gets, for each document it holds, one
// event with its state as of its last change; changes after the upgrade are recorded as they happen.
func TestDocumentEventsUpgrade(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, Options{})
	coll, err := s.EnsureCollection(ctx, "c", "owner")
	if err != nil {
		t.Fatal(err)
	}
	d := &rag.Document{CollectionID: coll.ID, Owner: "owner", ExternalID: "a.txt", PendingHash: "h1"}
	if err := s.CreateDocument(ctx, d); err != nil {
		t.Fatal(err)
	}
	// Back to before 0013: no events, no trigger; then the document fails, unrecorded.
	at := time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC)
	if _, err := s.pool.Exec(ctx, s.q(`DROP TRIGGER document_events_change ON {S}.documents;
		DROP FUNCTION {S}.record_document_event(); DROP TABLE {S}.document_events;
		DELETE FROM {S}.schema_migrations WHERE version = 13`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, s.q(`UPDATE {S}.documents SET status = 'failed', stage = 'extract',
		error_code = 'invalid_request', error = 'bad file', updated_at = $2 WHERE id = $1`), d.ID, at); err != nil {
		t.Fatal(err)
	}
	schema := s.opts.Schema
	s.Close()
	s = openStore(t, Options{Schema: schema})
	h, err := s.DocumentHistory(ctx, rag.LocalPrincipal, d.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || h[0].Status != rag.StatusFailed || h[0].Stage != rag.StageExtract || h[0].Version != 1 ||
		h[0].ErrorCode != rag.CodeInvalid || h[0].Error != "bad file" || !h[0].At.Equal(at) {
		t.Fatalf("history after the upgrade: %+v", h)
	}
	if err := s.SetDocumentState(ctx, d.ID, rag.DocumentState{Status: rag.StatusQueued, Stage: rag.StageQueued}); err != nil {
		t.Fatal(err)
	}
	if h, err = s.DocumentHistory(ctx, rag.LocalPrincipal, d.ID, 10); err != nil || len(h) != 2 || h[1].Status != rag.StatusQueued {
		t.Fatalf("history after a change: %+v, %v", h, err)
	}
}
