package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/textproc"
)

// reindexTerms derives the keyword entries of every chunk and document again when the database's were made
// by an older analyzer (terms_version below textproc.TermsVersion), a batch of documents per transaction,
// and then records the analyzer's version. An interrupted run starts over at the next open, and two
// processes opening the database at once both run it: each document's chunks are locked while their
// postings are replaced, and each pass writes what the current analyzer gives.
func (s *Store) reindexTerms(ctx context.Context) error {
	var version int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT version FROM {S}.terms_version`)).Scan(&version); err != nil {
		return interpretError(fmt.Errorf("read the keyword index's version: %w", err))
	}
	if version >= textproc.TermsVersion {
		return nil
	}
	last := ""
	for {
		var n int
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			rows, _ := tx.Query(ctx, s.q(`SELECT id FROM {S}.documents WHERE id > $1 AND version > 0 AND deleted_at IS NULL
				ORDER BY id LIMIT 50`), last)
			ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return fmt.Errorf("re-index keyword terms: %w", err)
			}
			n = len(ids)
			for _, id := range ids {
				if err := s.reindexChunkTerms(ctx, tx, id); err != nil {
					return err
				}
				if err := s.indexDocument(ctx, tx, id); err != nil {
					return err
				}
				last = id
			}
			if n > 0 {
				return nil
			}
			_, err = tx.Exec(ctx, s.q(`UPDATE {S}.terms_version SET version = GREATEST(version, $1)`), textproc.TermsVersion)
			return err
		})
		if err != nil {
			return interpretError(err)
		}
		if n == 0 {
			return nil
		}
	}
}

// reindexChunkTerms replaces the postings of the chunks of a document with the analyzer's terms of their
// text, section and the document's title, as CommitVersion makes them, and keeps the chunks' term counts and
// the corpus statistics in step.
func (s *Store) reindexChunkTerms(ctx context.Context, tx pgx.Tx, documentID string) error {
	rows, _ := tx.Query(ctx, s.q(`SELECT c.id, c.text, c.key_id, c.section, c.term_count, d.title FROM {S}.chunks c
		JOIN {S}.documents d ON d.id = c.document_id WHERE c.document_id = $1 ORDER BY c.idx FOR UPDATE OF c`), documentID)
	type chunkRow struct {
		id                          int64
		text, keyID, section, title string
		count                       int32
	}
	var chunks []chunkRow
	var c chunkRow
	_, err := pgx.ForEachRow(rows, []any{&c.id, &c.text, &c.keyID, &c.section, &c.count, &c.title}, func() error {
		chunks = append(chunks, c)
		return nil
	})
	if err != nil {
		return fmt.Errorf("re-index keyword terms: %w", err)
	}
	if len(chunks) == 0 {
		return nil
	}
	ids := make([]int64, len(chunks))
	counts := make([]int32, len(chunks))
	var postings []posting
	var delta int64
	for i, c := range chunks {
		text, err := s.opts.Keys.OpenText(c.text, c.keyID)
		if err != nil {
			return fmt.Errorf("re-index keyword terms: %w", err)
		}
		terms := textproc.IndexTerms(textproc.ContextText(c.title, c.section, text))
		ids[i], counts[i] = c.id, int32(len(terms))
		delta += int64(len(terms)) - int64(c.count)
		ps := chunkPostings(i, terms)
		for j := range ps {
			ps[j].chunkID, ps[j].dl = c.id, counts[i]
		}
		postings = append(postings, ps...)
	}
	if _, err := tx.Exec(ctx, s.q(`DELETE FROM {S}.postings WHERE chunk_id = ANY($1)`), ids); err != nil {
		return fmt.Errorf("re-index keyword terms: %w", err)
	}
	if err := s.insertPostings(ctx, tx, postings); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, s.q(`UPDATE {S}.chunks c SET term_count = u.n FROM unnest($1::bigint[], $2::int[]) AS u(id, n)
		WHERE c.id = u.id`), ids, counts); err != nil {
		return fmt.Errorf("re-index keyword terms: %w", err)
	}
	if _, err := tx.Exec(ctx, s.q(`UPDATE {S}.corpus_stats SET terms = terms + $2 WHERE slot = $1`),
		statsSlot(documentID), delta); err != nil {
		return fmt.Errorf("re-index keyword terms: update corpus stats: %w", err)
	}
	return nil
}
