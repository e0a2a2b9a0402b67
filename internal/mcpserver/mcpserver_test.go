package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

// session connects a go-sdk client to New(d) over in-memory transports.
func session(t *testing.T, d Deps) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := New(d).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// recordingIngester records what it is asked to add.
type recordingIngester struct{ got []ingest.Request }

func (r *recordingIngester) IngestText(_ context.Context, _ rag.Principal, req ingest.Request) (Ingested, error) {
	r.got = append(r.got, req)
	return Ingested{ID: "doc-1", Status: rag.StatusQueued, Outcome: ingest.Queued}, nil
}

func TestIngestTextPermission(t *testing.T) {
	args := map[string]any{"title": "t", "text": "some text"}

	t.Run("ErrReadOnly", func(t *testing.T) {
		ing := &recordingIngester{}
		reader := rag.Principal{ID: "key:reader"} // not an admin: no write permission today
		cs := session(t, Deps{Ingest: ing, Principal: &reader})
		msg, isErr := callText(t, cs, "ingest_text", args)
		if !isErr || !strings.HasPrefix(msg, "forbidden: ") || len(ing.got) != 0 {
			t.Fatalf("read-only principal: isError %v, %q, %d ingested", isErr, msg, len(ing.got))
		}
	})
	t.Run("ErrCanWriteSaysNo", func(t *testing.T) {
		ing := &recordingIngester{}
		cs := session(t, Deps{Ingest: ing, Principal: &rag.LocalPrincipal, CanWrite: func(rag.Principal) bool { return false }})
		if msg, isErr := callText(t, cs, "ingest_text", args); !isErr || !strings.HasPrefix(msg, "forbidden: ") {
			t.Fatalf("isError %v, %q", isErr, msg)
		}
	})
	t.Run("ErrNoPrincipal", func(t *testing.T) {
		ing := &recordingIngester{}
		cs := session(t, Deps{Ingest: ing})
		if msg, isErr := callText(t, cs, "ingest_text", args); !isErr || !strings.HasPrefix(msg, "unauthorized: ") {
			t.Fatalf("isError %v, %q", isErr, msg)
		}
	})
	t.Run("Admin", func(t *testing.T) {
		ing := &recordingIngester{}
		cs := session(t, Deps{Ingest: ing, Principal: &rag.LocalPrincipal})
		msg, isErr := callText(t, cs, "ingest_text", map[string]any{"title": "휴가 규정", "text": "연차 15일", "collection": "hr", "tags": []string{"hr"}})
		if isErr || len(ing.got) != 1 {
			t.Fatalf("isError %v, %q", isErr, msg)
		}
		if r := ing.got[0]; r.Name != "휴가 규정.md" || r.Collection != "hr" || r.Owner != "local" || string(r.Data) != "연차 15일" {
			t.Errorf("request %+v", r)
		}
	})
	t.Run("TextAtLimit", func(t *testing.T) {
		ing := &recordingIngester{}
		cs := session(t, Deps{Ingest: ing, Principal: &rag.LocalPrincipal, MaxTextBytes: 64})
		if msg, isErr := callText(t, cs, "ingest_text", map[string]any{"title": "t", "text": strings.Repeat("a", 64)}); isErr {
			t.Fatalf("64 bytes at a 64-byte limit: %q", msg)
		}
		msg, isErr := callText(t, cs, "ingest_text", map[string]any{"title": "t", "text": strings.Repeat("a", 65)})
		if !isErr || !strings.HasPrefix(msg, "payload_too_large: ") || len(ing.got) != 1 {
			t.Fatalf("65 bytes: isError %v, %q", isErr, msg)
		}
	})
	t.Run("ErrNoTitle", func(t *testing.T) {
		cs := session(t, Deps{Ingest: &recordingIngester{}, Principal: &rag.LocalPrincipal})
		if msg, isErr := callText(t, cs, "ingest_text", map[string]any{"text": "x"}); !isErr || !strings.HasPrefix(msg, "invalid_request: ") {
			t.Fatalf("isError %v, %q", isErr, msg)
		}
	})
}

// chunk is a chunk of doc (the document's text) covering runes [start, end) on the given pages.
func chunk(doc []rune, start, end, page int) *rag.Chunk {
	return &rag.Chunk{Text: string(doc[start:end]), StartOffset: start, EndOffset: end, PageStart: page, PageEnd: page}
}

func TestPagesText(t *testing.T) {
	doc := []rune("첫째 쪽의 글입니다. 둘째 쪽의 글입니다. 셋째 쪽의 글입니다.")
	// Three overlapping chunks, one per page.
	chunks := []*rag.Chunk{chunk(doc, 0, 15, 1), chunk(doc, 10, 27, 2), chunk(doc, 22, len(doc), 3)}

	t.Run("WholeWithoutOverlap", func(t *testing.T) {
		out := pagesText(chunks, 0, 0, 1000)
		if out.Text != string(doc) || out.Truncated || out.PageStart != 1 || out.PageEnd != 3 || out.Pages != 3 {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("PageRange", func(t *testing.T) {
		out := pagesText(chunks, 2, 2, 1000)
		if out.Text != string(doc[10:27]) || out.PageStart != 2 || out.PageEnd != 2 || out.Pages != 3 {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("AtLimit", func(t *testing.T) {
		out := pagesText(chunks, 0, 0, len(doc))
		if out.Truncated || out.Text != string(doc) {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("OverLimit", func(t *testing.T) {
		out := pagesText(chunks, 0, 0, len(doc)-1)
		if !out.Truncated || out.NextPage != 3 || out.Text != string(doc[:27]) || out.PageEnd != 2 {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("NotASpan", func(t *testing.T) {
		// A table chunk repeating its header is not its span's text: kept whole, after a blank line.
		table := &rag.Chunk{Text: "| h |\n| 1 |", StartOffset: 12, EndOffset: 20, PageStart: 2, PageEnd: 2}
		out := pagesText([]*rag.Chunk{chunks[0], table}, 0, 0, 1000)
		if out.Text != string(doc[:15])+"\n\n| h |\n| 1 |" {
			t.Fatalf("%q", out.Text)
		}
	})
}
