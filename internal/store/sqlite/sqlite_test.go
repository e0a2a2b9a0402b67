package sqlite_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sealing"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/store/storetest"
	"github.com/ragd/ragd/internal/textproc"
)

func openAt(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openTemp(t *testing.T) *sqlite.Store { return openAt(t, t.TempDir()) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) rag.Store { return openTemp(t) })
}

// TestConformanceKeywordIndex runs the suite with keyword queries answered from the in-memory keyword
// index (built at the first keyword query of each store, so that chunks committed and deleted after it
// are the index's tail and dead rows).
func TestConformanceKeywordIndex(t *testing.T) {
	var stores []*sqlite.Store
	storetest.Run(t, func(t *testing.T) rag.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ragd.db"), sqlite.Options{KeywordIndexMin: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		sqlite.KeywordIndexInline(s)
		stores = append(stores, s)
		return s
	})
	var answered int64
	for _, s := range stores {
		answered += sqlite.KeywordIndexAnswered(s)
	}
	if answered == 0 {
		t.Fatal("no keyword query was answered from the in-memory index")
	}
	t.Logf("%d keyword queries answered from the in-memory index", answered)
}

var space = rag.Space{Provider: "test", Model: "x", Dim: 4}

func unit(i int) []float32 {
	v := make([]float32, space.Dim)
	v[i] = 1
	return v
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// ingest creates (or finds) document ext in the default collection and commits texts with vectors vecs.
func ingest(t testing.TB, ctx context.Context, s rag.Store, ext string, texts []string, vecs [][]float32) *rag.Document {
	t.Helper()
	d, err := tryIngest(ctx, s, ext, texts, vecs)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func tryIngest(ctx context.Context, s rag.Store, ext string, texts []string, vecs [][]float32) (*rag.Document, error) {
	c, err := s.EnsureCollection(ctx, rag.DefaultCollection, "local")
	if err != nil {
		return nil, err
	}
	d, err := s.FindDocument(ctx, rag.LocalPrincipal, c.ID, ext)
	if errors.Is(err, rag.ErrNotFound) {
		d = &rag.Document{CollectionID: c.ID, ExternalID: ext, Title: ext, Owner: "local"}
		err = s.CreateDocument(ctx, d)
	}
	if err != nil {
		return nil, err
	}
	chunks := make([]rag.Chunk, len(texts))
	for i, text := range texts {
		chunks[i] = rag.Chunk{Index: i, Kind: rag.KindText, Text: text, Vector: vecs[i]}
	}
	_, err = s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: hashOf(fmt.Sprint(texts)),
		Title: ext, MediaType: "text/plain", Space: space, Chunks: chunks})
	return d, err
}

