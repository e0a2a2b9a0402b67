package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ragd/ragd/internal/migration"
	"github.com/ragd/ragd/internal/rag"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// ErrVector means the server lacks pgvector or has one older than MinVectorVersion. Errors that wrap it are
// *rag.Error with CodeDBError and a message that says what to install.
var ErrVector = errors.New("pgvector missing or too old")

// MinVectorVersion is the oldest pgvector the store works with (HNSW with cosine distance). Iterative index
// scans, used for filtered searches, need 0.8; with 0.7 filtered searches can return fewer than k rows.
const MinVectorVersion = "0.7.0"

// migrateLockKey is the advisory lock that serialises migrations of every ragd schema of a database, so that
// several processes can start at once (CREATE EXTENSION is database-wide, hence one key for all schemas).
const migrateLockKey int64 = 0x72616764_6d696772 // "ragdmigr"

func embeddedMigrations() []migration.Migration { return migration.Embedded(migrationFS, "migrations") }

// latestVersion is the version of the newest embedded migration (what Ping expects).
var latestVersion = migration.Latest(embeddedMigrations())

// Migrate applies the embedded migrations that the database's schema (opts.Schema) lacks, creating the vector
// extension first, and returns the versions it applied (none when the schema is current). It is what
// `ragd migrate` runs, and what Open runs unless opts.NoMigrate is set. Safe to run from several processes at
// once: they wait for each other on an advisory lock.
func Migrate(ctx context.Context, url string, opts Options) ([]int, error) {
	opts = opts.WithDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	pool, _, err := newPool(ctx, url)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	return migrate(ctx, pool, opts.Schema, embeddedMigrations(), true)
}

// migrate applies ms to schema in one transaction under the migration lock. withVector creates (and checks)
// the vector extension first; tests of the migration machinery on a server without pgvector turn it off.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, ms []migration.Migration, withVector bool) ([]int, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return nil, interpretError(fmt.Errorf("migrate: begin: %w", err))
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLockKey); err != nil {
		return nil, interpretError(fmt.Errorf("migrate: lock: %w", err))
	}
	vecSchema := ""
	if withVector {
		if vecSchema, err = ensureVector(ctx, tx); err != nil {
			return nil, err
		}
	}
	r := replacer(schema, vecSchema)
	if _, err := tx.Exec(ctx, r.Replace(`CREATE SCHEMA IF NOT EXISTS {S};
		CREATE TABLE IF NOT EXISTS {S}.schema_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`)); err != nil {
		return nil, interpretError(fmt.Errorf("migrate: create schema: %w", err))
	}
	rows, _ := tx.Query(ctx, r.Replace("SELECT version FROM {S}.schema_migrations"))
	done, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, interpretError(fmt.Errorf("migrate: read versions: %w", err))
	}
	exec := func(ctx context.Context, q string, args ...any) error {
		_, err := tx.Exec(ctx, r.Replace(q), args...)
		return err
	}
	out, err := migration.Apply(ctx, ms, done, exec, "INSERT INTO {S}.schema_migrations (version, name) VALUES ($1, $2)")
	if err != nil {
		return nil, interpretError(fmt.Errorf("migrate: %w", err))
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, interpretError(fmt.Errorf("migrate: commit: %w", err))
	}
	return out, nil
}

// ensureVector creates the vector extension when the server has it and returns the schema it lives in.
func ensureVector(ctx context.Context, tx pgx.Tx) (string, error) {
	var available, installed *string
	err := tx.QueryRow(ctx, `SELECT
		(SELECT default_version FROM pg_available_extensions WHERE name = 'vector'),
		(SELECT extversion FROM pg_extension WHERE extname = 'vector')`).Scan(&available, &installed)
	if err != nil {
		return "", interpretError(fmt.Errorf("migrate: look up pgvector: %w", err))
	}
	if err := checkVector(available, installed); err != nil {
		return "", err
	}
	if installed == nil {
		if _, err := tx.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector"); err != nil {
			return "", rag.WrapError(rag.CodeDBError, err,
				"cannot create the vector extension (pgvector): run CREATE EXTENSION vector as a superuser, or enable it on your managed database")
		}
	}
	var schema string
	if err := tx.QueryRow(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
		WHERE e.extname = 'vector'`).Scan(&schema); err != nil {
		return "", interpretError(fmt.Errorf("migrate: find vector schema: %w", err))
	}
	return schema, nil
}

// checkVector judges the server's pgvector: available is the version it could create, installed the version
// the database has (nil when absent).
func checkVector(available, installed *string) error {
	switch {
	case installed != nil && versionLess(*installed, MinVectorVersion):
		hint := "upgrade pgvector on the server, then run ALTER EXTENSION vector UPDATE"
		if available != nil && !versionLess(*available, MinVectorVersion) {
			hint = "run ALTER EXTENSION vector UPDATE"
		}
		return rag.WrapError(rag.CodeDBError, ErrVector, "pgvector %s is installed in this database but ragd needs %s or newer: %s",
			*installed, MinVectorVersion, hint)
	case installed != nil:
		return nil
	case available == nil:
		return rag.WrapError(rag.CodeDBError, ErrVector,
			"the PostgreSQL server does not have the pgvector extension: install pgvector %s or newer (e.g. the postgresql-<version>-pgvector package, or enable \"vector\" on a managed service)",
			MinVectorVersion)
	case versionLess(*available, MinVectorVersion):
		return rag.WrapError(rag.CodeDBError, ErrVector, "the PostgreSQL server has pgvector %s but ragd needs %s or newer: upgrade pgvector",
			*available, MinVectorVersion)
	}
	return nil
}

// versionLess compares dotted versions numerically ("0.10.0" > "0.7.0"); missing parts count as 0.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(strings.TrimFunc(pa[i], func(r rune) bool { return r < '0' || r > '9' }))
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(strings.TrimFunc(pb[i], func(r rune) bool { return r < '0' || r > '9' }))
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// replacer substitutes the quoted schema names into SQL text.
func replacer(schema, vecSchema string) *strings.Replacer {
	return strings.NewReplacer("{S}", pgx.Identifier{schema}.Sanitize(), "{V}", pgx.Identifier{vecSchema}.Sanitize())
}
