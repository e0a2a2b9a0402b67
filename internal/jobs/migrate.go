package jobs

import (
	"context"
	"embed"
	"fmt"

	"github.com/ragd/ragd/internal/migration"
)

// The tables ragd keeps beside River's — today the heartbeat table — have numbered migrations of their own,
// one directory per engine (migrations/sqlite for jobs.db, migrations/postgres for the store's database and
// schema), recorded in ragd_jobs_migrations beside them. River's own tables are migrated by rivermigrate.
// Every Runner applies what is missing when it opens, in one transaction that other processes wait for
// (SQLite's write lock, a PostgreSQL advisory lock), so a process killed mid-way leaves nothing half-made.

//go:embed migrations
var migrationFS embed.FS

var (
	sqliteMigrations   = migration.Embedded(migrationFS, "migrations/sqlite")
	postgresMigrations = migration.Embedded(migrationFS, "migrations/postgres")
)

// migrateLockKey serialises the jobs migrations of every schema of a PostgreSQL database ("ragdjobm").
const migrateLockKey int64 = 0x72616764_6a6f626d

// execFunc runs one statement inside a migration's transaction.
type execFunc func(ctx context.Context, query string, args ...any) error

// applyMigrations applies the migrations of ms whose version is not in done, each followed by its row in
// ragd_jobs_migrations (record, with the version and name as arguments), through exec. It returns the
// versions it applied.
func applyMigrations(ctx context.Context, ms []migration.Migration, done []int, exec execFunc, record string) ([]int, error) {
	applied := map[int]bool{}
	for _, v := range done {
		applied[v] = true
	}
	var out []int
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		if err := exec(ctx, m.SQL); err != nil {
			return nil, fmt.Errorf("apply migration %s: %w", m.Name, err)
		}
		if err := exec(ctx, record, m.Version, m.Name); err != nil {
			return nil, fmt.Errorf("record migration %s: %w", m.Name, err)
		}
		out = append(out, m.Version)
	}
	return out, nil
}