func vectorIDs(t *testing.T, s rag.Store, v []float32) []int64 {
	t.Helper()
	c, err := s.VectorCandidates(t.Context(), rag.LocalPrincipal, rag.VectorQuery{Space: space, Vector: v, K: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, x := range c {
		ids = append(ids, x.ChunkID)
	}
	slices.Sort(ids)
	return ids
}

func chunkIDs(t *testing.T, s rag.Store, docIDs ...string) []int64 {
	t.Helper()
	var ids []int64
	for _, id := range docIDs {
		chunks, err := s.ListChunks(t.Context(), rag.LocalPrincipal, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chunks {
			ids = append(ids, c.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

func TestOpen(t *testing.T) {
	t.Run("Directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data", "nested")
		s := openAt(t, dir)
		if s.Path() != filepath.Join(dir, sqlite.FileName) {
			t.Fatalf("path = %s", s.Path())
		}
	})
	t.Run("File", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "sub", "my.db")
		s := openAt(t, file)
		if s.Path() != file {
			t.Fatalf("path = %s", s.Path())
		}
		if _, err := os.Stat(file); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrorNotADatabase", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "junk.db")
		if err := os.WriteFile(file, []byte("this is not an SQLite database, just text that is long enough to look like a header"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := sqlite.Open(t.Context(), file, sqlite.Options{})
		if rag.ErrorCode(err) != rag.CodeDBError {
			t.Fatalf("err = %v, want db_error", err)
		}
	})
}

func TestMigrations(t *testing.T) {
	t.Run("IdempotentOnReopen", func(t *testing.T) {
		dir := t.TempDir()
		s1, err := sqlite.Open(t.Context(), dir, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		d := ingest(t, t.Context(), s1, "a.txt", []string{"lighthouse keeper"}, [][]float32{unit(0)})
		if err := s1.Close(); err != nil {
			t.Fatal(err)
		}
		s2 := openAt(t, dir)
		if err := s2.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := sqlite.AppliedMigrations(t, s2); n != sqlite.MigrationCount() {
			t.Fatalf("%d migration rows, want %d", n, sqlite.MigrationCount())
		}
		// The data survives, searchable by keyword and vector.
		got, err := s2.GetDocument(t.Context(), rag.LocalPrincipal, d.ID)
		if err != nil || got.ChunkCount != 1 {
			t.Fatalf("after reopen: %+v, %v", got, err)
		}
		kc, err := s2.KeywordCandidates(t.Context(), rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms("lighthouse"), K: 5})
		if err != nil || len(kc) != 1 {
			t.Fatalf("keyword after reopen: %v, %v", kc, err)
		}
		if ids := vectorIDs(t, s2, unit(0)); !slices.Equal(ids, chunkIDs(t, s2, d.ID)) {
			t.Fatalf("vector after reopen: %v", ids)
		}
	})
	t.Run("ConcurrentOpeners", func(t *testing.T) {
		dir := t.TempDir()
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := sqlite.Open(t.Context(), dir, sqlite.Options{})
				if err == nil {
					err = s.Ping(t.Context())
					s.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := sqlite.AppliedMigrations(t, openAt(t, dir)); n != sqlite.MigrationCount() {
			t.Fatalf("%d migration rows, want %d", n, sqlite.MigrationCount())
		}
	})
}

// TestQuestionPassagesUpgrade: a question embedded before migration 0012 (storetest.QuestionPassagesUpgrade).
func TestQuestionPassagesUpgrade(t *testing.T) {
	s := openTemp(t)
	storetest.QuestionPassagesUpgrade(t, s, func(t *testing.T) { sqlite.ForgetQuestionPassages(t, s) })
}

// TestVectorCacheFreshness writes through one Store and searches through another on the same file, as
// `ragd ingest` does beside a running `ragd serve`.
func TestVectorCacheFreshness(t *testing.T) {
	dir := t.TempDir()
	writer, reader := openAt(t, dir), openAt(t, dir)
	ctx := t.Context()
	if ids := vectorIDs(t, reader, unit(0)); len(ids) != 0 {
		t.Fatalf("empty store: %v", ids)
	}
	a := ingest(t, ctx, writer, "a.txt", []string{"one", "two"}, [][]float32{unit(0), unit(1)})
	if got, want := vectorIDs(t, reader, unit(0)), chunkIDs(t, writer, a.ID); !slices.Equal(got, want) {
		t.Fatalf("after first ingest: %v, want %v", got, want)
	}
	b := ingest(t, ctx, writer, "b.txt", []string{"three"}, [][]float32{unit(2)})
	if got, want := vectorIDs(t, reader, unit(0)), chunkIDs(t, writer, a.ID, b.ID); !slices.Equal(got, want) {
		t.Fatalf("after second ingest: %v, want %v", got, want)
	}
	// A new version replaces a's vectors.
	ingest(t, ctx, writer, "a.txt", []string{"uno", "dos", "tres"}, [][]float32{unit(3), unit(3), unit(3)})
	c, err := reader.VectorCandidates(ctx, rag.LocalPrincipal, rag.VectorQuery{Space: space, Vector: unit(3), K: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(c), 4; got != want || c[0].Score != 1 || c[2].Score != 1 || c[3].Score != 0 {
		t.Fatalf("after new version: %+v", c)
	}
	if got, want := vectorIDs(t, reader, unit(0)), chunkIDs(t, writer, a.ID, b.ID); !slices.Equal(got, want) {
		t.Fatalf("after new version: %v, want %v", got, want)
	}
	// Re-embedding replaces one vector in place.
	bChunks := chunkIDs(t, writer, b.ID)
	if err := writer.PutVectors(ctx, space, map[int64][]float32{bChunks[0]: unit(0)}); err != nil {
		t.Fatal(err)
	}
	c, err = reader.VectorCandidates(ctx, rag.LocalPrincipal, rag.VectorQuery{Space: space, Vector: unit(0), K: 1})
	if err != nil || len(c) != 1 || c[0].ChunkID != bChunks[0] || c[0].Score != 1 {
		t.Fatalf("after PutVectors: %+v, %v", c, err)
	}
	// A delete removes the document's vectors.
	if err := writer.DeleteDocument(ctx, rag.LocalPrincipal, a.ID); err != nil {
		t.Fatal(err)
	}
	if got := vectorIDs(t, reader, unit(0)); !slices.Equal(got, bChunks) {
		t.Fatalf("after delete: %v, want %v", got, bChunks)
	}
	if n := sqlite.CachedVectors(reader, space); n != 1 {
		t.Fatalf("reader cache holds %d vectors, want 1", n)
	}
}

// TestVectorCacheAfterPrunedTombstones: a cache older than the pruned tombstones reloads in full.
func TestVectorCacheAfterPrunedTombstones(t *testing.T) {
	dir := t.TempDir()
	writer, reader := openAt(t, dir), openAt(t, dir)
	ctx := t.Context()
	a := ingest(t, ctx, writer, "a.txt", []string{"one"}, [][]float32{unit(0)})
	b := ingest(t, ctx, writer, "b.txt", []string{"two"}, [][]float32{unit(1)})
	if got := vectorIDs(t, reader, unit(0)); len(got) != 2 {
		t.Fatalf("%v", got)
	}
	if err := writer.DeleteDocument(ctx, rag.LocalPrincipal, a.ID); err != nil {
		t.Fatal(err)
	}
	sqlite.PruneAllTombstones(t, writer)
	if got, want := vectorIDs(t, reader, unit(0)), chunkIDs(t, writer, b.ID); !slices.Equal(got, want) {
		t.Fatalf("after pruned delete: %v, want %v", got, want)
	}
}

// TestTwoStoresWriteConcurrently: writers in two Stores (two connections to one file, as two processes
// have) never fail with SQLITE_BUSY.
func TestTwoStoresWriteConcurrently(t *testing.T) {
	dir := t.TempDir()
	stores := []*sqlite.Store{openAt(t, dir), openAt(t, dir)}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 15 {
				_, err := tryIngest(t.Context(), s, fmt.Sprintf("s%d-%d", i, j), []string{"shared words", "more words"}, [][]float32{unit(0), unit(1)})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st, err := stores[0].SpaceStats(t.Context())
	if err != nil || st.Chunks != 60 {
		t.Fatalf("SpaceStats = %+v, %v; want 60 chunks", st, err)
	}
}

// TestCrossProcess runs a real second process (this test binary) that ingests into the store while this
// process holds a loaded vector cache and an open connection.
func TestCrossProcess(t *testing.T) {
	if dir := os.Getenv("RAGD_SQLITE_HELPER_DIR"); dir != "" {
		s, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		ingest(t, context.Background(), s, "from-helper.txt", []string{"written by another process"}, [][]float32{unit(2)})
		s.Close()
		return
	}
	dir := t.TempDir()
	s := openAt(t, dir)
	a := ingest(t, t.Context(), s, "a.txt", []string{"local"}, [][]float32{unit(0)})
	if got := vectorIDs(t, s, unit(0)); len(got) != 1 {
		t.Fatalf("%v", got)
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestCrossProcess$")
	cmd.Env = append(os.Environ(), "RAGD_SQLITE_HELPER_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helper process: %v\n%s", err, out)
	}
	c, err := s.EnsureCollection(t.Context(), rag.DefaultCollection, "local")
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.FindDocument(t.Context(), rag.LocalPrincipal, c.ID, "from-helper.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := vectorIDs(t, s, unit(0)), chunkIDs(t, s, a.ID, other.ID); !slices.Equal(got, want) {
		t.Fatalf("vector candidates = %v, want %v", got, want)
	}
	kc, err := s.KeywordCandidates(t.Context(), rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms("another process"), K: 5})
	if err != nil || len(kc) != 1 {
		t.Fatalf("keyword candidates = %v, %v", kc, err)
	}
}

func TestWarmVectors(t *testing.T) {
	dir := t.TempDir()
	writer := openAt(t, dir)
	ingest(t, t.Context(), writer, "a.txt", []string{"one", "two", "three"}, [][]float32{unit(0), unit(1), unit(2)})
	s := openAt(t, dir)
	if n := sqlite.CachedVectors(s, space); n != -1 {
		t.Fatalf("fresh store has %d cached vectors", n)
	}
	if err := s.WarmVectors(t.Context(), space); err != nil {
		t.Fatal(err)
	}
	if n := sqlite.CachedVectors(s, space); n != 3 {
		t.Fatalf("%d cached vectors after warming, want 3", n)
	}
	if err := s.WarmVectors(t.Context(), rag.Space{}); rag.ErrorCode(err) != rag.CodeInvalid {
		t.Fatalf("warming an invalid space: %v", err)
	}
}

func TestSealing(t *testing.T) {
	storetest.RunSealing(t, func(t *testing.T) func(*sealing.Keyring) (rag.Store, error) {
		dir := t.TempDir()
		return func(keys *sealing.Keyring) (rag.Store, error) {
			s, err := sqlite.Open(t.Context(), dir, sqlite.Options{Keys: keys})
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { s.Close() })
			return s, nil
		}
	})
}
