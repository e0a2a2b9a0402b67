package sqlite_test

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/vindex"
)

const annRec = 4 * 32 // bytes of one record of annSpace in a vector file

// sameAsExact checks that s answers every query as exact does on the same database: recall@10 ≥ 0.95 with
// identical scores, and no chunk of gone returned.
func sameAsExact(t *testing.T, s, exact *sqlite.Store, queries [][]float32, gone map[int64]bool) {
	t.Helper()
	var sum float64
	for _, q := range queries {
		got, want := vectorSearch(t, s, q, rag.Filter{}), vectorSearch(t, exact, q, rag.Filter{})
		scores := map[int64]float64{}
		for _, c := range want {
			scores[c.ChunkID] = c.Score
		}
		found := 0
		for _, c := range got {
			if gone[c.ChunkID] {
				t.Fatalf("chunk %d, deleted or re-embedded, returned", c.ChunkID)
			}
			if sc, ok := scores[c.ChunkID]; ok {
				found++
				if sc != c.Score {
					t.Fatalf("chunk %d: score %v, exact %v", c.ChunkID, c.Score, sc)
				}
			}
		}
		sum += float64(found) / float64(max(1, len(want)))
	}
	if r := sum / float64(len(queries)); r < 0.95 {
		t.Fatalf("recall@10 %.3f against exact search", r)
	}
}

