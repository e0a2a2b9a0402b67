package sqlite_test

import (
	"database/sql"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/textproc"
)

// TestDocumentIndexBackfill: documents of a database whose document-level index is empty (one made before
// migration 0004, which adds it empty) are indexed when the store opens.
func TestDocumentIndexBackfill(t *testing.T) {
	dir := t.TempDir()
	s1, err := sqlite.Open(t.Context(), dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := ingest(t, t.Context(), s1, "lighthouse_keeping.txt", []string{"a keeper's log"}, [][]float32{unit(0)})
	closeWith(t, s1, `DELETE FROM doc_postings; DELETE FROM doc_lengths`)
	s2 := openAt(t, dir)
	got, err := s2.DocumentCandidates(t.Context(), rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms("lighthouse"), K: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].DocumentID != d.ID || got[0].Chunks != 1 {
		t.Fatalf("after reopening: %+v, want the document re-indexed", got)
	}
}

// closeWith closes s and runs stmts on its database file, to leave it as an older ragd would have.
func closeWith(t *testing.T, s *sqlite.Store, stmts string) {
	t.Helper()
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmts); err != nil {
		t.Fatal(err)
	}
}

// TestDocumentTotals: the totals the document-level query reads (migration 0027's triggers) stay equal to
// doc_lengths' own count and sum through ingestion, a new version, a title change, and a deletion that
// cascades from documents.
func TestDocumentTotals(t *testing.T) {
	s := openAt(t, t.TempDir())
	check := func(when string, wantRows int64) {
		t.Helper()
		rows, sum, countedRows, countedSum := sqlite.DocTotals(t, s)
		if rows != countedRows || sum != countedSum || rows != wantRows {
			t.Fatalf("%s: totals %d rows / %d terms, doc_lengths %d / %d, want %d rows", when, rows, sum, countedRows, countedSum, wantRows)
		}
	}
	check("empty", 0)
	a := ingest(t, t.Context(), s, "lighthouse_keeping.txt", []string{"a keeper's log of the lamp and the weather"}, [][]float32{unit(0)})
	ingest(t, t.Context(), s, "tide_tables.txt", []string{"high water and low water"}, [][]float32{unit(1)})
	check("two documents", 2)
	ingest(t, t.Context(), s, "lighthouse_keeping.txt", []string{"a new version: the keeper's log, the lamp, the fog signal and the supply boat"}, [][]float32{unit(2)})
	check("a new version", 2)
	title := "The lighthouse keeper's complete daily log"
	if _, err := s.UpdateDocument(t.Context(), rag.LocalPrincipal, a.ID, rag.DocumentUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	check("a new title", 2)
	if err := s.DeleteDocument(t.Context(), rag.LocalPrincipal, a.ID); err != nil {
		t.Fatal(err)
	}
	check("a deletion", 1)
	got, err := s.DocumentCandidates(t.Context(), rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms("water"), K: 5})
	if err != nil || len(got) != 1 || got[0].Score <= 0 {
		t.Fatalf("DocumentCandidates after the deletion: %+v, %v; want the tide tables scored", got, err)
	}
}
