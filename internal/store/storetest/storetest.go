// Package storetest is the conformance suite every rag.Store implementation runs: the embedded SQLite store
// and the PostgreSQL store pass the same tests, so a behaviour difference between them is a bug in one of
// them. The suite uses only the rag.Store interface (no SQL) and texts whose words the shared analyzer
// (internal/textproc) indexes, so it does not depend on the analyzer's exact tokens.
//
// Decisions the suite pins down (both stores must agree):
//   - timestamps are assigned by the store and kept to microseconds, so the value set on the struct by a
//     write equals the value read back;
//   - an empty ExternalID is not unique (several documents of a collection may have none);
//   - metadata "ne" is the negation of "eq": a document without the field matches it; range and equality
//     operators only match values of the same JSON type (numbers numerically, strings lexically);
//   - a candidate query for a space that has no vectors returns no candidates, not an error; a query vector
//     whose length differs from the space's dimension is CodeInvalid;
//   - keyword terms are literal: FTS or tsquery syntax characters in a term never cause an error;
//   - DeleteDocument removes the blobs of the document's content, pending and earlier versions' hashes that
//     no other document references by its content or pending hash;
//   - metadata string comparisons are by code point (byte order of UTF-8, PostgreSQL's COLLATE "C");
//   - ListDocuments' TitleContains is a literal (no LIKE wildcards), case-insensitive substring match;
//   - PutBlob checks that the hash is the sha256 of the bytes (CodeInvalid otherwise);
//   - a failed or pending new version leaves the previous ready version's chunks searchable.
package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// Run runs the whole suite. open must return a fresh, empty, migrated store for each call and arrange its
// closing with t.Cleanup. Subtests do not run in parallel, so a store backed by a single connection works.
func Run(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("Collections", func(t *testing.T) { testCollections(t, open) })
	t.Run("Documents", func(t *testing.T) { testDocuments(t, open) })
	t.Run("ListDocuments", func(t *testing.T) { testListDocuments(t, open) })
	t.Run("Filters", func(t *testing.T) { testFilters(t, open) })
	t.Run("RecordFilters", func(t *testing.T) { testRecordFilters(t, open) })
	t.Run("Visibility", func(t *testing.T) { testVisibility(t, open) })
	t.Run("Versions", func(t *testing.T) { testVersions(t, open) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, open) })
	t.Run("Trash", func(t *testing.T) { testTrash(t, open) })
	t.Run("History", func(t *testing.T) { testHistory(t, open) })
	t.Run("Audit", func(t *testing.T) { testAudit(t, open) })
	t.Run("Blobs", func(t *testing.T) { testBlobs(t, open) })
	t.Run("VectorCandidates", func(t *testing.T) { testVectorCandidates(t, open) })
	t.Run("VectorScores", func(t *testing.T) { testVectorScores(t, open) })
	t.Run("KeywordCandidates", func(t *testing.T) { testKeywordCandidates(t, open) })
	t.Run("KeywordScores", func(t *testing.T) { testKeywordScores(t, open) })
	t.Run("DocumentCandidates", func(t *testing.T) { testDocumentCandidates(t, open) })
	t.Run("Hits", func(t *testing.T) { testHits(t, open) })
	t.Run("Spaces", func(t *testing.T) { testSpaces(t, open) })
	t.Run("EmbeddingCache", func(t *testing.T) { testEmbeddingCache(t, open) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, open) })
	t.Run("Questions", func(t *testing.T) { testQuestions(t, open) })
	t.Run("Graph", func(t *testing.T) { testGraph(t, open) })
	t.Run("Feedback", func(t *testing.T) { testFeedback(t, open) })
	t.Run("Conversations", func(t *testing.T) { testConversations(t, open) })
	t.Run("Sources", func(t *testing.T) { testSources(t, open) })
	t.Run("Webhooks", func(t *testing.T) { testWebhooks(t, open) })
	t.Run("Principals", func(t *testing.T) { testPrincipals(t, open) })
	t.Run("Access", func(t *testing.T) { testAccess(t, open) })
	t.Run("TopKUnderGrant", func(t *testing.T) { testTopKUnderGrant(t, open) })
	t.Run("StoreSize", func(t *testing.T) { testStoreSize(t, open) })
	t.Run("Ping", func(t *testing.T) {
		s := open(t)
		if err := s.Ping(t.Context()); err != nil {
			t.Fatalf("Ping: %v", err)
		}
	})
}