// fileOnly reports whether s keeps annSpace's vectors in the vector file and not in memory.
func fileOnly(s *sqlite.Store) bool {
	inFile, inMemory := sqlite.VectorsInFile(s, annSpace)
	return inFile && !inMemory
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestVectorFileRestart: past VectorIndexMin the vectors are in the space's vector file, not in memory;
// a restart reads the index and vector files back without loading a vector from the database, also after
// documents were deleted, a chunk re-embedded and documents added while the store was closed (those are
// applied from the database: only the new vectors are read).
func TestVectorFileRestart(t *testing.T) {
	dir := t.TempDir()
	opts := sqlite.Options{VectorIndexMin: 500, VectorHeap: -1}
	s := openWith(t, dir, opts)
	docs, queries := annCorpus(t, s, 200)
	exact := openWith(t, dir, sqlite.Options{VectorIndexMin: -1})
	vectorSearch(t, s, queries[0], rag.Filter{})
	sqlite.WaitVectorFiles(s)
	if !fileOnly(s) || sqlite.IndexedRows(s, annSpace) != 2000 {
		t.Fatalf("vectors in file %v, indexed rows %d", fileOnly(s), sqlite.IndexedRows(s, annSpace))
	}
	if got := fileSize(t, sqlite.VectorFile(s, annSpace)); got != 64+2000*annRec {
		t.Fatalf("vector file of %d bytes, want %d", got, 64+2000*annRec)
	}
	if inFile, _ := sqlite.VectorsInFile(exact, annSpace); inFile {
		t.Fatal("the store searching exactly keeps its vectors in a file")
	}
	sameAsExact(t, s, exact, queries, nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// While it is closed: a document deleted, a chunk re-embedded (its new vector is a query's), 5
	// documents added — through the store that keeps its vectors in memory.
	ctx := t.Context()
	gone := map[int64]bool{}
	for _, id := range chunkIDs(t, exact, docs[0]) {
		gone[id] = true
	}
	if err := exact.DeleteDocument(ctx, rag.LocalPrincipal, docs[0]); err != nil {
		t.Fatal(err)
	}
	moved := chunkIDs(t, exact, docs[7])[3]
	if err := exact.PutVectors(ctx, annSpace, map[int64][]float32{moved: queries[5]}); err != nil {
		t.Fatal(err)
	}
	annCorpus(t, exact, 5)

	s2 := openWith(t, dir, opts)
	top := vectorSearch(t, s2, queries[5], rag.Filter{})
	if sqlite.FilesRestored(s2) != 1 || sqlite.VectorRowsLoaded(s2) != 51 {
		t.Fatalf("restored from files %d times, %d vectors read from the database (want 1 and the 51 new ones)",
			sqlite.FilesRestored(s2), sqlite.VectorRowsLoaded(s2))
	}
	if top[0].ChunkID != moved || top[0].Score < 0.999 {
		t.Fatalf("the re-embedded chunk %d is not found by its new vector: %v", moved, top[:1])
	}
	sameAsExact(t, s2, exact, queries, gone)
	if got := sqlite.IndexedRows(s2, annSpace); got != 2051 {
		t.Fatalf("indexed rows %d", got)
	}
	// Closing wrote the index file again: the next start reads no vector from the database.
	s3 := reopenFromFiles(t, s2, dir, opts, queries[1])
	sameAsExact(t, s3, exact, queries, gone)
}

// reopenFromFiles closes s, opens the store in dir again, searches it, and checks that its vectors were
// read back from the space's files: none from the database.
func reopenFromFiles(t *testing.T, s *sqlite.Store, dir string, opts sqlite.Options, q []float32) *sqlite.Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openWith(t, dir, opts)
	vectorSearch(t, s, q, rag.Filter{})
	if sqlite.FilesRestored(s) != 1 || sqlite.VectorRowsLoaded(s) != 0 {
		t.Fatalf("restored from files %d times, %d vectors read from the database", sqlite.FilesRestored(s), sqlite.VectorRowsLoaded(s))
	}
	return s
}

// copyStore copies the database and the space's files of dir into a new directory.
func copyStore(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), sqlite.FileName) || strings.Contains(e.Name(), "lock") {
			continue
		}
		src, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		src.Close()
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestVectorFileChecks: a vector or index file that does not match the database is detected and not used
// (the vectors are loaded from the database into a new vector file), one that only has records past
// what the index file refers to (a crash after appending) is cut back and used; either way the results
// are those of exact search on the same database.
func TestVectorFileChecks(t *testing.T) {
	dir := t.TempDir()
	opts := sqlite.Options{VectorIndexMin: 500, VectorHeap: -1}
	s := openWith(t, dir, opts)
	docs, queries := annCorpus(t, s, 200)
	vectorSearch(t, s, queries[0], rag.Filter{})
	sqlite.WaitVectorFiles(s) // closing stops a build (then there is no index file)
	doc1 := chunkIDs(t, s, docs[1])
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir() // a database of other vectors with the same number of rows and sequence numbers
	o := openWith(t, other, opts)
	annCorpusOf(t, o, 200, 11)
	vectorSearch(t, o, queries[0], rag.Filter{})
	sqlite.WaitVectorFiles(o)
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}

	vecName := filepath.Base(sqlite.VectorFile(s, annSpace))
	idxName := filepath.Base(sqlite.IndexFile(s, annSpace))
	records := int((fileSize(t, filepath.Join(dir, vecName)) - 64) / annRec)
	cases := []struct {
		name   string
		tamper func(t *testing.T, d string)
		used   bool // the files are used (else every vector is read from the database)
	}{
		{"Untouched", func(*testing.T, string) {}, true},
		{"TornTail", func(t *testing.T, d string) { appendTo(t, filepath.Join(d, vecName), make([]byte, annRec/2)) }, true},
		{"RecordsPastTheIndex", func(t *testing.T, d string) { appendTo(t, filepath.Join(d, vecName), make([]byte, 7*annRec)) }, true},
		{"TruncatedVectorFile", func(t *testing.T, d string) {
			if err := os.Truncate(filepath.Join(d, vecName), 64+int64(records/2)*annRec); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"CorruptRecords", func(t *testing.T, d string) {
			b := readFile(t, filepath.Join(d, vecName))
			for r := range records {
				b[64+r*annRec+3] ^= 0x80 // every record's first component negated
			}
			writeFile(t, filepath.Join(d, vecName), b)
		}, false},
		{"VectorFileOfAnotherStore", func(t *testing.T, d string) {
			writeFile(t, filepath.Join(d, vecName), readFile(t, filepath.Join(other, vecName)))
		}, false},
		{"FilesOfAnotherDatabase", func(t *testing.T, d string) {
			writeFile(t, filepath.Join(d, vecName), readFile(t, filepath.Join(other, vecName)))
			writeFile(t, filepath.Join(d, idxName), readFile(t, filepath.Join(other, idxName)))
		}, false},
		{"CorruptIndexFile", func(t *testing.T, d string) {
			b := readFile(t, filepath.Join(d, idxName))
			b[len(b)/2] ^= 1
			writeFile(t, filepath.Join(d, idxName), b)
		}, false},
		{"NoIndexFile", func(t *testing.T, d string) { os.Remove(filepath.Join(d, idxName)) }, false},
		{"NoVectorFile", func(t *testing.T, d string) { os.Remove(filepath.Join(d, vecName)) }, false},
		// The files are newer than the database (say, a backup of it restored beneath them): the index file
		// names rows the database does not hold.
		{"FilesNewerThanTheDatabase", func(t *testing.T, d string) {
			grow(t, d, opts, 5, 21)
			restoreDatabase(t, dir, d)
		}, false},
		// The same, and then as many vectors committed again as the files hold past the database (other
		// vectors under the same sequence numbers and chunk IDs): the count and the sum of the sequence
		// numbers match, only the newest 10 of 2,010 rows do not (an evenly spaced sample may miss them).
		{"DatabaseRestoredAndWrittenAgain", func(t *testing.T, d string) {
			grow(t, d, opts, 1, 21)
			restoreDatabase(t, dir, d)
			m := openWith(t, d, sqlite.Options{VectorIndexMin: -1})
			annCorpusOf(t, m, 1, 22)
			m.Close()
		}, false},
		{"TombstonesPruned", func(t *testing.T, d string) {
			m := openWith(t, d, sqlite.Options{VectorIndexMin: -1})
			if err := m.DeleteDocument(t.Context(), rag.LocalPrincipal, docs[1]); err != nil {
				t.Fatal(err)
			}
			sqlite.PruneAllTombstones(t, m)
			m.Close()
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := copyStore(t, dir)
			tc.tamper(t, d)
			exact := openWith(t, d, sqlite.Options{VectorIndexMin: -1})
			gone := map[int64]bool{}
			if tc.name == "TombstonesPruned" {
				for _, id := range doc1 {
					gone[id] = true
				}
			}
			s := openWith(t, d, opts)
			vectorSearch(t, s, queries[0], rag.Filter{})
			restored, loaded := sqlite.FilesRestored(s), sqlite.VectorRowsLoaded(s)
			if tc.used && (restored != 1 || loaded != 0) || !tc.used && (restored != 0 || loaded < 1990) {
				t.Fatalf("restored from files %d times, %d vectors read from the database (files used: %v)", restored, loaded, tc.used)
			}
			if tc.used && fileSize(t, filepath.Join(d, vecName)) != 64+int64(records)*annRec {
				t.Fatalf("the records past the index file's were not cut off: %d bytes", fileSize(t, filepath.Join(d, vecName)))
			}
			sqlite.WaitVectorFiles(s)
			if !fileOnly(s) {
				t.Fatal("the vectors are not in a vector file")
			}
			sameAsExact(t, s, exact, queries, gone)
			// Whatever happened, the files written now are used by the next start.
			s = reopenFromFiles(t, s, d, opts, queries[0])
			sameAsExact(t, s, exact, queries, gone)
		})
	}
}

