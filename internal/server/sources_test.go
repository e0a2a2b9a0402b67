package server

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/audit"
	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/connector/folder"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sources"
)

// userKey stores a user (in team with role, when team is set) with a key of scopes and returns the key.
func userKey(t *testing.T, b *bundle, name, team string, role rag.TeamRole, scopes ...rag.Scope) string {
	t.Helper()
	ctx := context.Background()
	if err := b.store.CreateUser(ctx, &rag.User{Name: name}); err != nil {
		t.Fatal(err)
	}
	if team != "" {
		if err := b.store.PutTeamMember(ctx, rag.TeamMember{Team: team, User: name, Role: role}); err != nil {
			t.Fatal(err)
		}
	}
	key, prefix, hash := rag.NewAPIKey()
	if err := b.store.CreateAPIKey(ctx, &rag.APIKey{Prefix: prefix, User: name, Scopes: scopes}, hash); err != nil {
		t.Fatal(err)
	}
	return key
}

// teamCollections stores team "eng" with its collection "handbook" (visible to the team) and an admin's
// collection "private".
func teamCollections(t *testing.T, b *bundle) {
	t.Helper()
	ctx := context.Background()
	if err := b.store.CreateTeam(ctx, &rag.Team{Name: "eng"}); err != nil {
		t.Fatal(err)
	}
	if err := b.store.CreateCollection(ctx, &rag.Collection{Name: "handbook", Owner: "team:eng", Visibility: rag.VisibilityTeam}); err != nil {
		t.Fatal(err)
	}
	if err := b.store.CreateCollection(ctx, &rag.Collection{Name: "private", Owner: "user:root"}); err != nil {
		t.Fatal(err)
	}
}

// TestSourcesAccess: sources follow the access rules of uploads — write scope and write access to the
// collection to add, sync and remove; folders (files of the server's machine) only for admins; reading needs
// the whole collection; credentials are never returned.
func TestSourcesAccess(t *testing.T) {
	b := setupUsers(t)
	svc := sources.New(b.store, b.pipe, func(ctx context.Context, id, _ string) error { return b.pipe.Process(ctx, id) },
		sources.Options{Kinds: connector.Kinds{folder.Kind: folder.New}})
	t.Cleanup(func() { svc.Close() })
	b.deps.Sources = svc
	withAudit(t, b)
	ctx := context.Background()
	teamCollections(t, b)
	lead := bearer(userKey(t, b, "olive", "eng", rag.RoleAdmin, rag.ScopeRead, rag.ScopeWrite))
	member := bearer(userKey(t, b, "mina", "eng", rag.RoleMember, rag.ScopeRead, rag.ScopeWrite))
	leadReadOnly := bearer(userKey(t, b, "otto", "eng", rag.RoleAdmin, rag.ScopeRead))
	outsider := bearer(userKey(t, b, "zed", "", "", rag.ScopeRead, rag.ScopeWrite))
	admin := bearer(testAdminKey)

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "guide.md"), []byte("# Guide\n\nThe on-call guide for the harbour team."), 0o644); err != nil {
		t.Fatal(err)
	}
	folderSpec := map[string]any{"kind": "folder", "path": dir, "credentials": "s3cr3t-token-value"}
	var src struct {
		ID string `json:"id"`
	}
	b.run(t, []scenario{
		{name: "LeadAddsNoFolder", method: "POST", path: "/api/collections/handbook/sources", headers: lead, body: jsonBody(folderSpec), status: 403, code: rag.CodeForbidden},
		{name: "LeadAddsNoLocalGit", method: "POST", path: "/api/collections/handbook/sources", headers: lead,
			body: jsonBody(map[string]any{"kind": "git", "url": "file://" + dir}), status: 403, code: rag.CodeForbidden},
		{name: "ReadKeyAddsNothing", method: "POST", path: "/api/collections/handbook/sources", headers: leadReadOnly, body: jsonBody(folderSpec), status: 403, code: rag.CodeForbidden},
		{name: "AdminAdds", method: "POST", path: "/api/collections/handbook/sources", headers: admin, body: jsonBody(folderSpec), status: 201,
			notContains: []string{"s3cr3t"}, contains: []string{`"has_credentials":true`, `"kind":"folder"`},
			check: func(t *testing.T, _ *http.Response, body []byte) {
				if err := json.Unmarshal(body, &src); err != nil || src.ID == "" {
					t.Fatalf("added %s", body)
				}
			}},
		{name: "BadSpec", method: "POST", path: "/api/collections/handbook/sources", headers: admin, body: jsonBody(map[string]any{"kind": "folder"}), status: 400, code: rag.CodeInvalid},
		{name: "UnknownKind", method: "POST", path: "/api/collections/handbook/sources", headers: admin, body: jsonBody(map[string]any{"kind": "ftp"}), status: 400, code: rag.CodeInvalid},
	})
	one := "/api/collections/handbook/sources/" + src.ID
	b.run(t, []scenario{
		{name: "MemberLists", method: "GET", path: "/api/collections/handbook/sources", headers: member, status: 200, contains: []string{src.ID}, notContains: []string{"s3cr3t"}},
		{name: "MemberReads", method: "GET", path: one, headers: member, status: 200, contains: []string{`"state"`}, notContains: []string{"s3cr3t"}},
		{name: "OutsiderReadsNothing", method: "GET", path: "/api/collections/handbook/sources", headers: outsider, status: 404, code: rag.CodeNotFound},
		{name: "OutsiderSyncsNothing", method: "POST", path: one + "/sync", headers: outsider, status: 404, code: rag.CodeNotFound},
		{name: "MemberMaySeeButNotSync", method: "POST", path: one + "/sync", headers: member, status: 403, code: rag.CodeForbidden},
		{name: "ReadKeyDoesNotSync", method: "POST", path: one + "/sync", headers: leadReadOnly, status: 403, code: rag.CodeForbidden},
		{name: "LeadSyncs", method: "POST", path: one + "/sync", headers: lead, status: 200, contains: []string{`"items":1`, `"last_run_at"`}},
		{name: "WrongCollection", method: "GET", path: "/api/collections/private/sources/" + src.ID, headers: admin, status: 404, code: rag.CodeNotFound},
		{name: "MemberDoesNotRemove", method: "DELETE", path: one, headers: member, status: 403, code: rag.CodeForbidden},
		{name: "LeadRemoves", method: "DELETE", path: one, headers: lead, status: 204},
		{name: "Gone", method: "GET", path: one, headers: admin, status: 404, code: rag.CodeNotFound},
	})
	// Adding, syncing and removing are audited with the source as target; a refused sync too.
	wanted := []string{"source.added ok the configured key", "source.sync ok user:olive", "source.sync denied user:mina",
		"source.removed ok user:olive", "source.removed denied user:mina"}
	_, got := waitAudit(t, b, audit.Query{Target: src.ID}, func(e audit.Event) string {
		if strings.HasPrefix(e.Principal, "key:") {
			e.Principal = "the configured key"
		}
		return e.Action + " " + e.Outcome + " " + e.Principal
	}, wanted...)
	for _, want := range wanted {
		if _, ok := got[want]; !ok {
			t.Errorf("no audit event %q among %v", want, slices.Collect(maps.Keys(got)))
		}
	}
	page, err := b.store.ListDocuments(ctx, rag.LocalPrincipal, rag.DocumentQuery{})
	if err != nil || len(page.Documents) != 1 || page.Documents[0].Source != filepath.Join(dir, "guide.md") {
		t.Fatalf("the folder's document after its source was removed: %+v, %v", page, err)
	}
}
