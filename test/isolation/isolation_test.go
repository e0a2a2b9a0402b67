// Package isolation is the isolation suite of docs/security.md: the real ragd binary on a real port, on the
// embedded store and on PostgreSQL (PGlite, when RAGD_TEST_DATABASE_URL is set), with users, teams and keys
// made by the CLI while the server runs. Every HTTP route that reads data is tried as the owner, a team
// member, a user of another team, a read-only key, a revoked key, an expired key and no key; each must be
// allowed or refused as the model says, and no refused principal may see a forbidden title, passage,
// document ID, question or count in any response, search_info or streamed event.
package isolation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/testkit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveBinary()
	os.Exit(code)
}

const adminKey = "isolation-bootstrap-admin-key-0123456789"

func TestIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary on both stores (~40 s); the -short race run covers the same code in internal/server and the stores")
	}
	t.Run("sqlite", func(t *testing.T) {
		run(t, testkit.CleanEnv("RAGD_DATA_DIR="+t.TempDir(), "RAGD_ADMIN_KEY="+adminKey), false)
	})
	// PostgreSQL with row-level security turned off: the SQL predicate alone.
	t.Run("postgres", func(t *testing.T) {
		base := testkit.DatabaseURL(t)
		url := testkit.SearchPath(base, testkit.Schema(t, base, "isolation_"))
		run(t, testkit.CleanEnv("RAGD_DATA_DIR="+t.TempDir(), "RAGD_DATABASE_URL="+url, "RAGD_ADMIN_KEY="+adminKey,
			"RAGD_PG_ROW_SECURITY=off"), false)
	})
	// PostgreSQL as configured by default, with row-level security on (docs/security.md): every non-admin
	// read of the covered tables runs as the reader role under the policies, behind the same predicate;
	// nothing the suite expects changes.
	t.Run("postgres_row_security", func(t *testing.T) {
		base := testkit.DatabaseURL(t)
		url := testkit.SearchPath(base, testkit.Schema(t, base, "isolation_"))
		run(t, testkit.CleanEnv("RAGD_DATA_DIR="+t.TempDir(), "RAGD_DATABASE_URL="+url, "RAGD_ADMIN_KEY="+adminKey), true)
	})
}

