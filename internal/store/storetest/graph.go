package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// smallGraph is a graph of two sections, three entities and their relations.
func smallGraph(space rag.Space) *rag.StoredGraph {
	return &rag.StoredGraph{
		Sections: []rag.GraphSection{
			{ID: "S1", Name: "Part 1", Path: "Part 1", Level: "part"},
			{ID: "S1-1", Name: "1-1 Pouring", ParentID: "S1", Path: "Part 1 > 1-1 Pouring", Level: "clause"},
		},
		Entities: []rag.GraphEntity{
			{ID: "W1", Name: "concrete pouring", Type: "WorkType", Properties: map[string]any{"unit": "m3", "spec": "25-210-15"},
				SourceSection: "S1-1", TextHash: "h1", Space: space.ID(), Vector: basis(space.Dim, 0)},
			{ID: "L1", Name: "laborer", Type: "Labor", Properties: map[string]any{"unit": "person"}, SourceSection: "S1-1",
				TextHash: "h2", Space: space.ID(), Vector: basis(space.Dim, 1)},
			{ID: "S1-1", Name: "1-1 Pouring", Type: "Section", SourceSection: "S1-1", TextHash: "h3"},
		},
		Relations: []rag.GraphRelation{
			{Source: "W1", Target: "L1", Type: "REQUIRES_LABOR", Properties: map[string]any{"quantity": 0.122, "unit": "person"}},
			{Source: "W1", Target: "S1-1", Type: "BELONGS_TO"},
		},
		Chunks: []rag.GraphChunk{{ID: "C1", SectionID: "S1-1", Content: "1-1 Pouring: laborer 0.122 per m3"}},
		Postings: []rag.GraphPosting{
			{EntityID: "W1", Term: "concrete", Weight: 3}, {EntityID: "W1", Term: "pouring", Weight: 3},
			{EntityID: "L1", Term: "laborer", Weight: 3}, {EntityID: "S1-1", Term: "pouring", Weight: 3},
		},
	}
}

