package ingest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

func TestReadMetaTable(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		csv := "\ufefffile,lecture_name,week,hours,live\nweek1/1-1.md,\"계정, 구조\",1주차,2.5,true\n1-2.md,캠페인,1주차,,false\n"
		tab, err := ingest.ReadMetaTable(strings.NewReader(csv), "", map[string]any{"live": "string"})
		if err != nil {
			t.Fatal(err)
		}
		m, ok := tab.Lookup("/data/course/week1/1-1.md")
		if !ok || m["lecture_name"] != "계정, 구조" || m["week"] != "1주차" || m["hours"] != 2.5 || m["live"] != "true" {
			t.Fatalf("row by path tail = %v, %v", m, ok)
		}
		if _, ok := tab.Lookup("other/1-1.md"); ok {
			t.Error("a row keyed by a path matched a file of another folder")
		}
		if m, ok := tab.Lookup("1-2.md"); !ok || len(m) != 3 || m["hours"] != nil {
			t.Errorf("empty cells are left out: %v", m)
		}
		tab2, _ := ingest.ReadMetaTable(strings.NewReader(csv), "file", nil)
		tab2.Lookup("x/1-2.md")
		if un := tab2.Unmatched(); len(un) != 1 || un[0] != "line 2: week1/1-1.md" {
			t.Errorf("unmatched = %q", un)
		}
	})
	bad := map[string]struct {
		csv, key string
		types    map[string]any
	}{
		"Empty":        {"", "", nil},
		"NoKeyColumn":  {"name,week\na,1\n", "", nil},
		"EmptyKey":     {"file,week\n,1\n", "", nil},
		"Duplicate":    {"file,week\na,1\na,2\n", "", nil},
		"NotANumber":   {"file,week\na,first\n", "", map[string]any{"week": "number"}},
		"NotABool":     {"file,live\na,maybe\n", "", map[string]any{"live": "bool"}},
		"UnknownType":  {"file,week\na,1\n", "", map[string]any{"week": "date"}},
		"RaggedRow":    {"file,week\na,1,extra\n", "", nil},
		"OtherKeyMiss": {"file,week\na,1\n", "name", nil},
	}
	for name, tc := range bad {
		t.Run("Err"+name, func(t *testing.T) {
			if _, err := ingest.ReadMetaTable(strings.NewReader(tc.csv), tc.key, tc.types); rag.ErrorCode(err) != rag.CodeInvalid {
				t.Errorf("err = %v, want invalid", err)
			}
		})
	}
}

func TestReadMetaTableRowLimit(t *testing.T) {
	table := func(n int) string {
		var b strings.Builder
		b.WriteString("file,n\n")
		for i := range n {
			fmt.Fprintf(&b, "f%d,1\n", i)
		}
		return b.String()
	}
	if _, err := ingest.ReadMetaTable(strings.NewReader(table(ingest.MaxMetaRows)), "", nil); err != nil {
		t.Errorf("%d rows: %v", ingest.MaxMetaRows, err)
	}
	if _, err := ingest.ReadMetaTable(strings.NewReader(table(ingest.MaxMetaRows+1)), "", nil); rag.ErrorCode(err) != rag.CodeInvalid {
		t.Errorf("%d rows: %v, want invalid", ingest.MaxMetaRows+1, err)
	}
}
