package rag

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestParseSynonyms(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"보증금": ["deposit", "보증금"], "CTR": "클릭률", "solo": []}`), &v); err != nil {
		t.Fatal(err)
	}
	g, err := ParseSynonyms(v)
	if err != nil || len(g) != 2 || strings.Join(g[0], "|") != "CTR|클릭률" || strings.Join(g[1], "|") != "보증금|deposit" {
		t.Errorf("groups %q, %v", g, err)
	}
	if err := json.Unmarshal([]byte(`[["a", "b"], ["c", "d", "e"]]`), &v); err != nil {
		t.Fatal(err)
	}
	if g, err := ParseSynonyms(v); err != nil || len(g) != 2 || len(g[1]) != 3 {
		t.Errorf("list form: %q, %v", g, err)
	}
	// words returns n distinct words of exactly runes characters.
	words := func(n, runes int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = fmt.Sprintf("%0*d", runes, i)
		}
		return out
	}
	groups := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = []any{"x", "y"}
		}
		return out
	}
	for _, ok := range []any{nil, groups(MaxSynonymGroups), []any{words(MaxSynonymsPerGroup, 3)}, []any{words(2, MaxSynonymRunes)}} {
		if _, err := ParseSynonyms(ok); err != nil {
			t.Errorf("at the limit: %v", err)
		}
	}
	for _, bad := range []any{"x", 3.0, groups(MaxSynonymGroups + 1), []any{words(MaxSynonymsPerGroup+1, 3)},
		[]any{words(2, MaxSynonymRunes+1)}, []any{[]any{"a", 1.0}}, []any{[]any{"a", " "}}, map[string]any{"a": 2.0}} {
		if _, err := ParseSynonyms(bad); ErrorCode(err) != CodeInvalid {
			t.Errorf("ParseSynonyms(%.60v) = %v, want invalid", bad, err)
		}
	}
}
