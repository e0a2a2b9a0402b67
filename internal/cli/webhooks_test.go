package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWebhooksCommands runs ragd webhooks: add to a receiver on loopback (allowed by the variable), list,
// ping, the delivery log, remove; and the usage errors, each limit at its boundary.
func TestWebhooksCommands(t *testing.T) {
	dir := t.TempDir()
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	t.Cleanup(receiver.Close)
	cli := cliIn(t, dir, map[string]string{"RAGD_WEBHOOK_ALLOW_PRIVATE": "true"})
	cli(2, "webhooks")
	cli(2, "webhooks", "hooks")
	cli(2, "webhooks", "add", receiver.URL) // no collection
	cli(2, "webhooks", "list")              // no collection
	cli(2, "webhooks", "remove")
	cli(2, "webhooks", "deliveries", "--limit", "0", "x")
	cli(2, "webhooks", "deliveries", "--limit", "1001", "x")
	cli(1, "webhooks", "add", "--collection", "nope", receiver.URL)
	doc := filepath.Join(t.TempDir(), "tides.md")
	if err := os.WriteFile(doc, []byte("# Tides\n\nNineteen spring tides in the bay."), 0o600); err != nil {
		t.Fatal(err)
	}
	cli(0, "ingest", "--collection", "harbour", doc)
	cli(1, "webhooks", "add", "--collection", "harbour", "--event", "document.deleted", receiver.URL)
	secret := strings.TrimSpace(cli(0, "webhooks", "add", "--collection", "harbour", "--event", "document.ready", "--description", "ops", receiver.URL))
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("add printed %q, want the secret", secret)
	}
	var list struct {
		Webhooks []struct {
			ID     string   `json:"id"`
			Events []string `json:"events"`
		} `json:"webhooks"`
	}
	out := cli(0, "webhooks", "list", "--collection", "harbour", "--json")
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Webhooks) != 1 || strings.Contains(out, secret) {
		t.Fatalf("list: %s (%v)", out, err)
	}
	id := list.Webhooks[0].ID
	if out := cli(0, "webhooks", "ping", id); !strings.Contains(out, "delivered HTTP 202") {
		t.Errorf("ping: %s", out)
	}
	if out := cli(0, "webhooks", "deliveries", "--limit", "1000", id); !strings.Contains(out, "ping") || !strings.Contains(out, "1 attempt(s)") {
		t.Errorf("deliveries: %s", out)
	}
	cli(0, "webhooks", "remove", id)
	cli(1, "webhooks", "remove", id)
	cli(1, "webhooks", "ping", id)
}
