package rag

import (
	"context"
	"encoding/json"
	"time"
)

// Webhook events (docs/integrations.md "Webhooks"): what a collection's webhooks can subscribe to.
const (
	// EventDocumentReady is sent when a document's new version has been indexed.
	EventDocumentReady = "document.ready"
	// EventDocumentFailed is sent when a document's new version failed for good (after its retries).
	EventDocumentFailed = "document.failed"
	// EventQuestionAnswered is sent when a question of the collection's Q&A board gets an answer (the AI's
	// or a person's).
	EventQuestionAnswered = "question.answered"
	// EventPing is sent only by a test ping (POST …/webhooks/{id}/ping), whatever the webhook subscribes to.
	EventPing = "ping"
)

// WebhookEvents are the events a webhook may subscribe to, in the order the docs list them.
var WebhookEvents = []string{EventDocumentReady, EventDocumentFailed, EventQuestionAnswered}

// Webhook is a URL that a collection's events are POSTed to, signed with the webhook's secret.
type Webhook struct {
	ID           string `json:"id"`
	CollectionID string `json:"collection_id"`
	URL          string `json:"url"`
	// Events are the events it receives (a subset of WebhookEvents, never empty).
	Events      []string `json:"events"`
	Description string   `json:"description,omitempty"`
	// Owner is the principal that registered it.
	Owner     string    `json:"owner"`
	CreatedAt time.Time `json:"created_at"`
}

// WebhookEvent is one event bound for one webhook: what a delivery job carries. Its body is built at each
// attempt from these fields and the time of sending.
type WebhookEvent struct {
	WebhookID string `json:"webhook_id"`
	// ID names the event; it is the same for every webhook and every attempt (receivers de-duplicate by it).
	ID        string    `json:"id"`
	Event     string    `json:"event"`
	CreatedAt time.Time `json:"created_at"`
	// Collection is the collection's ID and name.
	CollectionID   string `json:"collection_id"`
	CollectionName string `json:"collection_name"`
	// Data is the event's object: {"document": …} or {"question": …, "answer": …}.
	Data json.RawMessage `json:"data"`
}

// Outcomes of one delivery attempt (WebhookDelivery.Outcome).
const (
	DeliveryDelivered = "delivered" // the receiver answered 2xx
	DeliveryRetrying  = "retrying"  // it failed and will be tried again
	DeliveryFailed    = "failed"    // it failed and was the last try
)

// WebhookDelivery is one attempt at delivering one event to one webhook: the delivery log.
type WebhookDelivery struct {
	ID        int64  `json:"id"`
	WebhookID string `json:"webhook_id"`
	// EventID is the event's ID (the X-Ragd-Event-Id header), the same in every attempt of one event.
	EventID string `json:"event_id"`
	Event   string `json:"event"`
	// Attempt counts from 1.
	Attempt int `json:"attempt"`
	// StatusCode is the receiver's HTTP status (0 when there was no response: refused, timed out…).
	StatusCode int       `json:"status_code"`
	Error      string    `json:"error,omitempty"`
	DurationMS int64     `json:"duration_ms"`
	Outcome    string    `json:"outcome"`
	CreatedAt  time.Time `json:"created_at"`
}

// WebhookStore keeps webhooks, their sealed secrets and their delivery logs (both stores implement it and
// pass internal/store/storetest). Errors: ErrNotFound for an unknown webhook or collection; CodeDBError.
type WebhookStore interface {
	// CreateWebhook stores w (ID and CreatedAt assigned) with its secret, sealed with the store's data key
	// when it has one. ErrNotFound when w.CollectionID does not exist.
	CreateWebhook(ctx context.Context, w *Webhook, secret []byte) error
	// GetWebhook returns a webhook. ErrNotFound.
	GetWebhook(ctx context.Context, id string) (*Webhook, error)
	// ListWebhooks returns the webhooks of a collection ("" for every collection), oldest first.
	ListWebhooks(ctx context.Context, collectionID string) ([]*Webhook, error)
	// DeleteWebhook removes a webhook and its delivery log. ErrNotFound.
	DeleteWebhook(ctx context.Context, id string) error
	// WebhookSecret returns a webhook's secret in the clear. ErrNotFound.
	WebhookSecret(ctx context.Context, id string) ([]byte, error)
	// AddWebhookDelivery records an attempt (ID and CreatedAt assigned) and keeps only the newest keep
	// attempts of its webhook. ErrNotFound when the webhook is gone.
	AddWebhookDelivery(ctx context.Context, d *WebhookDelivery, keep int) error
	// WebhookDeliveries returns up to limit attempts of a webhook, newest first.
	WebhookDeliveries(ctx context.Context, webhookID string, limit int) ([]*WebhookDelivery, error)
}
