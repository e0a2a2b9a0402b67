package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
)

const webhookColumns = `id, collection_id, url, events, description, owner, created_at`

func scanWebhook(row pgx.Row) (*rag.Webhook, error) {
	var w rag.Webhook
	var events []byte
	if err := row.Scan(&w.ID, &w.CollectionID, &w.URL, &events, &w.Description, &w.Owner, &w.CreatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(events, &w.Events); err != nil {
		return nil, fmt.Errorf("webhook %s: events: %w", w.ID, err)
	}
	w.CreatedAt = w.CreatedAt.UTC()
	return &w, nil
}

// CreateWebhook stores w with its secret, sealed with the data key (see rag.WebhookStore).
func (s *Store) CreateWebhook(ctx context.Context, w *rag.Webhook, secret []byte) error {
	now := s.now()
	w.ID, w.CreatedAt = uuid.NewString(), now
	events, err := json.Marshal(w.Events)
	if err != nil {
		return interpretError(errorf(err, "create webhook"))
	}
	sealed, keyID := s.opts.Keys.Seal(secret)
	_, err = s.pool.Exec(ctx, s.q(`INSERT INTO {S}.webhooks (id, collection_id, url, events, description, secret, secret_key, owner,
		created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`), w.ID, w.CollectionID, w.URL, string(events), w.Description, sealed,
		keyID, w.Owner, now)
	if err != nil {
		err = interpretError(err)
		if errors.Is(err, rag.ErrNotFound) {
			return fmt.Errorf("collection %q: %w", w.CollectionID, rag.ErrNotFound)
		}
	}
	return interpretError(errorf(err, "create webhook"))
}

// GetWebhook returns a webhook. ErrNotFound.
func (s *Store) GetWebhook(ctx context.Context, id string) (*rag.Webhook, error) {
	w, err := scanWebhook(s.pool.QueryRow(ctx, s.q(`SELECT `+webhookColumns+` FROM {S}.webhooks WHERE id = $1`), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("webhook %q: %w", id, rag.ErrNotFound)
	}
	return w, interpretError(errorf(err, "get webhook"))
}

// ListWebhooks returns the webhooks of a collection ("" for all), oldest first.
func (s *Store) ListWebhooks(ctx context.Context, collectionID string) ([]*rag.Webhook, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+webhookColumns+` FROM {S}.webhooks WHERE $1 = '' OR collection_id = $1
		ORDER BY created_at, id`), collectionID)
	if err != nil {
		return nil, interpretError(errorf(err, "list webhooks"))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.Webhook, error) { return scanWebhook(r) })
	if err != nil {
		return nil, interpretError(errorf(err, "list webhooks"))
	}
	if out == nil {
		out = []*rag.Webhook{}
	}
	return out, nil
}

// DeleteWebhook removes a webhook and its delivery log. ErrNotFound.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "webhooks", "webhook", id)
}

// deleteByID deletes the row id of table (whose rows cascade to what hangs on them); ErrNotFound names it
// as a kind.
func (s *Store) deleteByID(ctx context.Context, table, kind, id string) error {
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {S}.`+table+` WHERE id = $1`), id)
	if err != nil {
		return interpretError(errorf(err, "delete "+kind))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s %q: %w", kind, id, rag.ErrNotFound)
	}
	return nil
}

// WebhookSecret returns a webhook's secret in the clear. ErrNotFound.
func (s *Store) WebhookSecret(ctx context.Context, id string) ([]byte, error) {
	return s.openSealed(ctx, `SELECT secret, secret_key FROM {S}.webhooks WHERE id = $1`, "webhook", id)
}

// openSealed reads a sealed secret and its key ID of row id with query and opens it (nil for NULL);
// ErrNotFound names the row as a kind.
func (s *Store) openSealed(ctx context.Context, query, kind, id string) ([]byte, error) {
	var data []byte
	var keyID string
	err := s.pool.QueryRow(ctx, s.q(query), id).Scan(&data, &keyID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s %q: %w", kind, id, rag.ErrNotFound)
	}
	if err != nil || data == nil {
		return nil, interpretError(errorf(err, kind+" secret"))
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
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, s.q(`INSERT INTO {S}.webhook_deliveries (webhook_id, event_id, event, attempt, status_code, error,
			duration_ms, outcome, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`), d.WebhookID, d.EventID, d.Event,
			d.Attempt, d.StatusCode, d.Error, d.DurationMS, d.Outcome, d.CreatedAt).Scan(&d.ID)
		if err != nil {
			if errors.Is(interpretError(err), rag.ErrNotFound) {
				return fmt.Errorf("webhook %q: %w", d.WebhookID, rag.ErrNotFound)
			}
			return err
		}
		_, err = tx.Exec(ctx, s.q(`DELETE FROM {S}.webhook_deliveries WHERE webhook_id = $1 AND id <= (SELECT id FROM {S}.webhook_deliveries
			WHERE webhook_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)`), d.WebhookID, max(keep, 1))
		return err
	})
	return interpretError(errorf(err, "add webhook delivery"))
}

// WebhookDeliveries returns up to limit attempts of a webhook, newest first.
func (s *Store) WebhookDeliveries(ctx context.Context, webhookID string, limit int) ([]*rag.WebhookDelivery, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT id, webhook_id, event_id, event, attempt, status_code, error, duration_ms, outcome,
		created_at FROM {S}.webhook_deliveries WHERE webhook_id = $1 ORDER BY id DESC LIMIT $2`), webhookID, limit)
	if err != nil {
		return nil, interpretError(errorf(err, "webhook deliveries"))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.WebhookDelivery, error) {
		var d rag.WebhookDelivery
		err := r.Scan(&d.ID, &d.WebhookID, &d.EventID, &d.Event, &d.Attempt, &d.StatusCode, &d.Error, &d.DurationMS, &d.Outcome, &d.CreatedAt)
		d.CreatedAt = d.CreatedAt.UTC()
		return &d, err
	})
	if err != nil {
		return nil, interpretError(errorf(err, "webhook deliveries"))
	}
	if out == nil {
		out = []*rag.WebhookDelivery{}
	}
	return out, nil
}
