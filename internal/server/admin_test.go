package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/access"
	"github.com/ragd/ragd/internal/rag"
)

const testAdminKey = "configured-admin-key"

// setupUsers serves a store that keeps users, with one configured admin key.
func setupUsers(t *testing.T) *bundle {
	t.Helper()
	b := setup(t, func(s *Settings) { s.APIKeys = []string{testAdminKey} })
	b.deps.Principals, b.deps.Access = b.store, b.store
	b.serve(t)
	return b
}

func bearer(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

func TestAdminRoutes(t *testing.T) {
	b := setupUsers(t)
	admin := bearer(testAdminKey)
	var made struct {
		Key    string `json:"key"`
		Prefix string `json:"prefix"`
	}
	b.run(t, []scenario{
		{name: "CreateTeam", method: "POST", path: "/api/admin/teams", headers: admin, body: jsonBody(map[string]any{"name": "eng"}), status: 201, contains: []string{`"name":"eng"`}},
		{name: "TeamExists", method: "POST", path: "/api/admin/teams", headers: admin, body: jsonBody(map[string]any{"name": "eng"}), status: 409, code: rag.CodeConflict},
		{name: "BadTeamName", method: "POST", path: "/api/admin/teams", headers: admin, body: jsonBody(map[string]any{"name": "a b"}), status: 400, code: rag.CodeInvalid},
		{name: "CreateUserInTeam", method: "POST", path: "/api/admin/users", headers: admin, body: jsonBody(map[string]any{"name": "olive", "team": "eng", "role": "admin"}), status: 201, contains: []string{`"teams":["eng"]`}},
		{name: "UserExists", method: "POST", path: "/api/admin/users", headers: admin, body: jsonBody(map[string]any{"name": "olive"}), status: 409, code: rag.CodeConflict},
		{name: "UnknownTeamCreatesNoUser", method: "POST", path: "/api/admin/users", headers: admin, body: jsonBody(map[string]any{"name": "mina", "team": "ops"}), status: 404, code: rag.CodeNotFound},
		{name: "Members", method: "GET", path: "/api/admin/teams/eng/members", headers: admin, status: 200, contains: []string{`"user":"olive"`, `"role":"admin"`}},
		{name: "Join", method: "PUT", path: "/api/admin/teams/eng/members/olive", headers: admin, body: jsonBody(map[string]any{"role": "member"}), status: 200, contains: []string{`"role":"member"`}},
		{name: "Users", method: "GET", path: "/api/admin/users", headers: admin, status: 200, contains: []string{`"olive"`}, notContains: []string{`"mina"`}},
		{name: "BadScope", method: "POST", path: "/api/admin/keys", headers: admin, body: jsonBody(map[string]any{"user": "olive", "scopes": []string{"root"}}), status: 400, code: rag.CodeInvalid},
		{name: "BadExpiry", method: "POST", path: "/api/admin/keys", headers: admin, body: jsonBody(map[string]any{"user": "olive", "scopes": []string{"read"}, "expires_in": "-1h"}), status: 400, code: rag.CodeInvalid},
		{name: "KeyOfUnknownUser", method: "POST", path: "/api/admin/keys", headers: admin, body: jsonBody(map[string]any{"user": "zed", "scopes": []string{"read"}}), status: 404, code: rag.CodeNotFound},
		{name: "CreateKey", method: "POST", path: "/api/admin/keys", headers: admin, body: jsonBody(map[string]any{"user": "olive", "scopes": []string{"read"}, "expires_in": "24h"}), status: 201,
			check: func(t *testing.T, _ *http.Response, body []byte) {
				if err := json.Unmarshal(body, &made); err != nil || !strings.HasPrefix(made.Key, made.Prefix+"_") || !strings.Contains(string(body), `"expires_at"`) {
					t.Fatalf("created key %s", body)
				}
			}},
	})
	olive := bearer(made.Key)
	b.run(t, []scenario{
		{name: "KeysListPrefixOnly", method: "GET", path: "/api/admin/keys", headers: admin, status: 200, contains: []string{made.Prefix}, notContains: []string{made.Key}},
		{name: "ReadKeyReads", method: "GET", path: "/api/documents", headers: olive, status: 200},
		{name: "ReadKeyNotAdmin", method: "GET", path: "/api/admin/users", headers: olive, status: 403, code: rag.CodeForbidden},
		{name: "ReadKeyNoUpload", method: "POST", path: "/api/documents", headers: olive, body: jsonBody(map[string]any{"title": "t", "text": "x"}), status: 403, code: rag.CodeForbidden},
		{name: "ReadKeySearches", method: "POST", path: "/api/search", headers: olive, body: jsonBody(map[string]any{"query": "anything"}), status: 200},
		{name: "UnknownKey", method: "GET", path: "/api/documents", headers: bearer("ragd_000000000000_nothing"), status: 401, code: rag.CodeUnauthorized},
		{name: "NoKey", method: "GET", path: "/api/documents", status: 401, code: rag.CodeUnauthorized},
		{name: "Disable", method: "PUT", path: "/api/admin/users/olive", headers: admin, body: jsonBody(map[string]any{"disabled": true}), status: 200},
		{name: "DisabledUsersKey", method: "GET", path: "/api/documents", headers: olive, status: 401, code: rag.CodeUnauthorized},
		{name: "Enable", method: "PUT", path: "/api/admin/users/olive", headers: admin, body: jsonBody(map[string]any{"disabled": false}), status: 200},
		{name: "EnabledAgain", method: "GET", path: "/api/documents", headers: olive, status: 200},
		{name: "DisableUnknown", method: "PUT", path: "/api/admin/users/zed", headers: admin, body: jsonBody(map[string]any{"disabled": true}), status: 404, code: rag.CodeNotFound},
		{name: "Revoke", method: "DELETE", path: "/api/admin/keys/" + made.Prefix, headers: admin, status: 200, contains: []string{`"revoked_at"`}},
		{name: "RevokedKey", method: "GET", path: "/api/documents", headers: olive, status: 401, code: rag.CodeUnauthorized},
		{name: "RevokeUnknown", method: "DELETE", path: "/api/admin/keys/ragd_ffffffffffff", headers: admin, status: 404, code: rag.CodeNotFound},
		{name: "CreateCollection", method: "POST", path: "/api/collections", headers: admin, body: jsonBody(map[string]any{"name": "handbook", "owner": "team:eng", "visibility": "team"}), status: 201,
			contains: []string{`"owner":"team:eng"`, `"visibility":"team"`}},
		{name: "CollectionOfUnknownOwner", method: "POST", path: "/api/collections", headers: admin, body: jsonBody(map[string]any{"name": "x", "owner": "team:ops"}), status: 404, code: rag.CodeNotFound},
		{name: "CollectionAccess", method: "PUT", path: "/api/collections/handbook/access", headers: admin, body: jsonBody(map[string]any{"visibility": "public"}), status: 200,
			contains: []string{`"owner":"team:eng"`, `"visibility":"public"`}},
		{name: "CollectionAccessBad", method: "PUT", path: "/api/collections/handbook/access", headers: admin, body: jsonBody(map[string]any{"owner": "eng"}), status: 400, code: rag.CodeInvalid},
		{name: "CollectionAccessEmpty", method: "PUT", path: "/api/collections/handbook/access", headers: admin, body: jsonBody(map[string]any{}), status: 400, code: rag.CodeInvalid},
		{name: "CollectionAccessUnknown", method: "PUT", path: "/api/collections/nothing/access", headers: admin, body: jsonBody(map[string]any{"visibility": "team"}), status: 404, code: rag.CodeNotFound},
	})
}

// TestStoredKeyClosesAPI: a server started open (no key anywhere) requires keys once one is stored.
func TestStoredKeyClosesAPI(t *testing.T) {
	b := setup(t, nil)
	b.deps.Principals, b.deps.Access = b.store, b.store
	b.serve(t)
	b.run(t, []scenario{{name: "Open", method: "GET", path: "/api/documents", status: 200}})
	if err := b.store.CreateUser(t.Context(), &rag.User{Name: "olive"}); err != nil {
		t.Fatal(err)
	}
	key, _, err := access.CreateKey(t.Context(), b.store, "olive", []rag.Scope{rag.ScopeRead}, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The server asks the store at most once a second.
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, _ := b.do(t, request{method: "GET", path: "/api/documents"})
		if resp.StatusCode == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still open 5 s after a key was stored: %d", resp.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.run(t, []scenario{{name: "WithKey", method: "GET", path: "/api/documents", headers: bearer(key), status: 200}})
}

func TestRequiredScope(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         rag.Scope
	}{
		{"GET", "/api/documents", rag.ScopeRead},
		{"GET", "/api/admin/users", rag.ScopeAdmin},
		{"POST", "/api/search", rag.ScopeRead},
		{"POST", "/api/chat", rag.ScopeRead},
		{"POST", "/api/feedback", rag.ScopeRead},
		{"DELETE", "/api/feedback/x", rag.ScopeRead},
		{"POST", "/api/documents", rag.ScopeWrite},
		{"PUT", "/api/documents/x/grants", rag.ScopeWrite},
		{"DELETE", "/api/documents/x", rag.ScopeWrite},
		{"POST", "/api/questions", rag.ScopeWrite},
		{"POST", "/api/collections", rag.ScopeAdmin},
		{"PUT", "/api/collections/x", rag.ScopeAdmin},
		{"POST", "/api/collections/x/graph", rag.ScopeAdmin},
		{"GET", "/api/collections/x/graph", rag.ScopeRead},
		{"POST", "/api/qa/runs", rag.ScopeAdmin},
		{"GET", "/api/qa/runs", rag.ScopeAdmin},
		{"POST", "/api/searchx", rag.ScopeWrite},
		{"POST", "/api/conversations", rag.ScopeRead},
		{"PATCH", "/api/conversations/x", rag.ScopeRead},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		if got := requiredScope(r); got != tc.want {
			t.Errorf("%s %s needs %s, want %s", tc.method, tc.path, got, tc.want)
		}
	}
}

// TestRemoveTeamMember: taking a user out of a team (DELETE …/members/{user}) closes the team's
// collection to the user's key on its next request; a role change shows in the members; removing a
// non-member is 404 and only admins may do either.
func TestRemoveTeamMember(t *testing.T) {
	b := setupUsers(t)
	admin := bearer(testAdminKey)
	b.run(t, []scenario{
		{name: "CreateTeam", method: "POST", path: "/api/admin/teams", headers: admin, body: jsonBody(map[string]any{"name": "eng"}), status: 201},
		{name: "CreateUser", method: "POST", path: "/api/admin/users", headers: admin, body: jsonBody(map[string]any{"name": "mina", "team": "eng"}), status: 201},
		{name: "CreateCollection", method: "POST", path: "/api/collections", headers: admin, body: jsonBody(map[string]any{"name": "handbook", "owner": "team:eng"}), status: 201},
	})
	key, _, err := access.CreateKey(t.Context(), b.store, "mina", []rag.Scope{rag.ScopeRead}, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	mina := bearer(key)
	var up struct {
		Documents []struct {
			ID string `json:"id"`
		} `json:"documents"`
	}
	resp, body := b.do(t, request{method: "POST", path: "/api/documents", headers: admin, ctype: "application/json",
		body: strings.NewReader(`{"title": "Leave policy", "text": "Leave is booked two weeks ahead.", "collection": "handbook"}`)})
	if resp.StatusCode >= 300 || json.Unmarshal(body, &up) != nil || len(up.Documents) != 1 {
		t.Fatalf("upload: %d %s", resp.StatusCode, body)
	}
	doc := up.Documents[0]
	b.run(t, []scenario{
		{name: "MemberReads", method: "GET", path: "/api/documents/" + doc.ID, headers: mina, status: 200},
		{name: "NotAdmin", method: "DELETE", path: "/api/admin/teams/eng/members/mina", headers: mina, status: 403, code: rag.CodeForbidden},
		{name: "MakeAdmin", method: "PUT", path: "/api/admin/teams/eng/members/mina", headers: admin, body: jsonBody(map[string]any{"role": "admin"}), status: 200},
		{name: "RoleShown", method: "GET", path: "/api/admin/teams/eng/members", headers: admin, status: 200, contains: []string{`{"team":"eng","user":"mina","role":"admin"}`}},
		{name: "Remove", method: "DELETE", path: "/api/admin/teams/eng/members/mina", headers: admin, status: 204},
		{name: "RemovedReadsNot", method: "GET", path: "/api/documents/" + doc.ID, headers: mina, status: 404, code: rag.CodeNotFound},
		{name: "RemovedListsNot", method: "GET", path: "/api/documents", headers: mina, status: 200, notContains: []string{doc.ID, "Leave policy"}},
		{name: "GoneFromMembers", method: "GET", path: "/api/admin/teams/eng/members", headers: admin, status: 200, notContains: []string{`"mina"`}},
		{name: "RemoveAgain", method: "DELETE", path: "/api/admin/teams/eng/members/mina", headers: admin, status: 404, code: rag.CodeNotFound},
		{name: "RemoveUnknownTeam", method: "DELETE", path: "/api/admin/teams/ops/members/mina", headers: admin, status: 404, code: rag.CodeNotFound},
	})
}
