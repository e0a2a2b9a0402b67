package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
)

const sourceColumns = `id, collection_id, kind, settings, credentials IS NOT NULL, schedule, owner, cursor, last_run_at,
	last_success_at, added, updated, deleted, unchanged, failed, last_error, failures, paused, pause_reason, lease_until,
	created_at, updated_at`

func (s *Store) scanSource(row pgx.Row) (*rag.SyncSource, error) {
	var src rag.SyncSource
	var settings []byte
	var lease time.Time
	st := &src.State
	if err := row.Scan(&src.ID, &src.CollectionID, &src.Kind, &settings, &src.HasCredentials, &src.Schedule, &src.Owner,
		&st.Cursor, &st.LastRunAt, &st.LastSuccessAt, &st.Added, &st.Updated, &st.Deleted, &st.Unchanged, &st.Failed, &st.LastError,
		&st.Failures, &st.Paused, &st.PauseReason, &lease, &src.CreatedAt, &src.UpdatedAt); err != nil {
		return nil, err
	}
	src.Settings = settings
	st.Running = lease.After(s.now())
	for _, t := range []*time.Time{st.LastRunAt, st.LastSuccessAt, &src.CreatedAt, &src.UpdatedAt} {
		if t != nil {
			*t = t.UTC()
		}
	}
	return &src, nil
}

// CreateSource stores src with its credentials, sealed with the data key (see rag.SyncStore).
func (s *Store) CreateSource(ctx context.Context, src *rag.SyncSource, credentials []byte) error {
	now := s.now()
	src.ID, src.CreatedAt, src.UpdatedAt, src.HasCredentials = uuid.NewString(), now, now, credentials != nil
	settings := string(src.Settings)
	if settings == "" {
		settings = "{}"
	}
	var sealed []byte
	keyID := ""
	if credentials != nil {
		sealed, keyID = s.opts.Keys.Seal(credentials)
	}
	_, err := s.pool.Exec(ctx, s.q(`INSERT INTO {S}.sources (id, collection_id, kind, settings, credentials, credentials_key, schedule,
		owner, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`), src.ID, src.CollectionID, src.Kind, settings,
		sealed, keyID, src.Schedule, src.Owner, now)
	if err != nil {
		err = interpretError(err)
		if errors.Is(err, rag.ErrNotFound) {
			return fmt.Errorf("collection %q: %w", src.CollectionID, rag.ErrNotFound)
		}
	}
	return interpretError(errorf(err, "create source"))
}

// GetSource returns a source with its state. ErrNotFound.
func (s *Store) GetSource(ctx context.Context, id string) (*rag.SyncSource, error) {
	src, err := s.scanSource(s.pool.QueryRow(ctx, s.q(`SELECT `+sourceColumns+` FROM {S}.sources WHERE id = $1`), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("source %q: %w", id, rag.ErrNotFound)
	}
	return src, interpretError(errorf(err, "get source"))
}

// ListSources returns the sources of a collection ("" for all), oldest first.
func (s *Store) ListSources(ctx context.Context, collectionID string) ([]*rag.SyncSource, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+sourceColumns+` FROM {S}.sources WHERE $1 = '' OR collection_id = $1
		ORDER BY created_at, id`), collectionID)
	if err != nil {
		return nil, interpretError(errorf(err, "list sources"))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.SyncSource, error) { return s.scanSource(r) })
	if err != nil {
		return nil, interpretError(errorf(err, "list sources"))
	}
	if out == nil {
		out = []*rag.SyncSource{}
	}
	return out, nil
}

// DeleteSource removes a source and its item records. ErrNotFound.
func (s *Store) DeleteSource(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "sources", "source", id)
}

// SourceCredentials returns a source's credentials in the clear (nil: none). ErrNotFound.
func (s *Store) SourceCredentials(ctx context.Context, id string) ([]byte, error) {
	return s.openSealed(ctx, `SELECT credentials, credentials_key FROM {S}.sources WHERE id = $1`, "source", id)
}

