package app_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/testkit"
)

// TestPurge deletes a document and moves the App's clock past RAGD_PURGE_AFTER (the clock seam): before
// the window the document can be restored, after it the purge leaves its ID in no table of the store and
// its text in no file of the data directory.
func TestPurge(t *testing.T) {
	ctx := context.Background()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	a := openApp(t, cfg)
	const secret = "The lighthouse keeper's ledger records forty-two unusual tides in the winter of 1911."
	ingestText := func(name, text string) *rag.Document {
		d, _, err := a.Ingest.Ingest(ctx, rag.LocalPrincipal, ingest.Request{Name: name, Data: []byte(text)})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	gone := ingestText("ledger.md", "# Ledger\n\n"+secret+"\n")
	kept := ingestText("kept.md", "# Harbour\n\nThe harbour master keeps a separate book of ships.\n")
	start := time.Now()
	a.Now = func() time.Time { return start }

	// Deleted, restored (re-indexed in place), deleted again.
	if _, err := a.Store.TrashDocument(ctx, rag.LocalPrincipal, gone.ID); err != nil {
		t.Fatal(err)
	}
	restored, err := a.Store.RestoreDocument(ctx, rag.LocalPrincipal, gone.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Ingest.Process(ctx, restored.ID); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, a, "lighthouse ledger tides"); !strings.Contains(hits, gone.ID) {
		t.Fatalf("restored document not found: %s", hits)
	}
	if _, err := a.Store.TrashDocument(ctx, rag.LocalPrincipal, gone.ID); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, a, "lighthouse ledger tides"); strings.Contains(hits, gone.ID) {
		t.Fatalf("deleted document still found: %s", hits)
	}

	// One second short of the window: nothing goes.
	a.Now = func() time.Time { return time.Now().Add(cfg.PurgeAfter - time.Minute) }
	if n, err := a.Purge(ctx); err != nil || n != 0 {
		t.Fatalf("Purge inside the window = %d, %v", n, err)
	}
	a.Now = func() time.Time { return time.Now().Add(cfg.PurgeAfter + time.Second) }
	if n, err := a.Purge(ctx); err != nil || n != 1 {
		t.Fatalf("Purge after the window = %d, %v", n, err)
	}
	wantNotFound := func(err error) {
		t.Helper()
		if !strings.Contains(fmt.Sprint(err), "not found") {
			t.Errorf("after the purge: %v, want not found", err)
		}
	}
	_, err = a.Store.RestoreDocument(ctx, rag.LocalPrincipal, gone.ID)
	wantNotFound(err)
	_, err = a.Store.GetBlob(ctx, gone.ContentHash)
	wantNotFound(err)
	if _, err := a.Store.GetDocument(ctx, rag.LocalPrincipal, kept.ID); err != nil {
		t.Errorf("the other document: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	// No table of the store mentions it, and no file of the data directory holds its text.
	db := filepath.Join(cfg.DataDir, "ragd.db")
	for table, n := range testkit.TableMentions(t, db, gone.ID) {
		t.Errorf("table %s: %d rows mention the purged document %s", table, n, gone.ID)
	}
	if n := testkit.TableMentions(t, db, kept.ID); n["documents"] != 1 {
		t.Errorf("the kept document is in %v", n)
	}
	// River's finished jobs (jobs.db) name documents by ID only, and River deletes them itself.
	for _, f := range testkit.FilesHolding(t, cfg.DataDir, []string{"jobs.db"}, secret, gone.ID, gone.ContentHash) {
		t.Errorf("%s still holds the purged document", f)
	}
}

// search returns the document IDs of a search as one string.
func search(t *testing.T, a *app.App, q string) string {
	t.Helper()
	res, err := a.Retriever.Search(context.Background(), rag.LocalPrincipal, rag.SearchRequest{Query: q, K: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.DocumentID)
	}
	return strings.Join(ids, " ")
}
