package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// TrashDocument marks a visible document deleted and takes it out of every index at once (see rag.Store):
// its chunks go (their vectors, keyword rows and counters follow by cascade and triggers, and in-memory
// vector caches drop them through the tombstones), as do its document-index entries; its external ID moves
// to deleted_external_id. ErrNotFound.
func (s *Store) TrashDocument(ctx context.Context, p rag.Principal, id string) (*rag.Document, error) {
	var out *rag.Document
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, seq, err := visibleDoc(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM chunks WHERE doc_seq = ?`, seq); err != nil {
			return err
		}
		if err := dropDocumentGraph(ctx, tx, id); err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM doc_postings WHERE doc_seq = ?`, `DELETE FROM doc_lengths WHERE doc_seq = ?`} {
			if _, err := tx.ExecContext(ctx, q, seq); err != nil {
				return err
			}
		}
		now := s.now().UnixMicro()
		if _, err := tx.ExecContext(ctx, `UPDATE documents SET deleted_at = ?1, updated_at = ?1, deleted_external_id = external_id,
			external_id = NULL, chunk_count = 0 WHERE seq = ?2`, now, seq); err != nil {
			return err
		}
		out, _, err = scanDoc(tx.QueryRowContext(ctx, `SELECT `+docCols+` FROM documents d WHERE d.seq = ?`, seq))
		return err
	})
	if err != nil {
		return nil, dbError(err, "delete document")
	}
	s.kickMerge()
	return out, nil
}

// RestoreDocument makes a visible deleted document live again, queued for re-indexing (see rag.Store).
// ErrNotFound; ErrConflict when its external ID was taken meanwhile.
func (s *Store) RestoreDocument(ctx context.Context, p rag.Principal, id string) (*rag.Document, error) {
	var out *rag.Document
	err := s.write(ctx, func(tx *sql.Tx) error {
		d, seq, err := visibleDocIn(ctx, tx, p, id, `d.deleted_at IS NOT NULL`)
		if err != nil {
			return err
		}
		var taken int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM documents WHERE collection_id = ? AND external_id = ?`,
			d.CollectionID, d.ExternalID).Scan(&taken); err != nil {
			return err
		}
		if taken > 0 {
			return fmt.Errorf("document %s: its id %q was given to a new document after it was deleted: %w", id, d.ExternalID, rag.ErrConflict)
		}
		_, err = tx.ExecContext(ctx, `UPDATE documents SET deleted_at = NULL, external_id = deleted_external_id,
			deleted_external_id = NULL, updated_at = ?2,
			pending_hash = CASE WHEN pending_hash <> '' THEN pending_hash ELSE content_hash END,
			status = CASE WHEN pending_hash = '' AND content_hash = '' THEN status ELSE ?3 END,
			stage = CASE WHEN pending_hash = '' AND content_hash = '' THEN stage ELSE ?4 END,
			progress = 0, error_code = '', error = ''
			WHERE seq = ?1`, seq, s.now().UnixMicro(), string(rag.StatusQueued), string(rag.StageQueued))
		if err != nil {
			return err
		}
		out, _, err = scanDoc(tx.QueryRowContext(ctx, `SELECT `+docCols+` FROM documents d WHERE d.seq = ?`, seq))
		return err
	})
	if err != nil {
		return nil, dbError(err, "restore document")
	}
	return out, nil
}

// PurgeDocuments removes for good up to limit documents deleted before before (see rag.Store).
func (s *Store) PurgeDocuments(ctx context.Context, before time.Time, limit int) ([]string, error) {
	if limit <= 0 {
		limit = 100
	}
	var ids []string
	err := s.write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT seq, id FROM documents WHERE deleted_at IS NOT NULL AND deleted_at < ?
			ORDER BY deleted_at, seq LIMIT ?`, before.UnixMicro(), limit)
		if err != nil {
			return err
		}
		var seqs []int64
		for rows.Next() {
			var seq int64
			var id string
			if err := rows.Scan(&seq, &id); err != nil {
				rows.Close()
				return err
			}
			seqs, ids = append(seqs, seq), append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i, seq := range seqs {
			if err := s.removeDocument(ctx, tx, seq); err != nil {
				return err
			}
			if err := forgetDocument(ctx, tx, ids[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, dbError(err, "purge documents")
	}
	if len(ids) > 0 {
		s.kickMerge()
		// The write-ahead log still holds the pages as they were before the purge: copy them back and
		// empty it. Best effort: a reader in the middle of a long query can keep a part of it for now.
		if _, err := s.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			return ids, dbError(err, "checkpoint after purge")
		}
	}
	return ids, nil
}

// forgetDocument removes the mentions of a purged document outside its own rows: the ratings of its
// passages, its passages in answers' ratings and its references in Q&A answers.
func forgetDocument(ctx context.Context, tx *sql.Tx, id string) error {
	for _, q := range []string{
		`DELETE FROM feedback WHERE document_id = ?1`,
		`UPDATE feedback SET passages = (SELECT json_group_array(json(value)) FROM json_each(passages)
			WHERE value ->> 'document_id' IS NOT ?1) WHERE EXISTS (SELECT 1 FROM json_each(passages) WHERE value ->> 'document_id' = ?1)`,
		`UPDATE answers SET source_refs = (SELECT json_group_array(json(value)) FROM json_each(source_refs)
			WHERE value ->> 'document_id' IS NOT ?1) WHERE EXISTS (SELECT 1 FROM json_each(source_refs) WHERE value ->> 'document_id' = ?1)`,
	} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return err
		}
	}
	return nil
}
