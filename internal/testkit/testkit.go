// Package testkit holds what ragd's tests share: the paths of the shared fixtures and evaluation sets
// (../shared beside the repository), PostgreSQL test databases (RAGD_TEST_DATABASE_URL, a schema per test),
// the ragd binary built once per test run, running it and waiting for it, and polling for a condition.
// Only tests import it.
package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Root is the repository root: the nearest directory above the working directory (a test's package
// directory) that holds go.mod.
func Root() string {
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			panic(err)
		}
		for d := dir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				root = d
				return
			}
			if filepath.Dir(d) == d {
				panic("testkit: no go.mod above " + dir)
			}
		}
	})
	return root
}

var (
	rootOnce sync.Once
	root     string
)

// Shared is a path in ../shared beside the repository (fixtures, eval sets, samples).
func Shared(elem ...string) string {
	return filepath.Join(append([]string{Root(), "..", "shared"}, elem...)...)
}

// FixturePath is the path of a shared fixture, e.g. "pdf/bill_2125318_original.pdf".
func FixturePath(rel string) string { return Shared("fixtures", rel) }

// Fixture reads a shared fixture; a missing one fails the test.
func Fixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(FixturePath(rel))
	if err != nil {
		t.Fatalf("fixture: %v (fixtures live in ../shared/fixtures next to the repository)", err)
	}
	return b
}

// DatabaseURL is RAGD_TEST_DATABASE_URL; without it the test is skipped, saying how to set it.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("RAGD_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("RAGD_TEST_DATABASE_URL is not set: start PGlite with `scripts/pglite.sh start` and export the URL it prints")
	}
	return url
}

// Schema returns a new schema name starting with prefix, dropped (with everything in it) when the test ends.
// The schema itself is created by whoever uses it first (the stores and the job runner create theirs).
func Schema(t testing.TB, url, prefix string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := prefix + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx := context.Background()
		pool, err := pgxpool.New(ctx, url) // a pool: the URL may carry pool settings
		if err != nil {
			t.Errorf("drop test schema: %v", err)
			return
		}
		defer pool.Close()
		if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop test schema: %v", err)
		}
	})
	return schema
}

// SearchPath returns url with search_path set to schema, then public: ragd keeps its tables in the first
// schema of the path, and on a server where pgvector is not yet created, CREATE EXTENSION needs an existing
// schema.
func SearchPath(url, schema string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "search_path=" + schema + ",public"
}

// WaitFor polls cond until it holds and fails the test after limit: a bound against hanging, not a speed
// check.
func WaitFor(t testing.TB, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// OutDir is where tests leave files for people to look at (screenshots): sub in RAGD_TEST_OUT, default
// testdata/out in the repository (git-ignored); it is created.
func OutDir(t testing.TB, sub string) string {
	t.Helper()
	dir := os.Getenv("RAGD_TEST_OUT")
	if dir == "" {
		dir = filepath.Join(Root(), "testdata", "out")
	}
	dir = filepath.Join(dir, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
