package jobs

import (
	"embed"

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
