package chunk

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

func TestCode_LongDeclarationKeepsItsSymbol(t *testing.T) {
	var b strings.Builder
	b.WriteString("// Long does a lot.\n//\n// Its comment is long too: " + strings.Repeat("words ", 40) + "\nfunc Long() {\n")
	for i := range 60 {
		fmt.Fprintf(&b, "\tstep%02d := compute(%d) // the %d-th step of the long function\n", i, i, i)
	}
	b.WriteString("}")
	body := b.String()
	ex := &rag.Extracted{Blocks: []rag.Block{
		{Kind: rag.BlockCode, Text: "package p", Symbol: "p", Line: 1},
		{Kind: rag.BlockCode, Text: body, Symbol: "p.Long", Line: 3},
	}}
	chunks := Split(ex, Options{})
	if len(chunks) < 4 {
		t.Fatalf("%d chunks, want the package and several pieces of Long", len(chunks))
	}
	if chunks[0].Section != "p (line 1)" {
		t.Errorf("package chunk section %q", chunks[0].Section)
	}
	next := 3
	for _, c := range chunks[1:] {
		if c.Kind != rag.KindCode || len([]rune(c.Text)) > DefaultSize {
			t.Errorf("chunk %d: kind %s, %d characters", c.Index, c.Kind, len([]rune(c.Text)))
		}
		last := next + strings.Count(c.Text, "\n")
		if want := fmt.Sprintf("p.Long (lines %d–%d)", next, last); c.Section != want {
			t.Errorf("chunk %d section %q, want %q", c.Index, c.Section, want)
		}
		next = last + 1
	}
	if next != 3+strings.Count(body, "\n")+1 {
		t.Errorf("pieces end at line %d, want %d", next-1, 3+strings.Count(body, "\n"))
	}
	if !strings.HasPrefix(chunks[1].Text, "// Long does a lot.\n//\n// Its comment") || !strings.Contains(chunks[1].Text, "func Long() {") {
		t.Errorf("first piece %q does not start with the doc comment", chunks[1].Text)
	}
}

func TestCode_WithoutLineKeepsHeadingPath(t *testing.T) {
	ex := &rag.Extracted{Blocks: []rag.Block{
		{Kind: rag.BlockHeading, Level: 1, Text: "Install"},
		{Kind: rag.BlockCode, Text: "go run ./cmd/ragd"},
	}}
	chunks := Split(ex, Options{})
	if len(chunks) != 1 || chunks[0].Section != "Install" || chunks[0].Kind != rag.KindCode {
		t.Errorf("chunks %+v", chunks)
	}
}

func TestCode_DocCommentStaysWithItsDeclaration(t *testing.T) {
	doc := "// Parse reads " + strings.Repeat("expressions ", 30) + "\n// and says so.\n"
	body := "func Parse() {\n" + strings.Repeat("\tx := parse(y) // one more line of the body\n", 16) + "}"
	ex := &rag.Extracted{Blocks: []rag.Block{{Kind: rag.BlockCode, Text: doc + body, Symbol: "p.Parse", Line: 10}}}
	chunks := Split(ex, Options{})
	if len(chunks) < 2 || !strings.Contains(chunks[0].Text, "func Parse() {") {
		t.Errorf("first chunk %q does not hold the declaration its comment documents", chunks[0].Text)
	}
}
