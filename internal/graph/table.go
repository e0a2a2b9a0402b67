package graph

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// MaxTableRows bounds the rows of one record table.
const MaxTableRows = 200_000

// TableResult says what a table import did.
type TableResult struct {
	Collection string `json:"collection"`
	Table      string `json:"table"`
	Rows       int    `json:"rows"`
	// Changed is false when the rows equal the table's: nothing was written.
	Changed bool `json:"changed"`
}

// NormKey is the form record keys are compared in: NFKC, lower case, without spaces and punctuation, so that
// "콘크리트타설" finds "콘크리트 타설" and "PE관" finds "pe관".
func NormKey(s string) string {
	s = strings.ToLower(textproc.Normalize(s))
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ImportTable replaces the record table named table of the collection with the rows of a CSV file (header
// row first). The table must be declared in the collection's graph settings; every declared column must be
// in the header, and every value must have its column's type. A file with any problem changes nothing.
func (s *Service) ImportTable(ctx context.Context, collection, table string, r io.Reader) (*TableResult, error) {
	c, err := s.store.GetCollection(ctx, collection)
	if err != nil {
		return nil, err
	}
	set, err := s.Settings(c)
	if err != nil {
		return nil, err
	}
	decl, ok := set.Table(table)
	if !ok {
		return nil, errorf("table %q is not declared in the graph settings of collection %s (graph.tables)", table, c.Name)
	}
	rows, err := ParseTable(decl, r)
	if err != nil {
		return nil, err
	}
	res := &TableResult{Collection: c.Name, Table: table, Rows: len(rows)}
	old, err := s.store.Records(ctx, rag.LocalPrincipal, c.ID, table, nil)
	if err != nil {
		return nil, err
	}
	if len(old) == len(rows) && sameJSON(old, rows) {
		return res, nil
	}
	res.Changed = true
	return res, s.store.ReplaceRecords(ctx, c.ID, table, rows)
}

// ParseTable reads the rows of a CSV file as table t declares them. Errors are CodeInvalid and name the line
// and column.
func ParseTable(t Table, r io.Reader) ([]rag.Record, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, errorf("table %s: the file is empty (it needs a header row)", t.Name)
	}
	if err != nil {
		return nil, errorf("table %s: %v", t.Name, err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	at := map[string]int{}
	for i, h := range header {
		at[strings.TrimSpace(h)] = i
	}
	for _, c := range t.Columns {
		if _, ok := at[c.Name]; !ok {
			return nil, errorf("table %s: the header has no column %q (it has %s)", t.Name, c.Name, strings.Join(header, ", "))
		}
	}
	var out []rag.Record
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, errorf("table %s: %v", t.Name, err)
		}
		if len(rec) != len(header) {
			return nil, errorf("table %s line %d: %d fields, the header has %d", t.Name, line, len(rec), len(header))
		}
		if len(out) == MaxTableRows {
			return nil, errorf("table %s: more than %d rows", t.Name, MaxTableRows)
		}
		row := rag.Record{Values: map[string]any{}}
		for _, c := range t.Columns {
			raw := strings.TrimSpace(rec[at[c.Name]])
			v, err := typed(c.Type, raw)
			if err != nil {
				return nil, errorf("table %s line %d column %s: %q is not %s", t.Name, line, c.Name, raw, article(c.Type))
			}
			row.Values[c.Name] = v
		}
		row.Key = strings.TrimSpace(rec[at[t.Key]])
		if row.Key == "" {
			return nil, errorf("table %s line %d: the key column %s is empty", t.Name, line, t.Key)
		}
		row.NormKey = NormKey(row.Key)
		if t.Variant != "" {
			row.Variant = strings.TrimSpace(rec[at[t.Variant]])
		}
		out = append(out, row)
	}
	return out, nil
}

func article(typ string) string {
	if typ == TypeInteger {
		return "an integer"
	}
	return "a " + typ
}

// typed converts a CSV value to its column's type (an empty value of a numeric column is nil).
func typed(typ, raw string) (any, error) {
	if typ == TypeText {
		return raw, nil
	}
	if raw == "" {
		return nil, nil
	}
	clean := strings.ReplaceAll(raw, ",", "")
	if typ == TypeInteger {
		n, err := strconv.ParseInt(clean, 10, 64)
		return float64(n), err
	}
	return strconv.ParseFloat(clean, 64)
}
