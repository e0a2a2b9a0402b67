package ingest

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/ragd/ragd/internal/filter"
	"github.com/ragd/ragd/internal/rag"
)

// MetadataTypesSetting is the collection setting that types the columns of a metadata table: column →
// "string", "number" or "bool". Columns it does not name are read as typed on the command line (a number,
// true or false, else the string).
const MetadataTypesSetting = "metadata_types"

// MetaTable is document metadata read from a CSV table: one row per file, the key column naming the file.
type MetaTable struct {
	key  string
	rows map[string]*metaRow
	// order keeps the rows as in the file, for reporting the unmatched ones.
	order []string
}

type metaRow struct {
	line int
	meta map[string]any
	used bool
}

// MaxMetaRows bounds a metadata table.
const MaxMetaRows = 100000

// ReadMetaTable reads a CSV table with a header row. The column named key (default "file") matches a
// file's name; the other columns become its metadata, typed by types (see MetadataTypesSetting). Empty
// cells are left out. Errors (CodeInvalid): no key column, a duplicate key, a cell that is not of its type.
func ReadMetaTable(r io.Reader, key string, types map[string]any) (*MetaTable, error) {
	if key == "" {
		key = "file"
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 0
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, rag.Errorf(rag.CodeInvalid, "metadata table is empty")
	}
	if err != nil {
		return nil, rag.Errorf(rag.CodeInvalid, "metadata table: %v", err)
	}
	for i := range header {
		header[i] = strings.TrimSpace(strings.TrimPrefix(header[i], "\ufeff"))
	}
	col := -1
	for i, h := range header {
		if h == key {
			col = i
		}
	}
	if col < 0 {
		return nil, rag.Errorf(rag.CodeInvalid, "metadata table has no %q column (columns: %s)", key, strings.Join(header, ", "))
	}
	t := &MetaTable{key: key, rows: map[string]*metaRow{}}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, rag.Errorf(rag.CodeInvalid, "metadata table: %v", err)
		}
		line, _ := cr.FieldPos(0)
		name := strings.TrimSpace(rec[col])
		if name == "" {
			return nil, rag.Errorf(rag.CodeInvalid, "metadata table line %d: empty %s", line, key)
		}
		if _, dup := t.rows[name]; dup {
			return nil, rag.Errorf(rag.CodeInvalid, "metadata table line %d: %s %q appears twice", line, key, name)
		}
		if len(t.rows) >= MaxMetaRows {
			return nil, rag.Errorf(rag.CodeInvalid, "metadata table has over %d rows", MaxMetaRows)
		}
		meta := map[string]any{}
		for i, v := range rec {
			v = strings.TrimSpace(v)
			if i == col || v == "" || header[i] == "" {
				continue
			}
			typed, err := typedValue(v, types[header[i]])
			if err != nil {
				return nil, rag.Errorf(rag.CodeInvalid, "metadata table line %d, column %s: %v", line, header[i], err)
			}
			meta[header[i]] = typed
		}
		t.rows[name] = &metaRow{line: line, meta: meta}
		t.order = append(t.order, name)
	}
	return t, nil
}

func typedValue(v string, typ any) (any, error) {
	switch typ {
	case nil, "":
		return filter.Value(v), nil
	case "string":
		return v, nil
	case "number":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", v)
		}
		return f, nil
	case "bool":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", v)
		}
		return b, nil
	}
	return nil, fmt.Errorf("unknown type %v (want string, number or bool)", typ)
}

// Lookup returns the metadata of the file at p: the row keyed by the whole path or by its longest tail
// ("week1/a.md" for "course/week1/a.md"), down to its base name. ok is false when no row names it.
func (t *MetaTable) Lookup(p string) (map[string]any, bool) {
	p = strings.TrimPrefix(path.Clean(strings.ReplaceAll(p, "\\", "/")), "/")
	var row *metaRow
	for {
		if r, ok := t.rows[p]; ok {
			row = r
			break
		}
		_, tail, found := strings.Cut(p, "/")
		if !found {
			return nil, false
		}
		p = tail
	}
	row.used = true
	out := make(map[string]any, len(row.meta))
	for k, v := range row.meta {
		out[k] = v
	}
	return out, true
}

// Unmatched lists the rows no Lookup used, as "line N: name", in file order.
func (t *MetaTable) Unmatched() []string {
	var out []string
	for _, name := range t.order {
		if r := t.rows[name]; !r.used {
			out = append(out, fmt.Sprintf("line %d: %s", r.line, name))
		}
	}
	return out
}
