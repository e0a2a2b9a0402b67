package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ragd/ragd/internal/access"
	"github.com/ragd/ragd/internal/audit"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// withAudit starts an audit log over the bundle's store and serves again with it.
func withAudit(t testing.TB, b *bundle) *audit.Log {
	l := audit.New(b.store, audit.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go l.Run(ctx)
	t.Cleanup(func() { cancel(); l.Wait() })
	b.deps.Audit, b.deps.AuditEvents = l, b.store
	b.serve(t)
	return l
}

// TestAudit records searches, answers, reads, downloads, uploads, deletions and failures with the
// documents they touched, and lists them through GET /api/admin/audit with filters and paging.
func TestAudit(t *testing.T) {
	b := setup(t, nil)
	withAudit(t, b)
	tides := b.ingest(t, ingest.Request{Name: "tides.md", Data: []byte("# Tides\n\nThe ledger records nineteen spring tides at the harbour.")})
	gales := b.ingest(t, ingest.Request{Name: "gales.md", Data: []byte("# Gales\n\nThe ledger records four gales at the harbour.")})
	b.run(t, []scenario{
		{name: "Search", method: "POST", path: "/api/search", body: jsonBody(map[string]any{"query": "ledger harbour"}), status: 200},
		{name: "Chat", method: "POST", path: "/api/chat", body: jsonBody(map[string]any{"question": "how many spring tides does the ledger record?"}), status: 200},
		{name: "Read", method: "GET", path: "/api/documents/" + tides.ID, status: 200},
		{name: "Download", method: "GET", path: "/api/documents/" + tides.ID + "/versions/1/file", status: 200},
		{name: "ErrReadMissing", method: "GET", path: "/api/documents/nope", status: 404},
		{name: "Delete", method: "DELETE", path: "/api/documents/" + gales.ID, status: 204},
	})
	want := map[string][]string{
		"search ok":            {tides.ID, gales.ID},
		"chat ok":              {tides.ID},
		"document.read ok":     {tides.ID},
		"document.download ok": {tides.ID},
		"document.read failed": {"nope"},
		"document.delete ok":   {gales.ID},
	}
	events, byAction := waitAudit(t, b, audit.Query{}, func(e audit.Event) string { return e.Action + " " + e.Outcome }, slices.Collect(maps.Keys(want))...)
	for _, e := range events {
		if e.Principal != rag.LocalPrincipal.ID || e.Client != "127.0.0.1" || e.At.IsZero() {
			t.Errorf("event %+v: principal, client or time missing", e)
		}
	}
	for key, docs := range want {
		e, ok := byAction[key]
		if !ok {
			t.Errorf("no %q event in %v", key, events)
			continue
		}
		for _, d := range docs {
			if !slices.Contains(e.Documents, d) {
				t.Errorf("%s: documents %v lack %s", key, e.Documents, d)
			}
		}
	}
	if e := byAction["document.download ok"]; !strings.Contains(e.Detail, "version=1") || e.Status != 200 {
		t.Errorf("download event %+v", e)
	}
	b.run(t, []scenario{
		{name: "ListFiltered", method: "GET", path: "/api/admin/audit?action=document.delete", status: 200,
			contains: []string{gales.ID, `"action":"document.delete"`}, notContains: []string{`"action":"search"`}},
		{name: "ListByDocument", method: "GET", path: "/api/admin/audit?document=" + tides.ID + "&limit=2", status: 200,
			contains: []string{`"next_before":`}},
		{name: "ErrBadSince", method: "GET", path: "/api/admin/audit?since=yesterday", status: 400, code: rag.CodeInvalid},
		{name: "ErrBadLimit", method: "GET", path: "/api/admin/audit?limit=1001", status: 400, code: rag.CodeInvalid},
		{name: "ErrBadBefore", method: "GET", path: "/api/admin/audit?before=x", status: 400, code: rag.CodeInvalid},
	})
}

// TestAuditAdminOnly refuses the audit log to a principal that is not an admin.
func TestAuditAdminOnly(t *testing.T) {
	b := setup(t, nil)
	withAudit(t, b)
	req := httptest.NewRequest("GET", "/api/admin/audit", nil)
	req = req.WithContext(context.WithValue(req.Context(), principalKey{}, rag.Principal{ID: "user:bob"}))
	rec := httptest.NewRecorder()
	b.srv.handleListAudit(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("a non-admin reading the audit log: %d %s", rec.Code, rec.Body)
	}
}

// waitAudit waits until the audit log holds an event for every wanted key (key names an event, e.g. its
// action and outcome), or ten seconds pass, and returns the events by key. The log is written after the
// response and holds other events too, so a test waits for the events it checks, never for a count.
// On timeout it returns what is there and the caller's checks name what is missing.
func waitAudit(t testing.TB, b *bundle, q audit.Query, key func(audit.Event) string, wanted ...string) ([]audit.Event, map[string]audit.Event) {
	t.Helper()
	var events []audit.Event
	got := map[string]audit.Event{}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if events, err = b.store.ListAudit(context.Background(), q); err != nil {
			t.Fatal(err)
		}
		clear(got)
		for _, e := range events {
			got[key(e)] = e
		}
		if !slices.ContainsFunc(wanted, func(w string) bool { _, ok := got[w]; return !ok }) || time.Now().After(deadline) {
			return events, got
		}
	}
}

