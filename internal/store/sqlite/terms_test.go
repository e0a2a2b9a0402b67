package sqlite_test

import (
	"database/sql"
	"math"
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
	texts, vecs := []string{"※ 참고자료\n문 의 처\n02)6788-5533", "위원회 구성현황", "위원회 문의처 안내"},
		[][]float32{unit(0), unit(1), unit(2)}
	ingest(t, t.Context(), s1, "review_report.pdf", texts, vecs)
	// What version 1 of the analyzer left: no joined label. "stale" stands for its terms.
	path := s1.Path()
	closeWith(t, s1, `DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks);
		INSERT INTO chunks_fts (rowid, terms) SELECT id, 'stale' FROM chunks;
		UPDATE store_meta SET value = 1 WHERE key = 'terms_version'`)
	search := func(s *sqlite.Store, q string) []rag.Candidate {
		t.Helper()
		got, err := s.KeywordCandidates(t.Context(), rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms(q), K: 5})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	find := func(s *sqlite.Store, q string) int { return len(search(s, q)) }
	s2 := openAt(t, dir)
	if n := find(s2, "문의처"); n != 2 {
		t.Errorf("문의처 finds %d chunks after reopening, want 2 (re-indexed)", n)
	}
	if n := find(s2, "stale"); n != 0 {
		t.Errorf("the old terms still find %d chunks", n)
	}
	if n := find(s2, "구성현황"); n != 1 {
		t.Errorf("구성현황 finds %d chunks, want 1", n)
	}
	// BM25 reads the index's row count and token totals: the re-indexed database scores as a fresh one.
	fresh := openTemp(t)
	ingest(t, t.Context(), fresh, "review_report.pdf", texts, vecs)
	got, want := search(s2, "위원회 문의처"), search(fresh, "위원회 문의처")
	if len(got) != len(want) {
		t.Fatalf("re-indexed %+v, fresh %+v", got, want)
	}
	for i := range got {
		if math.Abs(got[i].Score-want[i].Score) > 1e-9 {
			t.Errorf("re-indexed scores %+v, fresh %+v", got, want)
			break
		}
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
