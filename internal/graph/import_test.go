package graph_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/graph"
	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/rag"
)

// counting is the hash embedder, counting the texts it embeds.
type counting struct {
	rag.Embedder
	texts atomic.Int64
}

func (c *counting) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Embedder.EmbedDocuments(ctx, texts)
}

func sampleFiles(t *testing.T) map[string][]byte {
	files := map[string][]byte{}
	for _, name := range graph.BundleFiles {
		b, err := os.ReadFile(filepath.Join(sampleDir, name))
		if err != nil {
			t.Skipf("sample not available: %v", err)
		}
		files[name] = b
	}
	return files
}

func TestImport(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	emb := &counting{Embedder: hash.New(hash.DefaultDim)}
	svc := graph.New(f.store, emb, profile.GraphSettings)
	files := sampleFiles(t)
	parse := func(files map[string][]byte) *graph.Bundle {
		b, err := graph.Parse(files)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	t.Run("UnchangedReembedsNothing", func(t *testing.T) {
		res, err := svc.Import(ctx, "pumsem", parse(files))
		if err != nil {
			t.Fatal(err)
		}
		if res.Changed || res.Embedded != 0 || emb.texts.Load() != 0 || res.Entities.Unchanged != 155 || res.Relations.Unchanged != 250 {
			t.Errorf("re-import of the same bundle: %+v, %d texts embedded", res, emb.texts.Load())
		}
	})
	t.Run("ChangedRowsUpdateRemovedDisappear", func(t *testing.T) {
		changed := map[string][]byte{}
		for k, v := range files {
			changed[k] = v
		}
		// 보통인부's description changes; the last relation goes.
		changed[graph.EntitiesFile] = []byte(strings.Replace(string(files[graph.EntitiesFile]), "단순 작업을 하는 인력", "단순 작업 인력", 1))
		rels := strings.Split(strings.TrimSpace(string(files[graph.RelationsFile])), "\n")
		changed[graph.RelationsFile] = []byte(strings.Join(rels[:len(rels)-1], "\n"))
		res, err := svc.Import(ctx, "pumsem", parse(changed))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Changed || res.Embedded != 1 || emb.texts.Load() != 1 || res.Entities.Updated != 1 || res.Relations.Removed != 1 {
			t.Errorf("import of a changed bundle: %+v, %d texts embedded", res, emb.texts.Load())
		}
		st, err := svc.Stats(ctx, rag.LocalPrincipal, "pumsem")
		if err != nil || st.Relations != 249 || st.Entities != 155 {
			t.Errorf("after the change: %+v, %v", st, err)
		}
	})
	t.Run("BrokenBundleChangesNothing", func(t *testing.T) {
		broken := map[string][]byte{}
		for k, v := range files {
			broken[k] = v
		}
		broken[graph.RelationsFile] = append(append([]byte{}, files[graph.RelationsFile]...),
			[]byte(`{"source": "WT01", "target": "LB99", "type": "REQUIRES_LABOR", "properties": {}}`+"\n"+
				`{"source": "WT01", "target": "LB01", "type": "REQUIRES_LABOR", "properties": {}}`+"\n")...)
		broken[graph.EntitiesFile] = append(append([]byte{}, files[graph.EntitiesFile]...),
			[]byte(`{"id": "LB01", "name": "x", "type": "Labor", "properties": {}, "source_section": "S-NOPE"}`+"\n"+"not json\n")...)
		_, err := graph.Parse(broken)
		var be *graph.BundleError
		if !errors.As(err, &be) || rag.ErrorCode(err) != rag.CodeInvalid {
			t.Fatalf("Parse of a broken bundle: %v", err)
		}
		msg := err.Error()
		for _, want := range []string{`relations.jsonl:251: relation REQUIRES_LABOR: unknown target entity "LB99"`,
			`relations.jsonl:252: duplicate relation REQUIRES_LABOR WT01 → LB01`, `entities.jsonl:156: duplicate entity id "LB01"`,
			`source_section "S-NOPE" is not a section`, `entities.jsonl:157: not a JSON object`} {
			if !strings.Contains(msg, want) {
				t.Errorf("the report lacks %q:\n%s", want, msg)
			}
		}
	})
	t.Run("MissingFile", func(t *testing.T) {
		_, err := graph.Parse(map[string][]byte{graph.EntitiesFile: files[graph.EntitiesFile]})
		if err == nil || !strings.Contains(err.Error(), "relations.jsonl: missing") {
			t.Errorf("a bundle without relations: %v", err)
		}
	})
	t.Run("NewSpaceReembedsAll", func(t *testing.T) {
		other := &counting{Embedder: hash.New(256)}
		res, err := graph.New(f.store, other, profile.GraphSettings).Import(ctx, "pumsem", parse(files))
		if err != nil {
			t.Fatal(err)
		}
		if res.Embedded != 155 || other.texts.Load() != 155 || res.Space != "hash/v1/256" {
			t.Errorf("import with another embedder: %+v", res)
		}
	})
}

func TestParseTable(t *testing.T) {
	tbl := graph.Table{Name: "t", Key: "name", Variant: "spec", Columns: []graph.Column{
		{Name: "name", Type: graph.TypeText}, {Name: "spec", Type: graph.TypeText}, {Name: "total", Type: graph.TypeInteger}}}
	for name, tc := range map[string]struct{ csv, err string }{
		"OK":            {csv: "name,spec,total\n콘크리트 타설,25-180-12,\"120,531\"\n"},
		"BadInteger":    {csv: "name,spec,total\na,b,12.5\n", err: `line 2 column total: "12.5" is not an integer`},
		"MissingColumn": {csv: "name,total\na,1\n", err: `the header has no column "spec"`},
		"EmptyKey":      {csv: "name,spec,total\n,b,1\n", err: "line 2: the key column name is empty"},
		"Ragged":        {csv: "name,spec,total\na,b\n", err: "line 2: 2 fields, the header has 3"},
		"Empty":         {csv: "", err: "the file is empty"},
	} {
		t.Run(name, func(t *testing.T) {
			rows, err := graph.ParseTable(tbl, strings.NewReader(tc.csv))
			if tc.err == "" {
				if err != nil || len(rows) != 1 || rows[0].Values["total"] != 120531.0 || rows[0].NormKey != "콘크리트타설" {
					t.Errorf("rows %+v, %v", rows, err)
				}
				return
			}
			if err == nil || rag.ErrorCode(err) != rag.CodeInvalid || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

func TestReembed(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	other := &counting{Embedder: hash.New(256)}
	svc := graph.New(f.store, other, profile.GraphSettings)
	n, err := svc.Reembed(ctx, f.store)
	if err != nil || n != 155 || other.texts.Load() != 155 {
		t.Fatalf("Reembed into a new space: %d, %v (%d texts)", n, err, other.texts.Load())
	}
	if n, err := svc.Reembed(ctx, f.store); err != nil || n != 0 || other.texts.Load() != 155 {
		t.Fatalf("second Reembed: %d, %v", n, err)
	}
	res, err := svc.Retrieve(ctx, rag.LocalPrincipal, f.coll, f.set, "철근 가공 장비")
	if err != nil || !res.Found || res.Entities[0].Name != "철근 가공" || res.Entities[0].Similarity == 0 {
		t.Fatalf("retrieval in the new space: %+v, %v", res, err)
	}
}

// TestLimits checks each limit of bundles and tables at its boundary.
func TestLimits(t *testing.T) {
	entity := func(i int) string { return fmt.Sprintf(`{"id": "E%d", "name": "n%d", "type": "T"}`, i, i) }
	lines := func(n int, line func(int) string) []byte {
		var b strings.Builder
		for i := range n {
			b.WriteString(line(i) + "\n")
		}
		return []byte(b.String())
	}
	t.Run("MaxBundleRows", func(t *testing.T) {
		files := map[string][]byte{graph.EntitiesFile: lines(graph.MaxBundleRows, entity), graph.RelationsFile: nil}
		if b, err := graph.Parse(files); err != nil || len(b.Entities) != graph.MaxBundleRows {
			t.Fatalf("%d rows: %v", graph.MaxBundleRows, err)
		}
		files[graph.EntitiesFile] = lines(graph.MaxBundleRows+1, entity)
		if _, err := graph.Parse(files); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d rows", graph.MaxBundleRows)) {
			t.Fatalf("%d rows: %v", graph.MaxBundleRows+1, err)
		}
	})
	t.Run("MaxProblems", func(t *testing.T) {
		dangling := func(n int) map[string][]byte {
			return map[string][]byte{graph.EntitiesFile: lines(1, entity), graph.RelationsFile: lines(n, func(i int) string {
				return fmt.Sprintf(`{"source": "E0", "target": "X%d", "type": "R"}`, i)
			})}
		}
		var be *graph.BundleError
		if _, err := graph.Parse(dangling(graph.MaxProblems)); !errors.As(err, &be) || len(be.Problems) != graph.MaxProblems || be.More != 0 {
			t.Fatalf("%d problems: %v", graph.MaxProblems, err)
		}
		if _, err := graph.Parse(dangling(graph.MaxProblems + 1)); !errors.As(err, &be) || len(be.Problems) != graph.MaxProblems || be.More != 1 ||
			!strings.Contains(err.Error(), "… and 1 more") {
			t.Fatalf("%d problems: %v", graph.MaxProblems+1, err)
		}
	})
	t.Run("MaxTableRows", func(t *testing.T) {
		tbl := graph.Table{Name: "t", Key: "k", Columns: []graph.Column{{Name: "k", Type: graph.TypeText}}}
		csv := func(n int) *strings.Reader {
			return strings.NewReader("k\n" + string(lines(n, func(i int) string { return fmt.Sprint("r", i) })))
		}
		if rows, err := graph.ParseTable(tbl, csv(graph.MaxTableRows)); err != nil || len(rows) != graph.MaxTableRows {
			t.Fatalf("%d rows: %v", graph.MaxTableRows, err)
		}
		if _, err := graph.ParseTable(tbl, csv(graph.MaxTableRows+1)); err == nil || !strings.Contains(err.Error(), "more than") {
			t.Fatalf("%d rows: %v", graph.MaxTableRows+1, err)
		}
	})
	t.Run("MaxTablesAndColumns", func(t *testing.T) {
		table := func(name string, cols int) graph.Table {
			t := graph.Table{Name: name, Key: "c0"}
			for i := range cols {
				t.Columns = append(t.Columns, graph.Column{Name: fmt.Sprint("c", i), Type: graph.TypeText})
			}
			return t
		}
		p := graph.Profile{}
		for i := range graph.MaxTables {
			p.Tables = append(p.Tables, table(fmt.Sprint("t", i), 1))
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("%d tables: %v", graph.MaxTables, err)
		}
		p.Tables = append(p.Tables, table("one-more", 1))
		if err := p.Validate(); err == nil {
			t.Fatalf("%d tables: accepted", graph.MaxTables+1)
		}
		p.Tables = []graph.Table{table("t", graph.MaxColumns)}
		if err := p.Validate(); err != nil {
			t.Fatalf("%d columns: %v", graph.MaxColumns, err)
		}
		p.Tables = []graph.Table{table("t", graph.MaxColumns+1)}
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "tables[0].columns") {
			t.Fatalf("%d columns: %v", graph.MaxColumns+1, err)
		}
		p = graph.Profile{MinSimilarity: 1.01}
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "min_similarity") {
			t.Fatalf("min_similarity 1.01: %v", err)
		}
	})
}
