package rag

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// SynonymsSetting is the collection setting that lists synonyms: an object whose every key and its list of
// words form one group ({"보증금": ["deposit"], "CTR": ["클릭률", "click-through rate"]}), or a list of groups
// ([["보증금", "deposit"]]). A query naming any word of a group also searches for the others.
const SynonymsSetting = "synonyms"

// The limits of a collection's synonyms.
const (
	MaxSynonymGroups    = 1000
	MaxSynonymsPerGroup = 32
	MaxSynonymRunes     = 100
)

// ParseSynonyms reads a synonyms setting (nil: none) into groups of at least two distinct words, in a
// stable order. A malformed setting or one over the limits is CodeInvalid.
func ParseSynonyms(v any) ([][]string, error) {
	var raw [][]any
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			list, ok := x[k].([]any)
			if !ok {
				if s, isStr := x[k].(string); isStr {
					list = []any{s}
				} else {
					return nil, Errorf(CodeInvalid, "settings.synonyms[%q] must be a list of words", k)
				}
			}
			raw = append(raw, append([]any{k}, list...))
		}
	case []any:
		for i, g := range x {
			list, ok := g.([]any)
			if !ok {
				return nil, Errorf(CodeInvalid, "settings.synonyms[%d] must be a list of words", i)
			}
			raw = append(raw, list)
		}
	default:
		return nil, Errorf(CodeInvalid, "settings.synonyms must be an object of word lists or a list of groups")
	}
	if len(raw) > MaxSynonymGroups {
		return nil, Errorf(CodeInvalid, "settings.synonyms has %d groups, at most %d allowed", len(raw), MaxSynonymGroups)
	}
	var out [][]string
	for i, g := range raw {
		if len(g) > MaxSynonymsPerGroup {
			return nil, Errorf(CodeInvalid, "settings.synonyms group %d has %d words, at most %d allowed", i+1, len(g), MaxSynonymsPerGroup)
		}
		var words []string
		seen := map[string]bool{}
		for _, w := range g {
			s, ok := w.(string)
			s = strings.TrimSpace(s)
			if !ok || s == "" {
				return nil, Errorf(CodeInvalid, "settings.synonyms group %d: %s", i+1, describe(w))
			}
			if n := utf8.RuneCountInString(s); n > MaxSynonymRunes {
				return nil, Errorf(CodeInvalid, "settings.synonyms group %d: a word of %d characters, at most %d allowed", i+1, n, MaxSynonymRunes)
			}
			if k := strings.ToLower(s); !seen[k] {
				seen[k] = true
				words = append(words, s)
			}
		}
		if len(words) >= 2 {
			out = append(out, words)
		}
	}
	return out, nil
}

func describe(w any) string {
	if s, ok := w.(string); ok && strings.TrimSpace(s) == "" {
		return "an empty word"
	}
	return fmt.Sprintf("%v is not a word (want strings)", w)
}
