package sqlite

import (
	"database/sql"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// AppliedMigrations counts the rows of schema_migrations.
func AppliedMigrations(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.r.QueryRowContext(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// CachedVectors is the live vector count of sp in s's cache (-1 when not loaded).
func CachedVectors(s *Store, sp rag.Space) int { return s.cachedSpace(sp) }

// PruneAllTombstones prunes every tombstone, as the retention eventually does.
func PruneAllTombstones(t *testing.T, s *Store) {
	t.Helper()
	err := s.write(t.Context(), func(tx *sql.Tx) error { return pruneTombstones(t.Context(), tx, time.Now().Add(time.Hour)) })
	if err != nil {
		t.Fatal(err)
	}
}

// KeywordRounds returns how many keyword queries the pruned round answered and how many ran in full.
func KeywordRounds(s *Store) (pruned, full int64) { return s.terms.pruned.Load(), s.terms.full.Load() }

// MigrationCount is the number of migration files: one schema_migrations row each once all are applied
// (versions may leave gaps, so it is not LatestMigration).
func MigrationCount() int { return len(migrations()) }

// ForgetQuestionPassages sets every question's passages to NULL, as migration 0012 leaves the questions
// embedded before it.
func ForgetQuestionPassages(t *testing.T, s *Store) {
	t.Helper()
	if err := s.write(t.Context(), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(t.Context(), `UPDATE questions SET passages = NULL`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// IndexedRows is the row count of sp's approximate vector index in s's cache, after waiting for index builds
// to finish (-1 when the space has no index).
func IndexedRows(s *Store, sp rag.Space) int {
	s.vecs.builds.Wait()
	sv := (*s.vecs.spaces.Load())[sp.ID()]
	if sv == nil || sv.snap.Load() == nil || sv.snap.Load().ann == nil {
		return -1
	}
	return sv.snap.Load().ann.Rows()
}

// IndexesRestored counts the vector indexes s read back from their files.
func IndexesRestored(s *Store) int64 { return s.vecs.restored.Load() }

// IndexFile is where s keeps the vector index of sp.
func IndexFile(s *Store, sp rag.Space) string { return s.vecs.indexFile(sp.ID()) }

// KeywordIndexInline makes s build its in-memory keyword index inside the keyword query that wants it
// (from its first chunk on) rather than in the background, so that tests see it used.
func KeywordIndexInline(s *Store) { s.kw.inline = true }

// KeywordIndexAnswered is how many keyword queries the in-memory keyword index answered.
func KeywordIndexAnswered(s *Store) int64 { return s.kw.answered.Load() }

// VectorFile is where s keeps the vectors of sp when they are not in memory.
func VectorFile(s *Store, sp rag.Space) string { return s.vecs.vecFilePath(sp.ID()) }

// VectorsInFile reports whether s's latest snapshot of sp keeps its vectors in the vector file, and whether
// it keeps them in memory too.
func VectorsInFile(s *Store, sp rag.Space) (inFile, inMemory bool) {
	sv := (*s.vecs.spaces.Load())[sp.ID()]
	if sv == nil || sv.snap.Load() == nil {
		return false, false
	}
	v := sv.snap.Load()
	return v.file != nil, v.inMemory()
}

// FilesRestored counts the full loads s answered from a space's index and vector files.
func FilesRestored(s *Store) int64 { return s.vecs.fromFiles.Load() }

// VectorRowsLoaded counts the vector rows s read from the database.
func VectorRowsLoaded(s *Store) int64 { return s.vecs.loaded.Load() }

// WaitVectorFiles waits for s's index builds and writes of vector and index files.
func WaitVectorFiles(s *Store) { s.vecs.builds.Wait() }

// SetVectorFileLimits sets vacuumMin and persistMin for the test.
func SetVectorFileLimits(t *testing.T, vacuum, persist int) {
	v, p := vacuumMin, persistMin
	vacuumMin, persistMin = vacuum, persist
	t.Cleanup(func() { vacuumMin, persistMin = v, p })
}

// DocTotals returns the document-level index's totals as its triggers keep them (store_meta) and as
// counted from doc_lengths.
func DocTotals(t *testing.T, s *Store) (rows, sum, countedRows, countedSum int64) {
	t.Helper()
	err := s.r.QueryRowContext(t.Context(), `SELECT
		(SELECT value FROM store_meta WHERE key = 'doc_rows'), (SELECT value FROM store_meta WHERE key = 'doc_length_sum'),
		(SELECT count(*) FROM doc_lengths), (SELECT coalesce(sum(dl), 0) FROM doc_lengths)`).Scan(&rows, &sum, &countedRows, &countedSum)
	if err != nil {
		t.Fatal(err)
	}
	return rows, sum, countedRows, countedSum
}

// KeptHits is the number of passages s keeps in memory for Hits (hitcache.go).
func KeptHits(s *Store) int { return s.hitc.len() }

// DocMemCounts is how many copies of the document-level index s made and how many queries they answered.
func DocMemCounts(s *Store) (built, answered int64) {
	return s.docm.built.Load(), s.docm.answered.Load()
}

// WaitDocMem waits until s makes no copy of the document-level index.
func WaitDocMem(s *Store) {
	for s.docm.building.Load() {
		time.Sleep(time.Millisecond)
	}
}

// SetDocMemMaxPostings sets the most postings a copy of the document-level index holds, and returns a
// function that restores it.
func SetDocMemMaxPostings(n int) func() {
	old := docMemMaxPostings
	docMemMaxPostings = n
	return func() { docMemMaxPostings = old }
}

// DocPostingCount is the number of rows of doc_postings.
func DocPostingCount(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.r.QueryRowContext(t.Context(), `SELECT count(*) FROM doc_postings`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// NoDocMem makes s answer every document-level query from the database.
func NoDocMem(s *Store) { s.docm.tooBig.Store(true) }
