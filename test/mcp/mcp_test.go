// Package mcp runs the official MCP clients against the real binary — the Go SDK's and the TypeScript SDK's
// (npm @modelcontextprotocol/sdk, client.test.mjs): `ragd mcp` over stdio, and `ragd serve`'s /mcp over
// streamable HTTP with API keys — listing the tools, and calling search, ask, list_collections,
// list_documents, get_document and ingest_text on an ingested fixture.
package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ragd/ragd/internal/mcpserver"
	"github.com/ragd/ragd/internal/testkit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveBinary()
	os.Exit(code)
}

const question = "시행일은 공포 후 몇 개월인가요?"

// dataDir ingests the bill into the collection "laws" of a new data directory.
func dataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(testkit.Binary(t), "ingest", "--collection", "laws", testkit.FixturePath("pdf/bill_2125318_original.pdf"))
	cmd.Env = testkit.CleanEnv("RAGD_DATA_DIR=" + dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	return dir
}

func connect(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ragd-test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and decodes its structured output into out; it returns the result for its text and
// isError.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if out != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s output %s: %v", name, b, err)
		}
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// exercise runs the tools against a session over the bill in "laws".
func exercise(t *testing.T, cs *mcp.ClientSession) {
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s has no description or input schema", tool.Name)
		}
		if a := tool.Annotations; a == nil || a.ReadOnlyHint != (tool.Name != "ingest_text") {
			t.Errorf("tool %s: annotations %+v", tool.Name, a)
		}
	}
	for _, want := range []string{"search", "ask", "list_collections", "list_documents", "get_document", "ingest_text"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	schema, _ := json.Marshal(tools.Tools[slices.Index(names, "search")].InputSchema)
	if !strings.Contains(string(schema), `"required":["query"]`) || !strings.Contains(string(schema), "type=pdf") {
		t.Errorf("search's input schema has no required query or no filter description: %s", schema)
	}

	var search mcpserver.SearchOutput
	res := call(t, cs, "search", map[string]any{"query": "시행일 공포 후 6개월", "collection": "laws", "k": 3, "filters": []string{"type=pdf"}}, &search)
	if res.IsError || len(search.Passages) == 0 || len(search.Passages) > 3 || !strings.HasSuffix(search.Passages[0].Source, "bill_2125318_original.pdf") {
		t.Fatalf("search: %s %+v", text(res), search)
	}
	if !strings.Contains(text(res), "[1] bill_2125318_original") {
		t.Errorf("search text %q", text(res))
	}
	docID := search.Passages[0].DocumentID

	var ask mcpserver.AskOutput
	res = call(t, cs, "ask", map[string]any{"question": question, "collection": "laws"}, &ask)
	if res.IsError || ask.NotFound || !strings.Contains(ask.Answer, "6개월") || !strings.Contains(ask.Answer, "[1]") || len(ask.Sources) == 0 {
		t.Fatalf("ask: %s %+v", text(res), ask)
	}
	if !strings.Contains(text(res), "Sources:\n- [1] bill_2125318_original") {
		t.Errorf("ask text %q", text(res))
	}

	var colls mcpserver.ListCollectionsOutput
	call(t, cs, "list_collections", nil, &colls)
	if i := slices.IndexFunc(colls.Collections, func(c mcpserver.CollectionInfo) bool { return c.Name == "laws" }); i < 0 || colls.Collections[i].Documents != 1 {
		t.Errorf("list_collections %+v", colls)
	}
	var docs mcpserver.ListDocumentsOutput
	call(t, cs, "list_documents", map[string]any{"collection": "laws"}, &docs)
	if docs.Total != 1 || docs.Documents[0].ID != docID || docs.Documents[0].Status != "ready" {
		t.Errorf("list_documents %+v", docs)
	}
	// The document as a resource: its URI from list_documents, read whole.
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != mcpserver.DocumentURIPrefix+"{id}" {
		t.Errorf("resource templates %+v %v", templates, err)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: docs.Documents[0].URI})
	if err != nil || len(read.Contents) != 1 || !strings.HasPrefix(read.Contents[0].Text, "# bill_2125318_original\n\n") ||
		!strings.Contains(read.Contents[0].Text, "공포 후 6개월") {
		t.Errorf("read %s: %v %+v", docs.Documents[0].URI, err, read)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.DocumentURIPrefix + "no-such-document"}); err == nil {
		t.Error("reading an unknown document's resource: no error")
	}

	var doc mcpserver.GetDocumentOutput
	res = call(t, cs, "get_document", map[string]any{"id": docID, "page_start": 5, "page_end": 5}, &doc)
	if res.IsError || doc.PageStart != 5 || doc.PageEnd != 5 || !strings.Contains(doc.Text, "공포 후 6개월") || doc.Pages < 5 {
		t.Errorf("get_document pages 5–5: %s %+v", text(res), doc)
	}

	// Errors are tool errors with ragd's code, and the session goes on.
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search", map[string]any{"query": " "}, "invalid_request: query is required"},
		{"search", map[string]any{"query": "x", "k": 101}, "invalid_request"},
		{"ask", map[string]any{"question": question, "k": 21}, "invalid_request"},
		{"ask", map[string]any{"question": ""}, "question_required"},
		{"get_document", map[string]any{"id": "no-such-document"}, "not_found"},
		{"list_documents", map[string]any{"limit": mcpserver.MaxListDocuments + 1}, "invalid_request"},
		{"search", map[string]any{}, "query"}, // the schema's required property
	} {
		res := call(t, cs, c.tool, c.args, nil)
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s %v: isError %v, %q; want an error with %q", c.tool, c.args, res.IsError, text(res), c.want)
		}
	}
}

func TestStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the binary's MCP tests run in the full suite (internal/server and internal/mcpserver test the same in process)")
	}
	dir := dataDir(t)
	cmd := exec.Command(testkit.Binary(t), "mcp")
	cmd.Env = testkit.CleanEnv("RAGD_DATA_DIR=" + dir)
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	cs := connect(t, &mcp.CommandTransport{Command: cmd})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ragd mcp stderr:\n%s", stderr.String())
		}
	})
	exercise(t, cs)

	// The local principal writes: the text is indexed before the tool answers, and found.
	var ing mcpserver.IngestTextOutput
	res := call(t, cs, "ingest_text", map[string]any{"title": "휴가 규정", "text": "# 휴가 규정\n\n연차 휴가는 매년 15일입니다.", "collection": "hr"}, &ing)
	if res.IsError || ing.Status != "ready" || ing.Outcome != "queued" || ing.Chunks == 0 {
		t.Fatalf("ingest_text: %s %+v", text(res), ing)
	}
	var ask mcpserver.AskOutput
	call(t, cs, "ask", map[string]any{"question": "연차 휴가는 며칠인가요?", "collection": "hr"}, &ask)
	if !strings.Contains(ask.Answer, "15일") || len(ask.Sources) == 0 || ask.Sources[0].DocumentID != ing.ID {
		t.Errorf("ask after ingest_text: %+v", ask)
	}

	// Every tool call is in the audit log, as the local operator from stdio, once the client has closed
	// the stream (ragd mcp writes what is queued as it ends).
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	audit := exec.Command(testkit.Binary(t), "audit", "--json", "--limit", "1000")
	audit.Env = testkit.CleanEnv("RAGD_DATA_DIR=" + dir)
	out, err := audit.Output()
	if err != nil {
		t.Fatalf("ragd audit: %v", err)
	}
	var log struct {
		Events []struct {
			Principal, Action, Client, Outcome, Detail string
			Documents                                  []string
		} `json:"events"`
	}
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatalf("ragd audit --json: %v\n%s", err, out)
	}
	seen := map[string]int{}
	for _, e := range log.Events {
		if e.Client != "stdio" || e.Principal != "local" || !strings.HasPrefix(e.Detail, "mcp ") {
			t.Errorf("event %+v: want principal local, client stdio, detail mcp TOOL", e)
			continue
		}
		seen[e.Action]++
		if e.Detail == "mcp ingest_text" && (e.Outcome != "ok" || !slices.Contains(e.Documents, ing.ID)) {
			t.Errorf("ingest_text event %+v: want ok naming %s", e, ing.ID)
		}
		if e.Detail == "mcp ask" && e.Outcome == "ok" && len(e.Documents) == 0 {
			t.Errorf("ask event %+v names no document", e)
		}
	}
	for _, action := range []string{"search", "chat", "document.read", "document.list", "document.upload"} {
		if seen[action] == 0 {
			t.Errorf("no %s event from ragd mcp; events: %+v", action, log.Events)
		}
	}
}

// bearer adds an API key to every request.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

func TestStreamableHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the binary's MCP tests run in the full suite")
	}
	dir := dataDir(t)
	srv := testkit.Serve(t, testkit.CleanEnv("RAGD_DATA_DIR="+dir, "RAGD_API_KEYS=key-one", "RAGD_LOG_LEVEL=warn"))
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{"key-one"}}})
	exercise(t, cs)

	// An upload over MCP is queued for the server's job runner, then ready.
	var ing mcpserver.IngestTextOutput
	res := call(t, cs, "ingest_text", map[string]any{"title": "notes", "text": "ragd MCP notes: the tea room is on floor 7."}, &ing)
	if res.IsError || ing.Outcome != "queued" || ing.ID == "" {
		t.Fatalf("ingest_text: %s %+v", text(res), ing)
	}
	testkit.WaitFor(t, "the ingested text", time.Minute, func() bool {
		var doc mcpserver.GetDocumentOutput
		r := call(t, cs, "get_document", map[string]any{"id": ing.ID}, &doc)
		return !r.IsError && strings.Contains(doc.Text, "floor 7")
	})

	// Without a key, or with a wrong one, the transport refuses before any tool runs.
	for _, key := range []string{"", "wrong"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		client := &http.Client{}
		if key != "" {
			client.Transport = bearer{key}
		}
		_, err := mcp.NewClient(&mcp.Implementation{Name: "ragd-test"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: client, MaxRetries: -1}, nil)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
			t.Errorf("key %q: connect error %v, want 401", key, err)
		}
	}
}

// TestJSClient runs the official MCP TypeScript SDK client (client.test.mjs) against `ragd mcp` and /mcp. The
// npm package is installed here with `npm ci` when it is missing (package-lock.json pins it).
func TestJSClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the npm client test runs in the full suite")
	}
	data := dataDir(t)
	srv := testkit.Serve(t, testkit.CleanEnv("RAGD_DATA_DIR="+data, "RAGD_API_KEYS=key-one", "RAGD_LOG_LEVEL=warn"))
	testkit.NodeTest(t, "test/mcp", "@modelcontextprotocol/sdk/package.json", "client.test.mjs",
		"RAGD_BIN="+testkit.Binary(t), "RAGD_DATA_DIR="+data, "RAGD_URL="+srv.URL, "RAGD_KEY=key-one")
}
