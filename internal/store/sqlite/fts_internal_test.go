package sqlite

import (
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// ftsTokens returns the distinct tokens the keyword index holds.
func ftsTokens(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	err := s.write(t.Context(), func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(t.Context(), `CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, chunks_fts, 'row')`); err != nil {
			return err
		}
		rows, err := tx.QueryContext(t.Context(), `SELECT term FROM temp.vocab ORDER BY term`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var term string
			if err := rows.Scan(&term); err != nil {
				return err
			}
			out = append(out, term)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFTSTokenizerKeepsTermsWhole: every analyzer term is exactly one FTS5 token, including spec-like
// terms with joiners, whatever the analyzer produces.
func TestFTSTokenizerKeepsTermsWhole(t *testing.T) {
	s, err := Open(t.Context(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t.Run("RawTerms", func(t *testing.T) {
		terms := []string{"25-180-12", "0.7m3", "1000만원", "c++", "c#", "a/b", "snake_case", "50%", "v1.2.3", "d80"}
		err := s.write(t.Context(), func(tx *sql.Tx) error {
			_, err := tx.ExecContext(t.Context(), `INSERT INTO chunks_fts (rowid, terms) VALUES (1000000, ?)`, strings.Join(terms, " "))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got := ftsTokens(t, s)
		want := slices.Clone(terms)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("tokens = %q, want %q", got, want)
		}
		for _, term := range terms {
			kc, err := s.KeywordCandidates(t.Context(), rag.LocalPrincipal, rag.KeywordQuery{Terms: []string{term}, K: 5})
			_ = kc // the chunk row does not exist, so the join finds nothing; the MATCH must still parse
			if err != nil {
				t.Errorf("%q: %v", term, err)
			}
		}
		if err := s.write(t.Context(), func(tx *sql.Tx) error {
			_, err := tx.ExecContext(t.Context(), `DELETE FROM chunks_fts WHERE rowid = 1000000`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got := ftsTokens(t, s); len(got) != 0 {
			t.Fatalf("tokens after delete: %q", got)
		}
	})
	t.Run("AnalyzerTerms", func(t *testing.T) {
		text := "부품 25-180-12, 용량 0.7m³, 예산 1000만원; written in C++ and C#. 탄소중립 기본계획 D80 50% v1.2.3"
		c, _ := s.EnsureCollection(t.Context(), "default", "local")
		d := &rag.Document{CollectionID: c.ID, Owner: "local"}
		if err := s.CreateDocument(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		sp := rag.Space{Provider: "t", Model: "m", Dim: 2}
		if _, err := s.CommitVersion(t.Context(), &rag.VersionCommit{DocumentID: d.ID, Space: sp,
			Chunks: []rag.Chunk{{Text: text, Vector: []float32{1, 0}}}}); err != nil {
			t.Fatal(err)
		}
		want := textproc.IndexTerms(text)
		slices.Sort(want)
		want = slices.Compact(want)
		if got := ftsTokens(t, s); !slices.Equal(got, want) {
			t.Fatalf("tokens = %q\nanalyzer terms = %q", got, want)
		}
		for _, term := range want {
			kc, err := s.KeywordCandidates(t.Context(), rag.LocalPrincipal, rag.KeywordQuery{Terms: []string{term}, K: 5})
			if err != nil || len(kc) != 1 {
				t.Errorf("term %q: %v, %v", term, kc, err)
			}
		}
	})
}
