package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

const sourceCols = `id, collection_id, kind, settings, credentials IS NOT NULL, schedule, owner, cursor, last_run_at,
	last_success_at, added, updated, deleted, unchanged, failed, last_error, failures, paused, pause_reason, lease_until,
	created_at, updated_at`

func (s *Store) scanSource(row interface{ Scan(...any) error }) (*rag.SyncSource, error) {
	var src rag.SyncSource
	var settings string
	var lastRun, lastOK sql.NullInt64
	var lease, created, updated int64
	st := &src.State
	if err := row.Scan(&src.ID, &src.CollectionID, &src.Kind, &settings, &src.HasCredentials, &src.Schedule, &src.Owner,
		&st.Cursor, &lastRun, &lastOK, &st.Added, &st.Updated, &st.Deleted, &st.Unchanged, &st.Failed, &st.LastError,
		&st.Failures, &st.Paused, &st.PauseReason, &lease, &created, &updated); err != nil {
		return nil, err
	}
	src.Settings = []byte(settings)
	if lastRun.Valid {
		t := fromMicro(lastRun.Int64)
		st.LastRunAt = &t
	}
	if lastOK.Valid {
		t := fromMicro(lastOK.Int64)
		st.LastSuccessAt = &t
	}
	st.Running = lease > s.now().UnixMicro()
	src.CreatedAt, src.UpdatedAt = fromMicro(created), fromMicro(updated)
	return &src, nil
}

// CreateSource stores src with its credentials, sealed with the data key (see rag.SyncStore).
func (s *Store) CreateSource(ctx context.Context, src *rag.SyncSource, credentials []byte) error {
	now := s.now()
	src.ID, src.CreatedAt, src.UpdatedAt, src.HasCredentials = newID(), now, now, credentials != nil
	settings := string(src.Settings)
	if settings == "" {
		settings = "{}"
	}
	var sealed []byte
	keyID := ""
	if credentials != nil {
		sealed, keyID = s.opts.Keys.Seal(credentials)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM collections WHERE id = ?`, src.CollectionID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("collection %q: %w", src.CollectionID, rag.ErrNotFound)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sources (id, collection_id, kind, settings, credentials, credentials_key, schedule,
			owner, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, src.ID, src.CollectionID, src.Kind, settings,
			sealed, keyID, src.Schedule, src.Owner, now.UnixMicro(), now.UnixMicro())
		return err
	})
	return dbError(err, "create source")
}

// GetSource returns a source with its state. ErrNotFound.
func (s *Store) GetSource(ctx context.Context, id string) (*rag.SyncSource, error) {
	src, err := s.scanSource(s.r.QueryRowContext(ctx, `SELECT `+sourceCols+` FROM sources WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("source %q: %w", id, rag.ErrNotFound)
	}
	return src, dbError(err, "get source")
}

// ListSources returns the sources of a collection ("" for all), oldest first.
func (s *Store) ListSources(ctx context.Context, collectionID string) ([]*rag.SyncSource, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+sourceCols+` FROM sources WHERE ? = '' OR collection_id = ?
		ORDER BY created_at, id`, collectionID, collectionID)
	if err != nil {
		return nil, dbError(err, "list sources")
	}
	defer rows.Close()
	out := []*rag.SyncSource{}
	for rows.Next() {
		src, err := s.scanSource(rows)
		if err != nil {
			return nil, dbError(err, "list sources")
		}
		out = append(out, src)
	}
	return out, dbError(rows.Err(), "list sources")
}

// DeleteSource removes a source and its item records. ErrNotFound.
func (s *Store) DeleteSource(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "sources", "source", id)
}

// SourceCredentials returns a source's credentials in the clear (nil: none). ErrNotFound.
func (s *Store) SourceCredentials(ctx context.Context, id string) ([]byte, error) {
	return s.openSealed(ctx, `SELECT credentials, credentials_key FROM sources WHERE id = ?`, "source", id)
}

// ClaimSource takes or extends the source's sync lease (see rag.SyncStore).
func (s *Store) ClaimSource(ctx context.Context, id, holder string, until time.Time) (bool, error) {
	claimed := false
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sources SET lease_holder = ?, lease_until = ?
			WHERE id = ? AND (lease_holder = ? OR lease_until <= ?)`, holder, until.UnixMicro(), id, holder, s.now().UnixMicro())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			claimed = true
			return nil
		}
		return sourceExists(ctx, tx, id)
	})
	return claimed, dbError(err, "claim source")
}

func sourceExists(ctx context.Context, tx *sql.Tx, id string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sources WHERE id = ?`, id).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("source %q: %w", id, rag.ErrNotFound)
	}
	return nil
}

