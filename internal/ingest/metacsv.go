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
	"github.com/ragd/ragd/internal/meta"
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
	return ReadTable(r, TableOptions{Key: key, Cell: func(col, v string) (any, error) { return typedValue(v, types[col]) }})
}

// TableOptions say how ReadTable reads a metadata table.
type TableOptions struct {
	// Key is the column naming the file (default "file").
	Key string
	// Cell types the cell of column col (a collection schema's meta.Schema.Cell); its error is reported
	// with the line and column.
	Cell func(col, v string) (any, error)
	// KeepKey keeps the key column in each row's metadata (a record's key is one of its fields).
	KeepKey bool
	// Check validates a whole row's metadata (meta.Schema.ValidateRow); its error is reported with the line.
	Check func(map[string]any) error
}

// ReadTable reads a CSV metadata table as ReadMetaTable does, typing and checking cells and rows with opt.
func ReadTable(r io.Reader, opt TableOptions) (*MetaTable, error) {
	key := opt.Key
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
			if i == col && !opt.KeepKey || v == "" || header[i] == "" {
				continue
			}
			typed, err := opt.Cell(header[i], v)
			if err != nil {
				return nil, rag.Errorf(rag.CodeInvalid, "metadata table line %d, column %s: %v", line, header[i], err)
			}
			meta[header[i]] = typed
		}
		if opt.Check != nil {
			if err := opt.Check(meta); err != nil {
				return nil, rag.Errorf(rag.CodeInvalid, "metadata table line %d: %v", line, err)
			}
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
// ("week1/a.md" for "course/week1/a.md"), down to its base name, and failing those by the base name's
// stem ("LH_lease_01" for "docs/LH_lease_01.md"). ok is false when no row names it.
func (t *MetaTable) Lookup(p string) (map[string]any, bool) {
	_, m, ok := t.LookupKey(p)
	return m, ok
}

// LookupKey is Lookup that also returns the key of the row.
func (t *MetaTable) LookupKey(p string) (string, map[string]any, bool) {
	p = strings.TrimPrefix(path.Clean(strings.ReplaceAll(p, "\\", "/")), "/")
	var row *metaRow
	stem := strings.TrimSuffix(path.Base(p), path.Ext(p))
	for {
		if r, ok := t.rows[p]; ok {
			row = r
			break
		}
		_, tail, found := strings.Cut(p, "/")
		if !found {
			if r, ok := t.rows[stem]; ok {
				row, p = r, stem
				break
			}
			return "", nil, false
		}
		p = tail
	}
	row.used = true
	return p, copyMeta(row.meta), true
}

func copyMeta(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TableRow is one row of a metadata table: its key, line and metadata.
type TableRow struct {
	Key  string
	Line int
	Meta map[string]any
}

// UnusedRows returns the rows no Lookup used, in file order: the records without a document.
func (t *MetaTable) UnusedRows() []TableRow {
	var out []TableRow
	for _, name := range t.order {
		if r := t.rows[name]; !r.used {
			out = append(out, TableRow{Key: name, Line: r.line, Meta: copyMeta(r.meta)})
		}
	}
	return out
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

// OpenTable reads the metadata table of an upload or `ragd ingest --meta-csv` into a collection: with its
// profile's metadata schema sch, cells are typed and rows validated by the schema and each row keeps its key
// (rows name their files by key, usually the file name's stem; the key column defaults to the schema's);
// without one (nil), cells are typed by the collection's settings (MetadataTypesSetting).
func OpenTable(r io.Reader, key string, sch *meta.Schema, settings map[string]any) (*MetaTable, error) {
	if sch == nil {
		types, _ := settings[MetadataTypesSetting].(map[string]any)
		return ReadMetaTable(r, key, types)
	}
	if key == "" || key == "file" {
		key = sch.Key
	}
	return ReadTable(r, TableOptions{Key: key, Cell: sch.Cell, KeepKey: true, Check: sch.ValidateRow})
}

// RecordRequest is the ingest request of a table row that no file names: a record whose document is the
// row itself (meta.Schema.RecordText), so that it is found, filtered and listed like the others.
func RecordRequest(sch *meta.Schema, row TableRow, collection, owner string) Request {
	title, _ := row.Meta[sch.Title].(string)
	return Request{Collection: collection, ExternalID: row.Key, Name: row.Key + ".md", Source: row.Key,
		Title: title, Data: []byte(sch.RecordText(row.Meta)), Metadata: row.Meta, Owner: owner}
}
