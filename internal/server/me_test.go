package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

func TestMe(t *testing.T) {
	local := setup(t, nil)
	local.serve(t)
	local.run(t, []scenario{
		{name: "LocalMode", method: "GET", path: "/api/me", status: 200,
			contains: []string{`"principal":"local"`, `"admin":true`, `"keys_required":false`, `"scopes":["read","write","admin"]`}},
	})

	b := setupUsers(t)
	admin := bearer(testAdminKey)
	var key struct {
		Key string `json:"key"`
	}
	b.run(t, []scenario{
		{name: "CreateTeam", method: "POST", path: "/api/admin/teams", headers: admin, body: jsonBody(map[string]any{"name": "eng"}), status: 201},
		{name: "CreateUser", method: "POST", path: "/api/admin/users", headers: admin, body: jsonBody(map[string]any{"name": "mina", "team": "eng"}), status: 201},
		{name: "CreateKey", method: "POST", path: "/api/admin/keys", headers: admin, body: jsonBody(map[string]any{"user": "mina", "scopes": []string{"read"}}), status: 201,
			check: func(t *testing.T, _ *http.Response, body []byte) {
				if err := json.Unmarshal(body, &key); err != nil || key.Key == "" {
					t.Fatalf("created key %s", body)
				}
			}},
		{name: "ConfiguredKey", method: "GET", path: "/api/me", headers: admin, status: 200,
			contains: []string{`"principal":"key:`, `"admin":true`, `"keys_required":true`}, notContains: []string{`"user"`}},
		{name: "NoKey", method: "GET", path: "/api/me", status: 401, code: rag.CodeUnauthorized},
	})
	b.run(t, []scenario{
		{name: "ReadKey", method: "GET", path: "/api/me", headers: bearer(key.Key), status: 200,
			contains:    []string{`"principal":"user:mina"`, `"user":"mina"`, `"teams":["eng"]`, `"scopes":["read"]`, `"admin":false`},
			notContains: []string{key.Key}},
	})
}

// TestGrantsWritable: the grants say whether the key asking may change them — the document page's share button.
func TestGrantsWritable(t *testing.T) {
	b := setupUsers(t)
	admin := bearer(testAdminKey)
	var key struct {
		Key string `json:"key"`
	}
	var doc struct {
		ID        string `json:"id"`
		Documents []struct {
			ID string `json:"id"`
		} `json:"documents"`
	}
	b.run(t, []scenario{
		{name: "CreateUser", method: "POST", path: "/api/admin/users", headers: admin, body: jsonBody(map[string]any{"name": "mina"}), status: 201},
		{name: "CreateKey", method: "POST", path: "/api/admin/keys", headers: admin, body: jsonBody(map[string]any{"user": "mina", "scopes": []string{"read", "write"}}), status: 201,
			check: func(t *testing.T, _ *http.Response, body []byte) { _ = json.Unmarshal(body, &key) }},
		{name: "Upload", method: "POST", path: "/api/documents", headers: admin, body: jsonBody(map[string]any{"title": "t", "text": "some text"}), status: 202,
			check: func(t *testing.T, _ *http.Response, body []byte) { _ = json.Unmarshal(body, &doc) }},
	})
	id := doc.ID
	if id == "" && len(doc.Documents) > 0 {
		id = doc.Documents[0].ID
	}
	if id == "" || key.Key == "" {
		t.Fatalf("no document or key: %+v %q", doc, key.Key)
	}
	mina := bearer(key.Key)
	b.run(t, []scenario{
		{name: "AdminMayWrite", method: "GET", path: "/api/documents/" + id + "/grants", headers: admin, status: 200, contains: []string{`"writable":true`}},
		{name: "GrantRead", method: "PUT", path: "/api/documents/" + id + "/grants", headers: admin, body: jsonBody(map[string]any{"read": []string{"user:mina"}}), status: 200, contains: []string{`"writable":true`}},
		{name: "ReaderMayNot", method: "GET", path: "/api/documents/" + id + "/grants", headers: mina, status: 200, contains: []string{`"writable":false`, `"user:mina"`}},
		{name: "GrantWrite", method: "PUT", path: "/api/documents/" + id + "/grants", headers: admin, body: jsonBody(map[string]any{"write": []string{"user:mina"}}), status: 200},
		{name: "WriterMay", method: "GET", path: "/api/documents/" + id + "/grants", headers: mina, status: 200, contains: []string{`"writable":true`}},
		{name: "WriterDropsOwnGrant", method: "PUT", path: "/api/documents/" + id + "/grants", headers: mina, body: jsonBody(map[string]any{"read": []string{"user:mina"}}), status: 200,
			contains: []string{`"writable":false`}},
	})
}
