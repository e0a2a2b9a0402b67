package cli

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestParseFilters checks the CLI surface of package filter: --collection comes first, errors are usage
// errors, and dates and type names mean what they mean over HTTP.
func TestParseFilters(t *testing.T) {
	f, err := parseFilters([]string{"collection=housing", "created_before=2024-05-01", "type=pdf", "region=서울"}, []string{"base"})
	if err != nil {
		t.Fatal(err)
	}
	endOfDay := time.Date(2024, 5, 1, 23, 59, 59, 999999999, time.UTC)
	if !reflect.DeepEqual(f.Collections, []string{"base", "housing"}) || !reflect.DeepEqual(f.MediaTypes, []string{"application/pdf"}) ||
		f.CreatedBefore == nil || !f.CreatedBefore.Equal(endOfDay) || len(f.Metadata) != 1 {
		t.Errorf("filter %+v (created_before %v, want %v)", f, f.CreatedBefore, endOfDay)
	}
	for _, bad := range []string{"novalue", "=x", "created_after=yesterday"} {
		if _, err := parseFilters([]string{bad}, nil); !errors.Is(err, errUsage) {
			t.Errorf("parseFilters(%q): %v, want a usage error", bad, err)
		}
	}
	if f, err := parseFilters(nil, nil); err != nil || !f.IsZero() {
		t.Errorf("no filters: %+v %v", f, err)
	}
}

func TestParseInterspersed(t *testing.T) {
	var q queryFlags
	fs := newFlagSet("search")
	q.register(fs, &Env{Getenv: func(string) string { return "" }}, 10, 100, "hits")
	pos, err := parse(fs, []string{"hello", "--k", "3", "world", "--json", "--filter", "a=b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pos, []string{"hello", "world"}) || q.k != 3 || !q.json || len(q.filters) != 1 {
		t.Errorf("pos=%q k=%d json=%v filters=%q", pos, q.k, q.json, q.filters)
	}
}
