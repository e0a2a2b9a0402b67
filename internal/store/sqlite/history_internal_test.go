package sqlite

import (
	"database/sql"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestDocumentEventsUpgrade: a database from before migration 0014 gets, for each document it holds, one
// event with its state as of its last change; changes after the upgrade are recorded as they happen.
func TestDocumentEventsUpgrade(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	coll, err := s.EnsureCollection(ctx, "c", "owner")
	if err != nil {
		t.Fatal(err)
	}
	d := &rag.Document{CollectionID: coll.ID, Owner: "owner", ExternalID: "a.txt", PendingHash: "h1"}
	if err := s.CreateDocument(ctx, d); err != nil {
		t.Fatal(err)
	}
	// Back to before 0014: no events, no triggers; then the document fails, unrecorded.
	if err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DROP TRIGGER document_events_insert; DROP TRIGGER document_events_update;
			DROP TABLE document_events; DELETE FROM schema_migrations WHERE version = 14;
			UPDATE documents SET status = 'failed', stage = 'extract', error_code = 'invalid_request', error = 'bad file',
				updated_at = 1700000000000000 WHERE id = '`+d.ID+`'`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.DocumentHistory(ctx, rag.LocalPrincipal, d.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || h[0].Status != rag.StatusFailed || h[0].Stage != rag.StageExtract || h[0].Version != 1 ||
		h[0].ErrorCode != rag.CodeInvalid || h[0].Error != "bad file" || h[0].At.UnixMicro() != 1700000000000000 {
		t.Fatalf("history after the upgrade: %+v", h)
	}
	if err := s.SetDocumentState(ctx, d.ID, rag.DocumentState{Status: rag.StatusQueued, Stage: rag.StageQueued}); err != nil {
		t.Fatal(err)
	}
	if h, err = s.DocumentHistory(ctx, rag.LocalPrincipal, d.ID, 10); err != nil || len(h) != 2 || h[1].Status != rag.StatusQueued {
		t.Fatalf("history after a change: %+v, %v", h, err)
	}
}