// Principals used throughout the suite. alice owns the documents unless a test says otherwise.
var (
	alice = rag.Principal{ID: "user:alice"}
	bob   = rag.Principal{ID: "user:bob", Groups: []string{"eng"}}
	carol = rag.Principal{ID: "user:carol", Groups: []string{"ops", "eng"}}
	dave  = rag.Principal{ID: "user:dave"}
	admin = rag.Principal{ID: "user:root", Admin: true}
)

// Embedding spaces of the suite: small dimensions keep the tests fast; two spaces check that a query only
// searches its own.
var (
	spaceA = rag.Space{Provider: "test", Model: "a", Dim: 8}
	spaceB = rag.Space{Provider: "test", Model: "b", Dim: 4}
)

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// basis returns the unit vector e_i of dim dimensions.
func basis(dim, i int) []float32 {
	v := make([]float32, dim)
	v[i] = 1
	return v
}

func normalize(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// textVector is a deterministic, normalised pseudo-random vector for text, for chunks whose vector does not
// matter to a test.
func textVector(dim int, text string) []float32 {
	h := sha256.Sum256([]byte(text))
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(int(h[i%len(h)])-128) + float32(i%3)
	}
	return normalize(v)
}

func isCode(err error, code rag.Code) bool {
	var e *rag.Error
	return errors.As(err, &e) && e.Code == code
}

func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, rag.ErrNotFound) {
		t.Errorf("%s: err = %v, want ErrNotFound", what, err)
	}
}

// tick makes sure the next timestamp the store assigns differs from the previous one (stores keep
// microseconds; the wait is generous for coarse clocks).
func tick() { time.Sleep(3 * time.Millisecond) }

func mustCollection(t *testing.T, s rag.Store, name string) *rag.Collection {
	t.Helper()
	c := &rag.Collection{Name: name, Owner: alice.ID}
	if err := s.CreateCollection(t.Context(), c); err != nil {
		t.Fatalf("CreateCollection(%q): %v", name, err)
	}
	return c
}

// newDoc creates a queued document owned by alice in collection collID, titled ext, after applying opts.
func newDoc(t *testing.T, s rag.Store, collID, ext string, opts ...func(*rag.Document)) *rag.Document {
	t.Helper()
	d := &rag.Document{
		CollectionID: collID,
		ExternalID:   ext,
		Title:        ext,
		Source:       "/src/" + ext,
		MediaType:    "text/plain",
		PendingHash:  hashOf(ext),
		Status:       rag.StatusQueued,
		Stage:        rag.StageQueued,
		Owner:        alice.ID,
	}
	for _, o := range opts {
		o(d)
	}
	if err := s.CreateDocument(t.Context(), d); err != nil {
		t.Fatalf("CreateDocument(%q): %v", ext, err)
	}
	return d
}

// chunksOf builds commit chunks from texts with vectors vecs (textVector of the space when vecs is nil).
func chunksOf(space rag.Space, texts []string, vecs [][]float32) []rag.Chunk {
	out := make([]rag.Chunk, len(texts))
	for i, text := range texts {
		v := textVector(space.Dim, text)
		if vecs != nil {
			v = vecs[i]
		}
		out[i] = rag.Chunk{
			Index: i, Kind: rag.KindText, Text: text,
			PageStart: i + 1, PageEnd: i + 1, Section: fmt.Sprintf("Part %d", i),
			StartOffset: i * 100, EndOffset: i*100 + len([]rune(text)), Vector: v,
		}
	}
	return out
}

