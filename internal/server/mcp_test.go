package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ragd/ragd/internal/rag"
)

// headerTransport sets headers on every request.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestMCPOverHTTP(t *testing.T) {
	b := setup(t, func(s *Settings) {
		s.APIKeys = []string{"key-one"}
		s.CORSOrigins = []string{"https://ok.example"}
	})
	connect := func(t *testing.T, headers map[string]string) (*mcp.ClientSession, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: b.ts.URL + "/mcp", HTTPClient: &http.Client{Transport: headerTransport(headers)}, MaxRetries: -1}, nil)
		if err == nil {
			t.Cleanup(func() { _ = cs.Close() })
		}
		return cs, err
	}

	t.Run("KeyIsThePrincipal", func(t *testing.T) {
		cs, err := connect(t, map[string]string{"X-RAG-API-Key": "key-one"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ingest_text",
			Arguments: map[string]any{"title": "notes", "text": "the tea room is on floor 7"}})
		if err != nil || res.IsError {
			t.Fatalf("ingest_text: %v %+v", err, res)
		}
		b.deps.Enqueuer.(*inlineJobs).wait()
		page, err := b.store.ListDocuments(context.Background(), rag.LocalPrincipal, rag.DocumentQuery{TitleContains: "notes"})
		if err != nil || page.Total != 1 {
			t.Fatalf("documents %+v %v", page, err)
		}
		want, _ := b.srv.keys.principal("key-one")
		if d := page.Documents[0]; d.Owner != want.ID || d.Status != rag.StatusReady {
			t.Errorf("document owner %q status %s, want %q ready", d.Owner, d.Status, want.ID)
		}
	})
	t.Run("ErrNoKey", func(t *testing.T) {
		if _, err := connect(t, nil); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
			t.Fatalf("connect without a key: %v", err)
		}
	})
	t.Run("ErrWrongKey", func(t *testing.T) {
		if _, err := connect(t, map[string]string{"Authorization": "Bearer nope"}); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
			t.Fatalf("connect with a wrong key: %v", err)
		}
	})
	t.Run("ErrOrigin", func(t *testing.T) {
		resp, body := b.do(t, request{method: "POST", path: "/mcp", ctype: "application/json",
			headers: map[string]string{"Authorization": "Bearer key-one", "Origin": "https://evil.example"},
			body:    strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)})
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `"forbidden"`) {
			t.Fatalf("status %d %s", resp.StatusCode, body)
		}
	})
}

func TestMCPOpenServer(t *testing.T) {
	b := setup(t, nil)
	b.ingestFile(t, renderDoc, nil)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: b.ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_documents", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_documents: %v %+v", err, res)
	}
	if out, ok := res.StructuredContent.(map[string]any); !ok || out["total"] != float64(1) {
		t.Fatalf("structured %+v", res.StructuredContent)
	}
	// A body over the transport's limit is refused before any tool runs.
	resp, _ := b.do(t, request{method: "POST", path: "/mcp", ctype: "application/json",
		headers: map[string]string{"Accept": "application/json, text/event-stream"},
		body:    strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ingest_text","arguments":{"title":"t","text":"` + strings.Repeat("a", mcpBodyLimit) + `"}}}`)})
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over %d bytes: status %d", mcpBodyLimit, resp.StatusCode)
	}
}
