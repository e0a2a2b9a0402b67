package cli

import (
	"reflect"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

func TestParseFilters(t *testing.T) {
	f, err := parseFilters([]string{
		"region=서울|경기", "deposit<=5000", "status!=closed", "tag=lease", "type=application/pdf",
		"created_after=2024-01-02", "year>2020", "open=true", "collection=housing",
	}, []string{"base"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Collections, []string{"base", "housing"}) || !reflect.DeepEqual(f.Tags, []string{"lease"}) ||
		!reflect.DeepEqual(f.MediaTypes, []string{"application/pdf"}) || f.CreatedAfter == nil || f.CreatedAfter.Day() != 2 {
		t.Errorf("document conditions: %+v", f)
	}
	want := []rag.MetaCond{
		{Key: "region", Op: rag.OpIn, Values: []any{"서울", "경기"}},
		{Key: "deposit", Op: rag.OpLte, Values: []any{5000.0}},
		{Key: "status", Op: rag.OpNe, Values: []any{"closed"}},
		{Key: "year", Op: rag.OpGt, Values: []any{2020.0}},
		{Key: "open", Op: rag.OpEq, Values: []any{true}},
	}
	if !reflect.DeepEqual(f.Metadata, want) {
		t.Errorf("metadata = %#v\nwant %#v", f.Metadata, want)
	}
	for _, bad := range []string{"novalue", "=x", "created_after=yesterday"} {
		if _, err := parseFilters([]string{bad}, nil); err == nil {
			t.Errorf("parseFilters(%q) succeeded, want an error", bad)
		}
	}
}

func TestParseInterspersed(t *testing.T) {
	var q queryFlags
	fs := newFlagSet("search")
	q.register(fs, 10)
	pos, err := parse(fs, []string{"hello", "--k", "3", "world", "--json", "--filter", "a=b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pos, []string{"hello", "world"}) || q.k != 3 || !q.json || len(q.filters) != 1 {
		t.Errorf("pos=%q k=%d json=%v filters=%q", pos, q.k, q.json, q.filters)
	}
}