// BenchmarkSearchAudit measures what recording a search in the audit log adds to it: the same searches
// through the whole handler stack, without and with the audit log, reporting the p50 and p95 latency of
// each (ms). go test ./internal/server -run '^$' -bench SearchAudit -benchtime 2000x
func BenchmarkSearchAudit(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			bu := setup(b, nil)
			for i := range 40 {
				bu.ingest(b, ingest.Request{Name: fmt.Sprintf("doc%d.md", i), Data: []byte(fmt.Sprintf(
					"# Harbour report %d\n\nThe ledger of week %d records %d spring tides, %d gales and a whale off the northern rocks.", i, i, i%7, i%5))})
			}
			if on {
				withAudit(b, bu)
			}
			queries := []string{"spring tides", "gales ledger", "whale northern rocks", "harbour report week"}
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				body := fmt.Sprintf(`{"query": %q}`, queries[i%len(queries)])
				req := httptest.NewRequest("POST", "/api/search", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.RemoteAddr = "127.0.0.1:5000"
				rec := httptest.NewRecorder()
				start := time.Now()
				bu.srv.ServeHTTP(rec, req)
				took = append(took, time.Since(start))
				if rec.Code != 200 {
					b.Fatalf("search: %d %s", rec.Code, rec.Body)
				}
			}
			b.StopTimer()
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}

