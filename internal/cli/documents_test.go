package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestAskDocuments ingests two fixtures and asks with --document (repeatable): the passages come from the
// documents named only.
func TestAskDocuments(t *testing.T) {
	dir := t.TempDir()
	cli := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), args, strings.NewReader(""), &out, &errOut, func(k string) string {
			if k == "RAGD_DATA_DIR" {
				return dir
			}
			return ""
		}); code != 0 {
			t.Fatalf("ragd %v: exit %d\n%s", args, code, errOut.String())
		}
		return out.String()
	}
	md := filepath.Join("..", "..", "..", "shared", "fixtures", "md")
	cli("ingest", filepath.Join(md, "ko_react_render-and-commit.md"), filepath.Join(md, "ko_react_importing-and-exporting-components.md"))
	var res struct {
		Hits []jsonHit `json:"hits"`
	}
	if err := json.Unmarshal([]byte(cli("search", "--json", "--k", "20", "컴포넌트 렌더링")), &res); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, h := range res.Hits {
		ids[h.DocumentID] = true
	}
	if len(ids) != 2 {
		t.Fatalf("search found %d documents, want both", len(ids))
	}
	for id := range ids {
		var ans rag.AnswerView
		if err := json.Unmarshal([]byte(cli("ask", "--json", "--document", id, "컴포넌트 렌더링이 일어나는 이유는 무엇인가요?")), &ans); err != nil {
			t.Fatal(err)
		}
		if len(ans.Passages) == 0 {
			t.Fatalf("--document %s: no passages", id)
		}
		for _, p := range ans.Passages {
			if p.DocumentID != id {
				t.Fatalf("--document %s: a passage of %s", id, p.DocumentID)
			}
		}
	}
}
