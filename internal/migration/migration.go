// Package migration reads the numbered SQL migrations embedded in the binary: the stores'
// (internal/store/sqlite, internal/store/postgres) and the job runner's (internal/jobs). Each engine applies
// them in its own transactions and locks; this package names, orders and checks the files, and applies the
// missing ones inside a caller's transaction (Apply).
package migration

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one NNNN_name.sql file.
type Migration struct {
	Version int    // NNNN
	Name    string // the file name without .sql, e.g. "0001_init"
	SQL     string
}

// Load reads the NNNN_name.sql files at the root of fsys in version order. A file whose name does not start
// with a positive number and an underscore, or two files with one version, are an error.
func Load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []Migration
	for _, name := range names {
		num, _, ok := strings.Cut(path.Base(name), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: name must be NNNN_name.sql", name)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration: %w", err)
		}
		out = append(out, Migration{Version: v, Name: strings.TrimSuffix(name, ".sql"), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share a version", out[i-1].Name, out[i].Name)
		}
	}
	return out, nil
}

// Embedded loads the migrations in directory dir of an embedded file system. Those files are fixed at build
// time, so a bad one is a programming error: it panics (each user's tests load its files), as it does when
// dir holds none.
func Embedded(fsys fs.FS, dir string) []Migration {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	ms, err := Load(sub)
	if err != nil {
		panic(err)
	}
	if len(ms) == 0 {
		panic("migration: no migrations in " + dir)
	}
	return ms
}

// Latest is the version of the newest of ms (0 when ms is empty).
func Latest(ms []Migration) int {
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// ExecFunc runs one statement inside the caller's transaction.
type ExecFunc func(ctx context.Context, query string, args ...any) error

// Apply applies the migrations of ms whose version is not in done, each followed by its record (an INSERT
// whose two arguments are the version and the name), through exec. It returns the versions it applied.
func Apply(ctx context.Context, ms []Migration, done []int, exec ExecFunc, record string) ([]int, error) {
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
			return nil, fmt.Errorf("apply %s: %w", m.Name, err)
		}
		if err := exec(ctx, record, m.Version, m.Name); err != nil {
			return nil, fmt.Errorf("record %s: %w", m.Name, err)
		}
		out = append(out, m.Version)
	}
	return out, nil
}