// TestAuditRefusedKeys records requests that authentication turns away before any route: a missing and an
// unknown key as login.failure (no principal, no key material), a key without the route's scope as
// access.denied with its principal.
func TestAuditRefusedKeys(t *testing.T) {
	b := setup(t, func(s *Settings) { s.APIKeys = []string{testAdminKey} })
	b.deps.Principals, b.deps.Access = b.store, b.store
	withAudit(t, b)
	if err := b.store.CreateUser(t.Context(), &rag.User{Name: "olive"}); err != nil {
		t.Fatal(err)
	}
	key, _, err := access.CreateKey(t.Context(), b.store, "olive", []rag.Scope{rag.ScopeRead}, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b.run(t, []scenario{
		{name: "NoKey", method: "POST", path: "/api/search", body: jsonBody(map[string]any{"query": "ledger"}), status: 401, code: rag.CodeUnauthorized},
		{name: "BadKey", method: "GET", path: "/api/documents", headers: bearer("ragd_000000000000_not-the-key"), status: 401, code: rag.CodeUnauthorized},
		{name: "NoScope", method: "GET", path: "/api/admin/users", headers: bearer(key), status: 403, code: rag.CodeForbidden},
	})
	wanted := map[string]audit.Event{
		"login.failure POST /api/search: no key":                  {Status: 401},
		"login.failure GET /api/documents: invalid key":           {Status: 401},
		"access.denied GET /api/admin/users: missing scope admin": {Status: 403, Principal: "user:olive"},
	}
	events, got := waitAudit(t, b, audit.Query{}, func(e audit.Event) string { return e.Action + " " + e.Detail }, slices.Collect(maps.Keys(wanted))...)
	for _, e := range events {
		if strings.Contains(e.Detail, "not-the-key") || e.Outcome != audit.Denied || e.Client != "127.0.0.1" {
			t.Errorf("event %+v", e)
		}
	}
	for k, want := range wanted {
		if e, ok := got[k]; !ok || e.Status != want.Status || e.Principal != want.Principal {
			t.Errorf("%s: %+v (have %v)", k, e, events)
		}
	}
}

// TestAuditKeyCreated: a key made through the admin API is recorded with its prefix as the target (the
// route has no key in its path), and its revocation likewise.
func TestAuditKeyCreated(t *testing.T) {
	b := setup(t, func(s *Settings) { s.APIKeys = []string{testAdminKey} })
	b.deps.Principals, b.deps.Access = b.store, b.store
	withAudit(t, b)
	admin := bearer(testAdminKey)
	var made struct {
		Prefix string `json:"prefix"`
	}
	b.run(t, []scenario{
		{name: "User", method: "POST", path: "/api/admin/users", headers: admin, body: jsonBody(map[string]any{"name": "olive"}), status: 201},
		{name: "Key", method: "POST", path: "/api/admin/keys", headers: admin, body: jsonBody(map[string]any{"user": "olive", "scopes": []string{"read"}}), status: 201,
			check: func(t *testing.T, _ *http.Response, body []byte) {
				if err := json.Unmarshal(body, &made); err != nil || made.Prefix == "" {
					t.Fatalf("created key %s", body)
				}
			}},
	})
	b.run(t, []scenario{{name: "Revoke", method: "DELETE", path: "/api/admin/keys/" + made.Prefix, headers: admin, status: 200}})
	events, actions := waitAudit(t, b, audit.Query{Target: made.Prefix}, func(e audit.Event) string { return e.Action }, "key.created", "key.revoked")
	if _, ok := actions["key.created"]; !ok {
		t.Errorf("events with target %s: %+v", made.Prefix, events)
	}
	if _, ok := actions["key.revoked"]; !ok {
		t.Errorf("events with target %s: %+v", made.Prefix, events)
	}
}

// TestAuditOpenAIAndMCP: the OpenAI-compatible and MCP endpoints, which authenticate inside their own
// handlers, record their document accesses with the key's principal and the documents used, and their
// refused keys as login.failure.
func TestAuditOpenAIAndMCP(t *testing.T) {
	b := setup(t, func(s *Settings) { s.APIKeys = []string{testAdminKey} })
	withAudit(t, b)
	tides := b.ingest(t, ingest.Request{Name: "tides.md", Data: []byte("# Tides\n\nThe ledger records nineteen spring tides at the harbour.")})
	admin, _ := b.srv.keys.principal(testAdminKey)
	b.run(t, []scenario{
		{name: "Completion", method: "POST", path: "/v1/chat/completions", headers: bearer(testAdminKey), status: 200,
			body: jsonBody(map[string]any{"model": "ragd", "messages": userMessage("how many spring tides does the ledger record?")})},
		{name: "NoKey", method: "POST", path: "/v1/chat/completions", status: 401,
			body: jsonBody(map[string]any{"model": "ragd", "messages": userMessage("tides?")})},
		{name: "BadKey", method: "GET", path: "/v1/models", headers: bearer("not-the-key"), status: 401},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: b.ts.URL + "/mcp", HTTPClient: &http.Client{Transport: headerTransport(bearer(testAdminKey))}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for name, args := range map[string]map[string]any{"search": {"query": "spring tides"}, "get_document": {"id": tides.ID},
		"ask": {"question": "how many spring tides does the ledger record?"}} {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}); err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_document", Arguments: map[string]any{"id": "nope"}}); err != nil || !res.IsError {
		t.Fatalf("get_document of a missing document: %v %+v", err, res)
	}
	if _, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: b.ts.URL + "/mcp", HTTPClient: &http.Client{Transport: headerTransport(bearer("not-the-key"))}, MaxRetries: -1}, nil); err == nil {
		t.Fatal("MCP with a wrong key connected")
	}

	wanted := map[string]audit.Event{
		"chat ok POST /v1/chat/completions":                      {Principal: admin.ID, Documents: []string{tides.ID}},
		"login.failure denied POST /v1/chat/completions: no key": {},
		"login.failure denied GET /v1/models: invalid key":       {},
		"search ok mcp search":                                   {Principal: admin.ID, Documents: []string{tides.ID}},
		"chat ok mcp ask":                                        {Principal: admin.ID, Documents: []string{tides.ID}},
		"document.read ok mcp get_document":                      {Principal: admin.ID, Documents: []string{tides.ID}, Target: tides.ID},
		"document.read failed mcp get_document: not_found":       {Principal: admin.ID},
		"login.failure denied POST /mcp: invalid key":            {},
	}
	events, got := waitAudit(t, b, audit.Query{Limit: 1000}, func(e audit.Event) string { return e.Action + " " + e.Outcome + " " + e.Detail },
		slices.Collect(maps.Keys(wanted))...)
	for _, e := range events {
		if e.Client != "127.0.0.1" || strings.Contains(e.Detail, "not-the-key") {
			t.Errorf("event %+v: client missing or key material", e)
		}
	}
	for k, want := range wanted {
		e, ok := got[k]
		if !ok {
			t.Errorf("no event %q; have %v", k, slices.Collect(maps.Keys(got)))
			continue
		}
		if e.Principal != want.Principal || !slices.Equal(e.Documents, want.Documents) || e.Target != want.Target {
			t.Errorf("%s: %+v; want principal %q documents %v target %q", k, e, want.Principal, want.Documents, want.Target)
		}
	}
}