// commitTexts commits a version of d made of texts (with vecs in space, or text vectors when vecs is nil)
// and returns the new version number.
func commitTexts(t *testing.T, s rag.Store, d *rag.Document, space rag.Space, texts []string, vecs [][]float32) int {
	t.Helper()
	content := fmt.Sprint(texts)
	v, err := s.CommitVersion(t.Context(), &rag.VersionCommit{
		DocumentID: d.ID, ContentHash: hashOf(content), Title: d.Title, Source: d.Source,
		MediaType: d.MediaType, Size: int64(len(content)), Space: space, Chunks: chunksOf(space, texts, vecs),
	})
	if err != nil {
		t.Fatalf("CommitVersion(%s): %v", d.ExternalID, err)
	}
	return v
}

func getDoc(t *testing.T, s rag.Store, id string) *rag.Document {
	t.Helper()
	d, err := s.GetDocument(t.Context(), admin, id)
	if err != nil {
		t.Fatalf("GetDocument(%s): %v", id, err)
	}
	return d
}

// hitDocs returns the sorted distinct document IDs of candidates (looked up with Hits).
func hitDocs(t *testing.T, s rag.Store, cands []rag.Candidate) []string {
	t.Helper()
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = c.ChunkID
	}
	hits, err := s.Hits(t.Context(), rag.LocalPrincipal, ids)
	if err != nil {
		t.Fatalf("Hits: %v", err)
	}
	if len(hits) != len(ids) {
		t.Fatalf("Hits returned %d of %d candidates", len(hits), len(ids))
	}
	var docs []string
	for _, h := range hits {
		if !slices.Contains(docs, h.DocumentID) {
			docs = append(docs, h.DocumentID)
		}
	}
	sort.Strings(docs)
	return docs
}

// checkRanks checks that candidates are ranked 1..n, best (highest score) first, with distinct chunks.
func checkRanks(t *testing.T, what string, cands []rag.Candidate) {
	t.Helper()
	seen := map[int64]bool{}
	for i, c := range cands {
		if c.Rank != i+1 {
			t.Errorf("%s: candidate %d has rank %d", what, i, c.Rank)
		}
		if i > 0 && c.Score > cands[i-1].Score {
			t.Errorf("%s: candidate %d score %v > previous %v", what, i, c.Score, cands[i-1].Score)
		}
		if seen[c.ChunkID] {
			t.Errorf("%s: chunk %d twice", what, c.ChunkID)
		}
		seen[c.ChunkID] = true
	}
}

func sortedIDs(docs ...*rag.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	sort.Strings(out)
	return out
}

func listIDs(docs []*rag.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// queryTerms is the analyzer's terms of a query, as retrieval passes them to KeywordCandidates.
func queryTerms(q string) []string { return textproc.QueryTerms(q) }

// keyword runs KeywordCandidates for the analyzer's terms of query.
func keyword(t *testing.T, s rag.Store, p rag.Principal, query string, f rag.Filter, k int) []rag.Candidate {
	t.Helper()
	c, err := s.KeywordCandidates(t.Context(), p, rag.KeywordQuery{Terms: queryTerms(query), Filter: f, K: k})
	if err != nil {
		t.Fatalf("KeywordCandidates(%q): %v", query, err)
	}
	checkRanks(t, "keyword "+query, c)
	for _, x := range c {
		if x.Score <= 0 {
			t.Errorf("keyword %q: score %v, want > 0", query, x.Score)
		}
	}
	return c
}

func vector(t *testing.T, s rag.Store, p rag.Principal, space rag.Space, v []float32, f rag.Filter, k int) []rag.Candidate {
	t.Helper()
	c, err := s.VectorCandidates(t.Context(), p, rag.VectorQuery{Space: space, Vector: v, Filter: f, K: k})
	if err != nil {
		t.Fatalf("VectorCandidates: %v", err)
	}
	checkRanks(t, "vector", c)
	return c
}