// ReleaseSource records a sync's state and gives up the lease (see rag.SyncStore).
func (s *Store) ReleaseSource(ctx context.Context, id, holder string, st rag.SyncState) error {
	micro := func(t *time.Time) any {
		if t == nil {
			return nil
		}
		return t.UnixMicro()
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sources SET cursor = ?, last_run_at = ?, last_success_at = ?, added = ?, updated = ?,
			deleted = ?, unchanged = ?, failed = ?, last_error = ?, failures = ?, paused = ?, pause_reason = ?, lease_holder = '',
			lease_until = 0, updated_at = ? WHERE id = ? AND lease_holder = ?`, st.Cursor, micro(st.LastRunAt), micro(st.LastSuccessAt),
			st.Added, st.Updated, st.Deleted, st.Unchanged, st.Failed, st.LastError, st.Failures, st.Paused, st.PauseReason,
			s.now().UnixMicro(), id, holder)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return nil
		}
		if err := sourceExists(ctx, tx, id); err != nil {
			return err
		}
		return fmt.Errorf("source %q: the sync lease of %s was lost: %w", id, holder, rag.ErrConflict)
	})
	return dbError(err, "release source")
}

// SourceItems returns a source's item records by item ID.
func (s *Store) SourceItems(ctx context.Context, sourceID string) ([]*rag.SyncItem, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT item_id, document_id, version, content_hash, error, attempts, updated_at
		FROM source_items WHERE source_id = ? ORDER BY item_id`, sourceID)
	if err != nil {
		return nil, dbError(err, "source items")
	}
	defer rows.Close()
	out := []*rag.SyncItem{}
	for rows.Next() {
		it := &rag.SyncItem{SourceID: sourceID}
		var updated int64
		if err := rows.Scan(&it.ItemID, &it.DocumentID, &it.Version, &it.ContentHash, &it.Error, &it.Attempts, &updated); err != nil {
			return nil, dbError(err, "source items")
		}
		it.UpdatedAt = fromMicro(updated)
		out = append(out, it)
	}
	return out, dbError(rows.Err(), "source items")
}

// PutSourceItem creates or replaces an item's record.
func (s *Store) PutSourceItem(ctx context.Context, it *rag.SyncItem) error {
	it.UpdatedAt = s.now()
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO source_items (source_id, item_id, document_id, version, content_hash, error, attempts,
			updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source_id, item_id) DO UPDATE SET document_id = excluded.document_id,
			version = excluded.version, content_hash = excluded.content_hash, error = excluded.error, attempts = excluded.attempts,
			updated_at = excluded.updated_at`, it.SourceID, it.ItemID, it.DocumentID, it.Version, it.ContentHash, it.Error, it.Attempts,
			it.UpdatedAt.UnixMicro())
		return err
	})
	return dbError(err, "put source item")
}

// DeleteSourceItem removes an item's record.
func (s *Store) DeleteSourceItem(ctx context.Context, sourceID, itemID string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM source_items WHERE source_id = ? AND item_id = ?`, sourceID, itemID)
		return err
	})
	return dbError(err, "delete source item")
}

// MoveSourceItem renames an item and gives its document the new external ID and source (see rag.SyncStore).
func (s *Store) MoveSourceItem(ctx context.Context, sourceID, from, to, source string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		var docID string
		err := tx.QueryRowContext(ctx, `SELECT document_id FROM source_items WHERE source_id = ? AND item_id = ?`, sourceID, from).Scan(&docID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("item %q of source %q: %w", from, sourceID, rag.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var taken int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM source_items WHERE source_id = ? AND item_id = ?`, sourceID, to).Scan(&taken); err != nil {
			return err
		}
		if taken > 0 {
			return fmt.Errorf("item %q of source %q exists: %w", to, sourceID, rag.ErrConflict)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE source_items SET item_id = ?, updated_at = ? WHERE source_id = ? AND item_id = ?`,
			to, s.now().UnixMicro(), sourceID, from); err != nil {
			return err
		}
		if docID == "" {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE documents SET external_id = ?, source = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`,
			to, source, s.now().UnixMicro(), docID)
		return err
	})
	return dbError(err, "move source item")
}