// cli runs a ragd command with env and returns its stdout; it fails the test on a non-zero exit.
func cli(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, code, stderr := cliResult(t, env, args...)
	if code != 0 {
		t.Fatalf("ragd %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	return out
}

func cliResult(t *testing.T, env []string, args ...string) (string, int, string) {
	t.Helper()
	cmd := exec.Command(testkit.Binary(t), args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(interface{ ExitCode() int }); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code, errb.String()
}

type client struct {
	t    *testing.T
	base string
}

// call sends a request with key ("" for none) and returns the status and body.
func (c client) call(key, method, path string, body any) (int, string) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if path == "/mcp" { // the streamable HTTP transport answers JSON or an event stream
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// mustCall is call that fails the test unless the status is want; it decodes JSON into v when v is set.
func (c client) mustCall(key, method, path string, body any, want int, v any) string {
	c.t.Helper()
	status, out := c.call(key, method, path, body)
	if status != want {
		c.t.Fatalf("%s %s: %d, want %d\n%s", method, path, status, want, out)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			c.t.Fatalf("%s %s: %v\n%s", method, path, err, out)
		}
	}
	return out
}

// mcpCall is the JSON-RPC body of an MCP tools/call.
func mcpCall(tool string, args map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}}
}

// outcome is what a principal must get from a read: see (200 with the secret), hide (a success or a
// not_found that carries nothing of it), or refuse (401).
type outcome int

const (
	see outcome = iota
	hide
	refuse
)

func (o outcome) String() string { return [...]string{"see", "hide", "refuse"}[o] }

func run(t *testing.T, env []string, rowSecurity bool) {
	srv := testkit.Serve(t, env)
	c := client{t: t, base: srv.URL}
	if !strings.Contains(srv.Output.String(), "stored RAGD_ADMIN_KEY") {
		t.Errorf("no bootstrap of RAGD_ADMIN_KEY in the start-up log:\n%s", srv.Output.String())
	}
	if on := strings.Contains(srv.Output.String(), "PostgreSQL row-level security on"); on != rowSecurity {
		t.Fatalf("row-level security on: %v; want %v. Start-up log:\n%s", on, rowSecurity, srv.Output.String())
	}

	// Principals, made with the CLI while the server runs on the same data.
	cli(t, env, "teams", "add", "eng")
	cli(t, env, "teams", "add", "ops")
	cli(t, env, "users", "add", "olive", "--team", "eng", "--role", "admin")
	cli(t, env, "users", "add", "mina", "--team", "eng")
	cli(t, env, "users", "add", "otto", "--team", "ops", "--role", "admin")
	key := func(args ...string) string {
		k := strings.TrimSpace(cli(t, env, append([]string{"keys", "create"}, args...)...))
		if strings.ContainsAny(k, " \n") || !strings.HasPrefix(k, "ragd_") {
			t.Fatalf("keys create printed %q, not a key alone", k)
		}
		return k
	}
	owner := key("--user", "olive", "--scopes", "read,write")
	readOnly := key("--user", "olive", "--scopes", "read")
	mate := key("--user", "mina", "--scopes", "read,write")
	other := key("--user", "otto", "--scopes", "read,write")
	revoked := key("--user", "olive", "--scopes", "read")
	cli(t, env, "keys", "revoke", revoked[:17])
	expired := key("--user", "olive", "--scopes", "read", "--expires", "1s")
	expiresAt := time.Now().Add(time.Second)
	cli(t, env, "collections", "create", "secret", "--owner", "team:eng", "--visibility", "private")
	cli(t, env, "collections", "create", "open", "--owner", "team:ops", "--visibility", "public")
	if out := cli(t, env, "teams", "members", "eng"); !strings.Contains(out, "olive") || !strings.Contains(out, "admin") {
		t.Errorf("teams members eng:\n%s", out)
	}

	// Documents: the secret one by its team's admin, the open one by otto, through POST /api/documents.
	var created struct {
		Documents []struct{ ID string } `json:"documents"`
	}
	c.mustCall(owner, "POST", "/api/documents", map[string]any{"title": "Falcon Ledger", "collection": "secret",
		"text": "The Falcon Ledger records zephyrquartz shipments to the northern depot.\n\nZephyrquartz reserves are counted every Tuesday by the depot warden."},
		http.StatusAccepted, &created)
	secretID := created.Documents[0].ID
	c.mustCall(other, "POST", "/api/documents", map[string]any{"title": "Harbor Guide", "collection": "open",
		"text": "The Harbor Guide lists ferry times. Ferries leave the harbor every hour."}, http.StatusAccepted, &created)
	openID := created.Documents[0].ID
	for _, id := range []string{secretID, openID} {
		testkit.WaitFor(t, "document "+id+" ready", 2*time.Minute, func() bool {
			_, out := c.call(adminKey, "GET", "/api/documents/"+id, nil)
			return strings.Contains(out, `"status":"ready"`)
		})
	}
	var q struct{ ID string }
	c.mustCall(owner, "POST", "/api/questions", map[string]any{"collection": "secret", "title": "Who audits the Falcon Ledger?"}, http.StatusCreated, &q)

	// Writes: allowed and refused as the model says.
	writes := []struct {
		name   string
		key    string
		method string
		path   string
		body   any
		want   int
	}{
		{"ReadOnlyKeyUploads", readOnly, "POST", "/api/documents", map[string]any{"title": "x", "text": "x", "collection": "secret"}, http.StatusForbidden},
		{"MemberUploadsToTeamCollection", mate, "POST", "/api/documents", map[string]any{"title": "x", "text": "x", "collection": "secret"}, http.StatusForbidden},
		{"OtherTeamUploadsToUnseenCollection", other, "POST", "/api/documents", map[string]any{"title": "x", "text": "x", "collection": "secret"}, http.StatusNotFound},
		{"MemberChangesGrants", mate, "PUT", "/api/documents/" + secretID + "/grants", map[string]any{"read": []string{"user:mina"}}, http.StatusForbidden},
		{"OtherTeamChangesGrants", other, "PUT", "/api/documents/" + secretID + "/grants", map[string]any{"read": []string{"user:otto"}}, http.StatusNotFound},
		{"OtherTeamDeletes", other, "DELETE", "/api/documents/" + secretID, nil, http.StatusNotFound},
		{"ReadOnlyKeyDeletes", readOnly, "DELETE", "/api/documents/" + secretID, nil, http.StatusForbidden},
		{"NonAdminCreatesUser", owner, "POST", "/api/admin/users", map[string]any{"name": "eve"}, http.StatusForbidden},
		{"NonAdminCreatesCollection", owner, "POST", "/api/collections", map[string]any{"name": "mine"}, http.StatusForbidden},
		{"NonAdminListsKeys", other, "GET", "/api/admin/keys", nil, http.StatusForbidden},
		{"BadGrant", owner, "PUT", "/api/documents/" + secretID + "/grants", map[string]any{"read": []string{"otto"}}, http.StatusBadRequest},
	}
	for _, w := range writes {
		if status, out := c.call(w.key, w.method, w.path, w.body); status != w.want {
			t.Errorf("%s: %s %s = %d, want %d\n%s", w.name, w.method, w.path, status, w.want, out)
		}
	}

	for time.Now().Before(expiresAt.Add(100 * time.Millisecond)) {
		time.Sleep(50 * time.Millisecond)
	}
	// The forbidden things: the secret document's title, a passage, its ID, and its board's question.
	forbidden := []string{"Falcon Ledger", "northern depot", "Tuesday", secretID, q.ID, "Who audits"}
	principals := []struct {
		name string
		key  string
		want outcome
	}{
		{"Owner", owner, see}, {"TeamMember", mate, see}, {"ReadOnlyKey", readOnly, see}, {"Admin", adminKey, see},
		{"OtherTeam", other, hide}, {"RevokedKey", revoked, refuse}, {"ExpiredKey", expired, refuse}, {"NoKey", "", refuse},
	}
	// Reads: each names what the response holds when the secret is seen.
	reads := []struct {
		name   string
		method string
		path   string
		body   any
		// seen is a string a response that sees the secret holds; hidden is the status when hidden.
		seen   string
		hidden int
	}{
		{"ListDocuments", "GET", "/api/documents", nil, "Falcon Ledger", 200},
		{"ListDocumentsInCollection", "GET", "/api/documents?collection=secret", nil, "Falcon Ledger", 200},
		{"GetDocument", "GET", "/api/documents/" + secretID, nil, "Falcon Ledger", 404},
		{"Chunks", "GET", "/api/documents/" + secretID + "/chunks", nil, "northern depot", 404},
		{"Grants", "GET", "/api/documents/" + secretID + "/grants", nil, `"read"`, 404},
		{"Search", "POST", "/api/search", map[string]any{"query": "zephyrquartz shipments"}, "northern depot", 200},
		{"SearchInCollection", "POST", "/api/search", map[string]any{"query": "zephyrquartz", "filter": map[string]any{"collections": []string{"secret"}}}, "northern depot", 200},
		{"Chat", "POST", "/api/chat", map[string]any{"question": "Where do zephyrquartz shipments go?"}, "Falcon Ledger", 200},
		{"ChatInCollection", "POST", "/api/chat", map[string]any{"question": "Where do zephyrquartz shipments go?", "collection": "secret"}, "Falcon Ledger", 200},
		{"ChatStream", "POST", "/api/chat", map[string]any{"question": "Where do zephyrquartz shipments go?", "stream": true}, "Falcon Ledger", 200},
		{"Collections", "GET", "/api/collections", nil, `"secret"`, 200},
		{"Collection", "GET", "/api/collections/secret", nil, `"secret"`, 404},
		{"Graph", "GET", "/api/collections/secret/graph", nil, `"entities"`, 404},
		{"Sources", "GET", "/api/collections/secret/sources", nil, `"sources"`, 404},
		{"Questions", "GET", "/api/questions", nil, "Who audits", 200},
		{"QuestionsOfBoard", "GET", "/api/questions?collection=secret", nil, "Who audits", 200},
		{"Question", "GET", "/api/questions/" + q.ID, nil, "Who audits", 404},
		{"SimilarQuestions", "GET", "/api/questions/similar?collection=secret&q=Falcon+Ledger+audit", nil, "Who audits", 404},
		{"SimilarToQuestion", "GET", "/api/questions/" + q.ID + "/similar", nil, `"questions"`, 404},
		{"Feedback", "GET", "/api/feedback", nil, `"feedback"`, 200},
		{"Status", "GET", "/api/status", nil, `"ready":2`, 200},
		{"OpenAIModels", "GET", "/v1/models", nil, `"ragd/secret"`, 200},
		{"OpenAIChat", "POST", "/v1/chat/completions", map[string]any{"model": "ragd", "messages": []map[string]string{{"role": "user", "content": "Where do zephyrquartz shipments go?"}}}, "northern depot", 200},
		{"OpenAIChatStream", "POST", "/v1/chat/completions", map[string]any{"model": "ragd", "stream": true, "messages": []map[string]string{{"role": "user", "content": "Where do zephyrquartz shipments go?"}}}, "northern depot", 200},
		{"Versions", "GET", "/api/documents/" + secretID + "/versions", nil, "Falcon Ledger", 404},
		{"VersionText", "GET", "/api/documents/" + secretID + "/versions/1", nil, "northern depot", 404},
		{"VersionFile", "GET", "/api/documents/" + secretID + "/versions/1/file", nil, "northern depot", 404},
		// MCP (stateless streamable HTTP): a tool's refusal is a result with isError, so hidden is 200.
		{"MCPSearch", "POST", "/mcp", mcpCall("search", map[string]any{"query": "zephyrquartz shipments"}), "northern depot", 200},
		{"MCPAsk", "POST", "/mcp", mcpCall("ask", map[string]any{"question": "Where do zephyrquartz shipments go?"}), "northern depot", 200},
		{"MCPListDocuments", "POST", "/mcp", mcpCall("list_documents", map[string]any{}), "Falcon Ledger", 200},
		{"MCPListCollections", "POST", "/mcp", mcpCall("list_collections", map[string]any{}), `\"secret\"`, 200},
		{"MCPGetDocument", "POST", "/mcp", mcpCall("get_document", map[string]any{"id": secretID}), "northern depot", 200},
	}
	leaks := 0
	for _, p := range principals {
		t.Run(p.name, func(t *testing.T) {
			for _, rd := range reads {
				status, out := c.call(p.key, rd.method, rd.path, rd.body)
				switch p.want {
				case see:
					if status != 200 || !strings.Contains(out, rd.seen) {
						t.Errorf("%s: %d, want 200 holding %q\n%.400s", rd.name, status, rd.seen, out)
					}
					continue
				case refuse:
					if status != http.StatusUnauthorized {
						t.Errorf("%s: %d, want 401\n%.400s", rd.name, status, out)
					}
				case hide:
					if status != rd.hidden {
						t.Errorf("%s: %d, want %d\n%.400s", rd.name, status, rd.hidden, out)
					}
				}
				// An ID the request itself names may come back in a not_found message; the answer must
				// then be the one a made-up ID gets, so that it tells nothing of the ID's existence.
				for _, id := range []string{secretID, q.ID} {
					body, _ := json.Marshal(rd.body)
					if !strings.Contains(rd.path, id) && !strings.Contains(string(body), id) {
						continue
					}
					ghost := "00000000-0000-4000-8000-000000000000"
					var ghostBody any
					if rd.body != nil {
						ghostBody = json.RawMessage(strings.ReplaceAll(string(body), id, ghost))
					}
					gs, gout := c.call(p.key, rd.method, strings.ReplaceAll(rd.path, id, ghost), ghostBody)
					if gs != status || strings.ReplaceAll(gout, ghost, id) != out {
						leaks++
						t.Errorf("LEAK %s: answers %d %s, a made-up ID %d %s", rd.name, status, out, gs, gout)
					}
					out = strings.ReplaceAll(out, id, "")
				}
				for _, f := range forbidden {
					if strings.Contains(out, f) {
						leaks++
						t.Errorf("LEAK %s: the response holds %q\n%.600s", rd.name, f, out)
					}
				}
			}
			if p.want != hide {
				return
			}
			// search_info and candidate counts: a search for the secret's words counts what a search for
			// words that are nowhere counts; the status counts only the open document.
			if a, b := searchCounts(t, c, p.key, "zephyrquartz shipments northern depot"), searchCounts(t, c, p.key, "qwxzvbnm plorkish"); a != b {
				leaks++
				t.Errorf("LEAK search counts for the secret's words %s differ from nonsense %s", a, b)
			}
			if a, b := chatCounts(t, c, p.key, "Where do zephyrquartz shipments go?"), chatCounts(t, c, p.key, "Where do qwxzvbnm plorkish go?"); a != b {
				leaks++
				t.Errorf("LEAK chat search_info for the secret's words %s differs from nonsense %s", a, b)
			}
			for _, path := range []string{"/api/collections", "/v1/models"} {
				if _, out := c.call(p.key, "GET", path, nil); strings.Contains(out, "secret") {
					leaks++
					t.Errorf("LEAK %s names the secret collection: %s", path, out)
				}
			}
			if _, out := c.call(p.key, "GET", "/api/status", nil); !strings.Contains(out, `"total":1`) {
				leaks++
				t.Errorf("LEAK status counts more than the open document: %s", out)
			}
		})
	}
	t.Logf("leaks: %d", leaks)

	// A grant opens the document to otto at once, and only that document (not its collection's board).
	c.mustCall(owner, "PUT", "/api/documents/"+secretID+"/grants", map[string]any{"read": []string{"user:otto"}, "write": []string{}}, 200, nil)
	if status, out := c.call(other, "GET", "/api/documents/"+secretID, nil); status != 200 || !strings.Contains(out, "Falcon Ledger") {
		t.Errorf("otto after a read grant: %d %s", status, out)
	}
	if status, _ := c.call(other, "GET", "/api/questions/"+q.ID, nil); status != 404 {
		t.Errorf("otto reads the board of a collection he sees one document of: %d", status)
	}
	if status, _ := c.call(other, "DELETE", "/api/documents/"+secretID, nil); status != http.StatusForbidden {
		t.Errorf("otto deletes with a read grant: %d, want 403", status)
	}
	// Disabling a user refuses its keys; the admin API sees the keys by prefix only.
	cli(t, env, "users", "disable", "mina")
	if status, _ := c.call(mate, "GET", "/api/documents", nil); status != http.StatusUnauthorized {
		t.Errorf("disabled user's key: %d, want 401", status)
	}
	out := c.mustCall(adminKey, "GET", "/api/admin/keys", nil, 200, nil)
	for _, k := range []string{owner, readOnly, mate, other} {
		if strings.Contains(out, k) || !strings.Contains(out, k[:17]) {
			t.Errorf("GET /api/admin/keys shows a whole key or lacks a prefix: %s", out)
		}
	}
}

// searchCounts is what a search tells a principal about how much matched: hits and candidate counts.
func searchCounts(t *testing.T, c client, key, query string) string {
	t.Helper()
	var res struct {
		Hits              []json.RawMessage `json:"hits"`
		VectorCandidates  int               `json:"vector_candidates"`
		KeywordCandidates int               `json:"keyword_candidates"`
	}
	c.mustCall(key, "POST", "/api/search", map[string]any{"query": query}, 200, &res)
	return fmt.Sprintf("hits %d, vector %d, keyword %d", len(res.Hits), res.VectorCandidates, res.KeywordCandidates)
}

// chatCounts is a chat answer's search_info counts and sources.
func chatCounts(t *testing.T, c client, key, question string) string {
	t.Helper()
	var res struct {
		Sources    []json.RawMessage `json:"sources"`
		SearchInfo struct {
			ChunksRetrieved   int `json:"chunks_retrieved"`
			VectorCandidates  int `json:"vector_candidates"`
			KeywordCandidates int `json:"keyword_candidates"`
		} `json:"search_info"`
	}
	c.mustCall(key, "POST", "/api/chat", map[string]any{"question": question}, 200, &res)
	return fmt.Sprintf("sources %d, %+v", len(res.Sources), res.SearchInfo)
}