// grow adds docs documents (vectors drawn with seed) to the store in d through a store that owns its
// files, and closes it (which writes the index file).
func grow(t *testing.T, d string, opts sqlite.Options, docs int, seed uint64) {
	t.Helper()
	m := openWith(t, d, opts)
	_, queries := annCorpusOf(t, m, docs, seed)
	vectorSearch(t, m, queries[0], rag.Filter{})
	sqlite.WaitVectorFiles(m)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// restoreDatabase puts the database of src (its file and write-ahead log) in place of dst's, leaving dst's
// vector and index files.
func restoreDatabase(t *testing.T, src, dst string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		name := sqlite.FileName + suffix
		b, err := os.ReadFile(filepath.Join(src, name))
		if os.IsNotExist(err) {
			if err := os.Remove(filepath.Join(dst, name)); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dst, name), b)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestVectorFileOwner: a second store of the same database does not touch the space's files while the
// first owns them: it keeps the vectors in memory, answers the same, and writes no index file.
func TestVectorFileOwner(t *testing.T) {
	dir := t.TempDir()
	opts := sqlite.Options{VectorIndexMin: 500, VectorHeap: -1}
	s := openWith(t, dir, opts)
	_, queries := annCorpus(t, s, 100)
	vectorSearch(t, s, queries[0], rag.Filter{})
	sqlite.WaitVectorFiles(s)
	index := readFile(t, sqlite.IndexFile(s, annSpace))
	second := openWith(t, dir, opts)
	exact := openWith(t, dir, sqlite.Options{VectorIndexMin: -1})
	annCorpus(t, second, 10)
	vectorSearch(t, second, queries[0], rag.Filter{})
	if inFile, inMemory := sqlite.VectorsInFile(second, annSpace); inFile || !inMemory || sqlite.IndexedRows(second, annSpace) != 1100 {
		t.Fatalf("second store: vectors in file %v, in memory %v, indexed rows %d", inFile, inMemory, sqlite.IndexedRows(second, annSpace))
	}
	sameAsExact(t, second, exact, queries, nil)
	sameAsExact(t, s, exact, queries, nil)
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(readFile(t, sqlite.IndexFile(s, annSpace)), index) {
		t.Fatal("the second store wrote the index file")
	}
}

// TestVectorFileGrowsAndVacuums: a space that grows past VectorIndexMin moves its vectors from memory to
// its file; replacing documents leaves records unused, and once they pass the live rows (with the
// vacuum margin lowered to 0) the file is written again with the live rows only.
func TestVectorFileGrowsAndVacuums(t *testing.T) {
	sqlite.SetVectorFileLimits(t, 0, 100)
	dir := t.TempDir()
	opts := sqlite.Options{VectorIndexMin: 500, VectorHeap: -1}
	s := openWith(t, dir, opts)
	exact := openWith(t, dir, sqlite.Options{VectorIndexMin: -1})
	docs, queries := annCorpus(t, s, 40)
	vectorSearch(t, s, queries[0], rag.Filter{})
	if inFile, _ := sqlite.VectorsInFile(s, annSpace); inFile {
		t.Fatal("400 vectors are in a file")
	}
	more, _ := annCorpus(t, s, 20)
	docs = append(docs, more...)
	vectorSearch(t, s, queries[0], rag.Filter{})
	sqlite.WaitVectorFiles(s)
	if !fileOnly(s) || fileSize(t, sqlite.VectorFile(s, annSpace)) != 64+600*annRec {
		t.Fatalf("600 vectors: in the file only %v", fileOnly(s))
	}
	sameAsExact(t, s, exact, queries, nil)

	// Every document committed again twice, edited: its vectors moved a little (the old ones' records are
	// then unused).
	ctx := t.Context()
	gone := map[int64]bool{}
	first, _ := vindex.Clustered(400, 30, annSpace.Dim, 1, 3)
	second, _ := vindex.Clustered(200, 30, annSpace.Dim, 1, 3)
	vecs := append(first, second...)
	rng := rand.New(rand.NewPCG(5, 5))
	for round := range 2 {
		for i := range vecs {
			vecs[i] += float32(0.05 * rng.NormFloat64())
		}
		for r := range 600 {
			row := vecs[r*annSpace.Dim : (r+1)*annSpace.Dim]
			var norm float64
			for _, x := range row {
				norm += float64(x) * float64(x)
			}
			for i := range row {
				row[i] /= float32(math.Sqrt(norm))
			}
		}
		for d, id := range docs {
			for _, c := range chunkIDs(t, s, id) {
				gone[c] = true
			}
			chunks := make([]rag.Chunk, 10)
			for i := range chunks {
				r := d*10 + i
				chunks[i] = rag.Chunk{Index: i, Kind: rag.KindText, Text: fmt.Sprint("again ", round, r), Vector: vecs[r*annSpace.Dim : (r+1)*annSpace.Dim]}
			}
			if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: id, ContentHash: hashOf(fmt.Sprint(round, id)),
				Title: "t", MediaType: "text/plain", Space: annSpace, Chunks: chunks}); err != nil {
				t.Fatal(err)
			}
			if d%50 == 0 {
				vectorSearch(t, s, queries[1], rag.Filter{})
			}
		}
		vectorSearch(t, s, queries[1], rag.Filter{})
		sqlite.WaitVectorFiles(s)
	}
	if got := fileSize(t, sqlite.VectorFile(s, annSpace)); got > 64+2*600*annRec {
		t.Fatalf("vector file of %d records for 600 live rows: not written again", (got-64)/annRec)
	}
	sameAsExact(t, s, exact, queries, gone)
	s = reopenFromFiles(t, s, dir, opts, queries[0])
	sameAsExact(t, s, exact, queries, gone)
}

