package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/generate/extractive"
	"github.com/ragd/ragd/internal/graph"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/openai"
	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/provider"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
)

// extractProfile asks for people and companies and who works for or founded whom.
const extractProfile = `name: news
graph:
  extract:
    entity_types: [Person, Company]
    relation_types: [WORKS_FOR]
    instructions: A company is a business with a name.
    max_chars: 500
    max_calls: 3
`

// modelGraph is the fake model: it reads "X works for Y." and "X founded Y." sentences of the part it is
// given and answers with their people and companies — and, as a careless model would, a planet of a type
// the profile does not have, a FOUNDED relation of an unknown type and a relation to an entity it never
// listed.
func modelGraph(prompt string) string {
	type ent struct{ ID, Name, Type, Description string }
	type rel struct{ Source, Target, Type, Description string }
	var ents []ent
	var rels []rel
	id := func(name, typ string) string {
		for _, e := range ents {
			if e.Name == name {
				return e.ID
			}
		}
		ents = append(ents, ent{fmt.Sprintf("e%d", len(ents)+1), name, typ, name + " is named in the text."})
		return ents[len(ents)-1].ID
	}
	for _, m := range regexp.MustCompile(`([A-Z]\w+ [A-Z]\w+) (works for|founded) ([A-Z]\w+(?: Corp)?)\.`).FindAllStringSubmatch(prompt, -1) {
		p, c := id(m[1], "Person"), id(m[3], "Company")
		typ := "WORKS_FOR"
		if m[2] == "founded" {
			typ = "FOUNDED"
		}
		rels = append(rels, rel{p, c, typ, m[0]})
	}
	if strings.Contains(prompt, "Mars") {
		ents = append(ents, ent{"p1", "Mars", "Planet", "a planet"})
		rels = append(rels, rel{"e1", "e404", "WORKS_FOR", "nobody"})
	}
	out := map[string]any{"entities": []any{}, "relations": []any{}}
	for _, e := range ents {
		out["entities"] = append(out["entities"].([]any), map[string]any{"id": e.ID, "name": e.Name, "type": e.Type, "description": e.Description})
	}
	for _, r := range rels {
		out["relations"] = append(out["relations"].([]any), map[string]any{"source": r.Source, "target": r.Target, "type": r.Type, "description": r.Description})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

type extractFixture struct {
	store *sqlite.Store
	svc   *graph.Service
	pipe  *ingest.Pipeline
	fake  *fakeapi.OpenAI
	coll  *rag.Collection

	mu      sync.Mutex
	results []*graph.ExtractResult
	prompts []string
}

func setupExtract(t *testing.T) *extractFixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ragd.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &extractFixture{store: st}
	var gen *openai.Generator
	f.fake, gen = fakeapi.Start(t, fakeapi.NewOpenAI, "sk-extract", func(url string) (*openai.Generator, error) {
		return openai.NewGenerator(openai.GeneratorConfig{Config: provider.Config{APIKey: "sk-extract", BaseURL: url, Timeout: 5 * time.Second}})
	})
	f.fake.SetStructured(func(prompt string, _ map[string]any) string {
		f.mu.Lock()
		f.prompts = append(f.prompts, prompt)
		f.mu.Unlock()
		return modelGraph(prompt)
	})
	prof, err := profile.Decode("news.yaml", []byte(extractProfile))
	if err != nil {
		t.Fatal(err)
	}
	if f.coll, _, err = profile.Put(ctx, st, "news", prof, "local"); err != nil {
		t.Fatal(err)
	}
	emb := hash.New(0)
	f.svc = graph.New(st, emb, profile.GraphSettings)
	f.svc.UseCompleter(gen)
	ex, err := extract.New(extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	f.pipe = ingest.New(st, ex, emb, ingest.Options{AfterCommit: func(ctx context.Context, doc *rag.Document, text string) error {
		res, err := f.svc.ExtractDocument(ctx, doc, text)
		f.mu.Lock()
		f.results = append(f.results, res)
		f.mu.Unlock()
		return err
	}})
	return f
}

func (f *extractFixture) ingest(t *testing.T, name, text string) (*rag.Document, ingest.Outcome) {
	t.Helper()
	d, out, err := f.pipe.Ingest(context.Background(), rag.LocalPrincipal, ingest.Request{Collection: "news", Name: name, Data: []byte(text)})
	if err != nil {
		t.Fatal(err)
	}
	return d, out
}

func (f *extractFixture) last() *graph.ExtractResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.results[len(f.results)-1]
}

// names returns the names of the collection's entities that document doc contributed.
func (f *extractFixture) names(t *testing.T, doc string) []string {
	t.Helper()
	ents, err := f.store.GraphEntities(context.Background(), rag.LocalPrincipal, f.coll.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.DocumentID == doc {
			out = append(out, e.Name+"/"+e.Type)
		}
	}
	slices.Sort(out)
	return out
}

// TestExtractDocuments ingests ordinary documents into a collection whose profile asks for extraction,
// with the OpenAI wire-format fake as the model: each new or changed version is extracted once, what the
// model returns is validated, a new version replaces its document's entities and nothing else, and graph
// retrieval finds what was extracted.
func TestExtractDocuments(t *testing.T) {
	f := setupExtract(t)
	ctx := context.Background()
	a, _ := f.ingest(t, "staff.txt", "Alice Kim works for Acme Corp. Bob Lee founded Globex. Mars is far away.")
	b, _ := f.ingest(t, "board.txt", "Carol Park works for Initech.")
	if got := f.names(t, a.ID); !slices.Equal(got, []string{"Acme Corp/Company", "Alice Kim/Person", "Bob Lee/Person", "Globex/Company"}) {
		t.Fatalf("entities of staff.txt: %v", got)
	}
	f.mu.Lock()
	first := *f.results[0]
	f.mu.Unlock()
	// Mars (Planet) and FOUNDED are of unknown types; e1 → e404 is dangling.
	if first.Entities != 4 || first.Relations != 1 || first.DroppedUnknownType != 2 || first.DroppedDangling != 1 || first.Calls != 1 {
		t.Errorf("validation of the model's answer: %+v", first)
	}
	if v := f.fake.Violations(); len(v) > 0 {
		t.Fatalf("the fake refused the request: %v", v)
	}
	req, _ := f.fake.LastRequest(fakeapi.EndpointGenerate)
	var body struct {
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Strict bool           `json:"strict"`
				Schema map[string]any `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := req.JSON(&body); err != nil {
		t.Fatal(err)
	}
	if body.ResponseFormat.Type != "json_schema" || !body.ResponseFormat.JSONSchema.Strict ||
		!strings.Contains(fmt.Sprint(body.ResponseFormat.JSONSchema.Schema), "WORKS_FOR") ||
		!strings.Contains(body.Messages[0].Content, "Person, Company") || !strings.Contains(body.Messages[0].Content, "A company is a business") {
		t.Errorf("the structured request: %+v", body)
	}

	// Graph retrieval finds an extracted entity and its relation.
	set, err := f.svc.Settings(f.coll)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.Retrieve(ctx, rag.LocalPrincipal, f.coll, set, "Who does Alice Kim work for?")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || res.Entities[0].Name != "Alice Kim" || len(res.Entities[0].Edges) != 1 || res.Entities[0].Edges[0].Other.Name != "Acme Corp" ||
		res.Entities[0].Path != "staff" || len(res.Passages) == 0 || !strings.Contains(res.Passages[0].Content, "Alice Kim works for Acme Corp") {
		t.Errorf("retrieval of an extracted entity: %+v", res)
	}

	// Answers: from the graph when it finds the entity; from the documents (false) when a graph that was
	// only extracted finds nothing.
	for q, want := range map[string]bool{"Who does Alice Kim work for?": true, "How is the weather on Mars today?": false} {
		ans := &rag.Answer{Question: q, Language: "en"}
		ok, err := f.svc.AnswerGraph(ctx, rag.LocalPrincipal, "news", ans, extractive.New(extractive.Options{}), rag.GenerateRequest{},
			func(rag.AnswerEvent) error { return nil })
		if err != nil || ok != want || (ok && !strings.Contains(ans.Text, "Acme Corp")) {
			t.Errorf("%q answered from the graph: %v (want %v), %q, %v", q, ok, want, ans.Text, err)
		}
	}

	// The same content again is unchanged: no model call.
	calls := f.fake.StructuredCalls()
	if _, out := f.ingest(t, "staff.txt", "Alice Kim works for Acme Corp. Bob Lee founded Globex. Mars is far away."); out != ingest.Unchanged || f.fake.StructuredCalls() != calls {
		t.Errorf("an unchanged upload: %s, %d model calls (was %d)", out, f.fake.StructuredCalls(), calls)
	}
	// A new version: one call for it, its old entities gone, the other document's kept.
	f.ingest(t, "staff.txt", "Alice Kim works for Hooli.")
	if f.fake.StructuredCalls() != calls+1 {
		t.Errorf("a new version made %d model calls, want 1", f.fake.StructuredCalls()-calls)
	}
	if got := f.names(t, a.ID); !slices.Equal(got, []string{"Alice Kim/Person", "Hooli/Company"}) {
		t.Errorf("entities of the new version: %v", got)
	}
	if got := f.names(t, b.ID); !slices.Equal(got, []string{"Carol Park/Person", "Initech/Company"}) {
		t.Errorf("entities of the other document: %v", got)
	}

	// Deleting a document removes its entities.
	if _, err := f.store.TrashDocument(ctx, rag.LocalPrincipal, b.ID); err != nil {
		t.Fatal(err)
	}
	if got := f.names(t, b.ID); len(got) != 0 {
		t.Errorf("entities of a deleted document: %v", got)
	}
}

// TestExtractReembed: after a change of embedder the re-embed embeds the extracted entities into the new
// space, keeping them the document's.
func TestExtractReembed(t *testing.T) {
	f := setupExtract(t)
	ctx := context.Background()
	d, _ := f.ingest(t, "staff.txt", "Alice Kim works for Acme Corp.")
	emb := hash.New(64)
	svc := graph.New(f.store, emb, profile.GraphSettings)
	n, err := svc.Reembed(ctx, f.store)
	if err != nil || n != 2 {
		t.Fatalf("re-embedded %d entities, %v; want 2", n, err)
	}
	vecs, err := f.store.GraphVectors(ctx, rag.LocalPrincipal, f.coll.ID, emb.Space())
	if err != nil || len(vecs) != 2 || len(vecs[0].Vector) != 64 {
		t.Fatalf("vectors in the new space: %+v, %v", vecs, err)
	}
	if got := f.names(t, d.ID); len(got) != 2 {
		t.Errorf("the document's entities after the re-embed: %v", got)
	}
	if n, err := svc.Reembed(ctx, f.store); err != nil || n != 0 {
		t.Errorf("a second re-embed embedded %d, %v", n, err)
	}
}

// TestExtractBounds checks the bounded input: each call gets at most max_chars of the text, and at most
// max_calls calls are made, the rest reported as truncated.
func TestExtractBounds(t *testing.T) {
	f := setupExtract(t)
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "Person%c Name%c works for Company%c.\n\n", 'A'+i%26, 'A'+i/26, 'A'+i%26)
	}
	f.ingest(t, "long.txt", b.String())
	res := f.last()
	if res.Calls != 3 || !res.Truncated {
		t.Fatalf("a long document: %+v", res)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.prompts {
		_, text, _ := strings.Cut(p, "\n\n")
		if n := len([]rune(text)); n > 500 || n < 250 {
			t.Errorf("a part of %d characters, want at most 500 (cut at paragraphs): %q", n, text)
		}
	}
}

// TestExtractFailure: a model that answers no JSON fails the extraction and leaves no entity of the
// replaced version behind; the version itself is committed.
func TestExtractFailure(t *testing.T) {
	f := setupExtract(t)
	d, _ := f.ingest(t, "staff.txt", "Alice Kim works for Acme Corp.")
	if len(f.names(t, d.ID)) != 2 {
		t.Fatal("nothing extracted")
	}
	f.fake.SetStructured(func(string, map[string]any) string { return "I think Alice works for Acme." })
	d, _ = f.ingest(t, "staff.txt", "Alice Kim works for Hooli.")
	if d.Version != 2 || d.Status != rag.StatusReady {
		t.Errorf("the version after a failed extraction: %+v", d)
	}
	if got := f.names(t, d.ID); len(got) != 0 {
		t.Errorf("entities of the replaced version left: %v", got)
	}
}

// TestExtractionProfile checks the validation of the extract section.
func TestExtractionProfile(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"entity_types: []", "graph: extract.entity_types: 0 types"},
		{"entity_types: [A, A]", `graph: extract.entity_types[1]: type "A" is listed twice`},
		{"entity_types: [A]\n    relation_types: [' R']", "relation_types[0]"},
		{"entity_types: [A]\n    max_chars: 100", "extract.max_chars: 100 is not between 500 and 50000"},
		{"entity_types: [A]\n    max_calls: 101", "extract.max_calls: 101 is not between 1 and 100"},
	} {
		_, err := profile.Decode("c.yaml", []byte("name: c\ngraph:\n  extract:\n    "+tc.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
