package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// The document-level keyword index (doc_postings, doc_lengths) holds the analyzer's terms of each
// document's naming fields (textproc.DocumentText). A document is (re)indexed in the transaction that
// commits its version or changes its title or metadata, and documents of a database older than the index
// are indexed when the store opens.

// indexDocument replaces the document-level index entries of a document.
func (s *Store) indexDocument(ctx context.Context, tx pgx.Tx, id string) error {
	var title, source string
	var metadata map[string]any
	var lead, leadKey *string
	err := tx.QueryRow(ctx, s.q(`SELECT title, source, metadata,
		(SELECT text FROM {S}.chunks WHERE document_id = d.id ORDER BY idx LIMIT 1),
		(SELECT key_id FROM {S}.chunks WHERE document_id = d.id ORDER BY idx LIMIT 1) FROM {S}.documents d WHERE id = $1`), id).
		Scan(&title, &source, &metadata, &lead, &leadKey)
	if err != nil {
		return fmt.Errorf("index document: %w", err)
	}
	l := ""
	if lead != nil && leadKey != nil {
		if l, err = s.opts.Keys.OpenText(*lead, *leadKey); err != nil {
			return fmt.Errorf("index document: %w", err)
		}
	}
	terms := textproc.IndexTerms(textproc.DocumentText(title, source, metadata, l))
	tf := map[string]int32{}
	for _, t := range terms {
		tf[t]++
	}
	names := make([]string, 0, len(tf))
	counts := make([]int32, 0, len(tf))
	for t, n := range tf {
		names = append(names, t)
		counts = append(counts, n)
	}
	if _, err := tx.Exec(ctx, s.q(`DELETE FROM {S}.doc_postings WHERE document_id = $1`), id); err != nil {
		return fmt.Errorf("index document: %w", err)
	}
	if _, err := tx.Exec(ctx, s.q(`INSERT INTO {S}.doc_postings (term, document_id, tf)
		SELECT u.term, $1, u.tf FROM unnest($2::text[], $3::int[]) AS u(term, tf)`), id, names, counts); err != nil {
		return fmt.Errorf("index document: %w", err)
	}
	if _, err := tx.Exec(ctx, s.q(`INSERT INTO {S}.doc_lengths (document_id, dl) VALUES ($1, $2)
		ON CONFLICT (document_id) DO UPDATE SET dl = excluded.dl`), id, len(terms)); err != nil {
		return fmt.Errorf("index document: %w", err)
	}
	return nil
}

// indexMissingDocuments indexes the documents with a committed version that the document-level index lacks
// (those of a database created before it), a batch per transaction.
func (s *Store) indexMissingDocuments(ctx context.Context) error {
	for {
		var n int
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			rows, _ := tx.Query(ctx, s.q(`SELECT id FROM {S}.documents d WHERE version > 0 AND deleted_at IS NULL
				AND NOT EXISTS (SELECT 1 FROM {S}.doc_lengths l WHERE l.document_id = d.id) LIMIT 200`))
			ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return fmt.Errorf("index documents: %w", err)
			}
			n = len(ids)
			for _, id := range ids {
				if err := s.indexDocument(ctx, tx, id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return interpretError(err)
		}
		if n == 0 {
			return nil
		}
	}
}

// DocumentCandidates returns up to q.K visible documents matching q.Filter whose naming fields contain any
// of q.Terms, by BM25 over the document-level index (k1 1.2, b 0.75, the IDF with FTS5's floor, as the
// SQLite store), best first.
func (s *Store) DocumentCandidates(ctx context.Context, p rag.Principal, q rag.KeywordQuery) ([]rag.DocumentCandidate, error) {
	if q.K <= 0 {
		return nil, nil
	}
	_, a, conds, err := termQuery(p, q)
	if err != nil || len(a) == 0 {
		return nil, err
	}
	sql := fmt.Sprintf(`WITH st AS (SELECT n, avgdl FROM {S}.doc_length_stats()),
		idf AS (
			SELECT f.term, GREATEST(ln((st.n - f.df + 0.5) / (f.df + 0.5)), 1e-6) * %[2]g::float8 AS w
			FROM {S}.doc_term_df(%[1]s::text[]) f, st)
		SELECT p.document_id, min(d.chunk_count), sum(idf.w * p.tf / (p.tf + %[3]g::float8 * (1 - %[4]g::float8 + %[4]g::float8 * l.dl / st.avgdl))) AS score
		FROM {S}.doc_postings p JOIN idf ON idf.term = p.term JOIN {S}.doc_lengths l ON l.document_id = p.document_id
			JOIN {S}.documents d ON d.id = p.document_id CROSS JOIN st
		WHERE p.term = ANY(%[1]s::text[]) AND %[5]s
		GROUP BY p.document_id ORDER BY score DESC, p.document_id LIMIT %[6]d`,
		"$1", bm25K1+1, bm25K1, bm25B, where(conds), q.K)
	var out []rag.DocumentCandidate
	err = s.read(ctx, p, func(db querier) error {
		rows, err := db.Query(ctx, s.q(sql), a...)
		if err != nil {
			return fmt.Errorf("document candidates: %w", err)
		}
		var c rag.DocumentCandidate
		_, err = pgx.ForEachRow(rows, []any{&c.DocumentID, &c.Chunks, &c.Score}, func() error {
			c.Rank = len(out) + 1
			out = append(out, c)
			return nil
		})
		if err != nil {
			return fmt.Errorf("document candidates: %w", err)
		}
		return nil
	})
	return out, err
}
