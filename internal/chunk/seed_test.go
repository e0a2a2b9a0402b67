package chunk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// markdownBlocks is a small reader of the seeds' markdown, enough to give Split real headings, paragraphs,
// tables and code (the real extractor lives in internal/extract).
func markdownBlocks(text string) []rag.Block {
	var out []rag.Block
	var cur []string
	kind := rag.BlockParagraph
	flush := func() {
		if len(cur) > 0 {
			b := rag.Block{Kind: kind, Text: strings.Join(cur, "\n")}
			if kind == rag.BlockTable {
				b.HeaderRows = 1
			}
			out = append(out, b)
		}
		cur, kind = nil, rag.BlockParagraph
	}
	inCode := false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			if inCode {
				flush()
			} else {
				flush()
				kind = rag.BlockCode
			}
			inCode = !inCode
		case inCode:
			cur = append(cur, l)
		case strings.HasPrefix(l, "#"):
			flush()
			level := len(l) - len(strings.TrimLeft(l, "#"))
			out = append(out, rag.Block{Kind: rag.BlockHeading, Level: level, Text: strings.TrimSpace(l[level:])})
		case strings.HasPrefix(l, "|"):
			if kind != rag.BlockTable {
				flush()
				kind = rag.BlockTable
			}
			cur = append(cur, l)
		case strings.TrimSpace(l) == "" || strings.TrimSpace(l) == "---":
			flush()
		default:
			if kind == rag.BlockTable {
				flush()
			}
			cur = append(cur, l)
		}
	}
	flush()
	return out
}

// TestSplitSeeds splits the real seed documents at several sizes and checks every chunk's invariants.
func TestSplitSeeds(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../../shared/seeds/0*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed files (%v)", err)
	}
	tables := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ex := &rag.Extracted{Blocks: markdownBlocks(string(data))}
		for _, opt := range []Options{{}, {Size: 300, Overlap: 60}, {Size: 120, Overlap: -1, MinSection: -1}} {
			chunks := Split(ex, opt)
			checkChunks(t, ex, opt, chunks)
			kinds := map[rag.ChunkKind]int{}
			for _, c := range chunks {
				kinds[c.Kind]++
				if c.Kind == rag.KindText && c.Section == "" {
					t.Errorf("%s: chunk %d has no section: %q", filepath.Base(f), c.Index, c.Text)
				}
			}
			if kinds[rag.KindText] == 0 {
				t.Errorf("%s %+v: chunk kinds %v, want text", filepath.Base(f), opt, kinds)
			}
			tables += kinds[rag.KindTable]
		}
	}
	if tables == 0 {
		t.Error("no table chunks from the seeds, which hold tables")
	}
}
