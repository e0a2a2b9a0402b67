package postgres

import (
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// TestReindexTerms: a schema whose keyword entries an older analyzer made (terms_version below
// textproc.TermsVersion) has every chunk's postings derived again when the store opens — the letter-spaced
// label `문 의 처` becomes findable as 문의처 — with the chunks' term counts, the corpus statistics and the
// terms' statistics in step, and records the current version.
func TestReindexTerms(t *testing.T) {
	url := testURL(t)
	schema := testSchema(t, url)
	s1 := openStore(t, Options{Schema: schema})
	ctx := t.Context()
	d := commitTexts(t, s1, "review_report.pdf", "review_report", "※ 참고자료\n문 의 처\n02)6788-5533", "위원회 구성현황")
	// What version 1 of the analyzer left: no joined label. "stale" stands for its terms.
	if _, err := s1.pool.Exec(ctx, s1.q(`DELETE FROM {S}.postings;
		INSERT INTO {S}.postings (term, chunk_id, tf, dl) SELECT 'stale', id, 1, 1 FROM {S}.chunks;
		UPDATE {S}.corpus_stats SET terms = terms - (SELECT sum(term_count) - 2 FROM {S}.chunks)
			WHERE slot = (SELECT slot FROM {S}.corpus_stats WHERE terms > 0 LIMIT 1);
		UPDATE {S}.chunks SET term_count = 1;
		UPDATE {S}.terms_version SET version = 1`)); err != nil {
		t.Fatal(err)
	}
	find := func(s *Store, q string) int {
		t.Helper()
		got, err := s.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms(q), K: 5})
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	if n := find(s1, "문의처"); n != 0 {
		t.Fatalf("the old index finds 문의처 in %d chunks", n)
	}
	s2 := openStore(t, Options{Schema: schema})
	if n := find(s2, "문의처"); n != 1 {
		t.Errorf("문의처 finds %d chunks after reopening, want 1 (re-indexed)", n)
	}
	if n := find(s2, "stale"); n != 0 {
		t.Errorf("the old terms still find %d chunks", n)
	}
	if n := find(s2, "구성현황"); n != 1 {
		t.Errorf("구성현황 finds %d chunks, want 1", n)
	}
	want := int64(len(textproc.IndexTerms(textproc.ContextText(d.Title, "", "※ 참고자료\n문 의 처\n02)6788-5533"))) +
		len(textproc.IndexTerms(textproc.ContextText(d.Title, "", "위원회 구성현황"))))
	var counts, corpus, staleDF int64
	var version int
	if err := s2.pool.QueryRow(ctx, s2.q(`SELECT (SELECT sum(term_count) FROM {S}.chunks), (SELECT sum(terms) FROM {S}.corpus_stats),
		(SELECT coalesce(sum(df), 0) FROM {S}.term_stats WHERE term = 'stale'), (SELECT version FROM {S}.terms_version)`)).
		Scan(&counts, &corpus, &staleDF, &version); err != nil {
		t.Fatal(err)
	}
	if counts != want || corpus != want || staleDF != 0 || version != textproc.TermsVersion {
		t.Errorf("term counts %d, corpus terms %d (want %d), stale df %d (want 0), version %d (want %d)",
			counts, corpus, want, staleDF, version, textproc.TermsVersion)
	}
}
