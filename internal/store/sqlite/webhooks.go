package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ragd/ragd/internal/rag"
)

const webhookCols = `id, collection_id, url, events, description, owner, created_at`

func scanWebhook(row interface{ Scan(...any) error }) (*rag.Webhook, error) {
	var w rag.Webhook
	var events string
	var created int64
	if err := row.Scan(&w.ID, &w.CollectionID, &w.URL, &events, &w.Description, &w.Owner, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return nil, fmt.Errorf("webhook %s: events: %w", w.ID, err)
	}
	w.CreatedAt = fromMicro(created)
	return &w, nil
}

// CreateWebhook stores w with its secret, sealed with the data key (see rag.WebhookStore).
func (s *Store) CreateWebhook(ctx context.Context, w *rag.Webhook, secret []byte) error {
	now := s.now()
	w.ID, w.CreatedAt = newID(), now
	events, err := json.Marshal(w.Events)
	if err != nil {
		return dbError(err, "create webhook")
	}
	sealed, keyID := s.opts.Keys.Seal(secret)
	err = s.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM collections WHERE id = ?`, w.CollectionID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("collection %q: %w", w.CollectionID, rag.ErrNotFound)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO webhooks (id, collection_id, url, events, description, secret, secret_key, owner,
			created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, w.ID, w.CollectionID, w.URL, string(events), w.Description, sealed, keyID,
			w.Owner, now.UnixMicro())
		return err
	})
	return dbError(err, "create webhook")
}

// GetWebhook returns a webhook. ErrNotFound.
func (s *Store) GetWebhook(ctx context.Context, id string) (*rag.Webhook, error) {
	w, err := scanWebhook(s.r.QueryRowContext(ctx, `SELECT `+webhookCols+` FROM webhooks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("webhook %q: %w", id, rag.ErrNotFound)
	}
	return w, dbError(err, "get webhook")
}

// ListWebhooks returns the webhooks of a collection ("" for all), oldest first.
func (s *Store) ListWebhooks(ctx context.Context, collectionID string) ([]*rag.Webhook, error) {
	out, err := collect(ctx, s.r, "list webhooks", `SELECT `+webhookCols+` FROM webhooks WHERE ?1 = '' OR collection_id = ?1
		ORDER BY created_at, id`, []any{collectionID}, func(rows *sql.Rows, w **rag.Webhook) (err error) {
		*w, err = scanWebhook(rows)
		return err
	})
	if out == nil && err == nil {
		out = []*rag.Webhook{}
	}
	return out, err
}

// DeleteWebhook removes a webhook and its delivery log. ErrNotFound.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "webhooks", "webhook", id)
}

// deleteByID deletes the row id of table (whose rows cascade to what hangs on them); ErrNotFound names it
// as a kind.
func (s *Store) deleteByID(ctx context.Context, table, kind, id string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%s %q: %w", kind, id, rag.ErrNotFound)
		}
		return nil
	})
	return dbError(err, "delete %s", kind)
}

// WebhookSecret returns a webhook's secret in the clear. ErrNotFound.
func (s *Store) WebhookSecret(ctx context.Context, id string) ([]byte, error) {
	return s.openSealed(ctx, `SELECT secret, secret_key FROM webhooks WHERE id = ?`, "webhook", id)
}

// openSealed reads a sealed secret and its key ID of row id with query and opens it (nil for NULL);
// ErrNotFound names the row as a kind.
func (s *Store) openSealed(ctx context.Context, query, kind, id string) ([]byte, error) {
	var data []byte
	var keyID string
	err := s.r.QueryRowContext(ctx, query, id).Scan(&data, &keyID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s %q: %w", kind, id, rag.ErrNotFound)
	}
	if err != nil || data == nil {
		return nil, dbError(err, "%s secret", kind)
	}
	plain, err := s.opts.Keys.Open(data, keyID)
	if err != nil {
		return nil, rag.WrapError(rag.CodeDBError, err, "%s %s: secret: %v", kind, id, err)
	}
	return plain, nil
}

// AddWebhookDelivery records an attempt and keeps the newest keep of its webhook (see rag.WebhookStore).
func (s *Store) AddWebhookDelivery(ctx context.Context, d *rag.WebhookDelivery, keep int) error {
	d.CreatedAt = s.now()
	err := s.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM webhooks WHERE id = ?`, d.WebhookID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("webhook %q: %w", d.WebhookID, rag.ErrNotFound)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (webhook_id, event_id, event, attempt, status_code, error,
			duration_ms, outcome, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, d.WebhookID, d.EventID, d.Event, d.Attempt,
			d.StatusCode, d.Error, d.DurationMS, d.Outcome, d.CreatedAt.UnixMicro())
		if err != nil {
			return err
		}
		if d.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE webhook_id = ?1 AND id <= (SELECT id FROM webhook_deliveries
			WHERE webhook_id = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)`, d.WebhookID, max(keep, 1))
		return err
	})
	return dbError(err, "add webhook delivery")
}

// WebhookDeliveries returns up to limit attempts of a webhook, newest first.
func (s *Store) WebhookDeliveries(ctx context.Context, webhookID string, limit int) ([]*rag.WebhookDelivery, error) {
	out, err := collect(ctx, s.r, "webhook deliveries", `SELECT id, webhook_id, event_id, event, attempt, status_code, error, duration_ms,
		outcome, created_at FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id DESC LIMIT ?`, []any{webhookID, limit},
		func(rows *sql.Rows, d **rag.WebhookDelivery) error {
			var v rag.WebhookDelivery
			var created int64
			if err := rows.Scan(&v.ID, &v.WebhookID, &v.EventID, &v.Event, &v.Attempt, &v.StatusCode, &v.Error, &v.DurationMS, &v.Outcome,
				&created); err != nil {
				return err
			}
			v.CreatedAt, *d = fromMicro(created), &v
			return nil
		})
	if out == nil && err == nil {
		out = []*rag.WebhookDelivery{}
	}
	return out, err
}
