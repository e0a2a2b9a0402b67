// Package migration reads the numbered SQL migrations embedded in the binary: the stores'
// (internal/store/sqlite, internal/store/postgres) and the job runner's (internal/jobs). Each engine applies
// them its own way (a schema_migrations table, one transaction per file or for all, a lock); this package only
// names, orders and checks the files.
package migration

import (
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
