package rag

import (
	"strings"
	"testing"
)

func nested(depth int) map[string]any {
	m := map[string]any{"leaf": "x"}
	for range depth - 1 {
		m = map[string]any{"n": m}
	}
	return m
}

func TestMetadataLimits(t *testing.T) {
	l := MetadataLimits{MaxDepth: 3, MaxKeys: 5, MaxBytes: 40}
	for _, c := range []struct {
		name    string
		m       map[string]any
		setting string // "" when accepted
	}{
		{"Nil", nil, ""},
		{"DepthAtLimit", nested(3), ""},
		{"DepthOver", nested(4), "RAGD_MAX_METADATA_DEPTH"},
		{"ArrayDepthOver", map[string]any{"a": []any{[]any{[]any{"x"}}}}, "RAGD_MAX_METADATA_DEPTH"},
		{"KeysAtLimit", map[string]any{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}, ""},
		{"KeysOver", map[string]any{"a": 1, "b": 2, "c": 3, "d": 4, "e": map[string]any{"f": 1}}, "RAGD_MAX_METADATA_KEYS"},
		{"BytesAtLimit", map[string]any{"k": strings.Repeat("x", 32)}, ""}, // {"k":"…32…"} is 40 bytes
		{"BytesOver", map[string]any{"k": strings.Repeat("x", 33)}, "RAGD_MAX_METADATA_BYTES"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := l.Check(c.m)
			if c.setting == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if ErrorCode(err) != CodeInvalid || !strings.Contains(ErrorMessage(err), c.setting) {
				t.Fatalf("got %v, want invalid_request naming %s", err, c.setting)
			}
		})
	}
	if err := (MetadataLimits{}).Check(nested(1001)); ErrorCode(err) != CodeInvalid {
		t.Fatalf("the issue's 1001 levels with default limits: %v", err)
	}
}

func TestFilterCheck(t *testing.T) {
	f := Filter{Tags: make([]string, MaxFilterValues-2), Metadata: []MetaCond{{Key: "k", Op: OpIn, Values: []any{"a"}}}}
	if err := f.Check(); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	f.Metadata[0].Values = append(f.Metadata[0].Values, "b")
	if err := f.Check(); ErrorCode(err) != CodeInvalid || !strings.Contains(ErrorMessage(err), "over the limit of 10000") {
		t.Fatalf("over the limit: %v", err)
	}
}
