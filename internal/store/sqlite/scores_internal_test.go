package sqlite

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// TestVectorScoresFromMemory: VectorScores answers from the in-memory rows with exactly the scores the
// stored vectors give, for every chunk ever committed: current ones, chunks of a replaced version, of a
// deleted document, and unknown IDs — and it does answer from memory once the snapshot is loaded.
func TestVectorScoresFromMemory(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	space := rag.Space{Provider: "test", Model: "scores", Dim: 16}
	coll, err := s.EnsureCollection(ctx, rag.DefaultCollection, "local")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 3))
	vec := func() []float32 {
		v := make([]float32, space.Dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	var ids []int64
	var docs []*rag.Document
	commit := func(d *rag.Document, version int) {
		chunks := make([]rag.Chunk, 5)
		for i := range chunks {
			chunks[i] = rag.Chunk{Index: i, Kind: rag.KindText, Text: fmt.Sprint("text ", version, i), Vector: vec()}
		}
		if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: fmt.Sprintf("%064x", version),
			Title: d.Title, MediaType: "text/plain", Space: space, Chunks: chunks}); err != nil {
			t.Fatal(err)
		}
		got, err := s.ListChunks(ctx, rag.LocalPrincipal, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range got {
			ids = append(ids, c.ID)
		}
	}
	for i := range 4 {
		d := &rag.Document{CollectionID: coll.ID, Title: fmt.Sprint("doc ", i), Owner: "local"}
		if err := s.CreateDocument(ctx, d); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
		commit(d, 10*i)
	}
	check := func(stage string) {
		t.Helper()
		q := vec()
		want, err := s.storedVectorScores(ctx, space, q, append(ids, 1_000_000), map[int64]float64{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.VectorScores(ctx, rag.LocalPrincipal, space, q, append(ids, 1_000_000))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: from memory %v, stored %v", stage, got, want)
		}
		v, err := s.vecs.space(ctx, space)
		if err != nil {
			t.Fatal(err)
		}
		if !s.vecs.get(space).scores(v, q, ids, map[int64]float64{}) {
			t.Fatalf("%s: the fresh snapshot was not used", stage)
		}
	}
	check("first versions")
	commit(docs[1], 11) // replaces doc 1's chunks
	check("after a new version")
	if err := s.DeleteDocument(ctx, rag.LocalPrincipal, docs[2].ID); err != nil {
		t.Fatal(err)
	}
	check("after a deletion")
}