func testGraph(t *testing.T, open func(t *testing.T) rag.Store) {
	ctx := context.Background()
	s := open(t)
	gs, ok := s.(rag.GraphStore)
	if !ok {
		t.Fatalf("%T does not implement rag.GraphStore", s)
	}
	space := rag.Space{Provider: "test", Model: "m", Dim: 4}
	c := mustCollection(t, s, "graph")
	other := mustCollection(t, s, "other")
	p := rag.LocalPrincipal

	t.Run("ErrNotFound", func(t *testing.T) {
		if err := gs.ReplaceGraph(ctx, "no-such-collection", smallGraph(space)); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("ReplaceGraph of a missing collection: %v, want ErrNotFound", err)
		}
		if err := gs.ReplaceRecords(ctx, "no-such-collection", "t", nil); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("ReplaceRecords of a missing collection: %v, want ErrNotFound", err)
		}
	})

	g := smallGraph(space)
	if err := gs.ReplaceGraph(ctx, c.ID, g); err != nil {
		t.Fatal(err)
	}
	t.Run("ReadBack", func(t *testing.T) {
		secs, err1 := gs.GraphSections(ctx, p, c.ID, nil)
		rels, err2 := gs.GraphEdges(ctx, p, c.ID, nil)
		chunks, err3 := gs.GraphChunks(ctx, p, c.ID, nil)
		ents, err4 := gs.GraphEntities(ctx, p, c.ID, nil)
		posts, n, err5 := gs.GraphPostings(ctx, p, c.ID, nil)
		if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(secs, g.Sections) || !jsonEqual(rels, g.Relations) || !jsonEqual(chunks, g.Chunks) {
			t.Errorf("graph read back differs: %+v %+v %+v", secs, rels, chunks)
		}
		if len(ents) != 3 || ents[0].TextHash != "h1" || ents[0].Space != space.ID() || ents[0].Vector != nil || ents[2].Space != "" ||
			!jsonEqual(ents[0].Properties, g.Entities[0].Properties) {
			t.Errorf("entities read back: %+v", ents)
		}
		if n != 3 || len(posts) != 4 || posts[0].Term != "concrete" {
			t.Errorf("postings read back (by term): %+v", posts)
		}
		vecs, err := gs.GraphVectors(ctx, p, c.ID, space)
		if err != nil || len(vecs) != 2 || !reflect.DeepEqual(vecs[0].Vector, g.Entities[0].Vector) {
			t.Errorf("vectors read back: %+v, %v", vecs, err)
		}
		if e, err := gs.GraphEntities(ctx, p, other.ID, nil); err != nil || len(e) != 0 {
			t.Errorf("another collection's entities: %+v, %v", e, err)
		}
		if e, err := gs.GraphEntities(ctx, p, c.ID, []string{}); err != nil || len(e) != 0 {
			t.Errorf("an empty id list: %+v, %v", e, err)
		}
	})
	t.Run("Reads", func(t *testing.T) {
		st, err := gs.GraphStats(ctx, rag.LocalPrincipal, c.ID)
		if err != nil || st.Generation != 1 || st.Sections != 2 || st.Entities != 3 || st.Relations != 2 || st.Chunks != 1 || st.Empty() {
			t.Errorf("GraphStats = %+v, %v", st, err)
		}
		// As a principal who does not see the collection: nothing, not even counts.
		if st, err := gs.GraphStats(ctx, bob, c.ID); err != nil || !st.Empty() || st.Generation != 0 || st.Sections != 0 || len(st.Tables) != 0 {
			t.Errorf("GraphStats as a stranger = %+v, %v; want nothing", st, err)
		}
		vecs, err := gs.GraphVectors(ctx, p, c.ID, space)
		if err != nil || len(vecs) != 2 || vecs[0].ID != "W1" || vecs[1].ID != "L1" || len(vecs[1].Vector) != 4 {
			t.Errorf("GraphVectors = %+v, %v", vecs, err)
		}
		if vecs, err := gs.GraphVectors(ctx, p, other.ID, space); err != nil || len(vecs) != 0 {
			t.Errorf("GraphVectors of another collection = %+v, %v", vecs, err)
		}
		posts, n, err := gs.GraphPostings(ctx, p, c.ID, []string{"pouring", "absent"})
		if err != nil || n != 3 || len(posts) != 2 || posts[0].EntityID != "S1-1" || posts[1].EntityID != "W1" || posts[1].Weight != 3 {
			t.Errorf("GraphPostings = %+v, %d, %v", posts, n, err)
		}
		ents, err := gs.GraphEntities(ctx, p, c.ID, []string{"L1", "W1", "nope"})
		if err != nil || len(ents) != 2 || ents[0].ID != "W1" || ents[0].Vector != nil || ents[0].Properties["unit"] != "m3" {
			t.Errorf("GraphEntities = %+v, %v", ents, err)
		}
		edges, err := gs.GraphEdges(ctx, p, c.ID, []string{"L1"})
		if err != nil || len(edges) != 1 || edges[0].Source != "W1" || edges[0].Properties["quantity"] != 0.122 {
			t.Errorf("GraphEdges (incoming) = %+v, %v", edges, err)
		}
		if edges, err := gs.GraphEdges(ctx, p, c.ID, []string{"W1"}); err != nil || len(edges) != 2 {
			t.Errorf("GraphEdges (outgoing) = %+v, %v", edges, err)
		}
		secs, err := gs.GraphSections(ctx, p, c.ID, []string{"S1-1"})
		if err != nil || len(secs) != 1 || secs[0].Path != "Part 1 > 1-1 Pouring" || secs[0].ParentID != "S1" {
			t.Errorf("GraphSections = %+v, %v", secs, err)
		}
		chunks, err := gs.GraphChunks(ctx, p, c.ID, []string{"S1-1"})
		if err != nil || len(chunks) != 1 || chunks[0].ID != "C1" {
			t.Errorf("GraphChunks = %+v, %v", chunks, err)
		}
		if chunks, err := gs.GraphChunks(ctx, p, other.ID, []string{"S1-1"}); err != nil || len(chunks) != 0 {
			t.Errorf("GraphChunks of another collection = %+v, %v", chunks, err)
		}
	})
	t.Run("Replace", func(t *testing.T) {
		// A smaller graph: the labor entity, its relation and term disappear; the work type changes.
		g2 := smallGraph(space)
		g2.Entities = []rag.GraphEntity{g2.Entities[0], g2.Entities[2]}
		g2.Entities[0].Properties = map[string]any{"unit": "m3", "spec": "25-180-12"}
		g2.Relations = g2.Relations[1:]
		g2.Postings = []rag.GraphPosting{g2.Postings[0], g2.Postings[1], g2.Postings[3]}
		if err := gs.ReplaceGraph(ctx, c.ID, g2); err != nil {
			t.Fatal(err)
		}
		st, err := gs.GraphStats(ctx, rag.LocalPrincipal, c.ID)
		if err != nil || st.Generation != 2 || st.Entities != 2 || st.Relations != 1 {
			t.Errorf("after replace: %+v, %v", st, err)
		}
		ents, err := gs.GraphEntities(ctx, p, c.ID, []string{"W1", "L1"})
		if err != nil || len(ents) != 1 || ents[0].Properties["spec"] != "25-180-12" {
			t.Errorf("after replace: entities %+v, %v", ents, err)
		}
		if posts, _, err := gs.GraphPostings(ctx, p, c.ID, []string{"laborer"}); err != nil || len(posts) != 0 {
			t.Errorf("after replace: postings of a removed entity %+v, %v", posts, err)
		}
	})
	t.Run("DocumentGraph", func(t *testing.T) { testDocumentGraph(t, s, gs, c, space) })
	t.Run("CollectionState", func(t *testing.T) { testCollectionState(t, s, gs) })
	t.Run("Records", func(t *testing.T) {
		rows := []rag.Record{
			{Key: "concrete pouring", NormKey: "concretepouring", Variant: "25-180-12", Values: map[string]any{"total": 120531.0}},
			{Key: "concrete pouring", NormKey: "concretepouring", Variant: "25-210-15", Values: map[string]any{"total": 126600.0}},
			{Key: "formwork", NormKey: "formwork", Variant: "", Values: map[string]any{"total": 5.5}},
		}
		if err := gs.ReplaceRecords(ctx, c.ID, "prices", rows); err != nil {
			t.Fatal(err)
		}
		got, err := gs.Records(ctx, p, c.ID, "prices", []string{"concretepouring"})
		if err != nil || len(got) != 2 || got[0].Variant != "25-180-12" || got[1].Values["total"] != 126600.0 || got[0].Key != "concrete pouring" {
			t.Errorf("Records = %+v, %v", got, err)
		}
		if got, err := gs.Records(ctx, p, other.ID, "prices", []string{"concretepouring"}); err != nil || len(got) != 0 {
			t.Errorf("Records of another collection = %+v, %v", got, err)
		}
		if err := gs.ReplaceRecords(ctx, c.ID, "prices", rows[2:]); err != nil {
			t.Fatal(err)
		}
		st, err := gs.GraphStats(ctx, rag.LocalPrincipal, c.ID)
		if err != nil || st.Tables["prices"] != 1 {
			t.Errorf("after replacing the table: %+v, %v", st, err)
		}
		if err := gs.ReplaceRecords(ctx, c.ID, "prices", nil); err != nil {
			t.Fatal(err)
		}
		if st, err := gs.GraphStats(ctx, rag.LocalPrincipal, c.ID); err != nil || len(st.Tables) != 0 {
			t.Errorf("after dropping the table: %+v, %v", st, err)
		}
	})
}