// TestVectorFileAndHeap: while Options.VectorHeap holds them, the vectors of a space with an index are in
// memory as well as in the vector file, and a restart reads them from the file, not the database; once the
// space grows past it, they are read from the file only.
func TestVectorFileAndHeap(t *testing.T) {
	dir := t.TempDir()
	opts := sqlite.Options{VectorIndexMin: 500, VectorHeap: 2100 * annRec}
	s := openWith(t, dir, opts)
	_, queries := annCorpus(t, s, 200)
	exact := openWith(t, dir, sqlite.Options{VectorIndexMin: -1})
	vectorSearch(t, s, queries[0], rag.Filter{})
	sqlite.WaitVectorFiles(s)
	if inFile, inMemory := sqlite.VectorsInFile(s, annSpace); !inFile || !inMemory {
		t.Fatalf("2000 vectors: in file %v, in memory %v", inFile, inMemory)
	}
	sameAsExact(t, s, exact, queries, nil)
	s = reopenFromFiles(t, s, dir, opts, queries[0])
	if inFile, inMemory := sqlite.VectorsInFile(s, annSpace); !inFile || !inMemory {
		t.Fatalf("after restart: in file %v, in memory %v", inFile, inMemory)
	}
	sameAsExact(t, s, exact, queries, nil)
	annCorpus(t, s, 20) // 2,200 vectors: past the heap's 2,100
	vectorSearch(t, s, queries[0], rag.Filter{})
	if !fileOnly(s) {
		t.Fatal("past VectorHeap the vectors are still in memory")
	}
	sameAsExact(t, s, exact, queries, nil)
}
