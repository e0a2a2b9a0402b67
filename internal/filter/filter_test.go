package filter_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/filter"
	"github.com/ragd/ragd/internal/rag"
)

func TestParse(t *testing.T) {
	f, err := filter.Parse([]string{
		"region=서울|경기", "deposit<=5000", "status!=closed", "tag=lease", "type=application/pdf",
		"created_after=2024-01-02", "year>2020", "open=true", "collection=housing",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Collections, []string{"housing"}) || !reflect.DeepEqual(f.Tags, []string{"lease"}) ||
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
	for _, bad := range []string{"novalue", "=x", "created_after=yesterday", "tag!=lease", "created_before<2024-01-01",
		"created_after=2024-01-01|2024-02-01"} {
		if _, err := filter.Parse([]string{bad}); rag.ErrorCode(err) != rag.CodeInvalid {
			t.Errorf("Parse(%q): %v, want %s", bad, err, rag.CodeInvalid)
		}
	}
}

func TestTime(t *testing.T) {
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		end  bool
		want time.Time
	}{
		{"2024-05-01", false, day},
		{"2024-05-01", true, day.Add(24*time.Hour - time.Nanosecond)}, // the whole day
		{"2024-05-01T12:30:00Z", true, day.Add(12*time.Hour + 30*time.Minute)},
		{" 2024-05-01T09:00:00+09:00 ", false, day},
	} {
		got, err := filter.Time(tc.in, tc.end)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("Time(%q, %v) = %v %v, want %v", tc.in, tc.end, got, err, tc.want)
		}
	}
	if _, err := filter.Time("1 May 2024", false); rag.ErrorCode(err) != rag.CodeInvalid {
		t.Errorf("a date in another form: %v", err)
	}
}

func TestMediaTypes(t *testing.T) {
	got := filter.MediaTypes([]string{"PDF", "md", "word", "txt", "html", "text/csv"})
	want := []string{"application/pdf", "text/markdown", "text/mdx",
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "text/plain", "text/html", "text/csv"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MediaTypes = %q\nwant %q", got, want)
	}
	got = filter.MediaTypes([]string{"hwp", "HWPX", "excel", "pptx"})
	want = []string{"application/x-hwp", "application/hwp+zip", "application/hwp+zip",
		"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
		"application/vnd.openxmlformats-officedocument.presentationml.presentation"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MediaTypes = %q\nwant %q", got, want)
	}
}

func TestMediaTypes_ProgrammingLanguages(t *testing.T) {
	got := filter.MediaTypes([]string{"go", "Python", "ts", "rs", "c++", "cobol"})
	want := []string{"text/x-go", "text/x-python", "text/x-typescript", "text/x-tsx", "text/x-rust", "text/x-c++", "cobol"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MediaTypes = %q\nwant %q", got, want)
	}
	f, err := filter.Parse([]string{"type=go|py", "language=ko"})
	if err != nil || !reflect.DeepEqual(f.MediaTypes, []string{"text/x-go", "text/x-python"}) || len(f.Metadata) != 1 {
		t.Errorf("type=go|py language=ko: %+v, %v", f, err)
	}
}

func TestField(t *testing.T) {
	var f rag.Filter
	for key, vals := range map[string][]string{"tags": {"a"}, "media_type": {"docx"}, "document_id": {"d1"}, "updated_before": {"2024-05-01"}} {
		if !filter.IsField(key) {
			t.Errorf("IsField(%q) = false", key)
		}
		if err := filter.Field(&f, key, vals); err != nil {
			t.Errorf("Field(%q): %v", key, err)
		}
	}
	if len(f.Tags) != 1 || len(f.MediaTypes) != 1 || len(f.DocumentIDs) != 1 || f.UpdatedBefore == nil || f.UpdatedBefore.Hour() != 23 {
		t.Errorf("filter %+v", f)
	}
	if filter.IsField("region") || filter.Field(&f, "region", []string{"x"}) == nil {
		t.Error("a metadata key is not a document condition")
	}
}
