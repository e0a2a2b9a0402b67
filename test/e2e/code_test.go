package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/testkit"
)

// TestCodeQuestionsFindTheirFunction ingests this repository's own internal/ tree and asks questions that
// name a function or method, written from the code: the function's chunk (its symbol path in the section)
// must come first for at least 9 in 10 of them, and the section's line range must hold its declaration.
func TestCodeQuestionsFindTheirFunction(t *testing.T) {
	env := []string{"RAGD_DATA_DIR=" + t.TempDir()}
	tree := filepath.Join(testkit.Root(), "internal")
	if r := ragd(t, env, "ingest", tree); !strings.Contains(r.stdout, "ingested ") {
		t.Fatalf("ingest internal/: exit %d\n%s\n%s", r.code, lastLine(r.stdout), r.stderr)
	}
	questions := []struct{ q, symbol, decl string }{
		{"What does LimitListener do?", "server.LimitListener", "func LimitListener("},
		{"How does byteBudget.reserve decide whether a request fits?", "server.byteBudget.reserve", "func (b *byteBudget) reserve("},
		{"How does Sentences split Korean and English text?", "chunk.Sentences", "func Sentences("},
		{"How does MediaType detect the type of a file without an extension?", "extract.MediaType", "func MediaType("},
		{"What does normCode keep of the indentation?", "extract.normCode", "func normCode("},
		{"How does markdownTable render a table without a header row?", "extract.markdownTable", "func markdownTable("},
		{"What does DetectLanguage return?", "textproc.DetectLanguage", "func DetectLanguage("},
		{"What does ContextText put in front of a chunk's text?", "textproc.ContextText", "func ContextText("},
		{"How does trimToken handle a possessive?", "textproc.trimToken", "func trimToken("},
		{"When does splitter.pageBreak report a page break?", "chunk.splitter.pageBreak", "func (s *splitter) pageBreak("},
		{"How does filter.Parse read key=value expressions?", "filter.Parse", "func Parse("},
		{"What does MediaTypes expand short names to?", "filter.MediaTypes", "func MediaTypes("},
	}
	lines := regexp.MustCompile(`^(.+) \(lines? (\d+)(?:–(\d+))?\)$`)
	first := 0
	for _, q := range questions {
		var res struct{ Hits []hit }
		mustJSON(t, ragd(t, env, "search", "--json", "--k", "3", q.q), &res)
		if len(res.Hits) == 0 {
			t.Errorf("%q: no hits", q.q)
			continue
		}
		h := res.Hits[0]
		m := lines.FindStringSubmatch(h.Section)
		if m == nil || m[1] != q.symbol {
			t.Logf("%q: first hit %s %q, want %s; hits: %s", q.q, filepath.Base(h.Source), h.Section, q.symbol, describeCodeHits(res.Hits))
			continue
		}
		first++
		// The line range is the declaration's: the source's lines in it hold the declaration.
		a, _ := strconv.Atoi(m[2])
		b := a
		if m[3] != "" {
			b, _ = strconv.Atoi(m[3])
		}
		src, err := os.ReadFile(h.Source)
		if err != nil {
			t.Fatalf("hit source: %v", err)
		}
		all := strings.Split(string(src), "\n")
		if a < 1 || b > len(all) || a > b || !strings.Contains(strings.Join(all[a-1:b], "\n"), q.decl) {
			t.Errorf("%q: %s lines %d–%d do not hold %q", q.q, h.Source, a, b, q.decl)
		}
	}
	t.Logf("%d of %d questions found their function first", first, len(questions))
	if first*10 < len(questions)*9 {
		t.Errorf("%d of %d questions found their function first, want at least 9 in 10", first, len(questions))
	}

	// A filter by language: only Go sources.
	var res struct{ Hits []hit }
	mustJSON(t, ragd(t, env, "search", "--json", "--k", "10", "--filter", "type=go", "chunk size"), &res)
	if len(res.Hits) == 0 {
		t.Fatal("type=go: no hits")
	}
	for _, h := range res.Hits {
		if filepath.Ext(h.Source) != ".go" {
			t.Errorf("type=go: hit %s", h.Source)
		}
	}
	mustJSON(t, ragd(t, env, "search", "--json", "--k", "10", "--filter", "type=python", "chunk size"), &res)
	if len(res.Hits) != 0 {
		t.Errorf("type=python: %d hits in a tree without Python: %s", len(res.Hits), describeCodeHits(res.Hits))
	}
}

func describeCodeHits(hs []hit) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "[%s %s] ", filepath.Base(h.Source), h.Section)
	}
	return b.String()
}
