package testkit

import (
	"bytes"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the embedded store's driver, to read its file as it is
)

// TableMentions opens the SQLite database at path read-only and counts, for every ordinary table, the rows
// whose columns (each cast to text) contain s. The keyword index's FTS5 tables are left out: they hold
// analyzer terms, never whole texts or IDs.
func TableMentions(t testing.TB, path, s string) map[string]int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
		AND sql NOT LIKE 'CREATE VIRTUAL%' AND name NOT LIKE 'chunks_fts_%'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	out := map[string]int{}
	for _, table := range tables {
		cols, err := db.Query(`SELECT name FROM pragma_table_info(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		var conds []string
		for cols.Next() {
			var c string
			if err := cols.Scan(&c); err != nil {
				t.Fatal(err)
			}
			conds = append(conds, fmt.Sprintf(`instr(CAST("%s" AS TEXT), ?1) > 0`, c))
		}
		cols.Close()
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM "`+table+`" WHERE `+strings.Join(conds, " OR "), s).Scan(&n); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if n > 0 {
			out[table] = n
		}
	}
	return out
}

// FilesHolding returns the files under dir (but those named in skip) whose bytes contain any of needles.
func FilesHolding(t testing.TB, dir string, skip []string, needles ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || slices.Contains(skip, d.Name()) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				out = append(out, fmt.Sprintf("%s (%q)", path, n))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
