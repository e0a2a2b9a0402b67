package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// webhookStore returns the store's rag.WebhookStore; every store implements it.
func webhookStore(t *testing.T, s rag.Store) rag.WebhookStore {
	t.Helper()
	ws, ok := s.(rag.WebhookStore)
	if !ok {
		t.Fatalf("%T does not implement rag.WebhookStore", s)
	}
	return ws
}

func testWebhooks(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("CreateGetListDelete", func(t *testing.T) {
		s := open(t)
		ws := webhookStore(t, s)
		ctx := t.Context()
		c := mustCollection(t, s, "papers")
		other := mustCollection(t, s, "other")
		w := &rag.Webhook{CollectionID: c.ID, URL: "https://hooks.example.com/ragd", Events: []string{rag.EventDocumentReady, rag.EventQuestionAnswered},
			Description: "ops channel", Owner: alice.ID}
		if err := ws.CreateWebhook(ctx, w, []byte("whsec_one")); err != nil {
			t.Fatal(err)
		}
		if w.ID == "" || w.CreatedAt.IsZero() {
			t.Fatalf("created %+v", w)
		}
		w2 := &rag.Webhook{CollectionID: other.ID, URL: "https://other.example.com/", Events: []string{rag.EventDocumentFailed}, Owner: bob.ID}
		if err := ws.CreateWebhook(ctx, w2, []byte("whsec_two")); err != nil {
			t.Fatal(err)
		}
		got, err := ws.GetWebhook(ctx, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.URL != w.URL || !slices.Equal(got.Events, w.Events) || got.Description != "ops channel" || got.Owner != alice.ID ||
			got.CollectionID != c.ID || !got.CreatedAt.Equal(w.CreatedAt) {
			t.Errorf("GetWebhook = %+v, want %+v", got, w)
		}
		if sec, err := ws.WebhookSecret(ctx, w.ID); err != nil || string(sec) != "whsec_one" {
			t.Errorf("WebhookSecret = %q, %v", sec, err)
		}
		if list, err := ws.ListWebhooks(ctx, c.ID); err != nil || len(list) != 1 || list[0].ID != w.ID {
			t.Errorf("ListWebhooks(papers) = %v, %v", list, err)
		}
		if list, err := ws.ListWebhooks(ctx, ""); err != nil || len(list) != 2 {
			t.Errorf("ListWebhooks(all) = %v, %v", list, err)
		}
		if list, err := ws.ListWebhooks(ctx, "no-such-collection"); err != nil || list == nil || len(list) != 0 {
			t.Errorf("ListWebhooks(unknown) = %v, %v; want an empty list", list, err)
		}
		if err := ws.DeleteWebhook(ctx, w.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := ws.GetWebhook(ctx, w.ID); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("GetWebhook after delete: %v", err)
		}
		if _, err := ws.WebhookSecret(ctx, w.ID); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("WebhookSecret after delete: %v", err)
		}
		if err := ws.DeleteWebhook(ctx, w.ID); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("DeleteWebhook twice: %v", err)
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		s := open(t)
		ws := webhookStore(t, s)
		err := ws.CreateWebhook(t.Context(), &rag.Webhook{CollectionID: "no-such-collection", URL: "https://x.example/", Events: []string{rag.EventDocumentReady},
			Owner: alice.ID}, []byte("s"))
		if !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("CreateWebhook in an unknown collection: %v", err)
		}
		if _, err := ws.GetWebhook(t.Context(), "nope"); !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("GetWebhook(nope): %v", err)
		}
		err = ws.AddWebhookDelivery(t.Context(), &rag.WebhookDelivery{WebhookID: "nope", EventID: "e", Event: rag.EventPing, Attempt: 1,
			Outcome: rag.DeliveryDelivered}, 10)
		if !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("AddWebhookDelivery to an unknown webhook: %v", err)
		}
	})

	t.Run("Deliveries", func(t *testing.T) {
		s := open(t)
		ws := webhookStore(t, s)
		ctx := t.Context()
		c := mustCollection(t, s, "papers")
		w := &rag.Webhook{CollectionID: c.ID, URL: "https://hooks.example.com/", Events: []string{rag.EventDocumentReady}, Owner: alice.ID}
		if err := ws.CreateWebhook(ctx, w, []byte("k")); err != nil {
			t.Fatal(err)
		}
		// Five attempts with keep = 3: the log holds the newest three, newest first.
		for i := 1; i <= 5; i++ {
			d := &rag.WebhookDelivery{WebhookID: w.ID, EventID: "evt-1", Event: rag.EventDocumentReady, Attempt: i, StatusCode: 500,
				Error: "HTTP 500", DurationMS: int64(10 * i), Outcome: rag.DeliveryRetrying}
			if i == 5 {
				d.StatusCode, d.Error, d.Outcome = 200, "", rag.DeliveryDelivered
			}
			if err := ws.AddWebhookDelivery(ctx, d, 3); err != nil {
				t.Fatal(err)
			}
			if d.ID == 0 || d.CreatedAt.IsZero() {
				t.Fatalf("delivery %d not assigned an ID and time: %+v", i, d)
			}
		}
		got, err := ws.WebhookDeliveries(ctx, w.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		var attempts []int
		for _, d := range got {
			attempts = append(attempts, d.Attempt)
		}
		if !slices.Equal(attempts, []int{5, 4, 3}) {
			t.Fatalf("attempts kept %v, want [5 4 3]", attempts)
		}
		if d := got[0]; d.StatusCode != 200 || d.Outcome != rag.DeliveryDelivered || d.DurationMS != 50 || d.EventID != "evt-1" ||
			d.Event != rag.EventDocumentReady || d.Error != "" || d.WebhookID != w.ID {
			t.Errorf("newest delivery %+v", d)
		}
		if d := got[1]; d.StatusCode != 500 || d.Error != "HTTP 500" || d.Outcome != rag.DeliveryRetrying {
			t.Errorf("second delivery %+v", d)
		}
		if got, err := ws.WebhookDeliveries(ctx, w.ID, 1); err != nil || len(got) != 1 || got[0].Attempt != 5 {
			t.Errorf("WebhookDeliveries limit 1 = %v, %v", got, err)
		}
		// Another webhook's log is its own: keep counts per webhook.
		w2 := &rag.Webhook{CollectionID: c.ID, URL: "https://two.example.com/", Events: []string{rag.EventDocumentReady}, Owner: alice.ID}
		if err := ws.CreateWebhook(ctx, w2, []byte("k2")); err != nil {
			t.Fatal(err)
		}
		if err := ws.AddWebhookDelivery(ctx, &rag.WebhookDelivery{WebhookID: w2.ID, EventID: "evt-2", Event: rag.EventPing, Attempt: 1,
			StatusCode: 204, Outcome: rag.DeliveryDelivered}, 3); err != nil {
			t.Fatal(err)
		}
		if got, _ := ws.WebhookDeliveries(ctx, w.ID, 10); len(got) != 3 {
			t.Errorf("first webhook's log has %d attempts after the second's delivery, want 3", len(got))
		}
		// Deleting the webhook deletes its log.
		if err := ws.DeleteWebhook(ctx, w.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := ws.WebhookDeliveries(ctx, w.ID, 10); err != nil || len(got) != 0 {
			t.Errorf("log after delete = %v, %v", got, err)
		}
	})
}
