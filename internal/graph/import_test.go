package graph_test

import (
	"context"
	"errors"
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
		st, err := svc.Stats(ctx, "pumsem")
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