func (s *Store) sourceExists(ctx context.Context, tx pgx.Tx, id string) error {
	var ok bool
	if err := tx.QueryRow(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM {S}.sources WHERE id = $1)`), id).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("source %q: %w", id, rag.ErrNotFound)
	}
	return nil
}

// ClaimSource takes or extends the source's sync lease (see rag.SyncStore).
func (s *Store) ClaimSource(ctx context.Context, id, holder string, until time.Time) (bool, error) {
	claimed := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, s.q(`UPDATE {S}.sources SET lease_holder = $2, lease_until = $3
			WHERE id = $1 AND (lease_holder = $2 OR lease_until <= $4)`), id, holder, until, s.now())
		if err != nil {
			return err
		}
		if tag.RowsAffected() > 0 {
			claimed = true
			return nil
		}
		return s.sourceExists(ctx, tx, id)
	})
	return claimed, errorf(err, "claim source")
}

// ReleaseSource records a sync's state and gives up the lease (see rag.SyncStore).
func (s *Store) ReleaseSource(ctx context.Context, id, holder string, st rag.SyncState) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, s.q(`UPDATE {S}.sources SET cursor = $3, last_run_at = $4, last_success_at = $5, added = $6,
			updated = $7, deleted = $8, unchanged = $9, failed = $10, last_error = $11, failures = $12, paused = $13, pause_reason = $14,
			lease_holder = '', lease_until = 'epoch', updated_at = $15 WHERE id = $1 AND lease_holder = $2`), id, holder, st.Cursor,
			st.LastRunAt, st.LastSuccessAt, st.Added, st.Updated, st.Deleted, st.Unchanged, st.Failed, st.LastError, st.Failures,
			st.Paused, st.PauseReason, s.now())
		if err != nil {
			return err
		}
		if tag.RowsAffected() > 0 {
			return nil
		}
		if err := s.sourceExists(ctx, tx, id); err != nil {
			return err
		}
		return fmt.Errorf("source %q: the sync lease of %s was lost: %w", id, holder, rag.ErrConflict)
	})
	return errorf(err, "release source")
}

// SourceItems returns a source's item records by item ID.
func (s *Store) SourceItems(ctx context.Context, sourceID string) ([]*rag.SyncItem, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT item_id, document_id, version, content_hash, error, attempts, updated_at
		FROM {S}.source_items WHERE source_id = $1 ORDER BY item_id COLLATE "C"`), sourceID)
	if err != nil {
		return nil, interpretError(errorf(err, "source items"))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.SyncItem, error) {
		it := &rag.SyncItem{SourceID: sourceID}
		err := r.Scan(&it.ItemID, &it.DocumentID, &it.Version, &it.ContentHash, &it.Error, &it.Attempts, &it.UpdatedAt)
		it.UpdatedAt = it.UpdatedAt.UTC()
		return it, err
	})
	if err != nil {
		return nil, interpretError(errorf(err, "source items"))
	}
	if out == nil {
		out = []*rag.SyncItem{}
	}
	return out, nil
}

// PutSourceItem creates or replaces an item's record.
func (s *Store) PutSourceItem(ctx context.Context, it *rag.SyncItem) error {
	it.UpdatedAt = s.now()
	_, err := s.pool.Exec(ctx, s.q(`INSERT INTO {S}.source_items (source_id, item_id, document_id, version, content_hash, error,
		attempts, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (source_id, item_id) DO UPDATE SET
		document_id = excluded.document_id, version = excluded.version, content_hash = excluded.content_hash, error = excluded.error,
		attempts = excluded.attempts, updated_at = excluded.updated_at`), it.SourceID, it.ItemID, it.DocumentID, it.Version,
		it.ContentHash, it.Error, it.Attempts, it.UpdatedAt)
	return interpretError(errorf(err, "put source item"))
}

// DeleteSourceItem removes an item's record.
func (s *Store) DeleteSourceItem(ctx context.Context, sourceID, itemID string) error {
	_, err := s.pool.Exec(ctx, s.q(`DELETE FROM {S}.source_items WHERE source_id = $1 AND item_id = $2`), sourceID, itemID)
	return interpretError(errorf(err, "delete source item"))
}

// MoveSourceItem renames an item and gives its document the new external ID and source (see rag.SyncStore).
func (s *Store) MoveSourceItem(ctx context.Context, sourceID, from, to, source string) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var docID string
		err := tx.QueryRow(ctx, s.q(`SELECT document_id FROM {S}.source_items WHERE source_id = $1 AND item_id = $2 FOR UPDATE`),
			sourceID, from).Scan(&docID)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("item %q of source %q: %w", from, sourceID, rag.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var taken bool
		if err := tx.QueryRow(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM {S}.source_items WHERE source_id = $1 AND item_id = $2)`),
			sourceID, to).Scan(&taken); err != nil {
			return err
		}
		if taken {
			return fmt.Errorf("item %q of source %q exists: %w", to, sourceID, rag.ErrConflict)
		}
		if _, err := tx.Exec(ctx, s.q(`UPDATE {S}.source_items SET item_id = $3, updated_at = $4 WHERE source_id = $1 AND item_id = $2`),
			sourceID, from, to, s.now()); err != nil {
			return err
		}
		if docID == "" {
			return nil
		}
		_, err = tx.Exec(ctx, s.q(`UPDATE {S}.documents SET external_id = $2, source = $3, updated_at = $4
			WHERE id = $1 AND deleted_at IS NULL`), docID, to, source, s.now())
		return err
	})
	return errorf(err, "move source item")
}
