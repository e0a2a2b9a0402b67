package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
)

// TrashDocument marks a document visible to p deleted and takes it out of every index at once (see
// rag.Store): its chunks go with their postings, vectors and share of the BM25 statistics, as do its
// document-index entries; its external ID moves to deleted_external_id. ErrNotFound.
func (s *Store) TrashDocument(ctx context.Context, p rag.Principal, id string) (*rag.Document, error) {
	var d *rag.Document
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var a args
		conds, _ := docConditions(&a, p, rag.Filter{})
		conds = append(conds, "d.id = "+a.add(id), live)
		var found string
		if err := tx.QueryRow(ctx, s.q(`SELECT d.id FROM {S}.documents d WHERE `+where(conds)+` FOR UPDATE OF d`), a...).Scan(&found); err != nil {
			return fmt.Errorf("delete document: %w", err)
		}
		if err := s.dropChunks(ctx, tx, id); err != nil {
			return err
		}
		if err := s.dropDocumentGraph(ctx, tx, id); err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM {S}.doc_postings WHERE document_id = $1`, `DELETE FROM {S}.doc_lengths WHERE document_id = $1`} {
			if _, err := tx.Exec(ctx, s.q(q), id); err != nil {
				return fmt.Errorf("delete document: %w", err)
			}
		}
		var err error
		d, err = scanDocument(tx.QueryRow(ctx, s.q(`UPDATE {S}.documents d SET deleted_at = $2, updated_at = $2,
			deleted_external_id = external_id, external_id = '', chunk_count = 0 WHERE id = $1 RETURNING `+documentColumns), id, s.now()))
		return err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("delete document: %w", err))
	}
	return d, nil
}

// RestoreDocument makes a deleted document visible to p live again, queued for re-indexing (see
// rag.Store). ErrNotFound; ErrConflict when its external ID was taken meanwhile.
func (s *Store) RestoreDocument(ctx context.Context, p rag.Principal, id string) (*rag.Document, error) {
	var d *rag.Document
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var a args
		conds, _ := docConditions(&a, p, rag.Filter{})
		conds = append(conds, "d.id = "+a.add(id), "d.deleted_at IS NOT NULL")
		var coll, key string
		if err := tx.QueryRow(ctx, s.q(`SELECT d.collection_id, d.deleted_external_id FROM {S}.documents d WHERE `+where(conds)+
			` FOR UPDATE OF d`), a...).Scan(&coll, &key); err != nil {
			return fmt.Errorf("restore document: %w", err)
		}
		if key != "" {
			var taken bool
			if err := tx.QueryRow(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM {S}.documents WHERE collection_id = $1 AND external_id = $2)`),
				coll, key).Scan(&taken); err != nil {
				return fmt.Errorf("restore document: %w", err)
			}
			if taken {
				return fmt.Errorf("document %s: its id %q was given to a new document after it was deleted: %w", id, key, rag.ErrConflict)
			}
		}
		var err error
		d, err = scanDocument(tx.QueryRow(ctx, s.q(`UPDATE {S}.documents d SET deleted_at = NULL, external_id = deleted_external_id,
			deleted_external_id = '', updated_at = $2,
			pending_hash = CASE WHEN pending_hash <> '' THEN pending_hash ELSE content_hash END,
			status = CASE WHEN pending_hash = '' AND content_hash = '' THEN status ELSE $3 END,
			stage = CASE WHEN pending_hash = '' AND content_hash = '' THEN stage ELSE $4 END,
			progress = 0, error_code = '', error = ''
			WHERE id = $1 RETURNING `+documentColumns), id, s.now(), string(rag.StatusQueued), string(rag.StageQueued)))
		return err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("restore document: %w", err))
	}
	return d, nil
}

// PurgeDocuments removes for good up to limit documents deleted before before (see rag.Store).
func (s *Store) PurgeDocuments(ctx context.Context, before time.Time, limit int) ([]string, error) {
	if limit <= 0 {
		limit = 100
	}
	var ids []string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, s.q(`SELECT id FROM {S}.documents WHERE deleted_at < $1 ORDER BY deleted_at, id LIMIT $2
			FOR UPDATE SKIP LOCKED`), before, limit)
		var err error
		if ids, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return fmt.Errorf("purge documents: %w", err)
		}
		for _, id := range ids {
			if err := s.removeDocument(ctx, tx, id); err != nil {
				return err
			}
			for _, q := range []string{
				`DELETE FROM {S}.feedback WHERE document_id = $1`,
				`UPDATE {S}.feedback SET passages = (SELECT COALESCE(jsonb_agg(e), '[]') FROM jsonb_array_elements(passages) e
					WHERE e ->> 'document_id' IS DISTINCT FROM $1) WHERE passages @> jsonb_build_array(jsonb_build_object('document_id', $1::text))`,
				`UPDATE {S}.answers SET source_refs = (SELECT COALESCE(jsonb_agg(e), '[]') FROM jsonb_array_elements(source_refs) e
					WHERE e ->> 'document_id' IS DISTINCT FROM $1) WHERE source_refs @> jsonb_build_array(jsonb_build_object('document_id', $1::text))`,
			} {
				if _, err := tx.Exec(ctx, s.q(q), id); err != nil {
					return fmt.Errorf("purge document %s: %w", id, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return ids, nil
}
