package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sealing"
	"github.com/ragd/ragd/internal/store/storetest"
)

// testURL is the PostgreSQL (normally PGlite, see scripts/pglite.sh) the tests run against.
func testURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("RAGD_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("RAGD_TEST_DATABASE_URL is not set: start PGlite with `scripts/pglite.sh start` and export the URL it prints")
	}
	return url
}

// testSchema returns a new schema name and drops the schema when the test ends, so every test starts empty
// (PGlite has one session for all connections, so isolation is by schema-qualified names, not search_path).
func testSchema(t testing.TB, url string) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("drop test schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop test schema: %v", err)
		}
	})
	return schema
}

// openStore opens a store in a fresh schema, closed when the test ends.
func openStore(t testing.TB, opts Options) *Store {
	t.Helper()
	url := testURL(t)
	if opts.Schema == "" {
		opts.Schema = testSchema(t, url)
	}
	s, err := Open(context.Background(), url, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	testURL(t)
	storetest.Run(t, func(t *testing.T) rag.Store { return openStore(t, Options{}) })
}

// TestConformanceKeywordIndex runs the suite with keyword queries answered from the in-memory keyword index
// (built after the first keyword query of each store, so that chunks committed and deleted after it are its
// tail and dead rows), with row security off and on.
func TestConformanceKeywordIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("the whole suite twice more; the full go test stage and the native PostgreSQL stage run it")
	}
	skipUntilNative(t)
	testURL(t)
	for _, role := range []string{"", testReaderRole} {
		t.Run("ReaderRole="+role, func(t *testing.T) {
			var stores []*Store
			storetest.Run(t, func(t *testing.T) rag.Store {
				s := openStore(t, Options{KeywordIndexMin: 1, ReaderRole: role})
				s.kw.inline = true
				stores = append(stores, s)
				return s
			})
			var answered int64
			for _, s := range stores {
				answered += s.kw.answered.Load()
			}
			if answered == 0 {
				t.Fatal("no keyword query was answered from the in-memory index")
			}
			t.Logf("%d keyword queries answered from the in-memory index", answered)
		})
	}
}

func TestSealing(t *testing.T) {
	url := testURL(t)
	storetest.RunSealing(t, func(t *testing.T) func(*sealing.Keyring) (rag.Store, error) {
		schema := testSchema(t, url)
		return func(keys *sealing.Keyring) (rag.Store, error) {
			s, err := Open(t.Context(), url, Options{Schema: schema, Keys: keys})
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { s.Close() })
			return s, nil
		}
	})
}

// skipUntilNative skips a test of many minutes on PGlite when the run's native PostgreSQL stage will run it
// (scripts/test.sh sets RAGD_TEST_NATIVE_LATER=1 for its PGlite stage only): the in-memory keyword index's
// exactness tests emulate PGlite's one connection themselves, and on PGlite's single-threaded WebAssembly
// server they took most of the package's ~15 minutes.
func skipUntilNative(t *testing.T) {
	t.Helper()
	if os.Getenv("RAGD_TEST_NATIVE_LATER") == "1" {
		t.Skip("RAGD_TEST_NATIVE_LATER=1: the native PostgreSQL stage of scripts/test.sh runs it")
	}
}
