package jobs

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/postgres"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/testkit"
)

// The suite runs whole on both engines River runs on: temp-file SQLite, and PostgreSQL at
// RAGD_TEST_DATABASE_URL (PGlite from scripts/pglite.sh, whose pools have one connection sharing one session,
// or any PostgreSQL), each database in a schema of its own. Tests take a backend and open their runners,
// stores and databases through it; eachBackend runs a test as the subtests SQLite and PostgreSQL (the latter
// skipped without a URL). SQLite subtests run in parallel; PostgreSQL ones one after another, since PGlite
// serves one session.

// backend is one database engine for the jobs and the store.
type backend struct {
	name string
	// fresh returns a new, empty jobs database: a file path (SQLite) or a schema (PostgreSQL), removed when
	// the test ends.
	fresh func(t testing.TB) string
	// connect returns what opens runners on db; each call is one more connection (PostgreSQL: a pool of its
	// own), as another process would have.
	connect func(t testing.TB, db string) func(ctx context.Context, docs Documents, proc Processor, opt Options) (*Runner, error)
	// store opens the store beside db: <dir>/ragd.db (SQLite) or the same schema (PostgreSQL).
	store func(t testing.TB, db string) rag.Store
	// exec runs statements on db outside any runner, {P} standing for the schema prefix (pgPrefix; nothing on
	// SQLite); queryInt reads one integer so.
	exec     func(t testing.TB, db, query string, args ...any)
	queryInt func(t testing.TB, db, query string) int
}

var sqliteBackend = backend{
	name:  "SQLite",
	fresh: func(t testing.TB) string { return filepath.Join(t.TempDir(), "jobs.db") },
	connect: func(_ testing.TB, path string) func(context.Context, Documents, Processor, Options) (*Runner, error) {
		return func(ctx context.Context, docs Documents, proc Processor, opt Options) (*Runner, error) {
			return OpenSQLite(ctx, path, docs, proc, opt)
		}
	},
	store: func(t testing.TB, path string) rag.Store {
		t.Helper()
		st, err := sqlite.Open(context.Background(), filepath.Join(filepath.Dir(path), "ragd.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	},
	exec: func(t testing.TB, path, query string, args ...any) {
		t.Helper()
		db := sqliteDB(t, path)
		if _, err := db.ExecContext(context.Background(), strings.ReplaceAll(query, "{P}", ""), args...); err != nil {
			t.Fatal(err)
		}
	},
	queryInt: func(t testing.TB, path, query string) int {
		t.Helper()
		var n int
		if err := sqliteDB(t, path).QueryRowContext(context.Background(), strings.ReplaceAll(query, "{P}", "")).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	},
}

// sqliteDB opens the SQLite file at path, closed when the test ends.
func sqliteDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func getenvURL() string { return os.Getenv("RAGD_TEST_DATABASE_URL") }

// postgresBackend is PostgreSQL at url.
func postgresBackend(url string) backend {
	return backend{
		name:  "PostgreSQL",
		fresh: func(t testing.TB) string { return testkit.Schema(t, url, "jobs_") },
		connect: func(t testing.TB, schema string) func(context.Context, Documents, Processor, Options) (*Runner, error) {
			pool := pgPool(t, url)
			return func(ctx context.Context, docs Documents, proc Processor, opt Options) (*Runner, error) {
				opt.Schema = schema
				return OpenPostgres(ctx, pool, docs, proc, opt)
			}
		},
		store: func(t testing.TB, schema string) rag.Store {
			t.Helper()
			st, err := postgres.Open(context.Background(), url, postgres.Options{Schema: schema})
			if errors.Is(err, postgres.ErrVector) {
				t.Skipf("no pgvector on this server: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		exec: func(t testing.TB, schema, query string, args ...any) {
			t.Helper()
			if _, err := pgPool(t, url).Exec(context.Background(), strings.ReplaceAll(query, "{P}", pgPrefix(schema)), args...); err != nil {
				t.Fatal(err)
			}
		},
		queryInt: func(t testing.TB, schema, query string) int {
			t.Helper()
			var n int
			if err := pgPool(t, url).QueryRow(context.Background(), strings.ReplaceAll(query, "{P}", pgPrefix(schema))).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		},
	}
}

// eachBackend runs fn as the subtests SQLite and PostgreSQL.
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		fn(t, sqliteBackend)
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		url := getenvURL()
		if url == "" {
			t.Skip("RAGD_TEST_DATABASE_URL is not set: start PGlite with `scripts/pglite.sh start` and export the URL it prints")
		}
		fn(t, postgresBackend(url))
	})
}

// parallel marks a subtest parallel on SQLite; on PostgreSQL subtests run one after another.
func (b backend) parallel(t *testing.T) {
	if b.name == "SQLite" {
		t.Parallel()
	}
}

// open opens a runner on db, closed when the test ends.
func (b backend) open(t testing.TB, db string, docs Documents, proc Processor, opt Options) *Runner {
	t.Helper()
	return closeAtEnd(t)(b.connect(t, db)(context.Background(), docs, proc, opt))
}

// closeAtEnd fails the test if a runner did not open, and closes it when the test ends.
func closeAtEnd(t testing.TB) func(*Runner, error) *Runner {
	return func(r *Runner, err error) *Runner {
		t.Helper()
		if err != nil {
			t.Fatalf("open runner: %v", err)
		}
		t.Cleanup(func() {
			if err := r.Close(); err != nil {
				t.Errorf("close runner: %v", err)
			}
		})
		return r
	}
}

// openRunner opens a runner on the SQLite jobs database at path (the crash tests' worker processes and the
// benchmarks).
func openRunner(t testing.TB, path string, docs Documents, proc Processor, opt Options) *Runner {
	t.Helper()
	return sqliteBackend.open(t, path, docs, proc, opt)
}

// pgPool is a pool as the PostgreSQL store makes it (the URL's settings), closed when the test ends.
func pgPool(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
