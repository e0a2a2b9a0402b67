package ingest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/meta"
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

// smallSchema is a small metadata schema.
func smallSchema(t *testing.T) *meta.Schema {
	t.Helper()
	s := &meta.Schema{Key: "id", Title: "title", Fields: []meta.Field{{Name: "id"}, {Name: "title"},
		{Name: "kind", Type: meta.TypeEnum, Values: []string{"A", "B"}}, {Name: "deposit", Type: meta.TypeMoney},
		{Name: "units", Type: meta.TypeInteger}, {Name: "end", Type: meta.TypeDate}}}
	if err := s.Compile(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOpenTableWithSchema(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		csv := "id,title,kind,deposit,units,end,note\nr1,첫째,A,\"12,000,000\",120,2026-11-25,x\nr2,둘째,B,0,8,2027-01-02,\n"
		sch := smallSchema(t)
		tab, err := ingest.OpenTable(strings.NewReader(csv), "", sch, nil)
		if err != nil {
			t.Fatal(err)
		}
		key, m, ok := tab.LookupKey("docs/r1.md") // a file names its row by its stem
		if !ok || key != "r1" || m["id"] != "r1" || m["deposit"] != float64(12000000) || m["units"] != float64(120) ||
			m["end"] != "2026-11-25" || m["note"] != "x" {
			t.Fatalf("row r1 = %q %v %v", key, m, ok)
		}
		rows := tab.UnusedRows()
		if len(rows) != 1 || rows[0].Key != "r2" || rows[0].Line != 3 || rows[0].Meta["title"] != "둘째" {
			t.Fatalf("unused rows = %+v", rows)
		}
		req := ingest.RecordRequest(sch, rows[0], "c", "alice")
		if req.ExternalID != "r2" || req.Title != "둘째" || !strings.Contains(string(req.Data), "| deposit | 0원 |") {
			t.Fatalf("record request %+v\n%s", req, req.Data)
		}
	})
	for name, tc := range map[string]struct{ csv, want string }{
		"Money":       {"id,title,deposit\nr1,a,12만원\n", "line 2, column deposit"},
		"Negative":    {"id,title,deposit\nr1,a,-5\n", "line 2, column deposit"},
		"Integer":     {"id,title,units\nr1,a,1.5\n", "line 2, column units"},
		"Date":        {"id,title,end\nr1,a,2026/11/25\n", "line 2, column end"},
		"DateInvalid": {"id,title,end\nr1,a,2026-02-30\n", "line 2, column end"},
		"Enum":        {"id,title,kind\nr1,a,A\nr2,b,C\n", "line 3, column kind"},
		"NoTitle":     {"id,title\nr1,\n", "line 2: title is missing"},
		"NoKey":       {"title\na\n", `no "id" column`},
	} {
		t.Run("Err"+name, func(t *testing.T) {
			_, err := ingest.OpenTable(strings.NewReader(tc.csv), "", smallSchema(t), nil)
			if rag.ErrorCode(err) != rag.CodeInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want invalid naming %q", err, tc.want)
			}
		})
	}
}
