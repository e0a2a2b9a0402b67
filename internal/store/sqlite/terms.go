package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/ragd/ragd/internal/textproc"
)

// reindexTerms derives the keyword entries of every chunk and document again when the database's were made
// by an older analyzer (store_meta terms_version below textproc.TermsVersion), and records the analyzer's
// version, in one transaction: the keyword index is emptied with FTS5's delete-all, which also resets the
// row count and token totals BM25 reads (deleting and inserting each row again would count every chunk
// twice), so a re-indexed database ranks as one indexed afresh, and no reader sees it half done. An
// interrupted run leaves the old entries and starts over at the next open.
func (s *Store) reindexTerms(ctx context.Context) error {
	var version int
	if err := s.w.QueryRowContext(ctx, `SELECT value FROM store_meta WHERE key = 'terms_version'`).Scan(&version); err != nil {
		return dbError(err, "read the keyword index's version")
	}
	if version >= textproc.TermsVersion {
		return nil
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')`); err != nil {
			return err
		}
		// Every chunk's entry, since delete-all removed them all; the document-level index of every live
		// document.
		for _, q := range []struct {
			query string
			index func(seq int64) error
		}{
			{`SELECT DISTINCT doc_seq FROM chunks WHERE doc_seq > ? ORDER BY doc_seq LIMIT 200`,
				func(seq int64) error { return s.reindexChunkTerms(ctx, tx, seq) }},
			{`SELECT seq FROM documents WHERE seq > ? AND version > 0 AND deleted_at IS NULL ORDER BY seq LIMIT 200`,
				func(seq int64) error { return indexDocument(ctx, tx, s.opts.Keys, seq) }},
		} {
			for last := int64(0); ; {
				seqs, err := querySeqs(ctx, tx, q.query, last)
				if err != nil {
					return err
				}
				if len(seqs) == 0 {
					break
				}
				for _, seq := range seqs {
					if err := q.index(seq); err != nil {
						return err
					}
					last = seq
				}
			}
		}
		// chunks_deleted tells the keyword search's cached document frequencies that the index changed.
		_, err := tx.ExecContext(ctx, `UPDATE store_meta SET value = CASE key WHEN 'terms_version' THEN ? ELSE value + 1 END
			WHERE key IN ('terms_version', 'chunks_deleted')`, textproc.TermsVersion)
		return err
	})
	return dbError(err, "re-index keyword terms")
}

// reindexChunkTerms writes the keyword entries of the chunks of document seq, the analyzer's terms of their
// text, section and the document's title, as CommitVersion makes them, into the emptied keyword index.
func (s *Store) reindexChunkTerms(ctx context.Context, tx *sql.Tx, seq int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT c.id, c.text, c.key_id, c.section, d.title FROM chunks c
		JOIN documents d ON d.seq = c.doc_seq WHERE c.doc_seq = ? ORDER BY c.idx`, seq)
	if err != nil {
		return err
	}
	var entries [][]any
	for rows.Next() {
		var id int64
		var text, keyID, section, title string
		if err := rows.Scan(&id, &text, &keyID, &section, &title); err != nil {
			rows.Close()
			return err
		}
		if text, err = s.opts.Keys.OpenText(text, keyID); err != nil {
			rows.Close()
			return err
		}
		entries = append(entries, []any{id, strings.Join(textproc.IndexTerms(textproc.ContextText(title, section, text)), " ")})
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(entries) == 0 {
		return err
	}
	list, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO chunks_fts (rowid, terms) SELECT value ->> 0, value ->> 1 FROM json_each(?)`, string(list))
	return err
}
