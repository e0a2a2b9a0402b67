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
