package server

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/audit"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/webhooks"
)

// TestWebhooksAccess: webhooks need write access to the collection (and sight of all of it to add one);
// the secret is in the answer of POST only; ping, deliveries and remove work on the collection's own
// webhooks; adding, pinging and removing are audited.
func TestWebhooksAccess(t *testing.T) {
	b := setupUsers(t)
	b.deps.Webhooks = webhooks.New(b.store, nil, webhooks.Options{AllowPrivate: true})
	withAudit(t, b)
	teamCollections(t, b)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	t.Cleanup(receiver.Close)
	lead := bearer(userKey(t, b, "olive", "eng", rag.RoleAdmin, rag.ScopeRead, rag.ScopeWrite))
	member := bearer(userKey(t, b, "mina", "eng", rag.RoleMember, rag.ScopeRead, rag.ScopeWrite))
	leadReadOnly := bearer(userKey(t, b, "otto", "eng", rag.RoleAdmin, rag.ScopeRead))
	admin := bearer(testAdminKey)

	spec := map[string]any{"url": receiver.URL + "/ragd", "events": []string{"document.ready", "question.answered"}, "description": "ops"}
	var hook struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	list := "/api/collections/handbook/webhooks"
	b.run(t, []scenario{
		{name: "MemberAddsNothing", method: "POST", path: list, headers: member, body: jsonBody(spec), status: 403, code: rag.CodeForbidden},
		{name: "ReadKeyAddsNothing", method: "POST", path: list, headers: leadReadOnly, body: jsonBody(spec), status: 403, code: rag.CodeForbidden},
		{name: "BadEvent", method: "POST", path: list, headers: lead, body: jsonBody(map[string]any{"url": receiver.URL, "events": []string{"document.gone"}}),
			status: 400, code: rag.CodeInvalid},
		{name: "NoURL", method: "POST", path: list, headers: lead, body: jsonBody(map[string]any{}), status: 400, code: rag.CodeInvalid},
		{name: "UnknownCollection", method: "POST", path: "/api/collections/nope/webhooks", headers: admin, body: jsonBody(spec), status: 404, code: rag.CodeNotFound},
		{name: "LeadAdds", method: "POST", path: list, headers: lead, body: jsonBody(spec), status: 201,
			contains: []string{`"secret":"whsec_`, `"events":["document.ready","question.answered"]`},
			check: func(t *testing.T, _ *http.Response, body []byte) {
				if err := json.Unmarshal(body, &hook); err != nil || hook.ID == "" || hook.Secret == "" {
					t.Fatalf("added %s", body)
				}
			}},
	})
	one := list + "/" + hook.ID
	b.run(t, []scenario{
		{name: "LeadLists", method: "GET", path: list, headers: lead, status: 200, contains: []string{hook.ID, `"events":["document.ready"`},
			notContains: []string{hook.Secret, `"secret"`}},
		{name: "MemberListsNothing", method: "GET", path: list, headers: member, status: 403, code: rag.CodeForbidden},
		{name: "ReadKeyListsNothing", method: "GET", path: list, headers: leadReadOnly, status: 403, code: rag.CodeForbidden},
		{name: "Ping", method: "POST", path: one + "/ping", headers: lead, status: 200, contains: []string{`"outcome":"delivered"`, `"status_code":202`, `"event":"ping"`}},
		{name: "MemberDoesNotPing", method: "POST", path: one + "/ping", headers: member, status: 403, code: rag.CodeForbidden},
		{name: "Deliveries", method: "GET", path: one + "/deliveries?limit=1000", headers: lead, status: 200, contains: []string{`"attempt":1`, `"status_code":202`},
			notContains: []string{hook.Secret}},
		{name: "DeliveriesLimit0", method: "GET", path: one + "/deliveries?limit=0", headers: lead, status: 400, code: rag.CodeInvalid},
		{name: "DeliveriesLimit1001", method: "GET", path: one + "/deliveries?limit=1001", headers: lead, status: 400, code: rag.CodeInvalid},
		{name: "WrongCollection", method: "GET", path: "/api/collections/private/webhooks/" + hook.ID + "/deliveries", headers: admin, status: 404, code: rag.CodeNotFound},
		{name: "MemberDoesNotRemove", method: "DELETE", path: one, headers: member, status: 403, code: rag.CodeForbidden},
		{name: "LeadRemoves", method: "DELETE", path: one, headers: lead, status: 204},
		{name: "Gone", method: "POST", path: one + "/ping", headers: lead, status: 404, code: rag.CodeNotFound},
	})
	wanted := []string{"webhook.added ok user:olive", "webhook.ping ok user:olive", "webhook.removed ok user:olive",
		"webhook.removed denied user:mina"}
	events, got := waitAudit(t, b, audit.Query{Target: hook.ID}, func(e audit.Event) string { return e.Action + " " + e.Outcome + " " + e.Principal }, wanted...)
	for _, want := range wanted {
		if _, ok := got[want]; !ok {
			t.Errorf("no audit event %q among %v", want, slices.Collect(maps.Keys(got)))
		}
	}
	for _, e := range events {
		if strings.Contains(e.Detail, hook.Secret) {
			t.Errorf("the audit log holds the secret: %+v", e)
		}
	}
}
