package server

import (
	"context"
	"net/http"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/webhooks"
)

// Webhooks registers collections' webhooks and shows their delivery logs (*webhooks.Service implements it;
// docs/integrations.md "Webhooks").
type Webhooks interface {
	Add(ctx context.Context, req webhooks.AddRequest) (*webhooks.Added, error)
	List(ctx context.Context, collection string) ([]*rag.Webhook, error)
	Remove(ctx context.Context, collection, id string) error
	Deliveries(ctx context.Context, collection, id string, limit int) ([]*rag.WebhookDelivery, error)
	Ping(ctx context.Context, collection, id string) (*rag.WebhookDelivery, error)
}

// maxWebhookBody bounds the body of POST …/webhooks.
const maxWebhookBody = 16 << 10

// webhookAccess checks that the request may manage the collection's webhooks: write access on it. It
// answers the error itself and reports false when not.
func (s *Server) webhookAccess(w http.ResponseWriter, r *http.Request) bool {
	if s.deps.Webhooks == nil {
		s.writeError(w, r, rag.Errorf(rag.CodeNotFound, "this server sends no webhooks"))
		return false
	}
	if err := s.mayWriteCollection(r.Context(), principalOf(r), r.PathValue("name")); err != nil {
		s.writeError(w, r, err)
		return false
	}
	return true
}

// handleAddWebhook is POST /api/collections/{name}/webhooks: {"url", "events", "description"}. 201 with the
// webhook and its secret, which is shown this once. A webhook's events tell what is in the collection, so
// its author must see the whole collection too.
func (s *Server) handleAddWebhook(w http.ResponseWriter, r *http.Request) {
	if !s.webhookAccess(w, r) {
		return
	}
	p, name := principalOf(r), r.PathValue("name")
	if err := s.mayReadWhole(r.Context(), p, name); err != nil {
		s.writeError(w, r, err)
		return
	}
	var body struct {
		URL         string   `json:"url"`
		Events      []string `json:"events"`
		Description string   `json:"description"`
	}
	if err := decodeJSON(w, r, maxWebhookBody, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	added, err := s.deps.Webhooks.Add(r.Context(), webhooks.AddRequest{Collection: name, URL: body.URL, Events: body.Events,
		Description: body.Description, Owner: p.ID})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	noteTarget(r, added.ID)
	writeJSON(w, http.StatusCreated, added)
}

// handleListWebhooks is GET /api/collections/{name}/webhooks: the webhooks, never their secrets, and the
// events they may subscribe to.
func (s *Server) handleListWebhooks(w http.ResponseWriter, r *http.Request) {
	if !s.webhookAccess(w, r) {
		return
	}
	list, err := s.deps.Webhooks.List(r.Context(), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"webhooks": list, "events": rag.WebhookEvents})
}

// handleDeleteWebhook is DELETE /api/collections/{name}/webhooks/{id}: the webhook and its delivery log go;
// its queued deliveries stop.
func (s *Server) handleDeleteWebhook(w http.ResponseWriter, r *http.Request) {
	if !s.webhookAccess(w, r) {
		return
	}
	if err := s.deps.Webhooks.Remove(r.Context(), r.PathValue("name"), r.PathValue("id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	noteTarget(r, r.PathValue("id"))
	w.WriteHeader(http.StatusNoContent)
}

// handleWebhookDeliveries is GET /api/collections/{name}/webhooks/{id}/deliveries?limit=: the delivery log,
// newest attempt first (limit 1–1000, default 50).
func (s *Server) handleWebhookDeliveries(w http.ResponseWriter, r *http.Request) {
	if !s.webhookAccess(w, r) {
		return
	}
	limit, err := queryInt(r, "limit", 50, 1, webhooks.MaxDeliveriesListed)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	list, err := s.deps.Webhooks.Deliveries(r.Context(), r.PathValue("name"), r.PathValue("id"), limit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": list})
}

// handlePingWebhook is POST /api/collections/{name}/webhooks/{id}/ping: a signed "ping" event now, once;
// 200 with the attempt as logged (its status_code and error say how the receiver answered).
func (s *Server) handlePingWebhook(w http.ResponseWriter, r *http.Request) {
	if !s.webhookAccess(w, r) {
		return
	}
	d, err := s.deps.Webhooks.Ping(r.Context(), r.PathValue("name"), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	noteTarget(r, r.PathValue("id"))
	writeJSON(w, http.StatusOK, d)
}
