package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/ragd/ragd/internal/textproc"
)

// reindexTerms derives the keyword entries of every chunk and document again when the database's were made
// by an older analyzer (store_meta terms_version below textproc.TermsVersion), a batch of documents per
// transaction, and then records the analyzer's version. An interrupted run starts over at the next open:
// each batch writes what the current analyzer gives, so running it twice is harmless.
func (s *Store) reindexTerms(ctx context.Context) error {
	var version int
	if err := s.w.QueryRowContext(ctx, `SELECT value FROM store_meta WHERE key = 'terms_version'`).Scan(&version); err != nil {
		return dbError(err, "read the keyword index's version")
	}
	if version >= textproc.TermsVersion {
		return nil
	}
	var last int64
	for {
		var n int
		err := s.write(ctx, func(tx *sql.Tx) error {
			seqs, err := querySeqs(ctx, tx, `SELECT seq FROM documents WHERE seq > ? AND version > 0 AND deleted_at IS NULL
				ORDER BY seq LIMIT 50`, last)
			if err != nil {
				return err
			}
			n = len(seqs)
			for _, seq := range seqs {
				if err := s.reindexChunkTerms(ctx, tx, seq); err != nil {
					return err
				}
				if err := indexDocument(ctx, tx, s.opts.Keys, seq); err != nil {
					return err
				}
				last = seq
			}
			if n > 0 {
				return nil
			}
			// chunks_deleted tells the keyword search's cached document frequencies that the index changed.
			_, err = tx.ExecContext(ctx, `UPDATE store_meta SET value = CASE key WHEN 'terms_version' THEN ? ELSE value + 1 END
				WHERE key IN ('terms_version', 'chunks_deleted')`, textproc.TermsVersion)
			return err
		})
		if err != nil {
			return dbError(err, "re-index keyword terms")
		}
		if n == 0 {
			return nil
		}
	}
}

// reindexChunkTerms replaces the keyword entries of the chunks of document seq with the analyzer's terms of
// their text, section and the document's title, as CommitVersion makes them.
func (s *Store) reindexChunkTerms(ctx context.Context, tx *sql.Tx, seq int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT c.id, c.text, c.key_id, c.section, d.title FROM chunks c
		JOIN documents d ON d.seq = c.doc_seq WHERE c.doc_seq = ? ORDER BY c.idx`, seq)
	if err != nil {
		return err
	}
	var entries [][]any
	var ids []int64
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
		ids = append(ids, id)
		entries = append(entries, []any{id, strings.Join(textproc.IndexTerms(textproc.ContextText(title, section, text)), " ")})
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return err
	}
	idList, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	list, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM chunks_fts WHERE rowid IN (SELECT value FROM json_each(?))`, string(idList)); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO chunks_fts (rowid, terms) SELECT value ->> 0, value ->> 1 FROM json_each(?)`, string(list))
	return err
}