// docGraph is what a document contributes to a graph: a section of its own, entities named after tag, a
// relation between them, a passage and postings.
func docGraph(docID, tag string) *rag.StoredGraph {
	sec := "doc/" + docID
	a, b := sec+"/"+tag+"1", sec+"/"+tag+"2"
	return &rag.StoredGraph{
		Sections:  []rag.GraphSection{{ID: sec, Name: "Report", Path: "Report"}},
		Entities:  []rag.GraphEntity{{ID: a, Name: tag + " one", Type: "Org", SourceSection: sec}, {ID: b, Name: tag + " two", Type: "Person", SourceSection: sec}},
		Relations: []rag.GraphRelation{{Source: b, Target: a, Type: "WORKS_FOR"}},
		Chunks:    []rag.GraphChunk{{ID: sec + "#0", SectionID: sec, Content: tag + " one employs " + tag + " two"}},
		Postings:  []rag.GraphPosting{{EntityID: a, Term: tag, Weight: 3}, {EntityID: b, Term: tag, Weight: 3}},
	}
}

// testDocumentGraph checks the rows extracted from documents: they come after the bundle's, a bundle
// import keeps them, a document's new graph replaces only its own rows, and deleting the document removes
// them.
func testDocumentGraph(t *testing.T, s rag.Store, gs rag.GraphStore, c *rag.Collection, space rag.Space) {
	ctx := t.Context()
	p := rag.LocalPrincipal
	d1 := newDoc(t, s, c.ID, "report-1")
	d2 := newDoc(t, s, c.ID, "report-2")
	if err := gs.ReplaceDocumentGraph(ctx, "no-such-collection", d1.ID, docGraph(d1.ID, "acme")); !errors.Is(err, rag.ErrNotFound) {
		t.Fatalf("ReplaceDocumentGraph of a missing collection: %v, want ErrNotFound", err)
	}
	if err := gs.ReplaceDocumentGraph(ctx, c.ID, "", docGraph(d1.ID, "acme")); rag.ErrorCode(err) != rag.CodeInvalid {
		t.Fatalf("ReplaceDocumentGraph without a document: %v, want invalid", err)
	}
	before, err := gs.GraphStats(ctx, rag.LocalPrincipal, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		d   *rag.Document
		tag string
	}{{d1, "acme"}, {d2, "globex"}} {
		if err := gs.ReplaceDocumentGraph(ctx, c.ID, step.d.ID, docGraph(step.d.ID, step.tag)); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := gs.GraphEntities(ctx, p, c.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := len(ents)
	if n != before.Entities+4 || ents[n-4].Name != "acme one" || ents[n-1].Name != "globex two" || ents[n-4].DocumentID != d1.ID ||
		ents[n-1].DocumentID != d2.ID || ents[0].DocumentID != "" {
		t.Fatalf("entities after two documents' graphs (bundle first, then in extraction order): %+v", ents)
	}
	rels, err := gs.GraphEdges(ctx, p, c.ID, []string{"doc/" + d1.ID + "/acme1"})
	if err != nil || len(rels) != 1 || rels[0].Type != "WORKS_FOR" || rels[0].DocumentID != d1.ID {
		t.Errorf("a document's relations: %+v, %v", rels, err)
	}
	if chunks, err := gs.GraphChunks(ctx, p, c.ID, []string{"doc/" + d2.ID}); err != nil || len(chunks) != 1 || chunks[0].DocumentID != d2.ID {
		t.Errorf("a document's passages: %+v, %v", chunks, err)
	}
	st, err := gs.GraphStats(ctx, rag.LocalPrincipal, c.ID)
	if err != nil || st.Generation != before.Generation+2 || st.Sections != before.Sections+2 || st.Relations != before.Relations+2 ||
		before.Extracted != 0 || st.Extracted != 4 || st.OnlyExtracted() {
		t.Errorf("stats after two documents' graphs: %+v (before %+v), %v", st, before, err)
	}

	// A bundle import replaces the bundle's rows only.
	if err := gs.ReplaceGraph(ctx, c.ID, smallGraph(space)); err != nil {
		t.Fatal(err)
	}
	if st, err := gs.GraphStats(ctx, rag.LocalPrincipal, c.ID); err != nil || st.Entities != 3+4 {
		t.Errorf("after a bundle import: %+v, %v", st, err)
	}

	// A new version's graph replaces the rows of its document only.
	if err := gs.ReplaceDocumentGraph(ctx, c.ID, d1.ID, docGraph(d1.ID, "initech")); err != nil {
		t.Fatal(err)
	}
	if posts, _, err := gs.GraphPostings(ctx, p, c.ID, []string{"acme"}); err != nil || len(posts) != 0 {
		t.Errorf("postings of a replaced version: %+v, %v", posts, err)
	}
	if posts, _, err := gs.GraphPostings(ctx, p, c.ID, []string{"initech", "globex"}); err != nil || len(posts) != 4 {
		t.Errorf("postings of the new version and the other document: %+v, %v", posts, err)
	}
	ents, err = gs.GraphEntities(ctx, p, c.ID, nil)
	if err != nil || len(ents) != 7 || ents[len(ents)-1].Name != "initech two" {
		t.Errorf("entities after a new version (last extracted comes last): %+v, %v", ents, err)
	}

	// Deleting a document removes its rows; an empty graph removes a document's rows too.
	if _, err := s.TrashDocument(ctx, admin, d2.ID); err != nil {
		t.Fatal(err)
	}
	if err := gs.ReplaceDocumentGraph(ctx, c.ID, d2.ID, docGraph(d2.ID, "globex")); err != nil { // extracted while deleted
		t.Fatal(err)
	}
	if err := gs.ReplaceDocumentGraph(ctx, c.ID, d1.ID, &rag.StoredGraph{}); err != nil {
		t.Fatal(err)
	}
	st, err = gs.GraphStats(ctx, rag.LocalPrincipal, c.ID)
	if err != nil || st.Entities != 3 || st.Relations != 2 || st.Sections != 2 || st.Chunks != 1 {
		t.Errorf("after deleting one document and emptying the other: %+v, %v", st, err)
	}
	if posts, _, err := gs.GraphPostings(ctx, p, c.ID, []string{"initech", "globex"}); err != nil || len(posts) != 0 {
		t.Errorf("postings left of removed documents: %+v, %v", posts, err)
	}
}

// testCollectionState checks the one-query state the answer cache compares: live visible documents, their
// last update, the graph's generation.
func testCollectionState(t *testing.T, s rag.Store, gs rag.GraphStore) {
	ctx := t.Context()
	cs, ok := s.(rag.CollectionStateStore)
	if !ok {
		t.Fatalf("%T does not implement rag.CollectionStateStore", s)
	}
	c := mustCollection(t, s, "state")
	state := func(p rag.Principal, name string) rag.CollectionState {
		t.Helper()
		st, err := cs.CollectionState(ctx, p, name)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := state(admin, "state"); st.Documents != 0 || !st.LastUpdate.IsZero() || st.GraphGeneration != 0 {
		t.Errorf("an empty collection: %+v", st)
	}
	d1 := newDoc(t, s, c.ID, "one")
	tick()
	d2 := newDoc(t, s, c.ID, "two")
	st := state(admin, "state")
	if st.Documents != 2 || st.LastUpdate.IsZero() || state(admin, c.ID) != st {
		t.Errorf("two documents, by name and by ID: %+v, %+v", st, state(admin, c.ID))
	}
	if other := state(rag.Principal{ID: "user:mallory"}, "state"); other.Documents != 0 {
		t.Errorf("a principal who sees nothing of it: %+v", other)
	}
	tick()
	title := "one, renamed"
	if _, err := s.UpdateDocument(ctx, admin, d1.ID, rag.DocumentUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if after := state(admin, "state"); !after.LastUpdate.After(st.LastUpdate) || after.Documents != 2 {
		t.Errorf("after an update: %+v, before %+v", after, st)
	}
	if err := gs.ReplaceDocumentGraph(ctx, c.ID, d2.ID, docGraph(d2.ID, "state")); err != nil {
		t.Fatal(err)
	}
	if after := state(admin, "state"); after.GraphGeneration != 1 {
		t.Errorf("after a graph change: %+v", after)
	}
	if _, err := s.TrashDocument(ctx, admin, d2.ID); err != nil {
		t.Fatal(err)
	}
	if after := state(admin, "state"); after.Documents != 1 || after.GraphGeneration != 2 {
		t.Errorf("after a delete: %+v", after)
	}
	if st := state(admin, "no-such-collection"); st != (rag.CollectionState{}) {
		t.Errorf("an unknown collection: %+v", st)
	}
}
