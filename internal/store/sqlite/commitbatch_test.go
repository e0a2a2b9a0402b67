package sqlite_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/textproc"
)

// TestCommitVersions: documents committed in one batch get their versions and chunks as one by one
// (the IDs returned are those ListChunks gives, keyword and vector search find every chunk); a batch that
// names a document twice or one that does not exist commits nothing.
func TestCommitVersions(t *testing.T) {
	ctx := t.Context()
	s := openWith(t, t.TempDir(), sqlite.Options{})
	coll, err := s.EnsureCollection(ctx, rag.DefaultCollection, "local")
	if err != nil {
		t.Fatal(err)
	}
	newDoc := func(name string) *rag.Document {
		d := &rag.Document{CollectionID: coll.ID, ExternalID: name, Title: name, Owner: "local"}
		if err := s.CreateDocument(ctx, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	commitOf := func(d *rag.Document, words ...string) *rag.VersionCommit {
		c := &rag.VersionCommit{DocumentID: d.ID, ContentHash: hashOf(fmt.Sprint(d.ID, words)), Title: d.Title,
			MediaType: "text/plain", Space: space}
		for i, w := range words {
			c.Chunks = append(c.Chunks, rag.Chunk{Index: i, Kind: rag.KindText, Text: w, Vector: unit(i % space.Dim)})
		}
		return c
	}
	docs := []*rag.Document{newDoc("a"), newDoc("b"), newDoc("c")}
	versions, ids, err := s.CommitVersions(ctx, []*rag.VersionCommit{
		commitOf(docs[0], "apple", "banana"), commitOf(docs[1], "cherry"), commitOf(docs[2], "damson", "elder", "fig")})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(versions, []int{1, 1, 1}) || len(ids) != 3 {
		t.Fatalf("versions %v, ids %v", versions, ids)
	}
	for k, d := range docs {
		if got := chunkIDs(t, s, d.ID); !slices.Equal(got, ids[k]) {
			t.Fatalf("document %d: chunks %v, CommitVersions said %v", k, got, ids[k])
		}
	}
	for k, word := range []string{"banana", "cherry", "fig"} {
		got, err := s.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms(word), K: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ChunkID != ids[k][len(ids[k])-1] {
			t.Fatalf("keyword %q: %v", word, got)
		}
	}
	if got := vectorIDs(t, s, unit(0)); len(got) != 6 {
		t.Fatalf("vector candidates %v", got)
	}
	// A second version of one document with a new one, in a batch: the old chunks are replaced.
	d := newDoc("d")
	versions, ids2, err := s.CommitVersions(ctx, []*rag.VersionCommit{commitOf(docs[1], "grape"), commitOf(d, "hazel")})
	if err != nil || !slices.Equal(versions, []int{2, 1}) {
		t.Fatalf("versions %v: %v", versions, err)
	}
	if got := chunkIDs(t, s, docs[1].ID); !slices.Equal(got, ids2[0]) || slices.Contains(got, ids[1][0]) {
		t.Fatalf("chunks of the new version %v, returned %v", got, ids2[0])
	}
	if got, _ := s.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms("cherry"), K: 5}); len(got) != 0 {
		t.Fatalf("the replaced chunk is still found: %v", got)
	}

	before := vectorIDs(t, s, unit(0))
	for name, batch := range map[string][]*rag.VersionCommit{
		"Twice":   {commitOf(docs[0], "kiwi"), commitOf(docs[0], "lime")},
		"Missing": {commitOf(docs[2], "mango"), commitOf(&rag.Document{ID: "no-such-document"}, "nut")},
	} {
		_, _, err := s.CommitVersions(ctx, batch)
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		if name == "Twice" && rag.ErrorCode(err) != rag.CodeInvalid {
			t.Fatalf("%s: %v, want %s", name, err, rag.CodeInvalid)
		}
		if got := vectorIDs(t, s, unit(0)); !slices.Equal(got, before) {
			t.Fatalf("%s: a failed batch changed the chunks: %v, before %v", name, got, before)
		}
		for _, w := range []string{"kiwi", "lime", "mango"} {
			if got, _ := s.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms(w), K: 5}); len(got) != 0 {
				t.Fatalf("%s: %q of a failed batch is found", name, w)
			}
		}
	}
}
