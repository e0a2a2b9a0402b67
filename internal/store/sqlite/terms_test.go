package sqlite_test

import (
	"database/sql"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/textproc"
)

// TestReindexTerms: a database whose keyword entries an older analyzer made (terms_version below
// textproc.TermsVersion) has every chunk's terms derived again when the store opens — the letter-spaced
// label `문 의 처` becomes findable as 문의처 — and records the current version, so the next open leaves the
// index alone.
func TestReindexTerms(t *testing.T) {
	dir := t.TempDir()
	s1, err := sqlite.Open(t.Context(), dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ingest(t, t.Context(), s1, "review_report.pdf", []string{"※ 참고자료\n문 의 처\n02)6788-5533", "위원회 구성현황"},
		[][]float32{unit(0), unit(1)})
	// What version 1 of the analyzer left: no joined label. "stale" stands for its terms.
	path := s1.Path()
	closeWith(t, s1, `DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks);
		INSERT INTO chunks_fts (rowid, terms) SELECT id, 'stale' FROM chunks;
		UPDATE store_meta SET value = 1 WHERE key = 'terms_version'`)
	find := func(s *sqlite.Store, q string) int {
		t.Helper()
		got, err := s.KeywordCandidates(t.Context(), rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms(q), K: 5})
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	s2 := openAt(t, dir)
	if n := find(s2, "문의처"); n != 1 {
		t.Errorf("문의처 finds %d chunks after reopening, want 1 (re-indexed)", n)
	}
	if n := find(s2, "stale"); n != 0 {
		t.Errorf("the old terms still find %d chunks", n)
	}
	if n := find(s2, "구성현황"); n != 1 {
		t.Errorf("구성현황 finds %d chunks, want 1", n)
	}
	s2.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow(`SELECT value FROM store_meta WHERE key = 'terms_version'`).Scan(&v); err != nil || v != textproc.TermsVersion {
		t.Errorf("terms_version = %d (%v), want %d", v, err, textproc.TermsVersion)
	}
}
